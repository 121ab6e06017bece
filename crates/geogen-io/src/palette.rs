//! The water/land palette of the colored preview.
//!
//! Heights at or below 0 are water, shading from deep blue at -1 to light blue at the shore (0 counts
//! as water's top, as in the original). Heights above 0 are land: green at the shore, yellow-green,
//! ochre around 0.5, brown, grey rock and white at 1. Between anchors the colour is interpolated
//! linearly per channel and rounded; the only discontinuity is the coastline between 0 and the first
//! land height, which is what makes the shore readable.
//!
//! The anchors echo the original's 512-entry palette ((0, 18, 38) deep water, (108, 205, 255) shallow
//! water, (31, 152, 69) shore, (238, 170, 70) mid land, white peaks); the stops in between are ours.

/// An 8-bit RGB colour.
pub type Rgb = [u8; 3];

/// Water anchors, ascending in height, from -1 to 0 inclusive.
pub const WATER: [(f32, Rgb); 3] = [(-1.0, [0, 18, 38]), (-0.5, [24, 92, 170]), (0.0, [108, 205, 255])];

/// Land anchors, ascending in height, from just above 0 to 1. The first applies to any positive height
/// below the second.
pub const LAND: [(f32, Rgb); 6] = [
    (0.0, [31, 152, 69]),
    (0.25, [150, 184, 76]),
    (0.5, [238, 170, 70]),
    (0.7, [168, 118, 72]),
    (0.85, [178, 172, 164]),
    (1.0, [255, 255, 255]),
];

/// The preview colour of a height (NaN is read as 0, values outside [-1, 1] are clamped).
#[inline]
pub fn color(h: f32) -> Rgb {
    let h = crate::quantize::sanitize(h);
    if h <= 0.0 {
        ramp(&WATER, h)
    } else {
        ramp(&LAND, h)
    }
}

/// Piecewise-linear interpolation in an ascending anchor list; `h` must lie within its range.
fn ramp(anchors: &[(f32, Rgb)], h: f32) -> Rgb {
    // Find the segment [a, b] containing h; anchor lists are tiny, so a linear scan is fastest.
    let mut i = 1;
    while i < anchors.len() - 1 && h > anchors[i].0 {
        i += 1;
    }
    let (h0, c0) = anchors[i - 1];
    let (h1, c1) = anchors[i];
    let t = ((h - h0) / (h1 - h0)).clamp(0.0, 1.0);
    let mut out = [0u8; 3];
    for ((o, a), b) in out.iter_mut().zip(c0).zip(c1) {
        let (a, b) = (f32::from(a), f32::from(b));
        // Both ends are in 0..=255 and t in [0, 1], so the sum stays in range; +0.5 and truncation
        // round half up without a library call.
        *o = (a + (b - a) * t + 0.5) as u8;
    }
    out
}

/// Writes the RGB bytes of a run of heights; `out.len()` must be `3 × heights.len()`.
pub fn colors(heights: &[f32], out: &mut [u8]) {
    debug_assert_eq!(out.len(), heights.len() * 3);
    for (h, o) in heights.iter().zip(out.chunks_exact_mut(3)) {
        o.copy_from_slice(&color(*h));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(from: f32, to: f32, n: usize) -> impl Iterator<Item = f32> {
        (0..=n).map(move |i| from + (to - from) * i as f32 / n as f32)
    }

    #[test]
    fn anchors_are_hit_exactly() {
        assert_eq!(color(-1.0), [0, 18, 38]);
        assert_eq!(color(0.0), [108, 205, 255]);
        assert_eq!(color(-0.0), [108, 205, 255]);
        assert_eq!(color(f32::MIN_POSITIVE), [31, 152, 69]);
        assert_eq!(color(0.5), [238, 170, 70]);
        assert_eq!(color(1.0), [255, 255, 255]);
        // Clamping and NaN.
        assert_eq!(color(-7.0), color(-1.0));
        assert_eq!(color(7.0), color(1.0));
        assert_eq!(color(f32::NAN), color(0.0));
    }

    #[test]
    fn water_gets_lighter_monotonically() {
        let mut prev = color(-1.0);
        for h in sweep(-1.0, 0.0, 4000) {
            let c = color(h);
            for ch in 0..3 {
                assert!(c[ch] >= prev[ch], "channel {ch} darkens at h = {h}: {prev:?} → {c:?}");
            }
            prev = c;
        }
    }

    #[test]
    fn water_is_blue_and_land_is_not() {
        for h in sweep(-1.0, 0.0, 200) {
            let [r, g, b] = color(h);
            assert!(b > r && b > g, "water at {h} is not blue: {:?}", [r, g, b]);
        }
        for h in sweep(0.001, 0.99, 200) {
            let [r, g, b] = color(h);
            assert!(b <= r.max(g), "land at {h} looks like water: {:?}", [r, g, b]);
        }
    }

    #[test]
    fn land_rises_to_white_and_is_continuous() {
        let brightness = |c: Rgb| c.iter().map(|&v| u32::from(v)).sum::<u32>();
        assert!(brightness(color(1.0)) > brightness(color(0.9)));
        assert!(brightness(color(0.9)) > brightness(color(0.01)));
        // Smooth: a small height step never jumps by more than a few levels in any channel, except
        // across the coastline.
        for (lo, hi) in [(-1.0, 0.0), (1e-6, 1.0)] {
            let mut prev = color(lo);
            for h in sweep(lo, hi, 10_000) {
                let c = color(h);
                for ch in 0..3 {
                    assert!(c[ch].abs_diff(prev[ch]) <= 3, "jump at h = {h}: {prev:?} → {c:?}");
                }
                prev = c;
            }
        }
        // The coastline itself is a visible edge.
        assert_ne!(color(0.0), color(1e-6));
    }
}
