//! The basis functions, written once over [`Lanes`]: gradient (Perlin) noise, OpenSimplex2-style
//! simplex noise and cellular (Worley) noise, each a pure function of a seed and a point given as
//! (cell, fraction) per axis.
//!
//! Gradients come from hash bits, not tables or trigonometry: 16 unit vectors at 11.25° + k·22.5°
//! (none along an axis), chosen by a swap of the axes, two sign flips and one of two (cos, sin)
//! pairs written as f32 constants.

use crate::lanes::{Lanes, Vf, Vi};

pub(crate) const PRIME_X: i32 = 501_125_321;
pub(crate) const PRIME_Y: i32 = 1_136_930_381;
const HASH_MUL: i32 = 0x27d4_eb2d;

/// cos and sin of 11.25° and 33.75°, rounded to f32.
const A1: f32 = 0.980_785_25;
const B1: f32 = 0.195_090_32;
const A2: f32 = 0.831_469_6;
const B2: f32 = 0.555_570_24;

/// 2D gradient noise with unit gradients peaks at √½; this scales it to [−1, 1].
const PERLIN_SCALE: f32 = std::f32::consts::SQRT_2;

/// OpenSimplex2's 2D constants (its lattice skew and the normalisation for unit gradients).
pub(crate) const SKEW_F2: f64 = 0.366_025_403_784_438_6; // (√3 − 1) / 2
const G2_64: f64 = 0.211_324_865_405_187_1; // (3 − √3) / 6
const G2: f32 = G2_64 as f32;
const SIMPLEX_C1: f32 = (2.0 * (1.0 - 2.0 * G2_64) * (1.0 / G2_64 - 2.0)) as f32;
const SIMPLEX_C2: f32 = (-2.0 * (1.0 - 2.0 * G2_64) * (1.0 - 2.0 * G2_64)) as f32;
const SIMPLEX_SCALE: f32 = 99.836_85;

/// The hash of a lattice point: `(seed ^ x·Px ^ y·Py) × M`, then its high bits folded down.
#[inline(always)]
pub(crate) fn hash<S: Lanes>(seed: Vi<S>, xp: Vi<S>, yp: Vi<S>) -> Vi<S> {
    let h = (seed ^ xp ^ yp) * Vi::splat(HASH_MUL);
    h ^ h.shr::<15>()
}

/// The dot product of the hashed gradient with (x, y).
#[inline(always)]
fn grad<S: Lanes>(h: Vi<S>, x: Vf<S>, y: Vf<S>) -> Vf<S> {
    let swap = h.has_bit(4);
    let u = Vf::select(swap, y, x);
    let v = Vf::select(swap, x, y);
    let pair = h.has_bit(8);
    let a = Vf::select(pair, Vf::splat(A2), Vf::splat(A1));
    let b = Vf::select(pair, Vf::splat(B2), Vf::splat(B1));
    a * u.flip(h.shl::<31>()) + b * v.flip(h.shl::<30>())
}

/// Perlin's quintic fade, 6t⁵ − 15t⁴ + 10t³.
#[inline(always)]
fn fade<S: Lanes>(t: Vf<S>) -> Vf<S> {
    t * t * t * (t * (t * Vf::splat(6.0) - Vf::splat(15.0)) + Vf::splat(10.0))
}

/// Gradient noise at the point (xi + xf, yi + yf): the four corners' gradients dotted with the
/// offsets, blended by the quintic fade. In [−1, 1].
#[inline(always)]
pub(crate) fn perlin<S: Lanes>(seed: Vi<S>, xi: Vi<S>, xf: Vf<S>, yi: Vi<S>, yf: Vf<S>) -> Vf<S> {
    let xp0 = xi * Vi::splat(PRIME_X);
    let yp0 = yi * Vi::splat(PRIME_Y);
    let xp1 = xp0 + Vi::splat(PRIME_X);
    let yp1 = yp0 + Vi::splat(PRIME_Y);
    let one = Vf::splat(1.0);
    let (xf1, yf1) = (xf - one, yf - one);
    let (u, v) = (fade(xf), fade(yf));
    let n00 = grad(hash(seed, xp0, yp0), xf, yf);
    let n10 = grad(hash(seed, xp1, yp0), xf1, yf);
    let n01 = grad(hash(seed, xp0, yp1), xf, yf1);
    let n11 = grad(hash(seed, xp1, yp1), xf1, yf1);
    let a = n00 + u * (n10 - n00);
    let b = n01 + u * (n11 - n01);
    (a + v * (b - a)) * Vf::splat(PERLIN_SCALE)
}

/// OpenSimplex2 (2D) at a point already skewed onto the simplex lattice and split into the cell
/// (i, j) and the fractions (xf, yf): the three corners of its triangle, each a radial falloff
/// (½ − r²)⁴ times the gradient's dot product. About [−1, 1].
#[inline(always)]
pub(crate) fn simplex<S: Lanes>(seed: Vi<S>, i: Vi<S>, xf: Vf<S>, j: Vi<S>, yf: Vf<S>) -> Vf<S> {
    let zero = Vf::splat(0.0);
    let half = Vf::splat(0.5);
    let g2 = Vf::splat(G2);
    let t = (xf + yf) * g2;
    let x0 = xf - t;
    let y0 = yf - t;
    let ip = i * Vi::splat(PRIME_X);
    let jp = j * Vi::splat(PRIME_Y);

    let a_raw = half - x0 * x0 - y0 * y0;
    let a = a_raw.max(zero);
    let n0 = a * a * (a * a) * grad(hash(seed, ip, jp), x0, y0);

    let c = Vf::splat(SIMPLEX_C1) * t + (Vf::splat(SIMPLEX_C2) + a_raw);
    let c = c.max(zero);
    let corner = Vf::splat(2.0 * G2 - 1.0);
    let (x2, y2) = (x0 + corner, y0 + corner);
    let n2 = c * c * (c * c) * grad(hash(seed, ip + Vi::splat(PRIME_X), jp + Vi::splat(PRIME_Y)), x2, y2);

    // The middle corner: (0, 1) above the diagonal, (1, 0) below it.
    let upper = x0.lt(y0);
    let x1 = x0 + Vf::select(upper, g2, Vf::splat(G2 - 1.0));
    let y1 = y0 + Vf::select(upper, Vf::splat(G2 - 1.0), g2);
    let i1 = ip + Vi::select(upper, Vi::splat(0), Vi::splat(PRIME_X));
    let j1 = jp + Vi::select(upper, Vi::splat(PRIME_Y), Vi::splat(0));
    let b = half - x1 * x1 - y1 * y1;
    let b = b.max(zero);
    let n1 = b * b * (b * b) * grad(hash(seed, i1, j1), x1, y1);

    (n0 + n1 + n2) * Vf::splat(SIMPLEX_SCALE)
}

/// What cellular noise reports.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CellOutput {
    /// The distance to the nearest feature point: `2·F1 − 1` (distances in cell units; Manhattan
    /// ones times √½).
    F1,
    /// The distance to the second nearest: `1.5·F2 − 1` (F2 is larger).
    F2,
    /// Their difference: `2·(F2 − F1) − 1` (ridges along the cell borders).
    F2MinusF1,
    /// The random value of the nearest point's cell, in [−1, 1] (flat cells).
    CellValue,
}

impl CellOutput {
    pub const NAMES: &'static [&'static str] = &["F1", "F2", "F2-F1", "cell"];
    pub fn from_name(name: &str) -> Option<CellOutput> {
        Some(match name {
            "F1" => CellOutput::F1,
            "F2" => CellOutput::F2,
            "F2-F1" => CellOutput::F2MinusF1,
            "cell" => CellOutput::CellValue,
            _ => return None,
        })
    }
}

/// How cellular noise measures distance.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Distance {
    Euclidean,
    Manhattan,
    Chebyshev,
}

impl Distance {
    pub const NAMES: &'static [&'static str] = &["euclidean", "manhattan", "chebyshev"];
    pub fn from_name(name: &str) -> Option<Distance> {
        Some(match name {
            "euclidean" => Distance::Euclidean,
            "manhattan" => Distance::Manhattan,
            "chebyshev" => Distance::Chebyshev,
            _ => return None,
        })
    }
}

/// The parameters of cellular noise.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Cellular {
    pub output: CellOutput,
    pub distance: Distance,
    /// How far feature points stray from their cell's centre, 0 (a square grid) to 1 (anywhere in
    /// the cell).
    pub jitter: f32,
}

/// Cellular noise: each unit cell holds one feature point, at the cell's centre moved by up to
/// `jitter / 2` per axis (10 hash bits per axis); the 3×3 cells around the point are searched.
#[inline(always)]
pub(crate) fn cellular<S: Lanes>(seed: Vi<S>, xi: Vi<S>, xf: Vf<S>, yi: Vi<S>, yf: Vf<S>, c: &Cellular) -> Vf<S> {
    match c.distance {
        Distance::Euclidean => cellular_with(seed, xi, xf, yi, yf, c, |x, y| x * x + y * y),
        Distance::Manhattan => cellular_with(seed, xi, xf, yi, yf, c, |x, y| x.abs() + y.abs()),
        Distance::Chebyshev => cellular_with(seed, xi, xf, yi, yf, c, |x, y| x.abs().max(y.abs())),
    }
}

#[inline(always)]
fn cellular_with<S: Lanes>(
    seed: Vi<S>,
    xi: Vi<S>,
    xf: Vf<S>,
    yi: Vi<S>,
    yf: Vf<S>,
    c: &Cellular,
    metric: impl Fn(Vf<S>, Vf<S>) -> Vf<S>,
) -> Vf<S> {
    let xp = xi * Vi::splat(PRIME_X);
    let yp = yi * Vi::splat(PRIME_Y);
    // A feature point's offset in its cell: (0.5 − jitter/2) + r × jitter/1023, r in 0..=1023.
    let step = Vf::splat(c.jitter / 1023.0);
    let low = 0.5 - c.jitter * 0.5;
    let bits = Vi::splat(1023);
    let mut d1 = Vf::splat(1.0e30);
    let mut d2 = Vf::splat(1.0e30);
    let mut value = Vf::splat(0.0);
    for dj in -1i32..=1 {
        let ypj = yp + Vi::splat(dj.wrapping_mul(PRIME_Y));
        let base_y = Vf::splat(dj as f32 + low);
        for di in -1i32..=1 {
            let xpi = xp + Vi::splat(di.wrapping_mul(PRIME_X));
            let base_x = Vf::splat(di as f32 + low);
            let h = hash(seed, xpi, ypj);
            let vx = ((h & bits).to_f() * step + base_x) - xf;
            let vy = ((h.shr::<10>() & bits).to_f() * step + base_y) - yf;
            let d = metric(vx, vy);
            let v = h.shr::<20>().to_f() * Vf::splat(2.0 / 4095.0) - Vf::splat(1.0);
            value = Vf::select(d.lt(d1), v, value);
            d2 = d2.min(d1.max(d));
            d1 = d1.min(d);
        }
    }
    if c.distance == Distance::Euclidean && c.output != CellOutput::CellValue {
        d1 = d1.sqrt();
        d2 = d2.sqrt();
    }
    if c.distance == Distance::Manhattan {
        // Manhattan distances are up to √2 times the Euclidean ones: brought to a similar range.
        let m = Vf::splat(std::f32::consts::FRAC_1_SQRT_2);
        d1 = d1 * m;
        d2 = d2 * m;
    }
    let (one, two) = (Vf::splat(1.0), Vf::splat(2.0));
    match c.output {
        CellOutput::F1 => d1 * two - one,
        CellOutput::F2 => d2 * Vf::splat(1.5) - one,
        CellOutput::F2MinusF1 => (d2 - d1) * two - one,
        CellOutput::CellValue => value,
    }
}
