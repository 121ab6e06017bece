//! Helpers shared by the integration tests: sample fields and independent decoders for every format.
#![allow(dead_code)] // each test binary uses a different subset

use std::fs::File;
use std::path::Path;

/// A decoded PNG: its layout and samples (16-bit samples already combined from big-endian bytes).
#[derive(Debug)]
pub struct Png {
    pub width: u32,
    pub height: u32,
    pub color: png::ColorType,
    pub depth: png::BitDepth,
    pub samples: Vec<u16>,
}

pub fn read_png(path: &Path) -> Png {
    let decoder = png::Decoder::new(File::open(path).expect("open png"));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut buf).expect("png data");
    let bytes = &buf[..frame.buffer_size()];
    let samples = match frame.bit_depth {
        png::BitDepth::Sixteen => bytes.chunks_exact(2).map(|b| u16::from_be_bytes([b[0], b[1]])).collect(),
        png::BitDepth::Eight => bytes.iter().map(|&b| u16::from(b)).collect(),
        other => panic!("unexpected bit depth {other:?}"),
    };
    Png { width: frame.width, height: frame.height, color: frame.color_type, depth: frame.bit_depth, samples }
}

pub fn read_r16(path: &Path) -> Vec<u16> {
    let bytes = std::fs::read(path).expect("read r16");
    assert_eq!(bytes.len() % 2, 0);
    bytes.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect()
}

/// Width, height and samples of a float TIFF; asserts the layout is one 32-bit IEEE float sample.
pub fn read_tiff(path: &Path) -> (u32, u32, Vec<f32>) {
    use tiff::decoder::{Decoder, DecodingResult};
    use tiff::tags::Tag;
    let mut decoder = Decoder::new(File::open(path).expect("open tiff")).expect("tiff header");
    assert_eq!(decoder.colortype().expect("colortype"), tiff::ColorType::Gray(32));
    assert_eq!(decoder.get_tag_u32(Tag::SampleFormat).expect("SampleFormat"), 3, "SampleFormat must be IEEEFP");
    assert_eq!(decoder.get_tag_u32(Tag::SamplesPerPixel).expect("SamplesPerPixel"), 1);
    let (w, h) = decoder.dimensions().expect("dimensions");
    match decoder.read_image().expect("tiff data") {
        DecodingResult::F32(v) => (w, h, v),
        _ => panic!("TIFF samples are not f32"),
    }
}

/// Width, height, channel names and the `Y` samples of an EXR; asserts `Y` is stored as f32.
pub fn read_exr(path: &Path) -> (usize, usize, Vec<String>, Vec<f32>) {
    use exr::prelude::*;
    let image = read_first_flat_layer_from_file(path).expect("read exr");
    let layer = image.layer_data;
    let names = layer.channel_data.list.iter().map(|c| c.name.to_string()).collect();
    let y = layer.channel_data.list.iter().find(|c| c.name.to_string() == "Y").expect("channel Y");
    let samples = match &y.sample_data {
        FlatSamples::F32(v) => v.clone(),
        other => panic!("Y is not f32: {:?}", std::mem::discriminant(other)),
    };
    (layer.size.width(), layer.size.height(), names, samples)
}

/// Deterministic pseudo-random field covering the interesting values: the anchors, out-of-range
/// values, NaN, tiny and negative-zero heights, and a smooth surface in between.
pub fn sample_field(width: u32, height: u32) -> Vec<f32> {
    let special = [-1.0, 0.0, 1.0, 1.5, -1.5, f32::NAN, 1e-30, -1e-30, -0.0, 0.5, -0.5, 2.0e-5, f32::INFINITY];
    let mut state = 0x9E37_79B9_u32;
    (0..width * height)
        .map(|i| {
            if (i as usize) < special.len() {
                return special[i as usize];
            }
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let noise = (state >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
            let (x, y) = ((i % width) as f32, (i / width) as f32);
            ((x * 0.21).sin() * (y * 0.13).cos() * 0.9 + noise * 0.2).clamp(-1.2, 1.2)
        })
        .collect()
}

/// A smooth field without special values (for previews and streaming).
pub fn smooth_field(width: u32, height: u32) -> Vec<f32> {
    (0..width * height)
        .map(|i| {
            let (x, y) = ((i % width) as f32, (i / width) as f32);
            (x * 0.05).sin() * (y * 0.07).cos() * 0.95
        })
        .collect()
}

/// Files in `dir` whose names mark them as temporary writes.
pub fn stray_temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("dir entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect()
}
