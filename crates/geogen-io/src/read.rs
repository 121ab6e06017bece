//! Reading height maps back: the input maps of `geogen render --input name=FILE`.
//!
//! # From file values to heights
//!
//! Each reader inverts the writer of the same format, so a file geogen wrote reads back to the
//! heights it was written from, within the format's precision:
//!
//! | File | Height |
//! |---|---|
//! | 16-bit PNG, 16-bit TIFF, R16 | `(v − 32767) / 32767`, clamped to [-1, 1] (65535 reads as 1): exact for every value `png16` writes |
//! | 8-bit PNG, 8-bit TIFF | `v / 255 × 2 − 1`: within 1/255 of what `png8` was written from |
//! | float TIFF, EXR (f32 or f16) | the value itself, clamped to [-1, 1]; NaN reads as 0 |
//!
//! A PNG in colour is read through the mean of its red, green and blue samples (alpha is
//! ignored), a palette PNG through its colours; a multi-channel EXR through its `Y` channel, or its
//! first channel (alphabetically) without one.
//!
//! The format is told by the file's first bytes (PNG, TIFF and BigTIFF, EXR signatures); anything
//! else is raw R16, whose size must be given (`--input name=FILE:WxH`) unless the file is square.
//!
//! # Hostile files
//!
//! Every file is untrusted. The image's dimensions are read and checked against [`InputLimits`]
//! before any pixel is decoded, decoders get the same byte limits, and a decoder that panics on a
//! corrupt file is caught: every failure is an [`InputError`], never a crash or an unbounded
//! allocation.

use std::io::{BufReader, Read, Seek};
use std::path::Path;

/// The largest input accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputLimits {
    /// Largest width or height.
    pub max_side: u32,
    /// Largest width × height (4 bytes each once read).
    pub max_pixels: u64,
}

impl Default for InputLimits {
    /// 65 536 pixels a side and 256 Mi pixels (1 GiB of heights).
    fn default() -> Self {
        InputLimits { max_side: 1 << 16, max_pixels: 1 << 28 }
    }
}

/// A height map read from a file.
#[derive(Clone, Debug, PartialEq)]
pub struct InputHeights {
    pub width: u32,
    pub height: u32,
    /// Row-major heights in [-1, 1].
    pub data: Vec<f32>,
}

/// Why an input could not be read. The message names the file.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read `{path}`: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("`{path}` is not a height map geogen can read: {reason}")]
    Unsupported { path: String, reason: String },
    #[error("`{path}` is {width}x{height} pixels, larger than the input limit ({limit})")]
    TooLarge { path: String, width: u64, height: u64, limit: String },
    #[error("`{path}` is a damaged {format} file: {reason}")]
    Corrupt { path: String, format: &'static str, reason: String },
    #[error("`{path}` is raw R16 of {bytes} bytes, which is not {expected}")]
    R16Size { path: String, bytes: u64, expected: String },
}

/// The formats the reader tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputFormat {
    Png,
    Tiff,
    Exr,
    R16,
}

impl InputFormat {
    /// The format of a file by its first bytes; `R16` for anything unrecognised.
    pub fn sniff(head: &[u8]) -> InputFormat {
        if head.starts_with(b"\x89PNG\r\n\x1a\n") {
            InputFormat::Png
        } else if head.starts_with(b"II*\0")
            || head.starts_with(b"MM\0*")
            || head.starts_with(b"II+\0")
            || head.starts_with(b"MM\0+")
        {
            InputFormat::Tiff
        } else if head.starts_with(&[0x76, 0x2f, 0x31, 0x01]) {
            InputFormat::Exr
        } else {
            InputFormat::R16
        }
    }

    fn name(self) -> &'static str {
        match self {
            InputFormat::Png => "PNG",
            InputFormat::Tiff => "TIFF",
            InputFormat::Exr => "OpenEXR",
            InputFormat::R16 => "R16",
        }
    }
}

/// The height of a 16-bit sample, inverting `png16`/`r16`.
#[inline]
pub fn height_from_u16(v: u16) -> f32 {
    ((f64::from(v) - 32767.0) / 32767.0).clamp(-1.0, 1.0) as f32
}

/// The height of an 8-bit sample, inverting `png8`.
#[inline]
pub fn height_from_u8(v: u8) -> f32 {
    (f64::from(v) / 255.0 * 2.0 - 1.0) as f32
}

/// A float sample as a height: clamped, NaN → 0.
#[inline]
fn height_from_f32(v: f32) -> f32 {
    if v.is_nan() {
        0.0
    } else {
        v.clamp(-1.0, 1.0)
    }
}

/// Reads the height map in `path`. `r16_size` is the size of a raw R16 file (ignored for the
/// other formats; a square R16 file needs none).
pub fn read_heights(
    path: &Path,
    r16_size: Option<(u32, u32)>,
    limits: &InputLimits,
) -> Result<InputHeights, InputError> {
    let shown = path.display().to_string();
    let io = |source: std::io::Error| InputError::Io { path: shown.clone(), source };
    // Checked before opening: opening a named pipe waits for a writer, for ever if none comes.
    if !std::fs::metadata(path).map_err(io)?.is_file() {
        return Err(InputError::Unsupported { path: shown, reason: "it is not a regular file".into() });
    }
    let mut file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(InputError::Unsupported { path: shown, reason: "it is not a regular file".into() });
    }
    let mut head = [0u8; 8];
    let got = read_up_to(&mut file, &mut head).map_err(io)?;
    file.rewind().map_err(io)?;
    let format = InputFormat::sniff(&head[..got]);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match format {
        InputFormat::Png => read_png(BufReader::new(file), &shown, limits),
        InputFormat::Tiff => read_tiff(BufReader::new(file), &shown, limits),
        InputFormat::Exr => read_exr(path, &shown, limits),
        InputFormat::R16 => read_r16(file, meta.len(), &shown, r16_size, limits),
    }));
    result.unwrap_or_else(|_| {
        Err(InputError::Corrupt { path: shown.clone(), format: format.name(), reason: "its decoder gave up".into() })
    })
}

fn read_up_to(file: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

fn check_size(path: &str, width: u64, height: u64, limits: &InputLimits) -> Result<(), InputError> {
    if width == 0 || height == 0 {
        return Err(InputError::Unsupported { path: path.into(), reason: format!("it is {width}x{height} pixels") });
    }
    let side = u64::from(limits.max_side);
    if width > side || height > side || width.saturating_mul(height) > limits.max_pixels {
        return Err(InputError::TooLarge {
            path: path.into(),
            width,
            height,
            limit: format!("{} pixels a side, {} pixels in all", limits.max_side, limits.max_pixels),
        });
    }
    Ok(())
}

fn read_png(
    reader: impl std::io::BufRead + Seek,
    path: &str,
    limits: &InputLimits,
) -> Result<InputHeights, InputError> {
    let corrupt =
        |e: png::DecodingError| InputError::Corrupt { path: path.into(), format: "PNG", reason: e.to_string() };
    let mut decoder = png::Decoder::new_with_limits(
        reader,
        png::Limits { bytes: (limits.max_pixels as usize).saturating_mul(8).min(isize::MAX as usize) },
    );
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().map_err(corrupt)?;
    let (width, height) = (reader.info().width, reader.info().height);
    check_size(path, u64::from(width), u64::from(height), limits)?;
    let mut buf = vec![0u8; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut buf).map_err(corrupt)?;
    let channels = frame.color_type.samples();
    let sixteen = frame.bit_depth == png::BitDepth::Sixteen;
    let bytes = &buf[..frame.buffer_size()];
    let pixels = width as usize * height as usize;
    let sample = |i: usize| -> f64 {
        if sixteen {
            f64::from(u16::from_be_bytes([bytes[2 * i], bytes[2 * i + 1]]))
        } else {
            f64::from(bytes[i])
        }
    };
    // Gray (and gray + alpha) reads the gray sample; colour the mean of red, green and blue.
    let colour = matches!(frame.color_type, png::ColorType::Rgb | png::ColorType::Rgba);
    let mut data = Vec::with_capacity(pixels);
    for p in 0..pixels {
        let base = p * channels;
        let v = if colour { (sample(base) + sample(base + 1) + sample(base + 2)) / 3.0 } else { sample(base) };
        data.push(if sixteen {
            ((v - 32767.0) / 32767.0).clamp(-1.0, 1.0) as f32
        } else {
            (v / 255.0 * 2.0 - 1.0) as f32
        });
    }
    Ok(InputHeights { width, height, data })
}

fn read_tiff(reader: impl Read + Seek, path: &str, limits: &InputLimits) -> Result<InputHeights, InputError> {
    use tiff::decoder::{Decoder, DecodingResult, Limits};
    let corrupt = |e: tiff::TiffError| InputError::Corrupt { path: path.into(), format: "TIFF", reason: e.to_string() };
    let mut tiff_limits = Limits::default();
    tiff_limits.decoding_buffer_size = (limits.max_pixels as usize).saturating_mul(8);
    let mut decoder = Decoder::new(reader).map_err(corrupt)?.with_limits(tiff_limits);
    let (width, height) = decoder.dimensions().map_err(corrupt)?;
    check_size(path, u64::from(width), u64::from(height), limits)?;
    let colour = decoder.colortype().map_err(corrupt)?;
    let samples = match colour {
        tiff::ColorType::Gray(_) => 1,
        tiff::ColorType::GrayA(_) => 2,
        other => {
            return Err(InputError::Unsupported {
                path: path.into(),
                reason: format!("a TIFF height map must be grayscale, this one is {other:?}"),
            })
        }
    };
    let image = decoder.read_image().map_err(corrupt)?;
    let pixels = width as usize * height as usize;
    let pick = |len: usize| -> Result<(), InputError> {
        if len < pixels * samples {
            return Err(InputError::Corrupt { path: path.into(), format: "TIFF", reason: "too few samples".into() });
        }
        Ok(())
    };
    let data: Vec<f32> = match image {
        DecodingResult::F32(v) => {
            pick(v.len())?;
            v.iter().step_by(samples).take(pixels).map(|&h| height_from_f32(h)).collect()
        }
        DecodingResult::F64(v) => {
            pick(v.len())?;
            v.iter().step_by(samples).take(pixels).map(|&h| height_from_f32(h as f32)).collect()
        }
        DecodingResult::U16(v) => {
            pick(v.len())?;
            v.iter().step_by(samples).take(pixels).map(|&s| height_from_u16(s)).collect()
        }
        DecodingResult::U8(v) => {
            pick(v.len())?;
            v.iter().step_by(samples).take(pixels).map(|&s| height_from_u8(s)).collect()
        }
        _ => {
            return Err(InputError::Unsupported {
                path: path.into(),
                reason: "a TIFF height map must hold 8- or 16-bit unsigned or floating-point samples".into(),
            })
        }
    };
    Ok(InputHeights { width, height, data })
}

fn read_exr(file: &Path, path: &str, limits: &InputLimits) -> Result<InputHeights, InputError> {
    use exr::prelude::*;
    let corrupt =
        |e: exr::error::Error| InputError::Corrupt { path: path.into(), format: "OpenEXR", reason: e.to_string() };
    let meta = exr::meta::MetaData::read_from_file(file, false).map_err(corrupt)?;
    let header = meta.headers.first().ok_or_else(|| InputError::Corrupt {
        path: path.into(),
        format: "OpenEXR",
        reason: "it has no layer".into(),
    })?;
    let size = header.layer_size;
    check_size(path, size.width() as u64, size.height() as u64, limits)?;
    let channels = header.channels.list.len() as u64;
    if channels == 0 || channels > 64 {
        return Err(InputError::Unsupported { path: path.into(), reason: format!("it has {channels} channels") });
    }
    if (size.width() as u64).saturating_mul(size.height() as u64).saturating_mul(channels)
        > limits.max_pixels.saturating_mul(4)
    {
        return Err(InputError::TooLarge {
            path: path.into(),
            width: size.width() as u64,
            height: size.height() as u64,
            limit: format!("{} samples in all channels", limits.max_pixels.saturating_mul(4)),
        });
    }
    let image = read()
        .no_deep_data()
        .largest_resolution_level()
        .all_channels()
        .first_valid_layer()
        .all_attributes()
        .non_parallel()
        .from_file(file)
        .map_err(corrupt)?;
    let layer = image.layer_data;
    let (width, height) = (layer.size.width(), layer.size.height());
    check_size(path, width as u64, height as u64, limits)?;
    let list = &layer.channel_data.list;
    let channel = list
        .iter()
        .find(|c| c.name.eq("Y"))
        .or_else(|| list.first())
        .ok_or_else(|| InputError::Unsupported { path: path.into(), reason: "it has no channel".into() })?;
    let pixels = width * height;
    let data: Vec<f32> = match &channel.sample_data {
        FlatSamples::F32(v) => v.iter().take(pixels).map(|&h| height_from_f32(h)).collect(),
        FlatSamples::F16(v) => v.iter().take(pixels).map(|h| height_from_f32(h.to_f32())).collect(),
        FlatSamples::U32(_) => {
            return Err(InputError::Unsupported {
                path: path.into(),
                reason: "its height channel holds integers, not floating-point heights".into(),
            })
        }
    };
    if data.len() != pixels {
        return Err(InputError::Corrupt { path: path.into(), format: "OpenEXR", reason: "too few samples".into() });
    }
    Ok(InputHeights { width: width as u32, height: height as u32, data })
}

fn read_r16(
    mut file: impl Read,
    bytes: u64,
    path: &str,
    size: Option<(u32, u32)>,
    limits: &InputLimits,
) -> Result<InputHeights, InputError> {
    let (width, height) = match size {
        Some((w, h)) => {
            let expected = u64::from(w) * u64::from(h) * 2;
            if bytes != expected {
                return Err(InputError::R16Size {
                    path: path.into(),
                    bytes,
                    expected: format!("{w}x{h} × 2 = {expected} bytes"),
                });
            }
            (w, h)
        }
        None => {
            let samples = bytes / 2;
            let side = (samples as f64).sqrt().round() as u64;
            if !bytes.is_multiple_of(2) || side * side != samples || samples == 0 {
                return Err(InputError::R16Size {
                    path: path.into(),
                    bytes,
                    expected: "a square of 16-bit samples; give its size as FILE:WxH".into(),
                });
            }
            let side = u32::try_from(side).unwrap_or(u32::MAX);
            (side, side)
        }
    };
    check_size(path, u64::from(width), u64::from(height), limits)?;
    let mut raw = Vec::with_capacity(bytes as usize);
    file.read_to_end(&mut raw).map_err(|source| InputError::Io { path: path.into(), source })?;
    if raw.len() as u64 != bytes {
        return Err(InputError::Corrupt {
            path: path.into(),
            format: "R16",
            reason: "the file changed while read".into(),
        });
    }
    let data = raw.chunks_exact(2).map(|c| height_from_u16(u16::from_le_bytes([c[0], c[1]]))).collect();
    Ok(InputHeights { width, height, data })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_mappings_invert_the_writers() {
        for v in [0u16, 1, 32766, 32767, 32768, 65534] {
            let h = height_from_u16(v);
            assert_eq!(crate::quantize::to_u16(h), v, "{v}");
        }
        assert_eq!(height_from_u16(65535), 1.0);
        for v in 0..=255u8 {
            assert_eq!(crate::quantize::to_u8(height_from_u8(v)), v, "{v}");
        }
    }

    #[test]
    fn formats_are_told_by_their_first_bytes() {
        assert_eq!(InputFormat::sniff(b"\x89PNG\r\n\x1a\nxx"), InputFormat::Png);
        assert_eq!(InputFormat::sniff(b"II*\0"), InputFormat::Tiff);
        assert_eq!(InputFormat::sniff(b"MM\0*"), InputFormat::Tiff);
        assert_eq!(InputFormat::sniff(&[0x76, 0x2f, 0x31, 0x01, 2]), InputFormat::Exr);
        assert_eq!(InputFormat::sniff(b"\x01\x02"), InputFormat::R16);
        assert_eq!(InputFormat::sniff(b""), InputFormat::R16);
    }
}
