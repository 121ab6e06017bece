//! PNG16 encoding of a 2048² fractal terrain: the pieced encoder (src/parpng.rs) on 1 and 2 threads
//! against the png crate's stream encoder at zlib's fast level with the Up filter (the encoder of
//! every PNG before it, and still of images of one piece), all in one process. Prints each file's size
//! once. `cargo bench -p geogen-io --bench png_pieces -- --warm-up-time 1 --measurement-time 3`;
//! ns per pixel = time per iteration / 4 194 304.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use geogen_io::{encode, quantize, Format, HeightField};

const SIDE: u32 = 2048;

/// Octaves of hashed value noise, wavelengths 512 to 2: compresses like a rendered terrain.
fn fractal() -> Vec<f32> {
    let lattice = |x: i64, y: i64, octave: u32| -> f32 {
        let mut k = (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (y as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        k ^= u64::from(octave).wrapping_mul(0x1656_67B1_9E37_79F9);
        k = (k ^ (k >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        ((k >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    };
    (0..SIDE * SIDE)
        .map(|i| {
            let (px, py) = (f64::from(i % SIDE), f64::from(i / SIDE));
            let (mut sum, mut amplitude) = (0.0_f32, 0.5_f32);
            for octave in 0..9 {
                let wavelength = f64::from(512_u32 >> octave);
                let (fx, fy) = (px / wavelength, py / wavelength);
                let (x0, y0) = (fx.floor() as i64, fy.floor() as i64);
                let (tx, ty) = ((fx - fx.floor()) as f32, (fy - fy.floor()) as f32);
                let top = lattice(x0, y0, octave) * (1.0 - tx) + lattice(x0 + 1, y0, octave) * tx;
                let bottom = lattice(x0, y0 + 1, octave) * (1.0 - tx) + lattice(x0 + 1, y0 + 1, octave) * tx;
                sum += (top * (1.0 - ty) + bottom * ty) * amplitude;
                amplitude *= 0.5;
            }
            sum
        })
        .collect()
}

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
    let data = fractal();
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
