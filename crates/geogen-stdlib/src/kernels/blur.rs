//! Separable box blur, horizontal then vertical, with the original GeoGen's window: the output at
//! `x` averages the `2r + 1` inputs `[x − r + 1, x + r + 1]` on each axis (one pixel towards the
//! positive side of a centred window; measured on the original, see [`Window`]). Inputs beyond the
//! buffer edge repeat the edge pixel; the bounds rule makes sure that never touches a pixel anybody
//! needs.
//!
//! Why fixed point: a sliding-window sum is O(1) per pixel whatever the radius, but in floating
//! point its rounding depends on where the running sum started, i.e. on the buffer's extent, which
//! differs between tiles. Heights are therefore converted to exact 32.32 fixed point (`h × 2^32`,
//! truncated; exact for every f32 ≥ 2^-32 in magnitude), summed in `i64` (exact, so any starting
//! point and any split into bands gives the same sums), and each pass takes the truncated integer
//! average, like the original's integer arithmetic. The result is bit-identical for every tile
//! whose margins cover the window, and for every thread count.

use geogen_render::{HeightMap, HeightProfile, RenderError};
use rayon::prelude::*;

const FIXED_ONE: f64 = 4_294_967_296.0; // 2^32
/// Radii are capped so `(2r + 1) × 2^32` fits in `i64`; unreachable in practice, since a blur of
/// radius r needs a (2r)² buffer that the memory plan rejects long before.
const MAX_RADIUS: u64 = 1 << 29;
/// Rows per vertical-pass task.
const BAND_ROWS: usize = 32;

/// The blur window of radius `r` relative to the output pixel: `low` inputs before it and `high`
/// after it, `low + high + 1 = 2r + 1`. The original averages `[x − r + 1, x + r + 1]` (a raised
/// pixel at 20 blurred with r = 2 covers 17..21), so shapes move one pixel towards the origin; we
/// keep that so scripts keep their terrain.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Window {
    pub low: u64,
    pub high: u64,
}

impl Window {
    /// The original's window of radius `r` (empty for `r = 0`: no blur). Not capped: the bounds
    /// rule must ask for the whole window, and the memory plan refuses what cannot be allocated.
    pub fn of_radius(r: u64) -> Window {
        if r == 0 {
            Window { low: 0, high: 0 }
        } else {
            Window { low: r - 1, high: r.saturating_add(1) }
        }
    }

    fn len(self) -> i64 {
        self.low.saturating_add(self.high).saturating_add(1) as i64
    }

    fn is_identity(self) -> bool {
        self.low == 0 && self.high == 0
    }
}

#[inline]
fn to_fixed(h: f32) -> i64 {
    (f64::from(h) * FIXED_ONE) as i64
}

#[inline]
fn from_fixed(q: i64) -> f32 {
    (q as f64 / FIXED_ONE) as f32
}

/// Bytes of scratch the blur of a `pixels`-pixel map needs (the fixed-point intermediate).
pub fn scratch_bytes(pixels: u64) -> u64 {
    pixels.saturating_mul(8)
}

/// Sum of `at(clamp(k))` for `k` in `-low..=high`: the clamped window of the first output.
fn initial_window_sum(len: usize, window: Window, at: impl Fn(usize) -> i64) -> i64 {
    let last = len as i64 - 1;
    let mut sum = 0i64;
    // Inputs before index 0 all repeat index 0; those past the end repeat the last one.
    sum = sum.wrapping_add(at(0).wrapping_mul(window.low as i64 + 1));
    let direct = (window.high as i64).min(last);
    for k in 1..=direct {
        sum = sum.wrapping_add(at(k as usize));
    }
    let replicated = window.high as i64 - direct;
    sum.wrapping_add(at(last as usize).wrapping_mul(replicated))
}

/// Blurs one line in place into `out` (fixed point): `out[x]` = sum of the window at `x` / n.
fn blur_line(len: usize, window: Window, at: impl Fn(usize) -> i64, mut out: impl FnMut(usize, i64)) {
    let n = window.len();
    let last = len as i64 - 1;
    let mut sum = initial_window_sum(len, window, &at);
    for x in 0..len {
        out(x, sum / n);
        let add = (x as i64 + window.high as i64 + 1).min(last) as usize;
        let sub = (x as i64 - window.low as i64).max(0) as usize;
        sum = sum.wrapping_add(at(add)).wrapping_sub(at(sub));
    }
}

/// Blurs `map` in place with radius `r` (physical pixels). `r = 0` is a no-op.
pub fn box_blur(map: &mut HeightMap, r: u64) -> Result<(), RenderError> {
    let rect = map.rect();
    let window = Window::of_radius(r.min(MAX_RADIUS));
    if window.is_identity() || rect.is_empty() {
        return Ok(());
    }
    let (w, h) = (map.width(), map.height());
    let n = window.len();
    let mut inter: Vec<i64> = Vec::new();
    inter.try_reserve_exact(w * h).map_err(|_| RenderError::Allocation { bytes: scratch_bytes(rect.area()) })?;
    inter.resize(w * h, 0);

    // Horizontal pass: rows are independent.
    inter.par_chunks_mut(w).zip(map.data().par_chunks(w)).for_each(|(out, src)| {
        blur_line(w, window, |i| to_fixed(src[i]), |x, v| out[x] = v);
    });

    // Vertical pass: bands of rows, each with its own exact running column sums.
    let inter = &inter;
    let last = h as i64 - 1;
    map.data_mut().par_chunks_mut(w * BAND_ROWS).enumerate().for_each(|(band, out)| {
        let y0 = (band * BAND_ROWS) as i64;
        let row = |y: i64| {
            let y = y.clamp(0, last) as usize;
            &inter[y * w..(y + 1) * w]
        };
        let mut sums = vec![0i64; w];
        for k in -(window.low as i64)..=(window.high as i64) {
            for (s, &v) in sums.iter_mut().zip(row(y0 + k)) {
                *s = s.wrapping_add(v);
            }
        }
        for (i, out_row) in out.chunks_mut(w).enumerate() {
            let y = y0 + i as i64;
            for (o, &s) in out_row.iter_mut().zip(&sums) {
                *o = from_fixed(s / n);
            }
            let add = row(y + window.high as i64 + 1);
            let sub = row(y - window.low as i64);
            for ((s, &a), &b) in sums.iter_mut().zip(add).zip(sub) {
                *s = s.wrapping_add(a).wrapping_sub(b);
            }
        }
    });
    Ok(())
}

/// Blurs a profile in place with radius `r`, with the same window and arithmetic as the map blur.
pub fn box_blur_profile(profile: &mut HeightProfile, r: u64) {
    let window = Window::of_radius(r.min(MAX_RADIUS));
    let len = profile.data().len();
    if window.is_identity() || len == 0 {
        return;
    }
    let fixed: Vec<i64> = profile.data().iter().map(|&h| to_fixed(h)).collect();
    let data = profile.data_mut();
    blur_line(len, window, |i| fixed[i], |x, v| data[x] = from_fixed(v));
}

/// Blurs a line of `f64` values with a centred window `[x − r, x + r]`, clamped at the ends, and
/// divides by the window length (used for the smoothing of `Stratify`'s terrace profile).
pub fn blur_centred_f64(values: &[f64], r: usize) -> Vec<f64> {
    if r == 0 || values.is_empty() {
        return values.to_vec();
    }
    let last = values.len() as i64 - 1;
    let n = (2 * r + 1) as f64;
    (0..values.len() as i64)
        .map(|x| {
            let mut sum = 0.0;
            for k in x - r as i64..=x + r as i64 {
                sum += values[k.clamp(0, last) as usize];
            }
            sum / n
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use geogen_render::{Interval, Rect};

    #[test]
    fn a_raised_pixel_spreads_over_the_original_window() {
        // The original: a raised pixel at (20, 20) blurred with r = 2 covers rows and columns 17..21.
        let mut data = vec![0.0f32; 40 * 40];
        data[20 * 40 + 20] = 1.0;
        let mut m = HeightMap::from_data(Rect::new(0, 0, 40, 40), data).unwrap();
        box_blur(&mut m, 2).unwrap();
        let covered: Vec<i64> = (0..40).filter(|&x| m.get(x, 20).unwrap() > 0.0).collect();
        assert_eq!(covered, vec![17, 18, 19, 20, 21]);
        let rows: Vec<i64> = (0..40).filter(|&y| m.get(20, y).unwrap() > 0.0).collect();
        assert_eq!(rows, vec![17, 18, 19, 20, 21]);
        // The intermediate stays in fixed point between the passes.
        assert_eq!(m.get(19, 19), Some(from_fixed(to_fixed(1.0) / 5 / 5)));
    }

    #[test]
    fn blur_of_a_step_edge() {
        // One row: 0 0 0 1 1 1, radius 1: the window of x is [x, x + 2].
        let mut m = HeightMap::from_data(Rect::new(0, 0, 6, 1), vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0]).unwrap();
        box_blur(&mut m, 1).unwrap();
        let third = from_fixed(to_fixed(1.0) / 3);
        let two_thirds = from_fixed(2 * to_fixed(1.0) / 3);
        assert_eq!(m.data(), &[0.0, third, two_thirds, 1.0, 1.0, 1.0]);
    }

    #[test]
    fn blur_preserves_constants_and_large_radii_clamp() {
        let mut m = HeightMap::from_data(Rect::new(-3, 5, 4, 3), vec![0.25; 12]).unwrap();
        box_blur(&mut m, 100).unwrap();
        assert!(m.data().iter().all(|&v| v == 0.25));
    }

    #[test]
    fn vertical_pass_matches_horizontal_on_transpose_and_profiles_match_rows() {
        let col: Vec<f32> = (0..40).map(|i| ((i * 7919) % 13) as f32 / 13.0 - 0.5).collect();
        let mut v = HeightMap::from_data(Rect::new(0, 0, 1, 40), col.clone()).unwrap();
        let mut hm = HeightMap::from_data(Rect::new(0, 0, 40, 1), col.clone()).unwrap();
        let mut p = HeightProfile::from_data(Interval::new(0, 40), col).unwrap();
        box_blur(&mut v, 3).unwrap();
        box_blur(&mut hm, 3).unwrap();
        box_blur_profile(&mut p, 3);
        // A 1-wide column's horizontal pass is the identity, so both orientations agree exactly.
        assert_eq!(v.data(), hm.data());
        assert_eq!(p.data(), hm.data());
    }

    #[test]
    fn centred_f64_blur_keeps_constants() {
        assert_eq!(blur_centred_f64(&[2.0; 5], 2), vec![2.0; 5]);
        assert_eq!(blur_centred_f64(&[0.0, 3.0, 0.0], 1), vec![1.0, 1.0, 1.0]);
    }
}
