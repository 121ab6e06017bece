//! The erosion kernels written plainly: one pixel at a time through the bounds-checked neighbour
//! walk (as they were before the row-sliced, branch-free rewrite of [`super::erosion`], with the
//! hydraulic model's later changes, such as the fan-slope deposit limit, made here the same way).
//! Kept as the executable definition of the bits the fast kernels must reproduce (the unit tests
//! of `erosion.rs` compare them bit for bit) and as the "old" side of the alternated pairs in
//! `benches/erosion.rs`. Not used by any operation.

use geogen_render::{HeightMap, Rect, RenderError};
use rayon::prelude::*;

use super::erosion::{
    exchange, first_rain_on_land, hash2, land_or_sea, neighbours, release, release_per_drop, scratch, span, Hydraulic,
    Output, Storm, StormRows, Thermal, FLOW_REF, HYDRAULIC_RADIUS, MASK_REF, MAX_CUT, MIN_ROWS_PER_TASK,
    THERMAL_RADIUS,
};

/// Thermal erosion of `map` in place: every iteration, each pair of neighbours whose height
/// difference exceeds the talus (× √2 for corners) exchanges `rate` × the excess, all pairs at once.
/// Exact on `own` when `map` covers `own` grown by `iterations × THERMAL_RADIUS`.
pub fn thermal(map: &mut HeightMap, own: Rect, p: Thermal) -> Result<(), RenderError> {
    let rect = map.rect();
    if rect.is_empty() || p.iterations == 0 {
        return Ok(());
    }
    let (w, h) = (map.width(), map.height());
    let mut other = scratch(w * h)?;
    let (t_edge, t_corner) = (p.talus, p.talus * std::f32::consts::SQRT_2);
    let n = u64::from(p.iterations);
    for k in 0..n {
        let Some(s) = span(rect, own, (n - 1 - k) * THERMAL_RADIUS) else {
            return Ok(());
        };
        let data = map.data_mut();
        let (src, dst): (&[f32], &mut [f32]) = if k % 2 == 0 { (data, &mut other) } else { (&other, data) };
        dst[s.y0 * w..s.y1 * w].par_chunks_mut(w).with_min_len(MIN_ROWS_PER_TASK).enumerate().for_each(|(r, row)| {
            let y = s.y0 + r;
            for (x, out) in row.iter_mut().enumerate().take(s.x1).skip(s.x0) {
                let hc = src[y * w + x];
                let mut delta = 0.0f32;
                neighbours(x, y, w, h, |j, weight| {
                    let t = if weight == 1.0 { t_edge } else { t_corner };
                    delta += exchange(src[j] - hc, t, p.rate);
                });
                *out = hc + delta;
            }
        });
    }
    if n % 2 == 1 {
        // The last iteration wrote the scratch buffer: copy its final span back.
        if let Some(s) = span(rect, own, 0) {
            let data = map.data_mut();
            for y in s.y0..s.y1 {
                data[y * w + s.x0..y * w + s.x1].copy_from_slice(&other[y * w + s.x0..y * w + s.x1]);
            }
        }
    }
    Ok(())
}

/// Hydraulic erosion of `map` in place: iterated multiple-flow-direction routing on the water
/// surface with a transport-limited load (see `docs/erosion.md` for the choice). A cell whose
/// terrain is at or below the sea level is sea: its surface and its bed are the sea level; a land
/// cell's surface is its terrain plus its water × [`Hydraulic::water_depth`], its bed its terrain.
/// Each iteration is two passes over the cells still needed:
///
/// * **A** (reads terrain `h`, water `w` and load `s` of a cell and its neighbours): a snapshot of
///   the surface, the steepest drop of the surface and of the bed to a neighbour, and the shares
///   `r / D` and `l / D` (D: the sum of the surface's drops to the lower neighbours, × 1/√2 for
///   corners) so that the cell sends `r / D × d` and `l / D × d` down a drop `d`: the water it
///   releases, `r` ([`release`]: all of it, or as much as half its steepest drop holds), and the
///   same share of its load, `l`; a pit (a sea cell among them) keeps everything.
/// * **B** (reads pass A's results of the cell and its neighbours; writes the cell's own `h`, `w`,
///   `s` and flow total in place): water and load arrive; the discharge (released plus received)
///   can carry `capacity × discharge × slope` (slope: the surface's steepest drop per logical
///   unit); the missing load is eroded at its rate (at most [`MAX_CUT`] of the bed's steepest
///   drop; never in the sea), an excess deposited at its rate (at most up to the neighbours' mean
///   surface, or the highest neighbour's surface less the fan drop); water evaporates; a sea
///   cell's water joins the sea; the next rain falls on the land, in storms ([`Storm`]).
///
/// At the end, the sediment a pit holds settles there and the load still moving is washed out.
pub fn hydraulic(map: &mut HeightMap, own: Rect, p: Hydraulic) -> Result<(), RenderError> {
    let rect = map.rect();
    if rect.is_empty() || p.iterations == 0 {
        if p.output != Output::Height {
            map.data_mut().fill(0.0);
        }
        return Ok(());
    }
    let (w, h) = (map.width(), map.height());
    let len = w * h;
    let mut terrain = scratch(len)?;
    terrain.copy_from_slice(map.data());
    let mut water = scratch(len)?;
    let mut sediment = scratch(len)?;
    let mut surface = scratch(len)?;
    let mut factor = scratch(len)?;
    let mut concentration = scratch(len)?;
    let mut steepest = scratch(len)?;
    let mut flow = scratch(len)?;
    let mut rain = scratch(len)?;
    let n = u64::from(p.iterations);
    let (fan_edge, fan_corner) = (p.fan_drop, p.fan_drop * std::f32::consts::SQRT_2);
    let (sea, depth, per_drop) = (p.sea_level, p.water_depth, release_per_drop(&p));
    let iteration_seed = |k: u64| hash2(p.seed, k as u32);
    let storm = Storm::new(rect, p.storm_spacing);
    // The rain of the iteration whose seed is `seed`, on every cell (what falls on the sea is
    // never used).
    let storms = |seed: u32, rain: &mut [f32]| {
        rain.par_chunks_mut(w).enumerate().for_each_init(StormRows::new, |rows, (y, row)| {
            storm.rain_row(rows, seed, p.rain, y, (0, w), row);
        });
    };

    // The first rain, on the land.
    storms(iteration_seed(0), &mut water);
    first_rain_on_land(&mut water, &terrain, sea);

    for k in 0..n {
        let remaining = (n - 1 - k) * HYDRAULIC_RADIUS;
        // Pass A on the cells pass B reads.
        let Some(a) = span(rect, own, remaining + 1) else {
            break;
        };
        {
            let (terrain, water, sediment) = (&terrain, &water, &sediment);
            // A cell's bed (the sea's level at sea), and its water surface (a sea cell holds no
            // water).
            let bed = |i: usize| land_or_sea(terrain[i], sea);
            let level = |i: usize| bed(i) + depth * water[i];
            surface[a.y0 * w..a.y1 * w]
                .par_chunks_mut(w)
                .zip(factor[a.y0 * w..a.y1 * w].par_chunks_mut(w))
                .zip(concentration[a.y0 * w..a.y1 * w].par_chunks_mut(w))
                .zip(steepest[a.y0 * w..a.y1 * w].par_chunks_mut(w))
                .with_min_len(MIN_ROWS_PER_TASK)
                .enumerate()
                .for_each(|(r, (((surface_row, factor_row), conc_row), steep_row))| {
                    let y = a.y0 + r;
                    for x in a.x0..a.x1 {
                        let i = y * w + x;
                        let sc = level(i);
                        let mut drops = 0.0f32;
                        let mut steep = 0.0f32;
                        neighbours(x, y, w, h, |j, weight| {
                            let d = (sc - level(j)) * weight;
                            // Selects, not branches (the signs of the drops are noise to a branch
                            // predictor); the same values: adding +0 to a sum of non-negative terms
                            // changes nothing, and d > steep ≥ 0 only where d > 0.
                            drops += if d > 0.0 { d } else { 0.0 };
                            steep = if d > steep { d } else { steep };
                        });
                        surface_row[x] = sc;
                        steep_row[x] = steep;
                        // The water released and its share of the load, shared among the lower
                        // neighbours by their drops; a pit keeps them.
                        let (q, l) = if drops > 0.0 {
                            let (out, load) = release(water[i], sediment[i], steep, per_drop);
                            let inverse = 1.0 / drops;
                            (out * inverse, load * inverse)
                        } else {
                            (0.0, 0.0)
                        };
                        factor_row[x] = q;
                        conc_row[x] = l;
                    }
                });
        }
        // Pass B, in place on the cells still needed.
        let Some(b) = span(rect, own, remaining) else {
            break;
        };
        let last = k + 1 == n;
        if !last {
            storms(iteration_seed(k + 1), &mut rain);
        }
        let (surface, factor, concentration, steepest, rain) = (&surface, &factor, &concentration, &steepest, &rain);
        terrain[b.y0 * w..b.y1 * w]
            .par_chunks_mut(w)
            .zip(water[b.y0 * w..b.y1 * w].par_chunks_mut(w))
            .zip(sediment[b.y0 * w..b.y1 * w].par_chunks_mut(w))
            .zip(flow[b.y0 * w..b.y1 * w].par_chunks_mut(w))
            .with_min_len(MIN_ROWS_PER_TASK)
            .enumerate()
            .for_each(|(r, (((terrain_row, water_row), sediment_row), flow_row))| {
                let y = b.y0 + r;
                for x in b.x0..b.x1 {
                    let i = y * w + x;
                    let hc = surface[i];
                    let mut inflow = 0.0f32;
                    let mut sediment_in = 0.0f32;
                    // The highest a deposit may raise the cell: the highest neighbour less the fan
                    // drop to it.
                    let mut settle = f32::NEG_INFINITY;
                    let mut around = 0.0f32;
                    let mut count = 0.0f32;
                    neighbours(x, y, w, h, |j, weight| {
                        let sj = surface[j];
                        around += sj;
                        count += 1.0;
                        let v = sj - if weight == 1.0 { fan_edge } else { fan_corner };
                        settle = if v > settle { v } else { settle };
                        let d = (sj - hc) * weight;
                        // Selects, not branches, with the same values (see pass A).
                        let up = d > 0.0;
                        inflow += if up { factor[j] * d } else { 0.0 };
                        sediment_in += if up { concentration[j] * d } else { 0.0 };
                    });
                    let steep = steepest[i];
                    // What left the cell in pass A: what it released, unless it is a pit.
                    let (held, load) = (water_row[x], sediment_row[x]);
                    let (sent, carried) = if steep > 0.0 { release(held, load, steep, per_drop) } else { (0.0, 0.0) };
                    let mut wc = (held - sent) + inflow;
                    let mut sc = (load - carried) + sediment_in;
                    let mut tc = terrain_row[x];
                    // Land: the terrain pass A saw is above the sea level (else sea).
                    let land = tc > sea;
                    // The discharge through the cell: what left it plus what came in (standing water
                    // does not count).
                    let discharge = sent + inflow;
                    let capacity = p.capacity * discharge * (steep * p.slope_scale);
                    if sc > capacity {
                        // Settle where the flow slows, never above the neighbours' mean surface (fill
                        // hollows and ponds) or, where higher, the highest neighbour's surface less
                        // the fan drop (cones of the fan slope): never a spike.
                        let mean = around / count;
                        let base = if steep > 0.0 { hc } else { tc };
                        let room = ((if settle > mean { settle } else { mean }) - base).max(0.0);
                        let dropped = (p.deposition * (sc - capacity)).min(room);
                        tc += dropped;
                        sc -= dropped;
                    } else {
                        // The sea floor is never cut; the land at most by a share of the steepest
                        // drop less the cell's own water (what of the drop is ground: the water's
                        // slope carries, only the ground's is cut).
                        let ground = steep - depth * held;
                        let ground = if ground > 0.0 { ground } else { 0.0 };
                        let taken = if land { (p.erosion * (capacity - sc)).min(MAX_CUT * ground) } else { 0.0 };
                        tc -= taken;
                        sc += taken;
                    }
                    wc *= 1.0 - p.evaporation;
                    if last {
                        // What a pit holds settles there, at most up to its highest neighbour; the
                        // load still moving leaves with its water (washed out, like the rest of the
                        // suspended load at the edge of the map): dumped where the water is, it
                        // would raise every channel into a levee.
                        if steep <= 0.0 {
                            // Only on the last step, so the rim is found here, not in every step's
                            // neighbour loop.
                            let mut rim = hc;
                            neighbours(x, y, w, h, |j, _| rim = rim.max(surface[j]));
                            tc += sc.min((rim - tc).max(0.0));
                        }
                        sc = 0.0;
                    } else if tc > sea {
                        // The rain falls on the land.
                        wc += rain[i];
                    } else {
                        // The cell is sea now: its water joins the sea (a sea cell's surface is
                        // the sea level).
                        wc = 0.0;
                    }
                    terrain_row[x] = tc;
                    water_row[x] = wc;
                    sediment_row[x] = sc;
                    flow_row[x] += discharge;
                }
            });
    }

    // Write the requested output over the rendering bounds.
    let Some(s) = span(rect, own, 0) else {
        return Ok(());
    };
    let flow_norm = 1.0 / (p.rain * n as f32) / p.area_scale.max(f32::MIN_POSITIVE);
    let data = map.data_mut();
    for y in s.y0..s.y1 {
        for x in s.x0..s.x1 {
            let i = y * w + x;
            let before = data[i];
            data[i] = match p.output {
                // Settled load can pile a pit above the height range (material is conserved, the
                // range is not): heights stay in [-1, 1] like every operation's.
                Output::Height => terrain[i].clamp(-1.0, 1.0),
                Output::Flow => {
                    // A tiny rain makes the normaliser overflow: an infinite or undefined ratio is
                    // read as the most and the least flow.
                    let a = if p.rain > 0.0 { flow[i] * flow_norm } else { 0.0 };
                    let a = if a.is_nan() { 0.0 } else { a.min(f32::MAX) };
                    a / (a + FLOW_REF)
                }
                Output::Erosion => {
                    let e = (before - terrain[i]).max(0.0);
                    e / (e + MASK_REF)
                }
                Output::Deposition => {
                    let d = (terrain[i] - before).max(0.0);
                    d / (d + MASK_REF)
                }
            };
        }
    }
    Ok(())
}
