//! `map.Shift(profile, maxDistance, direction)`: slide every row (or column) of a map by its own
//! distance, given by a profile.

use geogen_diag::codes;
use geogen_render::raster::saturate;
use geogen_render::scale::scaled_distance;
use geogen_render::{
    Bounds, Effect, HeightMap, KernelContext, Object, ObjectKind, OpContext, Operation, Rect, RenderError,
};
use geogen_vm::{RuntimeError, Value};

use crate::coordinates::Axis;
use crate::operation::{Along, Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::coherent::Isa;
use geogen_kernels::profile::profile_input;
use geogen_render::rows::for_each_row;
use geogen_render::rows::in_serial_mode;
use rayon::prelude::*;

#[derive(Clone, Debug, PartialEq)]
pub struct Shift {
    /// The distance a profile height of 1 moves a row, in logical units (negative: the other way).
    pub distance: i32,
    /// `Horizontal`: row y slides along X by profile(y) × distance; `Vertical`: column x slides
    /// along Y by profile(x) × distance.
    pub direction: Axis,
}

impl Shift {
    /// The distance in physical pixels, `S(|distance|)` with the sign of `distance` (the original
    /// did not scale it: a scale-consistency defect).
    fn physical_distance(&self, scale: f64) -> i64 {
        let magnitude = scaled_distance(f64::from(self.distance.unsigned_abs()), scale);
        let magnitude = i64::try_from(magnitude).unwrap_or(i64::MAX);
        if self.distance < 0 {
            -magnitude
        } else {
            magnitude
        }
    }
}

/// Columns per strip of the vertical shift (a few cache lines of each source row).
const STRIP_COLUMNS: usize = 64;

/// How many rows ahead of the row being filled the vertical shift prefetches its source lines
/// (measured at 4000²: 8 rows halved the gain of 16 or 32; 0 costs twice the CPU time).
const PREFETCH_ROWS: f64 = 16.0;

/// Linear read of `line` (a row or a column, `line(i)` for the pixel at offset `i`, `len` long) at
/// the fractional offset `at`; positions outside read 0. A whole offset reads one pixel only.
fn sample_line(len: usize, at: f64, line: impl Fn(usize) -> f32) -> f32 {
    let floor = libm::floor(at);
    let read = |i: f64| if i >= 0.0 && i < len as f64 { f64::from(line(i as usize)) } else { 0.0 };
    let t = at - floor;
    if t == 0.0 {
        return read(floor) as f32;
    }
    let (a, b) = (read(floor), read(floor + 1.0));
    saturate((a + (b - a) * t) as f32)
}

/// [`sample_line`] with the same bits, without the out-of-line `floor` call: for offsets within
/// ±2^31 (NaN and beyond take `sample_line`) the floor is the truncation corrected by one, an
/// exact integer, so the reads, the fraction `at − floor` and the interpolation are those of
/// `sample_line`. Reads are unchecked only where the index was tested against `len`.
#[inline(always)]
fn sample_line_fast(len: usize, at: f64, line: impl Fn(usize) -> f32) -> f32 {
    const LIMIT: f64 = 2_147_483_648.0; // 2^31
    if !(at > -LIMIT && at < LIMIT) {
        return sample_line(len, at, line);
    }
    let truncated = at as i64;
    let floor = if (truncated as f64) > at { truncated - 1 } else { truncated };
    let read = |i: i64| if (i as u64) < len as u64 { f64::from(line(i as usize)) } else { 0.0 };
    let t = at - floor as f64;
    if t == 0.0 {
        return read(floor) as f32;
    }
    let (a, b) = (read(floor), read(floor + 1));
    saturate((a + (b - a) * t) as f32)
}

impl Declared for Shift {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Shift",
        receiver: Receiver::Method,
        params: &[
            Param::profile("profile"),
            Param::new("maxDistance", Kind::Coordinate(Along::Param(2))),
            Param::direction("direction"),
        ],
        checks: &[],
        family: Family::Transform,
        summary: "Slides every row (`Direction.Horizontal`, along X) or column (`Direction.Vertical`, \
                  along Y) by its own distance: the profile's height at that row (column) times \
                  `maxDistance` (not negative, GGE2309; a relative distance is a fraction of the map \
                  size along the direction). The pixel at x takes the old height at x − distance, read linearly. The \
                  distance scales with the render (the original did not scale it).",
        examples: &[
            Example {
                // Every row moves right by 0.5 × 4 = 2: x takes the ramp's height at x − 2.
                script: "var ramp = HeightMap.Gradient([0, 0], [8, 0], -1, 1);\
                         yield ramp.Shift(HeightProfile.Flat(0.5), 4, Direction.Horizontal);",
                size: (8, 2),
                expect: &[(2, 0, -1.0), (3, 1, -0.75), (4, 0, -0.5), (7, 1, 0.25)],
            },
            Example {
                // A fractional distance (0.25 × 2 = 0.5) reads between two pixels.
                script: "var ramp = HeightMap.Gradient([0, 0], [8, 0], -1, 1);\
                         yield ramp.Shift(HeightProfile.Flat(0.25), 2, Direction.Horizontal);",
                size: (8, 1),
                expect: &[(4, 0, -0.125), (1, 0, -0.875)],
            },
            Example {
                // Column x moves down by x / 4 × 4 = x (for x ≤ 4): (x, y) takes the ramp at y − x.
                script: "var ramp = HeightMap.Gradient([0, 0], [0, 8], -1, 1);\
                         yield ramp.Shift(HeightProfile.Gradient(0, 4, 0, 1), 4, Direction.Vertical);",
                size: (6, 8),
                expect: &[(0, 6, 0.5), (2, 6, 0.0), (4, 6, -0.5), (5, 7, -0.25), (3, 2, -1.0)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let distance = call.coordinate("maxDistance")?;
        // As the original: the distance is a magnitude (the profile's sign says which way).
        if distance < 0 {
            return Err(RuntimeError::new(
                codes::GGE2309,
                format!(
                    "argument 2 of `{}` (maxDistance) is {distance}, outside [0, 4294967295]",
                    call.signature().name
                ),
            )
            .with_hint("the profile's sign moves rows or columns either way: give the distance as a positive number")
            .at_argument(1));
        }
        let op = Shift { distance, direction: call.axis("direction")? };
        rec.modify(op, &[call.object("profile")?])
    }
}

impl Operation for Shift {
    fn name(&self) -> &str {
        "HeightMap.Shift"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map, ObjectKind::Profile]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!("{}, {:?}", self.distance, self.direction)
    }
    /// The map needs B widened by the distance along the direction (every source of a pixel of B,
    /// and the pixel after it, lies within); the profile needs B's rows (Horizontal) or columns
    /// (Vertical).
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        let rect = own.rect();
        let d = self.physical_distance(ctx.scale).unsigned_abs();
        let (map, profile) = match self.direction {
            Axis::Horizontal => {
                (Rect::from_intervals(rect.x_interval().expand(d), rect.y_interval()), rect.y_interval())
            }
            Axis::Vertical => (Rect::from_intervals(rect.x_interval(), rect.y_interval().expand(d)), rect.x_interval()),
        };
        vec![Bounds::Map(map), Bounds::Profile(profile)]
    }
    /// The shifted copy is built beside the original.
    fn extra_memory(&self, extent: Bounds, _: &OpContext) -> u64 {
        extent.bytes()
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        self.render_on(Isa::best(), ctx, target, inputs)
    }
}

/// Whether the process runs AVX-512 kernels, which the vertical shift's widest build needs.
fn avx512_available() -> bool {
    geogen_simd::enabled(geogen_simd::Isa::Avx512)
}

impl Shift {
    /// The kernel on `isa` (the tests force each); on AVX2 the vertical shift takes its AVX-512
    /// build where the processor has it.
    pub fn render_on(
        &self,
        isa: Isa,
        ctx: &KernelContext,
        target: &mut Object,
        inputs: &[&Object],
    ) -> Result<(), RenderError> {
        self.render_with(isa, avx512_available(), ctx, target, inputs)
    }

    /// [`Shift::render_on`], with the vertical shift's AVX-512 build allowed (`wide`) or not.
    fn render_with(
        &self,
        isa: Isa,
        wide: bool,
        ctx: &KernelContext,
        target: &mut Object,
        inputs: &[&Object],
    ) -> Result<(), RenderError> {
        let profile = profile_input(inputs, 0)?;
        let distance = self.physical_distance(ctx.scale) as f64;
        let map = target.as_map_mut()?;
        let rect = map.rect();
        let mut shifted = HeightMap::try_zeroed(rect)?;
        let (width, height) = (map.width(), map.height());
        let source = map.data();
        let offset = |p: i64| f64::from(profile.get(p).unwrap_or(0.0)) * distance;
        match self.direction {
            Axis::Horizontal => for_each_row(&mut shifted, |py, _, row| {
                let start = (py - rect.y) as usize * width;
                let line = &source[start..start + width];
                row_horizontal(isa, line, offset(py), row);
            }),
            Axis::Vertical => {
                let by: Vec<f64> = (0..width as i64).map(|i| offset(rect.x + i)).collect();
                let isa = if lines_fit(height, width, &by) { isa } else { Isa::Scalar };
                // Column strips inside tall bands of rows: neighbouring columns read neighbouring
                // source rows, so a strip walked down its rows reuses each cache line it loads
                // (a whole row at a time would touch a new line for almost every pixel).
                let band = |y0: usize, out: &mut [f32]| {
                    for x0 in (0..width).step_by(STRIP_COLUMNS) {
                        let x1 = (x0 + STRIP_COLUMNS).min(width);
                        let columns = Columns { source, width, height, first: x0 };
                        let mut carry = Carry::new();
                        for (r, out_row) in out.chunks_mut(width).enumerate() {
                            let y = (y0 + r) as f64;
                            prefetch_column_rows(&columns, y + PREFETCH_ROWS, &by[x0..x1]);
                            row_vertical(isa, wide, &columns, y, &by[x0..x1], &mut out_row[x0..x1], &mut carry);
                        }
                    }
                };
                let data = shifted.data_mut();
                if in_serial_mode() {
                    band(0, data);
                } else {
                    let rows = height.div_ceil(4 * rayon::current_num_threads().max(1)).clamp(16, 256);
                    data.par_chunks_mut(width * rows).enumerate().for_each(|(i, out)| band(i * rows, out));
                }
            }
        }
        *map = shifted;
        Ok(())
    }
}

/// Whether the vector reads suit lines of `len` pixels shifted by `by` (and, for columns, a map
/// of `len` rows of `width`): every offset `i − by` within ±2^31 and every index within `i32`.
fn lines_fit(len: usize, width: usize, by: &[f64]) -> bool {
    const LIMIT: f64 = 1_073_741_824.0; // 2^30
    (len as f64) < LIMIT && len.saturating_mul(width) <= i32::MAX as usize && by.iter().all(|b| b.abs() < LIMIT)
}

/// One output row of the horizontal shift: `out[i]` reads `line` at `i − by`.
fn row_horizontal(isa: Isa, line: &[f32], by: f64, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx2 && lines_fit(line.len(), 1, &[by]) && Isa::Avx2.is_available() {
        // SAFETY: the processor has AVX2 (checked just above), and the offsets fit.
        return unsafe { avx2::row_horizontal(line, by, out) };
    }
    let _ = isa;
    for (i, h) in out.iter_mut().enumerate() {
        *h = sample_line_fast(line.len(), i as f64 - by, |k| line[k]);
    }
}

/// The columns `first..` of a map's data (`height` rows of `width`), for the vertical shift.
struct Columns<'a> {
    source: &'a [f32],
    width: usize,
    height: usize,
    first: usize,
}

/// Starts loading the source lines row `y` of a strip of the vertical shift reads below the ones
/// the row before read (row `floor(y − by) + 1` of each column, one column in eight: neighbouring
/// columns of a smooth profile read the same row). Walking down a strip reads each source row
/// 16 KB after the last, a stride no hardware prefetcher follows across pages. A hint only: the
/// rows are clamped into the map, and nothing computed depends on it.
#[inline]
fn prefetch_column_rows(columns: &Columns<'_>, y: f64, by: &[f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let Columns { source, width, height, first } = *columns;
        if height == 0 {
            return;
        }
        let last = (height - 1) as i64;
        for (i, &b) in by.iter().enumerate().step_by(8) {
            // `as` saturates (NaN gives 0); the clamp keeps the row inside the map.
            let row = ((y - b) as i64).saturating_add(1).clamp(0, last) as usize;
            // SAFETY: row < height and first + i < width: the address is inside `source`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(source.as_ptr().add(row * width + first + i).cast()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (columns, y, by);
}

/// The second reads of the row before in a strip of the vertical shift, for the AVX2 build: the
/// source row each column read (`i32::MIN` before the first) and the height it got. Walking down
/// a strip, a column's first read is nearly always the source row of its second read one output
/// row up (`floor(y + 1 − b)` is `floor(y − b) + 1` except where a subtraction rounds onto an
/// integer), so the carried heights spare one of the two gathers; a group of four takes them only
/// where every lane's row matches, which makes them the very values the gather would read. One
/// carry serves one strip (the same columns of the same source) and starts anew with the next.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct Carry {
    rows: [i32; STRIP_COLUMNS],
    heights: [f32; STRIP_COLUMNS],
}

impl Carry {
    fn new() -> Carry {
        Carry { rows: [i32::MIN; STRIP_COLUMNS], heights: [0.0; STRIP_COLUMNS] }
    }
}

/// Part of one output row of the vertical shift: `out[i]` reads column `first + i` at `y − by[i]`.
/// On AVX2 the caller has checked [`lines_fit`]; `wide` takes the AVX-512 build where the
/// processor has it. `carry` holds this strip's reads of the row before (at most
/// [`STRIP_COLUMNS`] columns; the AVX2 build reads and updates it).
fn row_vertical(isa: Isa, wide: bool, columns: &Columns<'_>, y: f64, by: &[f64], out: &mut [f32], carry: &mut Carry) {
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx2 && wide && avx512_available() {
        // SAFETY: the processor has AVX-512F (checked just above); the caller checked the offsets.
        return unsafe { avx512::row_vertical(columns, y, by, out) };
    }
    let _ = wide;
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx2 && Isa::Avx2.is_available() {
        // SAFETY: the processor has AVX2 (checked just above); the caller checked the offsets.
        return unsafe { avx2::row_vertical(columns, y, by, out, Some(carry)) };
    }
    let _ = (isa, carry);
    let Columns { source, width, height, first } = *columns;
    for (i, (h, &b)) in out.iter_mut().zip(by).enumerate() {
        let column = &source[first + i..];
        *h = sample_line_fast(height, y - b, |k| column[k * width]);
    }
}

/// The AVX2 build of the line reads: four pixels per step with the operations of
/// [`sample_line_fast`] in the same order (floor toward −∞, which equals its corrected truncation
/// for offsets within ±2^31; the fraction `at − floor`; reads outside the line give 0; a zero
/// fraction gives the first read unsaturated), so the same bits. Reads are masked gathers, plain
/// loads or (the vertical shift's first reads) the heights the row before read.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{sample_line_fast, Carry, Columns};

    /// The four results of offsets `at` whose floors are `floor`, given the two reads.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn finish(at: __m256d, floor: __m256d, a: __m128, b: __m128) -> __m128 {
        let (a, b) = (_mm256_cvtps_pd(a), _mm256_cvtps_pd(b));
        let t = _mm256_sub_pd(at, floor);
        let mixed = _mm256_cvtpd_ps(_mm256_add_pd(a, _mm256_mul_pd(_mm256_sub_pd(b, a), t)));
        let clamped = _mm_min_ps(_mm_max_ps(mixed, _mm_set1_ps(-1.0)), _mm_set1_ps(1.0));
        let saturated = _mm_andnot_ps(_mm_cmpunord_ps(mixed, mixed), clamped);
        let whole = _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_EQ_OQ>(t, _mm256_setzero_pd()));
        let whole = _mm256_permutevar8x32_epi32(whole, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
        _mm_blendv_ps(saturated, _mm256_cvtpd_ps(a), _mm_castsi128_ps(_mm256_castsi256_si128(whole)))
    }

    /// Lanes whose line index `i` is within `0..len`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn inside(i: __m128i, len: __m128i) -> __m128 {
        _mm_castsi128_ps(_mm_and_si128(_mm_cmpgt_epi32(i, _mm_set1_epi32(-1)), _mm_cmpgt_epi32(len, i)))
    }

    /// Lanes whose line index `i` is within `0..len`, eight at a time.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn inside8(i: __m256i, len: __m256i) -> __m256 {
        _mm256_castsi256_ps(_mm256_and_si256(_mm256_cmpgt_epi32(i, _mm256_set1_epi32(-1)), _mm256_cmpgt_epi32(len, i)))
    }

    /// The eight results of the offsets `at` (two halves) from the eight reads `a` and `b`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn store8(out: *mut f32, at: (__m256d, __m256d), floor: (__m256d, __m256d), a: __m256, b: __m256) {
        let lo = finish(at.0, floor.0, _mm256_castps256_ps128(a), _mm256_castps256_ps128(b));
        let hi = finish(at.1, floor.1, _mm256_extractf128_ps::<1>(a), _mm256_extractf128_ps::<1>(b));
        // SAFETY: (caller) eight floats from `out` are writable.
        unsafe {
            _mm_storeu_ps(out, lo);
            _mm_storeu_ps(out.add(4), hi);
        }
    }

    /// One row of the horizontal shift, eight pixels per step. Where the eight read a stretch of
    /// the line inside it (the same whole offset `k − i` in every lane: nearly always, since the
    /// shift is the same along the row) two plain loads, otherwise masked gathers: the same
    /// reads, so the same bits.
    ///
    /// # Safety
    /// AVX2, `line.len() < 2^30`, `|by| < 2^30`.
    #[target_feature(enable = "avx2")]
    pub unsafe fn row_horizontal(line: &[f32], by: f64, out: &mut [f32]) {
        let len = _mm256_set1_epi32(line.len() as i32);
        let by4 = _mm256_set1_pd(by);
        let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let n = out.len();
        let mut i = 0;
        while i + 8 <= n {
            let base = i as f64;
            let at_lo = _mm256_sub_pd(_mm256_setr_pd(base, base + 1.0, base + 2.0, base + 3.0), by4);
            let at_hi = _mm256_sub_pd(_mm256_setr_pd(base + 4.0, base + 5.0, base + 6.0, base + 7.0), by4);
            let (f_lo, f_hi) = (_mm256_floor_pd(at_lo), _mm256_floor_pd(at_hi));
            let k = _mm256_set_m128i(_mm256_cvttpd_epi32(f_hi), _mm256_cvttpd_epi32(f_lo));
            let shift = _mm256_sub_epi32(k, _mm256_add_epi32(_mm256_set1_epi32(i as i32), lanes));
            let first = _mm256_cvtsi256_si32(shift);
            let same = _mm256_movemask_epi8(_mm256_cmpeq_epi32(shift, _mm256_set1_epi32(first))) == -1;
            let start = i as i64 + i64::from(first);
            let (a, b) = if same && start >= 0 && start + 9 <= line.len() as i64 {
                // SAFETY: lanes read start..start + 9, inside the line (checked).
                unsafe {
                    let p = line.as_ptr().add(start as usize);
                    (_mm256_loadu_ps(p), _mm256_loadu_ps(p.add(1)))
                }
            } else {
                let k1 = _mm256_add_epi32(k, _mm256_set1_epi32(1));
                let zero = _mm256_setzero_ps();
                // SAFETY: only lanes with an index inside the line are read.
                unsafe {
                    (
                        _mm256_mask_i32gather_ps::<4>(zero, line.as_ptr(), k, inside8(k, len)),
                        _mm256_mask_i32gather_ps::<4>(zero, line.as_ptr(), k1, inside8(k1, len)),
                    )
                }
            };
            // SAFETY: i + 8 ≤ n.
            unsafe { store8(out.as_mut_ptr().add(i), (at_lo, at_hi), (f_lo, f_hi), a, b) };
            i += 8;
        }
        for (k, h) in out.iter_mut().enumerate().skip(i) {
            *h = sample_line_fast(line.len(), k as f64 - by, |j| line[j]);
        }
    }

    /// Four pixels per step; with a `carry` (this strip's reads of the row before, see [`Carry`]),
    /// a group of four whose first reads are the rows the row before read second takes those
    /// heights instead of gathering them again.
    ///
    /// # Safety
    /// AVX2; `height < 2^30`, `height × width ≤ i32::MAX`, every `|by| < 2^30`, `by` and `out` of
    /// the same length and the columns inside the map.
    #[target_feature(enable = "avx2")]
    pub unsafe fn row_vertical(
        columns: &Columns<'_>,
        y: f64,
        by: &[f64],
        out: &mut [f32],
        mut carry: Option<&mut Carry>,
    ) {
        let Columns { source, width, height, first } = *columns;
        assert!(carry.is_none() || out.len() <= super::STRIP_COLUMNS, "a carry covers one strip");
        let len = _mm_set1_epi32(height as i32);
        let y4 = _mm256_set1_pd(y);
        let w = _mm_set1_epi32(width as i32);
        let n = out.len();
        let mut i = 0;
        while i + 4 <= n {
            // SAFETY: i + 4 ≤ n = by.len().
            let at = _mm256_sub_pd(y4, unsafe { _mm256_loadu_pd(by.as_ptr().add(i)) });
            let floor = _mm256_floor_pd(at);
            let k = _mm256_cvttpd_epi32(floor);
            let k1 = _mm_add_epi32(k, _mm_set1_epi32(1));
            let column = _mm_add_epi32(_mm_set1_epi32((first + i) as i32), _mm_setr_epi32(0, 1, 2, 3));
            let index = _mm_add_epi32(_mm_mullo_epi32(k, w), column);
            let zero = _mm_setzero_ps();
            // SAFETY: only lanes whose row is inside the map are read, at row × width + column.
            let b =
                unsafe { _mm_mask_i32gather_ps::<4>(zero, source.as_ptr(), _mm_add_epi32(index, w), inside(k1, len)) };
            // The row before's second reads of these four columns, if all four were of row k;
            // then this row's second reads, for the next.
            let mut carried = None;
            if let Some(carry) = carry.as_deref_mut() {
                // SAFETY: i + 4 ≤ n ≤ STRIP_COLUMNS (asserted above), the length of both arrays.
                unsafe {
                    let (rows, heights) = (carry.rows.as_mut_ptr().add(i), carry.heights.as_mut_ptr().add(i));
                    let (before, read) = (_mm_loadu_si128(rows.cast()), _mm_loadu_ps(heights));
                    _mm_storeu_si128(rows.cast(), k1);
                    _mm_storeu_ps(heights, b);
                    carried = (_mm_movemask_epi8(_mm_cmpeq_epi32(before, k)) == 0xffff).then_some(read);
                }
            }
            // SAFETY: as the gather above.
            let a = carried
                .unwrap_or_else(|| unsafe { _mm_mask_i32gather_ps::<4>(zero, source.as_ptr(), index, inside(k, len)) });
            // SAFETY: i + 4 ≤ n.
            unsafe { _mm_storeu_ps(out.as_mut_ptr().add(i), finish(at, floor, a, b)) };
            i += 4;
        }
        for (k, (h, &b)) in out.iter_mut().zip(by).enumerate().skip(i) {
            let column = &source[first + k..];
            *h = sample_line_fast(height, y - b, |j| column[j * width]);
        }
    }
}

/// The AVX-512 build of the vertical shift's line reads: sixteen pixels per step with the
/// operations of [`avx2::row_vertical`] (and so of [`sample_line_fast`]) on wider registers, the
/// tests outside the map and the choice of a whole offset as masks; the same reads, so the same
/// bits. The last pixels of a strip (fewer than sixteen) take the AVX2 build.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::Columns;

    /// For eight offsets `at` whose floors are `floor`, given the two reads: the saturated
    /// interpolations, the first reads converted to `f64` and back (what a whole offset gives),
    /// and which offsets are whole.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn finish(at: __m512d, floor: __m512d, a: __m256, b: __m256) -> (__m256, __m256, __mmask8) {
        let (wa, wb) = (_mm512_cvtps_pd(a), _mm512_cvtps_pd(b));
        let t = _mm512_sub_pd(at, floor);
        let mixed = _mm512_cvtpd_ps(_mm512_add_pd(wa, _mm512_mul_pd(_mm512_sub_pd(wb, wa), t)));
        let clamped = _mm256_min_ps(_mm256_max_ps(mixed, _mm256_set1_ps(-1.0)), _mm256_set1_ps(1.0));
        let saturated = _mm256_andnot_ps(_mm256_cmp_ps::<_CMP_UNORD_Q>(mixed, mixed), clamped);
        let whole = _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(t, _mm512_setzero_pd());
        (saturated, _mm512_cvtpd_ps(wa), whole)
    }

    /// Two halves of eight floats as one vector of sixteen.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn join(lo: __m256, hi: __m256) -> __m512 {
        _mm512_castpd_ps(_mm512_insertf64x4::<1>(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi)))
    }

    /// # Safety
    /// AVX-512F and the conditions of [`super::avx2::row_vertical`].
    #[target_feature(enable = "avx512f")]
    pub unsafe fn row_vertical(columns: &Columns<'_>, y: f64, by: &[f64], out: &mut [f32]) {
        let Columns { source, width, height, first } = *columns;
        let len = _mm512_set1_epi32(height as i32);
        let y8 = _mm512_set1_pd(y);
        let w = _mm512_set1_epi32(width as i32);
        let lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let n = out.len();
        let mut i = 0;
        while i + 16 <= n {
            // SAFETY: i + 16 ≤ n = by.len().
            let (at_lo, at_hi) = unsafe {
                (
                    _mm512_sub_pd(y8, _mm512_loadu_pd(by.as_ptr().add(i))),
                    _mm512_sub_pd(y8, _mm512_loadu_pd(by.as_ptr().add(i + 8))),
                )
            };
            let floor_lo = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(at_lo);
            let floor_hi = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(at_hi);
            let k = _mm512_inserti64x4::<1>(
                _mm512_castsi256_si512(_mm512_cvttpd_epi32(floor_lo)),
                _mm512_cvttpd_epi32(floor_hi),
            );
            let k1 = _mm512_add_epi32(k, _mm512_set1_epi32(1));
            let column = _mm512_add_epi32(_mm512_set1_epi32((first + i) as i32), lanes);
            let index = _mm512_add_epi32(_mm512_mullo_epi32(k, w), column);
            let inside =
                |r: __m512i| _mm512_cmpgt_epi32_mask(r, _mm512_set1_epi32(-1)) & _mm512_cmpgt_epi32_mask(len, r);
            let zero = _mm512_setzero_ps();
            // SAFETY: only lanes whose row is inside the map are read, at row × width + column.
            let (a, b) = unsafe {
                (
                    _mm512_mask_i32gather_ps::<4>(zero, inside(k), index, source.as_ptr()),
                    _mm512_mask_i32gather_ps::<4>(zero, inside(k1), _mm512_add_epi32(index, w), source.as_ptr()),
                )
            };
            let (mixed_lo, first_lo, whole_lo) =
                finish(at_lo, floor_lo, _mm512_castps512_ps256(a), _mm512_castps512_ps256(b));
            let (mixed_hi, first_hi, whole_hi) = finish(
                at_hi,
                floor_hi,
                _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(a))),
                _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(b))),
            );
            // A whole offset gives the first read unsaturated.
            let whole = __mmask16::from(whole_lo) | __mmask16::from(whole_hi) << 8;
            let result = _mm512_mask_blend_ps(whole, join(mixed_lo, mixed_hi), join(first_lo, first_hi));
            // SAFETY: i + 16 ≤ n.
            unsafe { _mm512_storeu_ps(out.as_mut_ptr().add(i), result) };
            i += 16;
        }
        let rest = Columns { source, width, height, first: first + i };
        // SAFETY: AVX-512F implies AVX2; the same conditions on the remaining columns.
        unsafe { super::avx2::row_vertical(&rest, y, &by[i..], &mut out[i..], None) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geogen_render::{HeightProfile, Interval};

    #[test]
    fn lines_are_read_linearly_and_whole_offsets_read_one_pixel() {
        let line = [0.0f32, 1.0, 0.5];
        assert_eq!(sample_line(3, 1.0, |k| line[k]), 1.0);
        assert_eq!(sample_line(3, 0.5, |k| line[k]), 0.5);
        assert_eq!(sample_line(3, 1.5, |k| line[k]), 0.75);
        assert_eq!(sample_line(3, 2.5, |k| line[k]), 0.25); // past the end reads 0
        assert_eq!(sample_line(3, -0.5, |k| line[k]), 0.0);
        assert_eq!(sample_line(3, f64::NAN, |k| line[k]), 0.0);
    }

    /// The fast read gives the bits of the plain one for fractional, whole, negative, tiny,
    /// huge and non-finite offsets, inside and around the line.
    #[test]
    fn fast_line_read_equals_the_plain_one() {
        let line: Vec<f32> = (0..37).map(|k| geogen_random::hash1(k) as f32 / u32::MAX as f32 * 2.0 - 1.0).collect();
        let mut offsets = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            36.0,
            36.5,
            37.0,
            37.5,
            -0.5,
            -1e-300,
            1e-300,
            5e-324,
            -5e-324,
            1.0 - f64::EPSILON / 2.0,
            -(1.0 - f64::EPSILON / 2.0),
            2147483647.5,
            -2147483647.5,
            2147483648.0,
            -2147483648.0,
            -2147483649.5,
            1e18,
            -1e18,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MAX,
            f64::MIN,
        ];
        let mut x = 7u32;
        for _ in 0..20000 {
            x = geogen_random::hash1(x);
            let y = geogen_random::hash1(x ^ 0x5bd1);
            let unit = (u64::from(x) << 21 ^ u64::from(y)) as f64 / (1u64 << 53) as f64;
            offsets.push(unit * 50.0 - 6.0);
            offsets.push(f64::from(x % 45) - 4.0 - unit * 1e-12);
            offsets.push((f64::from(y % 400) - 200.0) - unit * 76.0 * 0.37);
        }
        for &at in &offsets {
            let plain = sample_line(line.len(), at, |k| line[k]);
            let fast = sample_line_fast(line.len(), at, |k| line[k]);
            assert_eq!(fast.to_bits(), plain.to_bits(), "at {at:e}");
        }
    }

    /// Both directions on every instruction set give the bits of the per-pixel definition, for
    /// fractional, whole, negative and far distances (rows read partly or wholly outside).
    #[test]
    fn kernel_equals_the_per_pixel_definition_on_every_isa() {
        let rect = Rect::new(-21, 5, 71, 45);
        let len = (rect.width * rect.height) as u32;
        let data: Vec<f32> = (0..len).map(|k| geogen_random::hash1(k) as f32 / u32::MAX as f32 * 2.4 - 1.2).collect();
        let source = HeightMap::from_data(rect, data).unwrap();
        let profile_over = |interval: Interval, salt: u32| {
            let values = (0..interval.length as u32).map(|k| match k % 11 {
                0 => 0.0,
                1 => 1.0,
                2 => -0.5,
                // A distance a hair from zero: `y − by` rounds onto an integer on some rows only,
                // so a column's first read is not always the row before's second (the carry's
                // fallback).
                3 => 1e-17,
                _ => geogen_random::hash1(k ^ salt) as f32 / u32::MAX as f32 * 2.0 - 1.0,
            });
            Object::Profile(HeightProfile::from_data(interval, values.collect()).unwrap())
        };
        for distance in [0, 1, 3, -7, 40, 200, -100000] {
            for direction in [Axis::Horizontal, Axis::Vertical] {
                let op = Shift { distance, direction };
                let along = match direction {
                    Axis::Horizontal => rect.y_interval(),
                    Axis::Vertical => rect.x_interval(),
                };
                let profile = profile_over(along, distance as u32);
                let ctx = KernelContext::new(1.0, Bounds::Map(rect));
                let p = profile.as_profile().unwrap();
                let d = distance as f64;
                let builds = Isa::available().into_iter().map(|isa| (isa, false));
                let wide = avx512_available().then_some((Isa::Avx2, true));
                for (isa, wide) in builds.chain(wide) {
                    let mut target = Object::Map(source.clone());
                    op.render_with(isa, wide, &ctx, &mut target, &[&profile]).unwrap();
                    let got = target.as_map().unwrap();
                    for py in rect.y..rect.y + rect.height as i64 {
                        for px in rect.x..rect.x + rect.width as i64 {
                            let (i, j) = ((px - rect.x) as usize, (py - rect.y) as usize);
                            let want = match direction {
                                Axis::Horizontal => {
                                    let by = f64::from(p.get(py).unwrap()) * d;
                                    sample_line(rect.width as usize, i as f64 - by, |k| source.data()[j * 71 + k])
                                }
                                Axis::Vertical => {
                                    let by = f64::from(p.get(px).unwrap()) * d;
                                    sample_line(rect.height as usize, j as f64 - by, |k| source.data()[k * 71 + i])
                                }
                            };
                            let have = got.get(px, py).unwrap();
                            assert_eq!(
                                have.to_bits(),
                                want.to_bits(),
                                "{isa:?} wide {wide} {distance} {direction:?} ({px}, {py})"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn distances_scale_and_keep_their_sign() {
        let shift = |distance| Shift { distance, direction: Axis::Vertical };
        assert_eq!(shift(76).physical_distance(1.0), 76);
        assert_eq!(shift(76).physical_distance(0.5), 38);
        assert_eq!(shift(-5).physical_distance(0.5), -2);
        assert_eq!(shift(i32::MIN).physical_distance(1.0), -2147483648);
    }
}
