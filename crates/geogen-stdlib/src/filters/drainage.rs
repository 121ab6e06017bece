//! `map.Drainage(duration = 1, output = "height", uplift = 1, erodibility = 1, resolution = 512,
//! seaLevel = 0, riverWidth = 3, riverDepth = 0.004, diffusion = 1, m = 0.45, n = 1, seed = 0)`:
//! the map as rivers would have cut it, drained as a whole: every river reaches the sea or the
//! map's edge through one network, lakes fill and spill. (Not in the original GeoGen.)
//!
//! A whole-map solve (`geogen_render::solve`): the map (and the uplift and erodibility maps) is
//! rendered on a grid of `resolution` cells along its longer side, whatever the render's size,
//! scale or tile; the landscape is evolved there under uplift, stream-power incision and
//! diffusion (`geogen_drainage`); the kernel then renders that solution at the render's scale,
//! rivers carved along the network with widths from their upstream area. Every tile of every render
//! reads the same solution, so tiles are exact.

use std::sync::Arc;

use geogen_diag::codes;
use geogen_drainage::{Detail, Drainage as Solved, Input, Need, Params, RiverShape, Sampler};
use geogen_random::combine_seeds;
use geogen_render::raster::saturate;
use geogen_render::{
    Bounds, Effect, Grid, HeightMap, KernelContext, Object, ObjectKind, OpContext, Operation, Rect, RenderError,
    Solution, SolveNeed,
};
use geogen_vm::{RuntimeError, Value};
use rayon::prelude::*;

use crate::operation::{Arg, Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};

const OUTPUTS: &[&str] = &["height", "rivers", "lakes", "flow"];
/// A Drainage parameter's range (GGE2755).
const fn rate(min: f64, max: f64) -> Kind {
    Kind::Range { min, max, code: codes::GGE2755 }
}

/// The map a call yields.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DrainageOutput {
    /// The drained terrain: rivers cut, lakes flat at their level.
    Height,
    /// 1 in a river's channel, 0 elsewhere (a pixel's ramp at the banks).
    Rivers,
    /// 1 on a lake, 0 elsewhere (interpolated at the shore).
    Lakes,
    /// Upstream area, `ln(1 + A) / ln(1 + L²)` (A in map units², L the map's longer side): 0 on
    /// a ridge, 1 for the whole map.
    Flow,
}

/// A rate: a number times the default pattern, or a map (rendered on the grid too).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Rate {
    Number(f64),
    Map,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Drainage {
    pub duration: f64,
    pub output: DrainageOutput,
    pub uplift: Rate,
    pub erodibility: Rate,
    pub sea_level: f64,
    pub river_width: f64,
    pub river_depth: f64,
    pub diffusion: f64,
    pub m: f64,
    pub n: f64,
    /// Combined with the script seed.
    pub seed: u32,
    pub layout: Layout,
}

/// Where the solves lie: one over a finite map, or windows over an infinite one.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Layout {
    /// One solve over the whole map: `size` map units, `cell` map units per grid cell, `nodes`
    /// grid nodes (the map's far edges included).
    Finite { size: (f64, f64), cell: f64, nodes: (u32, u32) },
    /// An infinite map: super-tiles of `side` map units (`cells` cells of one map unit), each
    /// solved over a window reaching `halo` map units beyond it on every side, and blended with
    /// its neighbours over a band of `band` map units around each seam.
    Infinite { side: f64, cells: u32, halo: u32, band: f64 },
}

/// A solution: the detail of one solve and the super-tile it belongs to (`(0, 0)` on a finite map).
struct Tile {
    index: (i64, i64),
    /// The window's top-left corner, map units.
    origin: (f64, f64),
    detail: Detail,
}

impl Drainage {
    /// The solve's parameters.
    fn params(&self) -> Params {
        Params {
            duration: self.duration,
            erodibility: match self.erodibility {
                Rate::Number(v) => v,
                Rate::Map => 1.0,
            },
            uplift: match self.uplift {
                Rate::Number(v) => v,
                Rate::Map => 1.0,
            },
            m: self.m,
            n: self.n,
            diffusion: Params::default().diffusion * self.diffusion,
            sea_level: self.sea_level,
            seed: self.seed,
            ..Params::default()
        }
    }

    /// The map's longer side (a super-tile's on an infinite map) and the grid cell, map units.
    fn scales(&self) -> (f64, f64) {
        match self.layout {
            Layout::Finite { size, cell, .. } => (size.0.max(size.1), cell),
            Layout::Infinite { side, .. } => (side, 1.0),
        }
    }

    fn shape(&self) -> RiverShape {
        let (side, cell) = self.scales();
        let cell_area = cell * cell;
        RiverShape {
            width: self.river_width,
            depth: self.river_depth,
            // Every link draining more than eight cells carries a channel (smaller ones would be
            // no deeper than a rounding error); a channel is a river from a thousandth of the map on.
            min_area: 8.0 * cell_area,
            river_area: (1e-3 * side * side).max(16.0 * cell_area),
        }
    }

    /// Where the solve reads its map arguments: 0 the map, then the uplift and erodibility maps.
    fn grid_args(&self) -> Vec<usize> {
        (0..self.arg_kinds().len()).collect()
    }
}

impl Declared for Drainage {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Drainage",
        receiver: Receiver::Method,
        params: &[
            Param::new("duration", rate(0.0, 100.0)).or(1.0),
            Param::new("output", Kind::Choice { items: OUTPUTS, code: codes::GGE2756 }).or_text("height"),
            Param::new("uplift", Kind::NumberOr(Owner::HeightMap)).or(1.0),
            Param::new("erodibility", Kind::NumberOr(Owner::HeightMap)).or(1.0),
            Param::new("resolution", rate(16.0, 4096.0)).or(512.0).tested_up_to(64.0),
            Param::height("seaLevel").or(0.0),
            Param::new("riverWidth", rate(0.0, 1e6)).or(3.0),
            Param::new("riverDepth", rate(0.0, 1.0)).or(0.004),
            Param::new("diffusion", rate(0.0, 100.0)).or(1.0),
            Param::new("m", rate(0.1, 1.0)).or(0.45),
            Param::new("n", rate(0.5, 2.0)).or(1.0),
            Param::seed("seed"),
        ],
        checks: &[],
        family: Family::Filter,
        summary: "The map as rivers would have cut it, drained as a whole (finite maps): on a grid of \
                  `resolution` cells along the map's longer side (whole, in [16, 4096], at most one per \
                  map unit; the same grid for every render, tile and scale), the map is raised by \
                  `uplift` (a Number times the map's own relief above the sea, or a map of rates) and \
                  cut by rivers for `duration` (about 1 gives mature valleys, in [0, 100]): stream-power \
                  incision `K A^m S^n` (`erodibility` a Number or a map, `m` in [0.1, 1], `n` in [0.5, \
                  2]) solved implicitly, lakes that fill and spill, hillslope creep (`diffusion`, a factor \
                  in [0, 100]), sediment laid in lakes and off river mouths; heights at or below \
                  `seaLevel` are sea. Then every pixel is rendered from that solution at the render's \
                  scale: rivers `riverWidth` map units wide where a hundredth of the map drains (growing \
                  with the square root of the area) and `riverDepth` deep, beds that only go down to the \
                  sea. `output` (GGE2756) picks the map: \"height\" (land heights scaled so the highest \
                  stays the input's highest), \"rivers\" (1 in a river), \"lakes\" (1 on a lake) or \
                  \"flow\" (upstream area, log-scaled to [0, 1]). Rates outside their ranges are GGE2755; \
                  an infinite map GGE2757. See docs/erosion.md. Not in the original.",
        examples: &[Example {
            // A flat plain at the sea's level is all outlet: nothing to drain, nothing cut.
            script: "metadata { Width: Finite, Height: Finite }\nyield HeightMap.Flat(0).Drainage();",
            size: (8, 8),
            expect: &[(0, 0, 0.0), (4, 4, 0.0), (7, 7, 0.0)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let geometry = rec.geometry();
        let resolution = libm::trunc(call.number("resolution")?);
        let layout = match (geometry.map_width, geometry.map_height) {
            (Some(width), Some(height)) => {
                let (w, h) = (f64::from(width.max(1)), f64::from(height.max(1)));
                // A cell is at least one map unit.
                let cell = (w.max(h) / resolution).max(1.0);
                Layout::Finite {
                    size: (w, h),
                    cell,
                    nodes: ((w / cell).ceil() as u32 + 1, (h / cell).ceil() as u32 + 1),
                }
            }
            _ => {
                // Each window reaches half a super-tile beyond it, and the seams blend over an
                // eighth: the blend band then lies far from both windows' borders, where their
                // rivers agree most (a quarter and a quarter left 45 % of a noise continent
                // draining into pits at the seams, this 30 %).
                let cells = resolution as u32;
                Layout::Infinite { side: resolution, cells, halo: cells / 2, band: resolution / 8.0 }
            }
        };
        let output = match call.text("output")? {
            "rivers" => DrainageOutput::Rivers,
            "lakes" => DrainageOutput::Lakes,
            "flow" => DrainageOutput::Flow,
            _ => DrainageOutput::Height,
        };
        let mut others = Vec::new();
        let mut rate = |i: usize| -> Result<Rate, RuntimeError> {
            match &call.args[i] {
                Arg::Number(v) => Ok(Rate::Number(*v)),
                _ => {
                    others.push(call.object(i)?);
                    Ok(Rate::Map)
                }
            }
        };
        let uplift = rate(2)?;
        let erodibility = rate(3)?;
        let op = Drainage {
            duration: call.number("duration")?,
            output,
            uplift,
            erodibility,
            sea_level: call.number("seaLevel")?,
            river_width: call.number("riverWidth")?,
            river_depth: call.number("riverDepth")?,
            diffusion: call.number("diffusion")?,
            m: call.number("m")?,
            n: call.number("n")?,
            seed: combine_seeds(&[call.seed("seed")?, rec.script_seed()]),
            layout,
        };
        rec.modify(op, &others)
    }
}

/// Super-tile `index`'s blend weight at `x` (map units) along one axis: 1 inside it, falling
/// smoothly to 0 across the band around each of its seams. Super-tile 0 is centred on the origin,
/// where a world's first renders usually look.
fn tile_weight(x: f64, index: i64, side: f64, band: f64) -> f64 {
    let start = (index as f64 - 0.5) * side;
    let ramp = |d: f64| {
        // d: how far inside the tile beyond the band's outer edge, over the band.
        let t = (d / band).clamp(0.0, 1.0);
        t * t * (3.0 - 2.0 * t)
    };
    ramp(x - (start - 0.5 * band)).min(ramp(start + side + 0.5 * band - x))
}

/// The super-tiles whose weight is not 0 somewhere in `[x0, x1]` (map units), along one axis.
fn tiles_over(x0: f64, x1: f64, side: f64, band: f64) -> std::ops::RangeInclusive<i64> {
    let first = ((x0 - 0.5 * band) / side + 0.5).floor() as i64;
    let last = ((x1 + 0.5 * band) / side + 0.5).floor() as i64;
    first..=last
}

impl Drainage {
    /// The grid of super-tile `(i, j)`'s window (infinite maps), of `cells` cells and `halo`
    /// more all round.
    fn window(&self, i: i64, j: i64, cells: u32, halo: u32) -> SolveNeed {
        let (cells, halo) = (i64::from(cells), i64::from(halo));
        let nodes = (cells + 2 * halo + 1) as u64;
        // Super-tile i spans [(i − 1/2) cells, (i + 1/2) cells).
        let start = |i: i64| i * cells - cells / 2 - halo;
        let rect = Rect::new(start(i), start(j), nodes, nodes);
        self.need(rect, 1.0)
    }

    fn need(&self, rect: Rect, cell: f64) -> SolveNeed {
        let nodes = rect.area();
        // The output is read from the solution, not part of it: all four share one solve.
        let identity =
            format!("{:?} {:?} {:?} {:?}", self.params(), self.shape(), self.layout, (self.uplift, self.erodibility));
        SolveNeed {
            identity,
            grid: Grid { rect, scale: 1.0 / cell },
            grid_args: self.grid_args(),
            solution_bytes: nodes.saturating_mul(Solved::bytes_per_node() + Detail::bytes_per_node()),
            scratch_bytes: nodes.saturating_mul(geogen_drainage::solve::scratch_bytes_per_node()),
        }
    }
}

impl Operation for Drainage {
    fn name(&self) -> &str {
        "HeightMap.Drainage"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        let maps = usize::from(self.uplift == Rate::Map) + usize::from(self.erodibility == Rate::Map);
        &[ObjectKind::Map, ObjectKind::Map, ObjectKind::Map][..1 + maps]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!(
            "{}, {:?}, {:?}, {:?}, {:?}, sea {}, rivers {} x {}, diffusion {}, m {}, n {}, {:#x}",
            self.duration,
            self.output,
            self.uplift,
            self.erodibility,
            self.layout,
            self.sea_level,
            self.river_width,
            self.river_depth,
            self.diffusion,
            self.m,
            self.n,
            self.seed
        )
    }
    /// Nothing at the render's scale: the arguments are read on the solve's grid only.
    fn required_bounds(&self, _: Bounds, _: &OpContext) -> Vec<Bounds> {
        vec![Bounds::Map(Rect::EMPTY); self.arg_kinds().len()]
    }
    fn result_extent(&self, own: Bounds, _: &[Bounds], _: &OpContext) -> Bounds {
        own
    }
    /// A finite map: one solve over the whole map. An infinite one: the windows of the super-tiles
    /// the bounds reach (with their blend bands).
    fn solve_needs(&self, own: Bounds, ctx: &OpContext) -> Vec<SolveNeed> {
        match self.layout {
            Layout::Finite { cell, nodes, .. } => {
                vec![self.need(Rect::new(0, 0, u64::from(nodes.0), u64::from(nodes.1)), cell)]
            }
            Layout::Infinite { side, band, cells, halo } => {
                let rect = own.rect();
                if rect.is_empty() {
                    return Vec::new();
                }
                let (x1, y1) = rect.last_pixel();
                let xs = tiles_over(rect.x as f64 / ctx.scale, (x1 + 1) as f64 / ctx.scale, side, band);
                let ys = tiles_over(rect.y as f64 / ctx.scale, (y1 + 1) as f64 / ctx.scale, side, band);
                ys.flat_map(|j| xs.clone().map(move |i| (i, j))).map(|(i, j)| self.window(i, j, cells, halo)).collect()
            }
        }
    }
    fn solve(&self, need: &SolveNeed, grid: &[&HeightMap]) -> Result<Solution, RenderError> {
        let rect = need.grid.rect;
        let (nx, ny) = (rect.width as usize, rect.height as usize);
        let data = |k: usize| -> Result<&[f32], RenderError> {
            let map = grid.get(k).ok_or_else(|| RenderError::Internal("Drainage: a grid input is missing".into()))?;
            if map.rect() != rect {
                return Err(RenderError::Internal(format!("Drainage: a grid input of {}", map.rect())));
            }
            Ok(map.data())
        };
        let mut next = 1;
        let mut rate_map = |rate: Rate| -> Result<Option<&[f32]>, RenderError> {
            match rate {
                Rate::Number(_) => Ok(None),
                Rate::Map => {
                    next += 1;
                    data(next - 1).map(Some)
                }
            }
        };
        let uplift = rate_map(self.uplift)?;
        let erodibility = rate_map(self.erodibility)?;
        let cell = 1.0 / need.grid.scale;
        let input = Input { nx, ny, cell, height: data(0)?, uplift, erodibility };
        let mut params = self.params();
        let (index, origin) = match self.layout {
            Layout::Finite { .. } => ((0, 0), (0.0, 0.0)),
            Layout::Infinite { cells, halo, .. } => {
                // Windows solve alike: no window may scale its heights by what it alone holds.
                params.keep_relief = false;
                params.relative_uplift = false;
                let cells = i64::from(cells);
                let index_of = |start: i64| (start + i64::from(halo) + cells / 2).div_euclid(cells);
                let index = (index_of(rect.x), index_of(rect.y));
                // Each window's own mesh, so the seams do not repeat.
                params.seed = combine_seeds(&[params.seed, index.0 as u32, index.1 as u32]);
                (index, (rect.x as f64 * cell, rect.y as f64 * cell))
            }
        };
        let solved = geogen_drainage::solve(&input, &params);
        Ok(Arc::new(Tile { index, origin, detail: Detail::new(solved, self.shape()) }))
    }
    fn render(&self, _: &KernelContext, _: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        Err(RenderError::Internal("Drainage renders from its solution".into()))
    }
    fn render_solved(
        &self,
        ctx: &KernelContext,
        solutions: &[Solution],
        target: &mut Object,
        _: &[&Object],
    ) -> Result<(), RenderError> {
        let tiles = solutions
            .iter()
            .map(|s| {
                s.downcast_ref::<Tile>().ok_or_else(|| RenderError::Internal("Drainage: a foreign solution".into()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let rect = ctx.bounds.rect();
        let mut map = HeightMap::try_zeroed(rect)?;
        let scale = ctx.scale;
        let pixel = 1.0 / scale;
        let (side, _) = self.scales();
        let flow_scale = 1.0 / (1.0 + side * side).ln();
        let output = self.output;
        let value = |tile: &Tile, sampler: &mut Sampler<'_>, x: f64, y: f64| -> f64 {
            let need = match output {
                DrainageOutput::Height => Need::Height,
                DrainageOutput::Rivers => Need::River,
                DrainageOutput::Lakes => Need::Lake,
                DrainageOutput::Flow => Need::Area,
            };
            let sample = sampler.sample_only(x - tile.origin.0, y - tile.origin.1, need);
            match output {
                DrainageOutput::Height => sample.height,
                DrainageOutput::Rivers => sample.river,
                DrainageOutput::Lakes => sample.lake,
                DrainageOutput::Flow => ((1.0 + sample.area).ln() * flow_scale).clamp(0.0, 1.0),
            }
        };
        let layout = self.layout;
        let width = map.width().max(1);
        map.data_mut().par_chunks_mut(width).enumerate().for_each(|(row, pixels)| {
            let y = (rect.y + row as i64) as f64 / scale;
            // One sampler per solution and row: the pixels of a cell share its channels.
            let mut samplers: Vec<Sampler<'_>> = tiles.iter().map(|t| t.detail.sampler(pixel)).collect();
            for (column, out) in pixels.iter_mut().enumerate() {
                let x = (rect.x + column as i64) as f64 / scale;
                let v = match layout {
                    Layout::Finite { .. } => match (tiles.first(), samplers.first_mut()) {
                        (Some(tile), Some(sampler)) => value(tile, sampler, x, y),
                        _ => 0.0,
                    },
                    Layout::Infinite { side, band, .. } => {
                        // The super-tiles' values blended by their weights, in a fixed order.
                        let (mut sum, mut weights) = (0.0, 0.0);
                        for (tile, sampler) in tiles.iter().zip(samplers.iter_mut()) {
                            let w = tile_weight(x, tile.index.0, side, band) * tile_weight(y, tile.index.1, side, band);
                            if w > 0.0 {
                                sum += w * value(tile, sampler, x, y);
                                weights += w;
                            }
                        }
                        if weights > 0.0 {
                            sum / weights
                        } else {
                            0.0
                        }
                    }
                };
                *out = match output {
                    DrainageOutput::Height => saturate(v as f32),
                    _ => v as f32,
                };
            }
        });
        *target = Object::Map(map);
        Ok(())
    }
}
