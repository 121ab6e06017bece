//! `map.Gullies(wavelength = 64, depth = 0.05, octaves = 3, seed = 0)`: the look of water erosion
//! without a simulation: branching gullies carved down the slopes, every pixel computed from its
//! own position and the slope under it, so it needs a halo of one pixel (the slope's stencil) and
//! nothing more, at any size of map or world. (Not in the original GeoGen.)
//!
//! How. At each pixel the slope `g` of the input (central differences) gives the downhill
//! direction. Each octave lays a grid of cells of side λ (the wavelength, halved per octave) with
//! one jittered feature point per cell, hashed from the absolute cell. Around each of the 3 × 3
//! nearest points a family of parallel gullies runs along the current downhill direction, one every
//! λ / 2 across it, the first through the point; their V profile is blended over the 9 points with
//! a weight falling smoothly to 0 at 1.25 λ. Where the blends of neighbouring points meet, gullies
//! merge and fork. The octave's cross-slope derivative is added to the direction the next octave
//! follows, so finer gullies run down the flanks of coarser ones into them: the branching of a
//! drainage network. The carving is scaled by `slope / (slope + 0.01)` (per map unit): flats stay
//! flat, steep flanks get the full `depth`.

use geogen_diag::codes;
use geogen_random::{combine_seeds, hash2};
use geogen_render::raster::saturate;
use geogen_render::{
    Bounds, Effect, HeightMap, KernelContext, Object, ObjectKind, OpContext, Operation, Rect, RenderError,
};
use geogen_vm::{RuntimeError, Value};
use rayon::prelude::*;

use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::noise::floor_i64;

/// The slope (height per map unit) at which the carving reaches half its depth.
const SLOPE_REF: f32 = 0.01;
/// Feature points lie in the middle `JITTER` of their cell.
const JITTER: f32 = 0.5;
/// A point's weight falls to 0 at this many cell sides: no point of a cell two away from the
/// pixel's is that close (they are at least 2 − 0.5 − JITTER / 2 = 1.25 away), so the 3 × 3 cells
/// around the pixel hold every point that counts, and the pixel's own point is always within it
/// (at most √2 × 0.75 ≈ 1.06 away), so the weights never all vanish.
const REACH: f32 = 1.25;
/// Gullies per cell side, across the slope.
const GULLIES_PER_CELL: f32 = 2.0;
/// Rows per rayon task at least.
const MIN_ROWS_PER_TASK: usize = 4;

/// The deepest a gully may cut at a pixel, as a fraction of the pixel's drop to its lowest
/// neighbour: cuts only lower the terrain, so that neighbour stays lower than the cut pixel, and
/// a pixel with a way down keeps one. The gullies add no pit to their input, at any scale (the
/// cut is shallower on gentle ground and where pixels are small).
const NO_PIT: f32 = 0.9;

#[derive(Clone, Debug, PartialEq)]
pub struct Gullies {
    /// Cell side of the coarsest octave, map units.
    pub wavelength: f64,
    /// Deepest cut, height units.
    pub depth: f64,
    pub octaves: u32,
    /// Combined with the script seed.
    pub seed: u32,
    /// Whether a flow map (upstream area in [0, 1], as `Drainage`'s "flow") scales the depth.
    pub flow: bool,
}

impl Gullies {
    /// Carves `map` over `own` at render scale `scale` (the operation's kernel; for benchmarks).
    pub fn carve_map(&self, map: &mut HeightMap, own: Rect, scale: f64) -> Result<(), RenderError> {
        gullies(map, own, self, scale)
    }
}

impl Declared for Gullies {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Gullies",
        receiver: Receiver::Method,
        params: &[
            Param::new("wavelength", Kind::Range { min: 1.0, max: 1e9, code: codes::GGE2740 }).or(64.0),
            Param::new("depth", Kind::Range { min: 0.0, max: 1.0, code: codes::GGE2753 }).or(0.05),
            Param::new("octaves", Kind::Range { min: 1.0, max: 16.0, code: codes::GGE2741 }).or(3.0),
            Param::seed("seed"),
            Param::map("flow").optional(),
        ],
        checks: &[],
        family: Family::Filter,
        summary: "The look of water erosion without a simulation: carves branching gullies down the slopes \
                  of the map, each pixel from its position and the slope under it only, so its halo is one \
                  pixel whatever the map size (for infinite worlds, where `HydraulicErosion`'s halo is too \
                  dear). `octaves` (whole, in [1, 16], GGE2741) of gullies, the coarsest `wavelength` map \
                  units apart per pair (in [1, 1e9], GGE2740), each octave half as wide and deep as the one \
                  before and following the flanks of the coarser ones; at most `depth` deep (height units, \
                  in [0, 1], GGE2753), scaled by slope / (slope + 0.01) so flats stay flat (heights \
                  saturate to [-1, 1]), and where the slope is gentle at most half the slope × `wavelength` ÷ \
                  `octaves`, so every gully's floor still runs downhill and no cut closes a pit. `seed` moves \
                  the pattern (with the script seed). `flow`, a map of upstream area in [0, 1] (`Drainage`'s \
                  \"flow\" output), scales the depth pixel by pixel: gullies deepen downstream and fade on \
                  the ridges. See docs/erosion.md. Not in the original.",
        examples: &[Example {
            // No slope, no gullies: a flat map stays exactly as it was.
            script: "yield HeightMap.Flat(0.25).Gullies(8, 0.5);",
            size: (6, 4),
            expect: &[(0, 0, 0.25), (3, 2, 0.25), (5, 3, 0.25)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let flow = call.opt_object("flow")?;
        let op = Gullies {
            wavelength: call.number("wavelength")?,
            depth: call.number("depth")?,
            octaves: libm::trunc(call.number("octaves")?) as u32,
            seed: combine_seeds(&[call.seed("seed")?, rec.script_seed()]),
            flow: flow.is_some(),
        };
        rec.modify(op, flow.as_slice())
    }
}

impl Operation for Gullies {
    fn name(&self) -> &str {
        "HeightMap.Gullies"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        if self.flow {
            &[ObjectKind::Map, ObjectKind::Map]
        } else {
            &[ObjectKind::Map]
        }
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!("{}, {}, {}, {:#x}", self.wavelength, self.depth, self.octaves, self.seed)
    }
    /// The slope's central differences read one pixel all round, at any scale; the flow map is
    /// read at the pixel only.
    fn required_bounds(&self, own: Bounds, _: &OpContext) -> Vec<Bounds> {
        let mut needs = vec![Bounds::Map(own.rect().expand(1))];
        if self.flow {
            needs.push(own);
        }
        needs
    }
    /// The carved rows are computed apart from the input they read: one `f32` per rendered pixel.
    fn extra_memory(&self, extent: Bounds, _: &OpContext) -> u64 {
        extent.pixels().saturating_mul(4)
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        let flow = match inputs.first() {
            Some(object) => Some(object.as_map()?),
            None => None,
        };
        gullies_with(target.as_map_mut()?, ctx.bounds.rect(), self, ctx.scale, flow)
    }
}

/// The octave parameters, in map units.
struct Octave {
    /// 1 / cell side.
    inverse: f64,
    /// Share of the depth.
    amplitude: f32,
    seed: u32,
}

/// Carves `map` over `own` (the buffer must hold `own` grown by one pixel, or end where the map
/// ends: a neighbour outside the buffer is read as the pixel itself).
pub fn gullies(map: &mut HeightMap, own: Rect, p: &Gullies, scale: f64) -> Result<(), RenderError> {
    gullies_with(map, own, p, scale, None)
}

/// [`gullies`] with a flow map scaling the depth pixel by pixel (outside its extent: 0, uncut).
pub fn gullies_with(
    map: &mut HeightMap,
    own: Rect,
    p: &Gullies,
    scale: f64,
    flow: Option<&HeightMap>,
) -> Result<(), RenderError> {
    let rect = map.rect();
    let r = own.intersect(&rect);
    if r.is_empty() || p.depth <= 0.0 {
        return Ok(());
    }
    let (w, h) = (map.width(), rect.height as usize);
    let (x0, y0) = ((r.x - rect.x) as usize, (r.y - rect.y) as usize);
    let (rw, rh) = (r.width as usize, r.height as usize);
    let mut out = Vec::new();
    out.try_reserve_exact(rw * rh).map_err(|_| RenderError::Allocation { bytes: (rw * rh) as u64 * 4 })?;
    out.resize(rw * rh, 0.0f32);
    let mut octaves = Vec::new();
    let mut cell = p.wavelength;
    let mut amplitude = 1.0f32;
    let mut total = 0.0f32;
    for o in 0..p.octaves {
        octaves.push(Octave { inverse: 1.0 / cell, amplitude, seed: combine_seeds(&[p.seed, o]) });
        total += amplitude;
        cell *= 0.5;
        amplitude *= 0.5;
    }
    for o in &mut octaves {
        o.amplitude /= total;
    }
    let depth = p.depth as f32;
    let (unit, slope_scale) = (1.0 / scale, (scale * 0.5) as f32);
    let data = map.data();
    let level = geogen_simd::active();
    out.par_chunks_mut(rw).with_min_len(MIN_ROWS_PER_TASK).enumerate().for_each(|(row, line)| {
        let y = y0 + row;
        let (up, down) = (if y > 0 { y - 1 } else { y }, if y + 1 < h { y + 1 } else { y });
        let ay = rect.y + y as i64;
        let flow_row: Option<Vec<f32>> =
            flow.map(|f| (0..rw).map(|c| flow_factor(f.get(r.x + c as i64, ay).unwrap_or(0.0))).collect());
        let row = Row {
            above: &data[up * w..(up + 1) * w],
            here: &data[y * w..(y + 1) * w],
            below: &data[down * w..(down + 1) * w],
            flow: flow_row.as_deref(),
            x0,
            map_x: rect.x,
            py: ay as f64 * unit,
            unit,
            slope_scale,
        };
        carve_row(level, &row, &octaves, depth, line);
    });
    // Back into the map on every core (nothing serial scales with the pixels).
    map.data_mut()[y0 * w..(y0 + rh) * w]
        .par_chunks_mut(w)
        .zip(out.par_chunks(rw))
        .with_min_len(MIN_ROWS_PER_TASK)
        .for_each(|(row, line)| row[x0..x0 + rw].copy_from_slice(line));
    Ok(())
}

/// What one output row reads: three rows of the buffer (the row above and below are the row itself
/// at the buffer's edge) and where the row lies on the map.
struct Row<'a> {
    above: &'a [f32],
    here: &'a [f32],
    below: &'a [f32],
    /// The flow map on the output row (a factor of the depth per output column), if any.
    flow: Option<&'a [f32]>,
    /// The buffer column of the output row's first pixel.
    x0: usize,
    /// The buffer's first column on the map, in pixels.
    map_x: i64,
    /// The row's position on the map, in map units.
    py: f64,
    /// Map units per pixel.
    unit: f64,
    /// Half a pixel per map unit: central differences to a slope per map unit.
    slope_scale: f32,
}

impl Row<'_> {
    /// The input height at output column `col` and its slope per map unit. At the map's edge the
    /// neighbour outside is the pixel itself, which halves the slope there, the same in every
    /// tile: the buffer ends there in every render.
    #[inline(always)]
    fn sample(&self, col: usize) -> (f32, f32, f32) {
        let x = self.x0 + col;
        let w = self.here.len();
        let (left, right) = (if x > 0 { x - 1 } else { x }, if x + 1 < w { x + 1 } else { x });
        let gx = (self.here[right] - self.here[left]) * self.slope_scale;
        let gy = (self.below[x] - self.above[x]) * self.slope_scale;
        (self.here[x], gx, gy)
    }

    /// The depth factor of output column `col`: the flow map's value, or 1.
    #[inline(always)]
    fn flow(&self, col: usize) -> f32 {
        self.flow.map_or(1.0, |f| f[col])
    }

    /// The deepest cut at output column `col` for a depth of `depth` (see [`strength`]): from the
    /// slope, the drop to the lowest of the 8 neighbours (at the buffer's edge a neighbour outside
    /// is the pixel itself) and the flow map.
    #[inline(always)]
    fn deepest(&self, col: usize, depth: f32) -> f32 {
        let (centre, gx, gy) = self.sample(col);
        let x = self.x0 + col;
        let w = self.here.len();
        let (left, right) = (if x > 0 { x - 1 } else { x }, if x + 1 < w { x + 1 } else { x });
        let mut lowest = centre;
        for line in [self.above, self.here, self.below] {
            for v in [line[left], line[x], line[right]] {
                lowest = if v < lowest { v } else { lowest };
            }
        }
        let slope2 = gx * gx + gy * gy;
        strength(depth, slope2.sqrt(), centre - lowest, self.flow(col))
    }

    /// The map position of output column `col`, in map units.
    #[inline(always)]
    fn px(&self, col: usize) -> f64 {
        (self.map_x + (self.x0 + col) as i64) as f64 * self.unit
    }
}

/// Where the flow map says a channel begins, and where it is a river: between them the gullies
/// fade out, so they carve the slopes that feed the rivers and leave the rivers' beds alone.
const CHANNEL: (f32, f32) = (0.38, 0.48);

/// The depth factor of a flow value `f` (upstream area, log-scaled to [0, 1], as `Drainage`'s
/// "flow"): growing with the area on the slopes (gullies deepen downstream), fading to 0 in the
/// channels.
fn flow_factor(f: f32) -> f32 {
    let f = if f.is_nan() { 0.0 } else { f.clamp(0.0, 1.0) };
    let t = ((f - CHANNEL.0) / (CHANNEL.1 - CHANNEL.0)).clamp(0.0, 1.0);
    f / CHANNEL.0.max(f) * (1.0 - t * t * (3.0 - 2.0 * t))
}

/// The deepest cut at a pixel of slope `slope` (per map unit) whose drop to its lowest neighbour
/// is `drop`, where the flow map scales the depth by `flow`: the depth × the flow × slope / (slope
/// + [`SLOPE_REF`]), so flats stay flat, but no more than [`NO_PIT`] × the drop.
#[inline(always)]
fn strength(depth: f32, slope: f32, drop: f32, flow: f32) -> f32 {
    let wanted = depth * flow * (slope / (slope + SLOPE_REF));
    let allowed = NO_PIT * drop;
    if wanted < allowed {
        wanted
    } else {
        allowed
    }
}

/// One output row carved on the instruction set `level` (the process's; the tests force each,
/// where the processor has it): [`carve`] for every pixel, the vector builds for groups of them.
fn carve_row(level: geogen_simd::Isa, row: &Row<'_>, octaves: &[Octave], depth: f32, line: &mut [f32]) {
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if level == geogen_simd::Isa::Avx512 && level.is_supported() {
        // SAFETY: the processor has the AVX-512 level (checked just above).
        done = unsafe { carve_row_avx512(row, octaves, depth, line) };
    } else if level == geogen_simd::Isa::Avx2 && level.is_supported() {
        // SAFETY: the processor has the AVX2 level (checked just above).
        done = unsafe { carve_row_avx2(row, octaves, depth, line) };
    }
    let _ = level;
    for (col, v) in line.iter_mut().enumerate().skip(done) {
        let (centre, gx, gy) = row.sample(col);
        let most = row.deepest(col, depth);
        *v = saturate(centre + carve(row.px(col), row.py, gx, gy, octaves, most));
    }
}

/// The nine feature points around cell (`cell_x`, `cell_y`) of an octave, as offsets from the
/// cell's corner in cell sides, rows of cells (j) outer and columns (i) inner: one jittered point
/// per cell, hashed from the absolute cell and the octave's seed. (`cell_y` is the row's low 32
/// bits: all the hash takes.)
fn feature_offsets(seed: u32, cell_x: i64, cell_y: u32) -> ([f32; 9], [f32; 9]) {
    // hash3(seed, x, y) = hash2(hash2(seed, x), y): the column halves once per column.
    let columns = [-1i64, 0, 1].map(|i| hash2(seed, cell_x.wrapping_add(i) as u32));
    let (mut x, mut y) = ([0.0f32; 9], [0.0f32; 9]);
    let mut k = 0;
    for j in -1i32..=1 {
        for (i, &column) in (-1i32..=1).zip(&columns) {
            let hash = hash2(column, cell_y.wrapping_add(j as u32));
            let jx = (hash & 0xffff) as f32 * (1.0 / 65536.0);
            let jy = (hash >> 16) as f32 * (1.0 / 65536.0);
            x[k] = i as f32 + 0.5 + JITTER * (jx - 0.5);
            y[k] = j as f32 + 0.5 + JITTER * (jy - 0.5);
            k += 1;
        }
    }
    (x, y)
}

/// The (negative) height the gullies add at map position (px, py) where the input's slope is
/// (gx, gy) and the deepest cut `most` (as [`Row::deepest`]).
#[inline]
fn carve(px: f64, py: f64, gx: f32, gy: f32, octaves: &[Octave], most: f32) -> f32 {
    let slope2 = gx * gx + gy * gy;
    if slope2 <= 0.0 {
        return 0.0;
    }
    let strength = most;
    // The direction the gullies follow: the input's slope plus the flanks of the coarser gullies.
    let (mut dx, mut dy) = (gx, gy);
    let mut sum = 0.0f32;
    for o in octaves {
        let length2 = dx * dx + dy * dy;
        if length2 <= 0.0 {
            break;
        }
        let length = length2.sqrt();
        // Across the slope (unit vector).
        let (ax, ay) = (-dy / length, dx / length);
        let (cx, cy) = (px * o.inverse, py * o.inverse);
        let (ix, iy) = (floor_i64(cx), floor_i64(cy));
        // The position within the cell, in cell sides.
        let (fx, fy) = ((cx - ix as f64) as f32, (cy - iy as f64) as f32);
        let (mut weights, mut profile, mut derivative) = (0.0f32, 0.0f32, 0.0f32);
        let (offset_x, offset_y) = feature_offsets(o.seed, ix, iy as u32);
        for (&offset_x, &offset_y) in offset_x.iter().zip(&offset_y) {
            // From the feature point to the pixel, in cell sides.
            let vx = fx - offset_x;
            let vy = fy - offset_y;
            let d2 = (vx * vx + vy * vy) * (1.0 / (REACH * REACH));
            // Branch-free: a point out of reach weighs 0 and adds exactly nothing.
            let fall = (1.0 - d2).max(0.0);
            let weight = fall * fall;
            // Across the slope, in gully spacings: a triangle wave, 0 on a gully's floor, 1 on
            // the ridge between two.
            let t = (vx * ax + vy * ay) * GULLIES_PER_CELL;
            // |t| ≤ REACH × GULLIES_PER_CELL, so the truncation is exact and the nearest whole
            // number is found without a floor call.
            let u = t + 0.5;
            let whole = u as i32 as f32;
            let nearest = if whole > u { whole - 1.0 } else { whole };
            let off = t - nearest;
            let tri = off.abs() * 2.0;
            // A V with rounded ridges: s = tri × (2 − tri); ds/dt = (2 − 2 tri) × 2 × sign.
            profile += weight * (tri * (2.0 - tri));
            let slope_s = (2.0 - 2.0 * tri) * 2.0;
            derivative += weight * if off < 0.0 { -slope_s } else { slope_s };
            weights += weight;
        }
        if weights <= 0.0 {
            continue;
        }
        let amount = strength * o.amplitude;
        sum += amount * (profile / weights - 1.0);
        // The gullies' cross-slope gradient, per map unit, steers the finer octaves.
        let g = amount * (derivative / weights) * GULLIES_PER_CELL * o.inverse as f32;
        dx += g * ax;
        dy += g * ay;
    }
    sum
}

/// [`carve`] `LANES` pixels at a time in `f32` lanes: the same operations in the same order, so
/// the same bits. The octave's early exits become lane masks: a lane whose direction vanished
/// (`break`) stays inactive, one without weight (`continue`) keeps its sum and direction. A group
/// with a slope too large or not finite is left to the scalar code, so no lane meets an overflow,
/// NaN or out-of-range conversion that the lanes would handle differently.
mod lanes {
    use super::{carve, feature_offsets, saturate, Octave, Row, GULLIES_PER_CELL, JITTER, REACH};
    use geogen_kernels::lanes::{Lanes, Vf, Vi, MAX_LANES};
    use geogen_kernels::noise::floor_i64;

    /// Slopes up to this size keep every intermediate of [`carve`] finite: the squares stay below
    /// 10^31, and each octave turns the direction by at most 8 × 2^15 per map unit.
    const LARGEST_SLOPE: f32 = 1e15;
    /// Octaves are at most 16 (GGE2741).
    const MOST_OCTAVES: usize = 16;

    /// `geogen_random::hash2` in lanes (wrapping `u32` arithmetic, as the lanes' `mul_i` gives).
    #[inline(always)]
    fn hash2<L: Lanes>(a: Vi<L>, b: Vi<L>) -> Vi<L> {
        let mixed = a * Vi::splat(1028385129) + b * Vi::splat(945191568) + Vi::splat(2015177);
        let mut x = mixed ^ Vi::splat(1028385129);
        x = (x.shr::<16>() ^ x) * Vi::splat(4256233);
        x = (x.shr::<16>() ^ x) * Vi::splat(4256249);
        x.shr::<16>() ^ x
    }

    /// Carves the longest prefix of `line` that is a multiple of `L::LANES` pixels; returns its
    /// length.
    #[inline(always)]
    pub(super) fn carve_row<L: Lanes>(row: &Row<'_>, octaves: &[Octave], depth: f32, line: &mut [f32]) -> usize {
        if octaves.len() > MOST_OCTAVES {
            return 0;
        }
        let lanes = L::LANES;
        // The row's cell and position in it, per octave: the same for all its pixels.
        let mut rows = [(0u32, 0.0f32); MOST_OCTAVES];
        for (cell, o) in rows.iter_mut().zip(octaves) {
            let cy = row.py * o.inverse;
            let iy = floor_i64(cy);
            *cell = (iy as u32, (cy - iy as f64) as f32);
        }
        let mut shared = [SharedCell::NONE; MOST_OCTAVES];
        let n = line.len() / lanes * lanes;
        for start in (0..n).step_by(lanes) {
            let mut group = Group::default();
            let mut tame = true;
            for lane in 0..lanes {
                (group.centre[lane], group.gx[lane], group.gy[lane]) = row.sample(start + lane);
                group.px[lane] = row.px(start + lane);
                tame &= group.gx[lane].abs() <= LARGEST_SLOPE && group.gy[lane].abs() <= LARGEST_SLOPE;
                // Each lane's deepest cut, as the scalar code computes it (the same bits).
                group.strength[lane] = row.deepest(start + lane, depth);
            }
            let out = &mut line[start..start + lanes];
            if !tame {
                for (lane, out) in out.iter_mut().enumerate() {
                    let (px, gx, gy, strength) = (group.px[lane], group.gx[lane], group.gy[lane], group.strength[lane]);
                    *out = saturate(group.centre[lane] + carve(px, row.py, gx, gy, octaves, strength));
                }
                continue;
            }
            let sum = carve_group::<L>(&group, &rows[..octaves.len()], &mut shared, octaves);
            let h = Vf::<L>::load(&group.centre) + sum;
            // saturate: NaN to 0, then the clamp to [-1, 1] by comparisons (signed zeros kept).
            let (one, minus_one) = (Vf::splat(1.0), Vf::splat(-1.0));
            let low = Vf::select(h.lt(minus_one), minus_one, h);
            let high = Vf::select(low.gt(one), one, low);
            Vf::select(h.is_nan(), Vf::splat(0.0), high).store(out);
        }
        n
    }

    /// The inputs of one group of pixels, lane by lane (the first `LANES` of each array).
    struct Group {
        centre: [f32; MAX_LANES],
        gx: [f32; MAX_LANES],
        gy: [f32; MAX_LANES],
        px: [f64; MAX_LANES],
        strength: [f32; MAX_LANES],
    }

    impl Default for Group {
        fn default() -> Group {
            Group {
                centre: [0.0; MAX_LANES],
                gx: [0.0; MAX_LANES],
                gy: [0.0; MAX_LANES],
                px: [0.0; MAX_LANES],
                strength: [0.0; MAX_LANES],
            }
        }
    }

    /// The feature points around one cell of an octave, as offsets from the pixel's cell in cell
    /// sides (`i + 0.5 + JITTER × (jitter − 0.5)` of [`carve`]), kept while the pixels of group
    /// after group of a row lie in that cell: the coarse octaves then hash nine points once per
    /// cell and row instead of once per pixel.
    #[derive(Clone, Copy)]
    struct SharedCell {
        cell: Option<i64>,
        x: [f32; 9],
        y: [f32; 9],
    }

    impl SharedCell {
        const NONE: SharedCell = SharedCell { cell: None, x: [0.0; 9], y: [0.0; 9] };

        /// The offsets of [`carve`]'s nine points around cell (`cell`, `row`), in its order.
        fn of(seed: u32, cell: i64, row: u32) -> SharedCell {
            let (x, y) = feature_offsets(seed, cell, row);
            SharedCell { cell: Some(cell), x, y }
        }
    }

    /// [`carve`] of a group whose slopes are at most [`LARGEST_SLOPE`].
    #[inline(always)]
    fn carve_group<L: Lanes>(
        group: &Group,
        rows: &[(u32, f32)],
        shared: &mut [SharedCell; MOST_OCTAVES],
        octaves: &[Octave],
    ) -> Vf<L> {
        let lanes = L::LANES;
        let zero = Vf::<L>::splat(0.0);
        let (one, half, two) = (Vf::splat(1.0), Vf::splat(0.5), Vf::splat(2.0));
        let jitter = Vf::splat(JITTER);
        let per_reach2 = Vf::splat(1.0 / (REACH * REACH));
        let per_unit = Vf::splat(1.0 / 65536.0);
        let gullies = Vf::splat(GULLIES_PER_CELL);
        let low16 = Vi::<L>::splat(0xffff);
        let (gx, gy) = (Vf::<L>::load(&group.gx), Vf::<L>::load(&group.gy));
        let slope2 = gx * gx + gy * gy;
        // `<= 0` returns early in the scalar code; its negation keeps the lanes going.
        let mut active = slope2.not_le(zero);
        let strength = Vf::<L>::load(&group.strength);
        let (mut dx, mut dy) = (gx, gy);
        let mut sum = zero;
        for ((o, &(iy, fy)), shared) in octaves.iter().zip(rows).zip(shared.iter_mut()) {
            let length2 = dx * dx + dy * dy;
            active = L::and_m(active, length2.not_le(zero));
            if !L::any(active) {
                break;
            }
            let length = length2.sqrt();
            let (ax, ay) = (-dy / length, dx / length);
            let (mut cells, mut fx) = ([0i64; MAX_LANES], [0.0f32; MAX_LANES]);
            for lane in 0..lanes {
                let cx = group.px[lane] * o.inverse;
                cells[lane] = floor_i64(cx);
                fx[lane] = (cx - cells[lane] as f64) as f32;
            }
            let fx = Vf::<L>::load(&fx);
            let fy = Vf::splat(fy);
            // The nine points' offsets from each lane's cell: from the row's kept cell when all
            // the group's pixels share one, else hashed in the lanes.
            let (mut offset_x, mut offset_y) = ([zero; 9], [zero; 9]);
            if cells[..lanes].iter().all(|&c| c == cells[0]) {
                if shared.cell != Some(cells[0]) {
                    *shared = SharedCell::of(o.seed, cells[0], iy);
                }
                for k in 0..9 {
                    offset_x[k] = Vf::splat(shared.x[k]);
                    offset_y[k] = Vf::splat(shared.y[k]);
                }
            } else {
                let mut low_cells = [0i32; MAX_LANES];
                for lane in 0..lanes {
                    low_cells[lane] = cells[lane] as i32;
                }
                let ix = Vi::<L>::load(&low_cells);
                let seed = Vi::splat(o.seed as i32);
                // Not `[-1, 0, 1].map(..)`: a closure is compiled apart, without the instruction set.
                let columns = [hash2(seed, ix + Vi::splat(-1)), hash2(seed, ix), hash2(seed, ix + Vi::splat(1))];
                let mut k = 0;
                for j in -1i32..=1 {
                    let cell_row = Vi::splat(iy.wrapping_add(j as u32) as i32);
                    for (i, &column) in (-1i32..=1).zip(&columns) {
                        let hash = hash2(column, cell_row);
                        let jx = (hash & low16).to_f() * per_unit;
                        let jy = hash.shr::<16>().to_f() * per_unit;
                        offset_x[k] = Vf::splat(i as f32 + 0.5) + jitter * (jx - half);
                        offset_y[k] = Vf::splat(j as f32 + 0.5) + jitter * (jy - half);
                        k += 1;
                    }
                }
            }
            let (mut weights, mut profile, mut derivative) = (zero, zero, zero);
            for k in 0..9 {
                let vx = fx - offset_x[k];
                let vy = fy - offset_y[k];
                let d2 = (vx * vx + vy * vy) * per_reach2;
                // `max` gives its second operand for a NaN, as `f32::max` gives the non-NaN one.
                let fall = (one - d2).max(zero);
                let weight = fall * fall;
                let t = (vx * ax + vy * ay) * gullies;
                let u = t + half;
                let whole = u.trunc().to_f();
                let nearest = Vf::select(whole.gt(u), whole - one, whole);
                let off = t - nearest;
                let tri = off.abs() * two;
                profile = profile + weight * (tri * (two - tri));
                let slope_s = (two - two * tri) * two;
                let signed = Vf::select(off.lt(zero), -slope_s, slope_s);
                derivative = derivative + weight * signed;
                weights = weights + weight;
            }
            // `weights <= 0` skips the octave in the scalar code.
            let update = L::and_m(active, weights.not_le(zero));
            let amount = strength * Vf::splat(o.amplitude);
            let carved = sum + amount * (profile / weights - one);
            sum = Vf::select(update, carved, sum);
            let g = amount * (derivative / weights) * gullies * Vf::splat(o.inverse as f32);
            dx = Vf::select(update, dx + g * ax, dx);
            dy = Vf::select(update, dy + g * ay, dy);
        }
        sum
    }
}

/// [`lanes::carve_row`] on AVX2's eight lanes.
///
/// # Safety
/// The process must run AVX2 kernels (`geogen_simd::enabled`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn carve_row_avx2(row: &Row<'_>, octaves: &[Octave], depth: f32, line: &mut [f32]) -> usize {
    lanes::carve_row::<geogen_kernels::lanes::Avx2>(row, octaves, depth, line)
}

/// [`lanes::carve_row`] on AVX-512's sixteen lanes.
///
/// # Safety
/// The process must run AVX-512 kernels (`geogen_simd::enabled`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw")]
unsafe fn carve_row_avx512(row: &Row<'_>, octaves: &[Octave], depth: f32, line: &mut [f32]) -> usize {
    lanes::carve_row::<geogen_kernels::lanes::Avx512>(row, octaves, depth, line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(rect: Rect) -> HeightMap {
        let data = (0..rect.height as i64)
            .flat_map(|y| (0..rect.width as i64).map(move |x| (x, y)))
            .map(|(x, y)| {
                let (ax, ay) = (rect.x + x, rect.y + y);
                ax as f32 * 0.01 + ((ax * 7919 + ay * 104_729) % 97) as f32 / 97.0 * 0.02
            })
            .collect();
        HeightMap::from_data(rect, data).unwrap()
    }

    fn op() -> Gullies {
        Gullies { wavelength: 24.0, depth: 0.1, octaves: 3, seed: 5, flow: false }
    }

    /// A height of a test row: smooth slopes of every steepness, flats, signed zeros, tiny, huge
    /// and non-finite values, so that lanes of one group take different exits.
    fn odd_height(i: usize, k: usize) -> f32 {
        let hash = geogen_random::hash2(i as u32, k as u32);
        // Values that send their group to the scalar code are rare, so most groups take the lanes.
        match hash % 400 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => 3e18,
            3..=12 => -0.0,
            13..=22 => 1e-40,
            23..=32 => 2e9,
            33..=80 => 0.25,
            _ => ((i as f32) * 0.013 * (1 + k % 5) as f32).sin() * 0.8 + (hash >> 20) as f32 * 1e-6,
        }
    }

    /// Every build of the lanes' body (the scalar twin, and each vector build the processor has)
    /// gives the scalar rows' bits.
    #[test]
    fn every_build_of_the_rows_equals_the_scalar_rows() {
        use geogen_simd::Isa as Level;
        let levels: Vec<Level> =
            [Level::Avx2, Level::Avx512].into_iter().filter(|&l| geogen_simd::testable(l)).collect();
        let w = 1501;
        for (k, (wavelength, octaves, scale, map_x, py)) in [
            (64.0, 3, 1.0, 0, 17.0),
            (48.0, 4, 0.37, -1_000_003, -52.5),
            (1.0, 16, 1.0, 5, 3.25),
            (3.7, 8, 3.0, -40, 1e6),
            (1e6, 2, 1.0, 1 << 40, -7.0),
            (24.0, 16, 0.01, 123, 0.0),
        ]
        .into_iter()
        .enumerate()
        {
            let rows: Vec<Vec<f32>> = (0..3).map(|r| (0..w).map(|i| odd_height(i + 97 * r, k)).collect()).collect();
            for depth in [0.0, 0.05, 1.0] {
                let p = Gullies { wavelength, depth, octaves, seed: 9 + k as u32, flow: false };
                let flow: Vec<f32> =
                    (0..w).map(|i| (geogen_random::hash2(i as u32, 77) % 101) as f32 / 100.0).collect();
                let mut cell = p.wavelength;
                let (mut amplitude, mut octave_list) = (1.0f32, Vec::new());
                for o in 0..p.octaves {
                    octave_list.push(Octave { inverse: 1.0 / cell, amplitude, seed: combine_seeds(&[p.seed, o]) });
                    cell *= 0.5;
                    amplitude *= 0.5;
                }
                for (x0, with_flow) in [(0, false), (1, true), (3, false), (2, true)] {
                    let row = Row {
                        above: &rows[0],
                        here: &rows[1],
                        below: &rows[2],
                        flow: with_flow.then(|| &flow[x0..]),
                        x0,
                        map_x,
                        py,
                        unit: 1.0 / scale,
                        slope_scale: (scale * 0.5) as f32,
                    };
                    let mut scalar = vec![0.0f32; w - x0];
                    carve_row(Level::Scalar, &row, &octave_list, depth as f32, &mut scalar);
                    // The lanes' body on one plain lane, then on each vector build.
                    let mut twin = scalar.clone();
                    let done =
                        lanes::carve_row::<geogen_kernels::lanes::Scalar>(&row, &octave_list, depth as f32, &mut twin);
                    assert_eq!(done, twin.len());
                    let mut builds = vec![("scalar lanes", twin)];
                    for &level in &levels {
                        let mut vector = vec![0.0f32; w - x0];
                        carve_row(level, &row, &octave_list, depth as f32, &mut vector);
                        builds.push((level.name(), vector));
                    }
                    for (build, values) in &builds {
                        for (col, (a, b)) in scalar.iter().zip(values).enumerate() {
                            assert_eq!(
                                a.to_bits(),
                                b.to_bits(),
                                "{build}: case {k}, depth {depth}, x0 {x0}, column {col}: {a} vs {b}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_tile_with_one_pixel_of_halo_equals_the_same_rectangle_of_a_larger_buffer() {
        let own = Rect::new(-7, 3, 11, 6);
        let big_rect = Rect::new(-40, -30, 90, 80);
        for scale in [1.0, 0.5, 3.0] {
            let mut big = ramp(big_rect);
            gullies(&mut big, big_rect, &op(), scale).unwrap();
            let mut small = ramp(own.expand(1));
            gullies(&mut small, own, &op(), scale).unwrap();
            for y in own.y..own.y + own.height as i64 {
                for x in own.x..own.x + own.width as i64 {
                    assert_eq!(big.get(x, y).unwrap().to_bits(), small.get(x, y).unwrap().to_bits(), "({x}, {y})");
                }
            }
        }
    }

    #[test]
    fn carves_down_only_within_the_depth_and_leaves_flats_alone() {
        let rect = Rect::new(0, 0, 64, 64);
        let mut m = ramp(rect);
        let before = m.data().to_vec();
        gullies(&mut m, rect, &op(), 1.0).unwrap();
        let cuts: Vec<f32> = m.data().iter().zip(&before).map(|(a, b)| b - a).collect();
        assert!(cuts.iter().all(|&c| (0.0..=0.1 + 1e-6).contains(&c)), "a cut outside [0, depth]");
        // Gullies, not a uniform lowering: the cuts vary along a row across the slope.
        // (The ramp drops 0.01 per pixel: no cut goes deeper than 0.9 of a pixel's drop.)
        let column: Vec<f32> = (0..64).map(|y| cuts[y * 64 + 32]).collect();
        let (lo, hi) = column.iter().fold((f32::MAX, f32::MIN), |(a, b), &c| (a.min(c), b.max(c)));
        assert!(hi - lo > 0.004, "no gullies across the slope: cuts in [{lo}, {hi}]");
        let mut flat = HeightMap::from_data(rect, vec![0.3; 64 * 64]).unwrap();
        gullies(&mut flat, rect, &op(), 1.0).unwrap();
        assert!(flat.data().iter().all(|&v| v == 0.3));
    }

    /// The closed pits of a map: pixels with no lower neighbour among the eight (inner pixels).
    fn pits(m: &HeightMap) -> Vec<usize> {
        let (w, h) = (m.width(), m.height());
        let d = m.data();
        (0..w * h)
            .filter(|&i| {
                let (x, y) = (i % w, i / w);
                x > 0 && y > 0 && x + 1 < w && y + 1 < h && {
                    let lower = [(-1i64, -1i64), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)]
                        .iter()
                        .any(|&(dx, dy)| d[((y as i64 + dy) as usize) * w + (x as i64 + dx) as usize] < d[i]);
                    !lower
                }
            })
            .collect()
    }

    #[test]
    fn gullies_add_no_pit_to_rough_terrain_with_or_without_a_flow_map() {
        // Rough noisy hills (many pits of their own), cut hard: every pixel with a lower neighbour
        // keeps one, so the pits after are among the pits before.
        let rect = Rect::new(-20, 7, 120, 90);
        let data: Vec<f32> = (0..rect.area() as usize)
            .map(|i| {
                let (x, y) = ((i % 120) as f32, (i / 120) as f32);
                0.3 * (x * 0.11).sin() * (y * 0.07).cos()
                    + 0.002 * x
                    + (geogen_random::hash2(i as u32, 3) % 1000) as f32 * 2e-5
            })
            .collect();
        let flow =
            HeightMap::from_data(rect, (0..rect.area() as usize).map(|i| (i % 7) as f32 / 6.0).collect()).unwrap();
        for with_flow in [false, true] {
            for scale in [1.0, 0.5, 2.5] {
                let mut m = HeightMap::from_data(rect, data.clone()).unwrap();
                let before = pits(&m);
                let p = Gullies { wavelength: 16.0, depth: 0.5, octaves: 4, seed: 2, flow: with_flow };
                gullies_with(&mut m, rect, &p, scale, with_flow.then_some(&flow)).unwrap();
                let after = pits(&m);
                assert!(before.len() > 20, "the input has pits of its own");
                assert!(
                    after.iter().all(|p| before.contains(p)),
                    "new pits with flow {with_flow} at scale {scale}: {} before, {} after",
                    before.len(),
                    after.len()
                );
                assert!(m.data().iter().zip(&data).any(|(a, b)| a != b), "nothing was carved");
            }
        }
    }

    #[test]
    fn a_flow_map_deepens_the_gullies_downstream_and_spares_the_channels() {
        // The same ramp under a flow map rising across it: no cut where the flow is 0, deeper cuts
        // where it is higher, none in a channel (flow near 1).
        let rect = Rect::new(0, 0, 96, 96);
        let ramp_data: Vec<f32> = (0..96 * 96).map(|i| (i % 96) as f32 * 0.01).collect();
        let flow_data: Vec<f32> = (0..96 * 96).map(|i| (i / 96) as f32 / 95.0 * 0.37).collect();
        let mut channel = flow_data.clone();
        channel.iter_mut().take(96 * 10).for_each(|v| *v = 0.95);
        let flow = HeightMap::from_data(rect, channel).unwrap();
        let mut m = HeightMap::from_data(rect, ramp_data.clone()).unwrap();
        // Shallow enough that the depth, not the pixel's drop, limits the cuts.
        gullies_with(&mut m, rect, &Gullies { flow: true, depth: 0.01, ..op() }, 1.0, Some(&flow)).unwrap();
        let cut_of_rows = |rows: std::ops::Range<usize>| -> f32 {
            rows.flat_map(|y| (2..94).map(move |x| y * 96 + x)).map(|i| ramp_data[i] - m.data()[i]).sum()
        };
        assert_eq!(cut_of_rows(0..10), 0.0, "a channel was carved");
        let (low, high) = (cut_of_rows(20..40), cut_of_rows(70..90));
        assert!(high > 1.5 * low && low > 0.0, "cuts {low} at low flow, {high} at high flow");
    }

    #[test]
    fn gullies_run_downhill() {
        // On a ramp rising along x, the gullies are lines along x: the cut varies much more across
        // the slope (along y) than down it (along x).
        let rect = Rect::new(0, 0, 96, 96);
        let data = (0..96 * 96).map(|i| (i % 96) as f32 * 0.01).collect();
        let mut m = HeightMap::from_data(rect, data).unwrap();
        let before = m.data().to_vec();
        gullies(&mut m, rect, &Gullies { octaves: 1, ..op() }, 1.0).unwrap();
        let cut = |x: usize, y: usize| before[y * 96 + x] - m.data()[y * 96 + x];
        let (mut along, mut across) = (0.0f32, 0.0f32);
        for y in 2..94 {
            for x in 2..94 {
                along += (cut(x + 1, y) - cut(x, y)).abs();
                across += (cut(x, y + 1) - cut(x, y)).abs();
            }
        }
        assert!(across > 3.0 * along, "variation across {across}, along {along}");
    }
}
