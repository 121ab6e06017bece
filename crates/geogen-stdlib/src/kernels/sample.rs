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

use geogen_render::kernels::for_each_row;
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

#[inline]
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    if t == 0.0 {
        a
    } else {
        a + (b - a) * t
    }
}

/// The bilinear sample of `map` at the physical position `(x, y)`; 0 for an empty map.
#[inline]
pub fn bilinear(map: &HeightMap, x: f64, y: f64) -> f32 {
    let r = map.rect();
    if r.is_empty() {
        return 0.0;
    }
    let (x0, x1, tx) = axis(x, r.x, r.width);
    let (y0, y1, ty) = axis(y, r.y, r.height);
    let (w, data) = (map.width(), map.data());
    let at = |xi: usize, yi: usize| f64::from(data[yi * w + xi]);
    let top = lerp(at(x0, y0), at(x1, y0), tx);
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
    for_each_row(&mut out, |py, x0, row| {
        for (i, h) in row.iter_mut().enumerate() {
            let (sx, sy) = position(x0 + i as i64, py);
            *h = bilinear(source, sx, sy);
        }
    });
    Ok(out)
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

    #[test]
    fn covering_rect_rounds_outward_and_never_overflows() {
        assert_eq!(covering_rect((0.5, 2.0), (-1.5, -1.5), 1), Rect::from_corners((-1, -3), (3, 0)));
        let huge = covering_rect((f64::NEG_INFINITY, f64::INFINITY), (f64::NAN, 1e300), 1);
        assert!(!huge.is_empty());
    }
}
