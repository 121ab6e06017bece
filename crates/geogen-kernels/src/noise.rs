//! The original's value-noise layer (reference §4.7 "Noise layer algorithm", §5.8).
//!
//! The random field is a pure function of `(current, X, Y)` for integer logical lattice points, and
//! every pixel is evaluated at its own logical coordinate `p / scale`, so a pixel's value does not
//! depend on the tile, the buffer extent or the thread that computes it. Interpolation is bicubic
//! Catmull-Rom (a = −0.5), done per row as: for every lattice column `X` the row touches, the
//! vertical interpolation at `ty`; then per pixel the horizontal interpolation of four of those
//! at `tx`. Both are fixed-order f64 expressions (no FMA), so results are bit-reproducible.
//!
//! The per-pixel loops have no data-dependent run boundaries: every pixel reads its lattice cell's
//! four horizontal coefficients through a per-pixel cell index (cached per thread with the
//! fractions), so a row is one straight loop whatever the wavelength. On x86-64 with AVX2
//! (detected at run time; never FMA) the cubic runs four pixels at a time with the same IEEE
//! operations in the same order, and the sub-pixel path (a hash per pixel) is compiled a second
//! time for AVX2 and vectorised, its remainder computed exactly in f64 ([`FloatMod`]). Other
//! targets and machines run the same loops in scalar code; the tests compare the instruction
//! sets with each other and with the direct evaluation bit for bit.
//!
//! In the AVX2 loops the last step of every pixel, `(v / HEIGHT_UNITS) as f32`, is a multiply by
//! the reciprocal with an exactness check (`avx2::units_to_height`: the product is within a few
//! f64 ulps of the quotient, so it rounds to the same f32 unless it lies next to an f32 rounding
//! midpoint or tiny, and then the four pixels are divided: about one group in 2^23), and the cubic's
//! coefficients are transposed with 128-bit loads and in-lane unpacks instead of lane-crossing
//! permutes (a profile of a 2000² render put the largest share of the loop on the division's
//! line). The column table also marks each group of eight pixels as lying in one lattice cell, in
//! pairs of consecutive cells (a wavelength of two pixels), in two or three consecutive cells (with
//! lane masks of the pixels past the first cell) or otherwise, and the eight-wide loop reads the
//! coefficients accordingly (one broadcast for eight, two loads for the pairs, else a gather per
//! four); the eight-wide conversion checks its eight products at once in 32-bit lanes. Where the
//! machine has AVX-512F and a cell spans four pixels or more, the cubic runs eight `f64` lanes and
//! reads the groups of two or three cells as broadcasts chosen per lane by the masks, and the
//! per-cell coefficients are computed eight cells at a time.
//! Rows whose cells all hold the same pixels at the same fractions (scale 1, and whatever other
//! scale gives such a row) skip the per-pixel tables ([`Regular`]): at two or four pixels per cell
//! (wavelengths 2 and 4, the costliest layers of every `Noise`) eight cells' coefficients (four
//! with AVX2 alone) stay in registers, each phase is one vector of cells, and the phases are
//! interleaved into pixels; with AVX2 alone, at a multiple of eight pixels per cell each cell's
//! coefficients are broadcast and its pixels computed in groups of eight aligned on it.
//! Lattice rows and per-row scratch reuse their buffers (no allocation per
//! band or lattice row once warm), and the vertical coefficients of a lattice row are computed
//! in vectorised loops.

#[cfg(target_arch = "x86_64")]
use crate::lanes64::Lanes64;
use geogen_render::raster::{saturate, HeightMap, HEIGHT_UNITS};
use geogen_render::rows::for_each_band;
use geogen_render::scale::to_logical;

pub use super::coherent::Isa;

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
pub fn floor_i64(v: f64) -> i64 {
    let f = libm::floor(v);
    if f.is_nan() {
        0
    } else {
        f as i64
    }
}

/// A layer's field values with the parts that depend on one coordinate hoisted:
/// `hash3(current, x, y) = hash2(hash2(current, x), y)`, and the remainder without a division.
#[derive(Copy, Clone, Debug)]
struct FieldValues {
    current: u32,
    amplitude: i32,
    remainder: FloatMod,
}

impl FieldValues {
    fn new(field: &LayerField) -> FieldValues {
        let amplitude = field.amplitude.clamp(0, 32767);
        FieldValues { current: field.current, amplitude, remainder: FloatMod::new((2 * amplitude + 1) as u32) }
    }

    /// The first stage of the hash, for column `x`.
    #[inline(always)]
    fn column(&self, x: i64) -> u32 {
        geogen_random::hash2(self.current, x as i32 as u32)
    }
}

/// Per-thread caches of the noise kernel, reused across bands and layers: the fused renderer calls
/// a layer once per band of a few rows, so what depends only on the columns (the lattice position
/// and fraction of each pixel, the first stage of each lattice column's hash) or only on a lattice
/// row (its field values and the vertical interpolation's coefficients) is computed once per
/// thread instead of once per band. A fused pass runs all the layers of `Noise` on one band before
/// the next, so each cache keeps one entry per layer (up to [`CACHE_ENTRIES`], most recently used
/// first): with a single entry every layer would evict the previous one and rebuild its tables on
/// every band. Pure memoisation: same inputs, same numbers.
#[derive(Default)]
struct NoiseCache {
    columns: Vec<ColumnTable>,
    lattices: Vec<LatticeQuad>,
    per_pixel: Vec<PerPixelColumns>,
    /// One row's vertical interpolations and horizontal coefficients (scratch, reused).
    interpolated: Vec<f64>,
    coefficients: Vec<[f64; 4]>,
    /// The horizontal coefficients of the two layers of [`displaced_by_layers`] (scratch).
    pair_coefficients: [Vec<[f64; 4]>; 2],
}

/// Entries per cache and thread: more than the layers of one `Noise` (at most 32 wavelengths of a
/// 32-bit range, usually 8 to 10).
const CACHE_ENTRIES: usize = 16;

/// The entry of `list` that `matches`, moved to the front; else a fresh or the least recently used
/// entry (its key then differs, so its `prepare` rebuilds it).
fn pick<T: Default>(list: &mut Vec<T>, matches: impl Fn(&T) -> bool) -> &mut T {
    let i = match list.iter().position(matches) {
        Some(i) => i,
        None if list.len() < CACHE_ENTRIES => {
            list.push(T::default());
            list.len() - 1
        }
        None => list.len() - 1,
    };
    if i != 0 {
        let entry = list.remove(i);
        list.insert(0, entry);
    }
    &mut list[0]
}

/// Where each pixel of a row falls on the lattice, for a given first pixel, width, scale and
/// wavelength: the runs of pixels sharing a lattice cell, and each pixel's fraction within it.
#[derive(Default)]
struct ColumnTable {
    key: Option<(i64, usize, u64, i64)>,
    /// `0.5 × tx` of each pixel: Catmull-Rom's first factor, as [`catmull_rom`] computes it.
    half_t: Vec<f64>,
    t: Vec<f64>,
    /// Per lattice cell `k` (cell between lattice columns `k + 1` and `k + 2` of the row's table),
    /// the end of its run of pixels (runs are consecutive and start at 0).
    run_end: Vec<u32>,
    /// Per pixel, the index of its run (its lattice cell) in `run_end`: the same information
    /// as `run_end`, in the form a per-pixel loop without run boundaries reads.
    cell: Vec<u32>,
    /// Per group of eight pixels (`8g..8g + 8`), how the AVX2 cubic reads their cells' coefficients
    /// ([`GROUP_SHARED`], [`GROUP_PAIRS`], [`GROUP_FEW`] or [`GROUP_OTHER`]); the last partial
    /// group is absent.
    groups: Vec<u8>,
    /// Per group, [`later_cell_masks`] of its pixels' cells (read for [`GROUP_FEW`] groups only).
    masks: Vec<[u8; 2]>,
    /// Index of the lattice cell of the first run.
    first_cell: usize,
    /// Lattice columns the row touches, from `x_start` on.
    x_start: i64,
    count: usize,
    /// Whether the row's pixels repeat one small pattern per cell (see [`Regular`]).
    regular: Option<Regular>,
}

/// A row whose cells all hold the same pixels at the same fractions: cell `k` covers pixels
/// `k × P − skip .. (k + 1) × P − skip` (the first cell cut by `skip`, the last by the row's end),
/// the pixel of phase `j` within its cell at the fraction of phase `j`. Every row at scale 1 with a
/// wavelength of 2, 4 or a multiple of 8 pixels has one, and so do rows of other scales and
/// wavelengths that give such cells: [`Regular::of`] checks every pixel's cell and fraction (its
/// bits) against the pattern, so a row it accepts computes exactly what the tables would. The
/// cells' coefficients then stay in registers, and no per-pixel table is read: for two and four
/// pixels per cell each phase is one vector of cells (`avx512::regular_row`; on machines with AVX2
/// alone `avx2::regular_row`), for multiples of eight each cell is whole
/// groups of eight pixels aligned on it (`avx2::regular_cells`, AVX2 alone).
#[derive(Copy, Clone, Debug, PartialEq)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct Regular {
    /// Pixels per cell, `P`: 2, 4 or a multiple of 8.
    pixels_per_cell: usize,
    /// Pixels of the first cell left of the row, `0 ≤ skip < P`.
    skip: usize,
    /// The fraction of each of the first four phases (the first `P` are used when `P ≤ 4`).
    t: [f64; 4],
    /// The row's pixel of phase 0 in its second cell (which is whole): the row's fractions from
    /// there on are those of the `P` phases.
    phase_start: usize,
}

impl Regular {
    /// The pattern of a row's cells and fractions, if it has one of 2, 4 or a multiple of 8 pixels
    /// per cell.
    fn of(cell: &[u32], t: &[f64]) -> Option<Regular> {
        let n = cell.len().min(t.len());
        let (cell, t) = (&cell[..n], &t[..n]);
        if cell.first() != Some(&0) {
            return None;
        }
        // The first cell's pixels, and the cell after it (full unless the row ends in it).
        let first_run = cell.iter().take_while(|&&c| c == 0).count();
        let second_run = cell[first_run..].iter().take_while(|&&c| c == 1).count();
        let pixels_per_cell = second_run;
        let supported = matches!(pixels_per_cell, 2 | 4) || (pixels_per_cell >= 8 && pixels_per_cell % 8 == 0);
        if !supported || first_run > pixels_per_cell {
            return None;
        }
        let skip = pixels_per_cell - first_run;
        // The second cell is whole (its run is `P` long): its pixels are the phases in order.
        let phases = &t[first_run..first_run + pixels_per_cell];
        let regular = (0..n).all(|i| {
            let (k, j) = ((i + skip) / pixels_per_cell, (i + skip) % pixels_per_cell);
            cell[i] as usize == k && t[i].to_bits() == phases[j].to_bits()
        });
        let mut first_phases = [0.0; 4];
        for (slot, &phase) in first_phases.iter_mut().zip(phases) {
            *slot = phase;
        }
        regular.then_some(Regular { pixels_per_cell, skip, t: first_phases, phase_start: first_run })
    }

    /// The fractions of the `P` phases, for a row whose fractions are `row_t`.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    fn phases<'a>(&'a self, row_t: &'a [f64]) -> &'a [f64] {
        if self.pixels_per_cell <= 4 {
            &self.t[..self.pixels_per_cell]
        } else {
            &row_t[self.phase_start..self.phase_start + self.pixels_per_cell]
        }
    }
}

impl ColumnTable {
    /// The cubic of one row over this table's pixels, with its cells' `coefficients`.
    fn cubic_row<'a>(&'a self, coefficients: &'a [[f64; 4]]) -> CubicRow<'a> {
        CubicRow {
            cell: &self.cell,
            groups: &self.groups,
            masks: &self.masks,
            t: &self.t,
            half_t: &self.half_t,
            coefficients,
        }
    }

    fn prepare(&mut self, x0: i64, width: usize, scale: f64, w: i64) {
        let key = (x0, width, scale.to_bits(), w);
        if self.key == Some(key) {
            return;
        }
        let wf = w as f64;
        let first_x1 = previous_multiple_inclusive(floor_i64(to_logical(x0, scale)), w);
        let last_px = x0.saturating_add(width as i64 - 1);
        let last_x1 = previous_multiple_inclusive(floor_i64(to_logical(last_px, scale)), w);
        self.x_start = first_x1.saturating_sub(w);
        self.count = (last_x1.saturating_sub(first_x1) / w) as usize + 4;
        self.half_t.clear();
        self.t.clear();
        self.run_end.clear();
        self.first_cell = 0;
        let mut x1 = first_x1;
        let mut cell = 0usize;
        for i in 0..width {
            let lx = to_logical(x0 + i as i64, scale);
            let fl = floor_i64(lx);
            // x1 is monotone in the pixel index: recompute the multiple only when leaving a cell.
            if fl < x1 || fl.saturating_sub(x1) >= w {
                x1 = previous_multiple_inclusive(fl, w);
                let k = (x1.saturating_sub(first_x1) / w) as usize;
                while cell < k {
                    self.run_end.push(i as u32);
                    cell += 1;
                }
            }
            let t = (lx - x1 as f64) / wf;
            self.t.push(t);
            self.half_t.push(0.5 * t);
        }
        self.run_end.push(width as u32);
        // Cells `k` with `k + 4 > count` cannot occur (x1 <= last_x1); cap defensively.
        self.run_end.truncate(self.count.saturating_sub(3).max(1));
        if let Some(last) = self.run_end.last_mut() {
            *last = width as u32;
        }
        self.cell.clear();
        let mut start = 0usize;
        for (k, &end) in self.run_end.iter().enumerate() {
            let end = (end as usize).max(start);
            self.cell.resize(end, k as u32);
            start = end;
        }
        self.groups.clear();
        let cells = self.run_end.len() as u32;
        self.groups.extend(self.cell.chunks_exact(8).map(|c| group_kind(c, cells)));
        self.masks.clear();
        self.masks.extend(self.cell.chunks_exact(8).map(later_cell_masks));
        self.regular = if self.cell.len() == width { Regular::of(&self.cell, &self.t) } else { None };
        self.key = Some(key);
    }
}

/// The eight pixels of a group lie in one lattice cell.
const GROUP_SHARED: u8 = 0;
/// Each half of the group is two pairs of pixels in consecutive cells (`k, k, k + 1, k + 1`): a
/// wavelength of two pixels.
const GROUP_PAIRS: u8 = 1;
/// Any other arrangement.
const GROUP_OTHER: u8 = 2;
/// The group lies in two or three consecutive cells `k`, `k + 1`, `k + 2` (the pixels past `k`
/// marked by [`ColumnTable::masks`]), and is not [`GROUP_PAIRS`]: wavelengths of three to eight
/// pixels at any alignment and scale, and the groups of longer ones that cross a cell boundary.
const GROUP_FEW: u8 = 3;

/// The kind of a group of eight pixels' cells (`cells` of the row, every cell below it).
fn group_kind(c: &[u32], cells: u32) -> u8 {
    if c[0] == c[7] {
        GROUP_SHARED
    } else if c.chunks_exact(4).all(|h| h[0] == h[1] && h[2] == h[3] && h[2] == h[0].wrapping_add(1) && h[2] < cells) {
        GROUP_PAIRS
    } else if c[7] > c[0] && c[7] - c[0] <= 2 && c[7] < cells {
        GROUP_FEW
    } else {
        GROUP_OTHER
    }
}

/// For a group of eight pixels' cells: bit `j` of the first mask set where pixel `j` lies past the
/// first pixel's cell `k`, of the second where it lies past `k + 1`.
fn later_cell_masks(c: &[u32]) -> [u8; 2] {
    let past = |after: u32| c.iter().enumerate().filter(|&(_, &k)| k > after).fold(0u8, |m, (j, _)| m | (1 << j));
    [past(c[0]), past(c[0].saturating_add(1))]
}

/// The field values of the four lattice rows around a row (`y1 − w`, `y1`, `y1 + w`, `y1 + 2w`) at
/// every lattice column of the row, turned into the vertical Catmull-Rom coefficients (the ones
/// [`catmull_rom`] computes first), so a row costs one polynomial per column.
#[derive(Default)]
struct LatticeQuad {
    key: Option<(u32, i32, i64, i64, usize)>,
    /// First stage of the hash of each lattice column.
    columns: Vec<u32>,
    /// Cached lattice rows: (lattice y, values as f64).
    rows: Vec<(i64, Vec<f64>)>,
    /// Buffers of evicted rows, reused for the next ones.
    spare: Vec<Vec<f64>>,
    y1: Option<i64>,
    p1: Vec<f64>,
    c1: Vec<f64>,
    c2: Vec<f64>,
    c3: Vec<f64>,
}

impl LatticeQuad {
    fn prepare(&mut self, isa: Isa, values: &FieldValues, w: i64, x_start: i64, count: usize, y1: i64) {
        let key = (values.current, values.amplitude, w, x_start, count);
        if self.key != Some(key) {
            self.key = Some(key);
            self.columns.clear();
            self.columns
                .extend((0..count).map(|k| values.column(x_start.saturating_add((k as i64).saturating_mul(w)))));
            self.rows.clear();
            self.y1 = None;
        }
        if self.y1 == Some(y1) {
            return;
        }
        let ys = [y1.saturating_sub(w), y1, y1.saturating_add(w), y1.saturating_add(2 * w)];
        // Keep the rows still needed; compute the missing ones into the buffers of the others
        // (no allocation once warm: a new lattice row comes every `w` pixel rows).
        let mut i = 0;
        while i < self.rows.len() {
            if ys.contains(&self.rows[i].0) {
                i += 1;
            } else {
                let (_, buffer) = self.rows.swap_remove(i);
                self.spare.push(buffer);
            }
        }
        for &y in &ys {
            if !self.rows.iter().any(|(ry, _)| *ry == y) {
                let mut row = self.spare.pop().unwrap_or_default();
                row.clear();
                row.resize(self.columns.len(), 0.0);
                let remainder = values.remainder;
                let job = PointRow {
                    columns: &self.columns,
                    ly: y as i32 as u32,
                    remainder,
                    amplitude: f64::from(values.amplitude),
                };
                lattice_row(isa, &job, &mut row);
                self.rows.push((y, row));
            }
        }
        let empty = Vec::new();
        let row = |y: i64| self.rows.iter().find(|(ry, _)| *ry == y).map_or(&empty, |(_, values)| values);
        let rows = [row(ys[0]), row(ys[1]), row(ys[2]), row(ys[3])];
        // Every row was computed above with `count` values.
        let n = rows.iter().map(|r| r.len()).min().unwrap_or(0);
        for c in [&mut self.p1, &mut self.c1, &mut self.c2, &mut self.c3] {
            c.clear();
            c.resize(n, 0.0);
        }
        let job = QuadRows { rows: rows.map(|r| &r[..n]) };
        quad_coefficients(isa, &job, [&mut self.p1, &mut self.c1, &mut self.c2, &mut self.c3]);
        self.y1 = Some(y1);
    }
}

/// Four lattice rows of equal length (`y1 − w`, `y1`, `y1 + w`, `y1 + 2w`).
struct QuadRows<'a> {
    rows: [&'a [f64]; 4],
}

/// The vertical Catmull-Rom coefficients `[p1, c1, c2, c3]` of every column, as [`catmull_rom`]
/// computes them (one loop per output, which the compiler vectorises).
#[inline(always)]
fn quad_coefficients_generic(job: &QuadRows<'_>, out: [&mut [f64]; 4]) {
    let [v0, v1, v2, v3] = job.rows;
    let [p1, c1, c2, c3] = out;
    let n = v0.len().min(v1.len()).min(v2.len()).min(v3.len());
    let (v0, v1, v2, v3) = (&v0[..n], &v1[..n], &v2[..n], &v3[..n]);
    for (o, &b) in p1.iter_mut().zip(v1) {
        *o = b;
    }
    for ((o, &a), &c) in c1.iter_mut().zip(v0).zip(v2) {
        *o = c - a;
    }
    for ((((o, &a), &b), &c), &d) in c2.iter_mut().zip(v0).zip(v1).zip(v2).zip(v3) {
        *o = 2.0 * a - 5.0 * b + 4.0 * c - d;
    }
    for ((((o, &a), &b), &c), &d) in c3.iter_mut().zip(v0).zip(v1).zip(v2).zip(v3) {
        *o = 3.0 * (b - c) + d - a;
    }
}

fn quad_coefficients(isa: Isa, job: &QuadRows<'_>, out: [&mut [f64]; 4]) {
    match isa {
        // SAFETY: `add_noise_layer_on` only passes Avx2 when the machine has it.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { avx2::quad_coefficients(job, out) },
        _ => quad_coefficients_generic(job, out),
    }
}

/// The first stage of the hash of each pixel's own logical column (sub-pixel wavelengths).
#[derive(Default)]
struct PerPixelColumns {
    key: Option<(u32, i64, usize, u64)>,
    columns: Vec<u32>,
}

thread_local! {
    static CACHE: std::cell::RefCell<NoiseCache> = std::cell::RefCell::new(NoiseCache::default());
}

/// Runs `f` with this thread's noise cache (a fresh one if it is in use: never re-entered today).
fn with_cache<R>(f: impl FnOnce(&mut NoiseCache) -> R) -> R {
    CACHE.with(|cache| match cache.try_borrow_mut() {
        Ok(mut cache) => f(&mut cache),
        Err(_) => f(&mut NoiseCache::default()),
    })
}

/// Adds one noise layer to `map` (saturating to [−1, 1]); `ridged` adds the absolute value.
///
/// Per row: the vertical Catmull-Rom interpolation at `ty` of every lattice column the row touches
/// (from cached lattice rows and coefficients), then per lattice cell the horizontal coefficients,
/// then per pixel one cubic at its cached fraction `tx`. The arithmetic of every pixel is exactly
/// [`catmull_rom`]'s (vertical, then horizontal, in the same order), only the common parts are
/// computed once; the unit tests compare it bit for bit with the direct evaluation.
///
/// The per-pixel loops run on the fastest instruction set of the machine ([`Isa::best`]: AVX2
/// when present, four pixels at a time); every instruction set computes the same IEEE operations
/// in the same order, so the bits do not depend on it (the tests compare them).
pub fn add_noise_layer(map: &mut HeightMap, scale: f64, field: LayerField, ridged: bool) {
    add_noise_layer_on(Isa::best(), map, scale, field, ridged)
}

/// [`add_noise_layer`] on a given instruction set (the tests and the benchmark force the
/// fallback); an instruction set the machine lacks falls back to [`Isa::Scalar`].
pub fn add_noise_layer_on(isa: Isa, map: &mut HeightMap, scale: f64, field: LayerField, ridged: bool) {
    let isa = if isa.is_available() { isa } else { Isa::Scalar };
    add_layer_built(isa, isa == Isa::Avx2 && wide_cubic_available(), map, scale, field, ridged)
}

/// Pixels per call of [`displaced_by_layers`]'s `gather` (positions on the stack).
pub const DISPLACED_BATCH: usize = 64;

/// `Distort`'s source positions on row `py` of `width` pixels from `x0`, straight from its two
/// displacement layers (the same wavelength): `x = px + nx × d`, `y = py + ny × d` in `f64`, where
/// `nx` and `ny` are the layers' values at the pixel, each what [`add_noise_layer_on`] adds to a
/// zeroed map (`saturate(0 + value)` as an f32). Handed to `gather(first, xs, ys)` in pieces of
/// [`DISPLACED_BATCH`] pixels from pixel `first` on. The two layers share the row's column table
/// and, per group of eight pixels, the fractions and the choice of cells; their values never go
/// through memory. The same operations as the separate layers and the positions' arithmetic,
/// so the same bits (the tests compare). Returns `false`, having called nothing, where it does
/// not apply: only the AVX-512 cubic path (`isa` AVX2 on a machine with AVX-512F, cells of four
/// pixels or more) is fused; the caller then computes the layers as maps.
#[allow(clippy::too_many_arguments)]
pub fn displaced_by_layers(
    isa: Isa,
    scale: f64,
    [x_field, y_field]: [LayerField; 2],
    x0: i64,
    width: usize,
    py: i64,
    d: f64,
    mut gather: impl FnMut(usize, &[f64], &[f64]),
) -> bool {
    let physical_wavelength = (f64::from(x_field.wavelength) * scale).floor();
    let applies = isa == Isa::Avx2
        && isa.is_available()
        && wide_cubic_available()
        && x_field.wavelength == y_field.wavelength
        && physical_wavelength >= 4.0
        && width > 0
        && (x0.unsigned_abs() < 1 << 52)
        && ((width as u64) < 1 << 52);
    if !applies {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    with_cache(|cache| {
        let w = i64::from(x_field.wavelength.max(1));
        let column_key = (x0, width, scale.to_bits(), w);
        let columns = pick(&mut cache.columns, |c| c.key == Some(column_key));
        columns.prepare(x0, width, scale, w);
        let ly = to_logical(py, scale);
        let y1 = previous_multiple_inclusive(floor_i64(ly), w);
        let ty = (ly - y1 as f64) / w as f64;
        let cells = columns.run_end.len();
        let interpolated = &mut cache.interpolated;
        interpolated.resize(columns.count, 0.0);
        interpolated.truncate(columns.count);
        for (field, coefficients) in [x_field, y_field].iter().zip(cache.pair_coefficients.iter_mut()) {
            let values = FieldValues::new(field);
            let lattice_key = (values.current, values.amplitude, w, columns.x_start, columns.count);
            let lattice = pick(&mut cache.lattices, |l| l.key == Some(lattice_key));
            lattice.prepare(isa, &values, w, columns.x_start, columns.count, y1);
            coefficients.resize(cells, [0.0; 4]);
            coefficients.truncate(cells);
            cell_row(isa, true, &CellRow { lattice, ty, first_cell: columns.first_cell }, interpolated, coefficients);
        }
        let jobs = [columns.cubic_row(&cache.pair_coefficients[0]), columns.cubic_row(&cache.pair_coefficients[1])];
        let (mut xs, mut ys) = ([0.0f64; DISPLACED_BATCH], [0.0f64; DISPLACED_BATCH]);
        let n_all = width.min(columns.cell.len()).min(columns.t.len());
        debug_assert_eq!(n_all, width, "the column table covers the row");
        for first in (0..n_all).step_by(DISPLACED_BATCH) {
            let n = DISPLACED_BATCH.min(n_all - first);
            // SAFETY: AVX-512F (checked above); `first` is a multiple of 8 and `first + n` is
            // within the column table's per-pixel arrays.
            unsafe { avx512::displaced(&jobs, first, x0, py, d, &mut xs[..n], &mut ys[..n]) };
            gather(first, &xs[..n], &ys[..n]);
        }
    });
    true
}

/// Whether the process runs the sub-pixel rows' field values on AVX-512 (F, DQ and VL).
fn wide_points_available() -> bool {
    geogen_simd::enabled(geogen_simd::Isa::Avx512)
}

/// Whether the process runs the per-pixel cubic eight pixels at a time on AVX-512F.
fn wide_cubic_available() -> bool {
    geogen_simd::enabled(geogen_simd::Isa::Avx512)
}

/// [`add_noise_layer_on`] with the cubic rows on AVX-512 (`wide`, where `isa` is AVX2 and the
/// machine has AVX-512F) or not: the tests run both against each other.
fn add_layer_built(isa: Isa, wide: bool, map: &mut HeightMap, scale: f64, field: LayerField, ridged: bool) {
    let wide = wide && isa == Isa::Avx2 && wide_cubic_available();
    if ridged {
        add_layer::<true>(isa, wide, map, scale, field)
    } else {
        add_layer::<false>(isa, wide, map, scale, field)
    }
}

/// Columns of a row one call of a noise layer computes at a time. The per-thread tables are per
/// pixel (each pixel's lattice cell and fraction: about 21 bytes a pixel, for each of up to
/// [`CACHE_ENTRIES`] layers), so on rows wider than this they would grow with the map's width,
/// outside any memory plan: a row 20 million pixels wide took 5 GB. In segments they stay under
/// 6 MB a thread, and rows this wide are rare enough that rebuilding the tables per band costs
/// nothing that shows. The values depend on the absolute pixel only, so the bits are the same.
const SEGMENT_COLUMNS: usize = 1 << 14;

/// [`for_each_band`], each band's rows in segments of at most [`SEGMENT_COLUMNS`] columns:
/// `f(y0, x0 of the segment, the band's full rows, the segment's first column in a row, its
/// width)`.
fn for_each_band_segment(map: &mut HeightMap, f: impl Fn(i64, i64, &mut [f32], usize, usize) + Sync + Send) {
    let width = map.width();
    for_each_band(map, |y0, x0, rows| {
        for start in (0..width).step_by(SEGMENT_COLUMNS) {
            let segment = (width - start).min(SEGMENT_COLUMNS);
            f(y0, x0 + start as i64, rows, start, segment);
        }
    });
}

fn add_layer<const RIDGED: bool>(isa: Isa, wide: bool, map: &mut HeightMap, scale: f64, field: LayerField) {
    let w = i64::from(field.wavelength.max(1));
    let physical_wavelength = (f64::from(field.wavelength) * scale).floor();
    let values = FieldValues::new(&field);
    let rect = map.rect();
    if rect.is_empty() {
        return;
    }
    let width = rect.width as usize;
    if physical_wavelength <= 1.0 {
        // Sub-pixel wavelength: sample the field at the pixel's own logical point. Unlike the
        // original (defect 29) the add saturates.
        let remainder = values.remainder;
        let amplitude = f64::from(values.amplitude);
        for_each_band_segment(map, |y0, x0, rows, start, segment| {
            with_cache(|cache| {
                let key = (values.current, x0, segment, scale.to_bits());
                let columns = pick(&mut cache.per_pixel, |c| c.key == Some(key));
                if columns.key != Some(key) {
                    columns.columns.clear();
                    columns
                        .columns
                        .extend((0..segment).map(|i| values.column(floor_i64(to_logical(x0 + i as i64, scale)))));
                    columns.key = Some(key);
                }
                for (r, row) in rows.chunks_exact_mut(width).enumerate() {
                    let ly = floor_i64(to_logical(y0 + r as i64, scale)) as i32 as u32;
                    let job = PointRow { columns: &columns.columns, ly, remainder, amplitude };
                    point_row::<RIDGED>(isa, wide, &job, &mut row[start..start + segment]);
                }
            })
        });
        return;
    }
    let wf = w as f64;
    // Rows with one pattern of cells (scale 1) keep the cells' coefficients in registers: at two or
    // four pixels per cell eight cells at a time where the machine has AVX-512F, else four; at a
    // multiple of eight with AVX2 alone (AVX-512F runs those in its eight-lane cubic).
    #[cfg(target_arch = "x86_64")]
    let regular_wide = wide;
    // The eight-lane cubic gains where groups of eight pixels lie in one to three lattice cells
    // (four pixels per cell and more: every group is then `GROUP_SHARED` or `GROUP_FEW`); at two
    // pixels per cell it measured slower than the AVX2 build.
    let wide = wide && physical_wavelength >= 4.0;
    for_each_band_segment(map, |y0, x0, rows, start, segment| {
        with_cache(|cache| {
            let column_key = (x0, segment, scale.to_bits(), w);
            let columns = pick(&mut cache.columns, |c| c.key == Some(column_key));
            columns.prepare(x0, segment, scale, w);
            let lattice_key = (values.current, values.amplitude, w, columns.x_start, columns.count);
            let lattice = pick(&mut cache.lattices, |l| l.key == Some(lattice_key));
            // Scratch rows, every element written by `cell_row` before it is read.
            let (interpolated, coefficients) = (&mut cache.interpolated, &mut cache.coefficients);
            interpolated.resize(columns.count, 0.0);
            interpolated.truncate(columns.count);
            coefficients.resize(columns.run_end.len(), [0.0; 4]);
            coefficients.truncate(columns.run_end.len());
            for (r, row) in rows.chunks_exact_mut(width).enumerate() {
                let row = &mut row[start..start + segment];
                let ly = to_logical(y0 + r as i64, scale);
                let y1 = previous_multiple_inclusive(floor_i64(ly), w);
                let ty = (ly - y1 as f64) / wf;
                lattice.prepare(isa, &values, w, columns.x_start, columns.count, y1);
                let job = CellRow { lattice, ty, first_cell: columns.first_cell };
                #[cfg(target_arch = "x86_64")]
                if let (Isa::Avx2, Some(regular)) = (isa, &columns.regular) {
                    // SAFETY: `add_noise_layer_on` only passes Avx2 when the machine has it, and
                    // `wide` (so `regular_wide`) only where it has AVX-512F; each build gets the
                    // cells it handles (`Regular::of` gives 2, 4 or a multiple of 8).
                    let done = unsafe {
                        match (regular_wide, regular.pixels_per_cell) {
                            (true, 2 | 4) => {
                                avx512::regular_row::<RIDGED>(&job, regular, interpolated, row);
                                true
                            }
                            // Eight pixels and more per cell on AVX-512: its eight-lane cubic.
                            (true, _) => false,
                            (false, 2) => {
                                avx2::regular_row::<RIDGED, 2>(&job, regular, interpolated, row);
                                true
                            }
                            (false, 4) => {
                                avx2::regular_row::<RIDGED, 4>(&job, regular, interpolated, row);
                                true
                            }
                            (false, _) => {
                                avx2::regular_cells::<RIDGED>(&job, regular, &columns.t, interpolated, row);
                                true
                            }
                        }
                    };
                    if done {
                        continue;
                    }
                }
                cell_row(isa, wide, &job, interpolated, coefficients);
                cubic_row::<RIDGED>(isa, wide, &columns.cubic_row(coefficients), row);
            }
        })
    });
}

/// One row's per-cell work: the vertical interpolation at `ty` of every lattice column, then per
/// lattice cell (from `first_cell` on) its horizontal coefficients.
struct CellRow<'a> {
    lattice: &'a LatticeQuad,
    ty: f64,
    first_cell: usize,
}

#[inline(always)]
fn cell_row_generic(job: &CellRow<'_>, interpolated: &mut [f64], coefficients: &mut [[f64; 4]]) {
    vertical_generic(job, interpolated);
    horizontal_coefficients_from(job.first_cell, interpolated, coefficients, 0);
}

/// The vertical interpolation at `job.ty` of every lattice column the row touches.
#[inline(always)]
fn vertical_generic(job: &CellRow<'_>, interpolated: &mut [f64]) {
    let (lattice, ty) = (job.lattice, job.ty);
    // Vertical interpolation at every lattice column the row touches.
    let half_ty = 0.5 * ty;
    for ((((out, &p1), &c1), &c2), &c3) in
        interpolated.iter_mut().zip(&lattice.p1).zip(&lattice.c1).zip(&lattice.c2).zip(&lattice.c3)
    {
        *out = p1 + half_ty * (c1 + ty * (c2 + ty * c3));
    }
    // (Never reached: the lattice has a value for every column. The scratch is reused.)
    for out in interpolated.iter_mut().skip(lattice.p1.len()) {
        *out = 0.0;
    }
}

/// The horizontal Catmull-Rom coefficients `[p1, c1, c2, c3]` of the cell between `p1` and `p2`
/// ([`catmull_rom`]'s expressions, in its order: the vector builds compute the same).
#[inline(always)]
fn cell_coefficients([p0, p1, p2, p3]: [f64; 4]) -> [f64; 4] {
    [p1, p2 - p0, 2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3, 3.0 * (p1 - p2) + p3 - p0]
}

/// [`cell_coefficients`] of the `L::D_LANES` cells whose first lattice columns are at `from ..`,
/// one cell per lane, in its operations and order: `[p1, c1, c2, c3]`.
///
/// # Safety
/// `from .. from + L::D_LANES + 3` are readable.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn cell_coefficients_lanes<L: Lanes64>(from: *const f64) -> [L::D; 4] {
    // SAFETY: the caller's guarantee covers the four overlapping loads.
    let [p0, p1, p2, p3] = [0, 1, 2, 3].map(|k| unsafe { L::load(from.add(k)) });
    let c1 = L::sub(p2, p0);
    let c2 =
        L::sub(L::add(L::sub(L::mul(L::splat(2.0), p0), L::mul(L::splat(5.0), p1)), L::mul(L::splat(4.0), p2)), p3);
    let c3 = L::sub(L::add(L::mul(L::splat(3.0), L::sub(p1, p2)), p3), p0);
    [p1, c1, c2, c3]
}

/// `p1 + half_t × (c1 + t × (c2 + t × c3))` per lane: [`cubic_at`]'s operations and order.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn cubic_lanes<L: Lanes64>(t: L::D, half_t: L::D, [p1, c1, c2, c3]: [L::D; 4]) -> L::D {
    let inner = L::add(c2, L::mul(t, c3));
    let middle = L::add(c1, L::mul(t, inner));
    L::add(p1, L::mul(half_t, middle))
}

/// Horizontal: per lattice cell from `start` on its coefficients `[p1, c1, c2, c3]` from the
/// vertical interpolations from `first_cell` on (every run's four lattice columns exist, see
/// `ColumnTable::prepare`; a cell without them, never reached, gets zeros).
#[inline(always)]
fn horizontal_coefficients_from(first_cell: usize, interpolated: &[f64], coefficients: &mut [[f64; 4]], start: usize) {
    let cells = interpolated.get(first_cell..).unwrap_or(&[]);
    let mut filled = start;
    for (out, p) in coefficients.iter_mut().zip(cells.windows(4)).skip(start) {
        *out = cell_coefficients([p[0], p[1], p[2], p[3]]);
        filled += 1;
    }
    for out in coefficients.iter_mut().skip(filled) {
        *out = [0.0; 4];
    }
}

fn cell_row(isa: Isa, wide: bool, job: &CellRow<'_>, interpolated: &mut [f64], coefficients: &mut [[f64; 4]]) {
    match isa {
        // SAFETY: `add_layer_built` only passes `wide` with Avx2 when the machine has AVX-512F.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 if wide => unsafe { avx512::cell_row(job, interpolated, coefficients) },
        // SAFETY: `add_noise_layer_on` only passes Avx2 when the machine has it.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { avx2::cell_row(job, interpolated, coefficients) },
        _ => cell_row_generic(job, interpolated, coefficients),
    }
}

/// The pixels of a [`Regular`] row outside `vector` (the pixels a vector loop covered), one at a
/// time: their cells' coefficients as [`horizontal_coefficients_from`] computes them and the
/// cubic as [`cubic_at`] does. `cells` are the row's vertical interpolations from its first cell,
/// `phases` the fractions of its phases ([`Regular::phases`]).
#[cfg(target_arch = "x86_64")]
fn regular_ends<const RIDGED: bool>(
    cells: &[f64],
    regular: &Regular,
    phases: &[f64],
    vector: std::ops::Range<usize>,
    row: &mut [f32],
) {
    let (p, skip, n) = (regular.pixels_per_cell, regular.skip, row.len());
    let head = vector.start.min(n);
    let tail = vector.end.max(head).min(n);
    for i in (0..head).chain(tail..n) {
        let (cell, j) = ((i + skip) / p, (i + skip) % p);
        let [p1, c1, c2, c3] = match cells.get(cell..cell + 4) {
            Some(&[p0, p1, p2, p3]) => cell_coefficients([p0, p1, p2, p3]),
            _ => [0.0; 4], // never reached: the lattice has the row's columns (see `horizontal_coefficients_from`)
        };
        let t = phases[j];
        row[i] = add_value::<RIDGED>(row[i], p1 + (0.5 * t) * (c1 + t * (c2 + t * c3)));
    }
}

/// One row's horizontal interpolation: per pixel its cell (an index into `coefficients`, each
/// `[p1, c1, c2, c3]` of [`catmull_rom`]) and its fractions `t` and `0.5 × t`.
struct CubicRow<'a> {
    cell: &'a [u32],
    /// [`ColumnTable::groups`] (read by the AVX2 loop only).
    groups: &'a [u8],
    /// [`ColumnTable::masks`] (read by the AVX2 loop only).
    masks: &'a [[u8; 2]],
    t: &'a [f64],
    half_t: &'a [f64],
    coefficients: &'a [[f64; 4]],
}

/// `h + value` saturated, as every layer adds (`ridged` adds |value|).
#[inline(always)]
fn add_value<const RIDGED: bool>(h: f32, value: f64) -> f32 {
    let v = if RIDGED { value.abs() } else { value };
    saturate(h + (v / HEIGHT_UNITS) as f32)
}

/// The cubic of pixel `i`: `p1 + 0.5t × (c1 + t × (c2 + t × c3))`, [`catmull_rom`]'s order.
#[inline(always)]
fn cubic_at(job: &CubicRow<'_>, i: usize) -> f64 {
    let [p1, c1, c2, c3] = job.coefficients[job.cell[i] as usize];
    let t = job.t[i];
    p1 + job.half_t[i] * (c1 + t * (c2 + t * c3))
}

fn cubic_row<const RIDGED: bool>(isa: Isa, wide: bool, job: &CubicRow<'_>, row: &mut [f32]) {
    let n = row.len().min(job.cell.len()).min(job.t.len()).min(job.half_t.len());
    let row = &mut row[..n];
    match isa {
        // SAFETY: `add_layer_built` only passes `wide` with Avx2 when the machine has AVX-512F.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 if wide => unsafe { avx512::cubic_row::<RIDGED>(job, row) },
        // SAFETY: `add_noise_layer_on` only passes Avx2 when the machine has it.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { avx2::cubic_row::<RIDGED>(job, row) },
        _ => {
            for (i, h) in row.iter_mut().enumerate() {
                *h = add_value::<RIDGED>(*h, cubic_at(job, i));
            }
        }
    }
}

/// One row of a sub-pixel layer: per pixel the first stage of its column's hash, the row's
/// logical `y`, and the layer's remainder and amplitude.
struct PointRow<'a> {
    columns: &'a [u32],
    ly: u32,
    remainder: FloatMod,
    amplitude: f64,
}

/// Sub-pixel rows: the field value of every pixel's own lattice point, as [`LayerField::value`]
/// computes it (the remainder in exact f64 arithmetic so that the loop vectorises), added.
#[inline(always)]
fn point_row_generic<const RIDGED: bool>(job: &PointRow<'_>, row: &mut [f32]) {
    let (ly, remainder, amplitude) = (job.ly, job.remainder, job.amplitude);
    for (h, &c) in row.iter_mut().zip(job.columns) {
        let value = remainder.rem(geogen_random::hash2(c, ly)) - amplitude;
        *h = add_value::<RIDGED>(*h, value);
    }
}

/// A lattice row's field values, [`FieldValues::value`] at every column of `job` (same loop as
/// [`point_row_generic`], without the add).
#[inline(always)]
fn lattice_row_generic(job: &PointRow<'_>, out: &mut [f64]) {
    let (ly, remainder, amplitude) = (job.ly, job.remainder, job.amplitude);
    for (o, &c) in out.iter_mut().zip(job.columns) {
        *o = remainder.rem(geogen_random::hash2(c, ly)) - amplitude;
    }
}

fn lattice_row(isa: Isa, job: &PointRow<'_>, out: &mut [f64]) {
    match isa {
        // SAFETY: `add_noise_layer_on` only passes Avx2 when the machine has it.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { avx2::lattice_row(job, out) },
        _ => lattice_row_generic(job, out),
    }
}

/// One sub-pixel row on `isa`; `wide` takes the AVX-512 build of the field values (16-lane
/// hashes) where the machine has it.
fn point_row<const RIDGED: bool>(isa: Isa, wide: bool, job: &PointRow<'_>, row: &mut [f32]) {
    match isa {
        // SAFETY: AVX-512F, DQ and VL are available (checked); AVX2 too (`add_noise_layer_on`).
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 if wide && wide_points_available() => unsafe { avx512::point_row::<RIDGED>(job, row) },
        // SAFETY: `add_noise_layer_on` only passes Avx2 when the machine has it.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { avx2::point_row::<RIDGED>(job, row) },
        _ => point_row_generic::<RIDGED>(job, row),
    }
}

/// `a mod d` for `u32` values and a divisor `1 <= d < 2^16`, in f64 arithmetic that vectorises
/// (SSE2 and AVX2 have no 64-bit multiply-high). `q = round(a × (1/d))` is `floor(a / d)` or one
/// more: the product's relative error is below 2^−51, so its absolute error is below 2^−19, less
/// than the distance `1/d > 2^−16` from `a / d` to the next integer above when `a / d` is not one;
/// so `a − q·d` (exact: integers below 2^53) lies in [−d, d) and one conditional add of `d`
/// gives the remainder. Rounding uses the 1.5 × 2^52 trick (exact for |x| < 2^51).
#[derive(Copy, Clone, Debug)]
struct FloatMod {
    d: f64,
    inverse: f64,
}

impl FloatMod {
    fn new(d: u32) -> FloatMod {
        let d = f64::from(d.clamp(1, 65535));
        FloatMod { d, inverse: 1.0 / d }
    }

    #[inline(always)]
    fn rem(self, a: u32) -> f64 {
        const ROUND: f64 = 6_755_399_441_055_744.0; // 1.5 × 2^52
        let a = f64::from(a);
        let q = (a * self.inverse + ROUND) - ROUND;
        let r = a - q * self.d;
        if r < 0.0 {
            r + self.d
        } else {
            r
        }
    }
}

/// The AVX2 versions of the per-pixel loops: the same IEEE operations as the scalar ones, in the
/// same order, four (cubic) or more (sub-pixel, compiled by the vectoriser) pixels at a time.
#[allow(
    unsafe_op_in_unsafe_fn,
    reason = "the functions here are whole-body intrinsic code under `#[target_feature]`: the unsafe contract is the function's (the level is detected, slices are long enough), stated on each"
)]
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{
        add_value, cubic_at, horizontal_coefficients_from, lattice_row_generic, quad_coefficients_generic,
        vertical_generic, CellRow, CubicRow, PointRow, QuadRows,
    };
    use crate::lanes64::{Avx2, Lanes64};
    use geogen_render::raster::HEIGHT_UNITS;
    use std::arch::x86_64::*;

    /// # Safety
    /// The machine must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn point_row<const RIDGED: bool>(job: &PointRow<'_>, row: &mut [f32]) {
        // In pieces of 64: the field values (the vectorised loop of the lattice rows), then the
        // adds four at a time with the division-free conversion.
        const PIECE: usize = 64;
        let mut values = [0.0f64; PIECE];
        for (row, columns) in row.chunks_mut(PIECE).zip(job.columns.chunks(PIECE)) {
            let n = row.len().min(columns.len());
            let piece = PointRow { columns: &columns[..n], ..*job };
            lattice_row_generic(&piece, &mut values[..n]);
            let chunks = n / 4;
            for j in 0..chunks {
                let i = 4 * j;
                add4::<RIDGED>(row.as_mut_ptr().add(i), _mm256_loadu_pd(values.as_ptr().add(i)));
            }
            for i in 4 * chunks..n {
                row[i] = add_value::<RIDGED>(row[i], values[i]);
            }
        }
    }

    /// `h = add_value(h, v)` for the four heights at `out`: |v| when ridged, converted by
    /// [`units_to_height`], added and saturated (NaN → 0, else clamped to [−1, 1]: maxps/minps
    /// keep the sum when inside, −0.0 included).
    ///
    /// # Safety
    /// The machine must support AVX2; `out` points to four heights.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn add4<const RIDGED: bool>(out: *mut f32, value: __m256d) {
        let value = if RIDGED { _mm256_andnot_pd(_mm256_set1_pd(-0.0), value) } else { value };
        let sum = _mm_add_ps(_mm_loadu_ps(out), units_to_height(value));
        let clamped = _mm_min_ps(_mm_max_ps(sum, _mm_set1_ps(-1.0)), _mm_set1_ps(1.0));
        _mm_storeu_ps(out, _mm_andnot_ps(_mm_cmpunord_ps(sum, sum), clamped));
    }

    /// # Safety
    /// The machine must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn cell_row(job: &CellRow<'_>, interpolated: &mut [f64], coefficients: &mut [[f64; 4]]) {
        vertical_generic(job, interpolated);
        // Four cells at a time, one lane per cell, in `horizontal_coefficients_from`'s operations
        // and order; the four coefficient vectors transposed into the cells' `[p1, c1, c2, c3]`.
        let cells = interpolated.get(job.first_cell..).unwrap_or(&[]);
        let n = coefficients.len().min(cells.len().saturating_sub(3));
        let (from, to) = (cells.as_ptr(), coefficients.as_mut_ptr().cast::<f64>());
        let mut k = 0;
        while k + 4 <= n {
            // `k + 7 <= cells.len()` since `n <= cells.len() − 3`.
            let [p1, c1, c2, c3] = coefficients4(from.add(k));
            let low_p = _mm256_unpacklo_pd(p1, c1); // p1₀ c1₀ p1₂ c1₂
            let high_p = _mm256_unpackhi_pd(p1, c1); // p1₁ c1₁ p1₃ c1₃
            let low_c = _mm256_unpacklo_pd(c2, c3); // c2₀ c3₀ c2₂ c3₂
            let high_c = _mm256_unpackhi_pd(c2, c3); // c2₁ c3₁ c2₃ c3₃
            let out = to.add(4 * k);
            _mm256_storeu_pd(out, _mm256_permute2f128_pd::<0x20>(low_p, low_c));
            _mm256_storeu_pd(out.add(4), _mm256_permute2f128_pd::<0x20>(high_p, high_c));
            _mm256_storeu_pd(out.add(8), _mm256_permute2f128_pd::<0x31>(low_p, low_c));
            _mm256_storeu_pd(out.add(12), _mm256_permute2f128_pd::<0x31>(high_p, high_c));
            k += 4;
        }
        horizontal_coefficients_from(job.first_cell, interpolated, coefficients, k);
    }

    /// [`super::cell_coefficients_lanes`] four cells at a time.
    ///
    /// # Safety
    /// The machine must support AVX2; `from .. from + 7` are readable.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn coefficients4(from: *const f64) -> [__m256d; 4] {
        super::cell_coefficients_lanes::<Avx2>(from)
    }

    /// [`super::avx512::regular_row`] for `P` = 2 or 4 pixels per cell, four cells at a time: each
    /// phase one vector of the four cells (the same operations per cell and phase), the phases
    /// interleaved into pixels with in-lane unpacks and 128-bit lane moves. On an AMD Zen 3 (AVX2
    /// alone) a layer of wavelength 4 took 0.64x the time of the cell tables and per-pixel cubic
    /// this way (kernel bench, 12 alternated runs; on the AVX-512 Xeon of earlier work, where
    /// `avx512::regular_row` takes these rows, an AVX2 build of it had measured no faster).
    ///
    /// # Safety
    /// The machine must support AVX2; `regular.pixels_per_cell` is `P`, 2 or 4.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn regular_row<const RIDGED: bool, const P: usize>(
        job: &CellRow<'_>,
        regular: &super::Regular,
        interpolated: &mut [f64],
        row: &mut [f32],
    ) {
        assert!(regular.pixels_per_cell == P && matches!(P, 2 | 4));
        vertical_generic(job, interpolated);
        let cells = interpolated.get(job.first_cell..).unwrap_or(&[]);
        let (p, skip, n) = (P, regular.skip, row.len());
        let phases = regular.t.map(|t| (_mm256_set1_pd(t), _mm256_mul_pd(_mm256_set1_pd(0.5), _mm256_set1_pd(t))));
        let first_whole = usize::from(skip > 0);
        let mut k = first_whole;
        let out = row.as_mut_ptr();
        while (k + 4) * p - skip <= n && k + 7 <= cells.len() {
            let coefficients = coefficients4(cells.as_ptr().add(k));
            let at = |j: usize| {
                let (t, half_t) = phases[j];
                cubic(t, half_t, coefficients)
            };
            let pixels = out.add(k * p - skip);
            // Phases 0, 1 of cells 0, 2 | 1, 3.
            let (v0, v1) = (at(0), at(1));
            let (a, b) = (_mm256_unpacklo_pd(v0, v1), _mm256_unpackhi_pd(v0, v1));
            if P == 2 {
                add8::<RIDGED>(pixels, _mm256_permute2f128_pd::<0x20>(a, b), _mm256_permute2f128_pd::<0x31>(a, b));
            } else {
                // The same for phases 2 and 3: each cell's four pixels are a half of (a, c) or (b, d).
                let (v2, v3) = (at(2), at(3));
                let (c, d) = (_mm256_unpacklo_pd(v2, v3), _mm256_unpackhi_pd(v2, v3));
                add8::<RIDGED>(pixels, _mm256_permute2f128_pd::<0x20>(a, c), _mm256_permute2f128_pd::<0x20>(b, d));
                add8::<RIDGED>(
                    pixels.add(8),
                    _mm256_permute2f128_pd::<0x31>(a, c),
                    _mm256_permute2f128_pd::<0x31>(b, d),
                );
            }
            k += 4;
        }
        super::regular_ends::<RIDGED>(cells, regular, &regular.t[..p], (first_whole * p - skip)..(k * p - skip), row);
    }

    /// A [`super::Regular`] row of `P` pixels per cell, `P` a multiple of eight: per cell its
    /// coefficients ([`super::cell_coefficients`]) broadcast, and its pixels in groups of eight
    /// from its first, their fractions read from the row's own whole cell of phases (`row_t`, in
    /// the first-level cache) and halved as [`super::ColumnTable::prepare`] halves them: the
    /// operations of [`super::cubic_at`], with no per-pixel table and no group straddling two
    /// cells whatever the row's first pixel.
    ///
    /// # Safety
    /// The machine must support AVX2; `regular.pixels_per_cell` is a multiple of 8 and `row_t` the
    /// fractions of the row `regular` was made from, as long as `row` (checked): `Regular::of` made
    /// sure the row holds its first two cells whole, which the first cell's groups rely on.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn regular_cells<const RIDGED: bool>(
        job: &CellRow<'_>,
        regular: &super::Regular,
        row_t: &[f64],
        interpolated: &mut [f64],
        row: &mut [f32],
    ) {
        let (p, skip, n) = (regular.pixels_per_cell, regular.skip, row.len());
        assert!(p >= 8 && p % 8 == 0);
        assert_eq!(n, row_t.len(), "the row of the column table");
        let phases = regular.phases(row_t);
        vertical_generic(job, interpolated);
        let cells = interpolated.get(job.first_cell..).unwrap_or(&[]);
        if cells.len() < 4 {
            // Never reached: the lattice has the row's columns (`regular_ends` fills in zeros).
            super::regular_ends::<RIDGED>(cells, regular, phases, 0..0, row);
            return;
        }
        let out = row.as_mut_ptr();
        let half = _mm256_set1_pd(0.5);
        // The pixels of cell `k` at `phases` (a multiple of eight of them), eight at a time, given
        // the cell's coefficients broadcast.
        let groups = |k: usize, phases_of_cell: std::ops::Range<usize>, coefficients: [__m256d; 4]| {
            for j in phases_of_cell.step_by(8) {
                let (low, high) =
                    (_mm256_loadu_pd(phases.as_ptr().add(j)), _mm256_loadu_pd(phases.as_ptr().add(j + 4)));
                add8::<RIDGED>(
                    out.add(k * p + j - skip),
                    cubic(low, _mm256_mul_pd(half, low), coefficients),
                    cubic(high, _mm256_mul_pd(half, high), coefficients),
                );
            }
        };
        let broadcast = |k: usize| {
            let [p1, c1, c2, c3] = super::cell_coefficients([cells[k], cells[k + 1], cells[k + 2], cells[k + 3]]);
            [_mm256_set1_pd(p1), _mm256_set1_pd(c1), _mm256_set1_pd(c2), _mm256_set1_pd(c3)]
        };
        // The first cell, cut by `skip` (whole in the row, as the second): its whole groups of eight
        // at its end; the pixels before them are `regular_ends`'s.
        let (mut k, start) = if skip > 0 {
            let first_group = p - (p - skip) / 8 * 8;
            let coefficients = broadcast(0);
            groups(0, first_group..p, coefficients);
            (1, first_group - skip)
        } else {
            (0, 0)
        };
        // Whole cells, four cells' coefficients at a time (one cell per lane, then each broadcast
        // from memory), then one at a time.
        while (k + 4) * p - skip <= n && k + 7 <= cells.len() {
            let mut lanes = [[0.0f64; 4]; 4];
            for (to, from) in lanes.iter_mut().zip(coefficients4(cells.as_ptr().add(k))) {
                _mm256_storeu_pd(to.as_mut_ptr(), from);
            }
            for c in 0..4 {
                let coefficients = lanes.map(|coefficient| _mm256_set1_pd(coefficient[c]));
                groups(k + c, 0..p, coefficients);
            }
            k += 4;
        }
        while (k + 1) * p - skip <= n && k + 4 <= cells.len() {
            let coefficients = broadcast(k);
            groups(k, 0..p, coefficients);
            k += 1;
        }
        // The last cell, cut by the row's end: its whole groups of eight from its start.
        let mut end = k * p - skip;
        if end < n && k + 4 <= cells.len() {
            let coefficients = broadcast(k);
            let whole = (n - end) / 8 * 8;
            groups(k, 0..whole, coefficients);
            end += whole;
        }
        super::regular_ends::<RIDGED>(cells, regular, phases, start..end, row);
    }

    /// `p1 + half_t × (c1 + t × (c2 + t × c3))` on four lanes ([`super::cubic_at`]'s operations
    /// and order).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn cubic(t: __m256d, half_t: __m256d, coefficients: [__m256d; 4]) -> __m256d {
        super::cubic_lanes::<Avx2>(t, half_t, coefficients)
    }

    /// # Safety
    /// The machine must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn quad_coefficients(job: &QuadRows<'_>, out: [&mut [f64]; 4]) {
        quad_coefficients_generic(job, out)
    }

    /// # Safety
    /// The machine must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn lattice_row(job: &PointRow<'_>, out: &mut [f64]) {
        lattice_row_generic(job, out)
    }

    /// `(v / HEIGHT_UNITS) as f32` for four values, bit for bit, mostly without the division
    /// (the slowest instruction of the per-pixel loops).
    ///
    /// `q = v × fl(1 / HEIGHT_UNITS)` is within 2.5 f64 ulps of the correctly rounded quotient
    /// `fl(v / HEIGHT_UNITS)` (two roundings of relative size 2^−53 each, against half an ulp),
    /// so the two give the same f32 unless an f32 rounding boundary lies between them: in the
    /// bits of a normal f32-range value that boundary is where the 29 bits below the f32
    /// mantissa equal 2^28 (the midpoint between two f32). When any of the four `q` has those
    /// bits within 8 of 2^28, or is below 2^−100 in magnitude (f32 subnormals and zero, where
    /// that layout does not hold), the four are divided instead: a window of 16 in 2^29 per value,
    /// about one group of four in 2^23 (plus exact zeros), so the division is nearly never paid.
    ///
    /// # Safety
    /// The machine must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn units_to_height(value: __m256d) -> __m128 {
        let q = _mm256_mul_pd(value, _mm256_set1_pd(1.0 / HEIGHT_UNITS));
        let unsure = unsure(q);
        if _mm256_testz_si256(unsure, unsure) != 0 {
            _mm256_cvtpd_ps(q)
        } else {
            _mm256_cvtpd_ps(_mm256_div_pd(value, _mm256_set1_pd(HEIGHT_UNITS)))
        }
    }

    /// [`units_to_height`] of eight values (`low` the first four), one check for the eight: the
    /// same bits, since each group of four gets the quotient's f32 either way.
    ///
    /// The check is [`unsure`]'s, done on the eight at once in 32-bit lanes (a superset of its
    /// lanes, so the fast path is taken only where [`unsure`] would take it too): the low 29 bits
    /// of each product lie in its low 32-bit half (the low halves of the eight gathered into one
    /// vector), and `|q| < 2^−100` implies `|f32(q)| <= 2^−100` (rounding is monotone and 2^−100
    /// is an f32), which is tested on the eight converted values.
    ///
    /// # Safety
    /// The machine must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn units_to_height8(low: __m256d, high: __m256d) -> __m256 {
        const MIDPOINT: i32 = 1 << 28;
        let inverse = _mm256_set1_pd(1.0 / HEIGHT_UNITS);
        let (q_low, q_high) = (_mm256_mul_pd(low, inverse), _mm256_mul_pd(high, inverse));
        let converted =
            _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(_mm256_cvtpd_ps(q_low)), _mm256_cvtpd_ps(q_high));
        // Dword 2j: the low half of q_low's lane j; dword 2j + 1: the low half of q_high's.
        let halves = _mm256_blend_epi32::<0b1010_1010>(
            _mm256_castpd_si256(q_low),
            _mm256_slli_epi64::<32>(_mm256_castpd_si256(q_high)),
        );
        let below = _mm256_and_si256(
            _mm256_add_epi32(halves, _mm256_set1_epi32(MARGIN as i32 - MIDPOINT)),
            _mm256_set1_epi32((1 << 29) - 1),
        );
        let near = _mm256_cmpgt_epi32(_mm256_set1_epi32(2 * MARGIN as i32), below);
        let magnitude = _mm256_and_si256(_mm256_castps_si256(converted), _mm256_set1_epi32(i32::MAX));
        let tiny = _mm256_cmpgt_epi32(_mm256_set1_epi32(TINY_BITS_F32 + 1), magnitude);
        let unsure = _mm256_or_si256(near, tiny);
        if _mm256_testz_si256(unsure, unsure) != 0 {
            converted
        } else {
            let units = _mm256_set1_pd(HEIGHT_UNITS);
            let (low, high) = (_mm256_cvtpd_ps(_mm256_div_pd(low, units)), _mm256_cvtpd_ps(_mm256_div_pd(high, units)));
            _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(low), high)
        }
    }

    /// How close to an f32 rounding midpoint (in f64 ulps) [`unsure`] counts as unsure.
    pub(super) const MARGIN: i64 = 8;
    /// Bit 28 of an f64's mantissa: an f32 rounding midpoint (the low 29 bits are rounded off).
    pub(super) const MIDPOINT: i64 = 1 << 28;

    /// The bits of 2^−100 as an f32 (see [`units_to_height8`]).
    const TINY_BITS_F32: i32 = (127 - 100) << 23;

    /// The lanes of the products `q` whose f32 rounding might differ from the quotient's (see
    /// [`units_to_height`]): all ones where the low 29 bits lie within `MARGIN` of 2^28 or `|q|`
    /// is below 2^−100.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn unsure(q: __m256d) -> __m256i {
        let bits = _mm256_castpd_si256(q);
        // (low 29 bits − (2^28 − MARGIN)) mod 2^29 < 2 × MARGIN: within MARGIN of the midpoint.
        let below = _mm256_and_si256(
            _mm256_add_epi64(bits, _mm256_set1_epi64x(MARGIN - MIDPOINT)),
            _mm256_set1_epi64x((1 << 29) - 1),
        );
        let near = _mm256_cmpgt_epi64(_mm256_set1_epi64x(2 * MARGIN), below);
        let magnitude = _mm256_and_si256(bits, _mm256_set1_epi64x(i64::MAX));
        let tiny = _mm256_cmpgt_epi64(_mm256_set1_epi64x(TINY_BITS), magnitude);
        _mm256_or_si256(near, tiny)
    }

    /// The bits of 2^−100, below which [`units_to_height`] divides.
    pub(super) const TINY_BITS: i64 = (1023 - 100) << 52;

    /// The cubic of the four pixels from `i` on: [`super::cubic_at`]'s operations, four lanes.
    ///
    /// # Safety
    /// The machine must support AVX2; `job.cell`, `job.t` and `job.half_t` have at least `i + 4`
    /// elements, `job.coefficients` at least one.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn cubic4(job: &CubicRow<'_>, i: usize) -> __m256d {
        let last = job.coefficients.len() - 1;
        let coefficients = job.coefficients.as_ptr().cast::<f64>();
        let cell = job.cell.as_ptr().add(i);
        let (first, fourth) = (*cell, *cell.add(3));
        let (p1, c1, c2, c3) = if first == fourth {
            // The four pixels share one lattice cell (the cells of a row never decrease, see
            // `ColumnTable::prepare`): its coefficients, broadcast. The usual case for
            // wavelengths of 4 pixels and more; the same numbers as the gather below.
            let k = coefficients.add(4 * (first as usize).min(last));
            (
                _mm256_broadcast_sd(&*k),
                _mm256_broadcast_sd(&*k.add(1)),
                _mm256_broadcast_sd(&*k.add(2)),
                _mm256_broadcast_sd(&*k.add(3)),
            )
        } else {
            // Each pixel's [p1, c1, c2, c3] (indices capped: they are in range by
            // construction), transposed into one vector per coefficient with 128-bit loads
            // and in-lane unpacks (no lane-crossing permutes).
            let at = |lane: usize| coefficients.add(4 * (*cell.add(lane) as usize).min(last));
            let (k0, k1, k2, k3) = (at(0), at(1), at(2), at(3));
            let pair = |a: *const f64, b: *const f64| {
                _mm256_insertf128_pd::<1>(_mm256_castpd128_pd256(_mm_loadu_pd(a)), _mm_loadu_pd(b))
            };
            let x02 = pair(k0, k2); // p1₀ c1₀ p1₂ c1₂
            let x13 = pair(k1, k3);
            let y02 = pair(k0.add(2), k2.add(2)); // c2₀ c3₀ c2₂ c3₂
            let y13 = pair(k1.add(2), k3.add(2));
            (
                _mm256_unpacklo_pd(x02, x13),
                _mm256_unpackhi_pd(x02, x13),
                _mm256_unpacklo_pd(y02, y13),
                _mm256_unpackhi_pd(y02, y13),
            )
        };
        polynomial4(job, i, [p1, c1, c2, c3])
    }

    /// The cubic of the four pixels from `i` on whose cells are `k, k, k + 1, k + 1` (a group of
    /// kind [`super::GROUP_PAIRS`]): the two cells' `[p1, c1]` and `[c2, c3]` side by side, each
    /// duplicated within its lane by the unpacks (the numbers `cubic4`'s gather reads).
    ///
    /// # Safety
    /// The machine must support AVX2; `coefficients` has at least `4k + 8` elements, `job.t` and
    /// `job.half_t` at least `i + 4`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn pairs4(job: &CubicRow<'_>, i: usize, coefficients: *const f64, k: usize) -> __m256d {
        let (a, b) = (coefficients.add(4 * k), coefficients.add(4 * k + 4));
        let pair = |a: *const f64, b: *const f64| {
            _mm256_insertf128_pd::<1>(_mm256_castpd128_pd256(_mm_loadu_pd(a)), _mm_loadu_pd(b))
        };
        let x = pair(a, b); // p1ₖ c1ₖ p1ₖ₊₁ c1ₖ₊₁
        let y = pair(a.add(2), b.add(2)); // c2ₖ c3ₖ c2ₖ₊₁ c3ₖ₊₁
        let coefficients =
            [_mm256_unpacklo_pd(x, x), _mm256_unpackhi_pd(x, x), _mm256_unpacklo_pd(y, y), _mm256_unpackhi_pd(y, y)];
        polynomial4(job, i, coefficients)
    }

    /// `p1 + half_t × (c1 + t × (c2 + t × c3))` for the four pixels from `i` on, given their
    /// coefficients.
    ///
    /// # Safety
    /// The machine must support AVX2; `job.t` and `job.half_t` have at least `i + 4` elements.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn polynomial4(job: &CubicRow<'_>, i: usize, coefficients: [__m256d; 4]) -> __m256d {
        let (t, half_t) = (Avx2::load(job.t.as_ptr().add(i)), Avx2::load(job.half_t.as_ptr().add(i)));
        cubic(t, half_t, coefficients)
    }

    /// # Safety
    /// The machine must support AVX2; `row`, `job.cell`, `job.t` and `job.half_t` have at least
    /// `row.len()` elements.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn cubic_row<const RIDGED: bool>(job: &CubicRow<'_>, row: &mut [f32]) {
        let n = row.len();
        assert!(job.cell.len() >= n && job.t.len() >= n && job.half_t.len() >= n);
        if job.coefficients.is_empty() {
            return;
        }
        // Eight pixels at a time: two cubics of four (their coefficients read as the group's kind
        // in the column table says), one conversion check and one 256-bit add and saturation;
        // then at most one group of four, then single pixels.
        let eights = n / 8;
        let last = job.coefficients.len() - 1;
        let coefficients = job.coefficients.as_ptr().cast::<f64>();
        let groups = &job.groups[..eights.min(job.groups.len())];
        // `group_coefficients` reads each group's masks unchecked.
        assert!(job.masks.len() >= groups.len());
        for (j, &kind) in groups.iter().enumerate() {
            let i = 8 * j;
            let first = *job.cell.get_unchecked(i) as usize;
            if kind == super::GROUP_SHARED {
                // The eight pixels share one lattice cell: its coefficients broadcast once for both
                // groups of four, the same numbers as `cubic4` reads for each.
                let k = coefficients.add(4 * first.min(last));
                let shared = [
                    _mm256_broadcast_sd(&*k),
                    _mm256_broadcast_sd(&*k.add(1)),
                    _mm256_broadcast_sd(&*k.add(2)),
                    _mm256_broadcast_sd(&*k.add(3)),
                ];
                add8::<RIDGED>(row.as_mut_ptr().add(i), polynomial4(job, i, shared), polynomial4(job, i + 4, shared));
            } else {
                changing_group8::<RIDGED>(job, i, kind, row.as_mut_ptr().add(i));
            }
        }
        let mut i = 8 * groups.len();
        if i + 4 <= n {
            add4::<RIDGED>(row.as_mut_ptr().add(i), cubic4(job, i));
            i += 4;
        }
        for (i, h) in row.iter_mut().enumerate().skip(i) {
            *h = add_value::<RIDGED>(*h, cubic_at(job, i));
        }
    }

    /// The eight pixels from `i` on of a group whose cells change within it (kind
    /// [`super::GROUP_PAIRS`] or other), added to the heights at `out`: each half's coefficients
    /// read as its kind says, its cubic, and [`add8`].
    ///
    /// # Safety
    /// The machine must support AVX2; `job` has at least `i + 8` pixels and one coefficient set;
    /// `out` points to eight heights.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn changing_group8<const RIDGED: bool>(job: &CubicRow<'_>, i: usize, kind: u8, out: *mut f32) {
        let last = job.coefficients.len() - 1;
        let coefficients = job.coefficients.as_ptr().cast::<f64>();
        let (low, high) = if kind == super::GROUP_PAIRS && last >= 1 {
            // Cells k, k, k + 1, k + 1 in each half: the two cells' coefficients side by side
            // (one 128-bit half of each), duplicated within each lane by the unpacks. The same
            // numbers as `cubic4`'s gather.
            let (first, fifth) = (*job.cell.get_unchecked(i) as usize, *job.cell.get_unchecked(i + 4) as usize);
            (pairs4(job, i, coefficients, first.min(last - 1)), pairs4(job, i + 4, coefficients, fifth.min(last - 1)))
        } else {
            (cubic4(job, i), cubic4(job, i + 4))
        };
        add8::<RIDGED>(out, low, high);
    }

    /// [`add4`] for eight heights at `out`, the values of the first four in `low`: the same
    /// operations on each, the conversion's check and the add and saturation done once for eight.
    ///
    /// # Safety
    /// The machine must support AVX2; `out` points to eight heights.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn add8<const RIDGED: bool>(out: *mut f32, low: __m256d, high: __m256d) {
        let (low, high) = if RIDGED {
            (_mm256_andnot_pd(_mm256_set1_pd(-0.0), low), _mm256_andnot_pd(_mm256_set1_pd(-0.0), high))
        } else {
            (low, high)
        };
        let sum = _mm256_add_ps(_mm256_loadu_ps(out), units_to_height8(low, high));
        let clamped = _mm256_min_ps(_mm256_max_ps(sum, _mm256_set1_ps(-1.0)), _mm256_set1_ps(1.0));
        _mm256_storeu_ps(out, _mm256_andnot_ps(_mm256_cmp_ps::<_CMP_UNORD_Q>(sum, sum), clamped));
    }
}

/// The per-pixel cubic on AVX-512F: eight pixels per step in `f64` lanes where they lie in one
/// lattice cell (wavelengths of eight pixels and more), the same IEEE operations in the same order as
/// [`super::cubic_at`] and [`super::add_value`] (as the AVX2 build, whose checked reciprocal it
/// shares: `unsure`'s test, done on eight lanes with masks). Also the per-cell coefficients eight
/// cells at a time, the rows of a [`super::Regular`] layout, and the sub-pixel rows' adds.
#[allow(
    unsafe_op_in_unsafe_fn,
    reason = "the functions here are whole-body intrinsic code under `#[target_feature]`: the unsafe contract is the function's (the level is detected, slices are long enough), stated on each"
)]
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::avx2::{changing_group8, MARGIN, MIDPOINT, TINY_BITS};

    /// [`super::avx2::point_row`] with its field values computed by the same loop compiled for
    /// AVX-512 (the vectoriser's sixteen-lane hashes and eight-lane remainders: the same integer
    /// and IEEE operations, so the same values) and added eight at a time ([`add8`]).
    ///
    /// # Safety
    /// The machine must support AVX2 and AVX-512F, DQ and VL.
    #[target_feature(enable = "avx2,avx512f,avx512dq,avx512vl")]
    pub(super) unsafe fn point_row<const RIDGED: bool>(job: &super::PointRow<'_>, row: &mut [f32]) {
        const PIECE: usize = 64;
        let mut values = [0.0f64; PIECE];
        for (row, columns) in row.chunks_mut(PIECE).zip(job.columns.chunks(PIECE)) {
            let n = row.len().min(columns.len());
            let piece = super::PointRow { columns: &columns[..n], ..*job };
            super::lattice_row_generic(&piece, &mut values[..n]);
            let eights = n / 8;
            for j in 0..eights {
                add8::<RIDGED>(row.as_mut_ptr().add(8 * j), _mm512_loadu_pd(values.as_ptr().add(8 * j)));
            }
            for i in 8 * eights..n {
                row[i] = add_value::<RIDGED>(row[i], values[i]);
            }
        }
    }
    use super::{
        add_value, cubic_at, horizontal_coefficients_from, vertical_generic, CellRow, CubicRow, GROUP_FEW, GROUP_SHARED,
    };
    use crate::lanes64::{Avx512, Lanes64};
    use geogen_render::raster::HEIGHT_UNITS;
    use std::arch::x86_64::*;

    /// # Safety
    /// The machine must support AVX-512F; `row`, `job.cell`, `job.t` and `job.half_t` have at
    /// least `row.len()` elements.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn cubic_row<const RIDGED: bool>(job: &CubicRow<'_>, row: &mut [f32]) {
        let n = row.len();
        assert!(job.cell.len() >= n && job.t.len() >= n && job.half_t.len() >= n);
        if job.coefficients.is_empty() {
            return;
        }
        let eights = n / 8;
        let groups = &job.groups[..eights.min(job.groups.len())];
        for (j, &kind) in groups.iter().enumerate() {
            let i = 8 * j;
            if kind == GROUP_FEW || kind == GROUP_SHARED {
                // One lattice cell for the eight (broadcast), or two or three chosen per lane by
                // the masks (the numbers the AVX2 build's gather reads): the cubic on eight lanes.
                add8::<RIDGED>(row.as_mut_ptr().add(i), polynomial8(job, i, group_coefficients(job, j, i)));
            } else {
                // Cells changing within the eight: the AVX2 build's group (eight-lane gathers and
                // joins measured slower there).
                changing_group8::<RIDGED>(job, i, kind, row.as_mut_ptr().add(i));
            }
        }
        for (i, h) in row.iter_mut().enumerate().skip(8 * groups.len()) {
            *h = add_value::<RIDGED>(*h, cubic_at(job, i));
        }
    }

    /// [`super::cell_row_generic`] with the horizontal coefficients of eight cells at a time, one
    /// cell per lane (the same operations in the same order), transposed into the cells'
    /// `[p1, c1, c2, c3]` with two-source permutes.
    ///
    /// # Safety
    /// The machine must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn cell_row(job: &CellRow<'_>, interpolated: &mut [f64], coefficients: &mut [[f64; 4]]) {
        vertical_generic(job, interpolated);
        let cells = interpolated.get(job.first_cell..).unwrap_or(&[]);
        let n = coefficients.len().min(cells.len().saturating_sub(3));
        let (from, to) = (cells.as_ptr(), coefficients.as_mut_ptr().cast::<f64>());
        // Lanes 0, 1 of `a`'s and `b`'s 128-bit lanes 0 and 1 (then 2 and 3), interleaved.
        let first = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
        let second = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
        let mut k = 0;
        while k + 8 <= n {
            // `k + 11 <= cells.len()` since `n <= cells.len() − 3`.
            let [p1, c1, c2, c3] = coefficients8(from.add(k));
            let even_p = _mm512_unpacklo_pd(p1, c1); // p1₀ c1₀ | p1₂ c1₂ | p1₄ c1₄ | p1₆ c1₆
            let odd_p = _mm512_unpackhi_pd(p1, c1); // p1₁ c1₁ | p1₃ c1₃ | ...
            let even_c = _mm512_unpacklo_pd(c2, c3); // c2₀ c3₀ | c2₂ c3₂ | ...
            let odd_c = _mm512_unpackhi_pd(c2, c3);
            let cells_02 = _mm512_permutex2var_pd(even_p, first, even_c); // cells 0 and 2
            let cells_46 = _mm512_permutex2var_pd(even_p, second, even_c); // cells 4 and 6
            let cells_13 = _mm512_permutex2var_pd(odd_p, first, odd_c);
            let cells_57 = _mm512_permutex2var_pd(odd_p, second, odd_c);
            let out = to.add(4 * k);
            _mm512_storeu_pd(out, _mm512_shuffle_f64x2::<0x44>(cells_02, cells_13));
            _mm512_storeu_pd(out.add(8), _mm512_shuffle_f64x2::<0xEE>(cells_02, cells_13));
            _mm512_storeu_pd(out.add(16), _mm512_shuffle_f64x2::<0x44>(cells_46, cells_57));
            _mm512_storeu_pd(out.add(24), _mm512_shuffle_f64x2::<0xEE>(cells_46, cells_57));
            k += 8;
        }
        horizontal_coefficients_from(job.first_cell, interpolated, coefficients, k);
    }

    /// [`super::cell_coefficients_lanes`] eight cells at a time.
    ///
    /// # Safety
    /// The machine must support AVX-512F; `from .. from + 11` are readable.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn coefficients8(from: *const f64) -> [__m512d; 4] {
        super::cell_coefficients_lanes::<Avx512>(from)
    }

    /// One row of a [`super::Regular`] layout: the vertical interpolation of every lattice column
    /// (`job`), then per eight cells their horizontal coefficients (as [`cell_row`] computes them)
    /// and, per phase `j`, the cubic of the eight cells at the phase's fraction
    /// ([`polynomial8`]'s operations), interleaved into the cells' pixels and added. The pixels of
    /// the cut cells at the ends take [`super::add_value`] of [`super::cubic_at`]'s operations.
    /// No per-pixel table is read and no coefficient is stored.
    ///
    /// # Safety
    /// The machine must support AVX-512F; `regular.pixels_per_cell` is 2 or 4.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn regular_row<const RIDGED: bool>(
        job: &CellRow<'_>,
        regular: &super::Regular,
        interpolated: &mut [f64],
        row: &mut [f32],
    ) {
        vertical_generic(job, interpolated);
        let cells = interpolated.get(job.first_cell..).unwrap_or(&[]);
        debug_assert!(matches!(regular.pixels_per_cell, 2 | 4));
        let (p, skip, n) = (regular.pixels_per_cell, regular.skip, row.len());
        let phase = |j: usize| {
            let t = _mm512_set1_pd(regular.t[j]);
            (t, _mm512_mul_pd(_mm512_set1_pd(0.5), t))
        };
        let phases = [phase(0), phase(1), phase(2), phase(3)];
        // Vector steps cover cells k..k + 8 whose pixels all lie in the row and whose four
        // lattice columns all exist, from the first whole cell on.
        let first_whole = usize::from(skip > 0);
        let mut k = first_whole;
        let out = row.as_mut_ptr();
        while (k + 8) * p - skip <= n && k + 11 <= cells.len() {
            let coefficients = coefficients8(cells.as_ptr().add(k));
            let at = |j: usize| {
                let (t, half_t) = phases[j];
                super::cubic_lanes::<Avx512>(t, half_t, coefficients)
            };
            let pixels = out.add(k * p - skip);
            if p == 2 {
                let (v0, v1) = (at(0), at(1));
                let low = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
                let high = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
                add8::<RIDGED>(pixels, _mm512_permutex2var_pd(v0, low, v1));
                add8::<RIDGED>(pixels.add(8), _mm512_permutex2var_pd(v0, high, v1));
            } else {
                // Lanes: cell c's four phases are pixels 4c..4c + 4 of the 32.
                let (v0, v1, v2, v3) = (at(0), at(1), at(2), at(3));
                let (a, b) = (_mm512_unpacklo_pd(v0, v1), _mm512_unpackhi_pd(v0, v1)); // phases 0, 1 of even | odd cells
                let (c, d) = (_mm512_unpacklo_pd(v2, v3), _mm512_unpackhi_pd(v2, v3)); // phases 2, 3
                let first_half = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
                let second_half = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
                let cells_02 = _mm512_permutex2var_pd(a, first_half, c);
                let cells_46 = _mm512_permutex2var_pd(a, second_half, c);
                let cells_13 = _mm512_permutex2var_pd(b, first_half, d);
                let cells_57 = _mm512_permutex2var_pd(b, second_half, d);
                add8::<RIDGED>(pixels, _mm512_shuffle_f64x2::<0x44>(cells_02, cells_13));
                add8::<RIDGED>(pixels.add(8), _mm512_shuffle_f64x2::<0xEE>(cells_02, cells_13));
                add8::<RIDGED>(pixels.add(16), _mm512_shuffle_f64x2::<0x44>(cells_46, cells_57));
                add8::<RIDGED>(pixels.add(24), _mm512_shuffle_f64x2::<0xEE>(cells_46, cells_57));
            }
            k += 8;
        }
        super::regular_ends::<RIDGED>(cells, regular, &regular.t[..p], (first_whole * p - skip)..(k * p - skip), row);
    }

    /// `p1 + half_t × (c1 + t × (c2 + t × c3))` for the eight pixels from `i` on, given their
    /// coefficients ([`super::cubic_at`]'s operations and order).
    ///
    /// # Safety
    /// The machine must support AVX-512F; `job.t` and `job.half_t` have at least `i + 8` elements.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn polynomial8(job: &CubicRow<'_>, i: usize, coefficients: [__m512d; 4]) -> __m512d {
        let t = Avx512::load(job.t.as_ptr().add(i));
        // `half_t` is `0.5 × t` (see `ColumnTable::prepare`): the same product, not loaded.
        let half_t = Avx512::mul(Avx512::splat(0.5), t);
        super::cubic_lanes::<Avx512>(t, half_t, coefficients)
    }

    /// The coefficients of the eight pixels of group `g` (from pixel `i`) of a `GROUP_SHARED` or
    /// `GROUP_FEW` group, as [`cubic_row`] chooses them.
    #[inline(always)]
    unsafe fn group_coefficients(job: &CubicRow<'_>, g: usize, i: usize) -> [__m512d; 4] {
        let last = job.coefficients.len() - 1;
        let coefficients = job.coefficients.as_ptr().cast::<f64>();
        let first = *job.cell.get_unchecked(i) as usize;
        let at = |k: usize| coefficients.add(4 * k.min(last));
        if *job.groups.get_unchecked(g) == GROUP_FEW {
            let [second, third] = *job.masks.get_unchecked(g);
            let (a, b) = (at(first), at(first + 1));
            let two = |q: usize| _mm512_mask_blend_pd(second, _mm512_set1_pd(*a.add(q)), _mm512_set1_pd(*b.add(q)));
            if third == 0 {
                [two(0), two(1), two(2), two(3)]
            } else {
                let c = at(first + 2);
                let three = |q: usize| _mm512_mask_blend_pd(third, two(q), _mm512_set1_pd(*c.add(q)));
                [three(0), three(1), three(2), three(3)]
            }
        } else {
            let k = at(first);
            [_mm512_set1_pd(*k), _mm512_set1_pd(*k.add(1)), _mm512_set1_pd(*k.add(2)), _mm512_set1_pd(*k.add(3))]
        }
    }

    /// [`add8`] onto eight zero heights: the eight field values `saturate(0 + v / HEIGHT_UNITS)`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn height8(value: __m512d) -> __m256 {
        saturate8(_mm256_add_ps(_mm256_setzero_ps(), units8::<false>(value)))
    }

    /// [`super::displaced_by_layers`] on pixels `first..first + xs.len()` of the row: the two
    /// layers' values (`jobs`), eight pixels at a time where the group's cells are broadcast
    /// (`GROUP_SHARED`, `GROUP_FEW`), else and for the row's last partial group one pixel at a
    /// time, then the positions `px + nx × d`, `py + ny × d`.
    ///
    /// # Safety
    /// The machine must support AVX-512F; `first` is a multiple of 8; both jobs' per-pixel arrays
    /// hold `first + xs.len()` pixels and their coefficients are not empty; `|px0|` and the row's
    /// width are below 2^52; `xs` and `ys` have the same length.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn displaced(
        jobs: &[CubicRow<'_>; 2],
        first: usize,
        px0: i64,
        py: i64,
        d: f64,
        xs: &mut [f64],
        ys: &mut [f64],
    ) {
        let n = xs.len();
        let fy = py as f64;
        let (dd, fy8) = (_mm512_set1_pd(d), _mm512_set1_pd(fy));
        let lanes = _mm512_set_pd(7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0);
        let groups = jobs[0].groups.len().min(jobs[1].groups.len());
        let mut k = 0;
        while k < n {
            let i = first + k;
            let g = i / 8;
            if k + 8 <= n && g < groups {
                let kind = *jobs[0].groups.get_unchecked(g);
                if kind == GROUP_SHARED || kind == GROUP_FEW {
                    let vx = polynomial8(&jobs[0], i, group_coefficients(&jobs[0], g, i));
                    let vy = polynomial8(&jobs[1], i, group_coefficients(&jobs[1], g, i));
                    let (nx, ny) = (_mm512_cvtps_pd(height8(vx)), _mm512_cvtps_pd(height8(vy)));
                    // px as an exact f64 (|px| < 2^52), plus the lane.
                    let px = _mm512_add_pd(_mm512_set1_pd((px0 + i as i64) as f64), lanes);
                    _mm512_storeu_pd(xs.as_mut_ptr().add(k), _mm512_add_pd(px, _mm512_mul_pd(nx, dd)));
                    _mm512_storeu_pd(ys.as_mut_ptr().add(k), _mm512_add_pd(fy8, _mm512_mul_pd(ny, dd)));
                    k += 8;
                    continue;
                }
            }
            let end = if k + 8 <= n { k + 8 } else { n };
            for k in k..end {
                let i = first + k;
                let (nx, ny) =
                    (add_value::<false>(0.0, cubic_at(&jobs[0], i)), add_value::<false>(0.0, cubic_at(&jobs[1], i)));
                xs[k] = (px0 + i as i64) as f64 + f64::from(nx) * d;
                ys[k] = fy + f64::from(ny) * d;
            }
            k = end;
        }
    }

    /// `h = add_value(h, v)` for the eight heights at `out`: |v| when ridged, `v / HEIGHT_UNITS`
    /// as an f32 (the product by the reciprocal where it rounds to the quotient's f32, checked per
    /// lane as the AVX2 build's `unsure` does; else the division), added and saturated (NaN → 0,
    /// else clamped to [−1, 1]).
    ///
    /// # Safety
    /// The machine must support AVX-512F; `out` points to eight heights.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn add8<const RIDGED: bool>(out: *mut f32, value: __m512d) {
        let sum = _mm256_add_ps(_mm256_loadu_ps(out), units8::<RIDGED>(value));
        _mm256_storeu_ps(out, saturate8(sum));
    }

    /// |v| when ridged, `v / HEIGHT_UNITS` as an f32: [`add8`]'s value before the add.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn units8<const RIDGED: bool>(value: __m512d) -> __m256 {
        let value = if RIDGED { _mm512_abs_pd(value) } else { value };
        let q = _mm512_mul_pd(value, _mm512_set1_pd(1.0 / HEIGHT_UNITS));
        let bits = _mm512_castpd_si512(q);
        // (low 29 bits − (2^28 − MARGIN)) mod 2^29 < 2 × MARGIN: within MARGIN f64 ulps of an
        // f32 rounding midpoint; or |q| below 2^−100.
        let below = _mm512_and_si512(
            _mm512_add_epi64(bits, _mm512_set1_epi64(MARGIN - MIDPOINT)),
            _mm512_set1_epi64((1 << 29) - 1),
        );
        let near = _mm512_cmplt_epi64_mask(below, _mm512_set1_epi64(2 * MARGIN));
        let magnitude = _mm512_and_si512(bits, _mm512_set1_epi64(i64::MAX));
        let tiny = _mm512_cmplt_epi64_mask(magnitude, _mm512_set1_epi64(TINY_BITS));
        if near | tiny == 0 {
            _mm512_cvtpd_ps(q)
        } else {
            _mm512_cvtpd_ps(_mm512_div_pd(value, _mm512_set1_pd(HEIGHT_UNITS)))
        }
    }

    /// NaN → 0, else clamped to [−1, 1] ([`super::saturate`] on eight heights).
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn saturate8(sum: __m256) -> __m256 {
        let clamped = _mm256_min_ps(_mm256_max_ps(sum, _mm256_set1_ps(-1.0)), _mm256_set1_ps(1.0));
        _mm256_andnot_ps(_mm256_cmp_ps::<_CMP_UNORD_Q>(sum, sum), clamped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geogen_render::rows::{for_each_row, serially};
    use geogen_render::Rect;
    use proptest::prelude::*;

    /// The direct evaluation the optimised kernel must equal bit for bit: per pixel, the vertical
    /// interpolation of four lattice rows at every column, then the horizontal one, as written
    /// before the caches.
    /// Adds one noise layer to `map` (saturating to [−1, 1]); `ridged` adds the absolute value.
    fn add_noise_layer_reference(map: &mut HeightMap, scale: f64, field: LayerField, ridged: bool) {
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
            let logical_x: Vec<i64> =
                (0..rect.width as i64).map(|i| floor_i64(to_logical(rect.x + i, scale))).collect();
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

    #[test]
    fn float_remainder_is_exact() {
        let mut samples: Vec<u32> = vec![0, 1, 2, u32::MAX, u32::MAX - 1, 1 << 31, (1 << 31) - 1];
        let mut x = 0x1234_5678u32;
        for _ in 0..24 {
            x = geogen_random::hash1(x);
            samples.push(x);
        }
        // Every divisor a layer can have (2A + 1), and the even ones around them; around the
        // largest multiples of each, where the product's rounding could cross an integer.
        for d in 1..=65535u32 {
            let fast = FloatMod::new(d);
            let top = u32::MAX - u32::MAX % d;
            let near = [top, top.wrapping_sub(1), top.wrapping_add(1), top.wrapping_sub(d), top - d.min(top) + 1];
            for &a in samples.iter().chain(&near) {
                assert_eq!(fast.rem(a), f64::from(a % d), "{a} % {d}");
            }
        }
    }

    /// The multiply that replaces the division by `HEIGHT_UNITS` in the AVX2 cubic gives the
    /// division's f32 bits: on values whose quotient falls on, next to and around f32 rounding
    /// midpoints (where the product alone would round the other way), powers of two, f32
    /// subnormals, zeros and ordinary values.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn units_to_height_equals_the_division() {
        if !geogen_simd::testable(geogen_simd::Isa::Avx2) {
            return;
        }
        let next_up = |v: f64| f64::from_bits(if v >= 0.0 { v.to_bits() + 1 } else { v.to_bits() - 1 });
        let mut bases: Vec<f64> = vec![0.0, -0.0, 1.0, -1.0, 32767.0, 0.5, 1e-30, 1e-38, 1e-42, 1e-45, 5e-324];
        let mut x = 0x9e37_79b9u32;
        for _ in 0..4000 {
            x = geogen_random::hash1(x);
            let y = geogen_random::hash1(x ^ 0x55);
            // An f32 of varied magnitude (including subnormal ones), its midpoint with the next.
            let exponent = (y % 160) as i32 - 150;
            let m = ((x >> 9) as f32 / (1u32 << 23) as f32 + 1.0) * 2f32.powi(exponent);
            let m = if y & 1 == 1 { -m } else { m };
            let up = f32::from_bits(m.to_bits() + 1);
            let midpoint = (f64::from(m) + f64::from(up)) / 2.0;
            bases.push(midpoint * HEIGHT_UNITS);
            bases.push(f64::from(m) * HEIGHT_UNITS);
            bases.push(f64::from(x) / 65536.0 - 32768.0);
        }
        let mut values = Vec::new();
        for &b in &bases {
            let mut v = b;
            for _ in 0..24 {
                v = f64::from_bits(v.to_bits().wrapping_sub(1));
            }
            for _ in 0..48 {
                values.push(v);
                v = next_up(v);
            }
        }
        // The values do reach the cases where the product alone would give other bits.
        let product_differs = values
            .iter()
            .filter(|&&v| ((v * (1.0 / HEIGHT_UNITS)) as f32).to_bits() != ((v / HEIGHT_UNITS) as f32).to_bits());
        assert!(product_differs.count() > 100);
        let mut checked = 0;
        for chunk in values.chunks_exact(4) {
            let mut out = [0.0f32; 4];
            // SAFETY: AVX2 was detected above.
            unsafe {
                use std::arch::x86_64::*;
                let v = _mm256_loadu_pd(chunk.as_ptr());
                _mm_storeu_ps(out.as_mut_ptr(), avx2::units_to_height(v));
            }
            for (&v, &o) in chunk.iter().zip(&out) {
                let expected = (v / HEIGHT_UNITS) as f32;
                assert_eq!(o.to_bits(), expected.to_bits(), "{v:e}: {o:e} against {expected:e}");
                checked += 1;
            }
        }
        assert!(checked > 500_000);
        // The eight-wide conversion (one check for two groups of four), on the same values.
        for chunk in values.chunks_exact(8) {
            let mut out = [0.0f32; 8];
            // SAFETY: AVX2 was detected above.
            unsafe {
                use std::arch::x86_64::*;
                let (low, high) = (_mm256_loadu_pd(chunk.as_ptr()), _mm256_loadu_pd(chunk.as_ptr().add(4)));
                _mm256_storeu_ps(out.as_mut_ptr(), avx2::units_to_height8(low, high));
            }
            for (&v, &o) in chunk.iter().zip(&out) {
                let expected = (v / HEIGHT_UNITS) as f32;
                assert_eq!(o.to_bits(), expected.to_bits(), "{v:e}: {o:e} against {expected:e} (eight)");
            }
        }
    }

    /// Values that make the saturation matter: heights at and beyond ±1, −0.0 and NaN, under a
    /// loud layer, equal the direct evaluation on every instruction set.
    #[test]
    fn saturation_edges_are_bit_identical() {
        let rect = Rect::new(-37, 11, 67, 9);
        let specials = [1.0f32, -1.0, 0.0, -0.0, f32::NAN, 0.999_999_94, -0.999_999_94, 2.0, -3.0];
        let data: Vec<f32> = (0..rect.area() as usize).map(|i| specials[i % specials.len()]).collect();
        for (wavelength, scale) in [(1u32, 1.0), (2, 1.0), (4, 1.0), (16, 0.7), (3, 2.0)] {
            for ridged in [false, true] {
                let field = LayerField { wavelength, amplitude: 32767, current: 99 };
                let mut expected = HeightMap::from_data(rect, data.clone()).unwrap();
                add_noise_layer_reference(&mut expected, scale, field, ridged);
                for isa in builds() {
                    let mut on = HeightMap::from_data(rect, data.clone()).unwrap();
                    add_layer_built(isa.0, isa.1, &mut on, scale, field, ridged);
                    let bits = |m: &HeightMap| m.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&on), bits(&expected), "{isa:?} w={wavelength} scale={scale} ridged={ridged}");
                }
            }
        }
    }

    /// A fused pass runs every layer on one band before the next: more layers than cache entries,
    /// band by band, equal the layers applied one after the other with the direct evaluation
    /// (entries are found again, evicted and rebuilt).
    #[test]
    fn many_layers_band_by_band_equal_the_direct_evaluation() {
        let rect = Rect::new(-45, 17, 83, 23);
        let layers: Vec<LayerField> = (0..CACHE_ENTRIES as u32 + 5)
            .map(|i| LayerField {
                wavelength: [1, 2, 3, 4, 7, 16, 64][i as usize % 7] + i / 7,
                amplitude: 4000,
                current: i,
            })
            .collect();
        for scale in [1.0, 0.6, 2.5] {
            let mut expected = noisy_map(rect, 5);
            for (i, &field) in layers.iter().enumerate() {
                add_noise_layer_reference(&mut expected, scale, field, i % 3 == 0);
            }
            let input = noisy_map(rect, 5);
            let mut banded = Vec::new();
            for (b, rows) in input.data().chunks(rect.width as usize * 4).enumerate() {
                let band_rect = Rect::new(rect.x, rect.y + (b * 4) as i64, rect.width, rows.len() as u64 / rect.width);
                let mut part = HeightMap::from_data(band_rect, rows.to_vec()).unwrap();
                serially(|| {
                    for (i, &field) in layers.iter().enumerate() {
                        add_noise_layer(&mut part, scale, field, i % 3 == 0);
                    }
                });
                banded.extend_from_slice(part.data());
            }
            assert_eq!(&banded[..], expected.data(), "scale {scale}");
        }
    }

    /// Rows wider than a segment are computed a segment at a time: the same bits as the direct
    /// evaluation across the segments' seams, at every kind of wavelength (sub-pixel, regular,
    /// irregular cells) and several scales.
    #[test]
    fn rows_wider_than_a_segment_equal_the_direct_evaluation() {
        let rect = Rect::new(-37, 5, 2 * SEGMENT_COLUMNS as u64 + 77, 3);
        for (wavelength, scale) in [(1u32, 1.0), (4, 1.0), (16, 1.0), (7, 1.0), (64, 0.6), (3, 2.5)] {
            let field = LayerField { wavelength, amplitude: 4000, current: wavelength };
            let mut expected = noisy_map(rect, 3);
            add_noise_layer_reference(&mut expected, scale, field, false);
            let mut actual = noisy_map(rect, 3);
            add_noise_layer(&mut actual, scale, field, false);
            assert!(actual.data() == expected.data(), "wavelength {wavelength}, scale {scale}");
        }
    }

    /// The vector cubics read a group of eight pixels' coefficients four ways (one shared cell,
    /// pairs of cells at a wavelength of two pixels, two or three cells, any other arrangement):
    /// rows where each kind occurs, at every alignment of the cells, equal the direct evaluation
    /// on every build (the AVX-512 one reads the groups of two and of three cells with masks from
    /// four pixels per cell on: both occur here).
    #[test]
    fn every_kind_of_pixel_group_equals_the_direct_evaluation() {
        let mut seen = [false; 4];
        let (mut wide_two, mut wide_three) = (false, false);
        let cases = [(2u32, 1.0), (2, 1.5), (16, 1.0), (4, 1.0), (3, 1.0), (5, 0.7), (5, 1.0), (6, 0.7), (7, 1.3)];
        for (wavelength, scale) in cases {
            for x in [-41i64, -40, -39, -38, 0, 1, 2, 3, 7] {
                let rect = Rect::new(x, -3, 203, 5);
                let mut table = ColumnTable::default();
                table.prepare(rect.x, rect.width as usize, scale, i64::from(wavelength));
                let wide = (f64::from(wavelength) * scale).floor() >= 4.0;
                for (&kind, masks) in table.groups.iter().zip(&table.masks) {
                    seen[kind as usize] = true;
                    if kind == GROUP_FEW && wide {
                        wide_two |= masks[1] == 0;
                        wide_three |= masks[1] != 0;
                    }
                }
                let field = LayerField { wavelength, amplitude: 20000, current: 77 };
                for ridged in [false, true] {
                    let mut expected = noisy_map(rect, 3);
                    add_noise_layer_reference(&mut expected, scale, field, ridged);
                    for isa in builds() {
                        let mut on = noisy_map(rect, 3);
                        add_layer_built(isa.0, isa.1, &mut on, scale, field, ridged);
                        assert_eq!(on.data(), expected.data(), "{isa:?} w={wavelength} scale={scale} x={x}");
                    }
                }
            }
        }
        assert_eq!(seen, [true; 4], "every kind of group occurs");
        assert!(wide_two && wide_three, "groups of two and of three cells occur where the AVX-512 cubic runs");
    }

    /// Rows of 2, 4 or a multiple of 8 pixels per cell in one pattern (scale 1 with such a
    /// wavelength, and the scales that give such cells from other wavelengths) take the regular
    /// rows: every alignment of the cells (first cells cut anywhere) and widths that cut a vector
    /// step or the last cell anywhere equal the direct evaluation on every build; other layouts are
    /// not taken for regular.
    #[test]
    fn regular_rows_equal_the_direct_evaluation() {
        let mut table = ColumnTable::default();
        table.prepare(-7, 97, 1.0, 4);
        assert_eq!(
            table.regular,
            Some(Regular { pixels_per_cell: 4, skip: 1, t: [0.0, 0.25, 0.5, 0.75], phase_start: 3 })
        );
        table.prepare(4, 40, 1.0, 2);
        assert_eq!(
            table.regular,
            Some(Regular { pixels_per_cell: 2, skip: 0, t: [0.0, 0.5, 0.0, 0.0], phase_start: 2 })
        );
        table.prepare(-3, 40, 1.0, 8);
        assert_eq!(
            table.regular,
            Some(Regular { pixels_per_cell: 8, skip: 5, t: [0.0, 0.125, 0.25, 0.375], phase_start: 3 })
        );
        for (x, wavelength, scale) in [(0, 3, 1.0), (0, 12, 1.0), (0, 2, 1.5), (0, 5, 0.7), (-3, 4, 1.3), (0, 8, 0.9)] {
            table.prepare(x, 64, scale, wavelength);
            assert_eq!(table.regular, None, "w={wavelength} scale={scale}");
        }
        // Pixels per cell: 2, 4, 8, 16 and more.
        let mut seen = [false; 4];
        let cases =
            [(2u32, 1.0), (4, 1.0), (1, 2.0), (4, 0.5), (1, 4.0), (8, 0.5), (8, 1.0), (16, 1.0), (4, 4.0), (32, 1.0)];
        for (wavelength, scale) in cases {
            for x in [-9i64, -8, -7, -6, -5, 0, 1, 2, 3, 5, 13] {
                for width in [1u64, 2, 3, 5, 7, 15, 16, 17, 31, 33, 63, 64, 65, 97, 130] {
                    let rect = Rect::new(x, -2, width, 3);
                    table.prepare(rect.x, width as usize, scale, i64::from(wavelength));
                    if let Some(regular) = table.regular {
                        seen[(regular.pixels_per_cell / 4).min(3)] = true;
                    }
                    let field = LayerField { wavelength, amplitude: 32767, current: 5 };
                    for ridged in [false, true] {
                        let mut expected = noisy_map(rect, 9);
                        add_noise_layer_reference(&mut expected, scale, field, ridged);
                        for isa in builds() {
                            let mut on = noisy_map(rect, 9);
                            add_layer_built(isa.0, isa.1, &mut on, scale, field, ridged);
                            let bits = |m: &HeightMap| m.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                            assert_eq!(
                                bits(&on),
                                bits(&expected),
                                "{isa:?} w={wavelength} scale={scale} x={x} {width}"
                            );
                        }
                    }
                }
            }
        }
        assert_eq!(seen, [true; 4], "rows of 2, 4, 8 and more pixels per cell are regular");
    }

    /// Every build of a layer this machine runs: scalar, AVX2, and AVX2 with the AVX-512 cubic
    /// (`(isa, wide)`).
    fn builds() -> Vec<(Isa, bool)> {
        let mut builds: Vec<(Isa, bool)> = [Isa::Scalar]
            .into_iter()
            .chain(geogen_simd::testable(geogen_simd::Isa::Avx2).then_some(Isa::Avx2))
            .map(|isa| (isa, false))
            .collect();
        if Isa::Avx2.is_available() && wide_cubic_available() {
            builds.push((Isa::Avx2, true));
        }
        builds
    }

    fn noisy_map(rect: Rect, seed: u32) -> HeightMap {
        let data =
            (0..rect.area()).map(|i| (geogen_random::hash2(seed, i as u32) % 2001) as f32 / 1000.0 - 1.0).collect();
        HeightMap::from_data(rect, data).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

        /// The cached kernel equals the direct evaluation bit for bit: any rectangle, scale,
        /// wavelength and amplitude, ridged or not, whole or band by band as the fused renderer
        /// calls it (with the caches warm from another layer in between).
        #[test]
        fn cached_kernel_equals_the_direct_evaluation(
            x in -300i64..300, y in -300i64..300, width in 1u64..90, height in 1u64..40,
            scale_index in 0usize..7, wavelength in prop::sample::select(vec![1u32, 2, 3, 4, 5, 8, 16, 33, 256]),
            amplitude in prop::sample::select(vec![0i32, 1, 63, 1000, 32767]),
            current in any::<u32>(), ridged in any::<bool>(), band in 1usize..9,
        ) {
            let scale = [0.25, 0.5, 0.7, 1.0, 1.3, 2.0, 3.7][scale_index];
            let field = LayerField { wavelength, amplitude, current };
            let rect = Rect::new(x, y, width, height);
            let mut expected = noisy_map(rect, current);
            add_noise_layer_reference(&mut expected, scale, field, ridged);
            let mut whole = noisy_map(rect, current);
            add_noise_layer(&mut whole, scale, field, ridged);
            prop_assert_eq!(whole.data(), expected.data());
            // Every instruction set gives the same bits (the scalar fallback forced here; the
            // default above is AVX2 where the machine has it).
            for isa in builds() {
                let mut on = noisy_map(rect, current);
                add_layer_built(isa.0, isa.1, &mut on, scale, field, ridged);
                prop_assert_eq!(on.data(), expected.data(), "{:?}", isa);
            }
            // Band by band, serially, as a fused pass runs it; another layer warms the caches.
            let other = LayerField { wavelength: wavelength + 1, amplitude, current: current ^ 1 };
            let input = noisy_map(rect, current);
            let mut banded = Vec::new();
            for (i, rows) in input.data().chunks(width as usize * band).enumerate() {
                let band_rect = Rect::new(x, y + (i * band) as i64, width, rows.len() as u64 / width);
                let mut part = HeightMap::from_data(band_rect, rows.to_vec()).unwrap();
                let mut scratch = part.clone();
                serially(|| {
                    add_noise_layer(&mut scratch, scale, other, !ridged);
                    add_noise_layer(&mut part, scale, field, ridged);
                });
                banded.extend_from_slice(part.data());
            }
            prop_assert_eq!(&banded[..], expected.data());
        }
    }

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
