//! Separable box blur, horizontal then vertical, with the original GeoGen's window: the output at
//! `x` averages the `2r + 1` inputs `[x − r + 1, x + r + 1]` on each axis (one pixel towards the
//! positive side of a centred window; measured on the original, see [`Window`]). Inputs beyond the
//! buffer edge repeat the edge pixel; the bounds rule makes sure that never touches a pixel anybody
//! needs.
//!
//! Why fixed point: a sliding-window sum is O(1) per pixel whatever the radius, but in floating
//! point its rounding depends on where the running sum started, i.e. on the buffer's extent, which
//! differs between tiles. Heights are therefore converted to exact 32.32 fixed point (`h × 2^32`,
//! truncated; exact for every f32 ≥ 2^-32 in magnitude), summed in `i64` (exact, so any starting
//! point and any split into bands gives the same sums), and each pass takes the truncated integer
//! average, like the original's integer arithmetic. The result is bit-identical for every tile
//! whose margins cover the window, and for every thread count.

use geogen_render::{HeightMap, HeightProfile, RenderError};
use rayon::prelude::*;

const FIXED_ONE: f64 = 4_294_967_296.0; // 2^32
/// Radii are capped so `(2r + 1) × 2^32` fits in `i64`; unreachable in practice, since a blur of
/// radius r needs a (2r)² buffer that the memory plan rejects long before.
const MAX_RADIUS: u64 = 1 << 29;

/// The blur window of radius `r` relative to the output pixel: `low` inputs before it and `high`
/// after it, `low + high + 1 = 2r + 1`. The original averages `[x − r + 1, x + r + 1]` (a raised
/// pixel at 20 blurred with r = 2 covers 17..21), so shapes move one pixel towards the origin; we
/// keep that so scripts keep their terrain.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Window {
    pub low: u64,
    pub high: u64,
}

impl Window {
    /// The original's window of radius `r` (empty for `r = 0`: no blur). Not capped: the bounds
    /// rule must ask for the whole window, and the memory plan refuses what cannot be allocated.
    pub fn of_radius(r: u64) -> Window {
        if r == 0 {
            Window { low: 0, high: 0 }
        } else {
            Window { low: r - 1, high: r.saturating_add(1) }
        }
    }

    fn len(self) -> i64 {
        self.low.saturating_add(self.high).saturating_add(1) as i64
    }

    fn is_identity(self) -> bool {
        self.low == 0 && self.high == 0
    }
}

#[inline]
fn to_fixed(h: f32) -> i64 {
    (f64::from(h) * FIXED_ONE) as i64
}

#[inline]
fn from_fixed(q: i64) -> f32 {
    (q as f64 / FIXED_ONE) as f32
}

/// Bytes of scratch the blur of a `pixels`-pixel profile needs (the fixed-point intermediate).
pub fn scratch_bytes(pixels: u64) -> u64 {
    pixels.saturating_mul(8)
}

/// Truncating division of an `i64` by a divisor fixed for the whole blur, without a division
/// instruction (Granlund and Montgomery, "Division by invariant integers using multiplication",
/// 1994, theorem 4.2 with N = 63): for `d >= 1`, `l = ceil(log2 d)` and `m = floor(2^(63+l) / d) + 1`,
/// `floor(x / d) = (m·x) >> (63 + l)` for every `0 <= x < 2^63`; the sign is applied after, so the
/// result is exactly Rust's `s / d` (truncation toward zero). `i64::MIN` takes the plain division.
#[derive(Copy, Clone, Debug)]
struct Divisor {
    d: i64,
    magic: u64,
    shift: u32,
}

impl Divisor {
    fn new(d: i64) -> Divisor {
        let d = d.max(1);
        let l = 64 - (d as u64 - 1).leading_zeros(); // ceil(log2 d); 0 for d = 1
        let shift = 63 + l;
        let magic = ((1u128 << shift) / d as u128 + 1) as u64;
        Divisor { d, magic, shift }
    }

    #[inline(always)]
    fn divide(self, s: i64) -> i64 {
        if s == i64::MIN {
            return s / self.d;
        }
        let q = ((u128::from(s.unsigned_abs()) * u128::from(self.magic)) >> self.shift) as i64;
        if s < 0 {
            -q
        } else {
            q
        }
    }
}

/// Sum of `value(clamp(k))` for `k` in `-low..=high`, over a line of `len` values: the clamped
/// window of the first output.
fn initial_window_sum(len: usize, value: &impl Fn(usize) -> i64, window: Window) -> i64 {
    let last = len as i64 - 1;
    let mut sum = 0i64;
    // Inputs before index 0 all repeat index 0; those past the end repeat the last one.
    sum = sum.wrapping_add(value(0).wrapping_mul(window.low as i64 + 1));
    let direct = (window.high as i64).min(last);
    for k in 1..=direct as usize {
        sum = sum.wrapping_add(value(k));
    }
    let replicated = window.high as i64 - direct;
    sum.wrapping_add(value(last as usize).wrapping_mul(replicated))
}

/// Blurs one line of fixed-point values: `out(x, window sum at x / n)` for every x.
fn blur_line(line: &[i64], window: Window, divisor: Divisor, out: impl FnMut(usize, i64)) {
    blur_line_of(line.len(), |k| line[k], window, divisor, out)
}

/// [`blur_line`] over the `len` values `value(k)` (computed where they are read, so a row of
/// heights needs no row of fixed-point values beside it).
fn blur_line_of(
    len: usize,
    value: impl Fn(usize) -> i64,
    window: Window,
    divisor: Divisor,
    mut out: impl FnMut(usize, i64),
) {
    let last = len as i64 - 1;
    let mut sum = initial_window_sum(len, &value, window);
    for x in 0..len {
        out(x, divisor.divide(sum));
        let add = (x as i64 + window.high as i64 + 1).min(last) as usize;
        let sub = (x as i64 - window.low as i64).max(0) as usize;
        sum = sum.wrapping_add(value(add)).wrapping_sub(value(sub));
    }
}

/// How [`box_blur`] splits a map of `h` rows for a window of `n` rows: bands of `band_rows` whole
/// rows, blurred independently and in parallel, each keeping the horizontal pass of at most
/// `ring` rows (the distinct rows of one vertical window) instead of the whole map's.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Layout {
    band_rows: usize,
    bands: usize,
    ring: usize,
}

impl Layout {
    /// Bands at least eight windows tall (so the rows two bands both read stay a small share),
    /// and at most eight of them (so the scratch is bounded whatever the thread count); the split
    /// depends on the map and the radius only, never on the threads.
    fn of(h: usize, window: Window) -> Layout {
        let n = window.len().max(1) as usize;
        let band_rows = n.saturating_mul(8).max(h.div_ceil(8)).max(32).min(h.max(1));
        Layout { band_rows, bands: h.div_ceil(band_rows), ring: n.min(h) }
    }

    /// Rows `[first, last]` band `b` reads (window positions clamped into the map).
    fn reads(self, b: usize, h: usize, window: Window) -> (usize, usize) {
        let y0 = b.saturating_mul(self.band_rows);
        let y1 = y0.saturating_add(self.band_rows).min(h);
        let first = y0.saturating_sub(window.low as usize);
        let last = (y1 - 1).saturating_add(window.high as usize).min(h - 1);
        (first, last)
    }

    /// Rows band `b` reads that belong to other bands: they are saved before any band writes.
    fn halo_rows(self, b: usize, h: usize, window: Window) -> usize {
        let (first, last) = self.reads(b, h, window);
        let y0 = b.saturating_mul(self.band_rows);
        let y1 = y0.saturating_add(self.band_rows).min(h);
        (y0 - first) + (last + 1 - y1)
    }
}

/// Bytes of scratch [`box_blur`] allocates for a `width` × `height` map with radius `r` (what the
/// memory plan counts for a Blur): the saved rows between bands, and each band's scratch: the
/// fast path's (a ring of strip rows, column sums of a strip, the few values its horizontal pass
/// puts aside, and two copies of a strip's left margin) for the windows it takes, else the `i64`
/// path's (a ring of fixed-point rows, column sums and a row buffer).
pub fn map_scratch_bytes(width: u64, height: u64, r: u64) -> u64 {
    let window = Window::of_radius(r.min(MAX_RADIUS));
    if window.is_identity() || width == 0 || height == 0 {
        return 0;
    }
    let (Ok(h), Ok(w)) = (usize::try_from(height), usize::try_from(width)) else {
        return u64::MAX;
    };
    let layout = Layout::of(h, window);
    let halo: u64 = (0..layout.bands).map(|b| layout.halo_rows(b, h, window) as u64).sum();
    let exact = (layout.ring as u64 + 2).saturating_mul(width).saturating_mul(8);
    let strips = Strips::of(w, window, strip_columns(window));
    let slot = strips.slot as u64;
    let tail = (window.low.min(slot)).saturating_add((window.len() as u64).min(slot));
    let fast = (layout.ring as u64 + 1)
        .saturating_mul(slot)
        .saturating_add(strips.width as u64)
        .saturating_add(tail)
        .saturating_mul(8)
        .saturating_add((layout.band_rows as u64).saturating_mul(strips.margin as u64).saturating_mul(8));
    // The fast path's switch to `i64` reuses its own scratch: only the long windows' `i64` path
    // allocates the other.
    let per_band = if window.len() <= FAST_MAX_WINDOW { fast } else { exact };
    (layout.bands as u64).saturating_mul(per_band).saturating_add(halo.saturating_mul(width).saturating_mul(4))
}

fn try_vec<T: Clone>(len: usize, value: T) -> Result<Vec<T>, RenderError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| RenderError::Allocation { bytes: (len as u64).saturating_mul(std::mem::size_of::<T>() as u64) })?;
    v.resize(len, value);
    Ok(v)
}

/// Blurs `map` in place with radius `r` (physical pixels). `r = 0` is a no-op.
///
/// The map is cut into bands of rows ([`Layout`]), blurred in parallel. The rows a band reads
/// beyond its own (up to a window above and below) are copied aside first; then each band walks
/// down its rows with exact running column sums over a ring holding the horizontal pass (fixed
/// point) of the rows in the current window, writing each output row over its input row once
/// nothing needs that row any more. So the blur needs a few windows of rows of scratch instead of
/// a fixed-point copy of the whole map, and reads and writes the map once. Every division by the
/// window length is [`Divisor`]'s exact one; the sums are exact (modulo 2^64), so the bytes do not
/// depend on the bands.
pub fn box_blur(map: &mut HeightMap, r: u64) -> Result<(), RenderError> {
    let rect = map.rect();
    let window = Window::of_radius(r.min(MAX_RADIUS));
    if window.is_identity() || rect.is_empty() {
        return Ok(());
    }
    let n = window.len();
    if n <= FAST_MAX_WINDOW {
        box_blur_fast(map, window, n)
    } else {
        box_blur_i64(map, window, n)
    }
}

/// The rows each band of `layout` reads from its neighbours, saved before any band writes.
fn saved_halos(map: &HeightMap, layout: Layout, window: Window) -> Result<Vec<Vec<f32>>, RenderError> {
    let (w, h) = (map.width(), map.height());
    let data = map.data();
    (0..layout.bands)
        .into_par_iter()
        .map(|b| {
            let (first, last) = layout.reads(b, h, window);
            let y0 = b * layout.band_rows;
            let y1 = (y0 + layout.band_rows).min(h);
            let mut saved = try_vec(layout.halo_rows(b, h, window) * w, 0.0f32)?;
            let (top, bottom) = saved.split_at_mut((y0 - first) * w);
            top.copy_from_slice(&data[first * w..y0 * w]);
            bottom.copy_from_slice(&data[y1 * w..(last + 1) * w]);
            Ok(saved)
        })
        .collect()
}

/// Row `y` of the map as band `[y0, y1)` sees it while it writes its rows in place: its own rows
/// from `out` (an output row is written only once no window needs its input any more), the rows
/// of other bands from the copy saved before any band wrote (`halo`, from row `first` on).
fn band_source_row<'a>(
    y: usize,
    (y0, y1, first): (usize, usize, usize),
    w: usize,
    out: &'a [f32],
    halo: &'a [f32],
) -> &'a [f32] {
    if y < y0 {
        &halo[(y - first) * w..(y - first + 1) * w]
    } else if y < y1 {
        &out[(y - y0) * w..(y - y0 + 1) * w]
    } else {
        let at = (y0 - first) + (y - y1);
        &halo[at * w..(at + 1) * w]
    }
}

/// [`box_blur`] in `i64` for any heights (the fast path's reference).
fn box_blur_i64(map: &mut HeightMap, window: Window, n: i64) -> Result<(), RenderError> {
    let (w, h) = (map.width(), map.height());
    let divisor = Divisor::new(n);
    let layout = Layout::of(h, window);
    let (low, high) = (window.low as usize, window.high as usize);

    let halos = saved_halos(map, layout, window)?;

    map.data_mut().par_chunks_mut(w * layout.band_rows).zip(halos).enumerate().try_for_each(
        |(b, (out, halo))| -> Result<(), RenderError> {
            let y0 = b * layout.band_rows;
            let y1 = y0 + out.len() / w;
            let (first, _) = layout.reads(b, h, window);
            let m = layout.ring;
            let mut ring = try_vec(m * w, 0i64)?;
            let mut sums = try_vec(w, 0i64)?;
            let mut fixed = try_vec(w, 0i64)?;
            // The horizontal pass of row `y` into its ring slot. Rows of this band are read from
            // the map (never yet overwritten: output rows are written only behind the window),
            // the others from the saved copy.
            let mut horizontal = |y: usize, out: &[f32], ring: &mut [i64]| {
                let src = band_source_row(y, (y0, y1, first), w, out, &halo);
                for (f, &v) in fixed.iter_mut().zip(src) {
                    *f = to_fixed(v);
                }
                let slot = &mut ring[(y % m) * w..(y % m + 1) * w];
                blur_line(&fixed, window, divisor, |x, v| slot[x] = v);
            };
            let last = h - 1;
            // The window of the band's first row, `y0 - low ..= y0 + high`: positions before 0
            // repeat row 0 and those past the end the last row, so they are counted, not summed.
            let (top, bottom) = (y0 as i64 - low as i64, (y0 + high) as i64);
            let below = (bottom.min(-1) - top + 1).max(0);
            let above = (bottom - top.max(last as i64 + 1) + 1).max(0);
            let (lo, mut hi) = (y0.saturating_sub(low), (y0 + high).min(last));
            for y in lo..=hi {
                horizontal(y, out, &mut ring);
                for (s, &v) in sums.iter_mut().zip(&ring[(y % m) * w..(y % m + 1) * w]) {
                    *s = s.wrapping_add(v);
                }
            }
            for (i, row) in [(0, below), (last, above)] {
                for (s, &v) in sums.iter_mut().zip(&ring[(i % m) * w..(i % m + 1) * w]) {
                    *s = s.wrapping_add(v.wrapping_mul(row));
                }
            }
            for y in y0..y1 {
                for (o, &s) in out[(y - y0) * w..(y - y0 + 1) * w].iter_mut().zip(&sums) {
                    *o = from_fixed(divisor.divide(s));
                }
                if y + 1 == y1 {
                    break;
                }
                // Slide the window one row: the row leaving it first (its slot may be the one the
                // entering row takes), then the entering row, computed if it is new.
                let sub = y.saturating_sub(low).min(last);
                for (s, &v) in sums.iter_mut().zip(&ring[(sub % m) * w..(sub % m + 1) * w]) {
                    *s = s.wrapping_sub(v);
                }
                let add = (y + high + 1).min(last);
                if add > hi {
                    horizontal(add, out, &mut ring);
                    hi = add;
                }
                for (s, &v) in sums.iter_mut().zip(&ring[(add % m) * w..(add % m + 1) * w]) {
                    *s = s.wrapping_add(v);
                }
            }
            Ok(())
        },
    )
}

/// The exact fast path: the same integers as the `i64` path, carried in `f64` where the
/// arithmetic is exact, so the compiler can run it in vector registers.
///
/// Taken when every height is finite and `max |h| × 2^32 × n < 2^49` (window length `n`, at most
/// [`FAST_MAX_WINDOW`]): then every fixed-point value, window sum and partial sum is an integer
/// below 2^50 in magnitude, exactly representable in `f64`, so sums in any order are exact and
/// equal the `i64` path's (which cannot wrap or saturate there either). The truncated division
/// `s / n` is `trunc(fl(s / n))`: the quotient's rounding error is below `|s / n| × 2^-53 <
/// 1 / (8n)`, while a non-integer quotient is at least `1 / n` from the next integer away from
/// zero, so rounding never reaches it (and never goes below the truncation, an integer).
///
/// The division itself is one multiplication and a truncation ([`fast::divide`]):
/// `trunc(fl(s × c))` with `c` the smallest `f64` at least `1/n` ([`fast::reciprocal_up`], so
/// `c = (1/n)(1 + ε)` with `0 ≤ ε < 2^-52`). With `a = |s| = kn + j` (`0 ≤ j < n`, `a < 2^49`),
/// `x = a·c ≥ a/n ≥ k`, so the rounded product is at least the integer `k`; and
/// `x ≤ k + 1 − 1/n + (a/n)·2^-52 < k + 1 − 7/(8n)`, while half the spacing of `f64` below
/// `k + 1 ≤ 2^49/n + 1` is at most `(k + 1)·2^-53 < 1/(16n) + 2^-53 < 7/(8n)`, so the rounded
/// product stays below `k + 1`. Its truncation is therefore `k = ⌊a/n⌋`; rounding and truncation
/// are symmetric in the sign, so `trunc(fl(s × c))` is the truncated quotient `trunc(s / n)` of
/// the `i64` path, bit for bit (`+ 0.0` turns the `−0` of a small negative `s` into `+0`).
mod fast {
    use super::Window;
    #[cfg(target_arch = "x86_64")]
    use crate::lanes64::{Avx2, Avx512};
    use crate::lanes64::{Lanes64, Scalar};

    /// The builds of the fast path: plain Rust (the reference), AVX2, AVX-512F.
    pub const SCALAR: u8 = 0;
    pub const AVX2: u8 = 1;
    pub const AVX512: u8 = 2;

    /// Whether this processor runs the build `isa`.
    pub fn isa_available(isa: u8) -> bool {
        match isa {
            SCALAR => true,
            AVX2 => geogen_simd::Isa::Avx2.is_supported(),
            AVX512 => geogen_simd::Isa::Avx512.is_supported(),
            _ => false,
        }
    }

    /// The widest build the process runs ([`geogen_simd::active`]).
    #[inline]
    pub fn best_isa() -> u8 {
        match geogen_simd::active() {
            geogen_simd::Isa::Scalar => SCALAR,
            geogen_simd::Isa::Avx2 => AVX2,
            geogen_simd::Isa::Avx512 => AVX512,
        }
    }

    const FIXED_ONE: f64 = 4_294_967_296.0;
    const INV_FIXED_ONE: f64 = 1.0 / 4_294_967_296.0;

    /// `trunc(s × c)` per lane, with `+0.0` for a zero result (the `i64` path's 0 converts to
    /// `+0.0`): the product, its truncation (an exact IEEE operation) and `+ 0.0`.
    #[inline(always)]
    fn quotient<L: Lanes64>(s: L::D, c: L::D) -> L::D {
        L::add(L::trunc(L::mul(s, c)), L::splat(0.0))
    }

    /// `c`, the smallest `f64` at least `1 / n`, for an integer `n` in [1, 2^16] (exact integer
    /// arithmetic: `c = ⌈2^(52+t) / n⌉ × 2^-(52+t)` with `t = ⌈log2 n⌉`, whose numerator is at
    /// most 2^53, so the `f64` is exact; `c < (1 / n)(1 + 2^-52)`).
    pub fn reciprocal_up(n: f64) -> f64 {
        let n = n as u64;
        debug_assert!((1..=1 << 16).contains(&n));
        let t = 64 - (n - 1).leading_zeros(); // ⌈log2 n⌉, 0 for n = 1
        let m = (1u128 << (52 + t)).div_ceil(u128::from(n));
        m as f64 * f64::from_bits(u64::from(1023 - 52 - t) << 52)
    }

    /// `trunc(s / n)` for an integer-valued `s` with |s| < 2^49 and an integer `n` in
    /// [1, 2^16], given `c = reciprocal_up(n)`, with `+0.0` for a zero result: the same bits as
    /// `trunc(s / n)` (see the module docs), with one multiplication and a truncation.
    #[inline(always)]
    pub(super) fn divide(s: f64, c: f64) -> f64 {
        quotient::<Scalar>(s, c)
    }

    /// The truncated quotient with the division instruction, for the tests of [`divide`].
    #[cfg(test)]
    pub(super) fn trunc_of_quotient(s: f64, n: f64) -> f64 {
        Scalar::trunc(s / n) + 0.0
    }

    /// The fixed-point value of a height, `trunc(h × 2^32)`, as an integer-valued `f64` (+0.0
    /// for zero); exact, the product being exact and below 2^51 in magnitude on the fast path.
    #[inline(always)]
    fn fixed(h: f32) -> f64 {
        quotient::<Scalar>(f64::from(h), FIXED_ONE)
    }

    /// One row of the horizontal pass, in place: `out[x]` = the truncated window average at x
    /// of the row's fixed-point values, as an integer-valued `f64`. No row of scratch: the
    /// fixed-point values are first written into `out` itself, value `k` at `k + low`; the
    /// last `min(low, len)` of them, which do not fit, go to `scratch`, and so do the values
    /// entering the window of the last `min(span, len)` outputs (`ext`) and the value leaving
    /// it before output `low` (value 0). Output `x` is written over position `x` only after the
    /// two values step `x` reads (value `x − low` at position `x`, or value 0 copied aside;
    /// value `x + high + 1` at position `x + span` or in `ext`), and later steps read only
    /// positions beyond `x`. The window sums are exact integers below 2^49 in magnitude and
    /// their partial sums below 2^51 (see the module docs), so any order of additions gives the
    /// same sums: the AVX2 and AVX-512 builds (`L`) and the scalar one give the same bits. `scratch`
    /// holds at least `min(low, len) + min(span, len)` values.
    ///
    /// Returns the largest bits of `|h|` over the row (as [`largest_abs_bits_of`], found while
    /// the heights are converted, so the row is read once): the caller checks the row fitted the
    /// fast path, and if not, discards the row (then any values, computed with no fault).
    ///
    /// Only the outputs `[x0, x1)` are computed (a strip's own columns: the others are there
    /// for their values); positions outside hold values of no use.
    #[inline(always)]
    fn row_of<L: Lanes64>(
        (left, src): (&[f32], &[f32]),
        (x0, x1): (usize, usize),
        out: &mut [f64],
        scratch: &mut [f64],
        window: Window,
        c: f64,
    ) -> u32 {
        let len = left.len() + src.len();
        if len == 0 {
            return 0;
        }
        let x1 = x1.min(len);
        let out = &mut out[..len];
        let (low, high) = (window.low as usize, window.high as usize);
        let span = low + high + 1;
        let last = len - 1;
        // Values k < split are at out[k + low], the others at tail[k − split].
        let split = len.saturating_sub(low);
        let (tail, rest) = scratch.split_at_mut(len - split);
        let at = low.min(len); // = low whenever split > 0
        let largest = convert_split::<L>((left, src), split, &mut out[at..at + split], tail);
        let value = |k: usize| if k < split { out[k + low] } else { tail[k - split] };
        // From output e0 on, the entering values are not at out[x + span]: copied to `ext`.
        let e0 = len.saturating_sub(span);
        let ext = &mut rest[..len - e0];
        for (i, e) in ext.iter_mut().enumerate() {
            *e = value((e0 + i + high + 1).min(last));
        }
        // Eight copies: the vector steps read the leaving value as a vector of `step` 0.
        let first = [value(0); 8];
        if x0 >= x1 {
            return largest;
        }
        // The window of output x0, [x0 − low, x0 + high] clamped into the row: exact integer
        // products and sums (all below 2^49 in magnitude), so in any order.
        let below = low.saturating_sub(x0);
        let (kmin, kmax) = (x0.saturating_sub(low), (x0 + high).min(last));
        // Values kmin.. below `split` are in `out`, in a row; the others in `tail`.
        let in_out = (kmax + 1).min(split).max(kmin);
        let mut s = sum::<L>(&out[(kmin + low).min(len)..(in_out + low).min(len)]);
        for k in in_out..=kmax {
            s += value(k);
        }
        if below > 0 {
            s += below as f64 * first[0];
        }
        if x0 + high > last {
            s += (x0 + high - last) as f64 * value(last);
        }
        let head = low.min(len);
        // The four segments below, clipped to [x0, x1).
        let clip = |a: usize, b: usize| (a.max(x0), b.min(x1).max(a.max(x0)));
        let o = out.as_mut_ptr();
        // Entering values at out[x + span] before e0, at ext[x − e0] from e0 on (offset pointers
        // are only dereferenced at x in their segment).
        let by_out = o.wrapping_add(span) as *const f64;
        let by_ext = ext.as_ptr().wrapping_sub(e0);
        // SAFETY: every segment reads `out` at x and x + span only for x + span < len, `ext`
        // at x − e0 < len − e0, and writes `out` at x < len.
        unsafe {
            let (a, b) = clip(0, head.min(e0));
            s = segment::<L>(o, by_out, first.as_ptr(), 0, a, b, s, c);
            let (a, b) = clip(head.min(e0), head);
            s = segment::<L>(o, by_ext, first.as_ptr(), 0, a, b, s, c);
            let (a, b) = clip(head, head.max(e0));
            s = segment::<L>(o, by_out, o, 1, a, b, s, c);
            let (a, b) = clip(head.max(e0), len);
            segment::<L>(o, by_ext, o, 1, a, b, s, c);
        }
        largest
    }

    /// An exact sum of integer-valued `f64` below 2^49 in magnitude (in any order).
    #[inline(always)]
    fn sum<L: Lanes64>(values: &[f64]) -> f64 {
        let n = L::D_LANES;
        let mut acc = L::splat(0.0);
        let mut k = 0;
        while k + n <= values.len() {
            // SAFETY: `k + n <= values.len()`.
            acc = L::add(acc, unsafe { L::load(values.as_ptr().add(k)) });
            k += n;
        }
        let mut s = L::sum(acc);
        for &v in &values[k..] {
            s += v;
        }
        s
    }

    /// Outputs `x` in `[x0, x1)`: `out[x] = divide(s)`, then `s += add[x] − sub[x · step]`
    /// (step 0: a constant, `sub` pointing at four copies), both read before the write.
    /// Returns the sum after `x1 − 1`.
    ///
    /// # Safety
    /// The pointers are valid at those indices (`add` and `sub` for reading before `out` is
    /// written at x).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn segment<L: Lanes64>(
        out: *mut f64,
        add: *const f64,
        sub: *const f64,
        step: usize,
        x0: usize,
        x1: usize,
        mut s: f64,
        c: f64,
    ) -> f64 {
        let mut x = x0;
        if L::D_LANES > 1 {
            // SAFETY: the caller's guarantees, for the same indices.
            (x, s) = unsafe { interior::<L>(out, add, sub, step, x, x1, s, c) };
        }
        while x < x1 {
            // SAFETY: the caller's guarantees: `add` and `sub` readable at these indices, then
            // `out` writable at x.
            let (a, b) = unsafe { (*add.wrapping_add(x), *sub.wrapping_add(x * step)) };
            // SAFETY: as above.
            unsafe { *out.add(x) = divide(s, c) };
            s += a - b;
            x += 1;
        }
        s
    }

    /// `fixed` of the row `left` then `src` (two pieces, one value sequence): its first `split`
    /// values into `head`, the others into `tail`. Returns the largest bits of `|h|` of the row.
    #[inline(always)]
    fn convert_split<L: Lanes64>(
        (left, src): (&[f32], &[f32]),
        split: usize,
        head: &mut [f64],
        tail: &mut [f64],
    ) -> u32 {
        let l = left.len();
        if split <= l {
            let (into, rest) = tail.split_at_mut(l - split);
            convert::<L>(&left[..split], head).max(convert::<L>(&left[split..], into)).max(convert::<L>(src, rest))
        } else {
            let (into, rest) = head.split_at_mut(l);
            convert::<L>(left, into)
                .max(convert::<L>(&src[..split - l], rest))
                .max(convert::<L>(&src[split - l..], tail))
        }
    }

    /// `out[k] = fixed(src[k])`; returns the largest bits of `|h|` of `src`.
    #[inline(always)]
    fn convert<L: Lanes64>(src: &[f32], out: &mut [f64]) -> u32 {
        let len = src.len().min(out.len());
        let (n, one) = (L::D_LANES, L::splat(FIXED_ONE));
        let mut largest = L::zero_w();
        let mut k = 0;
        while k + n <= len {
            // SAFETY: `k + n <= len`, within both slices.
            unsafe {
                let (h, bits) = L::load_f32(src.as_ptr().add(k));
                largest = L::max_magnitude(largest, bits);
                L::store(out.as_mut_ptr().add(k), quotient::<L>(h, one));
            }
            k += n;
        }
        for (o, &h) in out[k..].iter_mut().zip(&src[k..]) {
            *o = fixed(h);
        }
        L::max_of(largest).max(largest_abs_bits_of(&src[k..]))
    }

    /// [`segment`] `2n` or `n` outputs a step (`n` lanes): the sums
    /// `s[x + j] = s[x] + Σ_{k<j} d[x + k]` with `d[k] = add[k] − sub[k · step]` come from
    /// in-register prefix sums, so the only dependency from step to step is one addition. Every
    /// load of a step comes before its stores. Returns where it stopped (fewer than `n` before
    /// `x1`) and the sum there.
    ///
    /// # Safety
    /// As [`segment`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn interior<L: Lanes64>(
        out: *mut f64,
        add: *const f64,
        sub: *const f64,
        step: usize,
        x0: usize,
        x1: usize,
        s: f64,
        c: f64,
    ) -> (usize, f64) {
        let n = L::D_LANES;
        let cv = L::splat(c);
        // SAFETY: the indices of [`segment`]'s contract.
        let load = |x: usize| unsafe { L::sub(L::load(add.wrapping_add(x)), L::load(sub.wrapping_add(x * step))) };
        let mut carry = L::splat(s);
        let mut x = x0;
        while x + 2 * n <= x1 {
            let (da, db) = (load(x), load(x + n));
            let (pa, pb) = (L::prefix(da), L::prefix(db));
            let (ta, tb) = (L::broadcast_last(pa), L::broadcast_last(pb));
            let sa = L::add(carry, L::sub(pa, da));
            let sb = L::add(L::add(carry, ta), L::sub(pb, db));
            carry = L::add(carry, L::add(ta, tb));
            // SAFETY: as above.
            unsafe {
                L::store(out.add(x), quotient::<L>(sa, cv));
                L::store(out.add(x + n), quotient::<L>(sb, cv));
            }
            x += 2 * n;
        }
        if x + n <= x1 {
            let d = load(x);
            let p = L::prefix(d);
            let sv = L::add(carry, L::sub(p, d));
            carry = L::add(carry, L::broadcast_last(p));
            // SAFETY: as above.
            unsafe { L::store(out.add(x), quotient::<L>(sv, cv)) };
            x += n;
        }
        (x, L::first(carry))
    }

    /// One output row of the vertical pass from the running column sums, then the window slid
    /// one row: `sums = (sums − sub) + add`, exact (integers below 2^50).
    #[inline(always)]
    fn emit_slide_of<L: Lanes64>(out: &mut [f32], sums: &mut [f64], sub: &[f64], add: &[f64], c: f64) {
        let len = out.len();
        let (sums, sub, add) = (&mut sums[..len], &sub[..len], &add[..len]);
        let (n, cv, unit) = (L::D_LANES, L::splat(c), L::splat(INV_FIXED_ONE));
        let mut x = 0;
        while x + n <= len {
            // SAFETY: `x + n <= len`, within the four slices.
            unsafe {
                let s = L::load(sums.as_ptr().add(x));
                L::store_f32(out.as_mut_ptr().add(x), L::mul(quotient::<L>(s, cv), unit));
                let next = L::add(L::sub(s, L::load(sub.as_ptr().add(x))), L::load(add.as_ptr().add(x)));
                L::store(sums.as_mut_ptr().add(x), next);
            }
            x += n;
        }
        if x < len {
            emit_slide_of::<Scalar>(&mut out[x..], &mut sums[x..], &sub[x..], &add[x..], c)
        }
    }

    /// `sums += add` (exact: integers below 2^50).
    #[inline(always)]
    fn add_row_of(sums: &mut [f64], add: &[f64]) {
        for (s, &a) in sums.iter_mut().zip(add) {
            *s += a;
        }
    }

    #[inline(always)]
    fn largest_abs_bits_of(data: &[f32]) -> u32 {
        data.iter().fold(0u32, |m, &h| m.max(h.to_bits() & 0x7fff_ffff))
    }

    /// The largest of the bits of `|h|` (0 for no heights).
    #[cfg(test)]
    pub fn largest_abs_bits(data: &[f32]) -> u32 {
        largest_abs_bits_of(data)
    }

    /// One row of the horizontal pass, in place ([`row_of`]), of the row `left` then `src` (a
    /// strip's row may start in a saved copy of its left margin); `tail` holds at least
    /// `min(low, len) + min(span, len)` values. Runs the build `isa` (IEEE basic operations only,
    /// no FMA: the same bits on every build) where the processor has it, else the next one down.
    pub fn horizontal(
        isa: u8,
        src: (&[f32], &[f32]),
        outputs: (usize, usize),
        out: &mut [f64],
        tail: &mut [f64],
        window: Window,
        c: f64,
    ) -> u32 {
        #[cfg(target_arch = "x86_64")]
        {
            if isa >= AVX512 && isa_available(AVX512) {
                // SAFETY: the processor supports AVX-512F (checked at run time).
                return unsafe { horizontal_avx512(src, outputs, out, tail, window, c) };
            }
            if isa >= AVX2 && isa_available(AVX2) {
                // SAFETY: the processor supports AVX2 (checked at run time).
                return unsafe { horizontal_avx2(src, outputs, out, tail, window, c) };
            }
        }
        let _ = isa;
        row_of::<Scalar>(src, outputs, out, tail, window, c)
    }

    /// Asks the processor to bring `data` into its caches (no effect on any value).
    #[inline]
    pub fn prefetch(data: &[f32]) {
        #[cfg(target_arch = "x86_64")]
        for k in (0..data.len()).step_by(16) {
            // SAFETY: a prefetch of an address inside `data`, which never faults.
            unsafe {
                use std::arch::x86_64::*;
                _mm_prefetch::<_MM_HINT_T0>(data.as_ptr().add(k).cast());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = data;
    }

    /// [`emit_slide_of`] on the build `isa` (or the next one down).
    pub fn emit_slide(isa: u8, out: &mut [f32], sums: &mut [f64], sub: &[f64], add: &[f64], c: f64) {
        #[cfg(target_arch = "x86_64")]
        {
            if isa >= AVX512 && isa_available(AVX512) {
                // SAFETY: the processor supports AVX-512F (checked at run time).
                return unsafe { emit_slide_avx512(out, sums, sub, add, c) };
            }
            if isa >= AVX2 && isa_available(AVX2) {
                // SAFETY: the processor supports AVX2 (checked at run time).
                return unsafe { emit_slide_avx2(out, sums, sub, add, c) };
            }
        }
        let _ = isa;
        emit_slide_of::<Scalar>(out, sums, sub, add, c)
    }

    /// [`add_row_of`] on the build `isa` (or the next one down).
    pub fn add_row(isa: u8, sums: &mut [f64], add: &[f64]) {
        #[cfg(target_arch = "x86_64")]
        {
            if isa >= AVX512 && isa_available(AVX512) {
                // SAFETY: the processor supports AVX-512F (checked at run time).
                return unsafe { add_row_avx512(sums, add) };
            }
            if isa >= AVX2 && isa_available(AVX2) {
                // SAFETY: the processor supports AVX2 (checked at run time).
                return unsafe { add_row_avx2(sums, add) };
            }
        }
        let _ = isa;
        add_row_of(sums, add)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn horizontal_avx2(
        src: (&[f32], &[f32]),
        outputs: (usize, usize),
        out: &mut [f64],
        tail: &mut [f64],
        window: Window,
        c: f64,
    ) -> u32 {
        row_of::<Avx2>(src, outputs, out, tail, window, c)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn horizontal_avx512(
        src: (&[f32], &[f32]),
        outputs: (usize, usize),
        out: &mut [f64],
        tail: &mut [f64],
        window: Window,
        c: f64,
    ) -> u32 {
        row_of::<Avx512>(src, outputs, out, tail, window, c)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn add_row_avx512(sums: &mut [f64], add: &[f64]) {
        add_row_of(sums, add)
    }

    /// [`emit_slide_of`] eight lanes at a time.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn emit_slide_avx512(out: &mut [f32], sums: &mut [f64], sub: &[f64], add: &[f64], c: f64) {
        emit_slide_of::<Avx512>(out, sums, sub, add, c)
    }

    /// [`emit_slide_of`] four lanes at a time.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn emit_slide_avx2(out: &mut [f32], sums: &mut [f64], sub: &[f64], add: &[f64], c: f64) {
        emit_slide_of::<Avx2>(out, sums, sub, add, c)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn add_row_avx2(sums: &mut [f64], add: &[f64]) {
        add_row_of(sums, add)
    }
}

/// The longest window the fast path takes (its padded rows stay small).
const FAST_MAX_WINDOW: i64 = 1 << 16;

/// Whether the fast path is exact for heights whose largest magnitude has the bits
/// `largest_bits` (as [`fast::horizontal`] returns them) and a window of `n` rows, at most
/// [`FAST_MAX_WINDOW`] (see [`fast`]).
fn fast_fits(largest_bits: u32, n: i64) -> bool {
    // The bits of |h| order non-negative floats as their values do and put NaN above infinity.
    if largest_bits >= f32::INFINITY.to_bits() {
        return false;
    }
    let largest = f32::from_bits(largest_bits);
    // max |h| × 2^32 × n < 2^49  ⇔  max |h| × n < 2^17 (exact: a product of an f32 and an
    // integer below 2^17 is exact in f64).
    f64::from(largest) * (n as f64) < 131_072.0
}

/// Whether the fast path is exact for every height of `data` with a window of `n` rows.
#[cfg(test)]
fn fast_path_fits(data: &[f32], n: i64) -> bool {
    n <= FAST_MAX_WINDOW && fast_fits(fast::largest_abs_bits(data), n)
}

/// An `i64` kept in the bits of an `f64` slot (the ring and sums of a band that left the fast
/// path keep their storage).
#[inline(always)]
fn int_of(v: f64) -> i64 {
    v.to_bits() as i64
}

/// The `f64` slot holding the bits of `q` ([`int_of`]'s inverse).
#[inline(always)]
fn slot_of(q: i64) -> f64 {
    f64::from_bits(q as u64)
}

/// One output row of a band on the `i64` path, with ring rows kept as [`int_of`] bits:
/// `out = sums / n` (exact division), then `sums = sums − sub + add` (wrapping, so in any order).
fn emit_slide_i64(out: &mut [f32], sums: &mut [f64], sub: &[f64], add: &[f64], divisor: Divisor) {
    for (((o, s), &u), &a) in out.iter_mut().zip(sums.iter_mut()).zip(sub).zip(add) {
        let q = int_of(*s);
        *o = from_fixed(divisor.divide(q));
        *s = slot_of(q.wrapping_sub(int_of(u)).wrapping_add(int_of(a)));
    }
}

/// [`box_blur`]'s fast path: the same bits, in `f64` (see [`fast`]), with the same bands and
/// in-place writing as [`box_blur_i64`], each band cut into vertical strips of columns
/// ([`Strips`]) walked one after the other, each with its own ring of horizontal rows (so the
/// ring of a wide map stays in the core's L2 cache, and the scratch is what
/// [`map_scratch_bytes`] counts).
///
/// Whether a row fits the fast path is checked by each strip as its horizontal pass converts the
/// strip's part of the row (from the same loads), instead of in a separate read of the whole
/// map. A strip reaching a row that does not fit (a height too large for the window, an infinity
/// or a NaN) continues on the `i64` path from there: its ring rows and column sums are exact
/// integers below 2^50 at that point, so they convert exactly, and the `i64` sums wrap modulo
/// 2^64 whatever the order of additions, so they are the `i64` path's own sums and the output
/// has its bits. The `i64` rows are kept in the `f64` storage ([`int_of`]) and computed from the
/// heights where they are read ([`blur_line_of`]), so the switch allocates nothing.
fn box_blur_fast(map: &mut HeightMap, window: Window, n: i64) -> Result<(), RenderError> {
    box_blur_fast_on(fast::best_isa(), map, window, n, strip_columns(window))
}

/// Columns of a strip of [`box_blur_fast`] for `window`: [`STRIP_COLUMNS`] for windows of up to
/// 33 columns, whole rows for wider ones. A strip converts its window's `2r` columns beyond its
/// own too (20 % more at r = 50 with 512 columns), which cost what the smaller ring saved: on
/// 4096-wide maps strips measured 1.02x the CPU of whole rows at r = 50 (0.98–1.00x with 768 or
/// 1024 columns), against 0.88x at r = 8. Radii between 16 and 50 were not measured; the cut
/// keeps the extra columns at 6 % or less.
fn strip_columns(window: Window) -> usize {
    if window.low + window.high <= 32 {
        STRIP_COLUMNS
    } else {
        usize::MAX
    }
}

/// Columns of a strip of [`box_blur_fast`]: the column sums (4 KB) and a row's slot stay in the
/// L1 cache and the ring in L2. Measured on 4096-wide maps (1 thread, CPU against whole rows,
/// 5 alternated rounds at a load of about 11): 512 columns 0.76x at r = 1, 0.82x at r = 8; 768
/// 0.88x and 0.86x; 1024 0.85x and 0.92x.
const STRIP_COLUMNS: usize = 512;

/// How [`box_blur_fast`] cuts a band of `w` columns into strips: `count` strips of `width`
/// columns (the last one narrower when `width` does not divide `w`), or one strip of the whole
/// row when it is at most two strips wide. A strip's horizontal pass
/// reads columns `[c0 − low, c1 + high]` clamped into the map ([`Strips::reads`]): every window
/// of its outputs lies in that range or reaches a map edge there, so the clamped sums over it are
/// the whole row's. `slot` is the longest such range (a ring slot), `margin` the most columns of
/// its left neighbours a strip reads (saved before they are written).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Strips {
    width: usize,
    count: usize,
    slot: usize,
    margin: usize,
}

impl Strips {
    fn of(w: usize, window: Window, columns: usize) -> Strips {
        let width = columns.max(1).min(w.max(1));
        let count = w.div_ceil(width);
        // Rows of up to two strips stay whole: their ring and sums fit the caches already
        // (measured at 1024²: strips of 512 columns cost 1.06–1.28x the CPU at r = 8 and r = 50).
        if count <= 1 || w <= columns.saturating_mul(2) {
            return Strips { width: w.max(1), count: 1, slot: w, margin: 0 };
        }
        let (low, high) = (window.low as usize, window.high as usize);
        let slot = width.saturating_add(low).saturating_add(high).min(w);
        Strips { width, count, slot, margin: low.min(w) }
    }

    /// The columns `[c0, c1)` strip `s` writes.
    fn columns(self, s: usize, w: usize) -> (usize, usize) {
        let c0 = s * self.width;
        (c0, (c0 + self.width).min(w))
    }

    /// The columns `[a, b)` strip `s` reads.
    fn reads(self, s: usize, w: usize, window: Window) -> (usize, usize) {
        let (c0, c1) = self.columns(s, w);
        (c0.saturating_sub(window.low as usize), c1.saturating_add(window.high as usize).min(w))
    }
}

/// [`box_blur_fast`] on the build `isa` of its row kernels and strips of `columns` columns (the
/// tests force each).
fn box_blur_fast_on(isa: u8, map: &mut HeightMap, window: Window, n: i64, columns: usize) -> Result<(), RenderError> {
    let (w, h) = (map.width(), map.height());
    let c = fast::reciprocal_up(n as f64);
    let divisor = Divisor::new(n);
    let layout = Layout::of(h, window);
    let strips = Strips::of(w, window, columns);
    let low = window.low as usize;
    let halos = saved_halos(map, layout, window)?;
    map.data_mut().par_chunks_mut(w * layout.band_rows).zip(halos).enumerate().try_for_each(
        |(b, (out, halo))| -> Result<(), RenderError> {
            let y0 = b * layout.band_rows;
            let rows = out.len() / w;
            // One slot more than the window's distinct rows, so the row entering the window
            // never takes the slot of the row leaving it and each output row is one fused pass.
            let m = (layout.ring + 1).min(h);
            // Filled with zeros although every slot is written by the horizontal pass before it
            // is read (see below): asking the allocator for zeroed memory instead (calloc) made
            // glibc map and unmap the large rings afresh on every call, and the page faults
            // cost more system time than the fill saves (measured at r = 50, 4000²).
            let mut ring = try_vec(m * strips.slot, 0.0f64)?;
            let mut sums = try_vec(strips.width, 0.0f64)?;
            // The horizontal pass works in its ring slot; only the last `low` fixed-point
            // values of a row and the last `span` entering ones go aside (a few values, not a
            // row, for usual radii).
            let mut tail = try_vec(low.min(strips.slot) + (n as usize).min(strips.slot), 0.0f64)?;
            // The columns of this band's rows left of the current strip that it reads, as they
            // were before the strips on the left wrote them (`strips.margin` a row), and the
            // next strip's, saved before the current one writes.
            let mut margin = try_vec(rows * strips.margin, 0.0f32)?;
            let mut next_margin = try_vec(rows * strips.margin, 0.0f32)?;
            let band = Band { isa, window, n, c, divisor, h, w, y0, first: layout.reads(b, h, window).0, m };
            for s in 0..strips.count {
                let (a, _) = strips.reads(s, w, window);
                let (c0, c1) = strips.columns(s, w);
                if s + 1 < strips.count {
                    // Columns [a1, c1) of the next strip's reads: left of c0 from the saved
                    // margin, the others from this strip's columns, not yet written.
                    let a1 = strips.reads(s + 1, w, window).0;
                    let k = c1 - a1;
                    for r in 0..rows {
                        let next = &mut next_margin[r * strips.margin..r * strips.margin + k];
                        let saved = (c0.max(a1) - a1).min(k);
                        if saved > 0 {
                            let from = r * strips.margin + (a1 - a);
                            next[..saved].copy_from_slice(&margin[from..from + saved]);
                        }
                        next[saved..].copy_from_slice(&out[r * w + a1 + saved..r * w + c1]);
                    }
                }
                band.strip(strips, s, out, &halo, &margin, &mut ring, &mut sums, &mut tail);
                std::mem::swap(&mut margin, &mut next_margin);
            }
            Ok(())
        },
    )
}

/// What every strip of one band of [`box_blur_fast_on`] shares.
struct Band {
    isa: u8,
    window: Window,
    n: i64,
    c: f64,
    divisor: Divisor,
    h: usize,
    w: usize,
    y0: usize,
    /// The first row the band reads (its halo above starts there).
    first: usize,
    /// Ring slots.
    m: usize,
}

impl Band {
    /// Blurs strip `s` of the band `out` (its rows, written in place), reading the band's rows
    /// above and below from `halo` and the columns left of the strip from `margin` (as they
    /// were before the strips on the left wrote them).
    #[allow(clippy::too_many_arguments)]
    fn strip(
        &self,
        strips: Strips,
        s: usize,
        out: &mut [f32],
        halo: &[f32],
        margin: &[f32],
        ring: &mut [f64],
        sums: &mut [f64],
        tail: &mut [f64],
    ) {
        let Band { isa, window, n, c, divisor, h, w, y0, first, m } = *self;
        let (low, high) = (window.low as usize, window.high as usize);
        let y1 = y0 + out.len() / w;
        let (a, b) = strips.reads(s, w, window);
        let (c0, c1) = strips.columns(s, w);
        let (len, off, width) = (b - a, c0 - a, c1 - c0);
        let slot = strips.slot;
        let last = h - 1;
        let sums = &mut sums[..width];
        sums.fill(0.0);
        // Whether this strip has left the fast path (its ring and sums then hold `i64` bits).
        let mut exact = false;
        // The strip's part of row `y`: the band's own rows from `out` (not yet overwritten:
        // output rows are written only behind the window) after the saved left margin, the
        // others from the halo saved before any band wrote.
        let part = |y: usize| -> (std::ops::Range<usize>, bool) {
            if y < y0 || y >= y1 {
                let at = if y < y0 { y - first } else { (y0 - first) + (y - y1) };
                (at * w + a..at * w + b, false)
            } else {
                let r = y - y0;
                (r * w + c0..r * w + b, true)
            }
        };
        let mut horizontal = |y: usize, out: &[f32], ring: &mut [f64], sums: &mut [f64], exact: &mut bool| {
            let (range, own) = part(y);
            let (left, right): (&[f32], &[f32]) = if own {
                let (r, k) = (y - y0, strips.margin);
                (&margin[r * k..r * k + off], &out[range])
            } else {
                (&[], &halo[range])
            };
            if strips.count > 1 && y < (y1 - 1 + high).min(last) {
                // The strip's part of the next row, one page of the map further on: the
                // processor's own prefetcher does not cross into it (no effect on any value).
                let (next, own) = part(y + 1);
                fast::prefetch(if own { &out[next] } else { &halo[next] });
            }
            let at = (y % m) * slot..(y % m) * slot + len;
            if !*exact
                && !fast_fits(
                    fast::horizontal(isa, (left, right), (off, off + width), &mut ring[at.clone()], tail, window, c),
                    n,
                )
            {
                // The row did not fit: its slot holds values of no use, recomputed below;
                // every other value in the ring and sums is an integer-valued f64 below 2^50
                // in magnitude, so it converts exactly (slots this strip has not written yet,
                // of earlier strips, are written before they are read).
                for v in ring.iter_mut().chain(sums.iter_mut()) {
                    *v = slot_of(*v as i64);
                }
                *exact = true;
            }
            if *exact {
                let slot = &mut ring[at];
                let value = |k: usize| to_fixed(if k < left.len() { left[k] } else { right[k - left.len()] });
                blur_line_of(len, value, window, divisor, |x, q| slot[x] = slot_of(q));
            }
        };
        let row_at = |i: usize| (i % m) * slot + off..(i % m) * slot + off + width;
        let (top, bottom) = (y0 as i64 - low as i64, (y0 + high) as i64);
        let below = (bottom.min(-1) - top + 1).max(0);
        let above = (bottom - top.max(last as i64 + 1) + 1).max(0);
        let (lo, mut hi) = (y0.saturating_sub(low), (y0 + high).min(last));
        for y in lo..=hi {
            horizontal(y, out, ring, sums, &mut exact);
            let row = &ring[row_at(y)];
            if exact {
                for (s, &v) in sums.iter_mut().zip(row) {
                    *s = slot_of(int_of(*s).wrapping_add(int_of(v)));
                }
            } else {
                fast::add_row(isa, sums, row);
            }
        }
        // Positions before row 0 (after the last row) repeat it; it is among the rows just
        // computed exactly when it is counted (`below > 0` means `lo = 0`, `above > 0` means
        // `hi = last`), and a count of 0 adds nothing (the sums are never −0).
        for (i, count) in [(0, below), (last, above)] {
            if count > 0 {
                let row = &ring[row_at(i)];
                for (s, &v) in sums.iter_mut().zip(row) {
                    *s = if exact {
                        slot_of(int_of(*s).wrapping_add(int_of(v).wrapping_mul(count)))
                    } else {
                        *s + v * count as f64
                    };
                }
            }
        }
        for y in y0..y1 {
            // The row leaving the window after this output and the row entering it: the
            // entering row is computed first if it is new (it is below `y`, so not yet
            // overwritten, and its slot is not the leaving row's: they are at most n apart
            // and the ring has n + 1 slots, or every row has its own).
            let sub = y.saturating_sub(low).min(last);
            let add = if y + 1 == y1 { sub } else { (y + high + 1).min(last) };
            if add > hi {
                horizontal(add, out, ring, sums, &mut exact);
                hi = add;
            }
            // The output row, then `sums − sub + add` (on the last row the sums are not
            // needed any more).
            let out_row = &mut out[(y - y0) * w + c0..(y - y0) * w + c1];
            let (sub_row, add_row) = (&ring[row_at(sub)], &ring[row_at(add)]);
            if exact {
                emit_slide_i64(out_row, sums, sub_row, add_row, divisor);
            } else {
                fast::emit_slide(isa, out_row, sums, sub_row, add_row, c);
            }
        }
    }
}

/// Blurs a profile in place with radius `r`, with the same window and arithmetic as the map blur.
pub fn box_blur_profile(profile: &mut HeightProfile, r: u64) {
    let window = Window::of_radius(r.min(MAX_RADIUS));
    let len = profile.data().len();
    if window.is_identity() || len == 0 {
        return;
    }
    let fixed: Vec<i64> = profile.data().iter().map(|&h| to_fixed(h)).collect();
    let data = profile.data_mut();
    blur_line(&fixed, window, Divisor::new(window.len()), |x, v| data[x] = from_fixed(v));
}

/// Blurs a line of `f64` values with a centred window `[x − r, x + r]`, clamped at the ends, and
/// divides by the window length (used for the smoothing of `Stratify`'s terrace profile).
pub fn blur_centred_f64(values: &[f64], r: usize) -> Vec<f64> {
    if r == 0 || values.is_empty() {
        return values.to_vec();
    }
    let last = values.len() as i64 - 1;
    let n = (2 * r + 1) as f64;
    (0..values.len() as i64)
        .map(|x| {
            let mut sum = 0.0;
            for k in x - r as i64..=x + r as i64 {
                sum += values[k.clamp(0, last) as usize];
            }
            sum / n
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use geogen_render::{Interval, Rect};
    use proptest::prelude::*;

    /// The blur written out from its definition, one output at a time, nothing shared between
    /// outputs: the window of `x` is `[x − low, x + high]`, indices outside the line read its edge
    /// value, the sum is taken exactly (i128) and reduced modulo 2^64 like the kernel's wrapping
    /// running sum, then divided with the `/` instruction (truncation toward zero). The clamped
    /// parts of a window are counted rather than walked, so radii up to the cap stay cheap.
    fn window_average(line: &[i64], x: usize, window: Window) -> i64 {
        let last = line.len() as i128 - 1;
        let (lo, hi) = (x as i128 - window.low as i128, x as i128 + window.high as i128);
        let before = (hi.min(-1) - lo + 1).max(0);
        let after = (hi - lo.max(last + 1) + 1).max(0);
        let mut sum = before * i128::from(line[0]) + after * i128::from(line[last as usize]);
        for k in lo.max(0)..=hi.min(last) {
            sum += i128::from(line[k as usize]);
        }
        (sum as i64) / window.len()
    }

    /// Both passes from the definition: rows first (fixed point kept between the passes), then
    /// columns.
    fn box_blur_reference(map: &mut HeightMap, r: u64) {
        let window = Window::of_radius(r.min(MAX_RADIUS));
        if window.is_identity() || map.rect().is_empty() {
            return;
        }
        let (w, h) = (map.width(), map.height());
        let mut inter = vec![0i64; w * h];
        for y in 0..h {
            let row: Vec<i64> = map.data()[y * w..(y + 1) * w].iter().map(|&v| to_fixed(v)).collect();
            for x in 0..w {
                inter[y * w + x] = window_average(&row, x, window);
            }
        }
        for x in 0..w {
            let column: Vec<i64> = (0..h).map(|y| inter[y * w + x]).collect();
            for y in 0..h {
                map.data_mut()[y * w + x] = from_fixed(window_average(&column, y, window));
            }
        }
    }

    /// Heights for the comparisons: in [-1, 1], or up to ±3 (sums that leave 32.32 range and
    /// wrap), or a mix with values beyond 2^31 that saturate `to_fixed`.
    fn sample(seed: u32, i: u32, kind: u8) -> f32 {
        let v = (geogen_random::hash2(seed, i) % 20001) as f32 / 10000.0 - 1.0;
        match kind {
            0 => v,
            1 => v * 3.0,
            _ if geogen_random::hash2(seed ^ 0x9e37, i).is_multiple_of(7) => v * 1.0e10,
            _ => v * 1.0e4,
        }
    }

    #[test]
    fn exact_division_equals_the_division_instruction() {
        let mut samples: Vec<i64> = vec![0, 1, -1, i64::MAX, i64::MIN, i64::MIN + 1, i64::MAX - 1, 1 << 32, -(1 << 32)];
        let mut x = 0x1234_5678u32;
        for _ in 0..4000 {
            x = geogen_random::hash1(x);
            let y = geogen_random::hash1(x ^ 0x55);
            let v = (i64::from(x) << 32 | i64::from(y)) >> (x % 40);
            samples.extend([v, -v, v / 3]);
        }
        let mut divisors: Vec<i64> = (1..=300).collect();
        divisors.extend([1023, 1024, 1025, 65535, 65536, 65537, (1 << 29) + 1, (1 << 30) + 1, (1 << 31) - 1]);
        for &d in &divisors {
            let divisor = Divisor::new(d);
            for &s in &samples {
                assert_eq!(divisor.divide(s), s / d, "{s} / {d}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

        /// Any map, any radius (0, 1, small, wider than the map, up to the cap and beyond), any
        /// sign and size of values: the same bits as the definition, for maps and profiles.
        #[test]
        fn blur_equals_the_definition(
            width in 1u64..60, height in 1u64..80, seed in any::<u32>(), kind in 0u8..3,
            r in prop_oneof![
                4 => 0u64..4,
                4 => 4u64..50,
                1 => 50u64..200,
                1 => prop_oneof![Just(1u64 << 20), Just(MAX_RADIUS - 1), Just(MAX_RADIUS), Just(u64::MAX)],
            ],
        ) {
            let rect = Rect::new(-7, 3, width, height);
            let data: Vec<f32> = (0..rect.area()).map(|i| sample(seed, i as u32, kind)).collect();
            let mut expected = HeightMap::from_data(rect, data.clone()).unwrap();
            box_blur_reference(&mut expected, r);
            let mut actual = HeightMap::from_data(rect, data.clone()).unwrap();
            box_blur(&mut actual, r).unwrap();
            prop_assert_eq!(actual.data(), expected.data());

            // A profile is one row of the horizontal pass, converted back.
            let line = &data[..width as usize];
            let mut profile = HeightProfile::from_data(Interval::new(-7, width), line.to_vec()).unwrap();
            box_blur_profile(&mut profile, r);
            let window = Window::of_radius(r.min(MAX_RADIUS));
            let fixed: Vec<i64> = line.iter().map(|&v| to_fixed(v)).collect();
            let expected: Vec<f32> = if window.is_identity() {
                line.to_vec()
            } else {
                (0..fixed.len()).map(|x| from_fixed(window_average(&fixed, x, window))).collect()
            };
            prop_assert_eq!(profile.data(), &expected[..]);
        }
    }

    /// Tall maps on several threads: many vertical bands, whose first rows' windows straddle the
    /// top and bottom edges, each start their sums independently.
    #[test]
    fn banded_vertical_pass_equals_the_definition() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        for (i, &(width, height, r)) in
            [(3u64, 700u64, 1u64), (5, 613, 8), (2, 900, 50), (4, 257, 300), (1, 333, 2)].iter().enumerate()
        {
            let rect = Rect::new(0, -100, width, height);
            let data: Vec<f32> = (0..rect.area()).map(|k| sample(i as u32, k as u32, (i % 3) as u8)).collect();
            let mut expected = HeightMap::from_data(rect, data.clone()).unwrap();
            box_blur_reference(&mut expected, r);
            let mut actual = HeightMap::from_data(rect, data).unwrap();
            pool.install(|| box_blur(&mut actual, r)).unwrap();
            assert_eq!(actual.data(), expected.data(), "{width}x{height} r={r}");
        }
    }

    /// The fast path against the `i64` path on maps that fit it, up to the limit (max |h| × n
    /// just below 2^17), with zeros, negative zeros, subnormals and values that truncate to 0.
    #[test]
    fn fast_path_equals_the_i64_path() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let cases = [
            (37u64, 23u64, 1u64),
            (64, 90, 4),
            (5, 300, 30),
            (129, 17, 9),
            (1, 40, 3),
            (300, 2, 100),
            (7, 61, 30),
            (7, 62, 30),
            (7, 60, 30),
        ];
        for (i, &(width, height, r)) in cases.iter().enumerate() {
            let window = Window::of_radius(r);
            let n = window.len();
            let limit = (131_072.0 / n as f64) as f32 * 0.999_99;
            let rect = Rect::new(3, -9, width, height);
            let data: Vec<f32> = (0..rect.area())
                .map(|k| {
                    let v = sample(i as u32 + 40, k as u32, 0);
                    match geogen_random::hash2(i as u32, k as u32) % 9 {
                        0 => 0.0,
                        1 => -0.0,
                        2 => v * 1e-12,
                        3 => f32::from_bits(geogen_random::hash1(k as u32) % 100) * v.signum(),
                        4 => limit * v.signum(),
                        _ => v * limit,
                    }
                })
                .collect();
            assert!(fast_path_fits(&data, n));
            let mut exact = HeightMap::from_data(rect, data.clone()).unwrap();
            box_blur_i64(&mut exact, window, n).unwrap();
            let bits = |m: &HeightMap| m.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            for isa in fast_isas() {
                let mut fast = HeightMap::from_data(rect, data.clone()).unwrap();
                pool.install(|| box_blur_fast_on(isa, &mut fast, window, n, STRIP_COLUMNS)).unwrap();
                assert_eq!(bits(&fast), bits(&exact), "{width}x{height} r={r} isa {isa}");
            }
        }
        // Beyond the limit, infinities and NaN take the i64 path.
        assert!(!fast_path_fits(&[0.5, 131_072.0 / 3.0], 3));
        assert!(!fast_path_fits(&[0.5, f32::NAN], 3));
        assert!(!fast_path_fits(&[f32::NEG_INFINITY], 3));
        assert!(!fast_path_fits(&[0.0], FAST_MAX_WINDOW + 1));
    }

    /// A band meeting a row that does not fit the fast path continues on the `i64` path with the
    /// same bits: one unfit row (too large for the window, infinite or NaN) at every row of maps
    /// cut into several bands (so first and last rows, both sides of every band cut, rows late
    /// in a band and rows only a neighbour's halo reads), two unfit rows in different bands, on
    /// every build and on 1 and 3 threads, against the `i64` path of the whole map.
    #[test]
    fn a_row_unfit_for_the_fast_path_switches_its_band_to_the_i64_path() {
        let pools: Vec<_> =
            [1, 3].iter().map(|&t| rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap()).collect();
        let bits = |m: &HeightMap| m.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        for (i, &(width, height, r)) in
            [(37u64, 100u64, 1u64), (18, 120, 2), (5, 200, 4), (67, 40, 30)].iter().enumerate()
        {
            let window = Window::of_radius(r);
            let n = window.len();
            let layout = Layout::of(height as usize, window);
            assert!(layout.bands > 1 || height < 64, "{layout:?}");
            let rect = Rect::new(-5, 11, width, height);
            let base: Vec<f32> = (0..rect.area()).map(|k| sample(i as u32 + 70, k as u32, 1)).collect();
            let unfit = [131_072.0 / n as f32 * 1.5, -3.0e9, f32::INFINITY, f32::NAN];
            for row in 0..height as usize {
                let mut data = base.clone();
                let w = width as usize;
                let kind = row % unfit.len();
                data[row * w + (row * 7) % w] = unfit[kind];
                if row % 3 == 0 {
                    // A second unfit row, in another band when the map has several.
                    let other = (row + layout.band_rows + 1) % height as usize;
                    data[other * w] = -unfit[(kind + 1) % unfit.len()];
                }
                assert!(!fast_path_fits(&data, n));
                let mut exact = HeightMap::from_data(rect, data.clone()).unwrap();
                box_blur_i64(&mut exact, window, n).unwrap();
                for isa in fast_isas() {
                    for pool in &pools {
                        let mut fast = HeightMap::from_data(rect, data.clone()).unwrap();
                        pool.install(|| box_blur_fast_on(isa, &mut fast, window, n, STRIP_COLUMNS)).unwrap();
                        assert_eq!(bits(&fast), bits(&exact), "{width}x{height} r={r} row {row} isa {isa}");
                    }
                }
            }
        }
    }

    /// The fast path cut into strips of columns gives the bits of the `i64` path of the whole
    /// map: widths that strips do not divide, strips narrower than the window's side, windows
    /// wider than the map, negative origins, 1 to 3 threads, every build; and with an unfit
    /// height in one strip (which switches to the `i64` path there, mid-band) but not the others.
    #[test]
    fn strips_of_columns_give_the_bits_of_whole_rows() {
        let pools: Vec<_> =
            [1, 2, 3].iter().map(|&t| rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap()).collect();
        let bits = |m: &HeightMap| m.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let cases = [
            (37u64, 50u64, 1u64, 8usize),
            (37, 50, 4, 2),
            (20, 30, 30, 7),
            (100, 40, 8, 16),
            (129, 70, 3, 64),
            (5, 20, 2, 1),
            (64, 33, 50, 10),
            (99, 90, 6, 49),
        ];
        for (i, &(width, height, r, columns)) in cases.iter().enumerate() {
            let window = Window::of_radius(r);
            let n = window.len();
            let strips = Strips::of(width as usize, window, columns);
            assert!(strips.count > 1, "{strips:?}");
            let rect = Rect::new(-13 - i as i64, -7, width, height);
            let base: Vec<f32> = (0..rect.area()).map(|k| sample(i as u32 + 110, k as u32, 1)).collect();
            let w = width as usize;
            let h = height as usize;
            // None, then one unfit height at rows and columns of the first, middle and last strip.
            let mut unfit: Vec<Option<(usize, usize)>> = vec![None];
            for row in [0, h / 2, h - 1] {
                for col in [0, w / 2, w - 1] {
                    unfit.push(Some((row, col)));
                }
            }
            for (j, at) in unfit.into_iter().enumerate() {
                let mut data = base.clone();
                if let Some((row, col)) = at {
                    data[row * w + col] = [f32::INFINITY, 131_072.0 / n as f32 * 2.0, f32::NAN][j % 3];
                }
                let mut exact = HeightMap::from_data(rect, data.clone()).unwrap();
                box_blur_i64(&mut exact, window, n).unwrap();
                for isa in fast_isas() {
                    for pool in &pools {
                        let mut fast = HeightMap::from_data(rect, data.clone()).unwrap();
                        pool.install(|| box_blur_fast_on(isa, &mut fast, window, n, columns)).unwrap();
                        assert_eq!(
                            bits(&fast),
                            bits(&exact),
                            "{width}x{height} r={r} strips {columns} {at:?} isa {isa}"
                        );
                    }
                }
            }
        }
    }

    /// The builds of the fast path this processor runs (the scalar one first); the others are
    /// reported, or fail the test where `GEOGEN_REQUIRE_ISA` names them (`geogen_simd::testable`).
    fn fast_isas() -> Vec<u8> {
        let mut isas = vec![fast::SCALAR];
        if geogen_simd::testable(geogen_simd::Isa::Avx2) {
            isas.push(fast::AVX2);
            if geogen_simd::testable(geogen_simd::Isa::Avx512) {
                isas.push(fast::AVX512);
            }
        }
        isas
    }

    /// Each build of the fast kernels (AVX2 and AVX-512 where the processor has them) gives the
    /// bits of the scalar build, for widths with every tail and radii from 1 to wider than the row.
    #[test]
    fn every_fast_kernel_build_equals_the_scalar_build() {
        let cases = [
            (1usize, 1u64),
            (7, 2),
            (33, 5),
            (250, 17),
            (1000, 60),
            (3, 1),
            (4, 1),
            (11, 1),
            (64, 1),
            (67, 8),
            (18, 8),
            (19, 8),
            (100, 50),
            (300, 3),
            (13, 400),
            (8, 1),
            (15, 1),
            (16, 2),
            (17, 3),
            (23, 7),
            (31, 2),
            (1024, 1),
            (1031, 8),
            (1027, 50),
        ];
        for (i, &(width, r)) in cases.iter().enumerate() {
            let window = Window::of_radius(r);
            let n = window.len() as f64;
            let c = fast::reciprocal_up(n);
            let src: Vec<f32> = (0..width * 3).map(|k| sample(i as u32 + 90, k as u32, 1)).collect();
            let run = |isa: u8| {
                let mut out = vec![0.0f64; src.len()];
                let mut tail = vec![0.0f64; window.low as usize + window.len() as usize];
                for (y, (s, o)) in src.chunks(width).zip(out.chunks_mut(width)).enumerate() {
                    // The row's largest magnitude comes back with it (the band's fitness check).
                    let largest = s.iter().fold(0u32, |m, &h| m.max(h.to_bits() & 0x7fff_ffff));
                    // The row in two pieces (a strip's saved margin and the map): cut at the
                    // start, the end, and inside.
                    let cut = [0, width, (width * 5 + 3) / 7 % (width + 1)][y % 3];
                    let row = (&s[..cut], &s[cut..]);
                    assert_eq!(
                        fast::horizontal(isa, row, (0, width), o, &mut tail, window, c),
                        largest,
                        "{width} isa {isa}"
                    );
                }
                out.iter().map(|v| v.to_bits()).collect::<Vec<u64>>()
            };
            let expected = run(fast::SCALAR);
            for isa in fast_isas() {
                assert_eq!(run(isa), expected, "{width} r={r} isa {isa}");
            }
            // A strip's outputs only: the same bits at [x0, x1), from a row in two pieces.
            for (x0, x1) in
                [(0, 1), (width / 3, (width * 2 / 3 + 1).min(width)), (width - 1, width), (width / 2, width)]
            {
                for isa in fast_isas() {
                    let mut tail = vec![0.0f64; window.low as usize + window.len() as usize];
                    for (y, s) in src.chunks(width).enumerate() {
                        let mut o = vec![f64::NAN; width];
                        let cut = (x0 + y) % (width + 1);
                        fast::horizontal(isa, (&s[..cut], &s[cut..]), (x0, x1), &mut o, &mut tail, window, c);
                        let got: Vec<u64> = o[x0..x1].iter().map(|v| v.to_bits()).collect();
                        assert_eq!(
                            got,
                            expected[y * width + x0..y * width + x1],
                            "{width} r={r} [{x0}, {x1}) isa {isa}"
                        );
                    }
                }
            }
            // And the definition (the i64 path's line blur), as the fast path's integers.
            let divisor = Divisor::new(window.len());
            for (y, s) in src.chunks(width).enumerate() {
                let fixed: Vec<i64> = s.iter().map(|&v| to_fixed(v)).collect();
                let mut line = vec![0i64; width];
                blur_line(&fixed, window, divisor, |x, v| line[x] = v);
                let line: Vec<u64> = line.iter().map(|&v| (v as f64 + 0.0).to_bits()).collect();
                assert_eq!(&expected[y * width..(y + 1) * width], &line[..], "{width} r={r} row {y}");
            }
            let add: Vec<f64> = (0..width).map(|k| f64::from(hash_i32(i, k)) * 4096.0).collect();
            let sub: Vec<f64> = (0..width).map(|k| f64::from(hash_i32(i + 7, k)) * 4096.0).collect();
            let sums: Vec<f64> = (0..width).map(|k| f64::from(hash_i32(i + 3, k)) * 4096.0 * n).collect();
            let step = |isa: u8| {
                let (mut out, mut s) = (vec![0.0f32; width], sums.clone());
                fast::emit_slide(isa, &mut out, &mut s, &sub, &add, c);
                fast::add_row(isa, &mut s, &sub);
                (out.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), s.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
            };
            for isa in fast_isas() {
                assert_eq!(step(isa), step(fast::SCALAR), "{width} r={r} isa {isa}");
            }
        }
    }

    /// `reciprocal_up(n)` is the smallest `f64` at least `1/n`, for every window length the fast
    /// path takes, and the division by it is exact at the quotients closest to the next integer
    /// (`kn − 1`, `kn + n − 1`) and at multiples (`kn`), up to the largest `k` below 2^49, both signs.
    #[test]
    fn reciprocal_up_is_the_next_f64_and_divides_exactly_for_every_window() {
        let limit = (1i64 << 49) - 1;
        for n in 1..=FAST_MAX_WINDOW {
            let c = fast::reciprocal_up(n as f64);
            // c = m × 2^e exactly, with m the 53-bit significand: c ≥ 1/n ⇔ m·n ≥ 2^-e, and
            // c < (1/n)(1 + 2^-52) ⇔ (m·n − 2^-e)·2^52 < 2^-e (the bound the proof uses).
            let bits = c.to_bits();
            let (m, e) = (u128::from(bits & ((1 << 52) - 1) | 1 << 52), ((bits >> 52) as i32) - 1075);
            assert!(e < 0 && e > -127, "{n}");
            let one = 1u128 << (-e);
            assert!(m * n as u128 >= one, "{n}: c < 1/n");
            assert!((m * n as u128 - one) << 52 < one, "{n}: c ≥ (1/n)(1 + 2^-52)");
            let top = limit / n;
            for k in [0, 1, 2, top / 2, top - 1, top] {
                for a in [k * n - 1, k * n, k * n + 1, k * n + n - 1] {
                    if !(0..=limit).contains(&a) {
                        continue;
                    }
                    for s in [a, -a] {
                        let q = fast::divide(s as f64, c);
                        assert_eq!(q.to_bits(), ((s / n) as f64 + 0.0).to_bits(), "{s} / {n}");
                    }
                }
            }
        }
    }

    /// The division without a division instruction against `trunc(s / n)`, at every multiple
    /// of `n` near the ends of the range and beside them, and at hashed integers, both signs.
    #[test]
    fn fast_division_equals_the_truncated_quotient() {
        let limit = (1i64 << 49) - 1;
        let mut x = 0x2545_f491u32;
        for n in (1..=300).chain([1023, 1024, 1025, 4095, 4097, 65535, 65536]) {
            let nf = n as f64;
            let c = fast::reciprocal_up(nf);
            let mut samples: Vec<i64> = vec![0, 1, n - 1, n, n + 1, limit, limit - 1];
            for k in [1i64, 2, 3, 1 << 20, limit / n - 1, limit / n] {
                samples.extend([k * n - 1, k * n, k * n + 1]);
            }
            for _ in 0..200 {
                x = geogen_random::hash1(x);
                let y = geogen_random::hash1(x ^ 0x77);
                let v = ((i64::from(x) << 32 | i64::from(y)) & limit) >> (x % 48);
                samples.extend([v, v - v % n, v - v % n - 1]);
            }
            for s in samples.into_iter().filter(|s| (0..=limit).contains(s)) {
                for s in [s, -s] {
                    let sf = s as f64;
                    let expected = fast::trunc_of_quotient(sf, nf);
                    assert_eq!(fast::divide(sf, c).to_bits(), expected.to_bits(), "{s} / {n}");
                    assert_eq!(expected, (s / n) as f64, "{s} / {n}");
                }
            }
        }
    }

    fn hash_i32(i: usize, k: usize) -> i32 {
        geogen_random::hash2(i as u32, k as u32) as i32
    }

    #[test]
    fn a_raised_pixel_spreads_over_the_original_window() {
        // The original: a raised pixel at (20, 20) blurred with r = 2 covers rows and columns 17..21.
        let mut data = vec![0.0f32; 40 * 40];
        data[20 * 40 + 20] = 1.0;
        let mut m = HeightMap::from_data(Rect::new(0, 0, 40, 40), data).unwrap();
        box_blur(&mut m, 2).unwrap();
        let covered: Vec<i64> = (0..40).filter(|&x| m.get(x, 20).unwrap() > 0.0).collect();
        assert_eq!(covered, vec![17, 18, 19, 20, 21]);
        let rows: Vec<i64> = (0..40).filter(|&y| m.get(20, y).unwrap() > 0.0).collect();
        assert_eq!(rows, vec![17, 18, 19, 20, 21]);
        // The intermediate stays in fixed point between the passes.
        assert_eq!(m.get(19, 19), Some(from_fixed(to_fixed(1.0) / 5 / 5)));
    }

    #[test]
    fn blur_of_a_step_edge() {
        // One row: 0 0 0 1 1 1, radius 1: the window of x is [x, x + 2].
        let mut m = HeightMap::from_data(Rect::new(0, 0, 6, 1), vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0]).unwrap();
        box_blur(&mut m, 1).unwrap();
        let third = from_fixed(to_fixed(1.0) / 3);
        let two_thirds = from_fixed(2 * to_fixed(1.0) / 3);
        assert_eq!(m.data(), &[0.0, third, two_thirds, 1.0, 1.0, 1.0]);
    }

    #[test]
    fn blur_preserves_constants_and_large_radii_clamp() {
        let mut m = HeightMap::from_data(Rect::new(-3, 5, 4, 3), vec![0.25; 12]).unwrap();
        box_blur(&mut m, 100).unwrap();
        assert!(m.data().iter().all(|&v| v == 0.25));
    }

    #[test]
    fn vertical_pass_matches_horizontal_on_transpose_and_profiles_match_rows() {
        let col: Vec<f32> = (0..40).map(|i| ((i * 7919) % 13) as f32 / 13.0 - 0.5).collect();
        let mut v = HeightMap::from_data(Rect::new(0, 0, 1, 40), col.clone()).unwrap();
        let mut hm = HeightMap::from_data(Rect::new(0, 0, 40, 1), col.clone()).unwrap();
        let mut p = HeightProfile::from_data(Interval::new(0, 40), col).unwrap();
        box_blur(&mut v, 3).unwrap();
        box_blur(&mut hm, 3).unwrap();
        box_blur_profile(&mut p, 3);
        // A 1-wide column's horizontal pass is the identity, so both orientations agree exactly.
        assert_eq!(v.data(), hm.data());
        assert_eq!(p.data(), hm.data());
    }

    #[test]
    fn centred_f64_blur_keeps_constants() {
        assert_eq!(blur_centred_f64(&[2.0; 5], 2), vec![2.0; 5]);
        assert_eq!(blur_centred_f64(&[0.0, 3.0, 0.0], 1), vec![1.0, 1.0, 1.0]);
    }
}
