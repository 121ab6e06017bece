//! Erosion kernels: ns per cell per iteration at 1024² with 1 and 2 threads, next to the bytes an
//! iteration must move and this machine's copy bandwidth measured in the same run, the kernels
//! timed in alternated pairs with the per-pixel reference kernels they replaced (same bits; the
//! ratio of the medians is what to read on a shared machine); and the cost of
//! the halo for tiles (256² tiles, 50 iterations) against the ((T + 2H) / T)² prediction; and the
//! point-local `Gullies` (ns per pixel, 3 octaves, halo 1).
//!
//! `cargo bench -p geogen-stdlib --bench erosion` (medians of 5 runs; `EROSION_SIDE=4096` for a
//! larger map, `EROSION_ITERATIONS=5` for fewer iterations than 20, `EROSION_KERNELS_ONLY=1` to
//! skip the `Gullies` and halo parts, `EROSION_NO_REFERENCE=1` to time the kernels alone (the
//! reference side of the pairs does nothing), `EROSION_LARGE_PAGES=1` to allocate as the `geogen`
//! binary does, through `geogen_render::LargePages`, which keeps the pages of big freed buffers
//! for the next big one: the kernels' scratch then pays the first touch of its pages once per
//! process, not once per call).

use std::hint::black_box;
use std::time::Instant;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

use geogen_kernels::erosion::{
    hydraulic, thermal, Hydraulic, Output, Thermal, HYDRAULIC_RADIUS, STORM_WAVELENGTH, WATER_DEPTH,
};
use geogen_kernels::erosion_reference;
use geogen_render::{HeightMap, LargePages, Rect};
use geogen_stdlib::filters::Gullies;

const RUNS: usize = 5;

/// The system allocator, or [`LargePages`] once `main` has read `EROSION_LARGE_PAGES` (before
/// any allocation large enough for `LargePages` to handle itself: smaller ones go to the system
/// allocator either way, so every block is freed by the allocator that made it).
struct Switch;

static LARGE_PAGES: AtomicBool = AtomicBool::new(false);

// SAFETY: every call goes to `System` or, from the start of `main` on for good, to `LargePages`,
// which hands the blocks it does not recycle to `System` itself.
unsafe impl GlobalAlloc for Switch {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if LARGE_PAGES.load(Ordering::Relaxed) {
            // SAFETY: the caller's guarantees for this call, passed on unchanged.
            unsafe { LargePages.alloc(layout) }
        } else {
            // SAFETY: the caller's guarantees for this call, passed on unchanged.
            unsafe { System.alloc(layout) }
        }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if LARGE_PAGES.load(Ordering::Relaxed) {
            // SAFETY: the caller's guarantees for this call, passed on unchanged.
            unsafe { LargePages.alloc_zeroed(layout) }
        } else {
            // SAFETY: the caller's guarantees for this call, passed on unchanged.
            unsafe { System.alloc_zeroed(layout) }
        }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if LARGE_PAGES.load(Ordering::Relaxed) {
            // SAFETY: the caller's guarantees for this call, passed on unchanged.
            unsafe { LargePages.dealloc(ptr, layout) }
        } else {
            // SAFETY: the caller's guarantees for this call, passed on unchanged.
            unsafe { System.dealloc(ptr, layout) }
        }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if LARGE_PAGES.load(Ordering::Relaxed) {
            // SAFETY: the caller's guarantees for this call, passed on unchanged.
            unsafe { LargePages.realloc(ptr, layout, new_size) }
        } else {
            // SAFETY: the caller's guarantees for this call, passed on unchanged.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }
}

#[global_allocator]
static ALLOCATOR: Switch = Switch;

/// Rolling hills with fine detail (no kernel sees a constant or a plane).
fn terrain(rect: Rect) -> HeightMap {
    let mut data = Vec::with_capacity(rect.area() as usize);
    for y in 0..rect.height as i64 {
        for x in 0..rect.width as i64 {
            let (fx, fy) = ((rect.x + x) as f32, (rect.y + y) as f32);
            let h = 0.4 * ((fx * 0.013).sin() + (fy * 0.017).cos()) + 0.05 * ((fx * 0.21).sin() * (fy * 0.19).cos());
            data.push(h);
        }
    }
    HeightMap::from_data(rect, data).unwrap()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Median seconds of `f` on a fresh copy of `map`, in a pool of `threads`.
fn time(threads: usize, map: &HeightMap, f: impl Fn(&mut HeightMap) + Sync) -> f64 {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let runs = (0..RUNS)
        .map(|_| {
            let mut m = map.clone();
            let start = Instant::now();
            pool.install(|| f(&mut m));
            black_box(&m);
            start.elapsed().as_secs_f64()
        })
        .collect();
    median(runs)
}

/// CPU seconds used so far by every thread of this process (Linux: the run time in
/// `/proc/self/task/*/schedstat`, nanoseconds; 0 elsewhere). On a shared machine the CPU time of a
/// run is what the run itself cost, whatever else held the cores.
fn cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let mut ns = 0u64;
    for task in tasks.flatten() {
        if let Ok(stat) = std::fs::read_to_string(task.path().join("schedstat")) {
            ns += stat.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        }
    }
    ns as f64 * 1e-9
}

/// Medians of `new` and of `old` (wall seconds, and CPU seconds of all threads), each on a fresh
/// copy of `map` in a pool of `threads`, run alternately (old, new, old, new…) so that both see
/// the same moments of a shared machine: ((new wall, new CPU), (old wall, old CPU)).
fn time_pair(
    threads: usize,
    map: &HeightMap,
    new: impl Fn(&mut HeightMap) + Sync,
    old: impl Fn(&mut HeightMap) + Sync,
) -> ((f64, f64), (f64, f64)) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let once = |f: &(dyn Fn(&mut HeightMap) + Sync)| {
        let mut m = map.clone();
        let (start, cpu) = (Instant::now(), cpu_seconds());
        pool.install(|| f(&mut m));
        black_box(&m);
        (start.elapsed().as_secs_f64(), cpu_seconds() - cpu)
    };
    let (mut news, mut olds) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        olds.push(once(&old));
        news.push(once(&new));
    }
    let medians = |v: &[(f64, f64)]| (median(v.iter().map(|r| r.0).collect()), median(v.iter().map(|r| r.1).collect()));
    (medians(&news), medians(&olds))
}

fn thermal_params(iterations: u32) -> Thermal {
    Thermal { iterations, talus: 0.002, rate: 0.0625 }
}

fn hydraulic_params(iterations: u32) -> Hydraulic {
    Hydraulic {
        iterations,
        rain: 0.002,
        evaporation: 0.02,
        capacity: 40.0,
        erosion: 0.01,
        deposition: 0.3,
        fan_drop: 0.001,
        slope_scale: 1.0,
        area_scale: 1.0,
        // Below the terrain (its hills span about ±0.85): no sea, every cell computes the land's
        // update.
        sea_level: -1.0,
        water_depth: WATER_DEPTH as f32,
        storm_spacing: STORM_WAVELENGTH,
        seed: 1,
        output: Output::Height,
    }
}

/// Copy bandwidth (bytes read + written per second) on buffers of `bytes`, median of 5.
fn copy_bandwidth(bytes: usize) -> f64 {
    let src = vec![1.0f32; bytes / 4];
    let mut dst = vec![0.0f32; bytes / 4];
    let runs = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            dst.copy_from_slice(black_box(&src));
            black_box(&dst);
            start.elapsed().as_secs_f64()
        })
        .collect();
    2.0 * bytes as f64 / median(runs)
}

/// Seconds to allocate and zero a fresh buffer of `len` f32 (as the kernels' scratch is, once per
/// call), median of 5: above the size the allocator keeps, every page is mapped anew (first touch).
fn fresh_buffer(len: usize) -> f64 {
    let runs = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            let v = black_box(vec![0.0f32; len]);
            // The kernels write what they allocate; `vec!` of zeros maps the pages lazily.
            let mut v = v;
            v.iter_mut().for_each(|x| *x = 1.0);
            black_box(&v);
            start.elapsed().as_secs_f64()
        })
        .collect();
    median(runs)
}

fn main() {
    if std::env::var_os("EROSION_LARGE_PAGES").is_some() {
        LARGE_PAGES.store(true, Ordering::Relaxed);
    }
    let reference = std::env::var_os("EROSION_NO_REFERENCE").is_none();
    let side: u64 = std::env::var("EROSION_SIDE").ok().and_then(|s| s.parse().ok()).unwrap_or(1024);
    let rect = Rect::new(-(side as i64) / 2, -(side as i64) / 2, side, side);
    let map = terrain(rect);
    let cells = (side * side) as f64;
    // Bytes an iteration must move per cell at the least: thermal reads one f32 and writes one;
    // hydraulic pass A reads terrain, water, sediment and writes 4 fields, pass B reads those 4 and
    // the cell's 4 state fields and writes the 4 state fields.
    let (thermal_bytes, hydraulic_bytes) = (8.0, (3.0 + 4.0 + 4.0 + 4.0 + 4.0) * 4.0);
    let bandwidth = copy_bandwidth(side as usize * side as usize * 4 * 8);
    println!("map {side}², copy bandwidth {:.2} GB/s (read + write)", bandwidth / 1e9);
    let iterations: u32 = std::env::var("EROSION_ITERATIONS").ok().and_then(|s| s.parse().ok()).unwrap_or(20);
    // A fixed cost per call, not per iteration: the kernels' fresh scratch (thermal 1 buffer,
    // hydraulic 8), spread over the iterations of one call.
    let fresh = fresh_buffer(side as usize * side as usize) * 1e9 / cells;
    println!(
        "fresh scratch buffer: {fresh:.2} ns/cell per call (first touch); over {iterations} iterations thermal's \
         1 buffer adds {:.2} ns/cell/iteration, hydraulic's 8 add {:.2}",
        fresh / f64::from(iterations),
        8.0 * fresh / f64::from(iterations)
    );
    // With the fused passes (one sweep per iteration) an iteration must move only the state:
    // terrain, water, sediment and flow read and written.
    let fused_bytes = 4.0 * 4.0 * 2.0;
    println!(
        "load average before the kernels: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    for threads in [1, 2] {
        let own = rect.expand(1 << 20); // every iteration on the whole map (no halo shrinking)
        let per = |t: f64| t * 1e9 / (cells * f64::from(iterations));
        let report = |name: &str, bytes: f64, ((new, new_cpu), (old, old_cpu)): ((f64, f64), (f64, f64))| {
            let floor = bytes / bandwidth * 1e9;
            println!(
                "{name:9} {threads} thread(s): {:6.2} ns/cell/iteration (reference {:6.2}, speed-up {:.2}); memory floor \
                 {floor:5.2} ns ({bytes} B); ratio {:.1}; {iterations} iterations in {new:.3} s",
                per(new),
                per(old),
                old / new,
                per(new) / floor,
            );
            println!(
                "{name:9} {threads} thread(s), CPU time of all threads: {:6.2} ns/cell/iteration (reference {:6.2}, \
                 speed-up {:.2}); CPU / threads against the floor: ratio {:.1}",
                per(new_cpu),
                per(old_cpu),
                old_cpu / new_cpu,
                per(new_cpu) / threads as f64 / floor,
            );
        };
        let pair = time_pair(
            threads,
            &map,
            |m| thermal(m, own, thermal_params(iterations)).unwrap(),
            |m| {
                if reference {
                    erosion_reference::thermal(m, own, thermal_params(iterations)).unwrap()
                }
            },
        );
        report("thermal", thermal_bytes, pair);
        let pair = time_pair(
            threads,
            &map,
            |m| hydraulic(m, own, hydraulic_params(iterations)).unwrap(),
            |m| {
                if reference {
                    erosion_reference::hydraulic(m, own, hydraulic_params(iterations)).unwrap()
                }
            },
        );
        report("hydraulic", hydraulic_bytes, pair);
        println!(
            "hydraulic {threads} thread(s): against the fused schedule's own floor ({fused_bytes} B, {:.2} ns): ratio {:.1}",
            fused_bytes / bandwidth * 1e9,
            per(pair.0 .0) / (fused_bytes / bandwidth * 1e9)
        );
    }

    if std::env::var_os("EROSION_KERNELS_ONLY").is_some() {
        return;
    }
    // The point-local look: one pass, no iterations.
    let inner = Rect::new(rect.x + 1, rect.y + 1, side - 2, side - 2);
    for octaves in [1, 3] {
        for threads in [1, 2] {
            let op = Gullies { wavelength: 64.0, depth: 0.05, octaves, seed: 1, flow: false };
            let t = time(threads, &map, |m| op.carve_map(m, inner, 1.0).unwrap());
            println!(
                "gullies   {threads} thread(s), {octaves} octave(s): {:6.2} ns/pixel (one pass, halo 1)",
                t * 1e9 / inner.area() as f64
            );
        }
    }

    // The halo: a 256² tile with 50 iterations, against the same iterations on 256² alone.
    let tile = 256u64;
    let n = 50u32;
    let own = Rect::new(0, 0, tile, tile);
    for (name, halo) in [("thermal", u64::from(n)), ("hydraulic", u64::from(n) * HYDRAULIC_RADIUS)] {
        let with_halo = terrain(own.expand(halo));
        let alone = terrain(own);
        let run = |m: &mut HeightMap, own: Rect| {
            if name == "thermal" {
                thermal(m, own, thermal_params(n)).unwrap()
            } else {
                hydraulic(m, own, hydraulic_params(n)).unwrap()
            }
        };
        let t_halo = time(1, &with_halo, |m| run(m, own));
        let t_alone = time(1, &alone, |m| run(m, own.expand(1 << 20)));
        let predicted = ((tile + 2 * halo) as f64 / tile as f64).powi(2);
        println!(
            "{name:9} tile {tile}², {n} iterations, halo {halo}: tile with halo / tile alone = {:.2} \
             (full-halo prediction ((T + 2H) / T)² = {predicted:.2}; the kernel only computes what later \
             iterations read)",
            t_halo / t_alone
        );
    }
}
