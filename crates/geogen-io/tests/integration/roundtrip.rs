//! Every format: write a file, read it back with an independent decoder, compare with the input.

use crate::common;

use common::*;
use geogen_io::{encode, hillshade, palette, quantize, write, Format, HeightField, HillshadeOptions};

const W: u32 = 37;
const H: u32 = 23;

fn write_sample(format: Format, data: &[f32]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(format.file_name("map"));
    let field = HeightField::new(W, H, data).expect("field");
    write(format, &field, &path).expect("write");
    // encode() and write() must produce the same bytes.
    let bytes = encode(format, &field).expect("encode");
    assert_eq!(std::fs::read(&path).expect("read back"), bytes, "{format}: write and encode differ");
    assert!(stray_temp_files(dir.path()).is_empty());
    (dir, path)
}

#[test]
fn png16_holds_the_exact_quantised_values() {
    let data = sample_field(W, H);
    let (_dir, path) = write_sample(Format::Png16, &data);
    let png = read_png(&path);
    assert_eq!((png.width, png.height), (W, H));
    assert_eq!((png.color, png.depth), (png::ColorType::Grayscale, png::BitDepth::Sixteen));
    let expected: Vec<u16> = data.iter().map(|&h| quantize::to_u16(h)).collect();
    assert_eq!(png.samples, expected);
    // The documented anchors, at the positions sample_field puts them.
    assert_eq!(&png.samples[..6], &[0, 32767, 65534, 65534, 0, 32767]);
}

#[test]
fn png8_holds_the_exact_quantised_values() {
    let data = sample_field(W, H);
    let (_dir, path) = write_sample(Format::Png8, &data);
    let png = read_png(&path);
    assert_eq!((png.width, png.height), (W, H));
    assert_eq!((png.color, png.depth), (png::ColorType::Grayscale, png::BitDepth::Eight));
    let expected: Vec<u16> = data.iter().map(|&h| u16::from(quantize::to_u8(h))).collect();
    assert_eq!(png.samples, expected);
    assert_eq!(&png.samples[..8], &[0, 128, 255, 255, 0, 128, 128, 127]);
}

#[test]
fn r16_is_headerless_little_endian_png16_values() {
    let data = sample_field(W, H);
    let (_dir, path) = write_sample(Format::R16, &data);
    assert_eq!(std::fs::metadata(&path).expect("metadata").len(), u64::from(W * H * 2), "no header");
    let expected: Vec<u16> = data.iter().map(|&h| quantize::to_u16(h)).collect();
    assert_eq!(read_r16(&path), expected);
    assert_eq!(&std::fs::read(&path).expect("read")[..6], &[0, 0, 0xff, 0x7f, 0xfe, 0xff]);
}

/// Raw heights, bit for bit, with NaN (and only NaN) replaced by 0.
fn expected_floats(data: &[f32]) -> Vec<u32> {
    data.iter().map(|&h| if h.is_nan() { 0.0_f32.to_bits() } else { h.to_bits() }).collect()
}

#[test]
fn tiff_holds_the_raw_floats_bit_exactly() {
    let data = sample_field(W, H);
    let (_dir, path) = write_sample(Format::Tiff32, &data);
    let (w, h, samples) = read_tiff(&path);
    assert_eq!((w, h), (W, H));
    let bits: Vec<u32> = samples.iter().map(|v| v.to_bits()).collect();
    assert_eq!(bits, expected_floats(&data));
    assert_eq!(samples[3], 1.5, "float formats do not clamp");
    assert_eq!(samples[8].to_bits(), (-0.0_f32).to_bits());
}

#[test]
fn exr_holds_the_raw_floats_bit_exactly_in_channel_y() {
    let data = sample_field(W, H);
    let (_dir, path) = write_sample(Format::Exr, &data);
    let (w, h, names, samples) = read_exr(&path);
    assert_eq!((w, h), (W as usize, H as usize));
    assert_eq!(names, vec!["Y".to_string()]);
    let bits: Vec<u32> = samples.iter().map(|v| v.to_bits()).collect();
    assert_eq!(bits, expected_floats(&data));
}

#[test]
fn colored_preview_uses_the_palette() {
    let data = sample_field(W, H);
    let (_dir, path) = write_sample(Format::Colored, &data);
    let png = read_png(&path);
    assert_eq!((png.width, png.height), (W, H));
    assert_eq!((png.color, png.depth), (png::ColorType::Rgb, png::BitDepth::Eight));
    let expected: Vec<u16> = data.iter().flat_map(|&h| palette::color(h)).map(u16::from).collect();
    assert_eq!(png.samples, expected);
    assert_eq!(&png.samples[..3], &[0, 18, 38]);
    assert_eq!(&png.samples[6..9], &[255, 255, 255]);
}

#[test]
fn hillshade_preview_matches_the_kernel() {
    let data = smooth_field(W, H);
    let (_dir, path) = write_sample(Format::Hillshade, &data);
    let png = read_png(&path);
    assert_eq!((png.width, png.height), (W, H));
    assert_eq!((png.color, png.depth), (png::ColorType::Grayscale, png::BitDepth::Eight));
    let expected: Vec<u16> = hillshade::hillshade(W as usize, H as usize, &data, &HillshadeOptions::default())
        .into_iter()
        .map(u16::from)
        .collect();
    assert_eq!(png.samples, expected);
    // Not trivially uniform: the field has relief.
    assert!(png.samples.iter().any(|&v| v != png.samples[0]));
}

#[test]
fn hillshade_options_change_the_image() {
    let data = smooth_field(W, H);
    let field = HeightField::new(W, H, &data).expect("field");
    let default = encode(Format::Hillshade, &field).expect("default");
    let same = geogen_io::encode_hillshade(&field, &HillshadeOptions::default()).expect("same");
    let steep =
        geogen_io::encode_hillshade(&field, &HillshadeOptions { z_scale: 500.0, ..Default::default() }).expect("steep");
    assert_eq!(default, same);
    assert_ne!(default, steep);

    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("steep_hillshade.png");
    let steep_opts = HillshadeOptions { z_scale: 500.0, ..Default::default() };
    geogen_io::write_hillshade(&field, &steep_opts, &path).expect("write");
    assert_eq!(std::fs::read(&path).expect("read"), steep);
}

#[test]
fn one_pixel_and_one_row_fields_work_in_every_format() {
    for (w, h) in [(1, 1), (5, 1), (1, 4)] {
        let data = sample_field(w, h);
        let field = HeightField::new(w, h, &data).expect("field");
        let dir = tempfile::tempdir().expect("tempdir");
        for format in Format::ALL {
            let path = dir.path().join(format.file_name("tiny"));
            write(format, &field, &path).unwrap_or_else(|e| panic!("{format} {w}×{h}: {e}"));
        }
        let png = read_png(&dir.path().join("tiny.png"));
        assert_eq!((png.width, png.height), (w, h));
        assert_eq!(read_tiff(&dir.path().join("tiny.tif")).2.len(), (w * h) as usize);
    }
}

#[test]
fn encoding_is_deterministic() {
    let data = sample_field(64, 48);
    let field = HeightField::new(64, 48, &data).expect("field");
    for format in Format::ALL {
        assert_eq!(encode(format, &field).expect("a"), encode(format, &field).expect("b"), "{format}");
    }
}

#[test]
fn invalid_fields_are_rejected_before_touching_the_disk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = vec![0.0; 10];
    let bad = [
        HeightField { width: 3, height: 3, data: &data },
        HeightField { width: 0, height: 10, data: &data },
        HeightField { width: 10, height: 0, data: &[] },
    ];
    for field in bad {
        for format in Format::ALL {
            let path = dir.path().join(format.file_name("bad"));
            let err = write(format, &field, &path).expect_err("must fail");
            assert!(matches!(err, geogen_io::IoError::Field { .. }), "{format}: {err}");
            assert!(err.to_string().contains("bad"), "error names the file: {err}");
            assert!(encode(format, &field).is_err());
        }
    }
    assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0, "nothing may be created");
    assert!(HeightField::new(3, 3, &data).is_err());
    assert!(HeightField::new(2, 5, &data).is_ok());
}
