//! Exact Euclidean distance transform (Felzenszwalb & Huttenlocher, "Distance Transforms of Sampled
//! Functions", 2012): squared distances to the nearest *feature* pixel (height ≤ 0), capped at D².
//!
//! Two separable passes over the rectangle B of the result, reading the source on `expand(B, D)`:
//! 1. **columns** (vertical 1-D distances): for every row of B and every source column within D
//!    of B, the distance to the nearest feature of that column, capped at D. A forward and a
//!    backward scan over the rows carry one counter per column ("rows since the last feature"),
//!    a whole strip of columns at a time: contiguous reads of the source, vectorisable, and the
//!    strips run in parallel. The counters are `u32` (D ≤ 2^31), stored strip by strip.
//! 2. **rows**: for every row of B, the lower envelope of the parabolas `g(x')² + (x − x')²` over
//!    the columns within D (contiguous in memory), evaluated at the columns of B and written
//!    straight into the row of the result; the rows run in parallel, each thread reusing its
//!    buffers.
//!
//! Capping is the original's initialisation of non-features to D²: the result is
//! `min(D², squared distance to the nearest feature)`, and a feature farther than D from a pixel
//! can never change it, so the source is only needed on `expand(B, D)` and the result does not
//! depend on how much more of the source exists (which differs between tiles). Parabolas with
//! `g ≥ D` are left out (they cannot bring a value below the cap), and so are the features inside
//! a run of features (each is beaten by a neighbour everywhere but at its own pixel, which is 0).
//! Everything is integer arithmetic: the envelope's breakpoints are compared as exact fractions
//! (cross multiplication in i64 on positions relative to the row, or i128 when that could
//! overflow), so no rounding can make two renders choose differently. Only the last step,
//! `√d / D`, is floating point, per pixel (from a table when D² < 65536).
//!
//! Pixels outside the source's extent count as non-features (the bounds rule makes sure none is
//! within D of B).

use geogen_render::kernels::{for_each_row, in_serial_mode};
use geogen_render::{HeightMap, Interval, Rect, RenderError};
use rayon::prelude::*;

/// Columns per task of the vertical pass (1 KiB of counters: they stay in L1 while a strip's
/// rows stream through).
const STRIP: usize = 256;

/// Rows per task of the row pass.
const MIN_ROWS_PER_TASK: usize = 8;

/// Scratch bytes of [`distance_map`] for a result over `rect` with maximum distance `d`: the
/// vertical distances, 4 B per pixel of B's rows × the columns within D. (Each thread's row
/// buffers, a few bytes per column, are left out like every kernel's per-thread rows.)
pub fn scratch_bytes(rect: Rect, d: u64) -> u64 {
    let columns = rect.width.saturating_add(d.saturating_mul(2));
    rect.height.saturating_mul(columns).saturating_mul(4)
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
    let normalise = Normaliser::new(d);
    let columns = b.x_interval().expand(d).intersect(&source.rect().x_interval());
    let rows_with_source = b.y_interval().expand(d).intersect(&source.rect().y_interval());
    if columns.is_empty() || rows_with_source.is_empty() {
        // No source pixel within D: everything is at the cap.
        let far = normalise.at(cap);
        for_each_row(out, |_, _, row| row.fill(far));
        return Ok(());
    }

    // 1. Vertical distances, strip by strip of columns.
    let ncols = columns.length as usize;
    let strips: Vec<Interval> = (0..ncols.div_ceil(STRIP))
        .map(|s| Interval::new(columns.start + (s * STRIP) as i64, STRIP.min(ncols - s * STRIP) as u64))
        .collect();
    let vertical = |xs: &Interval| vertical_distances(source, *xs, b.y_interval(), d as u32);
    let strips: Vec<Vec<u32>> = if in_serial_mode() {
        strips.iter().map(vertical).collect::<Result<_, _>>()?
    } else {
        strips.par_iter().map(vertical).collect::<Result<_, _>>()?
    };

    // 2. Rows: B's columns as positions relative to the first column within D (within 2^31 of it
    // since B is within D of the source, which is in memory).
    let offset = (b.x as i128 - columns.start as i128).clamp(-(1 << 40), 1 << 40) as i64;
    // i64 suffices when |numerators| < 2^41 and denominators, positions ≤ 2^21 (products < 2^62).
    const SMALL: u64 = 1 << 20;
    let small = arithmetic == Arithmetic::Narrowest
        && d < (1 << 16)
        && (ncols as u64) < SMALL
        && b.width < SMALL
        && offset.unsigned_abs() < SMALL;
    let height = b.height as usize;
    let rows = Rows { strips: &strips, height, ncols, offset, d: d as u32, cap, normalise: &normalise };
    let width = b.width as usize;
    if small {
        rows.run::<i64>(out.data_mut(), width)
    } else {
        rows.run::<i128>(out.data_mut(), width)
    }
    Ok(())
}

/// For the columns `xs` (inside the source's extent) and every row of `ys`: the distance to the
/// nearest feature of the column, capped at `d`, rows of `xs.length` counters one after another.
fn vertical_distances(source: &HeightMap, xs: Interval, ys: Interval, d: u32) -> Result<Vec<u32>, RenderError> {
    let width = xs.length as usize;
    let len = width * ys.length as usize;
    let mut out: Vec<u32> = Vec::new();
    out.try_reserve_exact(len).map_err(|_| RenderError::Allocation { bytes: (len as u64).saturating_mul(4) })?;
    let source_rows = source.rect().y_interval();
    let margin = i128::from(d);
    // One step of a scan: a feature resets the counter, anything else adds one (up to d).
    let step = |counters: &mut [u32], y: i64| {
        if source_rows.contains(y) {
            for (c, &h) in counters.iter_mut().zip(source.row_span(y, xs)) {
                *c = if is_feature(h) { 0 } else { (*c + 1).min(d) };
            }
        } else {
            counters.iter_mut().for_each(|c| *c = (*c + 1).min(d));
        }
    };
    let mut counters = vec![d; width];
    // Forward, from the first source row within d above ys (or ys' first row).
    // (In i128: near the ends of the coordinate range ys ± d does not fit an i64; ys.end() does.)
    let (ys_start, ys_end) = (i128::from(ys.start), ys.end());
    let first = i128::from(source_rows.start).max(ys_start - margin).min(ys_start) as i64;
    let end = ys_end as i64;
    for y in first..end {
        step(&mut counters, y);
        if y >= ys.start {
            out.extend_from_slice(&counters);
        }
    }
    // Backward, from the last source row within d below ys (or ys' last row).
    counters.fill(d);
    let last = source_rows.end().min(ys_end + margin).max(ys_end) as i64;
    for y in (ys.start..last).rev() {
        step(&mut counters, y);
        if y < end {
            let i = (y - ys.start) as usize;
            for (o, &c) in out[i * width..(i + 1) * width].iter_mut().zip(&counters) {
                *o = (*o).min(c);
            }
        }
    }
    Ok(out)
}

/// The row pass's shared inputs.
struct Rows<'a> {
    /// The vertical distances, strip by strip (`STRIP` columns each, the last one narrower).
    strips: &'a [Vec<u32>],
    height: usize,
    ncols: usize,
    /// Position of B's first column among the columns.
    offset: i64,
    d: u32,
    cap: u64,
    normalise: &'a Normaliser,
}

/// One thread's buffers for the row pass.
struct RowBuffers<T> {
    /// The row's vertical distances, column by column.
    g: Vec<u32>,
    envelope: Envelope<T>,
}

impl Rows<'_> {
    fn run<T: Exact + Send>(&self, data: &mut [f32], width: usize) {
        let init = || RowBuffers { g: vec![0; self.ncols], envelope: Envelope::<T>::with_capacity(self.ncols) };
        if in_serial_mode() {
            let mut buffers = init();
            for (i, row) in data.chunks_mut(width).enumerate() {
                self.row(i, row, &mut buffers);
            }
        } else {
            data.par_chunks_mut(width)
                .with_min_len(MIN_ROWS_PER_TASK)
                .enumerate()
                .for_each_init(init, |buffers, (i, row)| self.row(i, row, buffers));
        }
    }

    /// Row `i` of B.
    fn row<T: Exact>(&self, i: usize, out: &mut [f32], buffers: &mut RowBuffers<T>) {
        let g = &mut buffers.g;
        for (s, strip) in self.strips.iter().enumerate() {
            let w = strip.len() / self.height;
            g[s * STRIP..s * STRIP + w].copy_from_slice(&strip[i * w..(i + 1) * w]);
        }
        let envelope = &mut buffers.envelope;
        envelope.build(g, self.d);
        let offset = self.offset;
        let (normalise, cap) = (self.normalise, self.cap);
        envelope.evaluate(offset, out.len(), cap, |j, sq| out[j] = normalise.at(sq));
        // Features inside runs were left out of the envelope: they are 0.
        let zero = normalise.at(0);
        let first = offset.max(0);
        let end = (offset + out.len() as i64).min(self.ncols as i64);
        for p in first..end {
            if g[p as usize] == 0 {
                out[(p - offset) as usize] = zero;
            }
        }
    }
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

/// The lower envelope of the parabolas `g(q)² + (p − q)²` of one row (Felzenszwalb &
/// Huttenlocher's algorithm); parabolas with `g(q) ≥ d` are left out, since the result is capped
/// anyway and they can never bring a value below the cap, and so are features (`g = 0`) with a
/// feature on both sides, which a neighbour beats at every pixel but their own.
struct Envelope<T> {
    /// Centres of the parabolas on the envelope, left to right.
    centres: Vec<T>,
    /// Their heights `g(q)²`.
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

    fn build(&mut self, g: &[u32], d: u32) {
        self.centres.clear();
        self.heights.clear();
        self.starts.clear();
        let n = g.len();
        for (q, &gq) in g.iter().enumerate() {
            if gq >= d || (gq == 0 && q > 0 && q + 1 < n && g[q - 1] == 0 && g[q + 1] == 0) {
                continue;
            }
            // Both fit: q < the column count and g² < d² ≤ 2^62.
            let (q, fq) = (T::of(q as i64), T::of(i64::from(gq) * i64::from(gq)));
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

    /// `distance_map` (both arithmetics) against the brute force, B = `b`, source on `source_rect`.
    fn check(b: Rect, source_rect: Rect, d: u64, seed: u32, density: u32) {
        let source = pseudo_random_map(source_rect, seed, density);
        let expected = brute_force(&source, b, d);
        let mut out = HeightMap::try_zeroed(b).unwrap();
        distance_map(&source, &mut out, d).unwrap();
        assert_eq!(out.data(), expected.as_slice(), "{b:?} from {source_rect:?}, d {d}, seed {seed}");
        let mut wide = HeightMap::try_zeroed(b).unwrap();
        distance_map_in(&source, &mut wide, d, Arithmetic::Wide).unwrap();
        assert_eq!(wide.data(), expected.as_slice(), "{b:?} from {source_rect:?}, d {d}, seed {seed}, i128");
        // Serially (as inside the renderer's fused passes) too.
        let mut serial = HeightMap::try_zeroed(b).unwrap();
        geogen_render::kernels::serially(|| distance_map(&source, &mut serial, d)).unwrap();
        assert_eq!(serial.data(), expected.as_slice(), "{b:?} from {source_rect:?}, d {d}, seed {seed}, serial");
    }

    #[test]
    fn matches_brute_force_on_more_shapes_densities_and_distances() {
        // Wider than a strip of the vertical pass; dense features (runs of them) and all features.
        check(Rect::new(5, -4, 300, 3), Rect::new(5, -4, 300, 3).expand(5), 5, 11, 60);
        check(Rect::new(0, 0, 7, 280), Rect::new(0, 0, 7, 280).expand(3), 3, 12, 90);
        check(Rect::new(0, 0, 9, 6), Rect::new(0, 0, 9, 6).expand(2), 2, 13, 100);
        check(Rect::new(0, 0, 1, 1), Rect::new(0, 0, 1, 1).expand(7), 7, 14, 2);
        // D larger than the map, and beyond the table of square roots (D² ≥ 65536).
        check(Rect::new(-2, 3, 11, 8), Rect::new(-2, 3, 11, 8).expand(40), 40, 15, 1);
        check(Rect::new(1, 1, 6, 5), Rect::new(1, 1, 6, 5).expand(300), 300, 16, 0);
        check(Rect::new(1, 1, 6, 5), Rect::new(-40, -30, 80, 70), 300, 17, 1);
        // D ≥ 2^16: the i128 envelope without being forced (the source is only near B).
        check(Rect::new(3, -2, 12, 9), Rect::new(-20, -25, 50, 60), 70_000, 18, 1);
        check(Rect::new(3, -2, 12, 9), Rect::new(3, -2, 12, 9), 1 << 31, 19, 5);
    }

    #[test]
    fn a_source_that_covers_only_part_of_the_margin_or_of_the_map() {
        let b = Rect::new(0, 0, 20, 15);
        // Source missing on the left and the top, then on the right and the bottom, inside B.
        check(b, Rect::new(6, 4, 30, 30), 8, 21, 4);
        check(b, Rect::new(-10, -10, 22, 19), 8, 22, 4);
        // A source strip across B, one beside it within D, one beyond D (nothing within D).
        check(b, Rect::new(-8, 7, 36, 2), 8, 23, 30);
        check(b, Rect::new(22, -3, 4, 20), 8, 24, 30);
        check(b, Rect::new(40, 0, 5, 5), 8, 25, 50);
    }

    #[test]
    fn near_the_ends_of_the_coordinate_range() {
        let b = Rect::new(i64::MIN + 2, i64::MIN + 1, 9, 7);
        check(b, b.expand(6), 6, 26, 5);
        let b = Rect::new(i64::MAX - 12, i64::MAX - 9, 9, 7);
        check(b, b.expand(6), 6, 27, 5);
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
