//! Encoding throughput of every format on a 1024 × 1024 field.
//!
//! Criterion reports elements (pixels) per second; ns per pixel is 10⁹ divided by that, or the time
//! per iteration divided by 1 048 576. Run briefly on shared machines:
//! `cargo bench -p geogen-io --bench writers -- --warm-up-time 1 --measurement-time 2`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use geogen_io::{encode, quantize, Format, HeightField};

const SIDE: u32 = 1024;

/// Smooth terrain-like heights with some fine detail, in [-1, 1]: compresses like real output.
fn terrain() -> Vec<f32> {
    (0..SIDE * SIDE)
        .map(|i| {
            let (x, y) = ((i % SIDE) as f32, (i / SIDE) as f32);
            let broad = (x * 0.006).sin() * (y * 0.004).cos() * 0.7;
            let detail = (x * 0.09 + y * 0.05).sin() * (y * 0.11 - x * 0.03).cos() * 0.2;
            (broad + detail).clamp(-1.0, 1.0)
        })
        .collect()
}

fn writers(c: &mut Criterion) {
    let data = terrain();
    let field = HeightField::new(SIDE, SIDE, &data).expect("field");
    let mut group = c.benchmark_group("encode_1024x1024");
    group.throughput(Throughput::Elements(u64::from(SIDE * SIDE)));
    group.sample_size(10);
    for format in Format::ALL {
        // Print the size once so compression trade-offs are visible next to the timings.
        let size = encode(format, &field).map(|b| b.len()).unwrap_or(0);
        eprintln!("{format}: {size} bytes ({:.2} bytes/pixel)", size as f64 / f64::from(SIDE * SIDE));
        group.bench_function(format.name(), |b| b.iter(|| encode(format, black_box(&field))));
    }
    // The quantiser alone: the floor under png16/r16.
    let mut out = vec![0u8; data.len() * 2];
    group.bench_function("quantize_u16_le", |b| b.iter(|| quantize::u16_le(black_box(&data), &mut out)));
    group.finish();
}

criterion_group!(benches, writers);
criterion_main!(benches);
