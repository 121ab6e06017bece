//! Exact Euclidean distance transform (Felzenszwalb & Huttenlocher, "Distance Transforms of Sampled
//! Functions", 2012): squared distances to the nearest *feature* pixel (height ≤ 0), capped at D².
//!
//! Two separable passes over the rectangle B of the result, reading the source on `expand(B, D)`:
//! 1. **columns** (vertical 1-D distances): for every row of B and every source column within D
//!    of B, the distance to the nearest feature of that column, capped at D. A forward and a
//!    backward scan over the rows carry one counter per column ("rows since the last feature"),
//!    a whole strip of columns at a time: contiguous reads of the source (the backward scan reads
//!    it only below B's rows: on them the forward counters, 0 exactly at the features, say where
//!    the features are), vectorised (an AVX2 build where the processor has it), and the strips
//!    run in parallel, each writing its columns of one row-major scratch that the row pass then
//!    reads in place. The counters are `u16`
//!    when D < 65535 (half the scratch, twice the lanes), `u32` otherwise (D ≤ 2^31).
//! 2. **rows**: for every row of B, the lower envelope of the parabolas `g(x')² + (x − x')²` over
//!    the columns within D (one row of the scratch), evaluated at the columns of B and written
//!    straight into the row of the result; the rows run in parallel, each thread reusing its
//!    envelope's buffers.
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

use geogen_render::rows::{for_each_row, in_serial_mode};
use geogen_render::{HeightMap, Interval, Rect, RenderError};
use rayon::prelude::*;

/// Columns per task of the vertical pass, at most (2–4 KiB of counters: they stay in L1 while a
/// strip's rows stream through, and a strip reads 4 KiB of each source row, long enough to stream),
/// and at least (narrower strips give more tasks but read shorter stretches of each row).
const MAX_STRIP: usize = 1024;
const MIN_STRIP: usize = 256;

/// The vertical pass's strip width for `ncols` columns: about four strips per thread, within
/// [`MIN_STRIP`] and [`MAX_STRIP`] (the result does not depend on it: columns are independent).
fn strip_width(ncols: usize) -> usize {
    ncols.div_ceil(4 * rayon::current_num_threads()).next_multiple_of(64).clamp(MIN_STRIP, MAX_STRIP)
}

/// Rows per task of the row pass.
const MIN_ROWS_PER_TASK: usize = 8;

/// Scratch bytes of [`distance_map`] for a result over `rect` with maximum distance `d`: the
/// vertical distances, 2 B (D < 65535) or 4 B per pixel of B's rows × the columns within D.
/// (Each thread's row buffers, a few bytes per column, are left out like every kernel's
/// per-thread rows.)
pub fn scratch_bytes(rect: Rect, d: u64) -> u64 {
    let columns = rect.width.saturating_add(d.saturating_mul(2));
    let counter = if d < u64::from(u16::MAX) { 2 } else { 4 };
    rect.height.saturating_mul(columns).saturating_mul(counter)
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

    // 1. Vertical distances into one row-major scratch (a row of counters per row of B), strips
    // of columns in parallel; `u16` counters when D fits them (half the memory and twice the lanes).
    let height = b.height as usize;
    let width = b.width as usize;
    // 2. Rows: B's columns as positions relative to the first column within D (within 2^31 of it
    // since B is within D of the source, which is in memory).
    let offset = (b.x as i128 - columns.start as i128).clamp(-(1 << 40), 1 << 40) as i64;
    // i64 suffices when |numerators| < 2^41 and denominators, positions ≤ 2^21 (products < 2^62).
    const SMALL: u64 = 1 << 20;
    let small = arithmetic == Arithmetic::Narrowest
        && d < (1 << 16)
        && (columns.length) < SMALL
        && b.width < SMALL
        && offset.unsigned_abs() < SMALL;
    let shape = Shape { columns, ys: b.y_interval(), d: d as u32, offset, cap, normalise: &normalise };
    match (d < u64::from(u16::MAX), small) {
        (true, true) => shape.run::<u16, i64>(source, out.data_mut(), width, height),
        (true, false) => shape.run::<u16, i128>(source, out.data_mut(), width, height),
        (false, true) => shape.run::<u32, i64>(source, out.data_mut(), width, height),
        (false, false) => shape.run::<u32, i128>(source, out.data_mut(), width, height),
    }
}

/// A vertical distance counter: `u16` when D < 65535, `u32` otherwise (D ≤ 2^31).
trait Counter: Copy + Ord + Send + Sync + 'static {
    const ZERO: Self;
    fn of(v: u32) -> Self;
    fn get(self) -> u32;
    /// `self + 1` (never beyond the cap, which is below the type's maximum).
    fn next(self) -> Self;
    /// The counters as `u16` when they are.
    fn as_u16(counters: &[Self]) -> Option<&[u16]>;
}

impl Counter for u16 {
    const ZERO: u16 = 0;
    #[inline(always)]
    fn of(v: u32) -> u16 {
        v as u16
    }
    #[inline(always)]
    fn get(self) -> u32 {
        u32::from(self)
    }
    #[inline(always)]
    fn next(self) -> u16 {
        self.wrapping_add(1)
    }
    #[inline(always)]
    fn as_u16(counters: &[u16]) -> Option<&[u16]> {
        Some(counters)
    }
}

impl Counter for u32 {
    const ZERO: u32 = 0;
    #[inline(always)]
    fn of(v: u32) -> u32 {
        v
    }
    #[inline(always)]
    fn get(self) -> u32 {
        self
    }
    #[inline(always)]
    fn next(self) -> u32 {
        self.wrapping_add(1)
    }
    #[inline(always)]
    fn as_u16(_: &[u32]) -> Option<&[u16]> {
        None
    }
}

/// The transform's geometry and shared inputs.
struct Shape<'a> {
    /// The source columns within D of B.
    columns: Interval,
    /// B's rows.
    ys: Interval,
    d: u32,
    /// Position of B's first column among the columns.
    offset: i64,
    cap: u64,
    normalise: &'a Normaliser,
}

/// The scratch's base pointer, shared by the strips of the vertical pass, which write disjoint
/// columns of it.
#[derive(Copy, Clone)]
struct Scratch<C>(*mut C);
// SAFETY: the strips write disjoint elements, and the pointer is only read after all of them end.
unsafe impl<C: Send> Send for Scratch<C> {}
// SAFETY: as for `Send`: shared between the strips, each of which writes only its own elements.
unsafe impl<C: Send> Sync for Scratch<C> {}

impl Shape<'_> {
    fn run<C: Counter, T: Exact + Send>(
        &self,
        source: &HeightMap,
        data: &mut [f32],
        width: usize,
        height: usize,
    ) -> Result<(), RenderError> {
        let ncols = self.columns.length as usize;
        let len = ncols * height;
        let mut scratch: Vec<C> = Vec::new();
        scratch.try_reserve_exact(len).map_err(|_| RenderError::Allocation {
            bytes: (len as u64).saturating_mul(std::mem::size_of::<C>() as u64),
        })?;
        let base = Scratch(scratch.as_mut_ptr());
        let strip = strip_width(ncols);
        let nstrips = ncols.div_ceil(strip);
        let vertical = |s: usize| {
            let x0 = s * strip;
            let xs = Interval::new(self.columns.start + x0 as i64, strip.min(ncols - x0) as u64);
            // SAFETY: the scratch holds `len` elements; strip `s` writes only its columns
            // `x0..x0 + xs.length` of each of the `height` rows, which no other strip touches.
            unsafe { vertical_distances(source, xs, self.ys, self.d, base, x0, ncols) }
        };
        if in_serial_mode() {
            (0..nstrips).for_each(vertical);
        } else {
            (0..nstrips).into_par_iter().for_each(vertical);
        }
        // SAFETY: every element of the `len` has been written by exactly one strip (the strips
        // cover every column of every row), and the writers have all finished.
        unsafe { scratch.set_len(len) };
        let rows =
            Rows::<C> { g: &scratch, ncols, offset: self.offset, d: self.d, cap: self.cap, normalise: self.normalise };
        rows.run::<T>(data, width);
        Ok(())
    }
}

/// For the columns `xs` (inside the source's extent) and every row of `ys`: the distance to the
/// nearest feature of the column, capped at `d`, written at columns `x0..x0 + xs.length` of the
/// scratch rows of `ncols` counters (one per row of `ys`).
///
/// # Safety
/// `scratch` must hold `ys.length × ncols` elements, `x0 + xs.length ≤ ncols`, and nobody else may
/// access those columns during the call.
unsafe fn vertical_distances<C: Counter>(
    source: &HeightMap,
    xs: Interval,
    ys: Interval,
    d: u32,
    scratch: Scratch<C>,
    x0: usize,
    ncols: usize,
) {
    #[cfg(target_arch = "x86_64")]
    if use_avx2() {
        // SAFETY: the processor supports AVX2 (checked at run time); the rest is the caller's.
        return unsafe { vertical_distances_avx2(source, xs, ys, d, scratch, x0, ncols) };
    }
    // SAFETY: the caller's.
    unsafe { vertical_distances_of(source, xs, ys, d, scratch, x0, ncols) }
}

/// Whether the AVX2 build of the vertical pass runs.
#[cfg(target_arch = "x86_64")]
fn use_avx2() -> bool {
    !FORCE_BASELINE.with(|f| f.get()) && geogen_simd::enabled(geogen_simd::Isa::Avx2)
}

#[cfg(target_arch = "x86_64")]
thread_local! {
    /// Tests set this to run the baseline build of the vertical pass on a processor with AVX2.
    static FORCE_BASELINE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The same code built for AVX2 (integer operations: the same values, more lanes).
///
/// # Safety
/// AVX2 must be available; the rest as [`vertical_distances`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn vertical_distances_avx2<C: Counter>(
    source: &HeightMap,
    xs: Interval,
    ys: Interval,
    d: u32,
    scratch: Scratch<C>,
    x0: usize,
    ncols: usize,
) {
    // SAFETY: the caller's.
    unsafe { vertical_distances_of(source, xs, ys, d, scratch, x0, ncols) }
}

/// [`vertical_distances`]' body.
///
/// # Safety
/// As [`vertical_distances`].
#[inline(always)]
unsafe fn vertical_distances_of<C: Counter>(
    source: &HeightMap,
    xs: Interval,
    ys: Interval,
    d: u32,
    scratch: Scratch<C>,
    x0: usize,
    ncols: usize,
) {
    let width = xs.length as usize;
    let source_rows = source.rect().y_interval();
    let margin = i128::from(d);
    let cap = C::of(d);
    // One step of a scan: a feature resets the counter, anything else adds one (up to d). A
    // function, not a closure, so that it is inlined into the AVX2 build (a closure is compiled
    // on its own, for the baseline); it asks for the row `AHEAD` rows on in the scan's direction,
    // since a strip reads only a short stretch of each long source row.
    #[inline(always)]
    fn step<C: Counter>(source: &HeightMap, xs: Interval, cap: C, counters: &mut [C], y: i64, ahead: i64) {
        if source.rect().y_interval().contains(y) {
            prefetch_span(source, xs, y.saturating_add(ahead));
            for (c, &h) in counters.iter_mut().zip(source.row_span(y, xs)) {
                let up = c.next().min(cap);
                *c = if is_feature(h) { C::ZERO } else { up };
            }
        } else {
            counters.iter_mut().for_each(|c| *c = c.next().min(cap));
        }
    }
    // SAFETY: row `i` of the strip's columns, inside the scratch, touched by this call only.
    let row = |i: usize| unsafe { std::slice::from_raw_parts_mut(scratch.0.add(i * ncols + x0), width) };
    let mut counters = vec![cap; width];
    // Forward, from the first source row within d above ys (or ys' first row).
    // (In i128: near the ends of the coordinate range ys ± d does not fit an i64; ys.end() does.)
    let (ys_start, ys_end) = (i128::from(ys.start), ys.end());
    let first = i128::from(source_rows.start).max(ys_start - margin).min(ys_start) as i64;
    let end = ys_end as i64;
    for y in first..end {
        step(source, xs, cap, &mut counters, y, AHEAD);
        if y >= ys.start {
            // Written, not read: the memory may be uninitialised until then.
            let at = (y - ys.start) as usize;
            // SAFETY: row `at` of the strip's columns, inside the scratch, touched by this call only.
            unsafe { std::ptr::copy_nonoverlapping(counters.as_ptr(), scratch.0.add(at * ncols + x0), width) };
        }
    }
    // Backward, from the last source row within d below ys (or ys' last row). Below ys the
    // source is read as in the forward scan; on ys' rows the forward counters say which pixels
    // are features (a counter is 0 exactly there: elsewhere it is at least 1, since d ≥ 1, also
    // on rows without source, which count as non-features), so the scan reads the scratch row it
    // updates (2 or 4 bytes a pixel) instead of the source row as well (4 more, the larger
    // share of a pass that waits on memory): the same counters, the same minimum.
    counters.fill(cap);
    let last = source_rows.end().min(ys_end + margin).max(ys_end) as i64;
    for y in (end..last).rev() {
        step(source, xs, cap, &mut counters, y, -AHEAD);
    }
    for y in (ys.start..end).rev() {
        let i = (y - ys.start) as usize;
        if let Some(ahead) = i.checked_sub(AHEAD as usize) {
            prefetch_counters(row(ahead));
        }
        back(row(i), &mut counters, cap);
    }
    // One step of the backward scan on a row of ys, in pieces copied to the stack: a plain loop
    // over the row and the counters stayed scalar (the compiler's overlap check, hoisted out of
    // the loop over the rows, gave up on rows that go backwards); on arrays it vectorises.
    #[inline(always)]
    fn back<C: Counter>(row: &mut [C], counters: &mut [C], cap: C) {
        #[inline(always)]
        fn one<C: Counter>(o: &mut C, c: &mut C, cap: C) {
            let up = c.next().min(cap);
            *c = if *o == C::ZERO { C::ZERO } else { up };
            *o = (*o).min(*c);
        }
        const PIECE: usize = 32;
        let mut rows = row.chunks_exact_mut(PIECE);
        let mut counts = counters.chunks_exact_mut(PIECE);
        for (o, c) in (&mut rows).zip(&mut counts) {
            let (mut oo, mut cc) = ([C::ZERO; PIECE], [C::ZERO; PIECE]);
            oo.copy_from_slice(o);
            cc.copy_from_slice(c);
            for k in 0..PIECE {
                one(&mut oo[k], &mut cc[k], cap);
            }
            o.copy_from_slice(&oo);
            c.copy_from_slice(&cc);
        }
        for (o, c) in rows.into_remainder().iter_mut().zip(counts.into_remainder()) {
            one(o, c, cap);
        }
    }
}

/// Asks for the cache lines of a scratch row's stretch (rows a strip's width apart: a stride the
/// hardware's prefetcher does not follow, as for the source in [`prefetch_span`]).
#[inline(always)]
fn prefetch_counters<C>(counters: &[C]) {
    #[cfg(target_arch = "x86_64")]
    for line in counters.chunks((64 / std::mem::size_of::<C>().max(1)).max(1)) {
        // SAFETY: a prefetch is a hint; the address is inside the slice.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(line.as_ptr().cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = counters;
}

/// How many rows ahead the vertical scans ask for their source: a strip reads 1–4 KiB of each
/// source row and the next such stretch a whole row further on, a stride the hardware's prefetcher
/// does not follow.
const AHEAD: i64 = 4;

/// Asks for the cache lines of row `y`'s stretch `xs` of the source (nothing outside the source).
#[inline(always)]
fn prefetch_span(source: &HeightMap, xs: Interval, y: i64) {
    #[cfg(target_arch = "x86_64")]
    if source.rect().y_interval().contains(y) {
        let span = source.row_span(y, xs);
        for line in span.chunks(16) {
            // SAFETY: a prefetch is a hint; the address is inside the slice.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(line.as_ptr().cast()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (source, xs, y);
}

/// The row pass's shared inputs.
struct Rows<'a, C> {
    /// The vertical distances, a row of `ncols` per row of B.
    g: &'a [C],
    ncols: usize,
    /// Position of B's first column among the columns.
    offset: i64,
    d: u32,
    cap: u64,
    normalise: &'a Normaliser,
}

impl<C: Counter> Rows<'_, C> {
    fn run<T: Exact + Send>(&self, data: &mut [f32], width: usize) {
        let init = || Envelope::<T>::with_capacity(self.ncols);
        if in_serial_mode() {
            let mut envelope = init();
            for (i, row) in data.chunks_mut(width).enumerate() {
                self.row(i, row, &mut envelope);
            }
        } else {
            data.par_chunks_mut(width)
                .with_min_len(MIN_ROWS_PER_TASK)
                .enumerate()
                .for_each_init(init, |envelope, (i, row)| self.row(i, row, envelope));
        }
    }

    /// Row `i` of B.
    fn row<T: Exact>(&self, i: usize, out: &mut [f32], envelope: &mut Envelope<T>) {
        let g = &self.g[i * self.ncols..(i + 1) * self.ncols];
        if let Some(g16) = C::as_u16(g).filter(|_| self.d <= PRUNE_MAX_D) {
            envelope.candidates.select(g16, self.d);
            envelope.build_from_candidates();
        } else {
            envelope.build(g, self.d);
        }
        let offset = self.offset;
        let (normalise, cap) = (self.normalise, self.cap);
        envelope.evaluate(offset, out.len(), cap, |j, sq| out[j] = normalise.at(sq));
        // Features inside runs were left out of the envelope: they are 0.
        let zero = normalise.at(0);
        let first = offset.max(0);
        let end = (offset + out.len() as i64).min(self.ncols as i64);
        if first < end {
            // A select rather than a branch per pixel: it vectorises.
            let (g, out) =
                (&g[first as usize..end as usize], &mut out[(first - offset) as usize..(end - offset) as usize]);
            for (o, &gq) in out.iter_mut().zip(g) {
                *o = if gq == C::ZERO { zero } else { *o };
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
    /// The parabolas on the envelope, left to right (one array: each step reads all of a
    /// parabola's fields together).
    parabolas: Vec<Parabola<T>>,
    /// The row's columns that may be on the envelope (when D ≤ [`PRUNE_MAX_D`]).
    candidates: Candidates,
}

/// Adds the parabola of column `q` with height `fq = g(q)²` to the lower envelope of the columns
/// before it, first dropping the parabolas it hides.
#[inline(always)]
fn push_parabola<T: Exact>(parabolas: &mut Vec<Parabola<T>>, q: T, fq: T) {
    let level = fq + q * q;
    while let Some(top) = parabolas.last() {
        // Where the new parabola becomes lower than the top one (the same integers as
        // `(fq + q²) − (fv + v²)` over `2 (q − v)`).
        let start = Fraction { numerator: level - top.level, denominator: T::of(2) * (q - top.centre) };
        // The top one starts at its `start` (−∞ for the first one); if the new one is already
        // lower there, the top one is never the lowest and goes.
        if parabolas.len() > 1 && start.at_most(top.start) {
            parabolas.pop();
            continue;
        }
        parabolas.push(Parabola { centre: q, height: fq, level, start });
        return;
    }
    let start = Fraction { numerator: T::of(0), denominator: T::of(1) };
    parabolas.push(Parabola { centre: q, height: fq, level, start });
}

/// A parabola of the envelope.
#[derive(Copy, Clone, Debug)]
struct Parabola<T> {
    /// Its centre q.
    centre: T,
    /// Its height `g(q)²`.
    height: T,
    /// `g(q)² + q²`, the part of the intersection's numerator it brings (computed once).
    level: T,
    /// Where it takes over from the previous parabola (unused for the first one).
    start: Fraction<T>,
}

impl<T: Exact> Envelope<T> {
    fn with_capacity(n: usize) -> Envelope<T> {
        Envelope { parabolas: Vec::with_capacity(n), candidates: Candidates::default() }
    }

    /// [`Envelope::build`] over the columns [`Candidates::select`] kept: the same envelope
    /// (the columns it leaves out are never the only lowest parabola anywhere), with fewer
    /// columns and no test per column.
    fn build_from_candidates(&mut self) {
        let parabolas = &mut self.parabolas;
        parabolas.clear();
        let squares = &self.candidates.squares;
        for &q in self.candidates.kept() {
            push_parabola(parabolas, T::of(i64::from(q)), T::of(i64::from(squares[PAD + q as usize])));
        }
    }

    fn build<C: Counter>(&mut self, g: &[C], d: u32) {
        let parabolas = &mut self.parabolas;
        parabolas.clear();
        let n = g.len();
        for (q, &gq) in g.iter().enumerate() {
            let gq = gq.get();
            if gq >= d || (gq == 0 && q > 0 && q + 1 < n && g[q - 1] == C::ZERO && g[q + 1] == C::ZERO) {
                continue;
            }
            // Both fit: q < the column count and g² < d² ≤ 2^62.
            push_parabola(parabolas, T::of(q as i64), T::of(i64::from(gq) * i64::from(gq)));
        }
    }

    /// Calls `out(i, min(cap, envelope(offset + i)))` for `i` in `0..n`, in increasing order.
    fn evaluate(&self, offset: i64, n: usize, cap: u64, mut out: impl FnMut(usize, u64)) {
        let parabolas = &self.parabolas[..];
        let Some(mut current) = parabolas.first() else {
            (0..n).for_each(|i| out(i, cap));
            return;
        };
        let cap_t = T::of(cap as i64);
        let mut rest = &parabolas[1..];
        for i in 0..n {
            let p = T::of(offset + i as i64);
            while let Some((next, after)) = rest.split_first() {
                if !next.start.below(p) {
                    break;
                }
                current = next;
                rest = after;
            }
            let dp = p - current.centre;
            let v = current.height + dp * dp;
            out(i, if v < cap_t { v.to_u64() } else { cap });
        }
    }
}

/// The largest D for which the row pass prunes its columns first ([`Candidates`]): squares up to
/// D² ≤ 2^30, plus at most `REACH²`, compare exactly as `u32` (and as `i32` in the AVX2 lanes).
const PRUNE_MAX_D: u32 = 1 << 15;

/// How far from a column [`Candidates`] looks for columns that beat it (each step further costs
/// two loads, adds and minimums per eight columns).
const REACH: usize = 5;

/// Padding (in columns) on each side of a row's squares: at least the window's reach, and enough
/// that the last block of eight columns (up to seven past the row) reads inside the buffer.
const PAD: usize = 16;
const _: () = assert!(REACH >= 1 && REACH <= PAD - 8);

/// A square larger than any real one (≤ 2^30) that stays below 2^31 after adding `REACH²`: the
/// squares of the columns beyond the row's ends.
const FAR: u32 = (1 << 30) + (1 << 20);

/// The columns of a row that may be on the lower envelope, found before the envelope is built
/// (eight at a time where the processor has AVX2).
///
/// A column `l` is left out when (besides `g(l) ≥ D` and a feature between two features, which
/// the envelope has always left out) a column `l'` within [`REACH`] on each side beats it on that
/// side: `g(l')² + (l − l')² ≤ g(l)²` for some `l' < l` and for some `l' > l`. The parabolas
/// `f_l(p) = g(l)² + (p − l)²` of two columns differ by a line, so `f_l'(l) ≤ f_l(l)` with
/// `l' < l` means `f_l' ≤ f_l` at every `p ≤ l`, and symmetrically on the right: `l` is never
/// lower than the pruned-to envelope anywhere. Every such `l'` has a smaller `g` than `l`, so
/// among the lowest parabolas at any `p` the one with the smallest `g` is never left out (a
/// feature between features loses only at its own pixel, which the row pass sets to 0), and
/// the envelope of the kept columns takes the same minimum at every pixel: the same bytes.
/// All values are integers below 2^31, exact in `u32`.
#[derive(Default)]
struct Candidates {
    /// `g²` of the row's columns, with [`PAD`] columns of [`FAR`] on each side.
    squares: Vec<u32>,
    /// The kept columns, left to right, are its first `count` (it has room for a block of eight
    /// past the last column).
    kept: Vec<u32>,
    count: usize,
}

impl Candidates {
    /// The kept columns, left to right.
    fn kept(&self) -> &[u32] {
        &self.kept[..self.count]
    }
}

impl Candidates {
    /// Fills `kept` with the columns of the row `g` (all `≤ d ≤ PRUNE_MAX_D`) that may be on the
    /// envelope.
    fn select(&mut self, g: &[u16], d: u32) {
        #[cfg(target_arch = "x86_64")]
        if use_avx2() {
            // SAFETY: the processor supports AVX2 (checked at run time).
            return unsafe { self.select_avx2(g, d) };
        }
        self.select_scalar(g, d);
    }

    /// Fills `squares` and sizes `kept` (each written once: the rows of a pass have one length,
    /// so after the first row only the squares are written).
    #[inline(always)]
    fn prepare(&mut self, g: &[u16]) {
        let n = g.len();
        if self.squares.len() != n + 2 * PAD {
            self.squares.clear();
            self.squares.resize(n + 2 * PAD, FAR);
        }
        for (s, &gq) in self.squares[PAD..PAD + n].iter_mut().zip(g) {
            *s = u32::from(gq) * u32::from(gq);
        }
        if self.kept.len() < n + 8 {
            self.kept.resize(n + 8, 0);
        }
    }

    /// Whether column `q` (its square at `PAD + q`) is kept.
    #[inline(always)]
    fn keeps(squares: &[u32], q: usize, cap: u32) -> bool {
        let at = PAD + q;
        let s = squares[at];
        let left = (1..=REACH).map(|k| squares[at - k] + (k * k) as u32).min().unwrap_or(FAR);
        let right = (1..=REACH).map(|k| squares[at + k] + (k * k) as u32).min().unwrap_or(FAR);
        let dominated = left <= s && right <= s;
        let inner_feature = s == 0 && squares[at - 1] == 0 && squares[at + 1] == 0;
        s < cap && !dominated && !inner_feature
    }

    /// The definition, one column at a time (also the build without AVX2).
    fn select_scalar(&mut self, g: &[u16], d: u32) {
        self.prepare(g);
        let cap = d * d;
        let mut n = 0;
        for q in 0..g.len() {
            self.kept[n] = q as u32;
            n += usize::from(Self::keeps(&self.squares, q, cap));
        }
        self.count = n;
    }

    /// The same selection, eight columns at a time: the kept lanes' columns are packed to the
    /// front by a permutation from a table indexed by the lanes' mask, written eight at a time.
    ///
    /// # Safety
    /// AVX2 must be available.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn select_avx2(&mut self, g: &[u16], d: u32) {
        use std::arch::x86_64::*;
        self.prepare(g);
        let n = g.len();
        let cap = (d * d) as i32;
        let squares = self.squares.as_ptr();
        let kept = self.kept.as_mut_ptr();
        let mut count = 0usize;
        // SAFETY: for a block at q < n, the loads read the squares from `PAD + q - REACH` ≥ 0 to
        // `PAD + q + 7 + REACH` < n + 2 PAD (REACH ≤ PAD − 8), inside the buffer; every store writes
        // 8 indices at `count ≤ q < n`, inside the n + 8 of `kept`.
        unsafe {
            let load = |at: usize| _mm256_loadu_si256(squares.add(at).cast());
            let one = _mm256_set1_epi32(1);
            let zero = _mm256_setzero_si256();
            let limit = _mm256_set1_epi32(cap);
            let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
            let mut q = 0;
            while q < n {
                let at = PAD + q;
                let s = load(at);
                let (l1, r1) = (load(at - 1), load(at + 1));
                let (mut left, mut right) = (_mm256_add_epi32(l1, one), _mm256_add_epi32(r1, one));
                for k in 2..=REACH {
                    let kk = _mm256_set1_epi32((k * k) as i32);
                    left = _mm256_min_epi32(left, _mm256_add_epi32(load(at - k), kk));
                    right = _mm256_min_epi32(right, _mm256_add_epi32(load(at + k), kk));
                }
                // left ≤ s and right ≤ s: neither is greater.
                let beaten = _mm256_andnot_si256(
                    _mm256_cmpgt_epi32(left, s),
                    _mm256_xor_si256(_mm256_cmpgt_epi32(right, s), _mm256_set1_epi32(-1)),
                );
                let inner = _mm256_and_si256(
                    _mm256_cmpeq_epi32(s, zero),
                    _mm256_and_si256(_mm256_cmpeq_epi32(l1, zero), _mm256_cmpeq_epi32(r1, zero)),
                );
                let within = _mm256_cmpgt_epi32(limit, s);
                let keep = _mm256_andnot_si256(_mm256_or_si256(beaten, inner), within);
                let mask = _mm256_movemask_ps(_mm256_castsi256_ps(keep)) as usize;
                let order = _mm256_cvtepu8_epi32(_mm_loadl_epi64(PACK[mask].as_ptr().cast()));
                let columns = _mm256_add_epi32(_mm256_set1_epi32(q as i32), lanes);
                _mm256_storeu_si256(kept.add(count).cast(), _mm256_permutevar8x32_epi32(columns, order));
                count += mask.count_ones() as usize;
                q += 8;
            }
        }
        self.count = count;
    }
}

/// For each mask of eight lanes, the kept lanes in order (then anything): the permutation that
/// packs them to the front.
#[cfg(target_arch = "x86_64")]
static PACK: [[u8; 8]; 256] = {
    let mut table = [[0u8; 8]; 256];
    let mut mask = 0;
    while mask < 256 {
        let (mut lane, mut n) = (0, 0);
        while lane < 8 {
            if mask & (1 << lane) != 0 {
                table[mask][n] = lane as u8;
                n += 1;
            }
            lane += 1;
        }
        mask += 1;
    }
    table
};

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
        geogen_render::rows::serially(|| distance_map(&source, &mut serial, d)).unwrap();
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

    /// The counters' two widths on either side of their boundary (D = 65534 takes `u16`, 65535
    /// `u32`).
    #[test]
    fn both_counter_widths_match_brute_force() {
        for d in [65_533, 65_534, 65_535, 65_536] {
            check(Rect::new(-4, 6, 15, 9), Rect::new(-30, -20, 70, 60), d, 31, 1);
            check(Rect::new(-4, 6, 300, 4), Rect::new(-4, 6, 300, 4).expand(3), d, 32, 3);
        }
    }

    /// The baseline build of the vertical pass (forced, on this thread: serial mode) gives the
    /// same bits as the dispatched one (AVX2 where the processor has it) and as the definition.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn baseline_vertical_pass_equals_the_dispatched_one() {
        let cases = [
            (Rect::new(5, -4, 600, 7), 5, 60),
            (Rect::new(0, 0, 9, 280), 3, 90),
            (Rect::new(-2, 3, 520, 20), 40, 1),
            (Rect::new(1, 1, 30, 25), 70_000, 2),
        ];
        for (i, (b, d, density)) in cases.into_iter().enumerate() {
            let source = pseudo_random_map(b.expand(d.min(50)), 40 + i as u32, density);
            let expected = brute_force(&source, b, d);
            let mut dispatched = HeightMap::try_zeroed(b).unwrap();
            distance_map(&source, &mut dispatched, d).unwrap();
            let mut baseline = HeightMap::try_zeroed(b).unwrap();
            FORCE_BASELINE.with(|f| f.set(true));
            geogen_render::rows::serially(|| distance_map(&source, &mut baseline, d)).unwrap();
            FORCE_BASELINE.with(|f| f.set(false));
            assert_eq!(dispatched.data(), expected.as_slice(), "{b:?}, d {d}");
            assert_eq!(baseline.data(), expected.as_slice(), "{b:?}, d {d}, baseline");
        }
    }

    /// A row of vertical distances: runs of features, short and long gaps, values at the cap.
    fn pseudo_random_row(n: usize, d: u32, seed: u32) -> Vec<u16> {
        (0..n as u32)
            .map(|i| {
                let h = geogen_random::hash2(seed, i);
                match h % 4 {
                    0 => 0,
                    1 => ((h >> 8) % 4).min(d) as u16,
                    2 => ((h >> 8) % (d + 1)) as u16,
                    _ => ((h >> 8) % 3 + d.saturating_sub(2)).min(d) as u16,
                }
            })
            .collect()
    }

    /// The pruned envelope equals the full one at every pixel (the evaluation, and the select of
    /// features inside runs that the row pass applies after it), and the AVX2 selection of the
    /// columns equals the scalar one, for every length up to a few blocks of eight and distances
    /// up to [`PRUNE_MAX_D`].
    #[test]
    fn pruned_envelope_equals_the_full_one() {
        for (k, d) in [1u32, 2, 3, 5, 12, 250, 4000, PRUNE_MAX_D].into_iter().enumerate() {
            for n in (1..40).chain([100, 517]) {
                let g = pseudo_random_row(n, d, 1000 * k as u32 + n as u32);
                let cap = u64::from(d) * u64::from(d);
                let mut full = Envelope::<i64>::with_capacity(n);
                full.build(&g, d);
                let mut pruned = Envelope::<i64>::with_capacity(n);
                pruned.candidates.select_scalar(&g, d);
                let scalar = pruned.candidates.kept().to_vec();
                #[cfg(target_arch = "x86_64")]
                if geogen_simd::testable(geogen_simd::Isa::Avx2) {
                    // SAFETY: checked just above.
                    unsafe { pruned.candidates.select_avx2(&g, d) };
                    assert_eq!(pruned.candidates.kept(), scalar.as_slice(), "d {d}, n {n}");
                }
                pruned.build_from_candidates();
                let offset = -3;
                let width = n + 6;
                let values = |e: &Envelope<i64>| {
                    let mut v = vec![0u64; width];
                    e.evaluate(offset, width, cap, |j, sq| v[j] = sq);
                    let inner = |p: i64| (0..n as i64).contains(&p) && g[p as usize] == 0;
                    (0..width).map(|j| if inner(offset + j as i64) { 0 } else { v[j] }).collect::<Vec<_>>()
                };
                assert_eq!(values(&pruned), values(&full), "d {d}, n {n}");
            }
        }
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
