//! Bilinear sampling of a map at a real-valued physical position, as the original's
//! `HeightMap::operator()(double, double)` does it (reference §4.7): floor and ceil per axis, linear
//! interpolation between them, and fractions below 0.00005 snap to the floor. Used by `Distort`
//! and the transforms (`Transform`, `Rotate`, `Shear`, `Flip`, `Rescale`).
//!
//! Interpolation is `a + (b − a) × t` in f64, so equal neighbours give exactly their value (conflux
//! selects exact heights after distorting with `CropHeights(1, 1, 0)`), and `t = 0` gives `a`.
//!
//! Positions outside the map's extent are clamped to its edge. A bounds rule that is right never
//! lets a pixel anybody needs read there; the clamp only keeps pixels nobody needs from panicking.

use geogen_render::{HeightMap, Rect, RenderError};

/// Fractions below this snap to the floor (the original's threshold).
pub const SNAP: f64 = 0.00005;

/// The two neighbouring indexes (relative to the extent's start, clamped into it) and the fraction
/// along one axis. `len` ≥ 1.
#[inline]
fn axis(c: f64, start: i64, len: u64) -> (usize, usize, f64) {
    // floor(c) by truncation and correction: exact for |c| < 2^63 (beyond, `as` saturates and the
    // clamp below gives the same index); NaN becomes 0 with a NaN fraction.
    let truncated = c as i64;
    let floor = if (truncated as f64) > c { truncated.saturating_sub(1) } else { truncated };
    let t = c - floor as f64;
    let last = (len - 1).min(i64::MAX as u64) as i64;
    let index = |i: i64| i.saturating_sub(start).clamp(0, last) as usize;
    if (SNAP..1.0).contains(&t) {
        (index(floor), index(floor.saturating_add(1)), t)
    } else {
        // Also taken for NaN fractions, and for the meaningless ones of positions beyond 2^63.
        (index(floor), index(floor), 0.0)
    }
}

/// `a + (b − a) × t`, or exactly `a` for `t = 0`. Both are computed and one is selected, with no
/// branch: the fractions of a rotation's samples are unpredictable.
#[inline(always)]
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let mixed = a + (b - a) * t;
    if t == 0.0 {
        a
    } else {
        mixed
    }
}

/// [`axis`] for positions whose floor is within ±2^52 and extents within ±2^60 (everything a
/// render meets); the same indexes and fraction without the saturating arithmetic.
#[inline(always)]
fn axis_near(c: f64, start: i64, last: i64) -> (usize, usize, f64) {
    let truncated = c as i64;
    let floor = if (truncated as f64) > c { truncated - 1 } else { truncated };
    let t = c - floor as f64;
    let i0 = (floor - start).clamp(0, last) as usize;
    let snapped = !(SNAP..1.0).contains(&t);
    let i1 = if snapped { i0 } else { (floor + 1 - start).clamp(0, last) as usize };
    (i0, i1, if snapped { 0.0 } else { t })
}

/// The bilinear sample of `map` at the physical position `(x, y)`; 0 for an empty map.
#[inline(always)]
pub fn bilinear(map: &HeightMap, x: f64, y: f64) -> f32 {
    let r = map.rect();
    if r.is_empty() {
        return 0.0;
    }
    const NEAR: f64 = 4_503_599_627_370_496.0; // 2^52
    const EXTENT: i64 = 1 << 60;
    let near = x.abs() < NEAR && y.abs() < NEAR && r.x.abs() < EXTENT && r.y.abs() < EXTENT;
    let ((x0, x1, tx), (y0, y1, ty)) = if near && r.width < EXTENT as u64 && r.height < EXTENT as u64 {
        (axis_near(x, r.x, r.width as i64 - 1), axis_near(y, r.y, r.height as i64 - 1))
    } else {
        (axis(x, r.x, r.width), axis(y, r.y, r.height))
    };
    let (w, data) = (map.width(), map.data());
    let at = |xi: usize, yi: usize| f64::from(data[yi * w + xi]);
    let top = lerp(at(x0, y0), at(x1, y0), tx);
    // A branch, not a select: ty is 0 on every row of an unscaled axis (Rescale(3, 1)), and then
    // the second row is not read at all.
    let value = if ty == 0.0 { top } else { lerp(top, lerp(at(x0, y1), at(x1, y1), tx), ty) };
    value as f32
}

/// A new map over `rect` whose pixel `(px, py)` is the bilinear sample of `source` at
/// `position(px, py)` (rows in parallel). `position` must be a pure function of the absolute pixel
/// coordinates, which is what makes the result the same in every tile.
pub fn resample(
    source: &HeightMap,
    rect: Rect,
    position: impl Fn(i64, i64) -> (f64, f64) + Sync + Send,
) -> Result<HeightMap, RenderError> {
    let mut out = HeightMap::try_zeroed(rect)?;
    // Blocks of BLOCK_COLUMNS columns by a band's rows: a rotation's source positions for a row
    // run across many source rows, so row by row nearly every pixel would load a cache line of
    // its own; a block's sources lie in a small patch that stays in cache while the block is
    // filled. Every pixel is still computed alone, from its own coordinates.
    let block = |py0: i64, x0: i64, band: &mut [f32]| {
        let width = rect.width as usize;
        for bx in (0..width).step_by(BLOCK_COLUMNS) {
            let end = (bx + BLOCK_COLUMNS).min(width);
            for (r, row) in band.chunks_mut(width).enumerate() {
                let py = py0 + r as i64;
                for (i, h) in row[bx..end].iter_mut().enumerate() {
                    let (sx, sy) = position(x0 + (bx + i) as i64, py);
                    *h = bilinear(source, sx, sy);
                }
            }
        }
    };
    for_each_band_of(&mut out, BLOCK_ROWS, block);
    Ok(out)
}

/// Columns and rows of the blocks [`resample`] fills one at a time.
const BLOCK_COLUMNS: usize = 64;
const BLOCK_ROWS: usize = 32;

/// Calls `f(absolute_y, absolute_x, band)` for bands of `rows` whole rows, in parallel (serially,
/// one band per call, in the engine's serial mode).
fn for_each_band_of(map: &mut HeightMap, rows: usize, f: impl Fn(i64, i64, &mut [f32]) + Sync + Send) {
    use rayon::prelude::*;
    let rect = map.rect();
    if rect.is_empty() {
        return;
    }
    let width = map.width();
    if geogen_render::kernels::in_serial_mode() {
        for (i, band) in map.data_mut().chunks_mut(width * rows).enumerate() {
            f(rect.y + (i * rows) as i64, rect.x, band);
        }
        return;
    }
    map.data_mut()
        .par_chunks_mut(width * rows)
        .enumerate()
        .for_each(|(i, band)| f(rect.y + (i * rows) as i64, rect.x, band));
}

/// The pixel rectangle covering the real interval `[lo, hi]` on each axis plus `margin` pixels
/// (the bounds of what a sampler reads: floor and ceil of the extremes, and a margin so rounding
/// differences between the bounds computation and the kernel never matter). Non-finite or huge
/// values are clamped far out, where the memory plan rejects them instead of anything overflowing.
pub fn covering_rect(xs: (f64, f64), ys: (f64, f64), margin: i64) -> Rect {
    const FAR: f64 = (1u64 << 60) as f64;
    let clamp = |v: f64| if v.is_nan() { 0 } else { v.clamp(-FAR, FAR) as i64 };
    let lo = |v: f64| clamp(libm::floor(v)) - margin;
    let hi = |v: f64| clamp(libm::ceil(v)) + margin;
    Rect::from_corners((lo(xs.0.min(xs.1)), lo(ys.0.min(ys.1))), (hi(xs.0.max(xs.1)), hi(ys.0.max(ys.1))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map() -> HeightMap {
        // Columns 10, 11, 12 and rows -1, 0.
        HeightMap::from_data(Rect::new(10, -1, 3, 2), vec![0.0, 0.5, 0.5, 1.0, -1.0, 0.5]).unwrap()
    }

    #[test]
    fn interpolates_between_the_four_neighbours() {
        let m = map();
        assert_eq!(bilinear(&m, 10.0, -1.0), 0.0);
        assert_eq!(bilinear(&m, 10.5, -1.0), 0.25);
        assert_eq!(bilinear(&m, 10.0, -0.5), 0.5);
        assert_eq!(bilinear(&m, 10.5, -0.5), 0.125);
        // Equal neighbours give exactly their value whatever the fraction.
        assert_eq!(bilinear(&m, 11.3, -1.0), 0.5);
    }

    #[test]
    fn small_fractions_snap_to_the_floor_and_edges_clamp() {
        let m = map();
        assert_eq!(bilinear(&m, 10.00004, -1.0), 0.0);
        assert!(bilinear(&m, 10.00006, -1.0) > 0.0);
        assert_eq!(bilinear(&m, 50.0, 7.0), 0.5);
        assert!(bilinear(&m, -1e300, f64::NAN).is_finite());
        assert_eq!(bilinear(&HeightMap::empty(), 0.0, 0.0), 0.0);
    }

    /// The bilinear sample written as the original kernel had it (branches, saturating axis),
    /// against the one in use, at positions inside, between, around and far outside a map.
    #[test]
    fn bilinear_equals_the_plain_definition() {
        fn plain(map: &HeightMap, x: f64, y: f64) -> f32 {
            let r = map.rect();
            let (x0, x1, tx) = axis(x, r.x, r.width);
            let (y0, y1, ty) = axis(y, r.y, r.height);
            let at = |xi: usize, yi: usize| f64::from(map.data()[yi * map.width() + xi]);
            let lerp = |a: f64, b: f64, t: f64| if t == 0.0 { a } else { a + (b - a) * t };
            let top = lerp(at(x0, y0), at(x1, y0), tx);
            let value = if ty == 0.0 { top } else { lerp(top, lerp(at(x0, y1), at(x1, y1), tx), ty) };
            value as f32
        }
        let rect = Rect::new(-5, 7, 9, 6);
        let data: Vec<f32> = (0..54u32)
            .map(|k| match k % 7 {
                0 => -0.0,
                1 => 0.0,
                2 => f32::INFINITY,
                _ => geogen_random::hash1(k) as f32 / u32::MAX as f32 - 0.5,
            })
            .collect();
        let finite: Vec<f32> = data.iter().map(|&v| if v.is_finite() { v } else { 0.75 }).collect();
        let mut x = 3u32;
        let mut positions =
            vec![(-5.0, 7.0), (3.0, 12.0), (-0.0, 9.5), (1e300, -1e300), (f64::NAN, 8.0), (2.5e15, 9.0)];
        for _ in 0..20000 {
            x = geogen_random::hash1(x);
            let y = geogen_random::hash1(x ^ 0x77);
            let u = f64::from(x) / f64::from(u32::MAX);
            let v = f64::from(y) / f64::from(u32::MAX);
            positions.push((u * 16.0 - 9.0, v * 12.0 + 3.0));
            positions.push((f64::from(x % 12) - 6.0 + 0.00004 * u, f64::from(y % 8) + 7.0));
        }
        for values in [data, finite] {
            let map = HeightMap::from_data(rect, values).unwrap();
            for &(px, py) in &positions {
                assert_eq!(bilinear(&map, px, py).to_bits(), plain(&map, px, py).to_bits(), "({px}, {py})");
            }
        }
    }

    #[test]
    fn covering_rect_rounds_outward_and_never_overflows() {
        assert_eq!(covering_rect((0.5, 2.0), (-1.5, -1.5), 1), Rect::from_corners((-1, -3), (3, 0)));
        let huge = covering_rect((f64::NEG_INFINITY, f64::INFINITY), (f64::NAN, 1e300), 1);
        assert!(!huge.is_empty());
    }
}
