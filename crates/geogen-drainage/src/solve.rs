//! The whole-map solve: a landscape evolved under uplift, river incision and diffusion on a
//! pyramid of meshes, coarsest first, and the drainage of its final surface.
//!
//! Units. Horizontal lengths are in map sides (the map's longer side is 1), so areas are fractions
//! of the map's square; heights are height units; time is in the units of `duration`. With the
//! default rates the main valleys of a map reach their steady form (uplift balanced by incision)
//! in about one time unit.
//!
//! Why a pyramid: a network organises over the whole map, and most of that reorganisation (which
//! valley captures which) happens at the scale of the map, where a 128² mesh costs a sixty-fourth
//! of a 1024² one. So most of the duration runs on the coarse meshes, each finer mesh starts from
//! the coarser result with the input's own finer detail added back, and the finest runs a few
//! steps to cut its own tributaries. Each mesh has its own jitter.

use crate::evolve::{accumulate, diffuse, incise, settle, Incision};
use crate::flood::{route, Routing};
use rayon::prelude::*;

use crate::mesh::{bilinear, Mesh};

/// Rates and settings of a solve. The defaults are those of the script operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// Model time; about 1 gives mature valleys.
    pub duration: f64,
    /// Multiplies the river incision rate `K` (and the erodibility map, if any).
    pub erodibility: f64,
    /// Multiplies the uplift rate (and the uplift map, if any).
    pub uplift: f64,
    /// Exponents of the stream-power law `E = K A^m S^n`.
    pub m: f64,
    pub n: f64,
    /// Hillslope diffusivity on land, map sides² per time unit.
    pub diffusion: f64,
    /// Diffusivity under the sea, map sides² per time unit.
    pub marine_diffusion: f64,
    /// Heights at or below it are sea: the base level, and an outlet.
    pub sea_level: f64,
    /// The fraction of the sediment reaching a lake or the sea that is laid down there.
    pub deposition: f64,
    /// Whether land heights are scaled at the end so the highest equals the input's highest.
    pub keep_relief: bool,
    /// Whether the default uplift (no uplift map) is the input's relief above the sea scaled to 1
    /// at its highest, or that relief itself (for windows of an infinite map, which must not
    /// depend on what each alone holds).
    pub relative_uplift: bool,
    /// The meshes' jitter and diagonals.
    pub seed: u32,
}

/// Incision rate constant at `erodibility` 1: with `m` = 0.45 a knickpoint climbs a river
/// draining a hundredth of the map at about half a map side per time unit.
pub const K_REFERENCE: f64 = 4.0;

impl Default for Params {
    fn default() -> Params {
        Params {
            duration: 1.0,
            erodibility: 1.0,
            uplift: 1.0,
            m: 0.45,
            n: 1.0,
            diffusion: 4e-6,
            marine_diffusion: 2e-4,
            sea_level: 0.0,
            deposition: 0.5,
            keep_relief: true,
            relative_uplift: true,
            seed: 0,
        }
    }
}

/// The grid a solve starts from: node `(i, j)` at `(i × cell, j × cell)` map units.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    pub nx: usize,
    pub ny: usize,
    /// Map units per grid cell.
    pub cell: f64,
    /// The initial heights (height units), row-major.
    pub height: &'a [f32],
    /// A relative uplift rate per node; `None`: the input's relief above the sea, scaled to 1 at
    /// its highest.
    pub uplift: Option<&'a [f32]>,
    /// A relative erodibility per node (rock hardness, inverted); `None`: 1 everywhere.
    pub erodibility: Option<&'a [f32]>,
}

/// The solved landscape and its drainage, per node of the finest mesh.
#[derive(Clone, Debug)]
pub struct Drainage {
    pub mesh: Mesh,
    /// Map units per grid cell.
    pub cell: f64,
    pub sea_level: f32,
    /// The surface: the ground on land and under the sea, the water on a lake.
    pub surface: Vec<f32>,
    /// Water depth of lakes (0 elsewhere).
    pub depth: Vec<f32>,
    /// Upstream area, map units².
    pub area: Vec<f32>,
    /// Where each node's water goes (itself at an outlet).
    pub receiver: Vec<u32>,
    /// The donor bringing the most water (itself at a source).
    pub upstream: Vec<u32>,
    /// Figures of the run.
    pub stats: Stats,
}

/// What a solve did, for reports and tests.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Meshes of the pyramid, finest first, as (nx, ny, steps).
    pub levels: Vec<(usize, usize, usize)>,
    /// Nodes under a lake at the end.
    pub lake_nodes: usize,
    /// Height units × map units² eroded and laid down over the run (summed over all meshes).
    pub eroded: f64,
    pub deposited: f64,
    /// The factor land heights were scaled by (`keep_relief`), 1 otherwise.
    pub relief_scale: f64,
}

impl Drainage {
    /// Bytes a solution of `nodes` nodes holds.
    pub const fn bytes_per_node() -> u64 {
        // surface, depth, area, receiver, upstream, x, y, links
        4 * 7 + 1
    }

    pub fn nx(&self) -> usize {
        self.mesh.nx
    }

    pub fn ny(&self) -> usize {
        self.mesh.ny
    }
}

/// Bytes of scratch a solve of `nodes` nodes needs besides its input and its result: the finest
/// mesh's state (heights, levels, areas, loads, erosion: `f64`; order and receivers: `u32`; uplift,
/// erodibility and diffusivity: `f32`; outlet and flood marks) plus the pyramid above it (a third
/// more) and the flood's queues.
pub const fn scratch_bytes_per_node() -> u64 {
    let finest = 5 * 8 + 2 * 4 + 3 * 4 + 2 + 9;
    finest + finest / 3 + 16
}

/// The smallest mesh side the pyramid goes down to.
const COARSEST_SIDE: usize = 96;

/// Steps on a mesh of `side` nodes along its longer side: many on the coarse meshes, where the
/// network organises over the whole map and steps are cheap, few on the fine ones, which only cut
/// their own tributaries into what the coarser left: on a 1025² mesh one step looks the same as
/// two or four).
fn steps_for(side: usize) -> usize {
    match side {
        0..=96 => 24,
        97..=192 => 12,
        193..=384 => 8,
        385..=768 => 4,
        _ => 1,
    }
}

/// Solves the landscape (see the module docs).
pub fn solve(input: &Input<'_>, params: &Params) -> Drainage {
    let (nx, ny) = (input.nx, input.ny);
    let side = input.cell * (nx.max(ny).saturating_sub(1).max(1)) as f64;
    let sea = params.sea_level;
    // The pyramid's sizes, finest first: node 2i of a mesh is node i of the next.
    let mut sizes = vec![(nx, ny)];
    while let Some(&(w, h)) = sizes.last() {
        if w.max(h) <= COARSEST_SIDE || w < 5 || h < 5 {
            break;
        }
        sizes.push((w.div_ceil(2), h.div_ceil(2)));
    }
    // The inputs on every level, as regular grids (node (i, j) of a level at grid point (i, j)),
    // each coarser one filtered from the finer.
    let heights0: Vec<f64> = input.height.iter().map(|&v| f64::from(v)).collect();
    let relief = heights0.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
    let uplift0: Vec<f64> = match input.uplift {
        Some(u) => u.iter().map(|&v| f64::from(v) * params.uplift).collect(),
        None => {
            let top = if params.relative_uplift { (relief - sea).max(1e-9) } else { 1.0 };
            heights0.iter().map(|&v| (v - sea).max(0.0) / top * params.uplift).collect()
        }
    };
    let erodibility0: Vec<f64> = match input.erodibility {
        Some(e) => e.iter().map(|&v| f64::from(v).max(0.0) * params.erodibility * K_REFERENCE).collect(),
        None => vec![params.erodibility * K_REFERENCE; nx * ny],
    };
    let mut fields = vec![[heights0, uplift0, erodibility0]];
    for w in sizes.windows(2) {
        let ((fw, fh), (cw, ch)) = (w[0], w[1]);
        let Some(fine) = fields.last() else { break };
        let coarse = [0, 1, 2].map(|f| restrict(&fine[f], fw, fh, cw, ch));
        fields.push(coarse);
    }
    // Time shares: each coarser mesh twice the finer's.
    let levels = sizes.len();
    let weights: Vec<f64> = (0..levels).map(|l| f64::from(1u32 << l.min(20))).collect();
    let total: f64 = weights.iter().sum();
    let mut stats = Stats { relief_scale: 1.0, ..Stats::default() };
    // The coarser mesh's result and its input heights, per node.
    let mut state: Option<(Mesh, Vec<f64>, Vec<f64>)> = None;
    for level in (0..levels).rev() {
        let (w, h) = sizes[level];
        let mesh = Mesh::new(w, h, geogen_random::hash2(params.seed, level as u32));
        let [height, uplift, erodibility] = &fields[level];
        let sample = |field: &[f64]| -> Vec<f64> {
            (0..mesh.len())
                .into_par_iter()
                .map(|k| bilinear(field, w, h, f64::from(mesh.x[k]), f64::from(mesh.y[k])))
                .collect()
        };
        let own_input = sample(height);
        let uplift: Vec<f32> = sample(uplift).into_iter().map(|v| v as f32).collect();
        // A uniform erodibility (no map) needs no sampling.
        let erodibility: Vec<f32> = match input.erodibility {
            None => vec![(params.erodibility * K_REFERENCE) as f32; mesh.len()],
            Some(_) => sample(erodibility).into_iter().map(|v| v as f32).collect(),
        };
        let mut current = match state.take() {
            None => own_input.clone(),
            Some((coarse_mesh, coarse, coarse_input)) => {
                // The coarser result, with this mesh's own detail of the input added back: both
                // interpolated over the coarser mesh's triangles, where its valleys lie.
                (0..mesh.len())
                    .into_par_iter()
                    .map(|k| {
                        let (px, py) = (f64::from(mesh.x[k]) * 0.5, f64::from(mesh.y[k]) * 0.5);
                        let (t, wt) = coarse_mesh.locate(px, py);
                        let at = |v: &[f64]| wt[0] * v[t[0]] + wt[1] * v[t[1]] + wt[2] * v[t[2]];
                        let base = at(&coarse);
                        // Not under the sea, whose floor the coarser meshes have smoothed.
                        if base <= sea {
                            base
                        } else {
                            base + (own_input[k] - at(&coarse_input))
                        }
                    })
                    .collect()
            }
        };
        let steps = steps_for(w.max(h));
        let time = params.duration * weights[level] / total;
        let spacing = input.cell * f64::from(1u32 << level.min(30)) / side;
        evolve(&mesh, &mut current, &uplift, &erodibility, params, time, steps, spacing, &mut stats);
        stats.levels.insert(0, (w, h, steps));
        state = Some((mesh, current, own_input));
    }
    let Some((mesh, h, _)) = state else { unreachable!("the pyramid has a level") };
    finish(input, params, mesh, h, relief, stats)
}

/// Runs `steps` steps of `time` in all on one mesh.
#[allow(clippy::too_many_arguments)]
fn evolve(
    mesh: &Mesh,
    h: &mut [f64],
    uplift: &[f32],
    erodibility: &[f32],
    params: &Params,
    time: f64,
    steps: usize,
    spacing: f64,
    stats: &mut Stats,
) {
    let n = mesh.len();
    let sea = params.sea_level;
    let border: Vec<bool> = (0..n).map(|k| mesh.on_border(k)).collect();
    let mut outlet = vec![false; n];
    let mut routing = Routing::default();
    let mut area = vec![0.0; n];
    let mut eroded = vec![0.0; n];
    let mut load = vec![0.0; n];
    let mut diffusivity = vec![0.0f32; n];
    let mut fixed = vec![false; n];
    let node_area = spacing * spacing;
    let dt = if steps == 0 { 0.0 } else { time / steps as f64 };
    let law = Incision { dt, m: params.m, n: params.n, spacing, sea_level: sea, node_area };
    for _ in 0..steps {
        for k in 0..n {
            outlet[k] = border[k] || h[k] <= sea;
        }
        route(mesh, h, &outlet, &mut routing);
        accumulate(&routing, node_area, &mut area);
        incise(mesh, &routing, &outlet, &border, &area, uplift, erodibility, law, h, &mut eroded);
        let before: f64 = h.iter().sum();
        settle(&routing, &outlet, &eroded, params.deposition, sea, h, &mut load);
        stats.eroded += eroded.iter().sum::<f64>() * node_area;
        stats.deposited += (h.iter().sum::<f64>() - before) * node_area;
        let grid_units = spacing * spacing;
        for k in 0..n {
            let sea_floor = h[k] <= sea;
            let d = if sea_floor { params.marine_diffusion } else { params.diffusion };
            diffusivity[k] = (d / grid_units) as f32;
            // The border holds the land's base level; under the sea it spreads like the rest.
            fixed[k] = border[k] && !sea_floor;
        }
        diffuse(mesh.nx, mesh.ny, &diffusivity, &fixed, dt, h);
    }
}

/// The final drainage of the finest mesh's heights, scaled to keep the input's relief.
fn finish(input: &Input<'_>, params: &Params, mesh: Mesh, mut h: Vec<f64>, relief: f64, mut stats: Stats) -> Drainage {
    let sea = params.sea_level;
    let n = mesh.len();
    let outlet: Vec<bool> = (0..n).map(|k| mesh.on_border(k) || h[k] <= sea).collect();
    let mut routing = Routing::default();
    route(&mesh, &h, &outlet, &mut routing);
    let mut area = vec![0.0; n];
    let node_area = input.cell * input.cell;
    accumulate(&routing, node_area, &mut area);
    if params.keep_relief {
        let top = routing.level.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
        if top > sea && relief > sea {
            let scale = (relief - sea) / (top - sea);
            stats.relief_scale = scale;
            for v in h.iter_mut().chain(routing.level.iter_mut()) {
                if *v > sea {
                    *v = sea + (*v - sea) * scale;
                }
            }
        }
    }
    let mut upstream: Vec<u32> = (0..n as u32).collect();
    let mut best = vec![0.0f64; n];
    for &k in &routing.order {
        let k = k as usize;
        let r = routing.receiver[k] as usize;
        if r != k && area[k] > best[r] {
            best[r] = area[k];
            upstream[r] = k as u32;
        }
    }
    stats.lake_nodes = (0..n).filter(|&k| routing.level[k] > h[k]).count();
    Drainage {
        cell: input.cell,
        sea_level: sea as f32,
        surface: routing.level.iter().map(|&v| v as f32).collect(),
        depth: routing.level.iter().zip(&h).map(|(&l, &g)| (l - g).max(0.0) as f32).collect(),
        area: area.iter().map(|&a| a as f32).collect(),
        receiver: routing.receiver,
        upstream,
        mesh,
        stats,
    }
}

/// The coarse mesh's values: each coarse node `i` is the fine node `2i` filtered with
/// `[1 2 1] / 4` along each axis (edges repeated).
fn restrict(fine: &[f64], fw: usize, fh: usize, cw: usize, ch: usize) -> Vec<f64> {
    let at = |x: i64, y: i64| fine[(y.clamp(0, fh as i64 - 1) as usize) * fw + x.clamp(0, fw as i64 - 1) as usize];
    let mut out = vec![0.0; cw * ch];
    for j in 0..ch {
        for i in 0..cw {
            let (x, y) = (2 * i as i64, 2 * j as i64);
            let row = |y: i64| at(x - 1, y) + 2.0 * at(x, y) + at(x + 1, y);
            out[j * cw + i] = (row(y - 1) + 2.0 * row(y) + row(y + 1)) / 16.0;
        }
    }
    out
}
