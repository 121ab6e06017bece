//! Each kernel on a 1024×1024 map. Criterion reports time per call and elements (pixels) per
//! second; after each benchmark the ns per pixel of a short direct measurement is printed too, with
//! its multiple of the copy floor (a parallel copy of the map, measured first in the same process),
//! and the CPU time per pixel of all threads (Linux), which a loaded machine disturbs less. The
//! gathers (Shift, Rotate, Rescale, Distort, DistanceMap) follow the pointwise kernels.
//!
//! `cargo bench -p geogen-stdlib --bench kernels -- --warm-up-time 1 --measurement-time 2 [FILTER]`
//! (`RAYON_NUM_THREADS=1` for one thread; `KERNELS=Blur` runs only the kernels whose label
//! contains `Blur`, the direct measurement included).

mod support;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;
use support::process_cpu_ns;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use geogen_render::{Bounds, HeightMap, HeightProfile, Interval, KernelContext, Object, Operation, Rect};
use geogen_stdlib::combiners::*;
use geogen_stdlib::coordinates::Axis;
use geogen_stdlib::filters::*;
use geogen_stdlib::generators::*;
use geogen_stdlib::transforms::{Distort, Rescale, Shift, Transform};

const SIDE: u64 = 1024;
const PIXELS: u64 = SIDE * SIDE;

fn rect() -> Rect {
    Rect::new(-512, -512, SIDE, SIDE)
}

/// A map with varied content (so no kernel sees a constant).
fn sample_map(seed: u32) -> Object {
    let mut m = Object::Map(HeightMap::try_zeroed(rect()).unwrap());
    let ctx = KernelContext::new(1.0, Bounds::Map(rect()));
    NoiseLayer::new(64, 16000, seed, 0, false).render(&ctx, &mut m, &[]).unwrap();
    m
}

/// A profile over the map's columns (and rows) with varied content in [-1, 1].
fn sample_profile(seed: u32) -> Object {
    let data: Vec<f32> = (0..SIDE as u32).map(|i| (i as f32 * 0.013 + seed as f32).sin() * 0.9).collect();
    Object::Profile(HeightProfile::from_data(Interval::new(-512, SIDE), data).unwrap())
}

fn bench_op(c: &mut Criterion, label: &str, op: Arc<dyn Operation>, n_inputs: usize) {
    let inputs_owned: Vec<Object> = (0..n_inputs).map(|i| sample_map(10 + i as u32)).collect();
    bench_with(c, label, op, inputs_owned);
}

fn bench_with(c: &mut Criterion, label: &str, op: Arc<dyn Operation>, inputs_owned: Vec<Object>) {
    let ctx = KernelContext::new(1.0, Bounds::Map(rect()));
    let inputs: Vec<&Object> = inputs_owned.iter().collect();
    let mut target = sample_map(1);
    let mut group = c.benchmark_group("kernels");
    group.throughput(Throughput::Elements(PIXELS));
    group.bench_function(label, |b| b.iter(|| op.render(&ctx, black_box(&mut target), &inputs).unwrap()));
    group.finish();
    // A direct measurement for the ns/pixel figure: as many calls as fit in ~0.3 s (at least 3).
    let start = Instant::now();
    let cpu_start = process_cpu_ns();
    let mut runs = 0u32;
    while runs < 3 || start.elapsed().as_millis() < 300 {
        op.render(&ctx, black_box(&mut target), &inputs).unwrap();
        runs += 1;
    }
    let ns = start.elapsed().as_nanos() as f64 / (f64::from(runs) * PIXELS as f64);
    let cpu = match (cpu_start, process_cpu_ns()) {
        (Some(a), Some(b)) => format!(", cpu {:.3} ns/pixel", (b - a) as f64 / (f64::from(runs) * PIXELS as f64)),
        _ => String::new(),
    };
    let floor = copy_floor();
    println!(
        "{label:<28} {ns:8.3} ns/pixel, {:5.1}x copy ({runs} calls, {} threads{cpu})",
        ns / floor,
        rayon::current_num_threads()
    );
}

/// Like [`bench_with`]'s direct measurement, on a map over `rect` (no criterion run), with a
/// copy floor measured for that map's size.
fn bench_direct(label: &str, op: Arc<dyn Operation>, rect: Rect) {
    let pixels = rect.area() as f64;
    let ctx = KernelContext::new(1.0, Bounds::Map(rect));
    let mut target = noise_map(rect, 1);
    op.render(&ctx, black_box(&mut target), &[]).unwrap();
    let floor = geogen_render::rows::copy_floor_ns_per_pixel(rect.area() as usize, 11);
    let start = Instant::now();
    let cpu_start = process_cpu_ns();
    let mut runs = 0u32;
    while runs < 3 || start.elapsed().as_millis() < 600 {
        op.render(&ctx, black_box(&mut target), &[]).unwrap();
        runs += 1;
    }
    let ns = start.elapsed().as_nanos() as f64 / (f64::from(runs) * pixels);
    let cpu = match (cpu_start, process_cpu_ns()) {
        (Some(a), Some(b)) => format!(", cpu {:.3} ns/pixel", (b - a) as f64 / (f64::from(runs) * pixels)),
        _ => String::new(),
    };
    println!(
        "{label:<28} {ns:8.3} ns/pixel, {:5.1}x copy ({runs} calls, {} threads, copy floor {floor:.3}{cpu})",
        ns / floor,
        rayon::current_num_threads()
    );
}

/// ns per pixel of a parallel copy of a map of this size, measured once per process.
fn copy_floor() -> f64 {
    static FLOOR: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *FLOOR.get_or_init(|| {
        let floor = geogen_render::rows::copy_floor_ns_per_pixel(PIXELS as usize, 31);
        println!("copy floor (1024²)            {floor:8.3} ns/pixel ({} threads)", rayon::current_num_threads());
        floor
    })
}

fn kernels(c: &mut Criterion) {
    let ops: Vec<(&str, Arc<dyn Operation>, usize)> = vec![
        ("Flat", Arc::new(Flat::new(0.5)), 0),
        ("Gradient", Arc::new(Gradient::new((0.0, 0.0), (300.0, 100.0), -1.0, 1.0)), 0),
        ("RadialGradient", Arc::new(RadialGradient::new((0.0, 0.0), 400.0, 1.0, -1.0)), 0),
        ("NoiseLayer w=256", Arc::new(NoiseLayer::new(256, 16383, 3, 0, false)), 0),
        ("NoiseLayer w=64", Arc::new(NoiseLayer::new(64, 4095, 3, 2, false)), 0),
        ("NoiseLayer w=16", Arc::new(NoiseLayer::new(16, 1023, 3, 4, false)), 0),
        ("NoiseLayer w=8", Arc::new(NoiseLayer::new(8, 511, 3, 5, false)), 0),
        ("NoiseLayer w=4", Arc::new(NoiseLayer::new(4, 255, 3, 6, false)), 0),
        ("NoiseLayer w=2", Arc::new(NoiseLayer::new(2, 127, 3, 7, false)), 0),
        ("NoiseLayer w=1 (per pixel)", Arc::new(NoiseLayer::new(1, 63, 3, 8, false)), 0),
        ("Clone", Arc::new(Clone), 1),
        ("Abs", Arc::new(Abs), 0),
        ("AddNumber", Arc::new(AddNumber::new(0.001)), 0),
        ("AddMap", Arc::new(AddMap), 1),
        ("AddMasked(number)", Arc::new(AddMasked::with_number(0.01)), 1),
        ("AddMasked(map)", Arc::new(AddMasked::with_map()), 2),
        ("MultiplyNumber", Arc::new(MultiplyNumber::new(0.999)), 0),
        ("MultiplyMap", Arc::new(MultiplyMap), 1),
        ("Blur r=1", Arc::new(Blur::new(1.0)), 0),
        ("Blur r=8", Arc::new(Blur::new(8.0)), 0),
        ("Blur r=50", Arc::new(Blur::new(50.0)), 0),
        ("ClampHeights", Arc::new(ClampHeights::new(-0.5, 0.5)), 0),
        ("Combine", Arc::new(Combine), 2),
        ("Fill", Arc::new(Fill::new(0.25)), 0),
        ("Intersect", Arc::new(Intersect), 1),
        ("Unify", Arc::new(Unify), 1),
        ("Invert", Arc::new(Invert), 0),
        ("CropHeights", Arc::new(CropHeights::new(-0.5, 0.5, 0.0)), 0),
    ];
    let only = std::env::var("KERNELS").unwrap_or_default();
    for (label, op, n) in ops {
        if !label.contains(only.as_str()) {
            continue;
        }
        bench_op(c, label, op, n);
    }
    // Gathers: each reads its source at positions of its own (the rotation and the rescale read
    // partly outside the map, where the sampler clamps).
    let (sin, cos) = (0.5f64.sin(), 0.5f64.cos());
    let gathers: Vec<(&str, Arc<dyn Operation>, Vec<Object>)> = vec![
        ("Shift vertical", Arc::new(Shift { distance: 150, direction: Axis::Vertical }), vec![sample_profile(1)]),
        ("Shift horizontal", Arc::new(Shift { distance: 150, direction: Axis::Horizontal }), vec![sample_profile(2)]),
        ("Rotate 0.5", Arc::new(Transform::new("HeightMap.Rotate", [cos, -sin, sin, cos]).unwrap()), vec![]),
        ("Rescale 3, 1", Arc::new(Rescale { horizontal: 3.0, vertical: 1.0 }), vec![]),
        ("Distort 20", Arc::new(Distort { maximum_distance: 20.0 }), vec![sample_map(20), sample_map(21)]),
        ("DistanceMap 100", Arc::new(DistanceMap { maximum_distance: 100.0 }), vec![sample_map(22)]),
    ];
    for (label, op, inputs) in gathers {
        if label.contains(only.as_str()) {
            bench_with(c, label, op, inputs);
        }
    }
    // Blur on maps as wide as the examples' renders (4000²), whose ring of horizontal rows is
    // larger than a core's L2 at large radii: direct measurement only, against a copy of the
    // same size.
    for r in [1u64, 8, 50] {
        let label = format!("Blur r={r} (4096x1024)");
        if label.contains(only.as_str()) {
            bench_direct(&label, Arc::new(Blur::new(r as f64)), Rect::new(-2048, -512, 4096, 1024));
        }
    }
    // Glaciate pulls heights towards its curve's fixed points, so repeated calls on one map would
    // soon take its cheap branch everywhere: each call starts from a fresh copy of the map. The
    // copy is in the figure (about 1x copy; compare with "Clone").
    for (label, include_negative) in [("Glaciate (+copy)", false), ("Glaciate negative (+copy)", true)] {
        if label.contains(only.as_str()) {
            let op = Restored(Arc::new(Glaciate { strength: 0.2, include_negative }));
            bench_with(c, label, Arc::new(op), vec![sample_map(1)]);
        }
    }
    // DistanceMap on a thresholded noise (features are the pixels at or below 0, blobs of about
    // 64 pixels) that covers everything within D of the map, as the bounds rule provides it.
    for d in [8u64, 64, 512] {
        let label = format!("DistanceMap D={d}");
        if label.contains(only.as_str()) {
            let source = noise_map(rect().expand(d), 23);
            bench_with(c, &label, Arc::new(DistanceMap { maximum_distance: d as f64 }), vec![source]);
        }
    }
}

/// Copies its input over the target, then runs the wrapped in-place operation.
#[derive(Debug)]
struct Restored(Arc<dyn Operation>);

impl Operation for Restored {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn arg_kinds(&self) -> &[geogen_render::ObjectKind] {
        &[geogen_render::ObjectKind::Map, geogen_render::ObjectKind::Map]
    }
    fn effect(&self) -> geogen_render::Effect {
        geogen_render::Effect::Modify
    }
    fn render(
        &self,
        ctx: &KernelContext,
        target: &mut Object,
        inputs: &[&Object],
    ) -> Result<(), geogen_render::RenderError> {
        if let (Object::Map(t), Some(Object::Map(s))) = (&mut *target, inputs.first()) {
            geogen_render::rows::parallel_copy(t.data_mut(), s.data());
        }
        self.0.render(ctx, target, &[])
    }
}

/// [`sample_map`]'s noise over any rectangle.
fn noise_map(rect: Rect, seed: u32) -> Object {
    let mut m = Object::Map(HeightMap::try_zeroed(rect).unwrap());
    let ctx = KernelContext::new(1.0, Bounds::Map(rect));
    NoiseLayer::new(64, 16000, seed, 0, false).render(&ctx, &mut m, &[]).unwrap();
    m
}

criterion_group!(benches, kernels);
criterion_main!(benches);
