//! Pixel containers: [`HeightMap`] (2-D) and [`HeightProfile`] (1-D), and [`Object`], what a
//! renderer slot holds.
//!
//! Invariants:
//! * `data.len() == rect.area()` (resp. `interval.length`), row-major, `f32` heights nominally in
//!   [-1, 1] (1.0 is the original's 32767).
//! * The rectangle is in physical pixels (see [`crate::scale`]); the pixel at absolute `(px, py)` is
//!   `data[(py - rect.y) * width + (px - rect.x)]`.
//! * Allocation never aborts: [`HeightMap::try_zeroed`] uses `try_reserve_exact` and reports
//!   [`RenderError::Allocation`] instead. The renderer only calls it for extents the memory plan has
//!   already accepted.

use crate::error::RenderError;
use crate::geometry::{Interval, Rect};

/// The original's height unit: 1.0 = 32767.
pub const HEIGHT_UNITS: f64 = 32767.0;

/// Saturate a height to [-1, 1]. NaN becomes 0 so no kernel ever propagates NaN.
#[inline]
pub fn saturate(h: f32) -> f32 {
    if h.is_nan() {
        0.0
    } else {
        h.clamp(-1.0, 1.0)
    }
}

/// A script constant (f64) as a height: saturated, NaN → 0.
#[inline]
pub fn height_from_f64(h: f64) -> f32 {
    saturate(h as f32)
}

/// Below this many pixels a buffer is zeroed on the calling thread.
const PARALLEL_ZEROING_MIN: usize = 1 << 16;

fn zeroed_vec(len: u64) -> Result<Vec<f32>, RenderError> {
    let n = usize::try_from(len).map_err(|_| RenderError::Allocation { bytes: len.saturating_mul(4) })?;
    let (mut v, fresh) = FreshPages::reserve(n)?;
    if n < PARALLEL_ZEROING_MIN {
        v.resize(n, 0.0);
        return Ok(v);
    }
    // Zeroing (and the page faults of a fresh allocation) on every thread, a `memset` per chunk:
    // collecting a parallel iterator of zeros (what this was) wrote one element at a time.
    use rayon::prelude::*;
    v.spare_capacity_mut()[..n].par_chunks_mut(PARALLEL_ZEROING_MIN).enumerate().for_each(|(i, chunk)| {
        fresh.zero(i * PARALLEL_ZEROING_MIN, chunk);
    });
    // SAFETY: capacity >= n (reserved above) and the chunks, which partition the first n
    // elements, were all written.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// The pixels of a new buffer that are fresh pages (see [`crate::pages::take_fresh_range`]): zero
/// already, so zeroing the buffer only faults them in ([`crate::pages::zero_fresh`]) and writes
/// zeros over the rest.
#[derive(Clone, Copy)]
struct FreshPages {
    start: usize,
    end: usize,
}

impl FreshPages {
    /// A buffer with room for `len` pixels, reserved on this thread, and which of them are fresh.
    fn reserve(len: usize) -> Result<(Vec<f32>, FreshPages), RenderError> {
        let mut v: Vec<f32> = Vec::new();
        v.try_reserve_exact(len).map_err(|_| RenderError::Allocation { bytes: (len as u64).saturating_mul(4) })?;
        // Right after the reservation, on the thread that made it: the record is this buffer's.
        let bytes = crate::pages::take_fresh_range(v.as_ptr().cast(), len.saturating_mul(4));
        let start = bytes.start.div_ceil(4);
        Ok((v, FreshPages { start, end: (bytes.end / 4).max(start) }))
    }

    /// Makes the pixels `start..start + chunk.len()` of the buffer, `chunk`, zero.
    fn zero(&self, start: usize, chunk: &mut [std::mem::MaybeUninit<f32>]) {
        let end = start + chunk.len();
        let (from, to) = (self.start.clamp(start, end) - start, self.end.clamp(start, end) - start);
        let (head, rest) = chunk.split_at_mut(from);
        let (fresh, tail) = rest.split_at_mut(to - from);
        for part in [head, tail] {
            // SAFETY: `part` is `part.len()` elements of the buffer's spare capacity; all-zero
            // bytes are the f32 0.0.
            unsafe { std::ptr::write_bytes(part.as_mut_ptr(), 0, part.len()) };
        }
        // SAFETY: the same memory as `fresh`, as bytes (any bit pattern is a `MaybeUninit<u8>`).
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(fresh.as_mut_ptr().cast::<std::mem::MaybeUninit<u8>>(), fresh.len() * 4)
        };
        crate::pages::zero_fresh(bytes);
    }
}

/// A rectangle of heights in physical pixel space.
#[derive(Clone, Debug, PartialEq)]
pub struct HeightMap {
    rect: Rect,
    data: Pixels,
}

/// A map's pixels: a buffer of its own, or a band of rows of another map's buffer, lent for the
/// length of one band kernel call ([`lend_rows`]) so that fused passes run their kernels on the big
/// buffer's rows where they lie instead of copying each band out and back.
enum Pixels {
    Owned(Vec<f32>),
    Lent(LentRows),
}

/// Rows lent by [`lend_rows`]: a pointer into a `&mut [f32]` that the lender holds borrowed for as
/// long as any `LentRows` of it exists (every one holds `_alive`; the lender aborts the process if
/// one outlives the loan).
struct LentRows {
    ptr: std::ptr::NonNull<f32>,
    len: usize,
    _alive: std::sync::Arc<()>,
}

// SAFETY: a `LentRows` stands for a `&mut [f32]` (which is `Send` and `Sync`) that nothing else
// uses while it lives; it hands out shared access only through `&self` and exclusive access only
// through `&mut self`.
unsafe impl Send for LentRows {}
// SAFETY: as above.
unsafe impl Sync for LentRows {}

impl std::ops::Deref for Pixels {
    type Target = [f32];

    fn deref(&self) -> &[f32] {
        match self {
            Pixels::Owned(data) => data,
            // SAFETY: `ptr` and `len` come from a `&mut [f32]` borrowed by `lend_rows` for longer
            // than this `LentRows` lives, and only this value reaches those elements meanwhile.
            Pixels::Lent(rows) => unsafe { std::slice::from_raw_parts(rows.ptr.as_ptr(), rows.len) },
        }
    }
}

impl std::ops::DerefMut for Pixels {
    fn deref_mut(&mut self) -> &mut [f32] {
        match self {
            Pixels::Owned(data) => data,
            // SAFETY: as in `deref`, and `&mut self` makes this the only access.
            Pixels::Lent(rows) => unsafe { std::slice::from_raw_parts_mut(rows.ptr.as_ptr(), rows.len) },
        }
    }
}

impl Pixels {
    fn into_vec(self) -> Vec<f32> {
        match self {
            Pixels::Owned(data) => data,
            Pixels::Lent(_) => self.to_vec(),
        }
    }
}

impl Clone for Pixels {
    /// A copy of lent rows is a buffer of its own: only the loan's one map points into the lender.
    fn clone(&self) -> Pixels {
        Pixels::Owned(self.to_vec())
    }
}

impl PartialEq for Pixels {
    fn eq(&self, other: &Pixels) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for Pixels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pixels::Owned(data) => f.debug_tuple("Owned").field(&data.len()).finish(),
            Pixels::Lent(rows) => f.debug_tuple("Lent").field(&rows.len).finish(),
        }
    }
}

/// Runs `use_band` on `pixels`, the rows of a band of a bigger buffer, as a map over `rect` without
/// copying them. If the kernel replaces the map with another of the same rectangle, its pixels are
/// copied in; a different rectangle is an internal error ("a band kernel resized its band").
///
/// Soundness: the lent map borrows `pixels` through a raw pointer the borrow checker cannot follow,
/// so it must not outlive its loan. Every copy of a map is a buffer of its own, so the only way a
/// lent map survives is a kernel keeping, sending or forgetting it; the loan's holders are counted
/// as soon as the kernel returns, before the lender touches the rows again, and when the call
/// unwinds, and the process aborts if any remains.
fn lend_rows(
    rect: Rect,
    pixels: &mut [f32],
    use_band: impl FnOnce(&mut HeightMap) -> Result<(), RenderError>,
) -> Result<(), RenderError> {
    struct Loan(std::sync::Arc<()>);
    impl Loan {
        /// Aborts unless this is the loan's last holder. `Arc::get_mut` (an acquire) also orders
        /// every access by a holder already dropped, on any thread, before what follows.
        fn settle(&mut self) {
            if std::sync::Arc::get_mut(&mut self.0).is_none() {
                // A lent map outlived its loan: going on could let it use rows no longer lent.
                std::process::abort();
            }
        }
    }
    impl Drop for Loan {
        fn drop(&mut self) {
            self.settle();
        }
    }
    debug_assert_eq!(rect.area(), pixels.len() as u64);
    let mut loan = Loan(std::sync::Arc::new(()));
    let len = pixels.len();
    let ptr = std::ptr::NonNull::from(&mut *pixels).cast::<f32>();
    let mut band = HeightMap { rect, data: Pixels::Lent(LentRows { ptr, len, _alive: loan.0.clone() }) };
    let result = use_band(&mut band);
    let HeightMap { rect: band_rect, data } = band;
    let (replacement, swapped) = match data {
        Pixels::Owned(data) => (Some(data), false),
        Pixels::Lent(rows) => (None, rows.ptr != ptr || rows.len != len),
    };
    loan.settle();
    result?;
    if swapped {
        return Err(RenderError::Internal("a band kernel swapped its band".into()));
    }
    if band_rect != rect || replacement.as_ref().is_some_and(|data| data.len() != len) {
        return Err(RenderError::Internal("a band kernel resized its band".into()));
    }
    if let Some(data) = replacement {
        pixels.copy_from_slice(&data);
    }
    Ok(())
}

impl HeightMap {
    /// A map with no pixels.
    pub fn empty() -> HeightMap {
        HeightMap { rect: Rect::EMPTY, data: Pixels::Owned(Vec::new()) }
    }

    /// A zero-filled map over `rect`, or an error if it cannot be allocated.
    pub fn try_zeroed(rect: Rect) -> Result<HeightMap, RenderError> {
        let rect = if rect.is_empty() { Rect::EMPTY } else { rect };
        if !rect.is_valid() {
            return Err(RenderError::Internal(format!("rectangle {rect} reaches past the coordinate range")));
        }
        if rect.width > usize::MAX as u64 {
            return Err(RenderError::Allocation { bytes: u64::MAX });
        }
        Ok(HeightMap { rect, data: Pixels::Owned(zeroed_vec(rect.area())?) })
    }

    /// Build from raw data; `None` if the length does not match the rectangle.
    pub fn from_data(rect: Rect, data: Vec<f32>) -> Option<HeightMap> {
        let rect = if rect.is_empty() { Rect::EMPTY } else { rect };
        (rect.is_valid() && data.len() as u64 == rect.area()).then_some(HeightMap { rect, data: Pixels::Owned(data) })
    }

    pub fn rect(&self) -> Rect {
        self.rect
    }

    pub fn width(&self) -> usize {
        self.rect.width as usize
    }

    pub fn height(&self) -> usize {
        self.rect.height as usize
    }

    pub fn data(&self) -> &[f32] {
        &self.data
    }

    pub fn data_mut(&mut self) -> &mut [f32] {
        &mut self.data
    }

    pub fn into_data(self) -> Vec<f32> {
        self.data.into_vec()
    }

    /// The height at absolute physical `(px, py)`, or `None` outside the extent.
    pub fn get(&self, px: i64, py: i64) -> Option<f32> {
        if !self.rect.contains_point(px, py) {
            return None;
        }
        let ix = (px - self.rect.x) as usize;
        let iy = (py - self.rect.y) as usize;
        Some(self.data[iy * self.width() + ix])
    }

    /// The part of row `py` (absolute) covering the absolute columns of `xs`, which must lie inside
    /// the map (callers pass intersections).
    pub fn row_span(&self, py: i64, xs: Interval) -> &[f32] {
        let start = (py - self.rect.y) as usize * self.width() + (xs.start - self.rect.x) as usize;
        &self.data[start..start + xs.length as usize]
    }

    /// The same pixels at a rectangle moved by `(dx, dy)` (no resampling: `Move`).
    pub fn translated(self, dx: i64, dy: i64) -> HeightMap {
        let rect = self.rect.translate(dx, dy);
        if rect.area() != self.rect.area() {
            // Only at the very ends of the coordinate range, where translate clips.
            return HeightMap::empty();
        }
        HeightMap { rect, data: self.data }
    }

    /// A copy of `rect` cut out of this map: pixels outside this map's extent are 0 (the original's
    /// `Clone` and yield semantics).
    pub fn cut_out(&self, rect: Rect) -> Result<HeightMap, RenderError> {
        let mut out = HeightMap::try_zeroed(rect)?;
        copy_overlap(self, &mut out);
        Ok(out)
    }
}

impl HeightMap {
    /// This map reduced to `rect`, reusing its buffer: rows are moved to the front in place and
    /// the buffer is shrunk, so nothing new is allocated (what a yield of a map used for the last
    /// time needs). `rect` must lie inside the map's extent; otherwise this is [`HeightMap::cut_out`].
    pub fn into_cut_out(self, rect: Rect) -> Result<HeightMap, RenderError> {
        if rect.is_empty() || !self.rect.contains_rect(&rect) {
            return self.cut_out(rect);
        }
        if rect == self.rect {
            return Ok(self);
        }
        let mut data = match self.data {
            Pixels::Owned(data) => data,
            lent @ Pixels::Lent(_) => return HeightMap { rect: self.rect, data: lent }.cut_out(rect),
        };
        let (sw, w) = (self.rect.width as usize, rect.width as usize);
        let (dx, dy) = ((rect.x - self.rect.x) as usize, (rect.y - self.rect.y) as usize);
        compact_rows(&mut data, rect.height as usize, w, |r| (dy + r) * sw + dx);
        data.truncate(rect.area() as usize);
        data.shrink_to_fit();
        Ok(HeightMap { rect, data: Pixels::Owned(data) })
    }
}

impl HeightMap {
    /// A map over `rect` built band by band, in parallel: `fill` gets each band of `rows` whole rows
    /// as a zero-filled map (the band's rectangle; its rows of the new buffer, lent) and computes its
    /// pixels. So a new map costs one parallel pass, each band zeroed and computed while it is in
    /// cache, where zero-filling the whole buffer first and computing it after would cost a serial
    /// `memset`, the page faults, and a second pass. `reuse`, a buffer of exactly `rect.area()`
    /// pixels (say one just freed), is overwritten instead of allocating.
    pub fn try_from_bands(
        rect: Rect,
        rows: usize,
        reuse: Option<Vec<f32>>,
        fill: impl Fn(&mut HeightMap) -> Result<(), RenderError> + Sync,
    ) -> Result<HeightMap, RenderError> {
        use rayon::prelude::*;
        use std::mem::MaybeUninit;

        let rect = if rect.is_empty() { Rect::EMPTY } else { rect };
        if rect.is_empty() {
            return Ok(HeightMap::empty());
        }
        if !rect.is_valid() || rect.width > usize::MAX as u64 {
            return Err(RenderError::Internal(format!("rectangle {rect} reaches past the coordinate range")));
        }
        let area = rect.area();
        let len = usize::try_from(area).map_err(|_| RenderError::Allocation { bytes: area.saturating_mul(4) })?;
        let width = rect.width as usize;
        let rows = rows.max(1);
        let band = |index: usize, pixels: usize| {
            Rect::new(rect.x, rect.y + (index * rows) as i64, rect.width, (pixels / width) as u64)
        };
        let data = match reuse {
            Some(mut data) if data.len() == len => {
                data.par_chunks_mut(width * rows).enumerate().try_for_each(|(i, out)| {
                    out.fill(0.0);
                    lend_rows(band(i, out.len()), out, &fill)
                })?;
                data
            }
            _ => {
                let (mut data, fresh) = FreshPages::reserve(len)?;
                let spare: &mut [MaybeUninit<f32>] = &mut data.spare_capacity_mut()[..len];
                spare.par_chunks_mut(width * rows).enumerate().try_for_each(|(i, out)| {
                    fresh.zero(i * width * rows, out);
                    // SAFETY: `out` is `out.len()` elements of the vector's spare capacity, all
                    // zero now (the f32 0.0): initialised `f32`s.
                    let out = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<f32>(), out.len()) };
                    lend_rows(band(i, out.len()), out, &fill)
                })?;
                // SAFETY: the chunks partition `spare[..len]` and the `try_for_each` above succeeded,
                // so every chunk was zeroed (and then computed): each of the first `len` elements
                // is initialised, and capacity >= len.
                unsafe { data.set_len(len) };
                data
            }
        };
        Ok(HeightMap { rect, data: Pixels::Owned(data) })
    }

    /// Runs `update` on each band of `rows` whole rows of this map, in parallel: the band's rows are
    /// lent to `update` as a map of their own (the band's rectangle), not copied. Used for fused
    /// passes of several row-local steps, which then read and write the big buffer once between
    /// them, the band staying in cache from one step to the next.
    pub fn update_by_bands(
        &mut self,
        rows: usize,
        update: impl Fn(&mut HeightMap) -> Result<(), RenderError> + Sync,
    ) -> Result<(), RenderError> {
        use rayon::prelude::*;
        if self.rect.is_empty() {
            return Ok(());
        }
        let (rect, width, rows) = (self.rect, self.width(), rows.max(1));
        self.data.par_chunks_mut(width * rows).enumerate().try_for_each(|(i, out)| {
            let band = Rect::new(rect.x, rect.y + (i * rows) as i64, rect.width, (out.len() / width) as u64);
            lend_rows(band, out, &update)
        })
    }
}

/// Moves `rows` rows of `w` pixels, row `r` from `source(r)` to `r * w`, in place, where
/// `source` grows with `r` at least as fast as the destination (`source(r + 1) - source(r) >= w`)
/// and `source(r) >= r * w`: so a destination never passes its source.
///
/// The rows are cut into groups, one task each. A group's destinations can reach only the
/// sources of the last rows of the groups before it (by the gap `source(r) - r * w`), so those
/// few rows are copied aside first and read from there: then each group works in its own part of
/// the buffer. A yield with a margin of a pixel or two (the common case) has a tiny gap, which the
/// older scheme below moved one row at a time on one thread. When the rows to copy aside would
/// exceed [`ASIDE_PIXELS`] (a gap of many rows), rows move in rounds instead, each in parallel: a
/// round takes the rows whose destinations all lie before the first unmoved source, so none of
/// them overwrites a pixel not yet read; with such a gap the rounds are long.
fn compact_rows(data: &mut [f32], rows: usize, w: usize, source: impl Fn(usize) -> usize + Sync) {
    /// At most this many pixels (1 MiB) are copied aside; a constant, like the renderer's other
    /// per-band scratch, not a second map.
    const ASIDE_PIXELS: usize = 1 << 18;
    if w == 0 || rows == 0 {
        return;
    }
    let groups = (rayon::current_num_threads() * 4).min(rows / PARALLEL_ROWS);
    if groups >= 2 && compact_rows_in_groups(data, rows, w, groups, ASIDE_PIXELS, &source) {
        return;
    }
    compact_rows_in_rounds(data, rows, w, &source);
}

/// Below this many rows a round or a group runs on the calling thread.
const PARALLEL_ROWS: usize = 16;

/// [`compact_rows`] by groups of rows; `false` (nothing moved) when the rows to copy aside would
/// exceed `aside_pixels`.
fn compact_rows_in_groups(
    data: &mut [f32],
    rows: usize,
    w: usize,
    groups: usize,
    aside_pixels: usize,
    source: &(impl Fn(usize) -> usize + Sync),
) -> bool {
    use rayon::prelude::*;
    let starts: Vec<usize> = (0..=groups).map(|g| g * rows / groups).collect();
    // The rows whose sources reach past the start of a later group's destinations, in order.
    let mut aside_rows: Vec<usize> = Vec::new();
    for &a in &starts[1..groups] {
        let mut r = a;
        while r > 0 && source(r - 1) + w > a * w {
            r -= 1;
        }
        for row in r..a {
            if aside_rows.last().is_none_or(|&last| last < row) {
                aside_rows.push(row);
            }
        }
    }
    if aside_rows.len().saturating_mul(w) > aside_pixels {
        return false;
    }
    let mut aside = Vec::new();
    if aside.try_reserve_exact(aside_rows.len() * w).is_err() {
        return false;
    }
    for &r in &aside_rows {
        aside.extend_from_slice(&data[source(r)..source(r) + w]);
    }
    // Group g owns data[starts[g] * w .. starts[g + 1] * w] (the last group, the rest): its
    // destinations, and the sources of its rows not set aside.
    let mut parts: Vec<(usize, &mut [f32])> = Vec::with_capacity(groups);
    let mut rest = data;
    for g in 0..groups {
        let (part, tail) =
            if g + 1 < groups { rest.split_at_mut((starts[g + 1] - starts[g]) * w) } else { (rest, &mut [][..]) };
        parts.push((starts[g], part));
        rest = tail;
    }
    parts.into_par_iter().enumerate().for_each(|(g, (first, part))| {
        let base = first * w;
        for r in first..starts[g + 1] {
            let destination = (r - first) * w;
            match aside_rows.binary_search(&r) {
                Ok(k) => part[destination..destination + w].copy_from_slice(&aside[k * w..(k + 1) * w]),
                Err(_) => {
                    let from = source(r) - base;
                    part.copy_within(from..from + w, destination);
                }
            }
        }
    });
    true
}

/// [`compact_rows`] in rounds of rows whose destinations lie before every unmoved source.
fn compact_rows_in_rounds(data: &mut [f32], rows: usize, w: usize, source: &(impl Fn(usize) -> usize + Sync)) {
    use rayon::prelude::*;
    let mut a = 0;
    while a < rows {
        let first_source = source(a);
        // Rows a..b whose destinations end at or before `first_source`.
        let b = (first_source / w).min(rows);
        if b <= a + 1 {
            // Row a overlaps its own source (or the round would be a single row).
            data.copy_within(first_source..first_source + w, a * w);
            a += 1;
            continue;
        }
        let (front, back) = data.split_at_mut(first_source);
        let destinations = &mut front[a * w..b * w];
        if b - a < PARALLEL_ROWS {
            for (i, row) in destinations.chunks_mut(w).enumerate() {
                let from = source(a + i) - first_source;
                row.copy_from_slice(&back[from..from + w]);
            }
        } else {
            destinations.par_chunks_mut(w).enumerate().for_each(|(i, row)| {
                let from = source(a + i) - first_source;
                row.copy_from_slice(&back[from..from + w]);
            });
        }
        a = b;
    }
}

/// Copy the pixels of `src` into `dst` where their extents overlap; leave the rest of `dst` alone.
pub fn copy_overlap(src: &HeightMap, dst: &mut HeightMap) {
    let all = dst.rect;
    copy_overlap_within(src, dst, all);
}

/// A map over `extent` with `src`'s pixels on `keep` and `height` everywhere else: the result of
/// a step the support pass narrowed to `keep`, whose kernel's result `src` must cover `keep`.
pub fn with_background(src: &HeightMap, extent: Rect, keep: Rect, height: f32) -> Result<HeightMap, RenderError> {
    let keep = keep.intersect(&extent);
    if !keep.is_empty() && !src.rect.contains_rect(&keep) {
        return Err(RenderError::Internal(format!("a narrowed kernel computed {} for {keep}", src.rect)));
    }
    // Bands of about 256 KiB, each written once into the new buffer (no zeroing pass first).
    let rows = (1 << 16) / extent.width.clamp(1, 1 << 16) as usize;
    HeightMap::try_from_bands(extent, rows, None, |band| {
        band.data.fill(height);
        copy_overlap_within(src, band, keep);
        Ok(())
    })
}

/// [`copy_overlap`] of the pixels inside `limit` only.
fn copy_overlap_within(src: &HeightMap, dst: &mut HeightMap, limit: Rect) {
    let common = src.rect.intersect(&dst.rect).intersect(&limit);
    if common.is_empty() {
        return;
    }
    let xs = common.x_interval();
    let dw = dst.width();
    let dx0 = (xs.start - dst.rect.x) as usize;
    let dy0 = (common.y - dst.rect.y) as usize;
    let rows = &mut dst.data[dy0 * dw..(dy0 + common.height as usize) * dw];
    let copy_row = |(row, out): (usize, &mut [f32])| {
        let from = src.row_span(common.y + row as i64, xs);
        out[dx0..dx0 + from.len()].copy_from_slice(from);
    };
    // Clones and yields of whole maps copy on every thread: nothing serial that scales with pixels.
    if common.area() < PARALLEL_ZEROING_MIN as u64 || crate::rows::in_serial_mode() {
        rows.chunks_mut(dw).enumerate().for_each(copy_row);
    } else {
        use rayon::prelude::*;
        rows.par_chunks_mut(dw).enumerate().for_each(copy_row);
    }
}

/// Sets every pixel of `dst` inside `area` but outside `keep` to `height`, on every thread for
/// large areas; the pixels of `keep` and those outside `area` are left alone.
pub fn fill_outside(dst: &mut HeightMap, area: Rect, keep: Rect, height: f32) {
    let area = area.intersect(&dst.rect);
    if area.is_empty() {
        return;
    }
    let keep = keep.intersect(&area);
    let dw = dst.width();
    let (ax0, ax1) = ((area.x - dst.rect.x) as usize, (area.x - dst.rect.x) as usize + area.width as usize);
    let (kx0, kx1) = if keep.is_empty() {
        (ax0, ax0)
    } else {
        ((keep.x - dst.rect.x) as usize, (keep.x - dst.rect.x) as usize + keep.width as usize)
    };
    let keep_rows = keep.y_interval();
    let dy0 = (area.y - dst.rect.y) as usize;
    let rows = &mut dst.data[dy0 * dw..(dy0 + area.height as usize) * dw];
    let fill_row = |(row, out): (usize, &mut [f32])| {
        if keep_rows.contains(area.y + row as i64) {
            out[ax0..kx0].fill(height);
            out[kx1..ax1].fill(height);
        } else {
            out[ax0..ax1].fill(height);
        }
    };
    if area.area() < PARALLEL_ZEROING_MIN as u64 || crate::rows::in_serial_mode() {
        rows.chunks_mut(dw).enumerate().for_each(fill_row);
    } else {
        use rayon::prelude::*;
        rows.par_chunks_mut(dw).enumerate().for_each(fill_row);
    }
}

/// A 1-D run of heights over a physical interval.
#[derive(Clone, Debug, PartialEq)]
pub struct HeightProfile {
    interval: Interval,
    data: Vec<f32>,
}

impl HeightProfile {
    pub fn empty() -> HeightProfile {
        HeightProfile { interval: Interval::EMPTY, data: Vec::new() }
    }

    pub fn try_zeroed(interval: Interval) -> Result<HeightProfile, RenderError> {
        let interval = if interval.is_empty() { Interval::EMPTY } else { interval };
        if !interval.is_valid() {
            return Err(RenderError::Internal(format!("interval {interval} reaches past the coordinate range")));
        }
        Ok(HeightProfile { interval, data: zeroed_vec(interval.length)? })
    }

    pub fn interval(&self) -> Interval {
        self.interval
    }

    pub fn data(&self) -> &[f32] {
        &self.data
    }

    pub fn data_mut(&mut self) -> &mut [f32] {
        &mut self.data
    }

    pub fn get(&self, p: i64) -> Option<f32> {
        self.interval.contains(p).then(|| self.data[(p - self.interval.start) as usize])
    }

    /// Build from raw data; `None` if the length does not match the interval.
    pub fn from_data(interval: Interval, data: Vec<f32>) -> Option<HeightProfile> {
        let interval = if interval.is_empty() { Interval::EMPTY } else { interval };
        (interval.is_valid() && data.len() as u64 == interval.length).then_some(HeightProfile { interval, data })
    }

    pub fn into_data(self) -> Vec<f32> {
        self.data
    }

    /// The same heights at an interval moved by `offset` (no resampling: `Move`).
    pub fn translated(self, offset: i64) -> HeightProfile {
        let interval = self.interval.translate(offset);
        if interval.length != self.interval.length {
            return HeightProfile::empty();
        }
        HeightProfile { interval, data: self.data }
    }

    /// A copy of `interval` cut out of this profile (zero outside its extent).
    pub fn cut_out(&self, interval: Interval) -> Result<HeightProfile, RenderError> {
        let mut out = HeightProfile::try_zeroed(interval)?;
        let common = self.interval.intersect(&out.interval);
        if !common.is_empty() {
            let from = (common.start - self.interval.start) as usize;
            let to = (common.start - out.interval.start) as usize;
            let len = common.length as usize;
            out.data[to..to + len].copy_from_slice(&self.data[from..from + len]);
        }
        Ok(out)
    }
}

/// What a renderer object slot holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Object {
    Map(HeightMap),
    Profile(HeightProfile),
}

impl Object {
    pub fn as_map(&self) -> Result<&HeightMap, RenderError> {
        match self {
            Object::Map(m) => Ok(m),
            Object::Profile(_) => Err(RenderError::Internal("a height map was expected, found a profile".into())),
        }
    }

    pub fn as_map_mut(&mut self) -> Result<&mut HeightMap, RenderError> {
        match self {
            Object::Map(m) => Ok(m),
            Object::Profile(_) => Err(RenderError::Internal("a height map was expected, found a profile".into())),
        }
    }

    pub fn as_profile(&self) -> Result<&HeightProfile, RenderError> {
        match self {
            Object::Profile(p) => Ok(p),
            Object::Map(_) => Err(RenderError::Internal("a height profile was expected, found a map".into())),
        }
    }

    pub fn as_profile_mut(&mut self) -> Result<&mut HeightProfile, RenderError> {
        match self {
            Object::Profile(p) => Ok(p),
            Object::Map(_) => Err(RenderError::Internal("a height profile was expected, found a map".into())),
        }
    }

    /// Bytes of pixel data (what the memory plan counts).
    pub fn bytes(&self) -> u64 {
        match self {
            Object::Map(m) => m.data.len() as u64 * 4,
            Object::Profile(p) => p.data.len() as u64 * 4,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn into_cut_out_equals_cut_out_and_reuses_the_buffer() {
        let data: Vec<f32> = (0..35).map(|i| i as f32 / 64.0).collect();
        let src = HeightMap::from_data(Rect::new(-3, 2, 7, 5), data).unwrap();
        for rect in [
            Rect::new(-2, 3, 4, 2),
            Rect::new(-3, 2, 7, 5),
            Rect::new(-3, 6, 7, 1),
            Rect::new(3, 2, 1, 5),
            Rect::new(2, 4, 3, 3), // reaches outside: falls back to a zero-filled copy
            Rect::EMPTY,
        ] {
            let expected = src.cut_out(rect).unwrap();
            let moved = src.clone().into_cut_out(rect).unwrap();
            assert_eq!(moved, expected, "{rect}");
            assert_eq!(moved.data().len() as u64, rect.area());
        }
        let ptr = src.data().as_ptr();
        assert_eq!(src.clone().into_cut_out(src.rect()).unwrap().data().len(), 35);
        let same = src.into_cut_out(Rect::new(-3, 2, 7, 5)).unwrap();
        assert_eq!(same.data().as_ptr(), ptr, "an exact match is a pure move");
    }

    #[test]
    fn into_cut_out_moves_many_rows_in_parallel_rounds_without_losing_one() {
        // Margins from none to wide: rounds of one row (a thin margin), and rounds of many rows.
        let rect = Rect::new(-40, -30, 300, 260);
        let data: Vec<f32> = (0..rect.area()).map(|i| i as f32).collect();
        let src = HeightMap::from_data(rect, data).unwrap();
        for (dx, dy, w, h) in
            [(0, 0, 299, 260), (1, 1, 298, 258), (50, 40, 200, 180), (0, 100, 300, 160), (7, 0, 3, 260)]
        {
            let inner = Rect::new(rect.x + dx, rect.y + dy, w, h);
            let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
            let moved = pool.install(|| src.clone().into_cut_out(inner).unwrap());
            assert_eq!(moved, src.cut_out(inner).unwrap(), "{inner}");
        }
    }

    #[test]
    fn rows_compact_alike_in_groups_and_in_rounds() {
        // Row r of a `sw`-wide buffer moves from (dy + r) * sw + dx to r * w: gaps from none to
        // many rows, groups from 2 to more than rows allow, aside buffers large and too small.
        for (sw, w, dy, dx, rows) in [
            (300, 299, 0, 1, 260),
            (302, 300, 1, 1, 257),
            (300, 200, 40, 50, 180),
            (300, 300, 100, 0, 160),
            (10, 3, 0, 7, 40),
        ] {
            let original: Vec<f32> = (0..sw * (dy + rows)).map(|i| i as f32).collect();
            let source = |r: usize| (dy + r) * sw + dx;
            let expected: Vec<f32> = (0..rows).flat_map(|r| original[source(r)..source(r) + w].to_vec()).collect();
            let mut rounds = original.clone();
            compact_rows_in_rounds(&mut rounds, rows, w, &source);
            assert_eq!(rounds[..rows * w], expected[..], "rounds {sw} {w} {dy} {dx}");
            for groups in [2, 3, 7, rows / 2, rows] {
                for aside in [0, 4 * w, usize::MAX] {
                    let mut grouped = original.clone();
                    if compact_rows_in_groups(&mut grouped, rows, w, groups, aside, &source) {
                        assert_eq!(grouped[..rows * w], expected[..], "groups {groups} {sw} {w} {dy} {dx}");
                    } else {
                        assert_eq!(grouped, original, "a refused grouping moves nothing");
                        assert!(aside < usize::MAX);
                    }
                }
            }
        }
    }

    #[test]
    fn cut_out_zero_fills_outside_the_source() {
        let src = HeightMap::from_data(Rect::new(0, 0, 2, 2), vec![0.1, 0.2, 0.3, 0.4]).unwrap();
        let out = src.cut_out(Rect::new(-1, 1, 3, 2)).unwrap();
        assert_eq!(out.data(), &[0.0, 0.3, 0.4, 0.0, 0.0, 0.0]);
        assert_eq!(out.get(0, 1), Some(0.3));
        assert_eq!(out.get(5, 5), None);
    }

    /// A map over `rect` whose pixel at `(x, y)` is `x + 100 y`.
    fn coordinates(rect: Rect) -> HeightMap {
        let (xs, ys) = (rect.x..rect.x + rect.width as i64, rect.y..rect.y + rect.height as i64);
        let data = ys.flat_map(|y| xs.clone().map(move |x| (x + 100 * y) as f32));
        HeightMap::from_data(rect, data.collect()).unwrap()
    }

    #[test]
    fn bands_are_lent_in_place_and_a_replaced_band_is_copied_in() {
        let rect = Rect::new(-3, -5, 7, 11);
        let mut map = coordinates(rect);
        let buffer = map.data().as_ptr() as usize;
        let seen = std::sync::Mutex::new(Vec::new());
        map.update_by_bands(3, |band| {
            seen.lock().unwrap().push((band.rect(), band.data().as_ptr() as usize));
            if band.rect().y == -2 {
                // A kernel that makes a new map of the band's rectangle: its pixels land in place.
                let mut new = HeightMap::try_zeroed(band.rect())?;
                new.data_mut().iter_mut().zip(band.data()).for_each(|(n, o)| *n = o + 0.5);
                *band = new;
            } else {
                // One that writes the lent rows; a clone of them is a buffer of its own.
                let mut copy = band.clone();
                copy.data_mut().fill(9.0);
                assert_ne!(copy.data().as_ptr(), band.data().as_ptr());
                band.data_mut().iter_mut().for_each(|h| *h += 0.25);
            }
            Ok(())
        })
        .unwrap();
        let expected = coordinates(rect);
        for (y, row) in (rect.y..).zip(map.data().chunks(7)) {
            let add = if (-2..1).contains(&y) { 0.5 } else { 0.25 };
            let want: Vec<f32> = expected.row_span(y, rect.x_interval()).iter().map(|h| h + add).collect();
            assert_eq!(row, &want[..], "row {y}");
        }
        let mut seen = seen.into_inner().unwrap();
        seen.sort_by_key(|(band, _)| band.y);
        assert_eq!(seen.len(), 4);
        for (i, (band, ptr)) in seen.into_iter().enumerate() {
            assert_eq!(band, Rect::new(-3, -5 + 3 * i as i64, 7, if i == 3 { 2 } else { 3 }));
            assert_eq!(ptr, buffer + 4 * 21 * i, "band {i} is the buffer's own rows");
        }
    }

    #[test]
    fn a_band_kernel_that_resizes_or_fails_is_an_error() {
        let mut map = coordinates(Rect::new(0, 0, 4, 8));
        let resized = map.update_by_bands(2, |band| {
            *band = HeightMap::try_zeroed(Rect::new(0, 0, 1, 1))?;
            Ok(())
        });
        assert!(matches!(resized, Err(RenderError::Internal(m)) if m.contains("resized")));
        let dropped = map.update_by_bands(2, |band| {
            drop(std::mem::replace(band, HeightMap::empty()));
            Ok(())
        });
        assert!(matches!(dropped, Err(RenderError::Internal(m)) if m.contains("resized")));
        let failed = map.update_by_bands(2, |_| Err(RenderError::Internal("kernel".into())));
        assert!(matches!(failed, Err(RenderError::Internal(m)) if m == "kernel"));
    }

    #[test]
    fn new_maps_get_zeroed_lent_bands_also_over_a_reused_buffer() {
        let rect = Rect::new(2, -1, 5, 9);
        for reuse in [None, Some(vec![7.0; 45])] {
            let map = HeightMap::try_from_bands(rect, 2, reuse, |band| {
                assert!(band.data().iter().all(|&h| h == 0.0), "band {} starts at zero", band.rect());
                let own = coordinates(band.rect());
                band.data_mut().copy_from_slice(own.data());
                Ok(())
            })
            .unwrap();
            assert_eq!(map, coordinates(rect));
        }
    }

    #[test]
    fn huge_allocations_fail_cleanly() {
        assert!(matches!(
            HeightMap::try_zeroed(Rect::new(0, 0, u64::MAX / 2, u64::MAX / 2)),
            Err(RenderError::Allocation { .. })
        ));
    }

    #[test]
    fn saturate_clamps_and_kills_nan() {
        assert_eq!(saturate(1.5), 1.0);
        assert_eq!(saturate(-7.0), -1.0);
        assert_eq!(saturate(f32::NAN), 0.0);
        assert_eq!(height_from_f64(0.25), 0.25);
    }
}
