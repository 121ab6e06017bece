//! Labels drawn on the colored preview, with the bundled Spleen 8×16 bitmap font
//! (`fonts/spleen-8x16.psfu`, BSD-2-Clause, `fonts/LICENSE-spleen.txt`).
//!
//! A label is a point in the pixels of the image and a text. Its point gets a small dark marker
//! with a light rim; its text is centred above it, dark on a light halo so that it reads on water
//! and on snow. A label of kind `title` is drawn twice as large, centred on its point, without a
//! marker (at the normal size when twice as large would not fit the image's width). Characters the
//! font lacks are drawn as `?`. Everything outside the image is clipped: a label near an edge is
//! cut, never moved.

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use crate::error::IoError;
use crate::{check_field, palette, Format, HeightField};

/// A label in the pixel coordinates of one image.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PixelLabel<'a> {
    pub x: f64,
    pub y: f64,
    pub text: &'a str,
    pub kind: &'a str,
}

const FONT: &[u8] = include_bytes!("../fonts/spleen-8x16.psfu");
const GLYPH_WIDTH: usize = 8;
const GLYPH_HEIGHT: usize = 16;

const INK: [u8; 3] = [20, 20, 24];
const HALO: [u8; 3] = [250, 248, 240];

struct Font {
    glyphs: &'static [u8],
    by_char: HashMap<char, usize>,
}

/// The PSF1 font: a 4-byte header (magic 0x36 0x04, mode, bytes per glyph), the glyphs, then for
/// each glyph the UTF-16 code units it stands for, each list ended by 0xFFFF.
fn font() -> &'static Font {
    static FONT_CELL: OnceLock<Font> = OnceLock::new();
    FONT_CELL.get_or_init(|| {
        let mode = FONT[2];
        let count = if mode & 1 == 1 { 512 } else { 256 };
        let size = usize::from(FONT[3]);
        let glyphs = &FONT[4..4 + count * size];
        let table = &FONT[4 + count * size..];
        let mut by_char = HashMap::new();
        let mut glyph = 0usize;
        let mut in_sequence = false;
        for unit in table.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])) {
            match unit {
                0xFFFF => {
                    glyph += 1;
                    in_sequence = false;
                }
                0xFFFE => in_sequence = true,
                _ if !in_sequence => {
                    if let Some(c) = char::from_u32(u32::from(unit)) {
                        by_char.entry(c).or_insert(glyph);
                    }
                }
                _ => {}
            }
        }
        Font { glyphs, by_char }
    })
}

fn glyph(c: char) -> &'static [u8] {
    let font = font();
    let index = font.by_char.get(&c).or_else(|| font.by_char.get(&'?')).copied().unwrap_or(0);
    &font.glyphs[index * GLYPH_HEIGHT..(index + 1) * GLYPH_HEIGHT]
}

/// An RGB image being drawn on.
struct Canvas<'a> {
    rgb: &'a mut [u8],
    width: i64,
    height: i64,
}

impl Canvas<'_> {
    fn set(&mut self, x: i64, y: i64, color: [u8; 3]) {
        if x < 0 || y < 0 || x >= self.width || y >= self.height {
            return;
        }
        let i = ((y * self.width + x) * 3) as usize;
        self.rgb[i..i + 3].copy_from_slice(&color);
    }

    /// The pixels of `text` at `scale`, top-left at (left, top), in one color.
    fn text(&mut self, text: &str, left: i64, top: i64, scale: i64, color: [u8; 3]) {
        for (i, c) in text.chars().enumerate() {
            let x0 = left + i as i64 * GLYPH_WIDTH as i64 * scale;
            if x0 >= self.width {
                break;
            }
            for (row, bits) in glyph(c).iter().enumerate() {
                for col in 0..GLYPH_WIDTH {
                    if bits & (0x80 >> col) != 0 {
                        for dy in 0..scale {
                            for dx in 0..scale {
                                self.set(x0 + col as i64 * scale + dx, top + row as i64 * scale + dy, color);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Labels drawn at most per image, and characters per label: a preview stays a preview.
const MAX_LABELS: usize = 10_000;
const MAX_CHARS: usize = 200;

/// Draws the labels onto `rgb` (`width × height` pixels, 3 bytes each).
pub fn draw_labels(rgb: &mut [u8], width: u32, height: u32, labels: &[PixelLabel<'_>]) {
    let mut canvas = Canvas { rgb, width: i64::from(width), height: i64::from(height) };
    for label in labels.iter().take(MAX_LABELS) {
        if !(label.x.is_finite() && label.y.is_finite()) {
            continue;
        }
        let (x, y) = (label.x.floor() as i64, label.y.floor() as i64);
        let text: String = label.text.chars().filter(|c| !c.is_control()).take(MAX_CHARS).collect();
        let chars = text.chars().count() as i64;
        let title = label.kind == "title";
        let fits_twice = chars * GLYPH_WIDTH as i64 * 2 <= i64::from(width);
        let scale = if title && fits_twice { 2 } else { 1 };
        let text_width = chars * GLYPH_WIDTH as i64 * scale;
        let text_height = GLYPH_HEIGHT as i64 * scale;
        let left = x - text_width / 2;
        let top = if title { y - text_height / 2 } else { y - 3 - text_height };
        if !title {
            for dy in -2..=2 {
                for dx in -2..=2 {
                    let rim = dx * dx == 4 || dy * dy == 4;
                    canvas.set(x + dx, y + dy, if rim { HALO } else { INK });
                }
            }
        }
        for (dx, dy) in [(-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (1, -1), (-1, 1), (1, 1)] {
            canvas.text(&text, left + dx, top + dy, scale, HALO);
        }
        canvas.text(&text, left, top, scale, INK);
    }
}

/// The colored preview of `field` with `labels` drawn on it, as RGB bytes.
pub fn colored_with_labels(field: &HeightField<'_>, labels: &[PixelLabel<'_>]) -> Vec<u8> {
    let mut rgb = vec![0u8; field.data.len() * 3];
    palette::colors(field.data, &mut rgb);
    draw_labels(&mut rgb, field.width, field.height, labels);
    rgb
}

/// The colored preview with labels, staged to take `path` (a PNG, like [`Format::Colored`]); see
/// [`publish`](crate::publish).
pub fn stage_colored_with_labels(
    field: &HeightField<'_>,
    labels: &[PixelLabel<'_>],
    path: impl AsRef<Path>,
) -> Result<crate::StagedFile, IoError> {
    let path = path.as_ref();
    let format = Format::Colored;
    check_field(format, field).map_err(|source| IoError::Field { path: Some(path.to_path_buf()), source })?;
    let rgb = colored_with_labels(field, labels);
    let encode_error =
        |e: png::EncodingError| IoError::Encode { path: Some(path.to_path_buf()), format, source: Box::new(e) };
    let mut bytes = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut bytes, field.width, field.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(encode_error)?;
        writer.write_image_data(&rgb).map_err(encode_error)?;
        writer.finish().map_err(encode_error)?;
    }
    crate::stage_bytes(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_font_covers_latin_1_and_more() {
        let font = font();
        for c in "AZaz09?'éÆßŁž".chars() {
            assert!(font.by_char.contains_key(&c), "{c}");
        }
        // 'A' has ink; a space has none.
        assert!(glyph('A').iter().any(|&b| b != 0));
        assert!(glyph(' ').iter().all(|&b| b == 0));
        assert_eq!(glyph('\u{4e00}'), glyph('?'));
    }

    #[test]
    fn labels_are_drawn_clipped_and_deterministic() {
        let data = vec![0.2f32; 64 * 32];
        let field = HeightField::new(64, 32, &data).unwrap();
        let plain = colored_with_labels(&field, &[]);
        let labels = [
            PixelLabel { x: 32.0, y: 28.0, text: "Ab", kind: "peak" },
            // Mostly outside: clipped, not moved, and no panic.
            PixelLabel { x: -3.0, y: 40.0, text: "Far away", kind: "river" },
            PixelLabel { x: f64::NAN, y: 1.0, text: "x", kind: "river" },
        ];
        let drawn = colored_with_labels(&field, &labels);
        assert_eq!(drawn, colored_with_labels(&field, &labels));
        assert_ne!(drawn, plain);
        // The marker's centre is ink.
        let at = |x: usize, y: usize| &drawn[(y * 64 + x) * 3..(y * 64 + x) * 3 + 3];
        assert_eq!(at(32, 28), INK);
        // Far from any label nothing changed.
        assert_eq!(at(2, 2), &plain[(2 * 64 + 2) * 3..(2 * 64 + 2) * 3 + 3]);
    }
}
