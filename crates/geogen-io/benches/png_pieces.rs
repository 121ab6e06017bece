//! PNG16 encoding of a 2048² fractal terrain: the pieced encoder (src/parpng.rs) on 1 and 2 threads
//! against the png crate's stream encoder at zlib's fast level with the Up filter (the encoder of
//! every PNG before it, and still of images of one piece), all in one process. Prints each file's size
//! once. `cargo bench -p geogen-io --bench png_pieces -- --warm-up-time 1 --measurement-time 3`;
//! ns per pixel = time per iteration / 4 194 304.

#[path = "../tests/fixtures/fractal.rs"]
mod fixtures;
use fixtures::fractal;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use geogen_io::{encode, quantize, Format, HeightField};

const SIDE: u32 = 2048;

/// The png crate's stream encoder, as every PNG was written before the pieced encoder.
fn zlib_fast(samples: &[u8]) -> usize {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, SIDE, SIDE);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(png::BitDepth::Sixteen);
        encoder.set_compression(png::Compression::Fast);
        encoder.set_filter(png::FilterType::Up);
        let mut writer = encoder.write_header().expect("header");
        let mut stream = writer.stream_writer().expect("stream");
        for row in samples.chunks(SIDE as usize * 2) {
            std::io::Write::write_all(&mut stream, row).expect("row");
        }
        stream.finish().expect("finish");
    }
    out.len()
}

fn pieces(c: &mut Criterion) {
    let data = fractal(SIDE, SIDE);
    let field = HeightField::new(SIDE, SIDE, &data).expect("field");
    let mut samples = vec![0; data.len() * 2];
    quantize::u16_be(&data, &mut samples);
    let pieced = encode(Format::Png16, &field).expect("encode").len();
    eprintln!("png16 {SIDE}²: pieced {pieced} bytes, zlib fast {} bytes", zlib_fast(&samples));
    let mut group = c.benchmark_group("png16_2048");
    group.throughput(Throughput::Elements(u64::from(SIDE * SIDE)));
    group.sample_size(10);
    group.bench_function("zlib_fast_stream_1_thread", |b| b.iter(|| zlib_fast(black_box(&samples))));
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
        group.bench_function(format!("pieced_{threads}_threads"), |b| {
            b.iter(|| pool.install(|| encode(Format::Png16, black_box(&field)).expect("encode")))
        });
    }
    group.finish();
}

criterion_group!(benches, pieces);
criterion_main!(benches);
