//! Noise layers as the renderer's fused pass runs them: a map of `width` columns cut into bands of
//! [`band_rows`] rows (warm buffers, reused), every layer of `CreateNoiseLayers(32)` (wavelengths
//! 32 down to 1) applied to a band before the next band, on one thread. Prints, per layer, the CPU
//! time of this thread per pixel (Linux `CLOCK_THREAD_CPUTIME_ID`: waiting for a core is not counted) and
//! its multiple of the copy floor (one thread copying a `width`² map, CPU time), at widths 1000 and
//! 4000; the copy of a band (warm, in cache) is printed too.
//!
//! `cargo bench -p geogen-kernels --bench noise_fused` (`NOISE_WIDTHS=1000,4000`, `NOISE_ROWS=512`).

use std::hint::black_box;

use geogen_kernels::noise::{add_noise_layer, LayerField};
use geogen_render::rows::{band_rows, serially};
use geogen_render::{HeightMap, Rect};

/// CPU time of the calling thread so far, in ns (`CLOCK_THREAD_CPUTIME_ID`, Linux), else 0.
#[cfg(target_os = "linux")]
fn thread_cpu_ns() -> u64 {
    #[repr(C)]
    struct Timespec {
        seconds: i64,
        nanoseconds: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, time: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut time = Timespec { seconds: 0, nanoseconds: 0 };
    // SAFETY: `time` is a valid timespec for the call to fill.
    if unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut time) } != 0 {
        return 0;
    }
    time.seconds as u64 * 1_000_000_000 + time.nanoseconds as u64
}

#[cfg(not(target_os = "linux"))]
fn thread_cpu_ns() -> u64 {
    0
}

/// CPU ns per pixel of copying a map of `pixels` f32 into another on this thread (both touched
/// before; the median of 7): the copy floor in CPU time.
fn copy_floor(pixels: usize) -> f64 {
    let source = vec![0.5f32; pixels];
    let mut target = vec![0.0f32; pixels];
    let mut times: Vec<f64> = (0..8)
        .map(|_| {
            let start = thread_cpu_ns();
            target.copy_from_slice(black_box(&source));
            black_box(&mut target);
            (thread_cpu_ns() - start) as f64 / pixels as f64
        })
        .skip(1)
        .collect();
    times.sort_by(|a, b| a.total_cmp(b));
    times[times.len() / 2]
}

fn main() {
    let widths: Vec<usize> = std::env::var("NOISE_WIDTHS")
        .unwrap_or_else(|_| "1000,4000".into())
        .split(',')
        .filter_map(|w| w.trim().parse().ok())
        .collect();
    let rows: usize = std::env::var("NOISE_ROWS").ok().and_then(|r| r.parse().ok()).unwrap_or(512);
    let wavelengths = [32u32, 16, 8, 4, 2, 1];
    let layers: Vec<LayerField> = wavelengths
        .iter()
        .enumerate()
        .map(|(k, &w)| LayerField::new(w, 16383 >> k, 7, (wavelengths.len() - 1 - k) as u32))
        .collect();
    for &width in &widths {
        let band = band_rows(width);
        let x0 = -(width as i64) / 2;
        let y0 = -(rows as i64) / 2;
        let mut bands: Vec<HeightMap> = (0..rows.div_ceil(band))
            .map(|b| {
                let h = band.min(rows - b * band) as u64;
                HeightMap::try_zeroed(Rect::new(x0, y0 + (b * band) as i64, width as u64, h)).unwrap()
            })
            .collect();
        let pixels = (width * rows) as f64;
        let mut per_layer = vec![Vec::new(); layers.len()];
        let mut copies = Vec::new();
        let source = vec![0.25f32; band * width];
        for _round in 0..7 {
            let mut cpu = vec![0u64; layers.len()];
            let mut copy = 0u64;
            serially(|| {
                for map in bands.iter_mut() {
                    let start = thread_cpu_ns();
                    let n = map.data().len();
                    map.data_mut().copy_from_slice(&source[..n]);
                    copy += thread_cpu_ns() - start;
                    for (k, field) in layers.iter().enumerate() {
                        let start = thread_cpu_ns();
                        add_noise_layer(black_box(map), 1.0, *field, false);
                        cpu[k] += thread_cpu_ns() - start;
                    }
                }
            });
            for (k, c) in cpu.iter().enumerate() {
                per_layer[k].push(*c as f64 / pixels);
            }
            copies.push(copy as f64 / pixels);
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(|a, b| a.total_cmp(b));
            v[v.len() / 2]
        };
        let band_copy = median(&mut copies);
        let floor = copy_floor(width * width);
        println!(
            "width {width}, {rows} rows, bands of {band} rows: copy floor ({width}², one thread) {floor:.3}, \
             band copy {band_copy:.3} cpu ns/px (medians of 7)"
        );
        let mut total = 0.0;
        for (k, v) in per_layer.iter_mut().enumerate() {
            let m = median(v);
            total += m;
            println!("  w={:<3} {m:7.3} cpu ns/px {:6.1}x copy floor", wavelengths[k], m / floor);
        }
        println!("  all   {total:7.3} cpu ns/px {:6.1}x copy floor", total / floor);
    }
}
