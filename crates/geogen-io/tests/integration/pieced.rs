//! PNGs of more than one piece are compressed on every core (src/parpng.rs): they must decode to the
//! exact samples, be one valid zlib stream (Adler-32 checked), and have the same bytes for every thread
//! count and every way the rows arrive.

use crate::common;

#[path = "../fixtures/fractal.rs"]
mod fixtures;
use fixtures::fractal;

use std::io::Cursor;

use common::*;
use geogen_io::{encode, palette, quantize, Format, HeightField, StreamWriter};

/// The samples a PNG's rows should hold, as the png crate decodes them (bytes, 16-bit big-endian).
fn expected_bytes(format: Format, data: &[f32]) -> Vec<u8> {
    match format {
        Format::Png16 => {
            let mut out = vec![0; data.len() * 2];
            quantize::u16_be(data, &mut out);
            out
        }
        Format::Png8 => {
            let mut out = vec![0; data.len()];
            quantize::u8s(data, &mut out);
            out
        }
        Format::Colored => {
            let mut out = vec![0; data.len() * 3];
            palette::colors(data, &mut out);
            out
        }
        other => panic!("{other} is not a PNG of heights"),
    }
}

/// Decodes with the png crate, and checks the zlib stream of the IDAT chunks with miniz, which
/// verifies the Adler-32 (the png crate does not).
fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(Cursor::new(png_bytes));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut buf).expect("png data");
    buf.truncate(frame.buffer_size());

    let mut idat = Vec::new();
    let mut at = 8;
    while at < png_bytes.len() {
        let len = u32::from_be_bytes(png_bytes[at..at + 4].try_into().expect("length")) as usize;
        let kind = &png_bytes[at + 4..at + 8];
        let data = &png_bytes[at + 8..at + 8 + len];
        let crc = u32::from_be_bytes(png_bytes[at + 8 + len..at + 12 + len].try_into().expect("crc"));
        assert_eq!(crc, crc32fast::hash(&png_bytes[at + 4..at + 8 + len]), "chunk CRC");
        if kind == b"IDAT" {
            idat.extend_from_slice(data);
        }
        at += 12 + len;
    }
    let raw = miniz_oxide::inflate::decompress_to_vec_zlib(&idat).expect("one valid zlib stream");
    let rows = frame.height as usize;
    assert_eq!(raw.len(), rows * (frame.line_size + 1), "filtered size");
    (frame.width, frame.height, buf)
}

fn terrain(width: u32, height: u32) -> Vec<f32> {
    // Smooth with fine detail and flat clamped areas (runs of zeros after filtering).
    let mut data = sample_field(width, height);
    for (i, h) in data.iter_mut().enumerate() {
        let (x, y) = ((i % width as usize) as f32, (i / width as usize) as f32);
        if (x * 0.01 + y * 0.02).sin() > 0.6 {
            *h = -1.0;
        }
    }
    data
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool").install(f)
}

#[test]
fn pieced_pngs_decode_exactly_with_the_same_bytes_for_any_thread_count() {
    // Sizes around the piece boundaries (256 KiB of rows): odd widths, a last piece of one row, rows
    // longer than a piece (one row per piece: more threads than rows), and one row.
    let cases: [(Format, u32, u32); 7] = [
        (Format::Png16, 701, 300),
        (Format::Png16, 999, 263),
        (Format::Png8, 1001, 999),
        (Format::Colored, 333, 1000),
        (Format::Png16, 140_000, 3),
        (Format::Png8, 300_001, 2),
        (Format::Png16, 200_000, 1),
    ];
    for (format, w, h) in cases {
        let data = terrain(w, h);
        let field = HeightField::new(w, h, &data).expect("field");
        let one = in_pool(1, || encode(format, &field).expect("encode"));
        let three = in_pool(3, || encode(format, &field).expect("encode"));
        let eight = in_pool(8, || encode(format, &field).expect("encode"));
        assert!(one == three && one == eight, "{format} {w}x{h}: bytes depend on the thread count");
        let (dw, dh, samples) = decode(&one);
        assert_eq!((dw, dh), (w, h));
        assert!(samples == expected_bytes(format, &data), "{format} {w}x{h}: samples differ");
    }
}

#[test]
fn streamed_pieces_equal_the_whole_image_for_any_strips() {
    let (w, h) = (733_u32, 1201_u32);
    let data = terrain(w, h);
    let field = HeightField::new(w, h, &data).expect("field");
    let dir = tempfile::tempdir().expect("tempdir");
    for format in [Format::Png16, Format::Png8, Format::Colored] {
        let whole = encode(format, &field).expect("encode");
        let patterns: [&[usize]; 3] = [&[1201], &[1, 178, 179, 0, 500, 343], &[7; 171]];
        for (i, strips) in patterns.iter().enumerate() {
            let path = dir.path().join(format!("s{i}.png"));
            let mut stream = StreamWriter::new(format, w, h, &path).expect("stream");
            let mut at = 0;
            for &rows in strips.iter() {
                stream.write_rows(&data[at * w as usize..(at + rows) * w as usize]).expect("rows");
                at += rows;
            }
            if at < h as usize {
                stream.write_rows(&data[at * w as usize..]).expect("rest");
            }
            stream.finish().expect("finish");
            assert!(std::fs::read(&path).expect("read") == whole, "{format}: strips {i} differ from the whole");
        }
    }
}

#[test]
fn pieced_pngs_stay_as_small_as_the_png_crate_s() {
    // The fast level of zlib (the png crate's stream encoder, still used for images of one piece) on
    // the same rows: the pieced file must not be more than 10 % larger, on fractal terrain (on the
    // examples' renders it is 1-16 % smaller; see src/deflate.rs).
    let (w, h) = (1024_u32, 1024_u32);
    let data = fractal(w, h);
    let field = HeightField::new(w, h, &data).expect("field");
    let pieced = encode(Format::Png16, &field).expect("encode");
    let mut samples = vec![0; data.len() * 2];
    quantize::u16_be(&data, &mut samples);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("reference.png");
    let mut encoder = png::Encoder::new(std::fs::File::create(&path).expect("create"), w, h);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::Sixteen);
    encoder.set_compression(png::Compression::Fast);
    encoder.set_filter(png::FilterType::Up);
    let mut stream = encoder.write_header().expect("header").into_stream_writer().expect("stream");
    std::io::Write::write_all(&mut stream, &samples).expect("rows");
    stream.finish().expect("finish");
    let reference = std::fs::read(&path).expect("read");
    let ratio = pieced.len() as f64 / reference.len() as f64;
    assert!(ratio < 1.10, "pieced {} bytes vs {} ({ratio:.3})", pieced.len(), reference.len());
}
