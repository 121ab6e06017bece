//! Exact Euclidean distance transform (Felzenszwalb & Huttenlocher, "Distance Transforms of Sampled
//! Functions", 2012): squared distances to the nearest *feature* pixel (height ≤ 0), capped at D².
//!
//! Two separable passes over the rectangle B of the result, reading the source on `expand(B, D)`:
//! 1. **rows**: for every source row within D of B and every column of B, the squared distance to
//!    the nearest feature of that row (a forward and a backward scan), capped at D²;
//! 2. **columns**: for every column of B, the lower envelope of the parabolas
//!    `g(y') + (y − y')²` over those rows, evaluated at the rows of B.
//!
//! Capping is the original's initialisation of non-features to D²: the result is
//! `min(D², squared distance to the nearest feature)`, and a feature farther than D from a pixel
//! can never change it, so the source is only needed on `expand(B, D)` and the result does not
//! depend on how much more of the source exists (which differs between tiles). Everything is
//! integer arithmetic: the envelope's breakpoints are compared as exact fractions (cross
//! multiplication in i64 or i128), so no rounding can make two renders choose differently. Only the last
//! step, `√d / D`, is floating point, per pixel.
//!
//! Pixels outside the source's extent count as non-features (the bounds rule makes sure none is
//! within D of B).

use geogen_render::kernels::for_each_row;
use geogen_render::{HeightMap, Interval, Rect, RenderError};
use rayon::prelude::*;

/// Columns per column-pass task.
const COLUMNS_PER_TASK: usize = 32;

/// Scratch bytes of [`distance_map`] for a result over `rect` with maximum distance `d` (the row
/// pass's squared distances, 8 B per pixel of B's columns × the rows within D, and the column
/// pass's results, 4 B per pixel of B).
pub fn scratch_bytes(rect: Rect, d: u64) -> u64 {
    let rows = rect.height.saturating_add(d.saturating_mul(2));
    rect.width.saturating_mul(rows).saturating_mul(8).saturating_add(rect.area().saturating_mul(4))
}

#[inline]
fn is_feature(h: f32) -> bool {
    h <= 0.0
}

/// Fills `out` (its extent is B) with `min(distance to the nearest feature of source, D) / D`; with
/// `D = 0`, features are 0 and everything else 1.
pub fn distance_map(source: &HeightMap, out: &mut HeightMap, d: u64) -> Result<(), RenderError> {
    distance_map_in(source, out, d, Arithmetic::Narrowest)
}

/// Which integers the envelope computes with (tests force the wide one).
#[derive(Copy, Clone, Debug, PartialEq)]
enum Arithmetic {
    /// `i64` when everything fits, `i128` otherwise.
    Narrowest,
    #[cfg(test)]
    Wide,
}

fn distance_map_in(source: &HeightMap, out: &mut HeightMap, d: u64, arithmetic: Arithmetic) -> Result<(), RenderError> {
    let b = out.rect();
    if b.is_empty() {
        return Ok(());
    }
    if d == 0 {
        for_each_row(out, |py, x0, row| {
            for (i, h) in row.iter_mut().enumerate() {
                let feature = source.get(x0 + i as i64, py).is_some_and(is_feature);
                *h = if feature { 0.0 } else { 1.0 };
            }
        });
        return Ok(());
    }
    // Beyond 2^31 the squares would not fit the arithmetic below; such a render needs
    // (2^32)² pixels of source, which the memory plan refuses long before.
    let d = d.min(1 << 31);
    let cap = d * d;
    let rows = b.y_interval().expand(d).intersect(&source.rect().y_interval());
    let span = b.x_interval().expand(d).intersect(&source.rect().x_interval());
    let width = b.width as usize;
    let row_count = rows.length as usize;

    let mut squared: Vec<u64> = Vec::new();
    let len = width.checked_mul(row_count).ok_or(RenderError::Allocation { bytes: u64::MAX })?;
    squared.try_reserve_exact(len).map_err(|_| RenderError::Allocation { bytes: (len as u64).saturating_mul(8) })?;
    squared.resize(len, cap);
    if width > 0 && !span.is_empty() {
        squared.par_chunks_mut(width).enumerate().for_each(|(j, out_row)| {
            let y = rows.start + j as i64;
            row_distances(source.row_span(y, span), span.start, b.x_interval(), d, out_row);
        });
    }

    let normalise = Normaliser::new(d);
    // Column pass: each task handles a band of adjacent columns.
    // B's rows as indexes into `rows` (B lies inside `rows` unless the source is short, in which
    // case the missing rows are simply absent parabolas); within 2^31 since the source is in memory
    // and B is within D of it.
    let offset = (b.y as i128 - rows.start as i128).clamp(-(1 << 40), 1 << 40) as i64;
    // i64 suffices when |numerators| < 2^41 and denominators, positions ≤ 2^21 (products < 2^62).
    const SMALL: u64 = 1 << 20;
    let small = arithmetic == Arithmetic::Narrowest
        && d < (1 << 16)
        && (row_count as u64) < SMALL
        && b.height < SMALL
        && offset.unsigned_abs() < SMALL;
    let bands: Vec<Vec<f32>> = (0..width.div_ceil(COLUMNS_PER_TASK))
        .into_par_iter()
        .map(|band| {
            let first = band * COLUMNS_PER_TASK;
            let columns = COLUMNS_PER_TASK.min(width - first);
            let height = b.height as usize;
            // The band's columns, gathered column-major (rows are read contiguously).
            let mut gathered = vec![0u64; columns * row_count];
            for (j, row) in squared.chunks(width).enumerate() {
                for (c, &v) in row[first..first + columns].iter().enumerate() {
                    gathered[c * row_count + j] = v;
                }
            }
            // The band's result, row by row (so that the rows of the map are copied from it).
            let mut result = vec![0.0f32; columns * height];
            let column = |c: usize| &gathered[c * row_count..(c + 1) * row_count];
            if small {
                let mut envelope = Envelope::<i64>::with_capacity(row_count);
                for c in 0..columns {
                    envelope.build(column(c), cap);
                    envelope.evaluate(offset, height, cap, |i, sq| result[i * columns + c] = normalise.at(sq));
                }
            } else {
                let mut envelope = Envelope::<i128>::with_capacity(row_count);
                for c in 0..columns {
                    envelope.build(column(c), cap);
                    envelope.evaluate(offset, height, cap, |i, sq| result[i * columns + c] = normalise.at(sq));
                }
            }
            result
        })
        .collect();

    let height = b.height as usize;
    for_each_row(out, |py, _, row| {
        let i = (py - b.y) as usize;
        for (band, values) in bands.iter().enumerate() {
            let columns = values.len() / height;
            let first = band * COLUMNS_PER_TASK;
            row[first..first + columns].copy_from_slice(&values[i * columns..(i + 1) * columns]);
        }
    });
    Ok(())
}

/// `√squared / d` as a height.
#[inline]
fn normalised(squared: u64, d: u64) -> f32 {
    (libm::sqrt(squared as f64) / d as f64) as f32
}

/// [`normalised`] for every squared distance up to d² from a table when it is small (the same
/// values, without a square root and a division per pixel).
struct Normaliser {
    d: u64,
    table: Vec<f32>,
}

impl Normaliser {
    /// Tables up to this many entries (256 KiB).
    const MAX_TABLE: u64 = 1 << 16;

    fn new(d: u64) -> Normaliser {
        let table =
            if d * d < Self::MAX_TABLE { (0..=d * d).map(|sq| normalised(sq, d)).collect() } else { Vec::new() };
        Normaliser { d, table }
    }

    #[inline]
    fn at(&self, squared: u64) -> f32 {
        match self.table.get(squared as usize) {
            Some(&v) => v,
            None => normalised(squared, self.d),
        }
    }
}

/// One source row (its first pixel at column `start`) → for every column of `xs`, the squared
/// distance to the nearest feature of the row, capped at `d²`. Columns of `xs` need not lie inside
/// the row (pixels outside it are non-features).
fn row_distances(row: &[f32], start: i64, xs: Interval, d: u64, out: &mut [u64]) {
    let cap = d * d;
    let column = |i: usize| start + i as i64;
    // Forward: distance to the last feature at or before x.
    let (mut r, mut last) = (0usize, None::<i64>);
    for (j, o) in out.iter_mut().enumerate() {
        let x = xs.start + j as i64;
        while r < row.len() && column(r) <= x {
            if is_feature(row[r]) {
                last = Some(column(r));
            }
            r += 1;
        }
        *o = last.map_or(u64::MAX, |f| x.abs_diff(f));
    }
    // Backward: distance to the next feature at or after x; then square and cap.
    let (mut r, mut next) = (row.len(), None::<i64>);
    for (j, o) in out.iter_mut().enumerate().rev() {
        let x = xs.start + j as i64;
        while r > 0 && column(r - 1) >= x {
            r -= 1;
            if is_feature(row[r]) {
                next = Some(column(r));
            }
        }
        let nearest = (*o).min(next.map_or(u64::MAX, |f| f.abs_diff(x)));
        *o = if nearest >= d { cap } else { nearest * nearest };
    }
}

/// The exact integer arithmetic of the envelope: `i64` when every intermediate value is known to
/// fit (the common case, and about twice as fast), `i128` otherwise. Both give the same results.
trait Exact:
    Copy + PartialOrd + std::ops::Add<Output = Self> + std::ops::Sub<Output = Self> + std::ops::Mul<Output = Self>
{
    fn of(v: i64) -> Self;
    /// A non-negative value below the cap, as `u64`.
    fn to_u64(self) -> u64;
}

impl Exact for i64 {
    #[inline]
    fn of(v: i64) -> i64 {
        v
    }
    #[inline]
    fn to_u64(self) -> u64 {
        self as u64
    }
}

impl Exact for i128 {
    #[inline]
    fn of(v: i64) -> i128 {
        i128::from(v)
    }
    #[inline]
    fn to_u64(self) -> u64 {
        self as u64
    }
}

/// A breakpoint `numerator / denominator` (denominator > 0), compared exactly.
#[derive(Copy, Clone, Debug)]
struct Fraction<T> {
    numerator: T,
    denominator: T,
}

impl<T: Exact> Fraction<T> {
    /// `self <= other`.
    #[inline]
    fn at_most(self, other: Fraction<T>) -> bool {
        self.numerator * other.denominator <= other.numerator * self.denominator
    }

    /// `self < p` for a whole number `p`.
    #[inline]
    fn below(self, p: T) -> bool {
        self.numerator < p * self.denominator
    }
}

/// The lower envelope of the parabolas `f(q) + (p − q)²` of one column (Felzenszwalb &
/// Huttenlocher's algorithm); parabolas with `f(q) ≥ cap` are left out, since the result is capped
/// anyway and they can never bring a value below the cap.
struct Envelope<T> {
    /// Centres of the parabolas on the envelope, left to right.
    centres: Vec<T>,
    /// Their heights `f(q)`.
    heights: Vec<T>,
    /// `starts[k]`: where parabola k + 1 takes over from parabola k.
    starts: Vec<Fraction<T>>,
}

impl<T: Exact> Envelope<T> {
    fn with_capacity(n: usize) -> Envelope<T> {
        Envelope { centres: Vec::with_capacity(n), heights: Vec::with_capacity(n), starts: Vec::with_capacity(n) }
    }

    /// Where the parabola (q, fq) becomes lower than (v, fv), for v < q.
    #[inline]
    fn intersection(v: T, fv: T, q: T, fq: T) -> Fraction<T> {
        Fraction { numerator: (fq + q * q) - (fv + v * v), denominator: T::of(2) * (q - v) }
    }

    fn build(&mut self, f: &[u64], cap: u64) {
        self.centres.clear();
        self.heights.clear();
        self.starts.clear();
        for (q, &fq) in f.iter().enumerate() {
            if fq >= cap {
                continue;
            }
            // Both fit: q < the row count and fq < cap ≤ 2^62.
            let (q, fq) = (T::of(q as i64), T::of(fq as i64));
            loop {
                let Some(k) = self.centres.len().checked_sub(1) else {
                    self.centres.push(q);
                    self.heights.push(fq);
                    break;
                };
                let s = Self::intersection(self.centres[k], self.heights[k], q, fq);
                // Parabola k starts at starts[k - 1] (−∞ for the first one); if the new one is
                // already lower there, k is never the lowest and goes.
                if k > 0 && s.at_most(self.starts[k - 1]) {
                    self.centres.pop();
                    self.heights.pop();
                    self.starts.pop();
                    continue;
                }
                self.centres.push(q);
                self.heights.push(fq);
                self.starts.push(s);
                break;
            }
        }
    }

    /// Calls `out(i, min(cap, envelope(offset + i)))` for `i` in `0..n`, in increasing order.
    fn evaluate(&self, offset: i64, n: usize, cap: u64, mut out: impl FnMut(usize, u64)) {
        if self.centres.is_empty() {
            (0..n).for_each(|i| out(i, cap));
            return;
        }
        let cap_t = T::of(cap as i64);
        let mut k = 0;
        for i in 0..n {
            let p = T::of(offset + i as i64);
            while k < self.starts.len() && self.starts[k].below(p) {
                k += 1;
            }
            let dp = p - self.centres[k];
            let v = self.heights[k] + dp * dp;
            out(i, if v < cap_t { v.to_u64() } else { cap });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, by brute force.
    fn brute_force(source: &HeightMap, b: Rect, d: u64) -> Vec<f32> {
        let mut out = Vec::new();
        for y in b.y..b.y + b.height as i64 {
            for x in b.x..b.x + b.width as i64 {
                let mut best = u64::MAX;
                for (j, row) in source.data().chunks(source.width()).enumerate() {
                    for (i, &h) in row.iter().enumerate() {
                        if is_feature(h) {
                            let dx = (source.rect().x + i as i64 - x).unsigned_abs();
                            let dy = (source.rect().y + j as i64 - y).unsigned_abs();
                            best = best.min(dx * dx + dy * dy);
                        }
                    }
                }
                out.push(if d == 0 {
                    if best == 0 {
                        0.0
                    } else {
                        1.0
                    }
                } else {
                    normalised(best.min(d * d), d)
                });
            }
        }
        out
    }

    fn pseudo_random_map(rect: Rect, seed: u32, density: u32) -> HeightMap {
        let data = (0..rect.area() as u32)
            .map(|i| if geogen_random::hash2(seed, i) % 100 < density { -0.5 } else { 0.5 })
            .collect();
        HeightMap::from_data(rect, data).unwrap()
    }

    #[test]
    fn matches_brute_force_on_any_rectangle_shape() {
        for (seed, (w, h), d, density) in
            [(1, (13, 7), 4, 5), (2, (5, 19), 6, 2), (3, (40, 3), 3, 10), (4, (9, 9), 20, 1), (5, (17, 11), 5, 0)]
        {
            let b = Rect::new(-3, 2, w, h);
            let source = pseudo_random_map(b.expand(d), seed, density);
            let mut out = HeightMap::try_zeroed(b).unwrap();
            distance_map(&source, &mut out, d).unwrap();
            assert_eq!(out.data(), brute_force(&source, b, d).as_slice(), "seed {seed}");
            let mut wide = HeightMap::try_zeroed(b).unwrap();
            distance_map_in(&source, &mut wide, d, Arithmetic::Wide).unwrap();
            assert_eq!(wide.data(), out.data(), "seed {seed}, i128");
        }
    }

    #[test]
    fn a_larger_source_gives_the_same_pixels() {
        let b = Rect::new(0, 0, 12, 10);
        let big = pseudo_random_map(b.expand(30), 9, 3);
        let exact = big.cut_out(b.expand(6)).unwrap();
        let (mut from_big, mut from_exact) = (HeightMap::try_zeroed(b).unwrap(), HeightMap::try_zeroed(b).unwrap());
        distance_map(&big, &mut from_big, 6).unwrap();
        distance_map(&exact, &mut from_exact, 6).unwrap();
        assert_eq!(from_big.data(), from_exact.data());
    }

    #[test]
    fn zero_distance_marks_features() {
        let b = Rect::new(0, 0, 6, 6);
        let source = pseudo_random_map(b, 4, 30);
        let mut out = HeightMap::try_zeroed(b).unwrap();
        distance_map(&source, &mut out, 0).unwrap();
        assert_eq!(out.data(), brute_force(&source, b, 0).as_slice());
    }
}
