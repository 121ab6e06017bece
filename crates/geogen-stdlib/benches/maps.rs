//! The neighbourhood and resampling kernels at 1024² and 4096²: DistanceMap, Blur, Distort and
//! Rotate. Criterion reports time per call and pixels per second; after each benchmark the ns per
//! pixel of a short direct measurement is printed too.
//!
//! `cargo bench -p geogen-stdlib --bench maps` (add `-- --warm-up-time 1 --measurement-time 3` for a
//! quicker run, or a name such as `-- DistanceMap` for one kernel).

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use geogen_render::{Bounds, HeightMap, KernelContext, Object, Operation, Rect};
use geogen_stdlib::filters::{Blur, DistanceMap};
use geogen_stdlib::generators::NoiseLayer;
use geogen_stdlib::transforms::{Distort, Transform};

const SIDES: [u64; 2] = [1024, 4096];

/// A noise map over `rect` (varied content, with about half the pixels at or below 0).
fn noise(rect: Rect, seed: u32) -> Object {
    let mut m = Object::Map(HeightMap::try_zeroed(rect).unwrap());
    let ctx = KernelContext::new(1.0, Bounds::Map(rect));
    NoiseLayer::new(64, 16000, seed, 0, false).render(&ctx, &mut m, &[]).unwrap();
    NoiseLayer::new(8, 4000, seed, 1, false).render(&ctx, &mut m, &[]).unwrap();
    m
}

/// Benchmarks `op` producing the square of `side` pixels at the origin: `target` is the object the
/// kernel writes (rebuilt by `fresh` before every call when the kernel consumes it), `inputs` the
/// others.
fn bench(c: &mut Criterion, label: &str, side: u64, op: &dyn Operation, fresh: impl Fn() -> Object, inputs: &[Object]) {
    let rect = Rect::new(0, 0, side, side);
    let pixels = rect.area();
    let ctx = KernelContext::new(1.0, Bounds::Map(rect));
    let inputs: Vec<&Object> = inputs.iter().collect();
    let mut group = c.benchmark_group(label);
    group.throughput(Throughput::Elements(pixels));
    group.sample_size(10);
    group.bench_function(BenchmarkId::from_parameter(format!("{side}x{side}")), |b| {
        b.iter_batched_ref(
            &fresh,
            |target| op.render(&ctx, black_box(target), &inputs).unwrap(),
            criterion::BatchSize::LargeInput,
        )
    });
    group.finish();
    // A direct measurement for the ns/pixel figure (at least 3 calls, about a second).
    let (mut runs, mut busy) = (0u32, 0u128);
    while runs < 3 || busy < 1_000_000_000 {
        let mut target = fresh();
        let start = Instant::now();
        op.render(&ctx, black_box(&mut target), &inputs).unwrap();
        busy += start.elapsed().as_nanos();
        runs += 1;
    }
    let ns = busy as f64 / (f64::from(runs) * pixels as f64);
    println!("{label} {side}x{side}: {ns:.2} ns/pixel ({runs} calls, {} threads)", rayon::current_num_threads());
}

fn maps(c: &mut Criterion) {
    for side in SIDES {
        let rect = Rect::new(0, 0, side, side);

        let distance = DistanceMap { maximum_distance: 64.0 };
        let source = noise(rect.expand(64), 1);
        bench(c, "DistanceMap d=64", side, &distance, || Object::Map(HeightMap::try_zeroed(rect).unwrap()), &[source]);

        let map = noise(rect.expand(10), 2);
        bench(c, "Blur r=10", side, &Blur::new(10.0), || map.clone(), &[]);

        let (x_field, y_field) = (noise(rect, 3), noise(rect, 4));
        let map = noise(rect.expand(16), 5);
        bench(c, "Distort d=16", side, &Distort { maximum_distance: 16.0 }, || map.clone(), &[x_field, y_field]);

        let angle: f64 = 0.3;
        let rotate = Transform::new("HeightMap.Rotate", [angle.cos(), -angle.sin(), angle.sin(), angle.cos()]).unwrap();
        let needed = rotate.required_bounds(Bounds::Map(rect), &geogen_render::OpContext { scale: 1.0 })[0];
        let map = noise(needed.rect(), 6);
        bench(c, "Rotate", side, &rotate, || map.clone(), &[]);
    }
}

criterion_group!(benches, maps);
criterion_main!(benches);
