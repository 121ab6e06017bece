//! What picogen's `mkheightmap` computes and writes (spec height-slang §1.5), with its two
//! defects fixed:
//!
//! * **Mapping.** Sub-sample `(i, j)`, `i < W·a`, `j < H·a`, is evaluated at
//!   `x = S·i/(W·a)`, `y = S·j/(W·a)` (both axes divide by the width: square pixels; samples on
//!   pixel corners). A pixel is the mean of its `a²` sub-samples (summed sub-row by sub-row, left
//!   to right, then divided by `a²`). `j` counts from the **bottom** of the image: y is up.
//! * **Non-square images**: the original flipped rows with the width and read outside its buffer
//!   (or crashed) when W ≠ H; here row `r` from the top is `j`-row `H − 1 − r`, for any W and H.
//! * **Normalisation** (`-n`): `(h − min)/(max − min)` over the finite values, giving [0, 1]; a
//!   constant map (the original divided 0 by 0: every pixel NaN) normalises to 0; NaN stays NaN
//!   and ±∞ become ±∞ (the exports clamp them to 1 and 0).
//! * **Info**: `info:min..max:<min>..<max>`, `%g` with 6 digits, over the finite values (`nan..nan`
//!   if there are none).
//! * **Exports** clamp to [0, 1] (NaN is kept): text is `width:W\nheight:H\nvalues:` and `%f `
//!   per value, rows top to bottom, no final newline; BMP is 24-bit, grey `trunc(255·h)` (NaN is
//!   black).

use rayon::prelude::*;

use crate::eval::{EvalError, Program};
use crate::format::{c_fixed6, c_general6};

/// Image size, anti-aliasing and domain, as mkheightmap's `-w -h -a -W`.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub width: u32,
    pub height: u32,
    /// Sub-samples per pixel side (≥ 1).
    pub antialias: u32,
    /// The coordinate scale S (`-W`): x runs over [0, S) across the width.
    pub domain: f64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings { width: 512, height: 512, antialias: 1, domain: 1.0 }
    }
}

/// Largest image (pixels) and anti-aliasing accepted: the image is held as `f64` (8 bytes per
/// pixel), and each pixel costs `a²` evaluations.
pub const MAX_PIXELS: u64 = 1 << 26;
pub const MAX_ANTIALIAS: u32 = 64;
/// Sub-samples in one row (W·a; each rendering task holds a row of them) and in the whole image
/// (W·H·a², the evaluations).
pub const MAX_ROW_SAMPLES: u64 = 1 << 22;
pub const MAX_SAMPLES: u64 = 1 << 32;

/// The computed image: rows from the top of the picture (the largest y first).
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub values: Vec<f64>,
}

/// An evaluation error at a sub-sample.
#[derive(Clone, Debug, PartialEq)]
pub struct PointError {
    pub x: f64,
    pub y: f64,
    pub error: EvalError,
}

/// Checks the settings (the original accepted any, and crashed on some).
pub fn check(settings: &Settings) -> Result<(), String> {
    if settings.width == 0 || settings.height == 0 {
        return Err("the width and height must be at least 1".into());
    }
    let pixels = u64::from(settings.width) * u64::from(settings.height);
    if pixels > MAX_PIXELS {
        return Err(format!(
            "{}x{} is {pixels} pixels, more than the limit of {MAX_PIXELS}",
            settings.width, settings.height
        ));
    }
    if settings.antialias == 0 || settings.antialias > MAX_ANTIALIAS {
        return Err(format!("the anti-aliasing must be from 1 to {MAX_ANTIALIAS}, not {}", settings.antialias));
    }
    let row = u64::from(settings.width) * u64::from(settings.antialias);
    if row > MAX_ROW_SAMPLES {
        return Err(format!(
            "{} pixels wide with {}x{} anti-aliasing is {row} samples per row, more than the limit of {MAX_ROW_SAMPLES}",
            settings.width, settings.antialias, settings.antialias
        ));
    }
    if pixels.saturating_mul(u64::from(settings.antialias) * u64::from(settings.antialias)) > MAX_SAMPLES {
        return Err(format!("the image and anti-aliasing need more than {MAX_SAMPLES} evaluations"));
    }
    if !settings.domain.is_finite() {
        return Err("the domain width must be a finite number".into());
    }
    Ok(())
}

/// Evaluates the program over the image, rows in parallel. An error is reported at the first
/// failing sub-sample in image order (so the same one whatever the thread count).
pub fn render(program: &Program, settings: &Settings) -> Result<Image, PointError> {
    let (w, h, a) = (settings.width as usize, settings.height as usize, settings.antialias as usize);
    let samples_per_row = w * a;
    let denominator = (u64::from(settings.width) * u64::from(settings.antialias)) as f64;
    let domain = settings.domain;
    let xs: Vec<f64> = (0..samples_per_row).map(|i| domain * i as f64 / denominator).collect();
    let mut values = vec![0.0f64; w * h];
    let errors: Vec<Option<PointError>> = values
        .par_chunks_mut(w)
        .enumerate()
        .map(|(row, pixels)| {
            let mut ws = program.workspace();
            let mut samples = vec![0.0f64; samples_per_row];
            let from_bottom = h - 1 - row;
            for dj in 0..a {
                let j = from_bottom * a + dj;
                let y = domain * j as f64 / denominator;
                if let Err(error) = program.eval_row(&xs, y, &mut samples, &mut ws) {
                    let x = failing_x(program, &xs, y).unwrap_or(0.0);
                    return Some(PointError { x, y, error });
                }
                for (px, pixel) in pixels.iter_mut().enumerate() {
                    let cell = &samples[px * a..px * a + a];
                    for (di, &v) in cell.iter().enumerate() {
                        // The first sample starts the sum (0 + v would turn −0 into +0).
                        *pixel = if dj == 0 && di == 0 { v } else { *pixel + v };
                    }
                }
            }
            if a > 1 {
                let count = (a * a) as f64;
                for pixel in pixels.iter_mut() {
                    *pixel /= count;
                }
            }
            None
        })
        .collect();
    if let Some(error) = errors.into_iter().flatten().next() {
        return Err(error);
    }
    Ok(Image { width: settings.width, height: settings.height, values })
}

/// The first x of a row whose evaluation fails (for the message).
fn failing_x(program: &Program, xs: &[f64], y: f64) -> Option<f64> {
    xs.iter().copied().find(|&x| program.eval_point(&[x, y]).is_err())
}

/// The smallest and largest finite values.
pub fn finite_range(values: &[f64]) -> Option<(f64, f64)> {
    values.iter().copied().filter(|v| v.is_finite()).fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((if v < lo { v } else { lo }, if v > hi { v } else { hi })),
    })
}

/// `-n`: maps the finite range onto [0, 1] (a constant map onto 0).
pub fn normalize(image: &mut Image) {
    let Some((lo, hi)) = finite_range(&image.values) else { return };
    let range = hi - lo;
    for v in image.values.iter_mut() {
        if range > 0.0 && range.is_finite() {
            *v = (*v - lo) / range;
        } else if v.is_finite() {
            *v = 0.0;
        }
    }
}

/// `-i`: `info:min..max:<min>..<max>`.
pub fn info_line(image: &Image) -> String {
    match finite_range(&image.values) {
        Some((lo, hi)) => format!("info:min..max:{}..{}", c_general6(lo), c_general6(hi)),
        None => "info:min..max:nan..nan".into(),
    }
}

/// The exports' clamp to [0, 1]; NaN passes (as in the original).
fn clamp01(v: f64) -> f64 {
    v.clamp(0.0, 1.0)
}

/// `-Et`: the text export.
pub fn text_export(image: &Image) -> String {
    let mut out = format!("width:{}\nheight:{}\nvalues:", image.width, image.height);
    out.reserve(image.values.len() * 9);
    for &v in &image.values {
        out.push_str(&c_fixed6(clamp01(v)));
        out.push(' ');
    }
    out
}

/// `-Ebmp`: a 24-bit BMP (rows stored bottom-up as BMP does), grey `trunc(255·h)`.
pub fn bmp_export(image: &Image) -> Vec<u8> {
    let (w, h) = (image.width as usize, image.height as usize);
    let row_bytes = (w * 3).div_ceil(4) * 4;
    let data_size = row_bytes * h;
    let file_size = 54 + data_size;
    let mut out = Vec::with_capacity(file_size);
    out.extend_from_slice(b"BM");
    out.extend_from_slice(&(file_size as u32).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&54u32.to_le_bytes());
    out.extend_from_slice(&40u32.to_le_bytes());
    out.extend_from_slice(&(w as i32).to_le_bytes());
    out.extend_from_slice(&(h as i32).to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&24u16.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(data_size as u32).to_le_bytes());
    out.extend_from_slice(&2835u32.to_le_bytes());
    out.extend_from_slice(&2835u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    for row in (0..h).rev() {
        let start = out.len();
        for &v in &image.values[row * w..row * w + w] {
            let v = clamp01(v);
            let grey = if v.is_nan() { 0 } else { (255.0 * v) as u8 };
            out.extend_from_slice(&[grey, grey, grey]);
        }
        out.resize(start + row_bytes, 0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{compile, Options};

    fn image(program: &str, settings: Settings) -> Image {
        let program = compile(program, &Options::default()).unwrap();
        render(&program, &settings).unwrap()
    }

    #[test]
    fn antialiasing_averages_corner_samples() {
        let img = image("x", Settings { width: 4, height: 1, antialias: 2, domain: 1.0 });
        assert_eq!(img.values, [0.0625, 0.3125, 0.5625, 0.8125]);
    }

    #[test]
    fn y_is_up_and_divided_by_the_width() {
        // 2 wide, 3 high: rows from the top are y = 2/2, 1/2, 0/2.
        let img = image("y", Settings { width: 2, height: 3, antialias: 1, domain: 1.0 });
        assert_eq!(img.values, [1.0, 1.0, 0.5, 0.5, 0.0, 0.0]);
        let img = image("x", Settings { width: 4, height: 1, antialias: 1, domain: 2.0 });
        assert_eq!(img.values, [0.0, 0.5, 1.0, 1.5]);
    }

    #[test]
    fn normalisation_and_the_constant_map() {
        let mut img = image("x", Settings { width: 4, height: 2, antialias: 1, domain: 1.0 });
        normalize(&mut img);
        assert_eq!(&img.values[..4], &[0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0]);
        let mut flat = image("0.7", Settings { width: 2, height: 2, antialias: 1, domain: 1.0 });
        normalize(&mut flat);
        assert_eq!(flat.values, [0.0; 4]);
        assert_eq!(info_line(&flat), "info:min..max:0..0");
    }

    #[test]
    fn huge_requests_are_refused_before_any_work() {
        let ok = Settings { width: 512, height: 512, antialias: 4, domain: 1.0 };
        assert_eq!(check(&ok), Ok(()));
        for bad in [
            Settings { width: 0, ..ok.clone() },
            Settings { width: 1 << 20, height: 1 << 20, ..ok.clone() },
            Settings { antialias: 0, ..ok.clone() },
            Settings { antialias: 65, ..ok.clone() },
            Settings { width: 1 << 20, height: 1, antialias: 64, ..ok.clone() },
            Settings { width: 8192, height: 8192, antialias: 64, ..ok.clone() },
            Settings { domain: f64::NAN, ..ok.clone() },
        ] {
            assert!(check(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn exports() {
        let img = Image { width: 2, height: 1, values: vec![-0.5, f64::NAN] };
        assert_eq!(text_export(&img), "width:2\nheight:1\nvalues:0.000000 nan ");
        let img = Image { width: 2, height: 2, values: vec![1.0, 0.5, 0.0, 2.0] };
        let bmp = bmp_export(&img);
        assert_eq!(&bmp[..2], b"BM");
        assert_eq!(bmp.len(), 54 + 2 * 8);
        // Bottom row first: 0.0 → 0, 2.0 → 255; then the top row: 255, trunc(127.5) = 127.
        assert_eq!(&bmp[54..62], &[0, 0, 0, 255, 255, 255, 0, 0]);
        assert_eq!(&bmp[62..70], &[255, 255, 255, 127, 127, 127, 0, 0]);
    }
}
