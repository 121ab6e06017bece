//! Separable box blur (window 2r + 1, clamp-to-edge at the buffer edge), horizontal then
//! vertical, as the original.
//!
//! Why fixed point: a sliding-window sum is O(1) per pixel, but in floating point its rounding
//! depends on where the running sum started, i.e. on the buffer's extent, which differs between
//! tiles. Heights are therefore converted to exact 32.32 fixed point (`h × 2^32`, truncated; exact
//! for every f32 ≥ 2^-32 in magnitude), summed in `i64` (exact, so any starting point and any split
//! into bands gives the same sums), and each pass takes the truncated integer average, like the
//! original's integer arithmetic. The result is then bit-identical for every tile whose margins
//! cover the window, and for every thread count.

use rayon::prelude::*;

use crate::error::RenderError;
use crate::raster::HeightMap;

const FIXED_ONE: f64 = 4_294_967_296.0; // 2^32
/// Radii are capped so `(2r + 1) × 2^32` fits in `i64`; unreachable in practice, since a blur of
/// radius r needs a (2r)² buffer that the memory plan rejects long before.
const MAX_RADIUS: u64 = 1 << 29;
/// Rows per vertical-pass task.
const BAND_ROWS: usize = 32;

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

/// Sum of `src[clamp(c + k)]` for `k` in `-r..=r`: the clamp-to-edge window at position `c = 0`.
fn initial_window_sum(len: usize, r: usize, at: impl Fn(usize) -> i64) -> i64 {
    let mut sum = at(0).wrapping_mul(r as i64 + 1);
    let direct = r.min(len - 1);
    for k in 1..=direct {
        sum = sum.wrapping_add(at(k));
    }
    let replicated = r - direct;
    sum.wrapping_add(at(len - 1).wrapping_mul(replicated as i64))
}

/// Blurs `map` in place with radius `r` (physical pixels). `r = 0` is a no-op.
pub fn box_blur(map: &mut HeightMap, r: u64) -> Result<(), RenderError> {
    let rect = map.rect();
    if r == 0 || rect.is_empty() {
        return Ok(());
    }
    let r = r.min(MAX_RADIUS) as usize;
    let (w, h) = (map.width(), map.height());
    let n = (2 * r + 1) as i64;
    let mut inter: Vec<i64> = Vec::new();
    inter.try_reserve_exact(w * h).map_err(|_| RenderError::Allocation { bytes: scratch_bytes(rect.area()) })?;
    inter.resize(w * h, 0);

    // Horizontal pass: rows are independent.
    inter.par_chunks_mut(w).zip(map.data().par_chunks(w)).for_each(|(out, src)| {
        let at = |i: usize| to_fixed(src[i]);
        let mut sum = initial_window_sum(w, r, at);
        for (x, o) in out.iter_mut().enumerate() {
            *o = sum / n;
            let add = (x + r + 1).min(w - 1);
            let sub = x.saturating_sub(r);
            sum = sum.wrapping_add(at(add)).wrapping_sub(at(sub));
        }
    });

    // Vertical pass: bands of rows, each with its own exact running column sums.
    let inter = &inter;
    map.data_mut().par_chunks_mut(w * BAND_ROWS).enumerate().for_each(|(band, out)| {
        let y0 = band * BAND_ROWS;
        let row = |y: usize| &inter[y * w..(y + 1) * w];
        let clamp_y = |y: i64| y.clamp(0, h as i64 - 1) as usize;
        let mut sums = vec![0i64; w];
        for k in -(r as i64)..=(r as i64) {
            // A band start may be far from the edges; the window is at most 2r+1 rows, clamped.
            for (s, &v) in sums.iter_mut().zip(row(clamp_y(y0 as i64 + k))) {
                *s = s.wrapping_add(v);
            }
        }
        for (i, out_row) in out.chunks_mut(w).enumerate() {
            let y = (y0 + i) as i64;
            for (o, &s) in out_row.iter_mut().zip(&sums) {
                *o = from_fixed(s / n);
            }
            let add = row(clamp_y(y + r as i64 + 1));
            let sub = row(clamp_y(y - r as i64));
            for ((s, &a), &b) in sums.iter_mut().zip(add).zip(sub) {
                *s = s.wrapping_add(a).wrapping_sub(b);
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Rect;

    #[test]
    fn blur_of_a_step_edge() {
        // One row: 0 0 0 1 1 1, radius 1 → averages over 3 with edge replication.
        let mut m = HeightMap::from_data(Rect::new(0, 0, 6, 1), vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0]).unwrap();
        box_blur(&mut m, 1).unwrap();
        let third = from_fixed(to_fixed(1.0) / 3);
        let two_thirds = from_fixed(2 * to_fixed(1.0) / 3);
        assert_eq!(m.data(), &[0.0, 0.0, third, two_thirds, 1.0, 1.0]);
        assert!((third - 1.0 / 3.0).abs() < 1e-6);
    }

    #[test]
    fn blur_preserves_constants_and_large_radii_clamp() {
        let mut m = HeightMap::from_data(Rect::new(-3, 5, 4, 3), vec![0.25; 12]).unwrap();
        box_blur(&mut m, 100).unwrap();
        assert!(m.data().iter().all(|&v| v == 0.25));
    }

    #[test]
    fn vertical_pass_matches_horizontal_on_transpose() {
        let col: Vec<f32> = (0..40).map(|i| ((i * 7919) % 13) as f32 / 13.0 - 0.5).collect();
        let mut v = HeightMap::from_data(Rect::new(0, 0, 1, 40), col.clone()).unwrap();
        let mut hm = HeightMap::from_data(Rect::new(0, 0, 40, 1), col).unwrap();
        box_blur(&mut v, 3).unwrap();
        box_blur(&mut hm, 3).unwrap();
        // A 1-wide column's horizontal pass is the identity, so both orientations agree exactly.
        assert_eq!(v.data(), hm.data());
    }
}
