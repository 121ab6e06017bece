//! The original's value-noise layer (reference §4.7 "Noise layer algorithm", §5.8).
//!
//! The random field is a pure function of `(current, X, Y)` for integer logical lattice points, and
//! every pixel is evaluated at its own logical coordinate `p / scale`, so a pixel's value does not
//! depend on the tile, the buffer extent or the thread that computes it. Interpolation is bicubic
//! Catmull-Rom (a = −0.5), done per row as: for every lattice column `X` the row touches, the
//! vertical interpolation at `ty`; then per pixel the horizontal interpolation of four of those
//! at `tx`. Both are fixed-order f64 expressions (no FMA), so results are bit-reproducible.

use geogen_render::kernels::for_each_row;
use geogen_render::raster::{saturate, HeightMap, HEIGHT_UNITS};
use geogen_render::scale::to_logical;

/// The smallest multiple of `m` that is `>= n` (`m > 0`; `m <= 0` returns `n`).
pub fn next_multiple_inclusive(n: i64, m: i64) -> i64 {
    if m <= 0 {
        return n;
    }
    let p = previous_multiple_inclusive(n, m);
    if p == n {
        n
    } else {
        p.saturating_add(m)
    }
}

/// The smallest multiple of `m` that is `> n`.
pub fn next_multiple_exclusive(n: i64, m: i64) -> i64 {
    if m <= 0 {
        return n;
    }
    previous_multiple_inclusive(n, m).saturating_add(m)
}

/// The largest multiple of `m` that is `<= n`.
pub fn previous_multiple_inclusive(n: i64, m: i64) -> i64 {
    if m <= 0 {
        return n;
    }
    // Saturating: at the very ends of the i64 range (never reached from scripts, whose coordinates
    // are 32-bit) a multiple may not exist, and the nearest representable value is good enough.
    n.saturating_sub(n.rem_euclid(m))
}

/// The largest multiple of `m` that is `< n`.
pub fn previous_multiple_exclusive(n: i64, m: i64) -> i64 {
    if m <= 0 {
        return n;
    }
    previous_multiple_inclusive(n.saturating_sub(1), m)
}

/// Cubic convolution with a = −0.5 (Catmull-Rom) through p0..p3 at `t` in [0, 1) between p1 and p2.
/// Written in Horner form; at `t = 0` it returns `p1` exactly.
#[inline]
pub fn catmull_rom(p0: f64, p1: f64, p2: f64, p3: f64, t: f64) -> f64 {
    let c1 = p2 - p0;
    let c2 = 2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3;
    let c3 = 3.0 * (p1 - p2) + p3 - p0;
    p1 + 0.5 * t * (c1 + t * (c2 + t * c3))
}

/// The parameters of one noise layer, in the original's integer height units.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LayerField {
    /// Logical wavelength (lattice spacing), ≥ 1.
    pub wavelength: u32,
    /// Amplitude A in height units (0..=32767).
    pub amplitude: i32,
    /// The `RandomSequence2D` current value for this layer.
    pub current: u32,
}

impl LayerField {
    /// The field of layer `layer_index` for the combined `seed`: a `RandomSequence2D(seed)`
    /// advanced `layer_index` times (reference §4.6); `wavelength` ≥ 1, `amplitude` in height
    /// units (0..=32767).
    pub fn new(wavelength: u32, amplitude: i32, seed: u32, layer_index: u32) -> LayerField {
        let mut mt = geogen_random::Mt19937::new(seed);
        let mut current = mt.next_u32();
        for _ in 0..layer_index {
            current = mt.next_u32();
        }
        LayerField { wavelength: wavelength.max(1), amplitude: amplitude.clamp(0, 32767), current }
    }

    /// The field value at a lattice point: `−A + (hash mod (2A + 1))`, an integer in [−A, A].
    #[inline]
    pub fn value(&self, x: i64, y: i64) -> i32 {
        let a = self.amplitude.clamp(0, 32767);
        let modulus = (2 * a + 1) as u32;
        // Coordinates wrap to 32 bits as in the original's `int` arithmetic.
        -a + (geogen_random::field_int(self.current, x as i32, y as i32) % modulus) as i32
    }
}

/// A noise amplitude (a Number, nominally (0, 1]) in height units: `trunc(amp × 32767)`.
pub fn amplitude_units(amplitude: f64) -> i32 {
    let v = (amplitude * HEIGHT_UNITS).trunc();
    if v.is_nan() {
        0
    } else {
        v.clamp(0.0, HEIGHT_UNITS) as i32
    }
}

/// The layers used when a script gives no array: wavelength → amplitude in height units.
pub fn default_noise_layers() -> std::collections::BTreeMap<u32, i32> {
    [(256, 16383), (128, 8191), (64, 4095), (32, 2047), (16, 1023), (8, 511), (4, 255), (2, 127), (1, 63)]
        .into_iter()
        .collect()
}

/// Floor of a logical coordinate as an integer (saturating).
#[inline]
pub(crate) fn floor_i64(v: f64) -> i64 {
    let f = libm::floor(v);
    if f.is_nan() {
        0
    } else {
        f as i64
    }
}

/// Adds one noise layer to `map` (saturating to [−1, 1]); `ridged` adds the absolute value.
pub fn add_noise_layer(map: &mut HeightMap, scale: f64, field: LayerField, ridged: bool) {
    let w = i64::from(field.wavelength.max(1));
    let physical_wavelength = (f64::from(field.wavelength) * scale).floor();
    let add = move |h: f32, v: f64| -> f32 {
        let v = if ridged { v.abs() } else { v };
        saturate(h + (v / HEIGHT_UNITS) as f32)
    };
    if physical_wavelength <= 1.0 {
        // Sub-pixel wavelength: sample the field at the pixel's own logical point. Unlike the
        // original (defect 29) the add saturates.
        let rect = map.rect();
        let logical_x: Vec<i64> = (0..rect.width as i64).map(|i| floor_i64(to_logical(rect.x + i, scale))).collect();
        for_each_row(map, |py, _, row| {
            let ly = floor_i64(to_logical(py, scale));
            for (h, &lx) in row.iter_mut().zip(&logical_x) {
                *h = add(*h, f64::from(field.value(lx, ly)));
            }
        });
        return;
    }
    let wf = w as f64;
    let rect = map.rect();
    if rect.is_empty() {
        return;
    }
    // The horizontal lattice position and fraction of each column are the same in every row:
    // compute them once. `k` indexes the row's lattice-column table, which starts at x0 of the
    // first pixel; x1 is monotone in the pixel index, so k stays within [0, count - 4].
    let first_x1 = previous_multiple_inclusive(floor_i64(to_logical(rect.x, scale)), w);
    let last_px = rect.x.saturating_add(rect.width as i64 - 1);
    let last_x1 = previous_multiple_inclusive(floor_i64(to_logical(last_px, scale)), w);
    let x_start = first_x1.saturating_sub(w);
    let count = (last_x1.saturating_sub(first_x1) / w) as usize + 4;
    let column_terms: Vec<(usize, f64)> = (0..rect.width as i64)
        .map(|i| {
            let lx = to_logical(rect.x + i, scale);
            let x1 = previous_multiple_inclusive(floor_i64(lx), w);
            ((x1.saturating_sub(first_x1) / w) as usize, (lx - x1 as f64) / wf)
        })
        .collect();
    for_each_row(map, |py, _, row| {
        let ly = to_logical(py, scale);
        let y1 = previous_multiple_inclusive(floor_i64(ly), w);
        let ty = (ly - y1 as f64) / wf;
        let ys = [y1.saturating_sub(w), y1, y1.saturating_add(w), y1.saturating_add(2 * w)];
        // Vertical interpolation at every lattice column the row touches.
        let columns: Vec<f64> = (0..count)
            .map(|k| {
                let x = x_start.saturating_add((k as i64).saturating_mul(w));
                let v = |y: i64| f64::from(field.value(x, y));
                catmull_rom(v(ys[0]), v(ys[1]), v(ys[2]), v(ys[3]), ty)
            })
            .collect();
        for (h, &(k, tx)) in row.iter_mut().zip(&column_terms) {
            let value = match columns.get(k..k + 4) {
                Some(c) => catmull_rom(c[0], c[1], c[2], c[3], tx),
                None => 0.0, // unreachable by the monotonicity argument; never panic
            };
            *h = add(*h, value);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiples_do_not_overflow_at_the_ends_of_the_range() {
        assert_eq!(previous_multiple_inclusive(i64::MIN, 3), i64::MIN);
        assert_eq!(previous_multiple_exclusive(i64::MIN, 7), i64::MIN);
        assert_eq!(next_multiple_exclusive(i64::MAX, 5), i64::MAX);
        assert_eq!(next_multiple_inclusive(i64::MAX - 1, 4), i64::MAX);
    }

    #[test]
    fn multiples_match_the_original_test_vectors() {
        let cases = [
            (next_multiple_inclusive as fn(i64, i64) -> i64, [(200, 200), (128, 200), (-128, -100), (-200, -200)]),
            (next_multiple_exclusive, [(200, 300), (128, 200), (-128, -100), (-200, -100)]),
            (previous_multiple_inclusive, [(200, 200), (128, 100), (-128, -200), (-200, -200)]),
            (previous_multiple_exclusive, [(400, 300), (228, 200), (-128, -200), (-200, -300)]),
        ];
        for (f, vectors) in cases {
            for (n, expected) in vectors {
                assert_eq!(f(n, 100), expected, "n = {n}");
            }
        }
    }

    #[test]
    fn catmull_rom_hits_the_knots_and_is_linear_on_lines() {
        assert_eq!(catmull_rom(1.0, 2.0, 3.0, 4.0, 0.0), 2.0);
        assert_eq!(catmull_rom(1.0, 2.0, 3.0, 4.0, 0.5), 2.5);
        assert!((catmull_rom(1.0, 2.0, 3.0, 4.0, 1.0) - 3.0).abs() < 1e-12);
        // Overshoot on a step: Catmull-Rom is not bounded by its knots.
        assert!(catmull_rom(0.0, 0.0, 1.0, 1.0, 0.5) == 0.5);
        // Midpoint is (−p0 + 9p1 + 9p2 − p3) / 16: overshoots a plateau.
        assert_eq!(catmull_rom(0.0, 1.0, 1.0, 0.0, 0.5), 1.125);
    }

    #[test]
    fn field_values_stay_within_the_amplitude() {
        let field = LayerField { wavelength: 4, amplitude: 100, current: 12345 };
        for x in -20..20 {
            for y in -20..20 {
                let v = field.value(x, y);
                assert!((-100..=100).contains(&v));
            }
        }
        let zero = LayerField { amplitude: 0, ..field };
        assert_eq!(zero.value(3, 4), 0);
    }
}
