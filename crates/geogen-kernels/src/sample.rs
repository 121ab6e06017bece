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

use super::coherent::Isa;
#[cfg(target_arch = "x86_64")]
use crate::lanes64::Lanes64;

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
    let near =
        x.abs() < NEAR && y.abs() < NEAR && r.x.unsigned_abs() < EXTENT as u64 && r.y.unsigned_abs() < EXTENT as u64;
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

/// The builds of the batched sampler ([`bilinear_many`]). Every one gives the bits of
/// [`bilinear`]; which one runs is a matter of speed only (the tests force each).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Sampler {
    /// One position at a time ([`bilinear`] itself).
    Scalar,
    /// Four positions at a time in AVX2 `f64` lanes.
    Avx2,
    /// Eight positions at a time in AVX-512 `f64` lanes, with mask registers for the selections.
    Avx512,
}

impl Sampler {
    /// Whether this machine can run it.
    pub fn is_available(self) -> bool {
        match self {
            Sampler::Scalar => true,
            Sampler::Avx2 => geogen_simd::Isa::Avx2.is_supported(),
            Sampler::Avx512 => geogen_simd::Isa::Avx512.is_supported(),
        }
    }

    /// All available ones (for the tests and the benchmarks).
    pub fn available() -> Vec<Sampler> {
        [Sampler::Scalar, Sampler::Avx2, Sampler::Avx512].into_iter().filter(|s| s.is_available()).collect()
    }
}

/// The sampler a kernel's instruction set selects: `Isa::Avx2` (the vector one) takes AVX-512
/// where the process runs AVX-512 kernels.
impl From<Isa> for Sampler {
    fn from(isa: Isa) -> Sampler {
        match isa {
            Isa::Scalar => Sampler::Scalar,
            Isa::Avx2 if geogen_simd::enabled(geogen_simd::Isa::Avx512) => Sampler::Avx512,
            Isa::Avx2 => Sampler::Avx2,
        }
    }
}

/// The bilinear samples of `map` at `(xs[i], ys[i])` into `out[i]`: the bits of [`bilinear`] at
/// each position, several positions at a time on AVX2 or AVX-512 when `sampler` says so, the
/// machine has it and the map's indexes fit in `i32` (otherwise one at a time). The slices have
/// the same length.
pub fn bilinear_many(map: &HeightMap, xs: &[f64], ys: &[f64], out: &mut [f32], sampler: impl Into<Sampler>) {
    let n = out.len().min(xs.len()).min(ys.len());
    let (xs, ys, out) = (&xs[..n], &ys[..n], &mut out[..n]);
    let sampler = sampler.into();
    #[cfg(target_arch = "x86_64")]
    if sampler != Sampler::Scalar && avx2::fits(map) {
        if sampler == Sampler::Avx512 && Sampler::Avx512.is_available() {
            // SAFETY: the processor has AVX-512F and VL (checked just above) and the map fits the
            // vector path.
            unsafe { avx512::bilinear_many(map, xs, ys, out) };
            return;
        }
        if Sampler::Avx2.is_available() {
            // SAFETY: the processor has AVX2 (checked just above) and the map fits the vector path.
            unsafe { avx2::bilinear_many(map, xs, ys, out) };
            return;
        }
    }
    for ((h, &x), &y) in out.iter_mut().zip(xs).zip(ys) {
        *h = bilinear(map, x, y);
    }
}

/// Positions per call of [`bilinear_many`] in the resampling loops (a block's row, on the stack).
pub const BATCH: usize = 64;

/// A new map over `rect` whose pixel `(px, py)` is the bilinear sample of `source` at
/// `position(px, py)` (rows in parallel). `position` must be a pure function of the absolute pixel
/// coordinates, which is what makes the result the same in every tile.
pub fn resample(
    source: &HeightMap,
    rect: Rect,
    position: impl Fn(i64, i64) -> (f64, f64) + Sync + Send,
) -> Result<HeightMap, RenderError> {
    resample_on(Isa::best(), source, rect, position)
}

/// [`resample`] on `isa` (the tests force each).
pub fn resample_on(
    isa: impl Into<Sampler>,
    source: &HeightMap,
    rect: Rect,
    position: impl Fn(i64, i64) -> (f64, f64) + Sync + Send,
) -> Result<HeightMap, RenderError> {
    let isa = isa.into();
    resample_rows(isa, source, rect, |px0, py, xs: &mut [f64], ys: &mut [f64]| {
        for (i, (x, y)) in xs.iter_mut().zip(ys.iter_mut()).enumerate() {
            (*x, *y) = position(px0 + i as i64, py);
        }
    })
}

/// [`resample_on`] with the positions given a row piece at a time: `positions(px0, py, xs, ys)`
/// writes the source positions of pixels `(px0 + i, py)` into `xs[i]`, `ys[i]`; each must be a
/// pure function of its pixel's absolute coordinates.
pub fn resample_rows(
    isa: impl Into<Sampler>,
    source: &HeightMap,
    rect: Rect,
    positions: impl Fn(i64, i64, &mut [f64], &mut [f64]) + Sync + Send,
) -> Result<HeightMap, RenderError> {
    // Blocks of BLOCK_COLUMNS columns by a band's rows: a rotation's source positions for a row
    // run across many source rows, so row by row nearly every pixel would load a cache line of
    // its own; a block's sources lie in a small patch that stays in cache while the block is
    // filled. Every pixel is still computed alone, from its own coordinates.
    //
    // The positions of the next block are computed one row at a time while the current block is
    // filled, and its source lines are prefetched then (from one row in PREFETCH_EVERY_ROWS): a
    // rotated walk defeats the hardware prefetcher (each block reads short pieces of some 70
    // source rows 16 KB apart), so without this many new lines are a full memory latency the
    // gathers wait on.
    let isa = isa.into();
    let block = |py0: i64, x0: i64, band: &mut [f32]| {
        let width = rect.width as usize;
        if width == 0 {
            return;
        }
        let rows = band.len() / width;
        let cells = BLOCK_COLUMNS * rows;
        let (mut now_x, mut now_y) = (vec![0.0f64; cells], vec![0.0f64; cells]);
        let (mut next_x, mut next_y) = (vec![0.0f64; cells], vec![0.0f64; cells]);
        // Row r of the block starting at column bx: its positions, then the prefetch of their lines.
        let positions = |bx: usize, r: usize, xs: &mut [f64], ys: &mut [f64]| {
            let n = (bx + BLOCK_COLUMNS).min(width) - bx;
            let py = py0 + r as i64;
            let (xs, ys) = (&mut xs[r * BLOCK_COLUMNS..][..n], &mut ys[r * BLOCK_COLUMNS..][..n]);
            positions(x0 + bx as i64, py, xs, ys);
            if r.is_multiple_of(PREFETCH_EVERY_ROWS) {
                prefetch_sources(source, xs, ys);
            }
        };
        for r in 0..rows {
            positions(0, r, &mut now_x, &mut now_y);
        }
        for bx in (0..width).step_by(BLOCK_COLUMNS) {
            let end = (bx + BLOCK_COLUMNS).min(width);
            let n = end - bx;
            let ahead = end < width;
            for (r, row) in band.chunks_mut(width).enumerate() {
                if ahead {
                    positions(end, r, &mut next_x, &mut next_y);
                }
                let (xs, ys) = (&now_x[r * BLOCK_COLUMNS..][..n], &now_y[r * BLOCK_COLUMNS..][..n]);
                bilinear_many(source, xs, ys, &mut row[bx..end], isa);
            }
            std::mem::swap(&mut now_x, &mut next_x);
            std::mem::swap(&mut now_y, &mut next_y);
        }
    };
    map_by_bands(rect, BLOCK_ROWS, block)
}

/// [`resample_rows`] with [`linear_positions`]: the map whose pixel `(px, py)` is the bilinear
/// sample of `source` at `(i11 × px + i12 × py, i21 × px + i22 × py)` (`inverse` is
/// `[i11, i12, i21, i22]`), the bits of [`bilinear`] at [`linear_positions`]' positions on every
/// sampler. On AVX-512 (where the map fits the vector path and every `px` is below 2^51 in
/// magnitude) the positions are computed in the sampler's own registers, eight pixels at a time,
/// never written to memory; a block whose positions all lie at least a pixel inside the map (its
/// four corners decide it: a linear map sends the block to a parallelogram) is sampled without
/// the clamps and the 2^52 checks.
pub fn resample_linear(
    sampler: impl Into<Sampler>,
    source: &HeightMap,
    rect: Rect,
    inverse: [f64; 4],
) -> Result<HeightMap, RenderError> {
    let sampler = sampler.into();
    let isa = if sampler == Sampler::Scalar { Isa::Scalar } else { Isa::Avx2 };
    #[cfg(target_arch = "x86_64")]
    if sampler == Sampler::Avx512
        && Sampler::Avx512.is_available()
        && avx2::fits(source)
        && rect.x.unsigned_abs() < 1 << 51
        && rect.width < 1 << 51
    {
        let block = |py0: i64, x0: i64, band: &mut [f32]| {
            let width = rect.width as usize;
            if width > 0 {
                // SAFETY: AVX-512F and VL (checked above), `fits(source)`, and every column of the
                // band below 2^52 in magnitude.
                unsafe { avx512::linear_band(source, inverse, py0, x0, width, band) };
            }
        };
        return map_by_bands(rect, BLOCK_ROWS, block);
    }
    resample_rows(sampler, source, rect, |px0, py, xs: &mut [f64], ys: &mut [f64]| {
        linear_positions(isa, inverse, px0, py, xs, ys)
    })
}

/// Whether every position [`linear_positions`] gives the pixels of columns `px` (first, last)
/// and rows `py` (first, last) lies at least a pixel inside `map` on both axes (so its floor and
/// the next index are inside, unclamped): decided from the four corners' positions, computed with
/// the same arithmetic. Every position between them is within 2^-9 of the parallelogram they span
/// when the products are below 2^40 (which is required), so a pixel's margin covers the rounding.
/// `px` below 2^52 in magnitude.
fn linear_block_inside(map: &HeightMap, inverse: [f64; 4], px: (i64, i64), py: (i64, i64)) -> bool {
    const LIMIT: f64 = (1u64 << 40) as f64;
    let r = map.rect();
    if r.is_empty() || r.x.unsigned_abs() >= 1 << 60 || r.y.unsigned_abs() >= 1 << 60 {
        return false;
    }
    let [i11, i12, i21, i22] = inverse;
    let (xa, xb, ya, yb) = (px.0 as f64, px.1 as f64, py.0 as f64, py.1 as f64);
    let (far_x, far_y) = (xa.abs().max(xb.abs()), ya.abs().max(yb.abs()));
    // NaN or infinite coefficients fail here (the comparisons are false).
    if !(i11.abs() * far_x + i12.abs() * far_y < LIMIT && i21.abs() * far_x + i22.abs() * far_y < LIMIT) {
        return false;
    }
    let inside = |c: f64, start: i64, len: u64| {
        let (lo, hi) = (start as f64 + 1.0, (start + len as i64 - 2) as f64);
        c >= lo && c <= hi
    };
    [(xa, ya), (xb, ya), (xa, yb), (xb, yb)].iter().all(|&(x, y)| {
        let (sx, sy) = (i11 * x + i12 * y, i21 * x + i22 * y);
        inside(sx, r.x, r.width) && inside(sy, r.y, r.height)
    })
}

/// The source positions of a linear map's pixels `(px0 + i, py)`: `x = i11 × px + i12 × py` and
/// `y = i21 × px + i22 × py` in `f64`, with `px` and `py` converted exactly as `as f64` does, each
/// a plain product and sum (no FMA), so the same bits whatever the path. On AVX2 (when every
/// `px` is below 2^52 in magnitude, where stepping by 1.0 is exact), four pixels at a time.
pub fn linear_positions(isa: Isa, inverse: [f64; 4], px0: i64, py: i64, xs: &mut [f64], ys: &mut [f64]) {
    let n = xs.len().min(ys.len());
    let (xs, ys) = (&mut xs[..n], &mut ys[..n]);
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx2 && px0.unsigned_abs() < 1 << 52 && (n as u64) < 1 << 52 && Isa::Avx2.is_available() {
        // SAFETY: the processor has AVX2 (checked just above).
        done = unsafe { avx2::linear_positions(inverse, px0, py, xs, ys) };
    }
    let _ = isa;
    let [i11, i12, i21, i22] = inverse;
    let y = py as f64;
    for (i, (xo, yo)) in xs.iter_mut().zip(ys.iter_mut()).enumerate().skip(done) {
        let x = (px0 + i as i64) as f64;
        (*xo, *yo) = (i11 * x + i12 * y, i21 * x + i22 * y);
    }
}

/// [`linear_positions`] `L::D_LANES` pixels a step, the pixel coordinates as exact `f64` integers
/// stepping by `D_LANES` (exact while every `px` is below 2^52 in magnitude), `i12 × py` and
/// `i22 × py` once (the same product every pixel). Returns how many positions it wrote.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn linear_positions_lanes<L: Lanes64>(inverse: [f64; 4], px0: i64, py: i64, xs: &mut [f64], ys: &mut [f64]) -> usize {
    let [i11, i12, i21, i22] = inverse;
    let y = py as f64;
    let (a11, a21) = (L::splat(i11), L::splat(i21));
    let (b1, b2) = (L::splat(i12 * y), L::splat(i22 * y));
    let (n, step) = (xs.len().min(ys.len()), L::splat(L::D_LANES as f64));
    let mut x = L::add(L::splat(px0 as f64), L::iota());
    let mut i = 0;
    while i + L::D_LANES <= n {
        // SAFETY: `i + D_LANES <= n`, within both slices.
        unsafe {
            L::store(xs.as_mut_ptr().add(i), L::add(L::mul(a11, x), b1));
            L::store(ys.as_mut_ptr().add(i), L::add(L::mul(a21, x), b2));
        }
        x = L::add(x, step);
        i += L::D_LANES;
    }
    i
}

/// [`displaced_positions`] `L::D_LANES` pixels a step (the field values widened exactly, the
/// pixel coordinates stepping as in [`linear_positions_lanes`]). Returns how many it wrote.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn displaced_positions_lanes<L: Lanes64>(
    px0: i64,
    py: i64,
    d: f64,
    nxs: &[f32],
    nys: &[f32],
    xs: &mut [f64],
    ys: &mut [f64],
) -> usize {
    let (dd, fy, step) = (L::splat(d), L::splat(py as f64), L::splat(L::D_LANES as f64));
    let mut x = L::add(L::splat(px0 as f64), L::iota());
    let n = xs.len().min(ys.len()).min(nxs.len()).min(nys.len());
    let mut i = 0;
    while i + L::D_LANES <= n {
        // SAFETY: `i + D_LANES <= n`, within the four slices.
        unsafe {
            let (nx, _) = L::load_f32(nxs.as_ptr().add(i));
            let (ny, _) = L::load_f32(nys.as_ptr().add(i));
            L::store(xs.as_mut_ptr().add(i), L::add(x, L::mul(nx, dd)));
            L::store(ys.as_mut_ptr().add(i), L::add(fy, L::mul(ny, dd)));
        }
        x = L::add(x, step);
        i += L::D_LANES;
    }
    i
}

/// The source positions of pixels `(px0 + i, py)` displaced by `(nxs[i], nys[i]) × d`:
/// `x = px + nx × d`, `y = py + ny × d` in `f64` (`Distort`'s arithmetic), four pixels at a time
/// on AVX2 when every `px` is below 2^52 in magnitude (stepping by 1.0 is then exact).
#[allow(clippy::too_many_arguments)]
pub fn displaced_positions(
    isa: Isa,
    px0: i64,
    py: i64,
    d: f64,
    nxs: &[f32],
    nys: &[f32],
    xs: &mut [f64],
    ys: &mut [f64],
) {
    let n = xs.len().min(ys.len()).min(nxs.len()).min(nys.len());
    let (nxs, nys, xs, ys) = (&nxs[..n], &nys[..n], &mut xs[..n], &mut ys[..n]);
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx2 && px0.unsigned_abs() < 1 << 52 && (n as u64) < 1 << 52 && Isa::Avx2.is_available() {
        // SAFETY: the processor has AVX2 (checked just above).
        done = unsafe { avx2::displaced_positions(px0, py, d, nxs, nys, xs, ys) };
    }
    let _ = isa;
    let fy = py as f64;
    for (k, (x, y)) in xs.iter_mut().zip(ys.iter_mut()).enumerate().skip(done) {
        *x = (px0 + k as i64) as f64 + f64::from(nxs[k]) * d;
        *y = fy + f64::from(nys[k]) * d;
    }
}

/// Starts loading the lines a bilinear sample at each of these positions will read (every second
/// position, rows floor(y) and floor(y) + 1 at column floor(x): consecutive positions of a
/// resampling move less than two pixels, so these cover nearly all). A hint only: it changes no
/// result, and the indexes are clamped into the map so the addresses stay inside its data.
#[inline]
pub fn prefetch_sources(map: &HeightMap, xs: &[f64], ys: &[f64]) {
    let Some(lines) = Lines::of(map) else { return };
    #[cfg(target_arch = "x86_64")]
    if avx2::fits(map) && Isa::Avx2.is_available() {
        // SAFETY: the processor has AVX2 (checked just above) and the map fits the vector path.
        unsafe { avx2::prefetch_sources(map, xs, ys) };
        return;
    }
    for (&x, &y) in xs.iter().zip(ys).step_by(2) {
        lines.prefetch(x, y, 0);
        lines.prefetch(x, y, 1);
    }
}

/// Starts loading the source lines `rows` rows below these positions (row floor(y) + rows + 1,
/// column floor(x), every `step`-th position): where the positions of the rows to come are
/// those of this row moved down (a smooth displacement), the lines they will read. A hint only.
#[inline]
pub fn prefetch_rows_ahead(map: &HeightMap, xs: &[f64], ys: &[f64], rows: i64, step: usize) {
    let Some(lines) = Lines::of(map) else { return };
    for (&x, &y) in xs.iter().zip(ys).step_by(step.max(1)) {
        lines.prefetch(x, y, rows.saturating_add(1));
    }
}

/// A map's data seen as lines to prefetch: positions are clamped into the map, so every address
/// is inside its data.
struct Lines<'a> {
    map: &'a HeightMap,
    last_x: i64,
    last_y: i64,
}

impl<'a> Lines<'a> {
    fn of(map: &'a HeightMap) -> Option<Lines<'a>> {
        let r = map.rect();
        (!r.is_empty()).then(|| Lines {
            map,
            last_x: (r.width - 1).min(i64::MAX as u64) as i64,
            last_y: (r.height - 1).min(i64::MAX as u64) as i64,
        })
    }

    /// Starts loading the line of pixel (floor(x), floor(y) + down), clamped into the map.
    #[inline(always)]
    fn prefetch(&self, x: f64, y: f64, down: i64) {
        let r = self.map.rect();
        // `as` saturates (NaN gives 0), and the clamps keep the index inside the map.
        let cx = (x as i64).saturating_sub(r.x).clamp(0, self.last_x) as usize;
        let cy = (y as i64).saturating_add(down).saturating_sub(r.y).clamp(0, self.last_y) as usize;
        let index = cy * self.map.width() + cx;
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the index is within the data (row ≤ last_y, column ≤ last_x); a prefetch reads
        // nothing the program sees.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(self.map.data().as_ptr().add(index).cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = index;
    }
}

/// A new map over `rect` whose pixel `(px, py)` is the bilinear sample of `source` at
/// `(column[px − rect.x], row(py))`: [`resample`] for positions that are separable (a rescale),
/// with the column positions computed once. `column` has `rect.width` entries.
pub fn resample_separable(
    isa: Isa,
    source: &HeightMap,
    rect: Rect,
    column: &[f64],
    row: impl Fn(i64) -> f64 + Sync + Send,
) -> Result<HeightMap, RenderError> {
    let width = rect.width as usize;
    if column.len() != width {
        return Err(RenderError::Internal("resample_separable: a column table of the wrong length".into()));
    }
    // The column axis of every output column once; per row, the row axis once, then two (or
    // four) reads from one (two) source rows per pixel: no per-pixel floor, snap or clamp.
    let table = ColumnTable::new(source, column);
    let band = |py0: i64, _: i64, band: &mut [f32]| {
        for (r, out_row) in band.chunks_mut(width).enumerate() {
            let y = row(py0 + r as i64);
            if let (Some(table), Some(axis)) = (&table, row_axis(source, y)) {
                table.fill(isa, source, axis, out_row);
                continue;
            }
            let ys = [y; BATCH];
            for (xs, out) in column.chunks(BATCH).zip(out_row.chunks_mut(BATCH)) {
                bilinear_many(source, xs, &ys[..xs.len()], out, isa);
            }
        }
    };
    map_by_bands(rect, BLOCK_ROWS, band)
}

/// Whether [`bilinear`] takes its `axis_near` path for this map (its extent within ±2^60).
fn near_extent(map: &HeightMap) -> bool {
    const EXTENT: u64 = 1 << 60;
    let r = map.rect();
    !r.is_empty() && r.x.unsigned_abs() < EXTENT && r.y.unsigned_abs() < EXTENT && r.width < EXTENT && r.height < EXTENT
}

/// The row axis of [`bilinear`] at `y` over `map`, where it takes the `axis_near` path.
fn row_axis(map: &HeightMap, y: f64) -> Option<(usize, usize, f64)> {
    const NEAR: f64 = 4_503_599_627_370_496.0; // 2^52
    let r = map.rect();
    (y.abs() < NEAR && near_extent(map)).then(|| axis_near(y, r.y, r.height as i64 - 1))
}

/// The column axis of [`bilinear`] at every column position of a separable resampling, computed
/// once: the two source columns (within a row) and the kept fraction (0 when snapped) of each
/// output column. `None` where a position or the map leaves the `axis_near` path, or a column
/// index would not fit in `i32`.
struct ColumnTable {
    first: Vec<i32>,
    second: Vec<i32>,
    fraction: Vec<f64>,
}

impl ColumnTable {
    fn new(map: &HeightMap, column: &[f64]) -> Option<ColumnTable> {
        const NEAR: f64 = 4_503_599_627_370_496.0; // 2^52
        let r = map.rect();
        if !near_extent(map) || map.width() > i32::MAX as usize || !column.iter().all(|x| x.abs() < NEAR) {
            return None;
        }
        let mut table = ColumnTable {
            first: Vec::with_capacity(column.len()),
            second: Vec::with_capacity(column.len()),
            fraction: Vec::with_capacity(column.len()),
        };
        for &x in column {
            let (x0, x1, t) = axis_near(x, r.x, r.width as i64 - 1);
            table.first.push(x0 as i32);
            table.second.push(x1 as i32);
            table.fraction.push(t);
        }
        Some(table)
    }

    /// One output row: the bits of [`bilinear`] at each column's position on the row whose axis
    /// is `(y0, y1, ty)`, with the same operations in the same order.
    fn fill(&self, isa: Isa, map: &HeightMap, (y0, y1, ty): (usize, usize, f64), out: &mut [f32]) {
        let (w, data) = (map.width(), map.data());
        let (top, bottom) = (&data[y0 * w..][..w], &data[y1 * w..][..w]);
        let n = out.len().min(self.first.len());
        let mut i = 0;
        #[cfg(target_arch = "x86_64")]
        if isa == Isa::Avx2 && Isa::Avx2.is_available() {
            // SAFETY: AVX2 is there; every index of the table is a column of the map.
            i = unsafe { avx2::fill_row(self, top, bottom, ty, &mut out[..n]) };
        }
        let _ = isa;
        let at = |line: &[f32], k: &[i32], i: usize| f64::from(line[k[i] as usize]);
        for (i, h) in out.iter_mut().enumerate().take(n).skip(i) {
            let t = self.fraction[i];
            let upper = lerp(at(top, &self.first, i), at(top, &self.second, i), t);
            let value = if ty == 0.0 {
                upper
            } else {
                lerp(upper, lerp(at(bottom, &self.first, i), at(bottom, &self.second, i), t), ty)
            };
            *h = value as f32;
        }
    }
}

/// Columns and rows of the blocks [`resample`] fills one at a time.
const BLOCK_COLUMNS: usize = 64;
const BLOCK_ROWS: usize = 32;
/// The next block's source lines are prefetched from the positions of one row in this many: the
/// rows of a block read nearly the same lines (a rotation moves each row's positions by about one
/// pixel), so a hint for every row was mostly redundant, and the hints themselves cost: at 1024²
/// (1 thread) they were a third of Rotate's CPU with every row hinted, and every fourth row was
/// faster at 1024² and at 4000² than every row, every eighth or none (none lost 25 % on Rotate 2.5
/// at 4000²).
const PREFETCH_EVERY_ROWS: usize = 4;

/// A new map over `rect` whose bands of `rows` whole rows `f(absolute_y, absolute_x, band)` fills
/// (every pixel of each band), in parallel. Each band is computed straight into its place in the
/// new buffer, zeroed there first: the buffer is never zero-filled as a whole (a serial pass that
/// would bring every line in and out once more), and no band goes through a scratch of its own
/// and a copy (a zeroed allocation, a memset and a read of every pixel per band). The zeroing
/// takes the fresh pages' first-touch faults and leaves the band in cache for `f`'s writes. In the
/// engine's serial mode the bands run one after the other on a zeroed map.
pub fn map_by_bands(
    rect: Rect,
    rows: usize,
    f: impl Fn(i64, i64, &mut [f32]) + Sync + Send,
) -> Result<HeightMap, RenderError> {
    if geogen_render::rows::in_serial_mode() || rect.is_empty() || !rect.is_valid() {
        // `try_zeroed` also reports the rectangles no buffer can hold.
        let mut out = HeightMap::try_zeroed(rect)?;
        for_each_band_of(&mut out, rows, f);
        return Ok(out);
    }
    // Each band zeroed (fresh pages only faulted in) and computed while it is in cache.
    HeightMap::try_from_bands(rect, rows, None, |band| {
        let band_rect = band.rect();
        f(band_rect.y, band_rect.x, band.data_mut());
        Ok(())
    })
}

/// Calls `f(absolute_y, absolute_x, band)` for bands of `rows` whole rows, in parallel (serially,
/// one band per call, in the engine's serial mode).
fn for_each_band_of(map: &mut HeightMap, rows: usize, f: impl Fn(i64, i64, &mut [f32]) + Sync + Send) {
    use rayon::prelude::*;
    let rect = map.rect();
    if rect.is_empty() {
        return;
    }
    let width = map.width();
    if geogen_render::rows::in_serial_mode() {
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

/// The AVX2 build of [`bilinear_many`]: four positions per step in `f64` lanes, with the operations
/// of [`bilinear`] in the same order (IEEE basic operations and exact conversions only, no FMA),
/// so the same bits.
///
/// Per axis: `floor` rounds toward −∞, which for |c| < 2^52 is the scalar code's corrected
/// truncation; `t = c − floor`; the fraction is kept when `SNAP ≤ t < 1`; the first index is
/// `floor − start` clamped to `[0, last]` and the second is one more only when the fraction is
/// kept and `0 ≤ floor − start < last` (otherwise the scalar clamps give the first again). The
/// index arithmetic is exact in `f64`: every value stays below 2^53 (positions below 2^52, map
/// origins and lengths below 2^31). The four corners are read as `f32` and widened: on maps at
/// least two pixels wide each row's pair with one 8-byte load, on narrower ones by gathers.
#[allow(
    unsafe_op_in_unsafe_fn,
    reason = "the functions here are whole-body intrinsic code under `#[target_feature]`: the unsafe contract is the function's (the level is detected, slices are long enough), stated on each"
)]
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use geogen_render::HeightMap;

    use super::{bilinear, SNAP};

    /// Whether the map suits the vector path: not empty, its pixel indexes within `i32`, its
    /// origin within ±2^31.
    pub fn fits(map: &HeightMap) -> bool {
        const LIMIT: i64 = 1 << 31;
        let r = map.rect();
        !r.is_empty()
            && map.data().len() <= i32::MAX as usize
            && r.x.unsigned_abs() < LIMIT as u64
            && r.y.unsigned_abs() < LIMIT as u64
    }

    /// One axis of four positions: (first index, whether the second is first + 1, kept fraction or
    /// 0, whether the fraction is kept).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn axis(c: __m256d, start: __m256d, last: __m256d) -> (__m256d, __m256d, __m256d, __m256d) {
        let zero = _mm256_setzero_pd();
        let floor = _mm256_floor_pd(c);
        let t = _mm256_sub_pd(c, floor);
        let keep = _mm256_and_pd(
            _mm256_cmp_pd::<_CMP_GE_OQ>(t, _mm256_set1_pd(SNAP)),
            _mm256_cmp_pd::<_CMP_LT_OQ>(t, _mm256_set1_pd(1.0)),
        );
        let rel = _mm256_sub_pd(floor, start);
        let first = _mm256_min_pd(_mm256_max_pd(rel, zero), last);
        let inside = _mm256_and_pd(_mm256_cmp_pd::<_CMP_GE_OQ>(rel, zero), _mm256_cmp_pd::<_CMP_LT_OQ>(rel, last));
        (first, _mm256_and_pd(keep, inside), _mm256_and_pd(t, keep), keep)
    }

    /// The four heights at these indexes (exact integers in `f64`, within the data), widened.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn gather(data: &[f32], index: __m256d) -> __m256d {
        let index = _mm256_cvttpd_epi32(index);
        // SAFETY: (caller) every index is within `data`.
        _mm256_cvtps_pd(unsafe { _mm_i32gather_ps::<4>(data.as_ptr(), index) })
    }

    /// The four neighbours of four positions, as the gathers in [`bilinear_many`] read them:
    /// `data[row + x0]` and `data[row + x0 + 1]` (or `x0` again where `x_pair` is not set) on `row0`
    /// and `row1`, widened. Each row's two come from one 8-byte load at column `min(x0, last − 1)`:
    /// inside the row, so never past the data's end; where `x0` is the last column it is the load's
    /// second height (and `x_pair` is never set there).
    ///
    /// # Safety
    /// AVX2; the map is at least two pixels wide (`last + 1`, the length of a row in `data`, is at
    /// least 2), `x0` holds columns in `[0, last]` and `row0`, `row1` start offsets of rows in
    /// `data`, all exact integers.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn neighbour_pairs(
        data: &[f32],
        row0: __m256d,
        row1: __m256d,
        x0: __m256d,
        x_pair: __m256d,
        last: __m256d,
    ) -> (__m256d, __m256d, __m256d, __m256d) {
        let column = _mm256_min_pd(x0, _mm256_sub_pd(last, _mm256_set1_pd(1.0)));
        let at_last_column = _mm256_cmp_pd::<_CMP_GT_OQ>(x0, column);
        let (mut top_at, mut bottom_at) = ([0i32; 4], [0i32; 4]);
        // SAFETY: each array has room for four i32.
        unsafe {
            _mm_storeu_si128(top_at.as_mut_ptr().cast(), _mm256_cvttpd_epi32(_mm256_add_pd(row0, column)));
            _mm_storeu_si128(bottom_at.as_mut_ptr().cast(), _mm256_cvttpd_epi32(_mm256_add_pd(row1, column)));
        }
        // SAFETY: (caller) each index is a pixel of `data` followed by another of the same row.
        let pair = |at: i32| unsafe { data.as_ptr().add(at as usize).cast::<i64>().read_unaligned() };
        // Heights a₀ b₀ a₁ b₁ a₂ b₂ a₃ b₃ → a₀ a₁ a₂ a₃ | b₀ b₁ b₂ b₃.
        let evens_then_odds = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
        let row = |at: [i32; 4]| {
            let pairs = _mm256_castsi256_ps(_mm256_setr_epi64x(pair(at[0]), pair(at[1]), pair(at[2]), pair(at[3])));
            let split = _mm256_permutevar8x32_ps(pairs, evens_then_odds);
            let (first, next) =
                (_mm256_cvtps_pd(_mm256_castps256_ps128(split)), _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(split)));
            let own = _mm256_blendv_pd(first, next, at_last_column);
            (own, _mm256_blendv_pd(own, next, x_pair))
        };
        let ((a00, a10), (a01, a11)) = (row(top_at), row(bottom_at));
        (a00, a10, a01, a11)
    }

    /// `a + (b − a) × t` where `keep`, else `a` (the scalar `lerp` with `t = 0` not kept).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn lerp(a: __m256d, b: __m256d, t: __m256d, keep: __m256d) -> __m256d {
        let mixed = _mm256_add_pd(a, _mm256_mul_pd(_mm256_sub_pd(b, a), t));
        _mm256_blendv_pd(a, mixed, keep)
    }

    /// `lerp` on the two halves of eight gathered heights: `a + (b − a) × t` where `t ≠ 0`, else
    /// `a` (the table's fraction is 0 exactly where the scalar code keeps none).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn lerp_table(a: __m128, b: __m128, t: __m256d) -> __m256d {
        let (a, b) = (_mm256_cvtps_pd(a), _mm256_cvtps_pd(b));
        lerp(a, b, t, _mm256_cmp_pd::<_CMP_NEQ_OQ>(t, _mm256_setzero_pd()))
    }

    /// The row of [`super::ColumnTable::fill`] eight columns per step; returns how many columns
    /// it filled (the rest are the caller's).
    ///
    /// # Safety
    /// AVX2; every index in the table is below the length of `top` and `bottom`.
    #[target_feature(enable = "avx2")]
    pub unsafe fn fill_row(table: &super::ColumnTable, top: &[f32], bottom: &[f32], ty: f64, out: &mut [f32]) -> usize {
        let n = out.len().min(table.first.len());
        let mut i = 0;
        let ty4 = _mm256_set1_pd(ty);
        while i + 8 <= n {
            // SAFETY: i + 8 ≤ n, within every table and `out` (so `first[i]` exists); the indexes
            // are inside the rows, and the load of eight at `base` is checked against both rows.
            unsafe {
                let first = _mm256_loadu_si256(table.first.as_ptr().add(i).cast());
                let second = _mm256_loadu_si256(table.second.as_ptr().add(i).cast());
                let (t_lo, t_hi) = (
                    _mm256_loadu_pd(table.fraction.as_ptr().add(i)),
                    _mm256_loadu_pd(table.fraction.as_ptr().add(i + 4)),
                );
                // Where the sixteen indexes lie within eight columns from the first one (an
                // enlargement, where neighbouring output columns read the same few source
                // columns), one load of those eight and two in-register permutes read what the
                // two gathers would.
                let base = *table.first.get_unchecked(i);
                let from_base = |k: __m256i| _mm256_sub_epi32(k, _mm256_set1_epi32(base));
                let (near_a, near_b) = (from_base(first), from_base(second));
                let seven = _mm256_set1_epi32(7);
                let within = |k: __m256i| _mm256_movemask_epi8(_mm256_cmpeq_epi32(_mm256_max_epu32(k, seven), seven));
                let within_eight = base >= 0
                    && (base as usize) + 8 <= top.len().min(bottom.len())
                    && within(near_a) & within(near_b) == -1;
                let row = |line: &[f32]| {
                    let (a, b) = if within_eight {
                        let eight = _mm256_loadu_ps(line.as_ptr().add(base as usize));
                        (_mm256_permutevar8x32_ps(eight, near_a), _mm256_permutevar8x32_ps(eight, near_b))
                    } else {
                        (
                            _mm256_i32gather_ps::<4>(line.as_ptr(), first),
                            _mm256_i32gather_ps::<4>(line.as_ptr(), second),
                        )
                    };
                    (
                        lerp_table(_mm256_castps256_ps128(a), _mm256_castps256_ps128(b), t_lo),
                        lerp_table(_mm256_extractf128_ps::<1>(a), _mm256_extractf128_ps::<1>(b), t_hi),
                    )
                };
                let (mut lo, mut hi) = row(top);
                if ty != 0.0 {
                    let (b_lo, b_hi) = row(bottom);
                    lo = _mm256_add_pd(lo, _mm256_mul_pd(_mm256_sub_pd(b_lo, lo), ty4));
                    hi = _mm256_add_pd(hi, _mm256_mul_pd(_mm256_sub_pd(b_hi, hi), ty4));
                }
                _mm_storeu_ps(out.as_mut_ptr().add(i), _mm256_cvtpd_ps(lo));
                _mm_storeu_ps(out.as_mut_ptr().add(i + 4), _mm256_cvtpd_ps(hi));
            }
            i += 8;
        }
        i
    }

    /// [`super::prefetch_sources`] with the line indexes of four positions computed at once (the
    /// same hints: positions 0, 2, 4, ..., rows floor(y) and floor(y) + 1 at column floor(x), all
    /// clamped into the map; NaN clamps to the first row or column).
    ///
    /// # Safety
    /// AVX2; `fits(map)`.
    #[target_feature(enable = "avx2")]
    pub unsafe fn prefetch_sources(map: &HeightMap, xs: &[f64], ys: &[f64]) {
        let r = map.rect();
        let (data, width) = (map.data(), map.width());
        let zero = _mm256_setzero_pd();
        let (start_x, start_y) = (_mm256_set1_pd(r.x as f64), _mm256_set1_pd(r.y as f64));
        let (last_x, last_y) = (_mm256_set1_pd((r.width - 1) as f64), _mm256_set1_pd((r.height - 1) as f64));
        let (w, one) = (_mm256_set1_pd(width as f64), _mm256_set1_pd(1.0));
        // `max(v, 0)` gives 0 for a NaN `v` (the second operand), and `min` keeps the index in the
        // map: every index is a pixel of the data, below 2^31 (`fits`).
        let clamp = |v: __m256d, last: __m256d| _mm256_min_pd(_mm256_max_pd(v, zero), last);
        let n = xs.len().min(ys.len());
        let mut i = 0;
        let mut lines = [0i32; 4];
        while i + 4 <= n {
            // SAFETY: i + 4 ≤ n, the length of both slices.
            let (x, y) = unsafe { (_mm256_loadu_pd(xs.as_ptr().add(i)), _mm256_loadu_pd(ys.as_ptr().add(i))) };
            let column = clamp(_mm256_sub_pd(_mm256_floor_pd(x), start_x), last_x);
            let row = clamp(_mm256_sub_pd(_mm256_floor_pd(y), start_y), last_y);
            let below = _mm256_min_pd(_mm256_add_pd(row, one), last_y);
            let top = _mm256_cvttpd_epi32(_mm256_add_pd(_mm256_mul_pd(row, w), column));
            let bottom = _mm256_cvttpd_epi32(_mm256_add_pd(_mm256_mul_pd(below, w), column));
            // Lanes 0 and 2 of each: every second position.
            let pair = _mm_unpacklo_epi64(_mm_shuffle_epi32::<0b1000>(top), _mm_shuffle_epi32::<0b1000>(bottom));
            // SAFETY: `lines` has room for four i32.
            unsafe { _mm_storeu_si128(lines.as_mut_ptr().cast(), pair) };
            for &line in &lines {
                // SAFETY: each index is a pixel of the data (clamped above); a prefetch reads
                // nothing the program sees.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(data.as_ptr().add(line as usize).cast()) };
            }
            i += 4;
        }
        let tail = super::Lines::of(map);
        for k in (i..n).step_by(2) {
            if let Some(lines) = &tail {
                lines.prefetch(xs[k], ys[k], 0);
                lines.prefetch(xs[k], ys[k], 1);
            }
        }
    }

    /// [`super::displaced_positions_lanes`] four pixels per step; returns how many it wrote.
    ///
    /// # Safety
    /// AVX2; `|px0|` and the length below 2^52.
    #[target_feature(enable = "avx2")]
    pub unsafe fn displaced_positions(
        px0: i64,
        py: i64,
        d: f64,
        nxs: &[f32],
        nys: &[f32],
        xs: &mut [f64],
        ys: &mut [f64],
    ) -> usize {
        super::displaced_positions_lanes::<crate::lanes64::Avx2>(px0, py, d, nxs, nys, xs, ys)
    }

    /// [`super::linear_positions_lanes`] four pixels per step; returns how many it wrote.
    ///
    /// # Safety
    /// AVX2; `|px0|` and `xs.len()` below 2^52 (every `px0 + i` is then exact in `f64`, and so is
    /// every step of 4.0).
    #[target_feature(enable = "avx2")]
    pub unsafe fn linear_positions(inverse: [f64; 4], px0: i64, py: i64, xs: &mut [f64], ys: &mut [f64]) -> usize {
        super::linear_positions_lanes::<crate::lanes64::Avx2>(inverse, px0, py, xs, ys)
    }

    /// # Safety
    /// The processor has AVX2, `fits(map)` holds, and the three slices have the same length.
    #[target_feature(enable = "avx2")]
    pub unsafe fn bilinear_many(map: &HeightMap, xs: &[f64], ys: &[f64], out: &mut [f32]) {
        let r = map.rect();
        let (data, width) = (map.data(), map.width());
        let near = _mm256_set1_pd(4_503_599_627_370_496.0); // 2^52
        let magnitude = _mm256_castsi256_pd(_mm256_set1_epi64x(i64::MAX));
        let (start_x, start_y) = (_mm256_set1_pd(r.x as f64), _mm256_set1_pd(r.y as f64));
        let (last_x, last_y) = (_mm256_set1_pd((r.width - 1) as f64), _mm256_set1_pd((r.height - 1) as f64));
        let (w, one) = (_mm256_set1_pd(width as f64), _mm256_set1_pd(1.0));
        // Maps at least two pixels wide read each pixel's two horizontal neighbours with one 8-byte
        // load per row (see `neighbour_pairs`) instead of four gathers of single heights: gathers
        // are microcoded on many AVX2 processors (on AMD Zen 3 they were two thirds of this loop).
        let paired = width >= 2;
        let n = out.len();
        let mut i = 0;
        while i + 4 <= n {
            // SAFETY: i + 4 ≤ n, the length of all three slices.
            let (x, y) = unsafe { (_mm256_loadu_pd(xs.as_ptr().add(i)), _mm256_loadu_pd(ys.as_ptr().add(i))) };
            let ok = _mm256_and_pd(
                _mm256_cmp_pd::<_CMP_LT_OQ>(_mm256_and_pd(x, magnitude), near),
                _mm256_cmp_pd::<_CMP_LT_OQ>(_mm256_and_pd(y, magnitude), near),
            );
            if _mm256_movemask_pd(ok) != 0b1111 {
                // A NaN or a position beyond 2^52: the scalar code handles these four.
                for k in i..i + 4 {
                    out[k] = bilinear(map, xs[k], ys[k]);
                }
                i += 4;
                continue;
            }
            let (x0, x_pair, tx, keep_x) = axis(x, start_x, last_x);
            let (y0, y_pair, ty, keep_y) = axis(y, start_y, last_y);
            let row0 = _mm256_mul_pd(y0, w);
            let row1 = _mm256_add_pd(row0, _mm256_and_pd(y_pair, w));
            let (a00, a10, a01, a11) = if paired {
                // SAFETY: `paired` holds, x0 is a column of the map and row0, row1 rows of it.
                unsafe { neighbour_pairs(data, row0, row1, x0, x_pair, last_x) }
            } else {
                let dx = _mm256_and_pd(x_pair, one);
                // SAFETY: each index is row × width + column with the row and column clamped into
                // the map (the second ones only one past the first where that is still inside).
                unsafe {
                    (
                        gather(data, _mm256_add_pd(row0, x0)),
                        gather(data, _mm256_add_pd(row0, _mm256_add_pd(x0, dx))),
                        gather(data, _mm256_add_pd(row1, x0)),
                        gather(data, _mm256_add_pd(row1, _mm256_add_pd(x0, dx))),
                    )
                }
            };
            let top = lerp(a00, a10, tx, keep_x);
            let bottom = lerp(a01, a11, tx, keep_x);
            let value = lerp(top, bottom, ty, keep_y);
            // SAFETY: i + 4 ≤ n.
            unsafe { _mm_storeu_ps(out.as_mut_ptr().add(i), _mm256_cvtpd_ps(value)) };
            i += 4;
        }
        for k in i..n {
            out[k] = bilinear(map, xs[k], ys[k]);
        }
    }
}

/// The AVX-512 build of [`bilinear_many`]: eight positions per step in `f64` lanes, with the
/// operations of [`bilinear`] in the same order (as [`avx2`], whose notes on exactness hold here),
/// the selections in mask registers: a masked add is the lerp that keeps `a` where the fraction
/// is not kept, and the second indexes are the first plus 1 (plus the width) under masks, in
/// `i32`, from one conversion per step. A last piece of fewer than eight positions is done with
/// masked loads and stores.
#[allow(
    unsafe_op_in_unsafe_fn,
    reason = "the functions here are whole-body intrinsic code under `#[target_feature]`: the unsafe contract is the function's (the level is detected, slices are long enough), stated on each"
)]
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use geogen_render::HeightMap;

    use super::{bilinear, SNAP};

    /// The constants of one map.
    struct Map {
        data: *const f32,
        start_x: __m512d,
        start_y: __m512d,
        last_x: __m512d,
        last_y: __m512d,
        width: __m512d,
        width_i: __m256i,
        /// The last column and row, as `f64` (exact: within ±2^32); the first are `start_x`, `start_y`.
        high_x: __m512d,
        high_y: __m512d,
    }

    impl Map {
        /// # Safety
        /// AVX-512F; `map` fits the vector path.
        #[inline(always)]
        unsafe fn new(map: &HeightMap) -> Map {
            let r = map.rect();
            Map {
                data: map.data().as_ptr(),
                start_x: _mm512_set1_pd(r.x as f64),
                start_y: _mm512_set1_pd(r.y as f64),
                last_x: _mm512_set1_pd((r.width - 1) as f64),
                last_y: _mm512_set1_pd((r.height - 1) as f64),
                width: _mm512_set1_pd(map.width() as f64),
                width_i: _mm256_set1_epi32(map.width() as i32),
                high_x: _mm512_set1_pd((r.x + r.width as i64 - 1) as f64),
                high_y: _mm512_set1_pd((r.y + r.height as i64 - 1) as f64),
            }
        }
    }

    /// One axis of eight positions: (first index, whether the second is first + 1, fraction,
    /// whether the fraction is kept). The fraction of a lane not kept is meaningless.
    #[inline(always)]
    unsafe fn axis(c: __m512d, start: __m512d, last: __m512d) -> (__m512d, __mmask8, __m512d, __mmask8) {
        let zero = _mm512_setzero_pd();
        let floor = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(c);
        let t = _mm512_sub_pd(c, floor);
        let keep = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(t, _mm512_set1_pd(SNAP))
            & _mm512_cmp_pd_mask::<_CMP_LT_OQ>(t, _mm512_set1_pd(1.0));
        let rel = _mm512_sub_pd(floor, start);
        let first = _mm512_min_pd(_mm512_max_pd(rel, zero), last);
        let inside = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(rel, zero) & _mm512_cmp_pd_mask::<_CMP_LT_OQ>(rel, last);
        (first, keep & inside, t, keep)
    }

    /// `a + (b − a) × t` where `keep`, else `a` (the scalar `lerp`, whose `t` is 0 where not kept).
    #[inline(always)]
    unsafe fn lerp(a: __m512d, b: __m512d, t: __m512d, keep: __mmask8) -> __m512d {
        _mm512_mask_add_pd(a, keep, a, _mm512_mul_pd(_mm512_sub_pd(b, a), t))
    }

    /// The eight heights at these pixel indexes, widened.
    ///
    /// # Safety
    /// Every index is within the map's data.
    #[inline(always)]
    unsafe fn gather(data: *const f32, index: __m256i) -> __m512d {
        // SAFETY: (caller) every index is within the data.
        _mm512_cvtps_pd(unsafe { _mm256_i32gather_ps::<4>(data, index) })
    }

    /// The samples at eight positions whose coordinates are all below 2^52 in magnitude.
    ///
    /// # Safety
    /// AVX-512F and VL; `m` was made from a map that `fits`.
    #[inline(always)]
    unsafe fn eight(m: &Map, x: __m512d, y: __m512d) -> __m256 {
        // SAFETY: `axis` computes on registers only; this function is built with the AVX-512
        // features the callee needs, and runs only where the processor has them.
        let (x0, x_pair, tx, keep_x) = unsafe { axis(x, m.start_x, m.last_x) };
        // SAFETY: as above.
        let (y0, y_pair, ty, keep_y) = unsafe { axis(y, m.start_y, m.last_y) };
        // row × width + column is below 2^31 (`fits`), exact in f64 and in i32.
        let i00 = _mm512_cvttpd_epi32(_mm512_add_pd(_mm512_mul_pd(y0, m.width), x0));
        let one = _mm256_set1_epi32(1);
        let i10 = _mm256_mask_add_epi32(i00, x_pair, i00, one);
        let i01 = _mm256_mask_add_epi32(i00, y_pair, i00, m.width_i);
        let i11 = _mm256_mask_add_epi32(i01, x_pair, i01, one);
        // SAFETY: the indexes are rows and columns clamped into the map (the second ones only one
        // past the first where that is still inside).
        unsafe { corners(m, [i00, i10, i01, i11], (tx, keep_x), (ty, keep_y)) }
    }

    /// The bilinear sample of eight positions from the indexes of their four neighbours and their
    /// fractions (each with the lanes where it is kept): two lerps along x, one along y.
    ///
    /// # Safety
    /// AVX-512F; every index is a pixel of `m`'s map.
    #[inline(always)]
    unsafe fn corners(
        m: &Map,
        [i00, i10, i01, i11]: [__m256i; 4],
        (tx, keep_x): (__m512d, __mmask8),
        (ty, keep_y): (__m512d, __mmask8),
    ) -> __m256 {
        // SAFETY: (caller) every index is inside the map's data.
        let (a00, a10, a01, a11) =
            unsafe { (gather(m.data, i00), gather(m.data, i10), gather(m.data, i01), gather(m.data, i11)) };
        // SAFETY: `lerp` computes on registers only; this function is built with the AVX-512
        // features the callee needs, and runs only where the processor has them.
        let top = unsafe { lerp(a00, a10, tx, keep_x) };
        // SAFETY: as above.
        let bottom = unsafe { lerp(a01, a11, tx, keep_x) };
        // SAFETY: as above.
        _mm512_cvtpd_ps(unsafe { lerp(top, bottom, ty, keep_y) })
    }

    /// [`eight`] at eight positions each inside the map on both axes (`start ≤ c < start + last`):
    /// no clamps, and the second indexes are the first plus 1 and
    /// plus the width unmasked (inside the map; where a fraction is not kept, the masked add of
    /// the lerp keeps `a`, whatever was read for `b`).
    ///
    /// # Safety
    /// AVX-512F and VL; `m` was made from a map that `fits`; every position is inside as said.
    #[inline(always)]
    unsafe fn eight_inside(m: &Map, x: __m512d, y: __m512d) -> __m256 {
        let snap = _mm512_set1_pd(SNAP);
        let floor_x = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(x);
        let floor_y = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(y);
        let (tx, ty) = (_mm512_sub_pd(x, floor_x), _mm512_sub_pd(y, floor_y));
        // t rounds to 1 for a tiny negative c (−1e-17 − (−1)): then the fraction is not kept.
        let one = _mm512_set1_pd(1.0);
        let keep_x = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(tx, snap) & _mm512_cmp_pd_mask::<_CMP_LT_OQ>(tx, one);
        let keep_y = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(ty, snap) & _mm512_cmp_pd_mask::<_CMP_LT_OQ>(ty, one);
        let (rel_x, rel_y) = (_mm512_sub_pd(floor_x, m.start_x), _mm512_sub_pd(floor_y, m.start_y));
        // row × width + column is below 2^31 (`fits`), exact in f64 and in i32.
        let i00 = _mm512_cvttpd_epi32(_mm512_add_pd(_mm512_mul_pd(rel_y, m.width), rel_x));
        let next = _mm256_set1_epi32(1);
        let i10 = _mm256_add_epi32(i00, next);
        let i01 = _mm256_add_epi32(i00, m.width_i);
        let i11 = _mm256_add_epi32(i01, next);
        // SAFETY: floor − start is in [0, last) on both axes, so all four are pixels of the map.
        unsafe { corners(m, [i00, i10, i01, i11], (tx, keep_x), (ty, keep_y)) }
    }

    /// One block row of [`super::resample_linear`]: the samples of `map` at the linear positions
    /// of pixels `(px0 + i, py)` into `out[i]`, computed in registers (`x = i11 × px + b1`, with
    /// `b1 = i12 × py` as [`super::linear_positions`] has it, a plain product and sum). `inside`:
    /// every position of the row is at least a pixel inside the map ([`eight_inside`] for the
    /// whole groups of eight).
    ///
    /// # Safety
    /// AVX-512F and VL; `m` made from `map`, which fits; `|px0|` and `px0 + out.len()` below 2^52.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn linear_row<const AHEAD: bool>(
        m: &Map,
        map: &HeightMap,
        inverse: [f64; 4],
        px0: i64,
        py: i64,
        inside: bool,
        out: &mut [f32],
    ) {
        let [i11, i12, i21, i22] = inverse;
        // The next block's positions on this row, near enough for hints: these moved by a block.
        let ahead =
            (_mm512_set1_pd(i11 * super::BLOCK_COLUMNS as f64), _mm512_set1_pd(i21 * super::BLOCK_COLUMNS as f64));
        let fy = py as f64;
        let (b1, b2) = (i12 * fy, i22 * fy);
        let (a11, a21) = (_mm512_set1_pd(i11), _mm512_set1_pd(i21));
        let (b1v, b2v) = (_mm512_set1_pd(b1), _mm512_set1_pd(b2));
        let step = _mm512_set1_pd(8.0);
        // Exact: every column is below 2^52 in magnitude, and so is each step.
        let mut px = _mm512_add_pd(_mm512_set1_pd(px0 as f64), _mm512_set_pd(7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0));
        let n = out.len();
        let position =
            |px: __m512d| (_mm512_add_pd(_mm512_mul_pd(a11, px), b1v), _mm512_add_pd(_mm512_mul_pd(a21, px), b2v));
        let single = |k: usize| {
            let x = (px0 + k as i64) as f64;
            bilinear(map, i11 * x + b1, i21 * x + b2)
        };
        let mut i = 0;
        if inside {
            while i + 8 <= n {
                let (x, y) = position(px);
                if AHEAD {
                    // SAFETY: `hint` only prefetches (no address is read) and `m` is made from the
                    // map that fits; this function is built with the AVX-512 features the callee
                    // needs, and runs only where the processor has them.
                    unsafe { hint(m, _mm512_add_pd(x, ahead.0), _mm512_add_pd(y, ahead.1)) };
                }
                // SAFETY: the positions are inside (caller); i + 8 ≤ n.
                unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(i), eight_inside(m, x, y)) };
                px = _mm512_add_pd(px, step);
                i += 8;
            }
        }
        while i + 8 <= n {
            let (x, y) = position(px);
            if AHEAD {
                // SAFETY: as above.
                unsafe { hint(m, _mm512_add_pd(x, ahead.0), _mm512_add_pd(y, ahead.1)) };
            }
            // SAFETY: `all_inside` only compares registers; this function is built with the
            // AVX-512 features it needs, and runs only where the processor has them.
            if unsafe { all_inside(m, x, y) } {
                // SAFETY: the eight positions are inside (just checked); i + 8 ≤ n.
                unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(i), eight_inside(m, x, y)) };
                px = _mm512_add_pd(px, step);
                i += 8;
                continue;
            }
            // SAFETY: as `all_inside` above.
            if unsafe { near(x, y, 0xff) } {
                // SAFETY: `m` fits; i + 8 ≤ n.
                unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(i), eight(m, x, y)) };
            } else {
                for (k, h) in out.iter_mut().enumerate().skip(i).take(8) {
                    *h = single(k);
                }
            }
            px = _mm512_add_pd(px, step);
            i += 8;
        }
        if i < n {
            // The lanes past the end are set to 0 (a position clamped into the map like any
            // other) and not stored.
            let lanes: __mmask8 = (1u8 << (n - i)) - 1;
            let (x, y) = position(px);
            let (x, y) = (_mm512_maskz_mov_pd(lanes, x), _mm512_maskz_mov_pd(lanes, y));
            // SAFETY: `near` only compares registers; this function is built with the AVX-512
            // features the callee needs, and runs only where the processor has them.
            if unsafe { near(x, y, lanes) } {
                // SAFETY: the store writes only elements i..n of `out`.
                unsafe { _mm256_mask_storeu_ps(out.as_mut_ptr().add(i), lanes, eight(m, x, y)) };
            } else {
                for (k, h) in out.iter_mut().enumerate().skip(i) {
                    *h = single(k);
                }
            }
        }
    }

    /// A band of [`super::resample_linear`] (rows from `py0`, columns from `x0`, `width` wide) in
    /// blocks of [`super::BLOCK_COLUMNS`] columns, as [`super::resample_rows`] fills them, with the
    /// positions in registers. The next block's source lines are prefetched while a block is
    /// filled, from its positions on one row in [`super::PREFETCH_EVERY_ROWS`] (computed into a
    /// small buffer for the hint only).
    ///
    /// # Safety
    /// AVX-512F, VL and AVX2; `map` fits; every column `x0 .. x0 + width` below 2^52 in magnitude.
    #[target_feature(enable = "avx512f,avx512vl,avx2")]
    pub unsafe fn linear_band(map: &HeightMap, inverse: [f64; 4], py0: i64, x0: i64, width: usize, band: &mut [f32]) {
        use super::{linear_block_inside, linear_positions, BLOCK_COLUMNS, PREFETCH_EVERY_ROWS};
        use crate::coherent::Isa;
        // SAFETY: this function's contract: AVX-512F and a map that fits.
        let m = unsafe { Map::new(map) };
        let rows = band.len() / width;
        if rows == 0 {
            return;
        }
        let (mut xs, mut ys) = ([0.0f64; BLOCK_COLUMNS], [0.0f64; BLOCK_COLUMNS]);
        // The first block's lines (the later blocks' are hinted while the one before is filled).
        let n = BLOCK_COLUMNS.min(width);
        for r in (0..rows).step_by(PREFETCH_EVERY_ROWS) {
            linear_positions(Isa::Avx2, inverse, x0, py0 + r as i64, &mut xs[..n], &mut ys[..n]);
            // SAFETY: AVX2; `map` fits.
            unsafe { super::avx2::prefetch_sources(map, &xs[..n], &ys[..n]) };
        }
        let last_row = py0 + rows as i64 - 1;
        for bx in (0..width).step_by(BLOCK_COLUMNS) {
            let end = (bx + BLOCK_COLUMNS).min(width);
            let px0 = x0 + bx as i64;
            let whole = (end - bx) / 8 * 8;
            let inside = whole > 0 && linear_block_inside(map, inverse, (px0, px0 + whole as i64 - 1), (py0, last_row));
            for (r, row) in band.chunks_mut(width).enumerate() {
                let (py, out) = (py0 + r as i64, &mut row[bx..end]);
                if end < width && r.is_multiple_of(PREFETCH_EVERY_ROWS) {
                    // SAFETY: `m` from `map`, which fits; the columns are below 2^52 (caller).
                    unsafe { linear_row::<true>(&m, map, inverse, px0, py, inside, out) };
                } else {
                    // SAFETY: as above.
                    unsafe { linear_row::<false>(&m, map, inverse, px0, py, inside, out) };
                }
            }
        }
    }

    /// Starts loading the lines of the samples at positions 0, 2, 4 and 6 of these (rows floor(y)
    /// and floor(y) + 1 at column floor(x), clamped into the map: NaN clamps to the first row or
    /// column), the hints [`super::prefetch_sources`] gives. A hint only.
    ///
    /// # Safety
    /// AVX-512F and VL; `m` made from a map that fits.
    #[inline(always)]
    unsafe fn hint(m: &Map, x: __m512d, y: __m512d) {
        let zero = _mm512_setzero_pd();
        let floor = |c: __m512d| _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(c);
        // `max(v, 0)` gives 0 for a NaN `v` (the second operand).
        let clamp = |v: __m512d, last: __m512d| _mm512_min_pd(_mm512_max_pd(v, zero), last);
        let column = clamp(_mm512_sub_pd(floor(x), m.start_x), m.last_x);
        let row = clamp(_mm512_sub_pd(floor(y), m.start_y), m.last_y);
        let below = _mm512_min_pd(_mm512_add_pd(row, _mm512_set1_pd(1.0)), m.last_y);
        let top = _mm512_cvttpd_epi32(_mm512_add_pd(_mm512_mul_pd(row, m.width), column));
        let bottom = _mm512_cvttpd_epi32(_mm512_add_pd(_mm512_mul_pd(below, m.width), column));
        let mut lines = [0i32; 16];
        // SAFETY: `lines` has room for sixteen i32.
        unsafe {
            _mm256_storeu_si256(lines.as_mut_ptr().cast(), top);
            _mm256_storeu_si256(lines.as_mut_ptr().add(8).cast(), bottom);
        }
        for k in [0, 2, 4, 6, 8, 10, 12, 14] {
            // SAFETY: each index is a pixel of the data (clamped above, below 2^31 by `fits`); a
            // prefetch reads nothing the program sees.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(m.data.add(lines[k] as usize).cast()) };
        }
    }

    /// Whether all eight positions suit [`eight_inside`]: `start ≤ c < start + last` on both axes
    /// (so `0 ≤ floor(c) − start < last`), which no NaN passes.
    #[inline(always)]
    unsafe fn all_inside(m: &Map, x: __m512d, y: __m512d) -> bool {
        let ok = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(x, m.start_x)
            & _mm512_cmp_pd_mask::<_CMP_LT_OQ>(x, m.high_x)
            & _mm512_cmp_pd_mask::<_CMP_GE_OQ>(y, m.start_y)
            & _mm512_cmp_pd_mask::<_CMP_LT_OQ>(y, m.high_y);
        ok == 0xff
    }

    /// Whether every coordinate of the lanes in `lanes` is below 2^52 in magnitude (not NaN).
    #[inline(always)]
    unsafe fn near(x: __m512d, y: __m512d, lanes: __mmask8) -> bool {
        let near = _mm512_set1_pd(4_503_599_627_370_496.0); // 2^52
        let ok = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(_mm512_abs_pd(x), near)
            & _mm512_cmp_pd_mask::<_CMP_LT_OQ>(_mm512_abs_pd(y), near);
        ok & lanes == lanes
    }

    /// # Safety
    /// The processor has AVX-512F and AVX-512VL, `super::avx2::fits(map)` holds, and the three
    /// slices have the same length.
    #[target_feature(enable = "avx512f,avx512vl,avx2")]
    pub unsafe fn bilinear_many(map: &HeightMap, xs: &[f64], ys: &[f64], out: &mut [f32]) {
        // SAFETY: this function's contract: AVX-512F and a map that fits.
        let m = unsafe { Map::new(map) };
        let n = out.len();
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: i + 8 ≤ n, the length of all three slices.
            let (x, y) = unsafe { (_mm512_loadu_pd(xs.as_ptr().add(i)), _mm512_loadu_pd(ys.as_ptr().add(i))) };
            // SAFETY: `all_inside` only compares registers; this function is built with the
            // AVX-512 features it needs, and runs only where the processor has them.
            if unsafe { all_inside(&m, x, y) } {
                // SAFETY: AVX-512F and VL, `fits(map)` (caller), the eight positions inside (just
                // checked); i + 8 ≤ n.
                unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(i), eight_inside(&m, x, y)) };
                i += 8;
                continue;
            }
            // SAFETY: as `all_inside` above.
            if unsafe { near(x, y, 0xff) } {
                // SAFETY: AVX-512F and VL, `fits(map)` (caller); i + 8 ≤ n.
                unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(i), eight(&m, x, y)) };
            } else {
                // A NaN or a position beyond 2^52: the scalar code handles these eight.
                for k in i..i + 8 {
                    out[k] = bilinear(map, xs[k], ys[k]);
                }
            }
            i += 8;
        }
        if i < n {
            // The last n − i < 8 positions: masked loads (the lanes past the end are 0, a position
            // whose indexes are clamped into the map like any other) and a masked store.
            let lanes: __mmask8 = (1u8 << (n - i)) - 1;
            // SAFETY: the mask covers only elements i..n of each slice.
            let (x, y) = unsafe {
                (_mm512_maskz_loadu_pd(lanes, xs.as_ptr().add(i)), _mm512_maskz_loadu_pd(lanes, ys.as_ptr().add(i)))
            };
            // SAFETY: `near` only compares registers; this function is built with the AVX-512
            // features the callee needs, and runs only where the processor has them.
            if unsafe { near(x, y, lanes) } {
                // SAFETY: as above; the store writes only elements i..n of `out`.
                unsafe { _mm256_mask_storeu_ps(out.as_mut_ptr().add(i), lanes, eight(&m, x, y)) };
            } else {
                for k in i..n {
                    out[k] = bilinear(map, xs[k], ys[k]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// The samplers the tests run: every one the machine has, the others reported
    /// (`geogen_simd::testable`).
    fn tested_samplers() -> Vec<Sampler> {
        let mut samplers = vec![Sampler::Scalar];
        if geogen_simd::testable(geogen_simd::Isa::Avx2) {
            samplers.push(Sampler::Avx2);
            if geogen_simd::testable(geogen_simd::Isa::Avx512) {
                samplers.push(Sampler::Avx512);
            }
        }
        samplers
    }

    fn tested_isas() -> Vec<Isa> {
        let mut isas = vec![Isa::Scalar];
        if geogen_simd::testable(geogen_simd::Isa::Avx2) {
            isas.push(Isa::Avx2);
        }
        isas
    }

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

    /// The batched sampler on every available instruction set gives the bits of [`bilinear`] at
    /// each position: inside, between, on and around the edges, snapped fractions, far outside,
    /// NaN and beyond 2^52, over maps with infinities and signed zeros, at every batch length.
    #[test]
    fn batched_samples_equal_the_single_ones_on_every_isa() {
        let mut x = 11u32;
        let mut next = || {
            x = geogen_random::hash1(x);
            f64::from(x) / f64::from(u32::MAX)
        };
        let rects = [
            Rect::new(-5, 7, 9, 6),
            Rect::new(0, 0, 1, 1),
            Rect::new(3, -4, 1, 7),
            Rect::new(-40, 2, 33, 1),
            // Two wide: the narrowest map whose rows are read in pairs.
            Rect::new(6, -3, 2, 5),
        ];
        for (m, &rect) in rects.iter().enumerate() {
            let len = (rect.width * rect.height) as usize;
            let data: Vec<f32> = (0..len)
                .map(|k| match (k + m) % 9 {
                    0 => -0.0,
                    1 => 0.0,
                    2 if m % 2 == 0 => f32::INFINITY,
                    _ => (next() - 0.5) as f32,
                })
                .collect();
            let map = HeightMap::from_data(rect, data).unwrap();
            let (x0, y0) = (rect.x as f64, rect.y as f64);
            let (w, h) = (rect.width as f64, rect.height as f64);
            let mut positions = vec![
                (x0, y0),
                (x0 + w - 1.0, y0 + h - 1.0),
                (x0 + w - 0.5, y0 + h - 0.5),
                (x0 - 0.5, y0 - 0.5),
                (-0.0, -0.0),
                (1e300, -1e300),
                (f64::NAN, y0),
                (x0, f64::INFINITY),
                (4.5e15, y0),
                (4.503599627370495e15, -4.503599627370495e15),
                (x0 + 0.00004, y0 + 0.99999999),
            ];
            for _ in 0..4000 {
                let (u, v) = (next(), next());
                positions.push((x0 - 3.0 + u * (w + 6.0), y0 - 3.0 + v * (h + 6.0)));
                positions.push(((x0 + (u * w).floor()) + 0.00004 * v, y0 + (v * h).floor()));
                positions.push((x0 + (u * w).floor() - 1e-17, y0 + (v * h).floor() + 0.5));
            }
            // Runs of positions all inside (the vector builds' clamp-free groups): on the first
            // column and row, just short of the last, snapped and kept fractions.
            let below_last = |start: f64, len: f64| start + len - 1.0 - (start + len).abs().max(1.0) * 1e-15;
            for k in 0..800 {
                let (u, v) = (next(), next());
                positions.push(match k % 5 {
                    0 => (x0 + u * (w - 1.0), y0 + v * (h - 1.0)),
                    1 => (x0, below_last(y0, h)),
                    2 => (below_last(x0, w), y0 + 0.00004 * v),
                    3 => (x0 + (u * (w - 1.0)).floor() + 0.00005, y0 + (v * (h - 1.0)).floor()),
                    _ => (x0 + (u * (w - 1.0)).floor() + 0.99999, y0 + (v * (h - 1.0)).floor() + 0.5),
                });
            }
            let (xs, ys): (Vec<f64>, Vec<f64>) = positions.iter().copied().unzip();
            let single: Vec<u32> = positions.iter().map(|&(px, py)| bilinear(&map, px, py).to_bits()).collect();
            for isa in tested_samplers() {
                for len in [0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 63, 64, 65, xs.len()] {
                    let len = len.min(xs.len());
                    let mut out = vec![f32::NAN; len];
                    bilinear_many(&map, &xs[..len], &ys[..len], &mut out, isa);
                    for (k, v) in out.iter().enumerate() {
                        assert_eq!(v.to_bits(), single[k], "{isa:?} map {m} at {:?}", positions[k]);
                    }
                }
            }
        }
    }

    /// The blocked resampling (positions of the next block computed and prefetched ahead) gives
    /// every pixel the bits of [`bilinear`] at its own position, on every instruction set, for
    /// rectangles narrower than a block, not a whole number of blocks wide or of bands tall,
    /// anywhere, with sources partly outside the map.
    #[test]
    fn resampling_equals_the_per_pixel_sample_on_every_isa() {
        let source_rect = Rect::new(-70, -50, 150, 120);
        let len = (source_rect.width * source_rect.height) as u32;
        let data = (0..len).map(|k| geogen_random::hash1(k) as f32 / u32::MAX as f32 - 0.5).collect();
        let source = HeightMap::from_data(source_rect, data).unwrap();
        let (sin, cos) = (libm::sin(0.7), libm::cos(0.7));
        let position = |px: i64, py: i64| {
            let (x, y) = (px as f64, py as f64);
            (cos * x + sin * y + 0.25, -sin * x + cos * y - 3.5)
        };
        for rect in [
            Rect::new(-60, -40, 1, 1),
            Rect::new(-30, -41, 63, 33),
            Rect::new(5, 7, 64, 32),
            Rect::new(-61, -3, 130, 70),
        ] {
            for isa in tested_samplers() {
                let got = resample_on(isa, &source, rect, position).unwrap();
                assert_eq!(got.rect(), rect);
                for py in rect.y..rect.y + rect.height as i64 {
                    for px in rect.x..rect.x + rect.width as i64 {
                        let (x, y) = position(px, py);
                        let want = bilinear(&source, x, y).to_bits();
                        assert_eq!(got.get(px, py).unwrap().to_bits(), want, "{isa:?} {rect} ({px}, {py})");
                    }
                }
            }
        }
    }

    /// The linear resampling with its positions in registers gives every pixel the bits of
    /// [`bilinear`] at [`linear_positions`]' scalar position, on every sampler and with 1 to 3
    /// threads: blocks wholly inside the map (the clamp-free path), partly and wholly outside,
    /// odd widths and tails, negative origins, positions beyond 2^52 and NaN.
    #[test]
    fn linear_resampling_equals_the_per_pixel_sample_on_every_sampler() {
        let source_rect = Rect::new(-90, -70, 260, 230);
        let len = (source_rect.width * source_rect.height) as u32;
        let data = (0..len)
            .map(|k| match k % 97 {
                0 => -0.0,
                1 => 0.0,
                _ => geogen_random::hash1(k) as f32 / u32::MAX as f32 - 0.5,
            })
            .collect();
        let source = HeightMap::from_data(source_rect, data).unwrap();
        let (sin, cos) = (libm::sin(0.5), libm::cos(0.5));
        let matrices = [
            [cos, sin, -sin, cos],
            [0.5, 0.0, 0.0, 0.5],
            [-1.0, 0.0, 0.0, 1.0],
            [0.5, -0.0, 0.0, 2.5],
            [1.0, 0.00003, 0.0, 1.0],
            // Tiny positions either side of 0: the fraction of −1e-17 rounds to 1 (not kept).
            [1e-19, 0.0, 0.0, 1.0],
            [4.5e13, 0.0, 0.0, 1.0],
            [1e300, -1e300, 0.0, 1.0],
            [f64::NAN, 0.0, 0.0, 1.0],
            [cos, sin, f64::INFINITY, cos],
        ];
        // The rotation's first block of the second rectangle lies wholly inside the map.
        assert!(linear_block_inside(&source, matrices[0], (-40, -33), (-30, 1)));
        assert!(!linear_block_inside(&source, matrices[0], (-200, -137), (-30, 1)));
        assert!(linear_block_inside(&source, matrices[5], (-40, 23), (-30, 1)));
        let rects = [
            Rect::new(-60, -40, 1, 1),
            Rect::new(-40, -30, 64, 32),
            Rect::new(-61, -45, 135, 70),
            Rect::new(-20, -10, 7, 40),
            Rect::new(-150, -120, 300, 9),
        ];
        for inverse in matrices {
            let [i11, i12, i21, i22] = inverse;
            for rect in rects {
                let mut want = Vec::new();
                for py in rect.y..rect.y + rect.height as i64 {
                    for px in rect.x..rect.x + rect.width as i64 {
                        let (x, y) = (px as f64, py as f64);
                        want.push(bilinear(&source, i11 * x + i12 * y, i21 * x + i22 * y).to_bits());
                    }
                }
                for sampler in tested_samplers() {
                    for threads in 1..=3 {
                        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                        let got = pool.install(|| resample_linear(sampler, &source, rect, inverse)).unwrap();
                        assert_eq!(got.rect(), rect);
                        let got: Vec<u32> = got.data().iter().map(|v| v.to_bits()).collect();
                        assert!(got == want, "{sampler:?} {inverse:?} {rect} {threads} threads");
                    }
                }
            }
        }
    }

    /// The linear positions on every instruction set have the bits of the per-pixel arithmetic
    /// (`Transform::source`'s), at every length, near the origin, far out and past 2^52 (where
    /// the vector path gives way to the scalar one), for ordinary and extreme matrices.
    #[test]
    fn linear_positions_equal_the_per_pixel_arithmetic_on_every_isa() {
        let (sin, cos) = (libm::sin(1.3), libm::cos(1.3));
        let matrices = [[cos, sin, -sin, cos], [0.5, -0.0, 1e-300, 3.0], [1e300, -1e300, f64::MIN_POSITIVE, -7.25]];
        let starts = [0i64, -37, 1_999_999, -(1 << 52) + 3, (1 << 52) - 10, i64::MIN, i64::MAX - 70];
        for inverse in matrices {
            let [i11, i12, i21, i22] = inverse;
            for &px0 in &starts {
                for py in [0i64, -5, 123_456_789, i64::MIN] {
                    for isa in tested_isas() {
                        for len in [0usize, 1, 3, 4, 5, 8, 63, 64, 67] {
                            let (mut xs, mut ys) = (vec![f64::NAN; len], vec![f64::NAN; len]);
                            linear_positions(isa, inverse, px0, py, &mut xs, &mut ys);
                            for i in 0..len {
                                let (x, y) = (px0.wrapping_add(i as i64) as f64, py as f64);
                                let want = (i11 * x + i12 * y, i21 * x + i22 * y);
                                assert_eq!(
                                    xs[i].to_bits(),
                                    want.0.to_bits(),
                                    "{isa:?} {inverse:?} ({px0} + {i}, {py})"
                                );
                                assert_eq!(
                                    ys[i].to_bits(),
                                    want.1.to_bits(),
                                    "{isa:?} {inverse:?} ({px0} + {i}, {py})"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// The prefetch hints read nothing outside the map (NaN, infinite and far positions, maps of
    /// one pixel) and change no pixel.
    #[test]
    fn prefetch_hints_stay_inside_the_map() {
        for rect in [Rect::new(-5, 7, 9, 6), Rect::new(0, 0, 1, 1), Rect::new(3, -4, 1, 7)] {
            let map = HeightMap::from_data(rect, vec![0.5; (rect.width * rect.height) as usize]).unwrap();
            let xs = [f64::NAN, 1e300, -1e300, f64::INFINITY, -3.5, 2.0, 4.9, 1e9, -0.0];
            let ys = [0.0, f64::NEG_INFINITY, 1e300, f64::NAN, 7.5, 12.9, -1e9, 3.0, 20.0];
            for len in 0..=xs.len() {
                prefetch_sources(&map, &xs[..len], &ys[..len]);
                prefetch_rows_ahead(&map, &xs[..len], &ys[..len], 8, 1);
            }
            assert!(map.data().iter().all(|&v| v == 0.5));
        }
    }

    /// `map_by_bands` hands every band its absolute first row and column and a zeroed slice of
    /// whole rows in place, in parallel and in the engine's serial mode alike: bands cut short at
    /// the bottom, one-pixel-wide maps, pixels a band leaves alone (0), and the empty rectangle.
    #[test]
    fn map_by_bands_fills_each_band_in_place_from_zero() {
        let value = |px: i64, py: i64| (px * 31 + py * 7) as f32 / 1024.0;
        for rect in [Rect::new(-13, -9, 97, 61), Rect::new(5, 3, 1, 17), Rect::new(0, 0, 40, 8), Rect::EMPTY] {
            for rows in [1, 3, 8, 100] {
                let fill = |py0: i64, x0: i64, band: &mut [f32]| {
                    let width = rect.width as usize;
                    assert_eq!(band.len() % width, 0);
                    for (r, row) in band.chunks_mut(width).enumerate() {
                        for (i, h) in row.iter_mut().enumerate() {
                            assert_eq!(*h, 0.0);
                            // Every third pixel is left alone: it must stay 0.
                            if i % 3 != 0 {
                                *h = value(x0 + i as i64, py0 + r as i64);
                            }
                        }
                    }
                };
                let parallel = map_by_bands(rect, rows, fill).unwrap();
                let serial = geogen_render::rows::serially(|| map_by_bands(rect, rows, fill)).unwrap();
                assert_eq!(parallel.rect(), if rect.is_empty() { Rect::EMPTY } else { rect });
                assert_eq!(parallel, serial);
                for py in rect.y..rect.y + rect.height as i64 {
                    for px in rect.x..rect.x + rect.width as i64 {
                        let expected = if (px - rect.x) % 3 != 0 { value(px, py) } else { 0.0 };
                        assert_eq!(parallel.get(px, py), Some(expected));
                    }
                }
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
