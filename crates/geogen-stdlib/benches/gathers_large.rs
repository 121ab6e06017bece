//! The gathers (Rotate, Distort, Shift, Rescale) on a 4000×4000 output, the size where their
//! sources no longer fit in any cache (the 1024² kernels bench hides that). Each input is built over
//! exactly the bounds the operation asks for, as a render provides it. Prints, per gather, the
//! median over a few calls of the wall ns per pixel, its multiple of the copy floor at this size,
//! the CPU ns per pixel of all threads (what a loaded machine disturbs least) and a hash of the
//! output's bits (equal hashes before and after a kernel change: the same bytes).
//!
//! `cargo bench -p geogen-stdlib --bench gathers_large` (`RAYON_NUM_THREADS=1` for one thread;
//! `GATHERS=Rotate` runs only the gathers whose label contains `Rotate`; `GATHERS_SIDE=2000` and
//! `GATHERS_RUNS=5` change the size and the calls per gather).

mod support;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;
use support::process_cpu_ns;

use geogen_render::{Bounds, HeightMap, HeightProfile, KernelContext, Object, OpContext, Operation, Rect};
use geogen_stdlib::coordinates::Axis;
use geogen_stdlib::generators::NoiseLayer;
use geogen_stdlib::transforms::{Distort, NoiseDistort, Rescale, Shift, Transform};

/// The renderer's allocator, as the CLI installs it: after the first call of a gather, its output
/// takes the pages a freed map left, so the figures are the kernel's and not the kernel's page
/// faults on fresh memory (2.3 µs a page on this machine class; the first call still pays them).
#[global_allocator]
static ALLOCATOR: geogen_render::LargePages = geogen_render::LargePages::new();

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Noise of wavelength 64 over `rect` (varied content, as the kernels bench uses).
fn noise_map(rect: Rect, seed: u32) -> Object {
    let mut m = Object::Map(HeightMap::try_zeroed(rect).unwrap());
    let ctx = KernelContext::new(1.0, Bounds::Map(rect));
    NoiseLayer::new(64, 16000, seed, 0, false).render(&ctx, &mut m, &[]).unwrap();
    m
}

/// An input over `bounds`: noise for a map, a slow wave in [-0.9, 0.9] for a profile.
fn input(bounds: Bounds, seed: u32) -> Object {
    match bounds {
        Bounds::Profile(interval) => {
            let data = (0..interval.length as u32).map(|i| (i as f32 * 0.013 + seed as f32).sin() * 0.9).collect();
            Object::Profile(HeightProfile::from_data(interval, data).unwrap())
        }
        other => noise_map(other.rect(), seed),
    }
}

/// The step `map.Distort(wavelength, d)` records (seed 0).
fn noise_distort(wavelength: u32, d: f64) -> Arc<dyn Operation> {
    let field = |k| NoiseLayer::new(wavelength, 32767, 0x5eed, k, false).field;
    Arc::new(NoiseDistort { maximum_distance: d, x_field: field(0), y_field: field(1) })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// FNV-1a over the bits of every height.
fn hash(map: &HeightMap) -> u64 {
    map.data().iter().fold(0xcbf2_9ce4_8422_2325u64, |h, v| (h ^ u64::from(v.to_bits())).wrapping_mul(0x100_0000_01b3))
}

fn main() {
    let side = env_or("GATHERS_SIDE", 4000);
    let runs = env_or("GATHERS_RUNS", 3).max(1);
    let only = std::env::var("GATHERS").unwrap_or_default();
    let half = (side / 2) as i64;
    let rect = Rect::new(-half, -half, side, side);
    let pixels = (side * side) as f64;
    let floor = geogen_render::rows::copy_floor_ns_per_pixel(pixels as usize, 11);
    println!("copy floor ({side}²) {floor:.3} ns/pixel ({} threads)", rayon::current_num_threads());
    let rotate = |angle: f64| {
        let (sin, cos) = (libm::sin(angle), libm::cos(angle));
        Arc::new(Transform::new("HeightMap.Rotate", [cos, -sin, sin, cos]).unwrap())
    };
    let gathers: Vec<(&str, Arc<dyn Operation>)> = vec![
        ("Rotate 0.5", rotate(0.5)),
        ("Rotate 1.3", rotate(1.3)),
        ("Rotate 2.5", rotate(2.5)),
        ("Distort 20", Arc::new(Distort { maximum_distance: 20.0 })),
        ("Distort 100", Arc::new(Distort { maximum_distance: 100.0 })),
        // What `map.Distort(100, 50)` and `Distort(50, 25)` record (conflux): the noise fields
        // computed inside the step, band by band.
        ("NoiseDistort 100, 50", noise_distort(100, 50.0)),
        ("NoiseDistort 50, 25", noise_distort(50, 25.0)),
        ("Shift horizontal", Arc::new(Shift { distance: 150, direction: Axis::Horizontal })),
        ("Shift vertical", Arc::new(Shift { distance: 150, direction: Axis::Vertical })),
        ("Rescale 3, 1", Arc::new(Rescale { horizontal: 3.0, vertical: 1.0 })),
        ("Rescale 0.7, 0.7", Arc::new(Rescale { horizontal: 0.7, vertical: 0.7 })),
    ];
    let ctx = KernelContext::new(1.0, Bounds::Map(rect));
    for (label, op) in gathers {
        if !label.contains(only.as_str()) {
            continue;
        }
        let bounds = op.required_bounds(Bounds::Map(rect), &OpContext { scale: 1.0 });
        let source = input(bounds[0], 1);
        let others: Vec<Object> = bounds[1..].iter().enumerate().map(|(i, &b)| input(b, 10 + i as u32)).collect();
        let inputs: Vec<&Object> = others.iter().collect();
        let (mut wall, mut cpu, mut bits) = (Vec::new(), Vec::new(), 0);
        for _ in 0..runs {
            let mut target = source.clone();
            let (start, cpu_start) = (Instant::now(), process_cpu_ns());
            op.render(&ctx, black_box(&mut target), &inputs).unwrap();
            wall.push(start.elapsed().as_nanos() as f64 / pixels);
            if let (Some(a), Some(b)) = (cpu_start, process_cpu_ns()) {
                cpu.push((b - a) as f64 / pixels);
            }
            bits = hash(target.as_map().unwrap());
        }
        let wall = median(wall);
        let cpu = if cpu.is_empty() { f64::NAN } else { median(cpu) };
        println!(
            "{label:<18} {wall:7.3} ns/pixel {:6.1}x copy, cpu {cpu:7.3} ns/pixel, {} threads, hash {bits:016x}",
            wall / floor,
            rayon::current_num_threads()
        );
    }
}
