//! The PNG16 writer at render sizes: the whole encoder (quantize, filter, tokenize, code,
//! CRC) on 1 and 2 threads, and the quantiser alone, in ns per pixel (wall and CPU) and MB/s of
//! 16-bit samples. The field is the fractal fixture at `GEOGEN_BENCH_SIDE` (default 2000), or a real
//! render's R16 file: `GEOGEN_BENCH_R16=/tmp/dunesea.r16:4000` (square, side after the colon).
//! `cargo bench -p geogen-io --bench png16_writer -- --warm-up-time 1 --measurement-time 3`.
//! Besides criterion's figures (time per iteration, MB/s), each benchmark prints its CPU time per
//! pixel once, measured over its iterations from the threads' `schedstat` (Linux only).

#[path = "../tests/fixtures/fractal.rs"]
mod fixtures;
use fixtures::fractal;

use std::time::{Duration, Instant};

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use geogen_io::{encode, quantize, Format, HeightField};

/// CPU time of all this process's threads so far, in ns (Linux); `None` elsewhere.
fn process_cpu_ns() -> Option<u64> {
    let mut total = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        total += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(total)
}

/// The heights and the side of the square field.
fn field_data() -> (Vec<f32>, u32) {
    if let Ok(spec) = std::env::var("GEOGEN_BENCH_R16") {
        let (path, side) = spec.rsplit_once(':').expect("GEOGEN_BENCH_R16=path:side");
        let side: u32 = side.parse().expect("side");
        let raw = std::fs::read(path).expect("read the R16 file");
        assert_eq!(raw.len(), side as usize * side as usize * 2, "R16 size");
        // Back to heights that quantise to the same samples.
        let data =
            raw.chunks_exact(2).map(|p| (f32::from(u16::from_le_bytes([p[0], p[1]])) - 32767.0) / 32767.0).collect();
        return (data, side);
    }
    let side = std::env::var("GEOGEN_BENCH_SIDE").map_or(2000, |s| s.parse().expect("side"));
    (fractal(side, side), side)
}

/// Wall and CPU time summed over a benchmark's runs, and the runs.
#[derive(Default)]
struct Totals {
    wall_ns: u128,
    cpu_ns: u64,
    runs: u64,
}

impl Totals {
    /// Times `iters` runs of `run`, adding them up.
    fn timed(&mut self, iters: u64, mut run: impl FnMut()) -> Duration {
        let cpu0 = process_cpu_ns();
        let start = Instant::now();
        for _ in 0..iters {
            run();
        }
        let wall = start.elapsed();
        if let (Some(a), Some(b)) = (cpu0, process_cpu_ns()) {
            self.cpu_ns += b.saturating_sub(a);
        }
        self.wall_ns += wall.as_nanos();
        self.runs += iters;
        wall
    }

    fn print(&self, label: &str, pixels: u64) {
        let per = (self.runs * pixels) as f64;
        eprintln!(
            "{label}: wall {:.2} ns/px, cpu {:.2} ns/px over {} runs (warm-up included)",
            self.wall_ns as f64 / per,
            self.cpu_ns as f64 / per,
            self.runs
        );
    }
}

fn png16(c: &mut Criterion) {
    let (data, side) = field_data();
    let pixels = u64::from(side) * u64::from(side);
    let field = HeightField::new(side, side, &data).expect("field");
    let size = encode(Format::Png16, &field).expect("encode").len();
    eprintln!("png16 {side}²: {size} bytes ({:.3} bytes/pixel)", size as f64 / pixels as f64);
    let mut group = c.benchmark_group(format!("png16_writer_{side}"));
    // MB/s of 16-bit samples written.
    group.throughput(Throughput::Bytes(pixels * 2));
    group.sample_size(10);
    // Both pools live through every measurement: a pool's threads exit after it is dropped, and a
    // thread that exits between the two readings of `process_cpu_ns` takes its CPU time with it.
    let pools: Vec<_> =
        [1, 2].map(|n| (n, rayon::ThreadPoolBuilder::new().num_threads(n).build().expect("pool"))).into();
    for (threads, pool) in &pools {
        let label = format!("encode_{threads}_threads");
        let mut totals = Totals::default();
        group.bench_function(&label, |b| {
            b.iter_custom(|iters| {
                totals.timed(iters, || {
                    black_box(pool.install(|| encode(Format::Png16, black_box(&field)).expect("encode")));
                })
            })
        });
        totals.print(&label, pixels);
    }
    let mut out = vec![0u8; data.len() * 2];
    let mut totals = Totals::default();
    group.bench_function("quantize_u16_be_1_thread", |b| {
        b.iter_custom(|iters| {
            totals.timed(iters, || {
                quantize::u16_be(black_box(&data), &mut out);
            })
        })
    });
    totals.print("quantize_u16_be_1_thread", pixels);
    group.finish();
}

criterion_group!(benches, png16);
criterion_main!(benches);
