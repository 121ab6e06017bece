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

/// A named palette of the studio and its tiles: anchors over [-1, 1], interpolated linearly as
/// [`color`] does. The first is [`color`]'s own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Palette {
    pub name: &'static str,
    pub anchors: Anchors,
}

/// How a palette's anchors cover the heights.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Anchors {
    /// Water anchors from -1 to 0, land anchors from 0 to 1: heights at or below 0 are water, the
    /// coastline a step.
    Sea { water: &'static [(f32, Rgb)], land: &'static [(f32, Rgb)] },
    /// One ramp from -1 to 1.
    Ramp(&'static [(f32, Rgb)]),
}

/// Every named palette, the default first.
pub const PALETTES: [Palette; 5] = [
    Palette { name: "land and water", anchors: Anchors::Sea { water: &WATER, land: &LAND } },
    Palette { name: "grayscale", anchors: Anchors::Ramp(&[(-1.0, [0, 0, 0]), (1.0, [255, 255, 255])]) },
    Palette {
        name: "arid",
        anchors: Anchors::Sea {
            water: &[(-1.0, [10, 30, 48]), (0.0, [70, 150, 170])],
            land: &[
                (0.0, [226, 204, 150]),
                (0.2, [214, 170, 108]),
                (0.45, [190, 128, 74]),
                (0.7, [148, 88, 56]),
                (0.9, [110, 74, 58]),
                (1.0, [238, 222, 196]),
            ],
        },
    },
    Palette {
        name: "alpine",
        anchors: Anchors::Sea {
            water: &[(-1.0, [8, 24, 60]), (-0.3, [30, 80, 140]), (0.0, [90, 160, 210])],
            land: &[
                (0.0, [70, 120, 60]),
                (0.25, [40, 100, 50]),
                (0.45, [110, 120, 80]),
                (0.6, [128, 118, 108]),
                (0.75, [150, 148, 146]),
                (0.82, [235, 238, 242]),
                (1.0, [255, 255, 255]),
            ],
        },
    },
    // Perceptually uniform, dark blue through teal and green to yellow (the viridis look).
    Palette {
        name: "viridis",
        anchors: Anchors::Ramp(&[
            (-1.0, [68, 1, 84]),
            (-0.75, [71, 44, 122]),
            (-0.5, [59, 81, 139]),
            (-0.25, [44, 113, 142]),
            (0.0, [33, 144, 141]),
            (0.25, [39, 173, 129]),
            (0.5, [92, 200, 99]),
            (0.75, [170, 220, 50]),
            (1.0, [253, 231, 37]),
        ]),
    },
];

impl Palette {
    /// The palette of a name, if there is one.
    pub fn named(name: &str) -> Option<&'static Palette> {
        PALETTES.iter().find(|p| p.name == name)
    }

    /// The colour of a height (NaN is read as 0, values outside [-1, 1] are clamped).
    pub fn color(&self, h: f32) -> Rgb {
        let h = crate::quantize::sanitize(h);
        match self.anchors {
            Anchors::Sea { water, .. } if h <= 0.0 => ramp(water, h),
            Anchors::Sea { land, .. } => ramp(land, h),
            Anchors::Ramp(anchors) => ramp(anchors, h),
        }
    }
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
    fn the_default_palette_is_the_preview_s() {
        let default = &PALETTES[0];
        for h in sweep(-1.2, 1.2, 5000).chain([f32::NAN, 0.0, -0.0, f32::MIN_POSITIVE]) {
            assert_eq!(default.color(h), color(h), "at {h}");
        }
        assert_eq!(Palette::named("arid").map(|p| p.color(1.0)), Some([238, 222, 196]));
        assert_eq!(Palette::named("viridis").map(|p| p.color(-1.0)), Some([68, 1, 84]));
        assert!(Palette::named("sepia").is_none());
        for palette in PALETTES {
            let ends = |anchors: &[(f32, Rgb)], from: f32, to: f32| {
                anchors.first().map(|a| a.0) == Some(from)
                    && anchors.last().map(|a| a.0) == Some(to)
                    && anchors.windows(2).all(|w| w[0].0 < w[1].0)
            };
            let covered = match palette.anchors {
                Anchors::Sea { water, land } => ends(water, -1.0, 0.0) && ends(land, 0.0, 1.0),
                Anchors::Ramp(anchors) => ends(anchors, -1.0, 1.0),
            };
            assert!(covered, "{} covers [-1, 1] in ascending anchors", palette.name);
        }
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
