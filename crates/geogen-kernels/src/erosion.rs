//! Erosion kernels: thermal (talus relaxation) and hydraulic (rain, water routed to lower
//! neighbours, sediment picked up and dropped), both as *synchronous* stencil iterations.
//!
//! Why this makes tiles exact. Every iteration computes each cell's new state from the previous
//! state of the cell and of its 8 neighbours only (Jacobi style: a pass reads one buffer and writes
//! another, or writes in place only what no other cell of the same pass reads). So after `n`
//! iterations of a stencil of radius `r`, a cell depends on the input within `n × r` pixels and on
//! nothing else: not on where the buffer starts, nor on how rows are split among threads, nor on the
//! order in which cells are visited. The operation's bounds rule asks for exactly that halo, and the
//! kernel computes iteration `k` only on the part that later iterations still read (the rendering
//! bounds grown by the remaining halo), so the work shrinks as the iterations go.
//!
//! Neighbours outside the buffer are walls (nothing flows through them). With the bounds rule they
//! are never reached by a cell whose value matters; on a whole small map (the numeric tests) they
//! make the buffer a closed box, so material is conserved.
//!
//! Determinism: only IEEE `+ − × ÷` and comparisons, in a fixed order per
//! cell (the neighbours in the order of [`OFFSETS`]); no FMA, no platform math, no reductions across
//! cells. The rain falls in storms: a value noise whose lattice values come from the original's
//! integer hash of the absolute lattice point and the iteration ([`Storm`]), so it too depends on
//! the absolute pixel only.

use crate::lanes::Lanes;
#[cfg(target_arch = "x86_64")]
use crate::lanes::{Avx2, Avx512};
pub(crate) use geogen_random::hash2;
use geogen_render::{HeightMap, Rect, RenderError};
use rayon::prelude::*;
use std::mem::MaybeUninit;
use std::sync::Mutex;

/// The body of a dispatcher: `$avx512(args)` where the process runs AVX-512 kernels, else
/// `$avx2(args)` where it runs AVX2 ones, else `$portable(args)` ([`geogen_simd::active`]). Every
/// build does the same IEEE operations in the same order (no FMA), so which one runs never changes
/// a bit; the ISA tests force each.
macro_rules! by_isa {
    ($avx512:ident, $avx2:ident, $portable:expr, ($($arg:expr),* $(,)?)) => {{
        #[cfg(target_arch = "x86_64")]
        if geogen_simd::enabled(geogen_simd::Isa::Avx512) {
            // SAFETY: the processor supports AVX-512F (an enabled level is a supported one).
            return unsafe { $avx512($($arg),*) };
        }
        #[cfg(target_arch = "x86_64")]
        if geogen_simd::enabled(geogen_simd::Isa::Avx2) {
            // SAFETY: the processor supports AVX2 (an enabled level is a supported one).
            return unsafe { $avx2($($arg),*) };
        }
        $portable($($arg),*)
    }};
}

/// 1/√2, the weight of a diagonal neighbour (its distance is √2).
const DIAGONAL: f32 = std::f32::consts::FRAC_1_SQRT_2;
/// Rows per rayon task at least, so small buffers do not drown in scheduling.
pub(crate) const MIN_ROWS_PER_TASK: usize = 4;

/// The 8 neighbours in their fixed order: (dx, dy, whether diagonal).
const OFFSETS: [(isize, isize, bool); 8] = [
    (-1, -1, true),
    (0, -1, false),
    (1, -1, true),
    (-1, 0, false),
    (1, 0, false),
    (-1, 1, true),
    (0, 1, false),
    (1, 1, true),
];

/// A rectangle of buffer indices: columns `x0..x1`, rows `y0..y1`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) x0: usize,
    pub(crate) x1: usize,
    pub(crate) y0: usize,
    pub(crate) y1: usize,
}

/// The part of `buffer` within `margin` pixels of `own` (the cells an iteration must still get
/// right), as buffer indices; `None` if empty.
pub(crate) fn span(buffer: Rect, own: Rect, margin: u64) -> Option<Span> {
    let r = own.expand(margin).intersect(&buffer);
    if r.is_empty() {
        return None;
    }
    let x0 = (r.x - buffer.x) as usize;
    let y0 = (r.y - buffer.y) as usize;
    Some(Span { x0, x1: x0 + r.width as usize, y0, y1: y0 + r.height as usize })
}

/// Calls `f(j, weight)` for each neighbour of cell (x, y) inside the `w × h` buffer, in the order of
/// [`OFFSETS`], with `j` its index and `weight` 1 (edge neighbour) or 1/√2 (corner).
#[inline(always)]
pub(crate) fn neighbours(x: usize, y: usize, w: usize, h: usize, mut f: impl FnMut(usize, f32)) {
    let i = y * w + x;
    if x > 0 && y > 0 && x + 1 < w && y + 1 < h {
        // Interior: no bounds checks (the common case).
        f(i - w - 1, DIAGONAL);
        f(i - w, 1.0);
        f(i - w + 1, DIAGONAL);
        f(i - 1, 1.0);
        f(i + 1, 1.0);
        f(i + w - 1, DIAGONAL);
        f(i + w, 1.0);
        f(i + w + 1, DIAGONAL);
        return;
    }
    for &(dx, dy, diagonal) in &OFFSETS {
        let (nx, ny) = (x as isize + dx, y as isize + dy);
        if nx < 0 || ny < 0 || nx as usize >= w || ny as usize >= h {
            continue;
        }
        f(ny as usize * w + nx as usize, if diagonal { DIAGONAL } else { 1.0 });
    }
}

/// A zeroed scratch buffer, or the allocation error the memory plan should have prevented.
pub(crate) fn scratch(len: usize) -> Result<Vec<f32>, RenderError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| RenderError::Allocation { bytes: (len as u64).saturating_mul(4) })?;
    v.resize(len, 0.0);
    Ok(v)
}

/// An empty buffer with room for `len` values (for one written whole before it is read), or the
/// allocation error the memory plan should have prevented.
fn unfilled(len: usize) -> Result<Vec<f32>, RenderError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| RenderError::Allocation { bytes: (len as u64).saturating_mul(4) })?;
    Ok(v)
}

/// Thermal erosion parameters, in physical pixels.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Thermal {
    /// Iterations to run.
    pub iterations: u32,
    /// Largest stable height difference between edge neighbours (the talus slope × pixel size);
    /// corners get √2 times that.
    pub talus: f32,
    /// Fraction of the excess moved per neighbour pair and iteration, in [0, 1/8].
    pub rate: f32,
}

/// Halo (pixels per side) one thermal iteration needs.
pub const THERMAL_RADIUS: u64 = 1;
/// Halo (pixels per side) one hydraulic iteration needs: pass A reads neighbours, pass B reads
/// pass A's results of the neighbours.
pub const HYDRAULIC_RADIUS: u64 = 2;

/// Bytes of scratch thermal erosion of a `pixels`-pixel map needs at most: one map's worth.
/// The kernel works in place and needs less: each band's saved halo rows (`2 × depth` rows per
/// band of 64 rows or more, so at most half the map); each thread's level rows, at most
/// [`THERMAL_LEVEL_BYTES`], are per-thread scratch the memory plan's slack covers.
pub fn thermal_scratch_bytes(pixels: u64) -> u64 {
    pixels.saturating_mul(4)
}

/// Bytes of scratch hydraulic erosion needs: terrain, water and sediment twice (the state read and
/// the state written by a sweep) and the flow total, `f32` each (the rows each iteration of a
/// sweep keeps, pass A's fields and the state the next iteration reads, are per-thread scratch
/// of at most [`HYDRAULIC_SWEEP_BYTES`] (1.5 MB), which the memory plan's slack covers).
pub fn hydraulic_scratch_bytes(pixels: u64) -> u64 {
    pixels.saturating_mul(7 * 4)
}

/// The exchange between a cell and a neighbour `d` higher (negative: lower) at talus `t`: the
/// excess over the talus times `rate`, signed. `exchange(-d) == -exchange(d)` exactly, so what one
/// cell gives, its neighbour receives.
#[inline(always)]
pub(crate) fn exchange(d: f32, t: f32, rate: f32) -> f32 {
    // Branch-free: at most one of the two excesses is positive, and `x − 0 = x` exactly.
    rate * ((d - t).max(0.0) - (-d - t).max(0.0))
}

/// Bytes of one thread's level rows for a thermal sweep at most (the cores of the machine the
/// figures come from have 2 MB of L2 each): the rows every level of a sweep keeps stay in cache.
const THERMAL_LEVEL_BYTES: usize = 1536 << 10;
/// The most iterations one sweep runs (even: see [`thermal`]).
const THERMAL_MAX_DEPTH: usize = 8;
/// The most rows a level keeps (more only adds cache footprint).
const THERMAL_MAX_KEPT: usize = 40;
/// The fewest rows a level keeps for a sweep as deep as [`THERMAL_MAX_DEPTH`] (each call of
/// [`thermal_block`] recomputes its first row's upper pairs: short blocks pay that often).
const THERMAL_MIN_KEPT: usize = 10;

/// How thermal erosion cuts its work: iterations per sweep (`depth`, even), rows each level of a
/// sweep keeps (`kept`, at least 3: a row and its two neighbours) and rows per band (`band`, the
/// unit of work of a thread).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct ThermalPlan {
    depth: usize,
    kept: usize,
    band: usize,
}

/// The plan for a `w × h` map on `threads` threads within `bytes` of level rows per thread
/// ([`THERMAL_LEVEL_BYTES`]): as deep as keeps at least [`THERMAL_MIN_KEPT`] rows per level
/// (levels 0 to `depth − 1` keep rows, the last writes the map), and bands of `h / (2 × threads)`
/// rows, at least 64 (each band recomputes `depth − j` rows on each side at level `j` and saves
/// `2 × depth` halo rows per sweep: tall bands keep that small).
fn thermal_plan(w: usize, h: usize, threads: usize, bytes: usize) -> ThermalPlan {
    let row = 4 * w.max(1);
    let mut depth = THERMAL_MAX_DEPTH;
    while depth > 2 && bytes / (row * depth) < THERMAL_MIN_KEPT {
        depth -= 2;
    }
    let kept = (bytes / (row * depth)).clamp(3, THERMAL_MAX_KEPT);
    let band = h.div_ceil(2 * threads.max(1)).max(64).min(h.max(1));
    ThermalPlan { depth, kept, band }
}

/// What every band of one thermal sweep shares: the iterations `a..b` to run.
struct ThermalSweep<'a> {
    w: usize,
    h: usize,
    a: usize,
    b: usize,
    n: usize,
    depth: usize,
    spans: &'a [Option<Span>],
    t_edge: f32,
    t_corner: f32,
    rate: f32,
}

/// Thermal erosion of `map` in place: every iteration, each pair of neighbours whose height
/// difference exceeds the talus (× √2 for corners) exchanges `rate` × the excess, all pairs at once.
/// Exact on `own` when `map` covers `own` grown by `iterations × THERMAL_RADIUS`.
///
/// Schedule (temporal blocking, pipelined, in place): the map goes through memory once per
/// *sweep* of up to [`THERMAL_MAX_DEPTH`] iterations, not once per iteration. A sweep updates
/// the map in place, in bands of rows (one per task); each band first gets a copy of the
/// `depth` rows above and below it (taken before any band writes), so no band reads what
/// another writes. Within a band the sweep's iterations run as *levels* one behind the other,
/// top to bottom: level 0 copies the band's rows (and its saved halo rows) as they were at the
/// start of the sweep, level `j` (the sweep's `j`-th iteration) reads the last rows level
/// `j − 1` computed (a row and its two neighbours are all it needs) and keeps its own last rows
/// (at most `kept`, in cache) for level `j + 1`; the last level writes the map's rows, which
/// level 0 has already read. Each cell of the map is written at most once per sweep, by the
/// level that holds its final value (see [`thermal_band`]); no second map, no copy back.
/// Level `j` computes the band's rows and `depth − j` rows more on each side (what the later
/// levels read), within its iteration's span. The split and the threads do not matter.
///
/// Same bits as the plain kernel ([`super::erosion_reference::thermal`]), the whole buffer
/// included: each cell adds the same terms in the same order (each neighbour pair's exchange is
/// computed once for both cells: see [`thermal_block`] for why the bits stay), and each cell of
/// the map ends with the value the plain kernel's ping-pong leaves in it (see
/// [`thermal_band`]). The interior rows go through [`thermal_block`] (row slices of exact
/// length, no branch: LLVM vectorises it, with AVX2 where the processor has it); only the
/// buffer's border pixels take the bounds-checked neighbour walk.
pub fn thermal(map: &mut HeightMap, own: Rect, p: Thermal) -> Result<(), RenderError> {
    let plan = thermal_plan(map.width(), map.height(), rayon::current_num_threads(), THERMAL_LEVEL_BYTES);
    thermal_with(map, own, p, plan)
}

/// [`thermal`] with the given cut (the tests use many: shallow and deep sweeps, few kept rows,
/// bands of one row and more).
fn thermal_with(map: &mut HeightMap, own: Rect, p: Thermal, plan: ThermalPlan) -> Result<(), RenderError> {
    let rect = map.rect();
    if rect.is_empty() || p.iterations == 0 {
        return Ok(());
    }
    let (w, h) = (map.width(), map.height());
    let n = p.iterations as usize;
    let ThermalPlan { depth, kept, band } = plan;
    debug_assert!(depth >= 2 && depth.is_multiple_of(2) && kept >= 3 && band >= 1);
    let kept = kept.max(3);
    let band = band.clamp(1, h);
    let bands = h.div_ceil(band);
    // Each band's halo rows as they were at the start of the sweep: `depth` above, `depth` below.
    let halo_len = 2 * depth * w;
    let mut halos = if bands > 1 { scratch(bands * halo_len)? } else { Vec::new() };
    let slots = rayon::current_num_threads().clamp(1, bands);
    let level_len = depth * kept * w;
    let buffers = (0..slots).map(|_| Ok(Mutex::new(scratch(level_len)?))).collect::<Result<Vec<_>, RenderError>>()?;
    let spans: Vec<Option<Span>> = (0..n).map(|k| span(rect, own, (n - 1 - k) as u64 * THERMAL_RADIUS)).collect();
    let mut a = 0;
    while a < n && spans[a].is_some() {
        let b = (a + depth).min(n);
        let data = map.data_mut();
        for (i, halo) in halos.chunks_mut(halo_len).enumerate() {
            let (r0, r1) = (i * band, ((i + 1) * band).min(h));
            let (above, below) = halo.split_at_mut(depth * w);
            let up = r0.min(depth);
            above[(depth - up) * w..].copy_from_slice(&data[(r0 - up) * w..r0 * w]);
            let down = (h - r1).min(depth);
            below[..down * w].copy_from_slice(&data[r1 * w..(r1 + down) * w]);
        }
        let sweep = ThermalSweep {
            w,
            h,
            a,
            b,
            n,
            depth,
            spans: &spans,
            t_edge: p.talus,
            t_corner: p.talus * std::f32::consts::SQRT_2,
            rate: p.rate,
        };
        let halos = &halos;
        data.par_chunks_mut(band * w).enumerate().for_each(|(i, out)| {
            let slot = rayon::current_thread_index().unwrap_or(0) % buffers.len();
            let mut levels = buffers[slot].lock().unwrap_or_else(|e| e.into_inner());
            let halo = halos.get(i * halo_len..(i + 1) * halo_len).unwrap_or(&[]);
            thermal_band(&sweep, i * band, out, halo, &mut levels, kept);
        });
        a = b;
    }
    Ok(())
}

/// One band of a thermal sweep, in place: rows `r0..` (as many as `map` holds) of the map,
/// with `halo` the `depth` rows above them and the `depth` rows below as they were at the start
/// of the sweep (empty when the band is the whole map), the levels' rows in `store` (`kept` rows
/// of the map's width per level but the last).
///
/// Which value each cell ends with: the plain kernel's ping-pong writes the scratch on even
/// iterations and the map on odd ones, and a cell outside an iteration's span keeps what its
/// buffer held; so after the sweep's iterations `a..b` (`a` even) the map holds, for each cell,
/// the value of the last odd iteration whose span holds it (what it held if none), and the
/// plain kernel copies the last iteration's own span back when the count is odd (that span is
/// `own`). The spans shrink by one pixel per iteration, so a writing level `k` (odd, or the last
/// of an odd count) gives the cells of its span that the next writing level's span does not
/// hold, the cells outside the first writer's span keep their value, and every cell is written
/// at most once. (At a span that is `None` the plain kernel stops, its map as it is: the sweep
/// ends there, and an even last iteration is not computed at all.)
fn thermal_band(sw: &ThermalSweep, r0: usize, map: &mut [f32], halo: &[f32], store: &mut [f32], kept: usize) {
    let (w, h, a, depth) = (sw.w, sw.h, sw.a, sw.depth);
    let r1 = r0 + map.len() / w;
    let b = (a..sw.b).find(|&k| sw.spans[k].is_none()).unwrap_or(sw.b);
    let writes = |k: usize| k % 2 == 1 || k + 1 == sw.n;
    // The last level computed: the last writer (at most one even iteration is dropped).
    let last = if b > a && !writes(b - 1) { b - 1 } else { b };
    let levels = last - a;
    if levels == 0 {
        return;
    }
    let span_of = |j: usize| sw.spans[a + j - 1].expect("a span before the sweep's end");
    // The writing level after level j, if any.
    let next_writer = |j: usize| (j + 1..=levels).find(|&i| writes(a + i - 1));
    // Level j's rows lo[j]..hi[j] (level 0: the rows level 1 reads); e[j]: computed up to;
    // base[j]: the first row its store holds.
    let mut lo = [0usize; THERMAL_MAX_DEPTH + 1];
    let mut hi = [0usize; THERMAL_MAX_DEPTH + 1];
    for j in 1..=levels {
        let s = span_of(j);
        let grow = levels - j;
        (lo[j], hi[j]) = (s.y0.max(r0.saturating_sub(grow)), s.y1.min(r1 + grow));
        hi[j] = hi[j].max(lo[j]);
    }
    if lo[1] == hi[1] {
        // No row of the band within reach of the first iteration's span: none of the later.
        return;
    }
    (lo[0], hi[0]) = (lo[1].saturating_sub(1), (hi[1] + 1).min(h));
    debug_assert!(lo[0] + depth >= r0 && hi[0] <= r1 + depth);
    let mut e = lo;
    let mut base = lo;
    let level_len = kept * w;
    loop {
        let mut done = true;
        for j in 0..=levels {
            // Level j computes row y once level j − 1 holds rows y − 1 ..= y + 1 (those inside
            // the map): all of them once it is done.
            let mut upto = if j == 0 {
                hi[0]
            } else if e[j - 1] == hi[j - 1] {
                hi[j]
            } else {
                hi[j].min(e[j - 1].saturating_sub(1))
            };
            if j < levels {
                // Forget the rows level j + 1 no longer reads, then room for `kept` rows.
                let keep = e[j + 1].saturating_sub(1).max(base[j]).min(e[j]);
                if keep > base[j] {
                    let at = j * level_len;
                    store.copy_within(at + (keep - base[j]) * w..at + (e[j] - base[j]) * w, at);
                    base[j] = keep;
                }
                upto = upto.min(base[j] + kept);
            }
            if upto > e[j] {
                let (lower, upper) = store.split_at_mut(j * level_len);
                if j == 0 {
                    // The rows as they were at the start of the sweep: the halo's or the map's
                    // (no level has written them yet).
                    for y in e[0]..upto {
                        let row = if y < r0 {
                            let t = y + depth - r0;
                            &halo[t * w..(t + 1) * w]
                        } else if y >= r1 {
                            let t = depth + y - r1;
                            &halo[t * w..(t + 1) * w]
                        } else {
                            &map[(y - r0) * w..(y - r0 + 1) * w]
                        };
                        upper[(y - base[0]) * w..(y - base[0] + 1) * w].copy_from_slice(row);
                    }
                } else {
                    let s = span_of(j);
                    let from = (&lower[(j - 1) * level_len..], base[j - 1]);
                    if j == levels {
                        thermal_lines(sw, from, (&mut *map, r0), e[j], upto, s);
                    } else {
                        let to = &mut upper[..level_len];
                        thermal_lines(sw, from, (&mut *to, base[j]), e[j], upto, s);
                        if writes(a + j - 1) {
                            // The cells of rows e[j]..upto of the band in this level's span
                            // but not in the next writer's.
                            let inner = next_writer(j).map(span_of);
                            for y in e[j].max(r0).max(s.y0)..upto.min(r1).min(s.y1) {
                                let src = &to[(y - base[j]) * w..(y - base[j] + 1) * w];
                                let dst = &mut map[(y - r0) * w..(y - r0 + 1) * w];
                                match inner {
                                    Some(i) if (i.y0..i.y1).contains(&y) && i.x0 < i.x1 => {
                                        dst[s.x0..i.x0].copy_from_slice(&src[s.x0..i.x0]);
                                        dst[i.x1..s.x1].copy_from_slice(&src[i.x1..s.x1]);
                                    }
                                    _ => dst[s.x0..s.x1].copy_from_slice(&src[s.x0..s.x1]),
                                }
                            }
                        }
                    }
                }
                e[j] = upto;
            }
            if e[j] < hi[j] {
                done = false;
            }
        }
        if done {
            break;
        }
    }
}

/// One thermal iteration on rows `y0..y1` of the span `s`: `from` holds the buffer's rows from
/// its row `fg0` on (every row the cells read), `to` receives the rows (its first row is the
/// buffer's row `tg0`). The buffer's border rows and columns take the bounds-checked neighbour
/// walk; the interior goes through [`thermal_block`], which computes each neighbour pair's
/// exchange once for both cells.
fn thermal_lines(
    sw: &ThermalSweep,
    (from, fg0): (&[f32], usize),
    (to, tg0): (&mut [f32], usize),
    y0: usize,
    y1: usize,
    s: Span,
) {
    let (w, h) = (sw.w, sw.h);
    let (t_edge, t_corner, rate) = (sw.t_edge, sw.t_corner, sw.rate);
    let base = fg0 * w;
    let cell = |x: usize, y: usize| {
        let hc = from[y * w + x - base];
        let mut delta = 0.0f32;
        neighbours(x, y, w, h, |j, weight| {
            let t = if weight == 1.0 { t_edge } else { t_corner };
            delta += exchange(from[j - base] - hc, t, rate);
        });
        hc + delta
    };
    // The interior columns of the span (the border columns take the checked walk).
    let (xa, xb) = (s.x0.max(1), s.x1.min(w.saturating_sub(1)));
    for y in y0..y1 {
        let row = &mut to[(y - tg0) * w..(y - tg0 + 1) * w];
        if y == 0 || y + 1 == h || xa >= xb {
            for (x, out) in row.iter_mut().enumerate().take(s.x1).skip(s.x0) {
                *out = cell(x, y);
            }
            continue;
        }
        if s.x0 == 0 {
            row[0] = cell(0, y);
        }
        if s.x1 == w && w > 1 {
            row[w - 1] = cell(w - 1, y);
        }
    }
    // The interior rows.
    let (ya, yb) = (y0.max(1), y1.min(h.saturating_sub(1)));
    if ya < yb && xa < xb {
        let from = &from[(ya - 1 - fg0) * w..(yb + 1 - fg0) * w];
        let to = &mut to[(ya - tg0) * w..(yb - tg0) * w];
        thermal_block_dispatch(from, to, w, xa, xb, [t_edge, t_corner, rate]);
    }
}

/// Columns per chunk of [`thermal_block`]: the pair terms of a chunk's row stay in L1.
const THERMAL_CHUNK: usize = 256;

/// [`thermal_block`] without explicit vectors (what LLVM makes of it for the baseline ISA).
const SCALAR: u8 = 0;
/// [`thermal_block`] with eight-lane AVX2 rows.
const AVX2: u8 = 1;
/// [`thermal_block`] with sixteen-lane AVX-512 rows.
const AVX512: u8 = 2;

/// [`thermal_block`], built for AVX-512 or AVX2 where the processor has it (IEEE basic
/// operations only, no FMA: the same bits, sixteen or eight lanes at a time).
fn thermal_block_dispatch(from: &[f32], to: &mut [f32], w: usize, xa: usize, xb: usize, t: [f32; 3]) {
    by_isa!(thermal_block_avx512, thermal_block_avx2, thermal_block::<SCALAR>, (from, to, w, xa, xb, t))
}

/// [`thermal_block`] for AVX2: [`thermal_carry_lanes`] and [`thermal_row_lanes`] for eight cells
/// at a time, the compiler's build of the generic code for the row tails.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn thermal_block_avx2(from: &[f32], to: &mut [f32], w: usize, xa: usize, xb: usize, t: [f32; 3]) {
    thermal_block::<AVX2>(from, to, w, xa, xb, t)
}

/// [`thermal_block`] for AVX-512: [`thermal_carry_lanes`] and [`thermal_row_lanes`] for
/// sixteen cells at a time, the compiler's build of the generic code for the row tails.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn thermal_block_avx512(from: &[f32], to: &mut [f32], w: usize, xa: usize, xb: usize, t: [f32; 3]) {
    thermal_block::<AVX512>(from, to, w, xa, xb, t)
}

/// [`exchange`]'s value up to the sign of a zero result, in fewer operations (one difference,
/// then 6 instead of 7, and no negation): `rate × (max(d − t, 0) + min(d + t, 0))`. Why the
/// same value: `−d − t` is `−(d + t)` exactly (rounding is symmetric), so
/// `max(−d − t, 0) = −min(d + t, 0)` up to the sign of a zero (a NaN gives 0 on both sides: `max`
/// and `min` ignore it); subtracting it is adding `min(d + t, 0)` (IEEE `x − y` is `x + (−y)`);
/// and with `t ≥ 0` at most one of the two is non-zero (`d > t` and `d < −t` exclude each
/// other), so the sum is that one exactly, or a zero. The pair's other cell receives
/// `exchange(−d) = −exchange(d)` up to the sign of a zero (IEEE subtraction and multiplication
/// are antisymmetric): [`thermal_block`] subtracts this value there instead of adding its
/// negation, which is the same IEEE operation.
#[inline(always)]
fn excess(d: f32, t: f32, rate: f32) -> f32 {
    rate * ((d - t).max(0.0) + (d + t).min(0.0))
}

/// Thermal erosion of the interior cells `xa..xb` (`1 ≤ xa`, `xb < w`) of the rows of `to`, one
/// iteration: `from` holds those rows and one more above and below, `w` wide.
///
/// Each vertical and diagonal neighbour pair's exchange is computed once and given to both cells
/// (the pairs between a row and the row below give the row's three lower terms and carry the next
/// row's three upper ones: 3 pairs per cell, plus the 2 horizontal exchanges computed as the plain
/// kernel does, instead of 8 exchanges; sharing the horizontal pairs too needs a lane shift LLVM
/// does not make, and through arrays it was slower), and each cell still adds its eight terms in the order of
/// [`OFFSETS`] to `0.0`, then to its height: the same bits as the plain kernel
/// ([`super::erosion_reference::thermal`]). Why: the plain kernel's term for a cell `c` and a
/// neighbour `n` is `rate × (max(d − t, 0) − max(−d − t, 0))` with `d = h_n − h_c`; seen from `n`
/// it is the same with `−d`, and `h_c − h_n` equals `−(h_n − h_c)` exactly (IEEE subtraction is
/// antisymmetric) except for the sign of a zero. So [`excess`] gives the upper cell its plain
/// term, and subtracting the same value gives the lower cell its plain term, up to the sign of a
/// zero result (NaN and infinities included: `max` and `min` ignore a NaN, the other operations
/// are the same; see [`excess`]). A sum that starts at `+0.0` is never `−0.0` (in
/// round-to-nearest `x + y = −0` only if both are `−0`), and adding `+0` or `−0` to anything but
/// `−0` gives the same bits: the zero signs never show.
///
/// Rows go top to bottom in chunks of [`THERMAL_CHUNK`] columns, the carried terms of a chunk in
/// three small arrays (L1). With `ISA` [`AVX2`] (only [`thermal_block_avx2`] sets it, where the
/// process runs AVX2 kernels) the rows go through [`thermal_row_lanes`] on [`Avx2`]'s lanes,
/// which also shares the horizontal pairs, and the first row's carry through
/// [`thermal_carry_lanes`]; likewise with [`AVX512`] on [`Avx512`]'s.
#[inline(always)]
fn thermal_block<const ISA: u8>(from: &[f32], to: &mut [f32], w: usize, xa: usize, xb: usize, t: [f32; 3]) {
    const C: usize = THERMAL_CHUNK;
    let rows = to.len() / w;
    /// The pairs from a row down to the next, as their upper cells' terms (their lower cells
    /// subtract them), indexed by the upper cell's column − c0 + 1 (0 ..= n + 1): `dr[k]` is the
    /// pair of the lower cell k + 1 (its upper left neighbour), `d[k]` of k (above), `dl[k]` of
    /// k − 1 (upper right).
    struct Carry {
        dr: [f32; C + 2],
        d: [f32; C + 2],
        dl: [f32; C + 2],
    }
    /// The boundary pairs from row `h0` down to row `h1` (columns c0 − 1 ..= c0 + n, n + 2
    /// values) whose upper cell is outside the chunk: down right from c0 − 1, down left from
    /// c0 + n.
    #[inline(always)]
    fn boundary(h0: &[f32], h1: &[f32], n: usize, t: [f32; 3], next: &mut Carry) {
        let [_, t_corner, rate] = t;
        next.dr[0] = excess(h1[1] - h0[0], t_corner, rate);
        next.dl[n + 1] = excess(h1[n] - h0[n + 1], t_corner, rate);
    }
    let zero = || Carry { dr: [0.0; C + 2], d: [0.0; C + 2], dl: [0.0; C + 2] };
    // The carry into row r is carries[r % 2].
    let mut carries = [zero(), zero()];
    let mut c0 = xa;
    while c0 < xb {
        let n = (xb - c0).min(C);
        let line = |r: usize| &from[r * w + c0 - 1..r * w + c0 + n + 1];
        {
            // The first row's upper terms.
            let [_, first] = &mut carries;
            let Carry { dr, d, dl } = first;
            match ISA {
                // `ISA` is `AVX2` only in `thermal_block_avx2`, which runs where the process
                // runs AVX2 kernels; likewise `AVX512` (see `Lanes`).
                #[cfg(target_arch = "x86_64")]
                AVX2 => thermal_carry_lanes::<Avx2>(line(0), line(1), dr, d, dl, t),
                #[cfg(target_arch = "x86_64")]
                AVX512 => thermal_carry_lanes::<Avx512>(line(0), line(1), dr, d, dl, t),
                _ => thermal_block_row(line(0), line(1), &[], &[], &[], dr, d, dl, None, t),
            }
            boundary(line(0), line(1), n, t, first);
        }
        for r in 0..rows {
            let (h0, h1) = (line(r + 1), line(r + 2));
            let out = &mut to[r * w + c0..r * w + c0 + n];
            let [even, odd] = &mut carries;
            let (above, below) = if r % 2 == 0 { (&*odd, even) } else { (&*even, odd) };
            let Carry { dr, d, dl } = below;
            match ISA {
                #[cfg(target_arch = "x86_64")]
                AVX2 => thermal_row_lanes::<Avx2>(h0, h1, &above.dr, &above.d, &above.dl, dr, d, dl, out, t),
                #[cfg(target_arch = "x86_64")]
                AVX512 => thermal_row_lanes::<Avx512>(h0, h1, &above.dr, &above.d, &above.dl, dr, d, dl, out, t),
                _ => thermal_block_row(h0, h1, &above.dr, &above.d, &above.dl, dr, d, dl, Some(out), t),
            }
            boundary(h0, h1, n, t, below);
        }
        c0 += n;
    }
}

/// One row of [`thermal_block`]: the cells of row `h0` (given with one more column on each side,
/// as is the row `h1` below), their upper terms carried in `pdr`, `pd`, `pdl` (indexed as
/// `thermal_block`'s carry), the carry for the next row into `cdr`, `cd`, `cdl`; or, with no
/// `out`, only the carry (the first row of a block). A function of its own, with every slice a
/// parameter and the stores through iterators, so that LLVM knows the slices apart and vectorises
/// the loop.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn thermal_block_row(
    h0: &[f32],
    h1: &[f32],
    pdr: &[f32],
    pd: &[f32],
    pdl: &[f32],
    cdr: &mut [f32],
    cd: &mut [f32],
    cdl: &mut [f32],
    out: Option<&mut [f32]>,
    t: [f32; 3],
) {
    let [t_edge, t_corner, rate] = t;
    let m = h0.len();
    if m < 3 {
        return;
    }
    let (h0, h1) = (&h0[..m], &h1[..m]);
    let carry = cdl[1..m - 1].iter_mut().zip(cd[1..m - 1].iter_mut()).zip(cdr[1..m - 1].iter_mut());
    let Some(out) = out else {
        for (i, ((cl, c), cr)) in carry.enumerate() {
            let k = i + 1;
            let hc = h0[k];
            *cl = excess(h1[k - 1] - hc, t_corner, rate);
            *c = excess(h1[k] - hc, t_edge, rate);
            *cr = excess(h1[k + 1] - hc, t_corner, rate);
        }
        return;
    };
    let (pdr, pd, pdl) = (&pdr[..m], &pd[..m], &pdl[..m]);
    for (i, (o, ((cl, c), cr))) in out[..m - 2].iter_mut().zip(carry).enumerate() {
        let k = i + 1;
        let hc = h0[k];
        let dl = excess(h1[k - 1] - hc, t_corner, rate);
        let d = excess(h1[k] - hc, t_edge, rate);
        let dr = excess(h1[k + 1] - hc, t_corner, rate);
        *cl = dl;
        *c = d;
        *cr = dr;
        // The upper pairs' terms arrive as their upper cells' terms: subtracted, not negated.
        let mut delta = 0.0f32;
        delta -= pdr[k - 1];
        delta -= pd[k];
        delta -= pdl[k + 1];
        delta += excess(h0[k - 1] - hc, t_edge, rate);
        delta += excess(h0[k + 1] - hc, t_edge, rate);
        delta += dl;
        delta += d;
        delta += dr;
        *o = hc + delta;
    }
}

/// [`excess`] on `L`'s lanes: the same IEEE operations (`max`/`min` with `0` second give `0` for
/// a NaN, as `f32::max` and `f32::min` do; a zero's sign may differ, which never shows).
#[inline(always)]
fn excess_lanes<L: Lanes>(d: L::F, t: L::F, rate: L::F) -> L::F {
    let zero = L::splat(0.0);
    L::mul(rate, L::add(L::max(L::sub(d, t), zero), L::min(L::add(d, t), zero)))
}

/// The thresholds and rate of [`thermal_block`] splatted on `L`'s lanes.
#[derive(Copy, Clone)]
struct ThermalLanes<L: Lanes> {
    edge: L::F,
    corner: L::F,
    rate: L::F,
}

impl<L: Lanes> ThermalLanes<L> {
    #[inline(always)]
    fn new([t_edge, t_corner, rate]: [f32; 3]) -> Self {
        ThermalLanes { edge: L::splat(t_edge), corner: L::splat(t_corner), rate: L::splat(rate) }
    }

    /// The lower pairs of the cells `k..k + LANES` of row `h0` (down left, down, down right) as
    /// their upper cells' terms, stored into the carry for the next row.
    #[inline(always)]
    fn carry(&self, h0: &[f32], h1: &[f32], k: usize, cdr: &mut [f32], cd: &mut [f32], cdl: &mut [f32]) -> [L::F; 3] {
        let hc = L::load(&h0[k..]);
        let dl = excess_lanes::<L>(L::sub(L::load(&h1[k - 1..]), hc), self.corner, self.rate);
        let d = excess_lanes::<L>(L::sub(L::load(&h1[k..]), hc), self.edge, self.rate);
        let dr = excess_lanes::<L>(L::sub(L::load(&h1[k + 1..]), hc), self.corner, self.rate);
        L::store(dl, &mut cdl[k..]);
        L::store(d, &mut cd[k..]);
        L::store(dr, &mut cdr[k..]);
        [dl, d, dr]
    }

    /// One run of cells `k..k + LANES` of [`thermal_row_lanes`], whose left neighbours' pairs,
    /// rotated up, are `rotated_before`; returns this run's rotated right pairs.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn run(
        &self,
        h0: &[f32],
        h1: &[f32],
        [pdr, pd, pdl]: [&[f32]; 3],
        k: usize,
        rotated_before: L::F,
        [cdr, cd, cdl]: [&mut [f32]; 3],
        out: &mut [f32],
    ) -> L::F {
        let hc = L::load(&h0[k..]);
        let right = excess_lanes::<L>(L::sub(L::load(&h0[k + 1..]), hc), self.edge, self.rate);
        let rotated = L::rotate_up(right);
        let left = L::blend_first(rotated, rotated_before);
        let [dl, d, dr] = self.carry(h0, h1, k, cdr, cd, cdl);
        let mut delta = L::sub(L::splat(0.0), L::load(&pdr[k - 1..]));
        delta = L::sub(delta, L::load(&pd[k..]));
        delta = L::sub(delta, L::load(&pdl[k + 1..]));
        delta = L::sub(delta, left);
        delta = L::add(delta, right);
        delta = L::add(delta, dl);
        delta = L::add(delta, d);
        delta = L::add(delta, dr);
        L::store(L::add(hc, delta), &mut out[k - 1..]);
        rotated
    }
}

/// [`thermal_block_row`] with an output, `L::LANES` cells at a time (the last few cells through
/// `thermal_block_row` itself), which also computes each horizontal pair once: the pair between
/// cells `k` and `k + 1` is cell `k`'s right term as [`excess`] gives it, and cell `k + 1`
/// subtracts it as its left term (the argument of [`thermal_block`]); the right terms of a run,
/// rotated up by one lane, with the previous run's last in lane 0, are the next cells' left
/// terms. Each cell adds its eight terms in the same order as `thermal_block_row`: the same bits
/// (a test compares every build with the plain sum on ±0, infinities and NaN). Sixteen lanes go
/// two runs per step, which keeps both of AVX-512's units busy.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn thermal_row_lanes<L: Lanes>(
    h0: &[f32],
    h1: &[f32],
    pdr: &[f32],
    pd: &[f32],
    pdl: &[f32],
    cdr: &mut [f32],
    cd: &mut [f32],
    cdl: &mut [f32],
    out: &mut [f32],
    t: [f32; 3],
) {
    let n = L::LANES;
    let m = h0.len();
    if m < 3 {
        return;
    }
    // Every access below is within these lengths (the loops keep k + LANES ≤ m − 1); said once
    // here, so that the compiler can drop the checks of the loads and stores.
    assert!(h1.len() >= m && pdr.len() >= m && pd.len() >= m && pdl.len() >= m);
    assert!(cdr.len() >= m && cd.len() >= m && cdl.len() >= m && out.len() >= m - 2);
    let p = ThermalLanes::<L>::new(t);
    let [t_edge, _, rate] = t;
    // Not a closure: a closure is compiled apart, without the caller's instruction set.
    let above = [pdr, pd, pdl];
    // Lane 0: the pair left of the first cell (cells 0 and 1).
    let mut rotated = L::splat(excess(h0[1] - h0[0], t_edge, rate));
    let mut k = 1;
    if n >= 16 {
        while k + 2 * n < m {
            let first = p.run(h0, h1, above, k, rotated, [&mut *cdr, &mut *cd, &mut *cdl], out);
            rotated = p.run(h0, h1, above, k + n, first, [&mut *cdr, &mut *cd, &mut *cdl], out);
            k += 2 * n;
        }
    }
    while k + n < m {
        rotated = p.run(h0, h1, above, k, rotated, [&mut *cdr, &mut *cd, &mut *cdl], out);
        k += n;
    }
    // The last cells (k ..= m − 2), through the generic row on slices shifted by k − 1.
    let j = k - 1;
    thermal_block_row(
        &h0[j..],
        &h1[j..m],
        &pdr[j..],
        &pd[j..],
        &pdl[j..],
        &mut cdr[j..],
        &mut cd[j..],
        &mut cdl[j..],
        Some(&mut out[j..]),
        t,
    );
}

/// [`thermal_block_row`] without an output (the first row's carry), `L::LANES` cells at a time
/// (the last few through `thermal_block_row` itself): the same operations per cell (LLVM left
/// that loop scalar).
#[inline(always)]
fn thermal_carry_lanes<L: Lanes>(
    h0: &[f32],
    h1: &[f32],
    cdr: &mut [f32],
    cd: &mut [f32],
    cdl: &mut [f32],
    t: [f32; 3],
) {
    let m = h0.len();
    if m < 3 {
        return;
    }
    assert!(h1.len() >= m && cdr.len() >= m && cd.len() >= m && cdl.len() >= m);
    let p = ThermalLanes::<L>::new(t);
    let mut k = 1;
    while k + L::LANES < m {
        p.carry(h0, h1, k, cdr, cd, cdl);
        k += L::LANES;
    }
    let j = k - 1;
    thermal_block_row(&h0[j..], &h1[j..m], &[], &[], &[], &mut cdr[j..], &mut cd[j..], &mut cdl[j..], None, t);
}

/// What a hydraulic erosion writes into the map.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Output {
    /// The eroded terrain.
    Height,
    /// Where water ran: with `a` the mean discharge per iteration in units of rain per logical
    /// square unit (about the area draining through the cell), `a / (a + FLOW_REF)`, in [0, 1).
    Flow,
    /// How much the terrain was lowered, `e / (e + MASK_REF)`, in [0, 1).
    Erosion,
    /// How much the terrain was raised, `d / (d + MASK_REF)`, in [0, 1).
    Deposition,
}

/// Height change at which the erosion and deposition masks reach one half.
pub const MASK_REF: f32 = 0.01;
/// Upstream area (logical square units of rain) at which the flow mask reaches one half.
pub const FLOW_REF: f32 = 64.0;
/// The most ground a cell loses per iteration, as a fraction of its steepest drop: a small step
/// keeps the explicit scheme stable (larger cuts make neighbours along a stream alternate between
/// cutting and filling, a checkerboard of pits).
pub(crate) const MAX_CUT: f32 = 0.1;

/// Hydraulic erosion parameters, in physical pixels and per physical iteration.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Hydraulic {
    pub iterations: u32,
    /// Mean rain per cell and iteration (height units).
    pub rain: f32,
    /// Fraction of the water that evaporates per iteration.
    pub evaporation: f32,
    /// Sediment a unit of discharge carries per unit of slope.
    pub capacity: f32,
    /// Fraction of the missing load picked up per iteration.
    pub erosion: f32,
    /// Fraction of the excess load dropped per iteration.
    pub deposition: f32,
    /// The height a deposit stays below its highest edge neighbour, per pixel of distance (the
    /// fan slope per logical unit ÷ the render scale; × √2 towards a corner): sediment settles at
    /// most up to `max_j (surface_j − fan_drop × distance_j)`, so deposits build cones of this
    /// gradient (fans, deltas) and never a local maximum (a spike or a ridge on a channel).
    pub fan_drop: f32,
    /// Converts a height drop per pixel into a slope per logical unit (the render scale).
    pub slope_scale: f32,
    /// Pixels per logical square unit (scale²), for the flow mask.
    pub area_scale: f32,
    /// The base level: a cell whose terrain is at or below it is sea (its surface is this level,
    /// its water joins the sea, it is never eroded; what arrives there settles).
    pub sea_level: f32,
    /// The height a unit of water adds to a land cell's surface ([`WATER_DEPTH`] ÷ the render
    /// scale³, so that water and drops keep their proportion at every scale: see
    /// [`WATER_DEPTH`]).
    pub water_depth: f32,
    /// The storm lattice's spacing in pixels ([`STORM_WAVELENGTH`] map units × the render scale).
    pub storm_spacing: f64,
    /// The seed of the rain pattern (already combined with the script seed).
    pub seed: u32,
    pub output: Output,
}

/// The height a unit of water adds to the water surface at render scale 1. The water of a cell
/// is what passes through it in an iteration (it moves one pixel per iteration): along a river
/// that is tens of iterations of rain from a whole catchment, far more than the river's depth
/// (counted whole, it stands above the valley's sides, and routing on it spreads every river over
/// its banks). This share of it keeps a river's surface close to its terrain, while the water a
/// hollow gathers, iteration after iteration, raises its surface to the rim. At render scale `s`
/// a river carries `s²` times the pixels' rain over drops `1 / s` as high: the depth per unit of
/// water is this ÷ `s³` (at most 1: below scale 1/4 water stands as high as it is).
pub const WATER_DEPTH: f64 = 1.0 / 256.0;

/// The share of the water that would fill its steepest surface drop a cell lets go in an
/// iteration, at most: see [`release_per_drop`].
const RELEASE: f32 = 0.125;

/// The water a cell lets go per unit of its steepest surface drop: [`RELEASE`] of the water that
/// would fill the drop (`RELEASE / water_depth`). Water runs off whole down drops that could hold
/// eight times as much; standing water (a pond, a flat) levels out, an eighth of its excess over
/// its lowest neighbour at a time. Letting all of it go makes neighbours pass the same water back
/// and forth (the water of a pond sloshes from cell to cell, and the flow cuts its floor into
/// pits); a half or a quarter still left several times as many closed pits on the maps
/// `docs/erosion.md` measures.
pub(crate) fn release_per_drop(p: &Hydraulic) -> f32 {
    RELEASE / p.water_depth
}

/// What a flowing cell with `water` and `load` sends down its lower neighbours in pass A, with
/// `steep` its steepest surface drop and `per_drop` as [`release_per_drop`]: at most
/// `steep × per_drop` of its water, and the same share of its load (all of the load when it has
/// no water). Selects, not `min` (the same values for the finite, non-negative inputs a run
/// makes; both kernels use this function, so their bits agree for any input).
#[inline(always)]
pub(crate) fn release(water: f32, load: f32, steep: f32, per_drop: f32) -> (f32, f32) {
    let most = steep * per_drop;
    let out = if most < water { most } else { water };
    let share = if water > 0.0 { out / water } else { 1.0 };
    (out, load * share)
}

/// The side of a storm cell in map units: the rain of an iteration varies smoothly over about
/// this distance (a value noise on a lattice of this spacing).
pub const STORM_WAVELENGTH: f64 = 32.0;
/// How much the storms vary the rain: a cell gets `rain × max(0, 1 + STORM_AMPLITUDE × v)` with
/// `v` the storm field in [−1, 1].
pub(crate) const STORM_AMPLITUDE: f32 = 0.8;

/// The storm lattice's cell of the absolute coordinate `v` on a lattice of `spacing` pixels, and
/// the smoothstep weight of the coordinate's place in it: `(⌊v / spacing⌋, s(f))` with `f` the
/// fraction and `s(f) = f² (3 − 2f)`. The division in `f64`, the floor by a conversion and a
/// comparison (no platform math): the same bits on every machine.
fn storm_position(v: i64, spacing: f64) -> (i64, f32) {
    let u = v as f64 / spacing;
    let t = u as i64;
    let cell = if (t as f64) > u { t - 1 } else { t };
    let f = (u - cell as f64) as f32;
    (cell, f * f * (3.0 - 2.0 * f))
}

/// The storm field's value at lattice point (`i`, `j`) of the iteration whose seed is `seed`:
/// uniform in [−1, 1) (exact in `f32`: 24 bits of hash, a power of two and a subtraction).
#[inline]
fn storm_value(seed: u32, i: i64, j: i64) -> f32 {
    let h = hash2(hash2(seed, i as u32), j as u32);
    (h >> 8) as f32 * (2.0 / 16_777_216.0) - 1.0
}

/// The storms over the columns of one buffer: which columns lie in each lattice cell and their
/// smoothstep weights there, computed once per run (they do not depend on the iteration), and the
/// lattice's spacing in pixels for the rows. The rain of the rows between two lattice rows then
/// needs the lattice values of those two rows, hashed once ([`StormRows`]): no hash per pixel.
/// Every value depends on the absolute pixel only (not on where the buffer starts), so tiles
/// agree.
pub(crate) struct Storm {
    spacing: f64,
    y0: i64,
    /// The lattice column of the buffer's first column.
    first: i64,
    /// Each buffer column's smoothstep weight.
    weight: Vec<f32>,
    /// `starts[k]`: the first buffer column of lattice column `first + k` (the last entry is the
    /// width): the columns of lattice cell `k` are `starts[k]..starts[k + 1]`.
    starts: Vec<usize>,
}

/// One user's rows of a [`Storm`]: for the lattice rows `j` and `j + 1` of one iteration, the
/// field along each interpolated to every pixel of the buffer (as the rain it brings: `base` on
/// row `j`, `rise` from there to row `j + 1`), kept while the pixel rows asked for stay between
/// the same two lattice rows; then a pixel row needs one product and one sum per pixel.
pub(crate) struct StormRows {
    key: Option<(u32, i64, u32)>,
    upper: Vec<f32>,
    lower: Vec<f32>,
    base: Vec<f32>,
    rise: Vec<f32>,
}

impl StormRows {
    pub(crate) fn new() -> StormRows {
        StormRows { key: None, upper: Vec::new(), lower: Vec::new(), base: Vec::new(), rise: Vec::new() }
    }
}

impl Storm {
    /// The storms over `rect` (the buffer), on a lattice of `spacing` pixels (at least one: a
    /// finer lattice would vary within a pixel, and the rows of lattice values stay at most the
    /// buffer's width).
    pub(crate) fn new(rect: Rect, spacing: f64) -> Storm {
        let spacing = if spacing >= 1.0 { spacing } else { 1.0 };
        let w = rect.width as usize;
        let (mut weight, mut starts) = (Vec::with_capacity(w), Vec::new());
        let first = storm_position(rect.x, spacing).0;
        for x in 0..w {
            let (c, s) = storm_position(rect.x + x as i64, spacing);
            // At most the width + 1 cells (spacing ≥ 1): the difference fits.
            let k = (c - first) as u32;
            while starts.len() <= k as usize {
                starts.push(x);
            }
            weight.push(s);
        }
        starts.push(w);
        Storm { spacing, y0: rect.y, first, weight, starts }
    }

    /// `rain × max(0, 1 + STORM_AMPLITUDE × v)` on buffer row `y`, columns `x0..x1` (into the
    /// same columns of `out`), with `v` the storm field of the iteration whose seed is `seed`:
    /// the lattice values of the two lattice rows around the row (hashed), each interpolated along
    /// its lattice row to every pixel by the smoothstep weight of the pixel's place in its cell
    /// (`u` on the row above, `l` below: once for all the pixel rows between them), then between
    /// the two by the smoothstep weight of the pixel row's place: `v = u + (l − u) × s_y`. The
    /// rain is evaluated as `rain × (1 + A u) + rain × A (l − u) × s_y` (A the amplitude), the
    /// same value up to rounding, with its two terms kept per pixel: a row then costs a product,
    /// a sum and a comparison per pixel.
    pub(crate) fn rain_row(
        &self,
        rows: &mut StormRows,
        seed: u32,
        rain: f32,
        y: usize,
        (x0, x1): (usize, usize),
        out: &mut [f32],
    ) {
        if x0 >= x1 {
            return;
        }
        let (j, sy) = storm_position(self.y0 + y as i64, self.spacing);
        let key = Some((seed, j, rain.to_bits()));
        if rows.key != key {
            let (cells, w) = (self.starts.len(), self.weight.len());
            rows.upper.clear();
            rows.lower.clear();
            for k in 0..cells {
                let i = self.first + k as i64;
                rows.upper.push(storm_value(seed, i, j));
                rows.lower.push(storm_value(seed, i, j + 1));
            }
            rows.base.resize(w, 0.0);
            rows.rise.resize(w, 0.0);
            for k in 0..cells - 1 {
                let (u0, u1) = (rows.upper[k], rows.upper[k + 1]);
                let (l0, l1) = (rows.lower[k], rows.lower[k + 1]);
                let (c0, c1) = (self.starts[k], self.starts[k + 1]);
                let weight = &self.weight[c0..c1];
                for ((b, r), &s) in rows.base[c0..c1].iter_mut().zip(&mut rows.rise[c0..c1]).zip(weight) {
                    let u = u0 + (u1 - u0) * s;
                    let l = l0 + (l1 - l0) * s;
                    *b = rain * (1.0 + STORM_AMPLITUDE * u);
                    *r = rain * (STORM_AMPLITUDE * (l - u));
                }
            }
            rows.key = key;
        }
        storm_pixels_dispatch(&rows.base[x0..x1], &rows.rise[x0..x1], sy, &mut out[x0..x1]);
    }
}

/// [`storm_pixels`], built for AVX-512 or AVX2 where the processor has it (a product, a sum and a
/// select per pixel: the same bits).
fn storm_pixels_dispatch(base: &[f32], rise: &[f32], sy: f32, out: &mut [f32]) {
    by_isa!(storm_pixels_avx512, storm_pixels_avx2, storm_pixels, (base, rise, sy, out))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn storm_pixels_avx512(base: &[f32], rise: &[f32], sy: f32, out: &mut [f32]) {
    storm_pixels(base, rise, sy, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn storm_pixels_avx2(base: &[f32], rise: &[f32], sy: f32, out: &mut [f32]) {
    storm_pixels(base, rise, sy, out)
}

/// The rain on a row of pixels from their terms along the lattice rows above and below
/// ([`StormRows`]) and the row's smoothstep weight `sy` between them, never below 0.
#[inline(always)]
fn storm_pixels(base: &[f32], rise: &[f32], sy: f32, out: &mut [f32]) {
    let n = out.len();
    let (base, rise) = (&base[..n], &rise[..n]);
    for i in 0..n {
        let v = base[i] + rise[i] * sy;
        out[i] = if v > 0.0 { v } else { 0.0 };
    }
}

/// Rows per band of a hydraulic sweep at least: each band recomputes, for every iteration of the
/// sweep but the last, the rows the later iterations of its neighbours' bands also compute.
const HYDRAULIC_BAND_ROWS: usize = 32;
/// Bytes of one thread's rows for a hydraulic sweep at most (as thermal's band buffers: the cores
/// of the machine the figures come from have 2 MB of L2 each): every iteration of a sweep keeps
/// [`LEVEL_BYTES_PER_COLUMN`] bytes per column, so the rows all iterations of a sweep work on stay
/// in cache while the sweep walks down a band.
const HYDRAULIC_SWEEP_BYTES: usize = 1536 << 10;
/// The most iterations one hydraulic sweep runs.
const HYDRAULIC_MAX_DEPTH: usize = 8;
/// Rows of state an iteration of a sweep (but the last) keeps for the next: when the next
/// iteration's pass B is at row `y`, it still reads rows `y..=y + 2` (its own old state and what
/// its pass A on row `y + 1` reads), and nothing above.
const STATE_RING: usize = 3;
/// Bytes per column one iteration of a sweep keeps: pass A's ring (3 fields × 3 rows, 1 × 2), the
/// state ring (3 fields × [`STATE_RING`] rows) and the storm's two rows (the thread's [`Spare`]
/// rows and the first iteration's rain ring come once per thread).
const LEVEL_BYTES_PER_COLUMN: usize = (3 * 3 + 2 + 3 * STATE_RING + 2) * 4;

/// (iterations per sweep, rows per band) of hydraulic erosion on a `w × h` map with `threads`
/// threads, each with `bytes` of rows for a sweep: as many iterations as fit, in bands tall enough
/// that the rows recomputed at band edges (2 per iteration and side: `2 × (depth − 1)` rows per
/// band row of the sweep on average) cost about a thirtieth, and at least 4 bands per thread
/// where the map is smaller. Any values give the same bits.
fn hydraulic_blocking(w: usize, h: usize, threads: usize, bytes: usize) -> (usize, usize) {
    let depth = (bytes / (LEVEL_BYTES_PER_COLUMN * w.max(1))).clamp(1, HYDRAULIC_MAX_DEPTH);
    let rows = (64 * (depth - 1)).min(h.div_ceil(4 * threads.max(1))).max(HYDRAULIC_BAND_ROWS);
    (depth, rows)
}

/// Pass A's fields, full width: the surface, the shares of water and load that pass B of the row
/// and of the rows next to it read, in rings of three rows (row `y` in slot `y % 3`); the steepest
/// drop, which only the row's own pass B reads, in a ring of two (row `y` in slot `y % 2`: pass A
/// runs one row ahead of pass B).
struct PassARing {
    surface: Vec<f32>,
    factor: Vec<f32>,
    concentration: Vec<f32>,
    steepest: Vec<f32>,
}

/// Where row `y` of a three-row [`PassARing`] field starts.
#[inline(always)]
fn slot(y: usize, w: usize) -> usize {
    (y % 3) * w
}

/// Where row `y` of a two-row [`PassARing`] field starts.
#[inline(always)]
fn slot2(y: usize, w: usize) -> usize {
    (y % 2) * w
}

/// Rows of a field `w` wide held in a ring of `ring` rows (row `y` at `(y % ring) × w`); a whole
/// buffer is the ring of all its rows.
#[derive(Copy, Clone)]
struct Rows<'a> {
    data: &'a [f32],
    ring: usize,
    w: usize,
}

impl<'a> Rows<'a> {
    #[inline(always)]
    fn row(self, y: usize) -> &'a [f32] {
        let at = (y % self.ring) * self.w;
        &self.data[at..at + self.w]
    }

    /// The value at buffer index `i` (row `i / w`, column `i % w`).
    #[inline(always)]
    fn at(self, i: usize) -> f32 {
        self.row(i / self.w)[i % self.w]
    }
}

/// The state an iteration reads: terrain, water and load.
#[derive(Copy, Clone)]
struct State<'a> {
    terrain: Rows<'a>,
    water: Rows<'a>,
    sediment: Rows<'a>,
}

/// One thread's rows for one iteration of a sweep: pass A's ring, the state it writes for the next
/// iteration of the sweep (a ring of [`STATE_RING`] rows; for the last iteration, which writes the
/// full buffer, one row of water and of load, where the very last iteration's go: nothing reads
/// them), the rows of its storm; and for the first iteration of a sweep a ring of three rows for
/// the first rain (the first sweep's water, computed row by row one row ahead of pass A) and its
/// storm's rows.
struct Level {
    pass_a: PassARing,
    terrain: Vec<f32>,
    water: Vec<f32>,
    sediment: Vec<f32>,
    storm: StormRows,
    first_rain: Vec<f32>,
    first_storm: StormRows,
}

/// One thread's rows that any iteration of a sweep uses for one row at a time: the rain pass B
/// adds to the row, and where the flow of rows outside the band goes (computed for the next
/// iteration's sake, not added to the flow total: their own band adds theirs) and of every row
/// when no flow total is kept (outputs other than the flow mask).
struct Spare {
    rain: Vec<f32>,
    flow: Vec<f32>,
}

impl Level {
    fn new(w: usize, keeps_state: bool, first: bool) -> Result<Level, RenderError> {
        let state = if keeps_state { STATE_RING * w } else { w };
        Ok(Level {
            pass_a: PassARing {
                surface: scratch(3 * w)?,
                factor: scratch(3 * w)?,
                concentration: scratch(3 * w)?,
                steepest: scratch(2 * w)?,
            },
            terrain: scratch(if keeps_state { state } else { 0 })?,
            water: scratch(state)?,
            sediment: scratch(state)?,
            storm: StormRows::new(),
            first_rain: scratch(if first { 3 * w } else { 0 })?,
            first_storm: StormRows::new(),
        })
    }

    fn state(&self, w: usize) -> State<'_> {
        State {
            terrain: Rows { data: &self.terrain, ring: STATE_RING, w },
            water: Rows { data: &self.water, ring: STATE_RING, w },
            sediment: Rows { data: &self.sediment, ring: STATE_RING, w },
        }
    }
}

/// What pass A needs besides the rows: the sea level, the height a unit of water adds to the
/// surface and the water released per unit of drop ([`release_per_drop`]).
#[derive(Copy, Clone)]
struct Surfaces {
    sea: f32,
    depth: f32,
    per_drop: f32,
}

impl Surfaces {
    /// A cell's water surface: its bed plus its water × depth (a sea cell holds no water: its
    /// surface is the sea level).
    #[inline(always)]
    fn surface(self, t: f32, w: f32) -> f32 {
        self.bed(t) + self.depth * w
    }

    /// A cell's bed: its terrain, or the sea level at sea (at or below it).
    #[inline(always)]
    fn bed(self, t: f32) -> f32 {
        land_or_sea(t, self.sea)
    }
}

/// The terrain `t` where it is above the sea level, else the sea level: the bed of a cell. (A
/// select that is one `max` instruction; a terrain that is not a number counts as sea.)
#[inline(always)]
pub(crate) fn land_or_sea(t: f32, sea: f32) -> f32 {
    if t > sea {
        t
    } else {
        sea
    }
}

/// What every band of one hydraulic iteration shares: the spans of the two passes and the
/// iteration's constants.
struct HydraulicStep<'a> {
    p: &'a Hydraulic,
    keep: f32,
    fan_edge: f32,
    fan_corner: f32,
    surfaces: Surfaces,
    w: usize,
    h: usize,
    /// The cells pass A must get right (what pass B reads), and pass B's.
    a: Span,
    b: Span,
    last: bool,
    /// The storms over the buffer and the seed of the next rain's.
    storm: &'a Storm,
    storm_seed: u32,
}

/// One band's share of the state a sweep writes (rows `r0..`, whole rows, uninitialised until
/// the band writes them; the last sweep writes the output into `terrain` and no water or load),
/// and of the flow total when the output is the flow mask (otherwise no row keeps it: see
/// [`hydraulic_with`]).
struct HydraulicBand<'a> {
    terrain: &'a mut [MaybeUninit<f32>],
    water: Option<&'a mut [MaybeUninit<f32>]>,
    sediment: Option<&'a mut [MaybeUninit<f32>]>,
    flow: Option<&'a mut [f32]>,
}

/// What the last sweep needs to write the output into its rows: the map before the erosion (read
/// by the erosion and deposition masks) and the output's constants.
#[derive(Copy, Clone)]
struct Finish<'a> {
    output: Output,
    rain: f32,
    flow_norm: f32,
    old: &'a [f32],
}

/// What the first sweep needs to compute the first rain row by row: the rain per cell, the storms
/// and the first rain's seed.
#[derive(Copy, Clone)]
struct FirstRain<'a> {
    rain: f32,
    storm: &'a Storm,
    seed: u32,
    sea: f32,
}

/// The first rain on the land only: zero where the terrain is sea (a sea cell holds no water).
pub(crate) fn first_rain_on_land(rain: &mut [f32], terrain: &[f32], sea: f32) {
    for (r, &t) in rain.iter_mut().zip(terrain) {
        *r = if t > sea { *r } else { 0.0 };
    }
}

/// Row `row` of a destination band zeroed, and viewed as the initialised row it now is (zeroed in
/// cache just before the sweep writes it, instead of the whole buffer in memory before the sweep).
#[inline]
fn zeroed(row: &mut [MaybeUninit<f32>]) -> &mut [f32] {
    row.fill(MaybeUninit::new(0.0));
    // SAFETY: every element was written just above; `MaybeUninit<f32>` has the layout of `f32`.
    unsafe { &mut *(row as *mut [MaybeUninit<f32>] as *mut [f32]) }
}
/// Hydraulic erosion of `map` in place: iterated multiple-flow-direction routing on the water
/// surface with a transport-limited load (see `docs/erosion.md` for the choice). A cell whose
/// terrain is at or below the sea level is sea (its surface and bed are the sea level); a land
/// cell's surface is its terrain plus its water × [`Hydraulic::water_depth`], its bed its terrain.
/// Each iteration is two passes over the cells still needed:
///
/// * **A** (reads terrain `h`, water `w` and load `s` of a cell and its neighbours): a snapshot of
///   the surface, the steepest drops of the surface and of the bed to a neighbour, and the shares
///   `r / D` and `l / D` (D: the sum of the surface's drops to the lower neighbours, × 1/√2 for
///   corners) so that the cell sends `r / D × d` and `l / D × d` down a drop `d`: the water it
///   releases ([`release`]) and the same share of its load; a pit keeps them.
/// * **B** (reads pass A's results of the cell and its neighbours; writes the cell's own `h`, `w`,
///   `s` and flow total): water and load arrive; the discharge (released plus received) can
///   carry `capacity × discharge × slope` (slope: the surface's steepest drop per logical unit);
///   the missing load is eroded at its rate (at most [`MAX_CUT`] of the bed's steepest drop, never
///   at sea), an excess deposited at its rate (at most up to the neighbours' mean surface, or the
///   highest less the fan drop); water evaporates, the sea takes what reached it; the next rain
///   falls on the land, in storms ([`Storm`]).
///
/// At the end, the sediment a pit holds settles there; the load still moving is washed out.
///
/// Schedule (temporal blocking): the map goes through memory once per *sweep* of up to
/// [`HYDRAULIC_MAX_DEPTH`] iterations (as many as keep each thread's rows within
/// [`HYDRAULIC_SWEEP_BYTES`]). The state is double-buffered: a sweep reads one copy and writes
/// the other, cut into bands of rows that run in parallel and never read what another band
/// writes. Within a band the iterations of the sweep run as a pipeline down the rows: iteration
/// `j` of the sweep computes pass A one row ahead of its pass B, reading the state iteration
/// `j − 1` left in a ring of three rows ([`Level`], per thread, in cache; the first iteration
/// reads the full buffer), and is pulled along by iteration `j + 1`, which needs its rows up to two
/// below its own pass B; the last iteration writes the band's rows of the full buffer. Iteration
/// `j` works on the band grown by 2 rows per iteration still to come in the sweep (within the
/// iteration's spans): the rows near band edges are computed by both bands that need them, and
/// only the band that owns a row adds its discharge to the flow total. The same operations on the
/// same values as the plain kernel ([`super::erosion_reference::hydraulic`], bit for bit): only
/// the schedule differs. The row functions are built for AVX-512 or AVX2 where the processor has
/// it (IEEE basic operations only, no FMA: the same bits); the rain of a row is computed before its
/// pass B, by the same scalar code as the plain kernel's ([`Storm::rain_row`]). The flow total is
/// kept only when the output is the flow mask. Nothing else goes over the map: the first sweep
/// computes the first rain row by row one row ahead of its first iteration, the last sweep writes
/// the output into its terrain rows (which become the map's buffer) and no water or load, and no
/// buffer is zeroed before a sweep (each row is zeroed in cache just before the sweep writes it).
pub fn hydraulic(map: &mut HeightMap, own: Rect, p: Hydraulic) -> Result<(), RenderError> {
    let threads = rayon::current_num_threads();
    let (depth, band) = hydraulic_blocking(map.width(), map.height(), threads, HYDRAULIC_SWEEP_BYTES);
    hydraulic_with(map, own, p, depth, band)
}

/// [`hydraulic`] with sweeps of `depth` iterations over bands of `band` rows (the tests cut the
/// bands and sweeps many ways).
fn hydraulic_with(map: &mut HeightMap, own: Rect, p: Hydraulic, depth: usize, band: usize) -> Result<(), RenderError> {
    let rect = map.rect();
    if rect.is_empty() || p.iterations == 0 {
        if p.output != Output::Height {
            map.data_mut().fill(0.0);
        }
        return Ok(());
    }
    // The output is written over the rendering bounds only: when they are out of reach nothing of
    // the map changes (and the spans of every iteration hold the output's, so from here on every
    // iteration has cells to compute).
    let Some(out_span) = span(rect, own, 0) else {
        return Ok(());
    };
    let (w, h) = (map.width(), map.height());
    let len = w * h;
    // Only the flow mask reads the flow total: for the other outputs no buffer keeps it (every
    // row's discharge goes to its level's spare row, as the rows outside a band's own do), which
    // saves the buffer's fill and 8 of the 32 bytes an iteration moves per cell.
    let keeps_flow = p.output == Output::Flow;
    let mut flow = if keeps_flow { scratch(len)? } else { Vec::new() };
    let n = u64::from(p.iterations);
    // The iterations' spans (pass A on the cells pass B reads; pass B on the cells still needed).
    let mut spans = Vec::new();
    for k in 0..n {
        let remaining = (n - 1 - k) * HYDRAULIC_RADIUS;
        let (Some(a), Some(b)) = (span(rect, own, remaining + 1), span(rect, own, remaining)) else {
            break;
        };
        spans.push((a, b));
    }
    let depth = depth.clamp(1, spans.len().clamp(1, HYDRAULIC_MAX_DEPTH));
    let band = band.clamp(1, h);
    let bands = h.div_ceil(band);
    let slots = rayon::current_num_threads().clamp(1, bands);
    let levels = (0..slots)
        .map(|_| {
            let level = |l: usize| Level::new(w, l + 1 < depth, l == 0);
            let levels = (0..depth).map(level).collect::<Result<Vec<_>, _>>()?;
            Ok(Mutex::new((levels, Spare { rain: scratch(w)?, flow: scratch(w)? })))
        })
        .collect::<Result<Vec<_>, RenderError>>()?;
    let iteration_seed = |k: u64| hash2(p.seed, k as u32);
    let storm = Storm::new(rect, p.storm_spacing);
    // The first sweep reads the map's terrain where it is (the map is not written before the
    // end), the first rain from each thread's ring of rain rows (computed one row ahead of pass A,
    // which reads the water of a row and of its neighbours: no buffer of the first water), and the
    // first load, zero everywhere, from one zero row (a ring of one row). A sweep writes a new state into the buffers of its parity, made when
    // first needed and never zeroed (each band writes all of its rows, see [`hydraulic_band`]);
    // the last sweep writes the output into a terrain buffer, which becomes the map's, and no
    // water or load (nothing reads them).
    let first_rain = FirstRain { rain: p.rain, storm: &storm, seed: iteration_seed(0), sea: p.sea_level };
    let zero_row = scratch(w)?;
    let mut terrain = [Vec::new(), Vec::new()];
    let mut water = [Vec::new(), Vec::new()];
    let mut sediment = [Vec::new(), Vec::new()];
    let flow_norm = 1.0 / (p.rain * n as f32) / p.area_scale.max(f32::MIN_POSITIVE);

    // Per-iteration constants, hoisted out of the pixel loops (the same values).
    let keep = 1.0 - p.evaporation;
    let (fan_edge, fan_corner) = fan_drops(&p);
    let surfaces = Surfaces { sea: p.sea_level, depth: p.water_depth, per_drop: release_per_drop(&p) };
    let mut cur = 0;
    let mut k0 = 0;
    while k0 < spans.len() {
        let k1 = (k0 + depth).min(spans.len());
        let finish = k1 == spans.len();
        let steps: Vec<HydraulicStep> = (k0..k1)
            .map(|k| HydraulicStep {
                p: &p,
                keep,
                fan_edge,
                fan_corner,
                surfaces,
                w,
                h,
                a: spans[k].0,
                b: spans[k].1,
                last: k as u64 + 1 == n,
                storm: &storm,
                storm_seed: iteration_seed(k as u64 + 1),
            })
            .collect();
        // The source (the buffers of parity `cur`, but for the first sweep) and the destinations
        // (the other parity), as room for `len` values: their old values (an earlier sweep's)
        // are never read again.
        fn split(fields: &mut [Vec<f32>; 2], cur: usize) -> (&Vec<f32>, &mut Vec<f32>) {
            let [first, second] = fields;
            if cur == 0 {
                (first, second)
            } else {
                (second, first)
            }
        }
        let (t_src, t_dst) = split(&mut terrain, cur);
        let (w_src, w_dst) = split(&mut water, cur);
        let (s_src, s_dst) = split(&mut sediment, cur);
        for (dst, needed) in [(&mut *t_dst, true), (&mut *w_dst, !finish), (&mut *s_dst, !finish)] {
            if needed {
                if dst.capacity() < len {
                    *dst = unfilled(len)?;
                }
                dst.clear();
            }
        }
        let whole = |data| Rows { data, ring: h, w };
        let (src, first) = if k0 == 0 {
            let zero = Rows { data: &zero_row[..], ring: 1, w };
            // The water is never read from `src` in the first sweep: its first iteration reads the
            // rain ring.
            (State { terrain: whole(map.data()), water: zero, sediment: zero }, Some(first_rain))
        } else {
            (State { terrain: whole(&t_src[..]), water: whole(&w_src[..]), sediment: whole(&s_src[..]) }, None)
        };
        let fin = finish.then_some(Finish { output: p.output, rain: p.rain, flow_norm, old: map.data() });
        let chunk = band * w;
        // A destination's bands (`None` for a destination the sweep does not write).
        fn room(v: &mut Vec<f32>, needed: bool, len: usize, chunk: usize) -> Vec<Option<&mut [MaybeUninit<f32>]>> {
            if needed {
                v.spare_capacity_mut()[..len].chunks_mut(chunk).map(Some).collect()
            } else {
                (0..len.div_ceil(chunk)).map(|_| None).collect()
            }
        }
        let outs: Vec<HydraulicBand> = room(t_dst, true, len, chunk)
            .into_iter()
            .zip(room(w_dst, !finish, len, chunk))
            .zip(room(s_dst, !finish, len, chunk))
            .zip(flow.chunks_mut(chunk).map(Some).chain(std::iter::repeat_with(|| None)))
            .map(|(((terrain, water), sediment), flow)| HydraulicBand {
                terrain: terrain.expect("every band has room for its terrain rows"),
                water,
                sediment,
                flow,
            })
            .collect();
        debug_assert_eq!(outs.len(), bands);
        outs.into_par_iter().enumerate().for_each(|(i, out)| {
            let slot = rayon::current_thread_index().unwrap_or(0) % levels.len();
            let mut slot = levels[slot].lock().unwrap_or_else(|e| e.into_inner());
            let (levels, spare) = &mut *slot;
            hydraulic_band(&steps, src, first, fin, i * band, out, (levels, spare));
        });
        // SAFETY: each destination made above had room for `len` values, and every band wrote
        // each value of its rows (`hydraulic_band`); the bands' rows cover `0..len`.
        unsafe {
            t_dst.set_len(len);
            if !finish {
                w_dst.set_len(len);
                s_dst.set_len(len);
            }
        }
        cur = 1 - cur;
        k0 = k1;
    }

    // The last sweep wrote the output over the rendering bounds into `terrain[cur]`; the cells
    // outside them keep the map's values.
    let mut out = std::mem::take(&mut terrain[cur]);
    let old = map.data();
    let s = out_span;
    for y in 0..h {
        let row = y * w..(y + 1) * w;
        if (s.y0..s.y1).contains(&y) {
            out[row.start..row.start + s.x0].copy_from_slice(&old[row.start..row.start + s.x0]);
            out[row.start + s.x1..row.end].copy_from_slice(&old[row.start + s.x1..row.end]);
        } else {
            out[row.clone()].copy_from_slice(&old[row]);
        }
    }
    *map = HeightMap::from_data(rect, out).ok_or_else(|| RenderError::Internal("hydraulic output size".into()))?;
    Ok(())
}

/// The requested output on one row of the rendering bounds, in place: `row` holds the final
/// terrain and receives the output, `old` is the map before the erosion (read by the erosion and
/// deposition masks), `flow` the flow total (kept for the flow mask only); built for AVX-512 or
/// AVX2 where the processor has it (the same operations: the same bits).
fn output_row_dispatch(output: Output, rain: f32, flow_norm: f32, old: &[f32], flow: &[f32], row: &mut [f32]) {
    by_isa!(output_row_avx512, output_row_avx2, output_row, (output, rain, flow_norm, old, flow, row))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn output_row_avx512(output: Output, rain: f32, flow_norm: f32, old: &[f32], flow: &[f32], row: &mut [f32]) {
    output_row(output, rain, flow_norm, old, flow, row)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn output_row_avx2(output: Output, rain: f32, flow_norm: f32, old: &[f32], flow: &[f32], row: &mut [f32]) {
    output_row(output, rain, flow_norm, old, flow, row)
}

#[inline(always)]
fn output_row(output: Output, rain: f32, flow_norm: f32, old: &[f32], flow: &[f32], row: &mut [f32]) {
    let n = row.len();
    match output {
        // Settled load can pile a pit above the height range (material is conserved, the range
        // is not): heights stay in [-1, 1] like every operation's.
        Output::Height => row.iter_mut().for_each(|t| *t = t.clamp(-1.0, 1.0)),
        Output::Flow => row.iter_mut().zip(&flow[..n]).for_each(|(d, &f)| {
            // A tiny rain makes the normaliser overflow: an infinite or undefined ratio is read
            // as the most and the least flow.
            let a = if rain > 0.0 { f * flow_norm } else { 0.0 };
            let a = if a.is_nan() { 0.0 } else { a.min(f32::MAX) };
            *d = a / (a + FLOW_REF);
        }),
        Output::Erosion => row.iter_mut().zip(&old[..n]).for_each(|(t, &d)| {
            let e = (d - *t).max(0.0);
            *t = e / (e + MASK_REF);
        }),
        Output::Deposition => row.iter_mut().zip(&old[..n]).for_each(|(t, &d)| {
            let e = (*t - d).max(0.0);
            *t = e / (e + MASK_REF);
        }),
    }
}

/// One band of a hydraulic sweep, rows `r0..r1`: for each iteration `l` of the sweep, the rows
/// of pass B still to compute (`next_b[l]..b_end[l]`) and of pass A (`next_a[l]..a_end[l]`).
struct Sweep<'s, 'a> {
    steps: &'s [HydraulicStep<'a>],
    src: State<'s>,
    /// For the first sweep: its first iteration reads the first rain from the level's rain ring.
    first: Option<FirstRain<'s>>,
    /// For the last sweep: its last iteration writes the output into the terrain rows.
    fin: Option<Finish<'s>>,
    r0: usize,
    r1: usize,
    out: HydraulicBand<'s>,
    next_b: [usize; HYDRAULIC_MAX_DEPTH],
    b_end: [usize; HYDRAULIC_MAX_DEPTH],
    next_a: [usize; HYDRAULIC_MAX_DEPTH],
    a_end: [usize; HYDRAULIC_MAX_DEPTH],
    /// The first sweep's next row of the first rain to compute.
    rain_next: usize,
}

/// One band of a hydraulic sweep: every iteration of the sweep on the band's rows grown by 2 rows
/// per iteration still to come (within the iteration's span of pass B), pass A of each one row
/// ahead of its pass B (within pass A's span), pulled down the rows by the last iteration, which
/// writes the band's new state. Every value of the band's destination rows is written: the last
/// iteration's rows as it reaches them (zeroed first, then its span written), the band's other
/// rows (outside the last iteration's span) zeroed at the end.
fn hydraulic_band(
    steps: &[HydraulicStep],
    src: State,
    first: Option<FirstRain>,
    fin: Option<Finish>,
    r0: usize,
    out: HydraulicBand,
    (levels, spare): (&mut [Level], &mut Spare),
) {
    let d = steps.len();
    let w = steps[0].w;
    let r1 = r0 + out.terrain.len() / w;
    let mut sweep = Sweep {
        steps,
        src,
        first,
        fin,
        r0,
        r1,
        out,
        next_b: [0; HYDRAULIC_MAX_DEPTH],
        b_end: [0; HYDRAULIC_MAX_DEPTH],
        next_a: [0; HYDRAULIC_MAX_DEPTH],
        a_end: [0; HYDRAULIC_MAX_DEPTH],
        rain_next: 0,
    };
    for (l, s) in steps.iter().enumerate() {
        let grow = 2 * (d - 1 - l);
        let (b0, b1) = (s.b.y0.max(r0.saturating_sub(grow)), s.b.y1.min(r1 + grow));
        let b1 = b1.max(b0);
        sweep.next_b[l] = b0;
        sweep.b_end[l] = b1;
        // Pass A on the rows of pass B and one more on each side, within pass A's span.
        sweep.next_a[l] = b0.saturating_sub(1).max(s.a.y0);
        sweep.a_end[l] = (b1 + 1).min(s.a.y1);
    }
    // The last iteration writes rows `written` of the band (all of them: no halo grows it).
    let (w0, w1) = (sweep.next_b[d - 1].min(r1), sweep.b_end[d - 1].min(r1));
    let written = (w0 - r0) * w..(w1.max(w0) - r0) * w;
    produce(&mut sweep, levels, spare, d - 1, usize::MAX);
    let HydraulicBand { terrain, water, sediment, .. } = sweep.out;
    for field in [Some(terrain), water, sediment].into_iter().flatten() {
        let end = field.len();
        zeroed(&mut field[..written.start]);
        zeroed(&mut field[written.end..end]);
    }
}

/// Iteration `l` of the sweep computes its pass B rows up to `upto` (and the pass A rows and
/// earlier iterations' rows they read).
fn produce(sw: &mut Sweep, levels: &mut [Level], spare: &mut Spare, l: usize, upto: usize) {
    let w = sw.steps[0].w;
    let last = l + 1 == sw.steps.len();
    while sw.next_b[l] < sw.b_end[l] && sw.next_b[l] <= upto {
        let y = sw.next_b[l];
        while sw.next_a[l] < sw.a_end[l] && sw.next_a[l] <= y + 1 {
            let ya = sw.next_a[l];
            if l > 0 {
                produce(sw, levels, spare, l - 1, ya + 1);
            }
            let (below, rest) = levels.split_at_mut(l);
            let Level { pass_a, first_rain, first_storm, .. } = &mut rest[0];
            let src = match (l, sw.first) {
                (0, Some(first)) => {
                    // The first rain of the rows pass A of row `ya` reads (`ya − 1 ..= ya + 1`),
                    // each row once, one row ahead, over pass A's columns and one more on each
                    // side (the ring then holds the rows pass B of row `ya − 1` reads as well).
                    let (a, h) = (sw.steps[0].a, sw.steps[0].h);
                    let columns = (a.x0.saturating_sub(1), (a.x1 + 1).min(w));
                    sw.rain_next = sw.rain_next.max(ya.saturating_sub(1));
                    while sw.rain_next <= ya + 1 && sw.rain_next < h {
                        let y = sw.rain_next;
                        let row = &mut first_rain[(y % 3) * w..(y % 3 + 1) * w];
                        first.storm.rain_row(first_storm, first.seed, first.rain, y, columns, row);
                        first_rain_on_land(
                            &mut row[columns.0..columns.1],
                            &sw.src.terrain.row(y)[columns.0..columns.1],
                            first.sea,
                        );
                        sw.rain_next += 1;
                    }
                    State { water: Rows { data: first_rain, ring: 3, w }, ..sw.src }
                }
                (0, None) => sw.src,
                _ => below[l - 1].state(w),
            };
            pass_a_line(&sw.steps[l], src, ya, pass_a);
            sw.next_a[l] += 1;
        }
        if l > 0 {
            produce(sw, levels, spare, l - 1, y);
        }
        let (below, rest) = levels.split_at_mut(l);
        let Level { pass_a, terrain, water, sediment, storm, first_rain, .. } = &mut rest[0];
        let Spare { rain, flow } = &mut *spare;
        let src = match (l, sw.first) {
            (0, Some(_)) => State { water: Rows { data: first_rain, ring: 3, w }, ..sw.src },
            (0, None) => sw.src,
            _ => below[l - 1].state(w),
        };
        let at = (y % STATE_RING) * w;
        let own_row = (sw.r0..sw.r1).contains(&y);
        let o = if own_row { (y - sw.r0) * w } else { 0 };
        // The flow total of an own row, if kept; else the level's spare row (which the row
        // functions then leave alone: nothing reads it).
        let (flow, kept) = match sw.out.flow.as_deref_mut() {
            Some(total) if own_row => (&mut total[o..o + w], true),
            _ => (&mut flow[..], false),
        };
        // Pass B reads the row's state where the iteration read it and writes the new state
        // (no copy of the old state into the row first).
        let state = [src.terrain.row(y), src.water.row(y), src.sediment.row(y)];
        let step = &sw.steps[l];
        if !step.last {
            // The next rain on the row, over pass B's columns.
            step.storm.rain_row(storm, step.storm_seed, step.p.rain, y, (step.b.x0, step.b.x1), rain);
        }
        let rain = &rain[..];
        if last {
            assert!(own_row, "the last iteration writes its band's own rows only");
            let terrain = zeroed(&mut sw.out.terrain[o..o + w]);
            // The very last iteration's water and load go to the level's spare rows.
            let (water, sediment) = match (sw.out.water.as_deref_mut(), sw.out.sediment.as_deref_mut()) {
                (Some(water), Some(sediment)) => (zeroed(&mut water[o..o + w]), zeroed(&mut sediment[o..o + w])),
                _ => (&mut water[..w], &mut sediment[..w]),
            };
            let row = PassBRow { terrain: &mut *terrain, water, sediment, flow: &mut *flow };
            pass_b_line(step, y, pass_a, state, rain, row, kept);
            if let Some(fin) = sw.fin {
                // The output over the span of the last iteration (the output's), from the row just
                // written.
                let b = sw.steps[l].b;
                let flow = if kept { &flow[b.x0..b.x1] } else { &[][..] };
                let old = &fin.old[y * w + b.x0..y * w + b.x1];
                output_row_dispatch(fin.output, fin.rain, fin.flow_norm, old, flow, &mut terrain[b.x0..b.x1]);
            }
        } else {
            let row = PassBRow {
                terrain: &mut terrain[at..at + w],
                water: &mut water[at..at + w],
                sediment: &mut sediment[at..at + w],
                flow,
            };
            pass_b_line(step, y, pass_a, state, rain, row, kept);
        }
        sw.next_b[l] += 1;
    }
}

/// Pass A on row `y` of its span, reading the state `src`, into the ring.
fn pass_a_line(st: &HydraulicStep, src: State, y: usize, ring: &mut PassARing) {
    let (w, h, a, k) = (st.w, st.h, st.a, st.surfaces);
    let State { terrain, water, sediment } = src;
    let (at, at2) = (slot(y, w), slot2(y, w));
    let surface_row = &mut ring.surface[at..at + w];
    let factor_row = &mut ring.factor[at..at + w];
    let conc_row = &mut ring.concentration[at..at + w];
    let steep_row = &mut ring.steepest[at2..at2 + w];
    let (xa, xb) = (a.x0.max(1), a.x1.min(w.saturating_sub(1)));
    let mut cell = |x: usize| {
        let i = y * w + x;
        let (tc, wc) = (terrain.at(i), water.at(i));
        let sc = k.surface(tc, wc);
        let mut drops = 0.0f32;
        let mut steep = 0.0f32;
        neighbours(x, y, w, h, |j, weight| {
            let d = (sc - k.surface(terrain.at(j), water.at(j))) * weight;
            drops += if d > 0.0 { d } else { 0.0 };
            steep = if d > steep { d } else { steep };
        });
        surface_row[x] = sc;
        steep_row[x] = steep;
        let (q, l) = if drops > 0.0 {
            let (out, load) = release(wc, sediment.at(i), steep, k.per_drop);
            let inverse = 1.0 / drops;
            (out * inverse, load * inverse)
        } else {
            (0.0, 0.0)
        };
        factor_row[x] = q;
        conc_row[x] = l;
    };
    if y == 0 || y + 1 == h || xa >= xb {
        (a.x0..a.x1).for_each(cell);
        return;
    }
    if a.x0 == 0 {
        cell(0);
    }
    if a.x1 == w && w > 1 {
        cell(w - 1);
    }
    fn lines(f: Rows<'_>, y: usize, xa: usize, xb: usize) -> [&[f32]; 3] {
        [y - 1, y, y + 1].map(|y| &f.row(y)[xa - 1..xb + 1])
    }
    pass_a_row_dispatch(
        (lines(terrain, y, xa, xb), lines(water, y, xa, xb), &sediment.row(y)[xa..xb], k),
        PassARow {
            surface: &mut surface_row[xa..xb],
            factor: &mut factor_row[xa..xb],
            concentration: &mut conc_row[xa..xb],
            steepest: &mut steep_row[xa..xb],
        },
    );
}

/// Pass B on row `y` of its span, from the ring, the row's old `state` (terrain, water, load,
/// full rows) and the `rain` to add (full row), into `out` (the row's new state; its flow total
/// is updated in place).
fn pass_b_line(
    st: &HydraulicStep,
    y: usize,
    ring: &PassARing,
    state: [&[f32]; 3],
    rain: &[f32],
    out: PassBRow,
    kept: bool,
) {
    let (w, h, b, p) = (st.w, st.h, st.b, st.p);
    let (fan_edge, fan_corner, last) = (st.fan_edge, st.fan_corner, st.last);
    let u = Update { keep: st.keep, sea: st.surfaces.sea, depth: st.surfaces.depth, per_drop: st.surfaces.per_drop };
    let (surface, factor, concentration) = (&ring.surface, &ring.factor, &ring.concentration);
    let at2 = slot2(y, w);
    let steepest = &ring.steepest[at2..at2 + w];
    let (xa, xb) = (b.x0.max(1), b.x1.min(w.saturating_sub(1)));
    let PassBRow { terrain: terrain_row, water: water_row, sediment: sediment_row, flow: flow_row } = out;
    let [terrain_old, water_old, sediment_old] = state;
    // A neighbour's index in the buffer as its index in the ring.
    let ring_index = |j: usize| slot(j / w, w) + j % w;
    let mut cell = |x: usize| {
        let i = slot(y, w) + x;
        let hc = surface[i];
        let mut inflow = 0.0f32;
        let mut sediment_in = 0.0f32;
        let mut settle = f32::NEG_INFINITY;
        let mut around = 0.0f32;
        let mut count = 0.0f32;
        neighbours(x, y, w, h, |j, weight| {
            let j = ring_index(j);
            let sj = surface[j];
            around += sj;
            count += 1.0;
            let v = sj - if weight == 1.0 { fan_edge } else { fan_corner };
            settle = if v > settle { v } else { settle };
            let d = (sj - hc) * weight;
            let up = d > 0.0;
            inflow += if up { factor[j] * d } else { 0.0 };
            sediment_in += if up { concentration[j] * d } else { 0.0 };
        });
        let mut rim = hc;
        if last && steepest[x] <= 0.0 {
            neighbours(x, y, w, h, |j, _| rim = rim.max(surface[ring_index(j)]));
        }
        let cell = Cell { surface: hc, inflow, sediment_in, around, count, settle, rim, steep: steepest[x] };
        let state = (terrain_old[x], water_old[x], sediment_old[x]);
        let (tc, wc, sc, discharge) = if last {
            pass_b_update::<true>(p, u, cell, state, 0.0)
        } else {
            pass_b_update::<false>(p, u, cell, state, rain[x])
        };
        terrain_row[x] = tc;
        water_row[x] = wc;
        sediment_row[x] = sc;
        flow_row[x] += discharge;
    };
    if y == 0 || y + 1 == h || xa >= xb {
        (b.x0..b.x1).for_each(&mut cell);
        return;
    }
    if b.x0 == 0 {
        cell(0);
    }
    if b.x1 == w && w > 1 {
        cell(w - 1);
    }
    fn rows(f: &[f32], w: usize, y: usize, xa: usize, xb: usize) -> [&[f32]; 3] {
        let at = |y: usize| slot(y, w) + xa - 1..slot(y, w) + xb + 1;
        [&f[at(y - 1)], &f[at(y)], &f[at(y + 1)]]
    }
    let input = PassBInput {
        surface: rows(surface, w, y, xa, xb),
        factor: rows(factor, w, y, xa, xb),
        concentration: rows(concentration, w, y, xa, xb),
        steepest: &steepest[xa..xb],
        rain: &rain[xa..xb],
        terrain: &terrain_old[xa..xb],
        water: &water_old[xa..xb],
        sediment: &sediment_old[xa..xb],
    };
    let out = PassBRow {
        terrain: &mut terrain_row[xa..xb],
        water: &mut water_row[xa..xb],
        sediment: &mut sediment_row[xa..xb],
        flow: &mut flow_row[xa..xb],
    };
    pass_b_row_dispatch(p, u, last, kept, input, out);
}

/// What pass A reads for a run of interior cells: the terrain and water rows above, of and below
/// them (one cell wider on each side), the cells' load, and the surface rule.
type PassAInput<'a> = ([&'a [f32]; 3], [&'a [f32]; 3], &'a [f32], Surfaces);

/// Where pass A writes a run of interior cells' fields.
struct PassARow<'a> {
    surface: &'a mut [f32],
    factor: &'a mut [f32],
    concentration: &'a mut [f32],
    steepest: &'a mut [f32],
}

/// [`pass_a_row`], built for AVX-512 or AVX2 where the processor has it (the same bits).
fn pass_a_row_dispatch(input: PassAInput, out: PassARow) {
    by_isa!(pass_a_row_avx512, pass_a_row_avx2, pass_a_row_any, (input, out))
}

/// [`pass_a_row`] with its output rows as separate arguments.
#[inline(always)]
fn pass_a_row_any((t, water, sediment, k): PassAInput, out: PassARow) {
    let PassARow { surface, factor, concentration, steepest } = out;
    pass_a_row(t, water, sediment, k, surface, factor, concentration, steepest)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn pass_a_row_avx2(input: PassAInput, out: PassARow) {
    pass_a_row_any(input, out)
}

/// [`pass_a_row`] compiled for AVX-512F: the compiler's sixteen-lane build of the same
/// operations (IEEE basic operations and selects, no FMA: the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn pass_a_row_avx512(input: PassAInput, out: PassARow) {
    pass_a_row_any(input, out)
}

/// [`pass_b_row`] (its last-iteration instantiation when `last`; adding the discharge to
/// `out.flow` only when `flow`, else leaving `out.flow` alone), built for AVX-512 or AVX2 where
/// the processor has it (the same bits).
fn pass_b_row_dispatch(p: &Hydraulic, u: Update, last: bool, flow: bool, input: PassBInput, out: PassBRow) {
    #[cfg(target_arch = "x86_64")]
    if geogen_simd::enabled(geogen_simd::Isa::Avx512) {
        // SAFETY: the processor supports AVX-512F (an enabled level is a supported one).
        return unsafe { pass_b_row_avx512(p, u, last, flow, input, out) };
    }
    #[cfg(target_arch = "x86_64")]
    if geogen_simd::enabled(geogen_simd::Isa::Avx2) {
        // SAFETY: the processor supports AVX2 (an enabled level is a supported one).
        return unsafe { pass_b_row_avx2(p, u, last, flow, input, out) };
    }
    pass_b_row_any(p, u, last, flow, input, out)
}

/// [`pass_b_row`]'s instantiation for `last` and `flow`.
#[inline(always)]
fn pass_b_row_any(p: &Hydraulic, u: Update, last: bool, flow: bool, input: PassBInput, out: PassBRow) {
    match (last, flow) {
        (true, true) => pass_b_row::<true, true>(p, u, input, out),
        (true, false) => pass_b_row::<true, false>(p, u, input, out),
        (false, true) => pass_b_row::<false, true>(p, u, input, out),
        (false, false) => pass_b_row::<false, false>(p, u, input, out),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn pass_b_row_avx2(p: &Hydraulic, u: Update, last: bool, flow: bool, input: PassBInput, out: PassBRow) {
    pass_b_row_any(p, u, last, flow, input, out)
}

/// [`pass_b_row`] compiled for AVX-512F (sixteen lanes).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn pass_b_row_avx512(p: &Hydraulic, u: Update, last: bool, flow: bool, input: PassBInput, out: PassBRow) {
    pass_b_row_any(p, u, last, flow, input, out)
}

/// Pass A on `surface.len()` interior cells: `t` and `water` hold the terrain and water rows
/// above, of and below them, one cell wider on each side; `sediment` the cells' own load. The
/// neighbours in the order of [`OFFSETS`]; the same operations as the checked walk, with selects
/// for its tests (the surface and the bed of each neighbour are computed where it is visited, by
/// the same [`Surfaces`] functions).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn pass_a_row(
    t: [&[f32]; 3],
    water: [&[f32]; 3],
    sediment: &[f32],
    k: Surfaces,
    surface: &mut [f32],
    factor: &mut [f32],
    conc: &mut [f32],
    steepest: &mut [f32],
) {
    let n = surface.len();
    // Exact lengths: the compiler drops every bounds check below.
    let [tu, tm, td] = t.map(|r| &r[..n + 2]);
    let [wu, wm, wd] = water.map(|r| &r[..n + 2]);
    let sediment = &sediment[..n];
    let (factor, conc, steepest) = (&mut factor[..n], &mut conc[..n], &mut steepest[..n]);
    for i in 0..n {
        let (tc, wc) = (tm[i + 1], wm[i + 1]);
        let sc = k.surface(tc, wc);
        let mut drops = 0.0f32;
        let mut steep = 0.0f32;
        let mut visit = |tj: f32, wj: f32, weight: f32| {
            let d = (sc - k.surface(tj, wj)) * weight;
            drops += if d > 0.0 { d } else { 0.0 };
            steep = if d > steep { d } else { steep };
        };
        visit(tu[i], wu[i], DIAGONAL);
        visit(tu[i + 1], wu[i + 1], 1.0);
        visit(tu[i + 2], wu[i + 2], DIAGONAL);
        visit(tm[i], wm[i], 1.0);
        visit(tm[i + 2], wm[i + 2], 1.0);
        visit(td[i], wd[i], DIAGONAL);
        visit(td[i + 1], wd[i + 1], 1.0);
        visit(td[i + 2], wd[i + 2], DIAGONAL);
        surface[i] = sc;
        steepest[i] = steep;
        // Both shares, then selects (a pit's would be undefined and is not kept).
        let (out, load) = release(wc, sediment[i], steep, k.per_drop);
        let inverse = 1.0 / drops;
        let (q, l) = (out * inverse, load * inverse);
        let flowing = drops > 0.0;
        factor[i] = if flowing { q } else { 0.0 };
        conc[i] = if flowing { l } else { 0.0 };
    }
}

/// The fan drop towards an edge and a corner neighbour (`fan_drop` and `fan_drop × √2`).
pub(crate) fn fan_drops(p: &Hydraulic) -> (f32, f32) {
    (p.fan_drop, p.fan_drop * std::f32::consts::SQRT_2)
}

/// What pass B gathered around one cell.
#[derive(Copy, Clone)]
struct Cell {
    /// Water and load arriving from the higher neighbours.
    inflow: f32,
    sediment_in: f32,
    /// Sum and number of the neighbours' surfaces.
    around: f32,
    count: f32,
    /// The most of `surface_j − fan drop_j` over the neighbours (−∞ with none).
    settle: f32,
    /// The highest of the cell and its neighbours (needed on the last iteration only, for pits).
    rim: f32,
    /// The cell's surface (pass A).
    surface: f32,
    /// The cell's steepest drop of the surface (pass A).
    steep: f32,
}

/// Pass B's constants besides the parameters: the water kept after evaporation
/// (`1 − evaporation`), the sea level, the height a unit of water adds to the surface and the
/// water released per unit of drop.
#[derive(Copy, Clone)]
struct Update {
    keep: f32,
    sea: f32,
    depth: f32,
    per_drop: f32,
}

/// Pass B's update of one cell from its gathered `c` and its state (terrain, water, load): the new
/// state and the discharge through the cell. Branch-free: both the deposit and the erosion are
/// computed and one is selected, the same values as the branches they replace. `rain` is the next
/// rain on the cell (ignored on the last iteration and at sea).
#[inline(always)]
fn pass_b_update<const LAST: bool>(
    p: &Hydraulic,
    u: Update,
    c: Cell,
    (tc, held, load): (f32, f32, f32),
    rain: f32,
) -> (f32, f32, f32, f32) {
    let steep = c.steep;
    // What left the cell in pass A: the water it released and the same share of its load, unless
    // it is a pit (the same function on the same values as pass A).
    let flowing = steep > 0.0;
    let (out, carried) = release(held, load, steep, u.per_drop);
    let sent = if flowing { out } else { 0.0 };
    let carried = if flowing { carried } else { 0.0 };
    let wc = (held - sent) + c.inflow;
    let sc = (load - carried) + c.sediment_in;
    // Land: the terrain pass A saw is above the sea level (else sea).
    let land = tc > u.sea;
    // The discharge through the cell: what left it plus what came in (standing water does not
    // count).
    let discharge = sent + c.inflow;
    let capacity = p.capacity * discharge * (steep * p.slope_scale);
    // Settle where the flow slows, never build a spike: at most up to the neighbours' mean surface
    // (fill hollows and ponds) or, where higher, the highest neighbour's surface less the fan drop
    // (deposits spread as cones of the fan slope).
    let mean = c.around / c.count;
    let limit = if c.settle > mean { c.settle } else { mean };
    let base = if flowing { c.surface } else { tc };
    let room = (limit - base).max(0.0);
    let dropped = (p.deposition * (sc - capacity)).min(room);
    // The sea floor is never cut; the land at most by a share of the steepest drop less the
    // cell's own water (what of the drop is ground: none on a flat floor whatever its puddles).
    let ground = steep - u.depth * held;
    let ground = if ground > 0.0 { ground } else { 0.0 };
    let taken = (p.erosion * (capacity - sc)).min(MAX_CUT * ground);
    let taken = if land { taken } else { 0.0 };
    let deposit = sc > capacity;
    let tc = if deposit { tc + dropped } else { tc - taken };
    let sc = if deposit { sc - dropped } else { sc + taken };
    let wc = wc * u.keep;
    if LAST {
        // What a pit holds settles there, at most up to its highest neighbour; the load still
        // moving leaves with its water (washed out, like the rest of the suspended load at the
        // edge of the map): dumped where the water is, it would raise every channel into a levee.
        let settled = sc.min((c.rim - tc).max(0.0));
        let tc = if steep <= 0.0 { tc + settled } else { tc };
        (tc, wc, 0.0, discharge)
    } else {
        // The rain falls on the land; where the cell is sea now, its water joins the sea (so
        // that a sea cell's surface is the sea level).
        let wc = if tc > u.sea { wc + rain } else { 0.0 };
        (tc, wc, sc, discharge)
    }
}

/// Pass B's inputs for a run of interior cells: pass A's fields on the rows above, of and below
/// them (one cell wider on each side), the cells' steepest drops, the next rain on them, and the
/// cells' state before the iteration.
struct PassBInput<'a> {
    surface: [&'a [f32]; 3],
    factor: [&'a [f32]; 3],
    concentration: [&'a [f32]; 3],
    steepest: &'a [f32],
    rain: &'a [f32],
    /// The cells' state before the iteration.
    terrain: &'a [f32],
    water: &'a [f32],
    sediment: &'a [f32],
}

/// Where pass B writes the new state of a run of interior cells (the flow total is updated in
/// place).
struct PassBRow<'a> {
    terrain: &'a mut [f32],
    water: &'a mut [f32],
    sediment: &'a mut [f32],
    flow: &'a mut [f32],
}

/// Cells per chunk of [`pass_b_row`]: what the chunk's neighbour loop gathers stays in L1 for its
/// update loop.
const PASS_B_CHUNK: usize = 128;

/// Pass B on a run of interior cells: the neighbours at fixed offsets in the order of
/// [`OFFSETS`], the same operations as the checked walk. In chunks of [`PASS_B_CHUNK`] cells, two
/// loops each: the first gathers every cell's sums over its neighbours into small arrays, the
/// second updates the cells from them (the same operations on the same values as one loop doing
/// both; two loops keep the vectorised code's values in registers instead of spilled to the stack).
#[inline(always)]
fn pass_b_row<const LAST: bool, const FLOW: bool>(p: &Hydraulic, u: Update, input: PassBInput, out: PassBRow) {
    let n = out.terrain.len();
    let fan = fan_drops(p);
    let mut gathered = Gathered {
        inflow: [0.0; PASS_B_CHUNK],
        sediment_in: [0.0; PASS_B_CHUNK],
        around: [0.0; PASS_B_CHUNK],
        settle: [0.0; PASS_B_CHUNK],
        rim: [0.0; PASS_B_CHUNK],
    };
    let g = &mut gathered;
    let mut c0 = 0;
    while c0 < n {
        let c1 = (c0 + PASS_B_CHUNK).min(n);
        let m = c1 - c0;
        fn wide(r: [&[f32]; 3], c0: usize, c1: usize) -> [&[f32]; 3] {
            r.map(|r| &r[c0..c1 + 2])
        }
        let s = wide(input.surface, c0, c1);
        pass_b_gather::<LAST>(
            fan,
            s,
            wide(input.factor, c0, c1),
            wide(input.concentration, c0, c1),
            &mut g.inflow[..m],
            &mut g.sediment_in[..m],
            &mut g.around[..m],
            &mut g.settle[..m],
            &mut g.rim[..m],
        );
        pass_b_apply::<LAST, FLOW>(
            p,
            u,
            &s[1][1..m + 1],
            &input.steepest[c0..c1],
            &input.rain[c0..c1],
            &input.terrain[c0..c1],
            &input.water[c0..c1],
            &input.sediment[c0..c1],
            &g.inflow[..m],
            &g.sediment_in[..m],
            &g.around[..m],
            &g.settle[..m],
            &g.rim[..m],
            &mut out.terrain[c0..c1],
            &mut out.water[c0..c1],
            &mut out.sediment[c0..c1],
            &mut out.flow[c0..c1],
        );
        c0 = c1;
    }
}

/// What [`pass_b_gather`] gathers for each cell of a chunk (see [`Cell`]).
struct Gathered {
    inflow: [f32; PASS_B_CHUNK],
    sediment_in: [f32; PASS_B_CHUNK],
    around: [f32; PASS_B_CHUNK],
    settle: [f32; PASS_B_CHUNK],
    rim: [f32; PASS_B_CHUNK],
}

/// The neighbour sums of pass B for a chunk of interior cells: `s`, `f` and `c` are pass A's
/// surface, factor and concentration on the rows above, of and below the cells, one cell wider
/// on each side. Every slice is an argument of its own (and the function inlined): the compiler then knows
/// they do not overlap and vectorises the loop without run-time overlap checks.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn pass_b_gather<const LAST: bool>(
    fan: (f32, f32),
    [su, sm, sd]: [&[f32]; 3],
    [fu, fm, fd]: [&[f32]; 3],
    [cu, cm, cd]: [&[f32]; 3],
    inflow_out: &mut [f32],
    sediment_out: &mut [f32],
    around_out: &mut [f32],
    settle_out: &mut [f32],
    rim_out: &mut [f32],
) {
    let n = inflow_out.len();
    let (fan_edge, fan_corner) = fan;
    // Exact lengths: the compiler drops every bounds check below.
    let (su, sm, sd) = (&su[..n + 2], &sm[..n + 2], &sd[..n + 2]);
    let (fu, fm, fd) = (&fu[..n + 2], &fm[..n + 2], &fd[..n + 2]);
    let (cu, cm, cd) = (&cu[..n + 2], &cm[..n + 2], &cd[..n + 2]);
    let (sediment_out, around_out, settle_out) = (&mut sediment_out[..n], &mut around_out[..n], &mut settle_out[..n]);
    let rim_out = &mut rim_out[..n];
    for i in 0..n {
        let hc = sm[i + 1];
        let mut inflow = 0.0f32;
        let mut sediment_in = 0.0f32;
        let mut settle = f32::NEG_INFINITY;
        let mut around = 0.0f32;
        let mut visit = |sj: f32, fj: f32, cj: f32, weight: f32, fan: f32| {
            around += sj;
            let v = sj - fan;
            settle = if v > settle { v } else { settle };
            let d = (sj - hc) * weight;
            let up = d > 0.0;
            inflow += if up { fj * d } else { 0.0 };
            sediment_in += if up { cj * d } else { 0.0 };
        };
        visit(su[i], fu[i], cu[i], DIAGONAL, fan_corner);
        visit(su[i + 1], fu[i + 1], cu[i + 1], 1.0, fan_edge);
        visit(su[i + 2], fu[i + 2], cu[i + 2], DIAGONAL, fan_corner);
        visit(sm[i], fm[i], cm[i], 1.0, fan_edge);
        visit(sm[i + 2], fm[i + 2], cm[i + 2], 1.0, fan_edge);
        visit(sd[i], fd[i], cd[i], DIAGONAL, fan_corner);
        visit(sd[i + 1], fd[i + 1], cd[i + 1], 1.0, fan_edge);
        visit(sd[i + 2], fd[i + 2], cd[i + 2], DIAGONAL, fan_corner);
        inflow_out[i] = inflow;
        sediment_out[i] = sediment_in;
        around_out[i] = around;
        settle_out[i] = settle;
        if LAST {
            rim_out[i] = hc
                .max(su[i])
                .max(su[i + 1])
                .max(su[i + 2])
                .max(sm[i])
                .max(sm[i + 2])
                .max(sd[i])
                .max(sd[i + 1])
                .max(sd[i + 2]);
        }
    }
}

/// Pass B's update of a chunk of interior cells from what [`pass_b_gather`] gathered.
/// Each slice an argument of its own, as in [`pass_b_gather`]: `hc` the cells' surfaces, then their
/// steepest drops, the next rain, old state, gathered sums, and the new state.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn pass_b_apply<const LAST: bool, const FLOW: bool>(
    p: &Hydraulic,
    u: Update,
    hc: &[f32],
    steepest: &[f32],
    rain: &[f32],
    terrain_old: &[f32],
    water_old: &[f32],
    sediment_old: &[f32],
    inflow: &[f32],
    sediment_in: &[f32],
    around: &[f32],
    settle: &[f32],
    rim: &[f32],
    terrain: &mut [f32],
    water: &mut [f32],
    sediment: &mut [f32],
    flow: &mut [f32],
) {
    let n = terrain.len();
    let (hc, steepest, rain) = (&hc[..n], &steepest[..n], &rain[..n]);
    let (terrain_old, water_old, sediment_old) = (&terrain_old[..n], &water_old[..n], &sediment_old[..n]);
    let (inflow, sediment_in, around) = (&inflow[..n], &sediment_in[..n], &around[..n]);
    let (settle, rim) = (&settle[..n], &rim[..n]);
    let (water, sediment, flow) = (&mut water[..n], &mut sediment[..n], &mut flow[..n]);
    for i in 0..n {
        let rim = if LAST { rim[i] } else { hc[i] };
        let rain = if LAST { 0.0 } else { rain[i] };
        // An interior cell has 8 neighbours: `count` sums eight 1.0s, exactly 8.
        let c = Cell {
            inflow: inflow[i],
            sediment_in: sediment_in[i],
            around: around[i],
            count: 8.0,
            settle: settle[i],
            rim,
            surface: hc[i],
            steep: steepest[i],
        };
        let (tc, wc, sc, discharge) =
            pass_b_update::<LAST>(p, u, c, (terrain_old[i], water_old[i], sediment_old[i]), rain);
        terrain[i] = tc;
        water[i] = wc;
        sediment[i] = sc;
        if FLOW {
            flow[i] += discharge;
        }
    }
}

/// Lifts every land cell of `own` (above `sea_level`) that lies strictly below all eight of its
/// neighbours to the lowest of them, so its water runs on. Hydraulic erosion's last deposits and
/// the noise it starts from leave such one-pixel pits by the hundred, and each would end a flow
/// path; deeper hollows are ponds, left as they are. The cells next to a pit are never pits
/// themselves (the pit is lower), so no lift changes another's and the order does not matter: the
/// rows are examined in parallel, the few lifts applied after. Needs one pixel of `own`'s
/// surroundings in the buffer; cells on the buffer's edge are left.
pub fn lift_pits(map: &mut HeightMap, own: Rect, sea_level: f32) {
    let rect = map.rect();
    let Some(s) = span(rect, own, 0) else { return };
    let (w, h) = (map.width(), map.height());
    let data = map.data();
    let lifts: Vec<(usize, f32)> = (s.y0.max(1)..s.y1.min(h.saturating_sub(1)))
        .into_par_iter()
        .flat_map_iter(|y| {
            (s.x0.max(1)..s.x1.min(w.saturating_sub(1))).filter_map(move |x| {
                let i = y * w + x;
                let c = data[i];
                if c <= sea_level {
                    return None;
                }
                let mut lowest = f32::INFINITY;
                neighbours(x, y, w, h, |j, _| lowest = lowest.min(data[j]));
                (c < lowest).then_some((i, lowest))
            })
        })
        .collect();
    let data = map.data_mut();
    for (i, v) in lifts {
        data[i] = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(w: u64, h: u64, f: impl Fn(i64, i64) -> f32) -> HeightMap {
        map_over(Rect::new(0, 0, w, h), f)
    }

    /// The map over `r` whose pixel at absolute (x, y) is `f(x, y)`.
    fn map_over(r: Rect, f: impl Fn(i64, i64) -> f32) -> HeightMap {
        let data = (0..r.height as i64)
            .flat_map(|y| (0..r.width as i64).map(move |x| (x, y)))
            .map(|(x, y)| f(r.x + x, r.y + y))
            .collect();
        HeightMap::from_data(r, data).unwrap()
    }

    fn total(m: &HeightMap) -> f64 {
        m.data().iter().map(|&v| f64::from(v)).sum()
    }

    /// The whole buffer, every iteration: walls all round, a closed box.
    fn everywhere(m: &HeightMap) -> Rect {
        m.rect().expand(1 << 20)
    }

    fn hydraulic_params(iterations: u32, output: Output) -> Hydraulic {
        Hydraulic {
            iterations,
            rain: 0.002,
            evaporation: 0.02,
            capacity: 40.0,
            erosion: 0.01,
            deposition: 0.3,
            fan_drop: 0.001,
            slope_scale: 1.0,
            area_scale: 1.0,
            // Below every test map (−1 would be sea only where a map reaches it).
            sea_level: -1.0,
            water_depth: WATER_DEPTH as f32,
            storm_spacing: STORM_WAVELENGTH,
            seed: 7,
            output,
        }
    }

    #[test]
    fn thermal_conserves_material_and_respects_the_talus() {
        // A spike on a plain: material slides down until no pair is steeper than the talus.
        let mut m = map(21, 21, |x, y| if (x, y) == (10, 10) { 1.0 } else { 0.0 });
        let before = total(&m);
        let own = everywhere(&m);
        thermal(&mut m, own, Thermal { iterations: 2000, talus: 0.05, rate: 0.125 }).unwrap();
        assert!((total(&m) - before).abs() < 1e-4, "mass {} → {}", before, total(&m));
        let (w, h) = (21usize, 21usize);
        let d = m.data();
        let mut steepest = 0.0f32;
        for y in 0..h {
            for x in 0..w {
                neighbours(x, y, w, h, |j, weight| {
                    let diff = (d[y * w + x] - d[j]).abs();
                    steepest = steepest.max(if weight == 1.0 { diff } else { diff / std::f32::consts::SQRT_2 });
                });
            }
        }
        assert!(steepest <= 0.05 * 1.01, "steepest slope {steepest} above the talus 0.05");
        assert!(d[10 * w + 10] < 0.5, "the spike did not collapse");
    }

    #[test]
    fn thermal_leaves_gentle_slopes_and_flats_alone() {
        let mut ramp = map(9, 5, |x, _| x as f32 * 0.01);
        let expect = ramp.data().to_vec();
        let own = everywhere(&ramp);
        thermal(&mut ramp, own, Thermal { iterations: 10, talus: 0.02, rate: 0.125 }).unwrap();
        assert_eq!(ramp.data(), &expect[..]);
    }

    #[test]
    fn thermal_tile_equals_the_same_rectangle_of_a_larger_buffer() {
        let f = |x: i64, y: i64| ((x * 7919 + y * 104_729) % 97) as f32 / 97.0;
        let iterations = 6;
        let own = Rect::new(3, -2, 7, 5);
        let big_rect = Rect::new(-20, -25, 50, 45);
        let small_rect = own.expand(u64::from(iterations));
        let make = |r: Rect| map_over(r, f);
        let p = Thermal { iterations, talus: 0.1, rate: 0.1 };
        let mut big = make(big_rect);
        thermal(&mut big, big_rect, p).unwrap();
        let mut small = make(small_rect);
        thermal(&mut small, own, p).unwrap();
        for y in own.y..own.y + own.height as i64 {
            for x in own.x..own.x + own.width as i64 {
                assert_eq!(big.get(x, y).unwrap().to_bits(), small.get(x, y).unwrap().to_bits(), "({x}, {y})");
            }
        }
    }

    #[test]
    fn hydraulic_heights_and_masks_stay_in_range_under_extreme_rates() {
        // Heavy rain and a huge capacity on a rough high basin: its closed pits gather the load of
        // their whole catchment, which, settled at the end, stood far above 1 (found by the no_panic
        // property test).
        for output in [Output::Height, Output::Flow, Output::Erosion, Output::Deposition] {
            for rain in [0.1, 1e-30] {
                let mut m = map(40, 40, |x, y| {
                    let (dx, dy) = (x as f32 - 19.5, y as f32 - 19.5);
                    0.2 + (dx * dx + dy * dy) * 0.001 + 0.1 * (((x * 7 + y * 13) % 11) as f32 / 10.0)
                });
                let p = Hydraulic {
                    rain,
                    evaporation: 0.01,
                    capacity: 1000.0,
                    erosion: 1.0,
                    deposition: 1.0,
                    ..hydraulic_params(33, output)
                };
                let own = m.rect();
                hydraulic(&mut m, own, p).unwrap();
                assert!(
                    m.data().iter().all(|h| (-1.0..=1.0).contains(h)),
                    "{output:?} rain {rain}: {:?}",
                    m.data().iter().fold(0.0f32, |a, &b| a.max(b.abs()))
                );
            }
        }
    }

    /// The storm factor (rain 1) of the absolute pixels of `rect` for an iteration's `seed`, on a
    /// lattice of `spacing` pixels, row by row as the kernels compute it.
    fn storm_field(rect: Rect, spacing: f64, seed: u32) -> Vec<f32> {
        let storm = Storm::new(rect, spacing);
        let mut rows = StormRows::new();
        let w = rect.width as usize;
        let mut out = vec![f32::NAN; w * rect.height as usize];
        for (y, row) in out.chunks_mut(w).enumerate() {
            storm.rain_row(&mut rows, seed, 1.0, y, (0, w), row);
        }
        out
    }

    #[test]
    fn storms_are_the_same_in_a_tile_and_in_a_larger_buffer() {
        for spacing in [32.0, 9.6, 1.0, 0.25, 1000.0] {
            for seed in [0u32, 7, 0xdead_beef] {
                let big_rect = Rect::new(-300, -77, 700, 240);
                let big = storm_field(big_rect, spacing, seed);
                for tile in [Rect::new(-13, 5, 37, 29), Rect::new(-300, -77, 1, 1), Rect::new(350, 100, 50, 63)] {
                    let small = storm_field(tile, spacing, seed);
                    for y in 0..tile.height as i64 {
                        for x in 0..tile.width as i64 {
                            let (bx, by) = (tile.x + x - big_rect.x, tile.y + y - big_rect.y);
                            let a = big[(by * big_rect.width as i64 + bx) as usize];
                            let b = small[(y * tile.width as i64 + x) as usize];
                            assert_eq!(
                                a.to_bits(),
                                b.to_bits(),
                                "spacing {spacing}, seed {seed}, tile {tile:?} at ({x}, {y})"
                            );
                        }
                    }
                }
                // A row asked for in pieces is the row asked for whole (the kernels ask for spans).
                let storm = Storm::new(big_rect, spacing);
                let (mut rows, w) = (StormRows::new(), big_rect.width as usize);
                let mut row = vec![f32::NAN; w];
                for (x0, x1) in [(0, 3), (3, 100), (100, 101), (101, w)] {
                    storm.rain_row(&mut rows, seed, 1.0, 11, (x0, x1), &mut row);
                }
                assert!(row.iter().zip(&big[11 * w..12 * w]).all(|(a, b)| a.to_bits() == b.to_bits()));
            }
        }
    }

    #[test]
    fn storms_have_mean_one_and_neighbouring_pixels_correlate() {
        // Over a large area (64 × 64 storm cells) the factor averages 1 (the lattice values are
        // uniform in [−1, 1)), stays in [0.2, 1.8], and varies smoothly: neighbouring pixels are
        // strongly correlated, unlike the white noise per pixel it replaces (whose correlation is
        // about 0).
        let rect = Rect::new(-1000, 3000, 2048, 2048);
        for seed in [1u32, 99] {
            let f = storm_field(rect, 32.0, seed);
            let n = f.len() as f64;
            let mean = f.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
            assert!((mean - 1.0).abs() < 0.03, "mean {mean}");
            assert!(f.iter().all(|v| (0.2..=1.8).contains(v)));
            let var = f.iter().map(|&v| (f64::from(v) - mean).powi(2)).sum::<f64>() / n;
            assert!(var > 0.01, "variance {var}: no storms");
            let w = rect.width as usize;
            // The correlation of each pixel with the pixel (dx, dy) away.
            let correlation = |dx: usize, dy: usize| {
                let (mut cross, mut a2, mut b2) = (0.0, 0.0, 0.0);
                for y in 0..rect.height as usize - dy {
                    for x in 0..w - dx {
                        let a = f64::from(f[y * w + x]) - mean;
                        let b = f64::from(f[(y + dy) * w + x + dx]) - mean;
                        (cross, a2, b2) = (cross + a * b, a2 + a * a, b2 + b * b);
                    }
                }
                cross / (a2 * b2).sqrt()
            };
            let (across, down, far) = (correlation(1, 0), correlation(0, 1), correlation(16, 16));
            eprintln!("seed {seed}: mean {mean}, variance {var}, correlation at 1 px {across}, {down}, at 16 px {far}");
            assert!(across > 0.9 && down > 0.9, "neighbours correlate {across}, {down}");
            assert!(far < across, "the field is smooth over a storm, not constant");
        }
        // Another iteration's seed, another pattern.
        let (a, b) = (storm_field(rect, 32.0, 1), storm_field(rect, 32.0, 2));
        assert!(a.iter().zip(&b).filter(|(a, b)| a != b).count() > a.len() / 2);
    }

    #[test]
    fn hydraulic_flat_map_stays_flat() {
        let mut m = map(16, 16, |_, _| 0.25);
        let own = everywhere(&m);
        hydraulic(&mut m, own, hydraulic_params(30, Output::Height)).unwrap();
        // The storms' rain makes puddles whose water runs to the wetter cells' neighbours, but a flat
        // floor has no drop to cut and the water carries no load: nothing moves.
        assert!(m.data().iter().all(|&v| v == 0.25), "{:?}", m.data());
    }

    /// A closed hollow (the buffer's walls all round, x < 20) whose floor falls gently (0.0002 a
    /// pixel) to its lowest point at (19, 10), cut off from a slope falling to the right by a dam
    /// along x = 20, 0.01 above that point but for a notch only `notch` above it at y = 10.
    fn hollow_behind_a_dam(notch: f32) -> impl Fn(i64, i64) -> f32 {
        move |x, y| match x {
            ..20 => 0.1 + 0.0002 * ((19 - x) + (y - 10).abs()) as f32,
            20 => 0.1 + if y == 10 { notch } else { 0.01 },
            _ => 0.1 - 0.01 * (x - 20) as f32,
        }
    }

    #[test]
    fn hydraulic_ponds_overflow_through_the_low_side_of_their_rim() {
        // The rain on the hollow gathers at its lowest point and raises the water surface there;
        // once that is above the notch, the pond spills through it, while the dam elsewhere (higher
        // than the pond gets) keeps it. No cutting (erosion 0): the water alone. The flow mask
        // shows the water that passes: through the notch, the rain of many pixels of the hollow;
        // on the dam, its own. (Routed on the terrain, as before the water surface was, the lowest
        // point kept all the water for ever: the notch passed its own rain, a mask of 0.023.)
        let p = Hydraulic { rain: 0.01, erosion: 0.0, ..hydraulic_params(100, Output::Flow) };
        let flow_with = |notch: f32| {
            let mut m = map(40, 21, hollow_behind_a_dam(notch));
            let own = everywhere(&m);
            hydraulic(&mut m, own, p).unwrap();
            m
        };
        let spill = flow_with(0.0005);
        let (notch, below, dam) = (spill.get(20, 10).unwrap(), spill.get(22, 10).unwrap(), spill.get(20, 3).unwrap());
        eprintln!("flow mask: notch {notch}, 2 pixels below it {below}, on the dam {dam}");
        // a / (a + 64) = 0.1: the rain of 7 pixels per iteration, over the whole run (the pond
        // fills first, and evaporates as it stands).
        assert!(notch > 0.1 && below > 0.05, "the pond does not spill through the notch: {notch}, {below}");
        assert!(dam < 0.03, "the dam passes water: {dam}");
        // A dam without the notch keeps the pond: where the notch was only its own rain passes.
        let kept = flow_with(0.01).get(20, 10).unwrap();
        eprintln!("without the notch: {kept} on the dam");
        assert!(kept < 0.03, "water crosses a dam higher than the pond: {kept}");
    }

    #[test]
    fn hydraulic_builds_a_delta_at_a_river_mouth_and_leaves_the_sea_floor_alone() {
        // A valley along x = 20 (rows 0..24, steep flanks that send their water to its floor)
        // running into a sea (the rest, below the sea level 0, deepening away from the shore): the
        // load the valley brings settles at its mouth; the sea floor is never cut, and away from
        // the mouth nothing reaches it.
        let (w, h) = (41i64, 56i64);
        let f = |x: i64, y: i64| {
            if y < 24 {
                0.05 + 0.01 * (x - 20).abs() as f32 + 0.004 * (24 - y) as f32
            } else {
                -0.01 - 0.002 * (y - 24) as f32
            }
        };
        let mut m = map(w as u64, h as u64, f);
        let before = m.clone();
        let own = everywhere(&m);
        hydraulic(&mut m, own, Hydraulic { sea_level: 0.0, ..hydraulic_params(60, Output::Height) }).unwrap();
        let change = |x: i64, y: i64| m.get(x, y).unwrap() - before.get(x, y).unwrap();
        let (mut delta, mut highest) = (0.0f64, f32::NEG_INFINITY);
        for y in 24..h {
            for x in 0..w {
                // The sea floor never loses anything.
                assert!(change(x, y) >= 0.0, "the sea floor at ({x}, {y}) was cut by {}", -change(x, y));
                if (x - 20).abs() <= 6 && y < 32 {
                    delta += f64::from(change(x, y));
                    highest = highest.max(m.get(x, y).unwrap());
                }
            }
        }
        let eroded: f64 =
            (0..24).flat_map(|y| (0..w).map(move |x| (x, y))).map(|(x, y)| f64::from((-change(x, y)).max(0.0))).sum();
        eprintln!("delta volume {delta} (of {eroded} eroded), its top at {highest}");
        assert!(delta > 0.1 * eroded, "the mouth holds {delta} of the {eroded} eroded");
        // The steep flanks lose ground to the sea all along the shore, but the valley's load makes
        // the mouth's deposit stand out.
        let column = |x: i64| (24..h).map(|y| f64::from(change(x, y))).sum::<f64>();
        let mouth = (17..=23).map(column).sum::<f64>() / 7.0;
        let elsewhere = (0..w).filter(|x| (x - 20).abs() > 6).map(column).sum::<f64>() / 27.0;
        eprintln!("deposit per column: {mouth} at the mouth, {elsewhere} elsewhere");
        assert!(mouth > 2.0 * elsewhere, "the mouth's deposit {mouth} does not stand out from {elsewhere}");
        // Away from the shore (beyond 12 pixels), the sea floor is exactly as it was.
        for y in 36..h {
            for x in 0..w {
                assert_eq!(m.get(x, y).unwrap(), before.get(x, y).unwrap(), "the sea floor changed at ({x}, {y})");
            }
        }
    }

    #[test]
    fn hydraulic_never_makes_material_in_a_closed_box_and_stays_in_range() {
        let mut m = map(24, 24, |x, y| {
            let (dx, dy) = (x as f32 - 11.5, y as f32 - 11.5);
            0.5 - (dx * dx + dy * dy) * 0.002 + ((x * 31 + y * 17) % 7) as f32 * 0.003
        });
        let before = total(&m);
        let original = m.data().to_vec();
        let own = everywhere(&m);
        hydraulic(&mut m, own, hydraulic_params(60, Output::Height)).unwrap();
        let after = total(&m);
        // Terrain + carried load is conserved step by step; at the end a pit fills only to its
        // rim (the rest is carried off) and heights are clamped to the range, so the terrain never
        // gains (f32 rounding of sums of ~600 numbers of magnitude ≤ 1 over 60 iterations aside).
        // The corners of this box are pits gathering the whole catchment: settling it all there
        // stood as spikes of +20 before.
        assert!(after <= before + 1e-3, "material {before} → {after}");
        assert!(m.data().iter().all(|v| (-1.0..=1.0).contains(v)), "a height outside [-1, 1]");
        assert!(m.data().iter().zip(&original).any(|(a, b)| a != b), "nothing eroded");
    }

    /// Height minus the mean of the 8 neighbours: negative where the pixel lies below its banks.
    fn relief(m: &HeightMap, x: i64, y: i64) -> f32 {
        let around: f32 = [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)]
            .iter()
            .map(|&(dx, dy)| m.get(x + dx, y + dy).unwrap())
            .sum();
        m.get(x, y).unwrap() - around / 8.0
    }

    #[test]
    fn hydraulic_rivers_cut_below_their_banks() {
        // A slope falling towards y = 0 with a shallow V valley along x = 12: the rain on both
        // flanks runs into the valley line and down it. The stream must deepen its bed, not raise a
        // levee (the model before this test settled the moving load where the water was, which
        // lifted the valley line by about its own relief).
        let valley = |x: i64, y: i64| 0.01 * y as f32 + 0.004 * (x - 12).abs() as f32;
        let mut m = map(25, 48, valley);
        let before = m.clone();
        let own = everywhere(&m);
        hydraulic(&mut m, own, hydraulic_params(40, Output::Height)).unwrap();
        let rows = 8..40;
        let n = 32.0;
        let relief_before: f32 = rows.clone().map(|y| relief(&before, 12, y)).sum::<f32>() / n;
        let relief_after: f32 = rows.clone().map(|y| relief(&m, 12, y)).sum::<f32>() / n;
        let change: f32 = rows.clone().map(|y| m.get(12, y).unwrap() - before.get(12, y).unwrap()).sum::<f32>() / n;
        let bank: f32 = rows.clone().map(|y| m.get(9, y).unwrap() - before.get(9, y).unwrap()).sum::<f32>() / n;
        eprintln!("bed change {change}, bank change {bank}, relief {relief_before} -> {relief_after}");
        assert!(change < 0.0 && change < bank, "the bed changed by {change}, a bank 3 pixels away by {bank}");
        assert!(
            relief_after < relief_before - 0.002,
            "the bed's height minus its neighbours' mean went from {relief_before} to {relief_after}"
        );
    }

    /// A steep slope (rows 0..24, falling towards y = 24) cut by a V valley along x = 20 that opens
    /// onto a flat plain (rows 24..56): the load the valley carries settles where the slope drops.
    fn valley_onto_a_plain(x: i64, y: i64) -> f32 {
        let v = 0.004 * (x - 20).abs() as f32;
        if y < 24 {
            0.02 * (24 - y) as f32 + v
        } else {
            0.0
        }
    }

    #[test]
    fn hydraulic_builds_a_fan_where_a_valley_opens_onto_a_plain() {
        let (w, h) = (41usize, 56usize);
        let mut m = map(w as u64, h as u64, valley_onto_a_plain);
        let before = m.clone();
        let own = everywhere(&m);
        let p = hydraulic_params(60, Output::Height);
        hydraulic(&mut m, own, p).unwrap();
        let change = |x: i64, y: i64| m.get(x, y).unwrap() - before.get(x, y).unwrap();
        // The fan: on the plain beyond the foot of the slope (rows 27..45, where a line of deposits
        // along the foot does not reach), 12 pixels either side of the valley line.
        let (mut fan, mut fan_pixels, mut widest) = (0.0f64, 0usize, 0i64);
        for y in 27..45 {
            let mut row_width = 0;
            for x in 8..=32 {
                let c = change(x, y);
                fan += f64::from(c.max(0.0));
                if c > 1e-4 {
                    fan_pixels += 1;
                    row_width += 1;
                }
            }
            widest = widest.max(row_width);
        }
        let eroded: f64 = (0..h as i64)
            .flat_map(|y| (0..w as i64).map(move |x| (x, y)))
            .map(|(x, y)| f64::from((-change(x, y)).max(0.0)))
            .sum();
        eprintln!("fan volume {fan}, {fan_pixels} pixels raised, widest row {widest}; eroded {eroded}");
        // A fan, not a line along the foot: deposits cover a spread of the plain beyond the foot,
        // wider than the valley's channel, and hold a real share of what the slope lost (13 %;
        // the model before, which capped deposits at the neighbours' mean, laid 3 % there; the
        // rest of the load is still moving at the end and washed out).
        assert!(widest >= 9 && fan_pixels >= 100, "the deposits cover {fan_pixels} pixels, at most {widest} in a row");
        assert!(fan > 0.1 * eroded, "the fan holds {fan} of the {eroded} eroded");
        // No spike: no pixel is raised above its highest neighbour (less the fan drop).
        for y in 1..h as i64 - 1 {
            for x in 1..w as i64 - 1 {
                if change(x, y) > 0.0 {
                    let highest = OFFSETS
                        .iter()
                        .map(|&(dx, dy, _)| m.get(x + dx as i64, y + dy as i64).unwrap())
                        .fold(f32::NEG_INFINITY, f32::max);
                    assert!(m.get(x, y).unwrap() <= highest, "a raised pixel ({x}, {y}) stands above its neighbours");
                }
            }
        }
    }

    #[test]
    fn hydraulic_fans_are_lower_with_a_steeper_fan_slope() {
        // The fan slope bounds how high a deposit stands below its highest neighbour: the steeper
        // it is, the less room a deposit has on the plain below the mouth.
        let plain_gain = |fan_drop: f32| {
            let mut m = map(41, 56, valley_onto_a_plain);
            let before = m.clone();
            let own = everywhere(&m);
            hydraulic(&mut m, own, Hydraulic { fan_drop, ..hydraulic_params(60, Output::Height) }).unwrap();
            (27..45)
                .flat_map(|y| (8..=32).map(move |x| (x, y)))
                .map(|(x, y)| f64::from((m.get(x, y).unwrap() - before.get(x, y).unwrap()).max(0.0)))
                .sum::<f64>()
        };
        let gains = [0.0, 0.001, 0.003].map(plain_gain);
        eprintln!("plain gain beyond the foot of the slope, fan drop 0, 0.001, 0.003: {gains:?}");
        assert!(gains[0] > gains[1] && gains[1] > 2.0 * gains[2], "{gains:?}");
    }

    #[test]
    fn hydraulic_water_flows_downhill_and_carves_the_slope() {
        // A plane tilted towards x = 0: the flow mask grows downhill.
        let mut m = map(32, 8, |x, _| x as f32 * 0.01);
        let own = everywhere(&m);
        hydraulic(&mut m, own, hydraulic_params(40, Output::Flow)).unwrap();
        let row: Vec<f32> = (0..32).map(|x| m.get(x, 4).unwrap()).collect();
        assert!(row[2] > row[16] && row[16] > row[29], "flow does not grow downhill: {row:?}");
    }

    #[test]
    fn hydraulic_tile_equals_the_same_rectangle_of_a_larger_buffer_for_every_output() {
        let f = |x: i64, y: i64| ((x * 7919 + y * 104_729) % 97) as f32 / 97.0 * 0.3 + x as f32 * 0.01;
        let iterations = 5;
        let own = Rect::new(-4, 6, 9, 6);
        let big_rect = Rect::new(-30, -10, 60, 50);
        let small_rect = own.expand(u64::from(iterations) * HYDRAULIC_RADIUS);
        let make = |r: Rect| map_over(r, f);
        // No sea and storms larger than the buffer; a sea across the tile (the heights run from
        // about -0.3 on the left to 0.6 on the right) and storms a few pixels wide.
        for (sea_level, storm_spacing) in [(-1.0, STORM_WAVELENGTH), (0.05, 4.5)] {
            for output in [Output::Height, Output::Flow, Output::Erosion, Output::Deposition] {
                let p = Hydraulic { sea_level, storm_spacing, ..hydraulic_params(iterations, output) };
                let mut big = make(big_rect);
                hydraulic(&mut big, big_rect, p).unwrap();
                let mut small = make(small_rect);
                hydraulic(&mut small, own, p).unwrap();
                for y in own.y..own.y + own.height as i64 {
                    for x in own.x..own.x + own.width as i64 {
                        let (a, b) = (big.get(x, y).unwrap(), small.get(x, y).unwrap());
                        assert_eq!(a.to_bits(), b.to_bits(), "{output:?}, sea {sea_level} at ({x}, {y}): {a} vs {b}");
                    }
                }
            }
        }
    }

    /// The output's row (in place) and the storm's pixels forced to the scalar, AVX2 and AVX-512
    /// builds: the same bits, on every 8- and 16-lane tail, with ±0, tiny and huge values,
    /// infinities and NaN, for every output (and a zero rain, whose flow normaliser is infinite).
    #[test]
    fn storm_and_output_rows_are_the_same_on_every_isa() {
        let pool = [0.0f32, -0.0, 0.5, -0.5, 1e-30, -1e-30, 3e38, -3e38, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
        let mut state = 0x2545_f491u32;
        let mut next = || {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            state
        };
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let isas = [SCALAR, AVX2, AVX512].into_iter().filter(|&isa| match isa {
            #[cfg(target_arch = "x86_64")]
            AVX2 => geogen_simd::testable(geogen_simd::Isa::Avx2),
            #[cfg(target_arch = "x86_64")]
            AVX512 => geogen_simd::testable(geogen_simd::Isa::Avx512),
            _ => isa == SCALAR,
        });
        let isas: Vec<u8> = isas.collect();
        for n in [1usize, 7, 8, 9, 15, 16, 17, 31, 33, 127, 128, 129, 255, 300] {
            let mut field = || -> Vec<f32> {
                (0..n)
                    .map(|_| {
                        let r = next();
                        if r % 5 == 0 {
                            pool[(r >> 8) as usize % pool.len()]
                        } else {
                            ((r >> 8) % 64) as f32 * 0.03125 - 1.0
                        }
                    })
                    .collect()
            };
            let (terrain, old, flow) = (field(), field(), field());
            // The storm's pixels: base and rise, every special value, and row weights.
            for sy in [0.0f32, 0.25, 1.0, -0.0, 3e38] {
                let run = |isa: u8| {
                    let mut row = vec![7.0f32; n];
                    match isa {
                        #[cfg(target_arch = "x86_64")]
                        // SAFETY: only where the processor has AVX2 (filtered above).
                        AVX2 => unsafe { storm_pixels_avx2(&terrain, &old, sy, &mut row) },
                        #[cfg(target_arch = "x86_64")]
                        // SAFETY: only where the processor has AVX-512F (filtered above).
                        AVX512 => unsafe { storm_pixels_avx512(&terrain, &old, sy, &mut row) },
                        _ => storm_pixels(&terrain, &old, sy, &mut row),
                    }
                    bits(&row)
                };
                let scalar = run(SCALAR);
                for &isa in &isas {
                    assert_eq!(run(isa), scalar, "storm pixels, isa {isa}, {n} cells, row weight {sy}");
                }
            }
            for rain in [0.002f32, 0.3, 0.0] {
                for output in [Output::Height, Output::Flow, Output::Erosion, Output::Deposition] {
                    let flow_norm = 1.0 / (rain * 3.0) / 0.25;
                    let run = |isa: u8| {
                        let mut row = terrain.clone();
                        match isa {
                            #[cfg(target_arch = "x86_64")]
                            // SAFETY: only where the processor has AVX2 (filtered above).
                            AVX2 => unsafe { output_row_avx2(output, rain, flow_norm, &old, &flow, &mut row) },
                            #[cfg(target_arch = "x86_64")]
                            // SAFETY: only where the processor has AVX-512F (filtered above).
                            AVX512 => unsafe { output_row_avx512(output, rain, flow_norm, &old, &flow, &mut row) },
                            _ => output_row(output, rain, flow_norm, &old, &flow, &mut row),
                        }
                        bits(&row)
                    };
                    let scalar = run(SCALAR);
                    for &isa in &isas {
                        assert_eq!(run(isa), scalar, "output row {output:?}, isa {isa}, {n} cells, rain {rain}");
                    }
                }
            }
        }
    }

    /// The hydraulic row functions built for AVX2 against the same functions built for the base
    /// ISA, bit for bit (but for the sign of a NaN in pass B), on every chunk and vector tail
    /// length of pass B's two loops, with signed zeros, infinities, NaN, huge values and many
    /// equal neighbours.
    #[test]
    fn hydraulic_rows_are_the_same_on_every_isa() {
        let pool = [0.0f32, -0.0, 0.5, -0.5, 1e-30, -1e-30, 3e38, -3e38, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
        let mut state = 0x9e37_79b9u32;
        let mut next = || {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            state
        };
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for n in [1usize, 7, 8, 9, 15, 16, 17, 31, 33, 127, 128, 129, 143, 255, 300] {
            for special in [false, true] {
                let mut field = |len: usize| -> Vec<f32> {
                    (0..len)
                        .map(|_| {
                            let r = next();
                            if special && r % 7 == 0 {
                                pool[(r >> 8) as usize % pool.len()]
                            } else {
                                ((r >> 8) % 16) as f32 * 0.0625 - 0.5
                            }
                        })
                        .collect()
                };
                let t: Vec<Vec<f32>> = (0..3).map(|_| field(n + 2)).collect();
                // Water is never negative; its special values are its own (and NaN).
                let water: Vec<Vec<f32>> =
                    (0..3).map(|_| field(n + 2).into_iter().map(|v| if v < 0.0 { -v } else { v }).collect()).collect();
                let sediment = field(n);
                let t3 = [&t[0][..], &t[1][..], &t[2][..]];
                let w3 = [&water[0][..], &water[1][..], &water[2][..]];
                // A sea level among the heights, none, and a depth and release of the model's and
                // extreme ones.
                let rules = [
                    Surfaces { sea: -1.0, depth: WATER_DEPTH as f32, per_drop: 32.0 },
                    Surfaces { sea: 0.0, depth: 1.0, per_drop: 0.5 },
                    Surfaces { sea: 0.0625, depth: 0.0, per_drop: f32::INFINITY },
                ];
                let run_a = |isa: u8, k: Surfaces| {
                    let mut out = vec![vec![0.0f32; n]; 4];
                    let [s, f, c, st] = &mut out[..] else { unreachable!() };
                    let input = (t3, w3, &sediment[..], k);
                    let row = PassARow { surface: s, factor: f, concentration: c, steepest: st };
                    match isa {
                        #[cfg(target_arch = "x86_64")]
                        // SAFETY: called only where the processor has AVX2 (checked below).
                        AVX2 => unsafe { pass_a_row_avx2(input, row) },
                        #[cfg(target_arch = "x86_64")]
                        // SAFETY: called only where the processor has AVX-512F (checked below).
                        AVX512 => unsafe { pass_a_row_avx512(input, row) },
                        _ => pass_a_row_any(input, row),
                    }
                    out.iter().map(|v| bits(v)).collect::<Vec<_>>()
                };
                let mut rows = || -> [Vec<f32>; 3] { [field(n + 2), field(n + 2), field(n + 2)] };
                let (surface, factor, conc) = (rows(), rows(), rows());
                let (steepest, rain) = (field(n), field(n));
                let old = [field(n), field(n), field(n)];
                let flow0 = field(n);
                let p = hydraulic_params(3, Output::Height);
                let u = Update { keep: 0.98, sea: 0.0, depth: WATER_DEPTH as f32, per_drop: 32.0 };
                let run_b = |isa: u8, last: bool, kept: bool| {
                    fn r3(f: &[Vec<f32>; 3]) -> [&[f32]; 3] {
                        [&f[0][..], &f[1][..], &f[2][..]]
                    }
                    let input = PassBInput {
                        surface: r3(&surface),
                        factor: r3(&factor),
                        concentration: r3(&conc),
                        steepest: &steepest,
                        rain: &rain,
                        terrain: &old[0],
                        water: &old[1],
                        sediment: &old[2],
                    };
                    let mut out = [vec![0.0f32; n], vec![0.0f32; n], vec![0.0f32; n], flow0.clone()];
                    let [terrain, water, sediment, flow] = &mut out;
                    let row = PassBRow { terrain, water, sediment, flow };
                    match isa {
                        #[cfg(target_arch = "x86_64")]
                        // SAFETY: called only where the processor has AVX2 (checked below).
                        AVX2 => unsafe { pass_b_row_avx2(&p, u, last, kept, input, row) },
                        #[cfg(target_arch = "x86_64")]
                        // SAFETY: called only where the processor has AVX-512F (checked below).
                        AVX512 => unsafe { pass_b_row_avx512(&p, u, last, kept, input, row) },
                        _ => pass_b_row_any(&p, u, last, kept, input, row),
                    }
                    out.iter().map(|v| bits(v)).collect::<Vec<_>>()
                };
                #[cfg(target_arch = "x86_64")]
                for (isa, feature) in [(AVX2, "avx2"), (AVX512, "avx512f")] {
                    let present = match feature {
                        "avx2" => geogen_simd::testable(geogen_simd::Isa::Avx2),
                        _ => geogen_simd::testable(geogen_simd::Isa::Avx512),
                    };
                    if !present {
                        continue;
                    }
                    // A NaN's sign may differ (the compiler orders the operands of a commutative
                    // operation as it likes in each build, and x86 returns the first NaN
                    // operand): seen with NaN and infinite inputs in pass B, so NaNs are compared
                    // as NaNs; every other value bit for bit.
                    let nan = |v: Vec<Vec<u32>>| {
                        v.into_iter()
                            .map(|f| {
                                f.into_iter().map(|x| if f32::from_bits(x).is_nan() { u32::MAX } else { x }).collect()
                            })
                            .collect::<Vec<Vec<u32>>>()
                    };
                    for k in rules {
                        assert!(
                            nan(run_a(isa, k)) == nan(run_a(SCALAR, k)),
                            "pass A, {n} cells, {feature}, sea {}",
                            k.sea
                        );
                    }
                    for (last, kept) in [(false, true), (true, true), (false, false), (true, false)] {
                        assert!(
                            nan(run_b(isa, last, kept)) == nan(run_b(SCALAR, last, kept)),
                            "pass B, {n} cells, last {last}, flow kept {kept}, {feature}"
                        );
                    }
                }
                // Either way, the base build is deterministic.
                assert!(run_b(SCALAR, true, true) == run_b(SCALAR, true, true));
                // Without the flow total, the other fields are the same and the flow row untouched.
                for last in [false, true] {
                    let (with, without) = (run_b(SCALAR, last, true), run_b(SCALAR, last, false));
                    assert!(with[..3] == without[..3] && without[3] == bits(&flow0));
                }
            }
        }
    }

    /// The shared-pair thermal block against the plain per-cell sum of eight exchanges, bit for
    /// bit, scalar and AVX2 build each (forced), on values chosen to hit the sign-of-zero and
    /// non-finite cases the proof in [`thermal_block`] covers: equal neighbours, ±0, talus 0,
    /// rate 0, differences that overflow to infinity, infinities and NaN; widths across chunks.
    #[test]
    fn thermal_block_equals_the_plain_sum_on_every_isa() {
        let pool =
            [0.0f32, -0.0, 0.5, -0.5, 0.25, 1e-30, -1e-30, 3e38, -3e38, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
        let mut state = 0x1234_5678u32;
        let mut next = || {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            state
        };
        for (w, rows, special) in [
            (7usize, 3usize, true),
            (17, 3, true),
            (26, 4, true),
            (41, 3, true),
            (57, 3, true),
            (90, 2, true),
            (300, 4, true),
            (600, 5, false),
            (1030, 2, true),
        ] {
            let from: Vec<f32> = (0..(rows + 2) * w)
                .map(|_| {
                    let r = next();
                    if special && r % 5 == 0 {
                        pool[(r >> 8) as usize % pool.len()]
                    } else {
                        // Quantised, so neighbours are often equal.
                        ((r >> 8) % 16) as f32 * 0.125 - 1.0
                    }
                })
                .collect();
            for t in [[0.002f32, 0.002 * std::f32::consts::SQRT_2, 0.0625], [0.0, 0.0, 0.125], [0.125, 0.2, 0.0]] {
                let (xa, xb) = (1, w - 1);
                let mut plain = vec![0.0f32; rows * w];
                for r in 0..rows {
                    for x in xa..xb {
                        let hc = from[(r + 1) * w + x];
                        let mut delta = 0.0f32;
                        for &(dx, dy, diagonal) in &OFFSETS {
                            let j = (r as isize + 1 + dy) as usize * w + (x as isize + dx) as usize;
                            delta += exchange(from[j] - hc, if diagonal { t[1] } else { t[0] }, t[2]);
                        }
                        plain[r * w + x] = hc + delta;
                    }
                }
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                let mut scalar = vec![0.0f32; rows * w];
                thermal_block::<SCALAR>(&from, &mut scalar, w, xa, xb, t);
                assert!(bits(&scalar) == bits(&plain), "scalar, width {w}, {t:?}");
                #[cfg(target_arch = "x86_64")]
                if geogen_simd::testable(geogen_simd::Isa::Avx2) {
                    let mut simd = vec![0.0f32; rows * w];
                    // SAFETY: the processor supports AVX2 (checked above).
                    unsafe { thermal_block_avx2(&from, &mut simd, w, xa, xb, t) };
                    assert!(bits(&simd) == bits(&plain), "AVX2, width {w}, {t:?}");
                }
                #[cfg(target_arch = "x86_64")]
                if geogen_simd::testable(geogen_simd::Isa::Avx512) {
                    let mut simd = vec![0.0f32; rows * w];
                    // SAFETY: the processor supports AVX-512F (checked above).
                    unsafe { thermal_block_avx512(&from, &mut simd, w, xa, xb, t) };
                    assert!(bits(&simd) == bits(&plain), "AVX-512, width {w}, {t:?}");
                }
            }
        }
    }

    /// The blocked schedules (thermal sweeps of several iterations over bands of rows, hydraulic
    /// bands of fused passes) against the reference on buffers large enough for many bands and
    /// sweeps: the same bits over the whole buffer, with `own` inside, at an edge and everywhere,
    /// on 1 and 3 threads.
    #[test]
    fn blocked_schedules_equal_the_reference_across_bands_and_sweeps() {
        use super::super::erosion_reference as reference;
        let f = |x: i64, y: i64| {
            let r = ((x * 7919 + y * 104_729).rem_euclid(97)) as f32 / 97.0;
            ((x as f32 * 0.013 + r * 0.2) * 8.0).floor() / 8.0 * 0.5 + (y as f32 * 0.004) + r * 0.05 - 0.4
        };
        let bits = |m: &HeightMap| m.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        // Thermal: sweeps of 2 to 8 iterations, levels keeping 3 to 40 rows, bands of 1 to 90
        // rows (and the default plan), with `own` everywhere, inside, at an edge, past a corner
        // (spans that end before the last iteration) and outside.
        let (w, h) = (260u64, 90u64);
        let buffer = Rect::new(-100, -40, w, h);
        let plans = [(2, 3, 1), (2, 4, 7), (4, 3, 2), (4, 5, 13), (8, 3, 5), (8, 13, 64), (8, 40, 90), (6, 7, 3)];
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for own in [
                buffer.expand(1 << 20),
                Rect::new(-90, -20, 30, 40),
                Rect::new(150, 30, 40, 40),
                Rect::new(162, 52, 5, 5),
                Rect::new(400, 0, 5, 5),
            ] {
                for iterations in [1, 2, 3, 8, 9, 17] {
                    let p = Thermal { iterations, talus: 0.002, rate: 0.0625 };
                    let mut b = map_over(buffer, f);
                    reference::thermal(&mut b, own, p).unwrap();
                    for (depth, kept, band) in plans {
                        let mut a = map_over(buffer, f);
                        pool.install(|| thermal_with(&mut a, own, p, ThermalPlan { depth, kept, band })).unwrap();
                        assert!(
                            bits(&a) == bits(&b),
                            "thermal {own:?} {iterations} on {threads} threads, plan {depth} {kept} {band}"
                        );
                    }
                    let mut c = map_over(buffer, f);
                    pool.install(|| thermal(&mut c, own, p)).unwrap();
                    assert!(bits(&c) == bits(&b), "thermal {own:?} {iterations} on {threads} threads, default plan");
                }
            }
        }
        // The default plans: 8 iterations per sweep at 4096 and 1024 columns.
        assert_eq!(thermal_plan(4096, 4096, 2, THERMAL_LEVEL_BYTES), ThermalPlan { depth: 8, kept: 12, band: 1024 });
        assert_eq!(thermal_plan(1024, 1024, 1, THERMAL_LEVEL_BYTES), ThermalPlan { depth: 8, kept: 40, band: 512 });
        // Hydraulic: sweeps of 1 to 8 iterations over bands of 1 to 150 rows (and the default).
        let buffer = Rect::new(-20, -70, 43, 150);
        let cuts = [(1, 32), (2, 5), (3, 17), (8, 3), (8, 64), (4, 150), (5, 1)];
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for own in [buffer.expand(1 << 20), Rect::new(-10, -40, 20, 50), Rect::new(0, 50, 30, 40)] {
                for iterations in [1, 2, 9] {
                    // The masks read the map before the erosion while the last sweep writes the
                    // output: with several sweeps (9 iterations) too.
                    let masks: &[Output] = if iterations == 9 { &[Output::Erosion, Output::Deposition] } else { &[] };
                    for (&output, sea_level) in
                        [Output::Height, Output::Flow].iter().chain(masks).flat_map(|o| [(o, -1.0), (o, 0.0)])
                    {
                        // No sea, and a sea over about half of the buffer.
                        let p = Hydraulic { sea_level, storm_spacing: 7.0, ..hydraulic_params(iterations, output) };
                        let mut b = map_over(buffer, f);
                        reference::hydraulic(&mut b, own, p).unwrap();
                        let mut a = map_over(buffer, f);
                        pool.install(|| hydraulic(&mut a, own, p)).unwrap();
                        assert!(bits(&a) == bits(&b), "hydraulic {own:?} {iterations} {output:?} on {threads} threads");
                        for (depth, band) in cuts {
                            let mut a = map_over(buffer, f);
                            pool.install(|| hydraulic_with(&mut a, own, p, depth, band)).unwrap();
                            assert!(
                                bits(&a) == bits(&b),
                                "hydraulic {own:?} {iterations} {output:?} on {threads} threads, sweeps of {depth}, \
                                 bands of {band}"
                            );
                        }
                    }
                }
            }
        }
        // The default cut of a 4096-wide map: 4 iterations per sweep in this budget.
        assert_eq!(hydraulic_blocking(4096, 4096, 2, HYDRAULIC_SWEEP_BYTES).0, 4);
        assert_eq!(hydraulic_blocking(1024, 1024, 2, HYDRAULIC_SWEEP_BYTES), (8, 128));
    }

    /// The row-sliced kernels against the reference (the per-pixel checked walk they replace): the
    /// same bits for every output, on rough terrain with pits, flats and NaN-free extremes, with
    /// `own` inside the buffer (shrinking spans), touching its edges, and the whole buffer.
    #[test]
    fn fast_kernels_equal_the_reference_bit_for_bit() {
        use super::super::erosion_reference as reference;
        let f = |x: i64, y: i64| {
            let r = ((x * 7919 + y * 104_729).rem_euclid(97)) as f32 / 97.0;
            // Terraces (flats and pits) and noise on a slope.
            ((x as f32 * 0.013 + r * 0.2) * 8.0).floor() / 8.0 * 0.5 + (y as f32 * 0.004) + r * 0.05 - 0.4
        };
        let make = |r: Rect| map_over(r, f);
        let buffers =
            [Rect::new(-13, 5, 37, 29), Rect::new(0, 0, 3, 17), Rect::new(4, -2, 1, 9), Rect::new(2, 2, 2, 2)];
        for buffer in buffers {
            let owns = [
                buffer.expand(1 << 20),
                buffer,
                Rect::new(buffer.x + 1, buffer.y + 3, 6, 5),
                Rect::new(buffer.x - 4, buffer.y - 4, 9, 9),
            ];
            for own in owns {
                for iterations in [1, 2, 7] {
                    for (talus, rate) in [(0.002, 0.0625), (0.05, 0.125), (0.0, 0.1)] {
                        let p = Thermal { iterations, talus, rate };
                        let (mut a, mut b) = (make(buffer), make(buffer));
                        thermal(&mut a, own, p).unwrap();
                        reference::thermal(&mut b, own, p).unwrap();
                        let bits = |m: &HeightMap| m.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(&a), bits(&b), "thermal {buffer:?} {own:?} {p:?}");
                    }
                    for output in [Output::Height, Output::Flow, Output::Erosion, Output::Deposition] {
                        // Each with a sea level (none, about half the cells, most) and storms of a
                        // lattice of its own (in pixels: 32, 2.5, and one per pixel).
                        for (rain, capacity, deposition, sea_level, storm_spacing) in [
                            (0.002, 40.0, 0.3, -1.0, 32.0),
                            (0.1, 1000.0, 1.0, 0.0, 2.5),
                            (0.0005, 2.0, 0.05, 0.2, 1.0),
                        ] {
                            let p = Hydraulic {
                                rain,
                                capacity,
                                deposition,
                                sea_level,
                                storm_spacing,
                                ..hydraulic_params(iterations, output)
                            };
                            let (mut a, mut b) = (make(buffer), make(buffer));
                            hydraulic(&mut a, own, p).unwrap();
                            reference::hydraulic(&mut b, own, p).unwrap();
                            let bits = |m: &HeightMap| m.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                            assert_eq!(bits(&a), bits(&b), "hydraulic {buffer:?} {own:?} {p:?}");
                        }
                    }
                }
            }
        }
    }

    /// Hydraulic erosion on tiny and odd buffers (1×1, one row, one column, 2×2, a negative
    /// origin) with the rendering bounds everywhere, equal to the buffer, inside, past a corner,
    /// outside and empty, 0 to 9 iterations, every output and several sweep depths and band
    /// heights on 1 to 3 threads: the same bits as the reference.
    #[test]
    fn hydraulic_equals_the_reference_on_tiny_buffers_with_bounds_anywhere() {
        use super::super::erosion_reference as reference;
        let f = |x: i64, y: i64| {
            let r = ((x * 7919 + y * 104_729).rem_euclid(97)) as f32 / 97.0;
            ((x as f32 * 0.013 + r * 0.2) * 8.0).floor() / 8.0 * 0.5 + (y as f32 * 0.004) + r * 0.05 - 0.4
        };
        let bits = |m: &HeightMap| m.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let buffers = [
            Rect::new(-3, -5, 1, 1),
            Rect::new(-3, -5, 1, 40),
            Rect::new(-3, -5, 40, 1),
            Rect::new(-3, -5, 2, 2),
            Rect::new(-300, -500, 17, 33),
            Rect::new(5, 9, 33, 2),
        ];
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for buffer in buffers {
                let (right, bottom) = (buffer.x + buffer.width as i64, buffer.y + buffer.height as i64);
                let owns = [
                    everywhere(&map_over(buffer, f)),
                    buffer,
                    Rect::new(buffer.x + 1, buffer.y + 1, 1, 1),
                    Rect::new(buffer.x - 4, buffer.y - 4, 5, 5),
                    Rect::new(right + 3, buffer.y, 4, 4),
                    Rect::new(right, bottom, 4, 4),
                    Rect::new(buffer.x, buffer.y, 0, 0),
                ];
                for own in owns {
                    for iterations in [0, 1, 2, 3, 5, 9] {
                        for output in [Output::Height, Output::Flow, Output::Erosion, Output::Deposition] {
                            // A sea over about half of the cells every other iteration count.
                            let sea_level = if iterations % 2 == 1 { 0.0 } else { -1.0 };
                            let p = Hydraulic { sea_level, storm_spacing: 3.0, ..hydraulic_params(iterations, output) };
                            let mut expected = map_over(buffer, f);
                            reference::hydraulic(&mut expected, own, p).unwrap();
                            for (depth, band) in [(1, 1), (2, 1), (3, 2), (8, 5), (4, 100), (2, 3)] {
                                let mut got = map_over(buffer, f);
                                pool.install(|| hydraulic_with(&mut got, own, p, depth, band)).unwrap();
                                assert!(
                                    bits(&got) == bits(&expected),
                                    "{buffer} own {own}, {iterations} iterations, {output:?}, {threads} threads, depth {depth}, band {band}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn lift_pits_lifts_one_pixel_pits_on_land_only() {
        // A slope with a one-pixel pit on land, one at sea and a two-pixel hollow.
        let rect = Rect::new(0, 0, 8, 5);
        let mut data: Vec<f32> = (0..40).map(|i| (i % 8) as f32 * 0.1).collect();
        data[8 + 3] = 0.05; // pit: its neighbours are 0.2 and more
        data[3 * 8 + 1] = -0.5; // at sea (below 0 and below its neighbours)
        data[2 * 8 + 5] = 0.2;
        data[2 * 8 + 6] = 0.1; // a hollow of two: 0.1 and 0.2 under 0.4 and more
        let mut map = HeightMap::from_data(rect, data.clone()).unwrap();
        lift_pits(&mut map, rect, 0.0);
        let out = map.data();
        assert_eq!(out[8 + 3], 0.2, "the pit rises to its lowest neighbour");
        assert_eq!(out[3 * 8 + 1], -0.5, "the sea is left");
        assert_eq!(out[2 * 8 + 6], 0.2, "the hollow's lower pixel rises to the higher");
        let changed: Vec<usize> = (0..40).filter(|&i| out[i] != data[i]).collect();
        assert_eq!(changed, vec![8 + 3, 2 * 8 + 6]);
        // Only the cells of `own` change.
        let mut map = HeightMap::from_data(rect, data.clone()).unwrap();
        lift_pits(&mut map, Rect::new(4, 0, 4, 5), 0.0);
        assert_eq!(map.data()[8 + 3], 0.05);
    }
}
