//! The solved landscape at any resolution: heights, rivers, lakes and upstream area at any point
//! of the map, each a pure function of the solution and the point (so any tile, at any scale, is
//! exact).
//!
//! The surface. Linear interpolation over the mesh's triangles has no pit (a node always has a
//! lower neighbour along a link, and a linear triangle never holds a minimum inside it) but shows
//! its facets; a smooth blend of the nodes around a point (a compact bell over about a cell and a
//! half) shows none but lifts every valley floor, and can close valleys into pits where they
//! narrow. Their lower envelope takes the best of each: in valleys, where the blend lifts the
//! floor, the triangles' sharp V, whose floor runs down the links the water takes; on ridges and
//! slopes the blend, which rounds what the triangles would leave creased. A point of the envelope
//! whose lower half is the triangles always has a way down; one whose lower half is the blend lies
//! on a convex ridge or slope, where the blend has no pit to offer.
//!
//! Rivers. Every link carrying at least `min_area` upstream runs as a smooth curve (Catmull-Rom
//! through the main upstream node, the node, its receiver and the receiver's, so a river's links
//! join without a kink) from its node to its receiver. Its channel, `width(A)` wide and
//! `depth(A)` deep below a bed that falls linearly from the node's surface to the receiver's, is cut
//! into the surface: a flat bottom (never narrower than a pixel and a half, so a row of pixels
//! always follows it down) and parabolic banks. The bottom only goes down (each node's surface lies
//! above its receiver's, the depth grows downstream, and it never sinks below the level of a lake
//! ahead), so a river has no pit at any resolution. Lakes are flat at their level, and so is the
//! channel of a link across a lake (bed and bottom both at the level): a lake only one node wide
//! still holds a row of pixels at its level from where a river enters to where it spills.

use crate::mesh::floor_i64;
use crate::solve::Drainage;

/// The river geometry and what a point reports.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RiverShape {
    /// Channel width (map units) of a river draining a hundredth of the map; it grows with the
    /// square root of the area.
    pub width: f64,
    /// Channel depth (height units) of such a river; it grows with the area to the power 0.4.
    pub depth: f64,
    /// The upstream area (map units²) from which a link carries a channel at all.
    pub min_area: f64,
    /// The upstream area (map units²) from which a channel counts as a river in the river mask.
    pub river_area: f64,
}

/// What [`Detail::sample`] computes at a point.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Sample {
    pub height: f64,
    /// Upstream area, map units² (of the channel at the point, or interpolated between nodes).
    pub area: f64,
    /// How much of the pixel a river's channel (of at least `river_area`) covers, antialiased: 1
    /// inside, 0 outside, a pixel's ramp at its banks, and less than 1 where it is narrower than a
    /// pixel.
    pub river: f64,
    /// 1 on a lake, 0 elsewhere, interpolated at the shore.
    pub lake: f64,
}

/// Depth below the sea over which the sea floor turns from the envelope to the smooth blend.
const SEA_FADE: f64 = 0.01;

/// Bell radius of the smooth blend, in cells.
const BLEND_RADIUS: f64 = 1.3;

/// A solution ready to be sampled: each node's channel bottom, and the wide channels (more than
/// half a cell across) indexed by the cells they reach; the others are found among the nodes
/// around a point.
pub struct Detail {
    d: Drainage,
    shape: RiverShape,
    /// Each node's channel bottom (see [`Detail::bottoms`]).
    bottom: Vec<f32>,
    /// Wide channels per cell: `wide_cells[c]..wide_cells[c + 1]` indexes `wide`, which holds
    /// their nodes.
    wide_cells: Vec<u32>,
    wide: Vec<u32>,
    /// The area of a hundredth of the map, map units².
    reference_area: f64,
}

/// One channel's curve: four control points (grid units) and its width and depths.
struct Channel {
    points: [(f64, f64); 4],
    half_width: f64,
    bed: (f64, f64),
    /// The channel's bottom at the node and at the receiver.
    bottom: (f64, f64),
    area: (f64, f64),
    river: bool,
}

/// How far (grid units) from its node a channel's curve reaches: a link is at most `1 + 2 ×
/// JITTER` along each axis, and the curve bulges a little beyond it.
const CURVE_REACH: f64 = 2.0;

impl Detail {
    pub fn new(d: Drainage, shape: RiverShape) -> Detail {
        let (nx, ny) = (d.mesh.nx, d.mesh.ny);
        let side = d.cell * (nx.max(ny).saturating_sub(1).max(1)) as f64;
        let reference_area = 0.01 * side * side;
        let mut detail =
            Detail { d, shape, bottom: Vec::new(), wide_cells: vec![0; nx * ny + 1], wide: Vec::new(), reference_area };
        detail.bottom = detail.bottoms().into_iter().map(|b| b as f32).collect();
        // Wide channels: the cells their curve's bounding box, widened by their half width and a
        // cell, covers. Counted, then filled (a compressed row per cell).
        let mut reach: Vec<(u32, [usize; 4])> = Vec::new();
        for k in 0..detail.d.mesh.len() {
            let Some(channel) = detail.channel(k) else { continue };
            if !detail.is_wide(&channel) {
                continue;
            }
            let pad = channel.half_width / detail.d.cell + 1.0;
            let xs = channel.points[1..3].iter().map(|p| p.0);
            let ys = channel.points[1..3].iter().map(|p| p.1);
            let (x0, x1) = (xs.clone().fold(f64::INFINITY, f64::min) - pad, xs.fold(f64::NEG_INFINITY, f64::max) + pad);
            let (y0, y1) = (ys.clone().fold(f64::INFINITY, f64::min) - pad, ys.fold(f64::NEG_INFINITY, f64::max) + pad);
            let clamp = |v: f64, n: usize| (v.floor().max(0.0) as usize).min(n.saturating_sub(1));
            reach.push((k as u32, [clamp(x0, nx), clamp(x1 + 1.0, nx), clamp(y0, ny), clamp(y1 + 1.0, ny)]));
        }
        let mut counts = vec![0u32; nx * ny];
        for (_, [x0, x1, y0, y1]) in &reach {
            for y in *y0..=*y1 {
                for x in *x0..=*x1 {
                    counts[y * nx + x] += 1;
                }
            }
        }
        let mut start = 0u32;
        for (c, count) in counts.iter().enumerate() {
            detail.wide_cells[c] = start;
            start += count;
        }
        detail.wide_cells[nx * ny] = start;
        detail.wide = vec![0; start as usize];
        let mut fill = detail.wide_cells.clone();
        for (k, [x0, x1, y0, y1]) in &reach {
            for y in *y0..=*y1 {
                for x in *x0..=*x1 {
                    let c = y * nx + x;
                    detail.wide[fill[c] as usize] = *k;
                    fill[c] += 1;
                }
            }
        }
        detail
    }

    /// The solution sampled.
    pub fn drainage(&self) -> &Drainage {
        &self.d
    }

    /// Whether a channel is too wide to be found among the nodes around a point.
    fn is_wide(&self, channel: &Channel) -> bool {
        channel.half_width > 0.5 * self.d.cell
    }

    /// Bytes this holds beyond the solution: the bottoms and the wide channels' index.
    pub fn bytes(&self) -> u64 {
        ((self.bottom.len() + self.wide_cells.len() + self.wide.len()) * 4) as u64
    }

    /// An upper bound of [`Detail::bytes`] for a mesh of `nodes` nodes, before it is built: four
    /// bytes of bottom, four of index per node, and the wide channels' entries, which a wide
    /// channel's share of the nodes keeps far below another four bytes per node.
    pub const fn bytes_per_node() -> u64 {
        12
    }

    fn width(&self, area: f64) -> f64 {
        self.shape.width * (area / self.reference_area).sqrt()
    }

    fn depth(&self, area: f64) -> f64 {
        self.shape.depth * libm::pow(area / self.reference_area, 0.4)
    }

    /// Each node's channel bottom: its surface less its channel's depth, but never below the
    /// level of the first lake downstream, so a river comes up to a lake's surface where it meets
    /// it instead of ending in a hole below it (the bottom never rises downstream: the surface
    /// falls and the depth grows, and the lake's level is a floor below both). Under a lake, the
    /// lake's level. Found by walking each node's path down to a node already known.
    fn bottoms(&self) -> Vec<f64> {
        let d = &self.d;
        let n = d.receiver.len();
        // The level of the first lake downstream (−∞ when the water reaches the sea or the edge
        // first), NaN while unknown.
        let mut floor = vec![f64::NAN; n];
        let mut path = Vec::new();
        for start in 0..n {
            let mut k = start;
            while floor[k].is_nan() {
                let r = d.receiver[k] as usize;
                if r == k {
                    floor[k] = f64::NEG_INFINITY;
                    break;
                }
                if d.depth[r] > 0.0 {
                    floor[k] = f64::from(d.surface[r]);
                    break;
                }
                path.push(k);
                k = r;
            }
            let known = floor[k];
            for p in path.drain(..) {
                floor[p] = known;
            }
        }
        (0..n)
            .map(|k| {
                let surface = f64::from(d.surface[k]);
                if d.depth[k] > 0.0 {
                    surface
                } else {
                    (surface - self.depth(f64::from(d.area[k]))).max(floor[k])
                }
            })
            .collect()
    }

    /// The channel of node `k`'s link to its receiver, if it carries one.
    fn channel(&self, k: usize) -> Option<Channel> {
        let d = &self.d;
        let r = d.receiver[k] as usize;
        let area = f64::from(d.area[k]);
        if r == k || area < self.shape.min_area {
            return None;
        }
        let mesh = &d.mesh;
        let p = |k: usize| (f64::from(mesh.x[k]), f64::from(mesh.y[k]));
        let (pn, pr) = (p(k), p(r));
        let up = d.upstream[k] as usize;
        let pu = if up == k { (2.0 * pn.0 - pr.0, 2.0 * pn.1 - pr.1) } else { p(up) };
        let rr = d.receiver[r] as usize;
        let prr = if rr == r { (2.0 * pr.0 - pn.0, 2.0 * pr.1 - pn.1) } else { p(rr) };
        let area_r = f64::from(d.area[r]);
        Some(Channel {
            points: [pu, pn, pr, prr],
            half_width: 0.5 * self.width(area),
            bed: (f64::from(d.surface[k]), f64::from(d.surface[r])),
            bottom: (f64::from(self.bottom[k]), f64::from(self.bottom[r])),
            area: (area, area_r.max(area)),
            river: area >= self.shape.river_area,
        })
    }

    /// Everything at the map point `(x, y)` (map units), rendered with pixels `pixel` map units
    /// wide. To sample many points, [`Detail::sampler`] reuses what points in one cell share.
    pub fn sample(&self, x: f64, y: f64, pixel: f64) -> Sample {
        self.sampler(pixel).sample(x, y)
    }

    /// A sampler of points rendered with pixels `pixel` map units wide, which keeps the channels
    /// that may reach the last cell it sampled (the points of a row of pixels share them).
    pub fn sampler(&self, pixel: f64) -> Sampler<'_> {
        Sampler { detail: self, pixel, cell: None, candidates: Vec::new() }
    }

    /// The channels that may reach a point of grid cell `(ci, cj)` rendered with pixels `pixel`
    /// map units wide: the narrow ones of the nodes around it whose link's box, widened by the
    /// reach, meets the cell, and the wide ones indexed there.
    fn candidates(&self, ci: i64, cj: i64, pixel: f64, out: &mut Vec<u32>) {
        out.clear();
        let d = &self.d;
        let mesh = &d.mesh;
        let (nx, ny) = (mesh.nx as i64, mesh.ny as i64);
        // A narrow channel reaches `half + pixel` from its curve, `half` at most half a cell or a
        // pixel and a quarter; the curve stays within a third of a cell of its link's box, and a
        // link's node within `CURVE_REACH` of any point of the link's box.
        let reach = (0.5 * d.cell).max(1.25 * pixel) + pixel;
        let margin = reach / d.cell + 0.35;
        let radius = (CURVE_REACH + margin).ceil() as i64;
        let (u0, u1, v0, v1) = (ci as f64, (ci + 1) as f64, cj as f64, (cj + 1) as f64);
        for j in (cj - radius).max(0)..=(cj + radius).min(ny - 1) {
            for i in (ci - radius).max(0)..=(ci + radius).min(nx - 1) {
                let k = (j * nx + i) as usize;
                if f64::from(d.area[k]) < self.shape.min_area {
                    continue;
                }
                let r = d.receiver[k] as usize;
                let (xa, xb) = (f64::from(mesh.x[k]), f64::from(mesh.x[r]));
                let (ya, yb) = (f64::from(mesh.y[k]), f64::from(mesh.y[r]));
                if u1 < xa.min(xb) - margin
                    || u0 > xa.max(xb) + margin
                    || v1 < ya.min(yb) - margin
                    || v0 > ya.max(yb) + margin
                {
                    continue;
                }
                if self.channel(k).is_some_and(|ch| !self.is_wide(&ch)) {
                    out.push(k as u32);
                }
            }
        }
        let c = (cj.clamp(0, ny - 1) * nx + ci.clamp(0, nx - 1)) as usize;
        out.extend_from_slice(&self.wide[self.wide_cells[c] as usize..self.wide_cells[c + 1] as usize]);
    }

    /// The smooth blend of the nodes' surface around grid point `(u, v)`: a compact bell of
    /// radius `BLEND_RADIUS` cells (none if no node is that close, which jitter never allows).
    fn blend(&self, u: f64, v: f64) -> Option<f64> {
        let d = &self.d;
        let mesh = &d.mesh;
        let (nx, ny) = (mesh.nx as i64, mesh.ny as i64);
        let (ci, cj) = (floor_i64(u), floor_i64(v));
        let (mut sum, mut weights) = (0.0, 0.0);
        for j in (cj - 1).max(0)..=(cj + 2).min(ny - 1) {
            for i in (ci - 1).max(0)..=(ci + 2).min(nx - 1) {
                let k = (j * nx + i) as usize;
                let (dx, dy) = (f64::from(mesh.x[k]) - u, f64::from(mesh.y[k]) - v);
                let r2 = (dx * dx + dy * dy) / (BLEND_RADIUS * BLEND_RADIUS);
                if r2 < 1.0 {
                    let w = (1.0 - r2) * (1.0 - r2) * (1.0 - r2);
                    sum += w * f64::from(d.surface[k]);
                    weights += w;
                }
            }
        }
        (weights > 0.0).then(|| sum / weights)
    }
}

/// Samples a [`Detail`] point by point (see [`Detail::sampler`]).
pub struct Sampler<'a> {
    detail: &'a Detail,
    pixel: f64,
    /// The cell whose channels `candidates` holds.
    cell: Option<(i64, i64)>,
    candidates: Vec<u32>,
}

/// Which values of a [`Sample`] a caller needs (the others are left at 0).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Need {
    Everything,
    Height,
    River,
    Lake,
    Area,
}

impl Sampler<'_> {
    /// Everything at the map point `(x, y)` (map units).
    pub fn sample(&mut self, x: f64, y: f64) -> Sample {
        self.sample_only(x, y, Need::Everything)
    }

    /// What `need` asks for at the map point `(x, y)` (map units): the same values as
    /// [`Sampler::sample`] gives, without computing the others.
    pub fn sample_only(&mut self, x: f64, y: f64, need: Need) -> Sample {
        let detail = self.detail;
        let d = &detail.d;
        let mesh = &d.mesh;
        let cell = d.cell;
        let pixel = self.pixel;
        let (u, v) = (x / cell, y / cell);
        let (tri, w) = mesh.locate(u, v);
        let linear = |values: &[f32]| {
            w[0] * f64::from(values[tri[0]]) + w[1] * f64::from(values[tri[1]]) + w[2] * f64::from(values[tri[2]])
        };
        let wants = |what: Need| need == Need::Everything || need == what;
        let mut height = 0.0;
        // The rivers need the ground too: they end at the coast.
        if wants(Need::Height) || wants(Need::River) {
            let faceted = linear(&d.surface);
            let smooth = detail.blend(u, v).unwrap_or(faceted);
            height = faceted.min(smooth);
            // Under the sea nothing needs to drain: the blend alone, faded in over the first
            // `SEA_FADE` of depth so the coast stays continuous.
            let sea = f64::from(d.sea_level);
            if faceted < sea {
                let t = ((sea - faceted) / SEA_FADE).min(1.0);
                height += (smooth - height) * t;
            }
        }
        let lake = if wants(Need::Lake) {
            w[0] * f64::from(u8::from(d.depth[tri[0]] > 0.0))
                + w[1] * f64::from(u8::from(d.depth[tri[1]] > 0.0))
                + w[2] * f64::from(u8::from(d.depth[tri[2]] > 0.0))
        } else {
            0.0
        };
        let mut area = if wants(Need::Area) {
            w.iter().zip(tri).map(|(w, k)| w * f64::from(d.area[k]).max(1e-12).ln()).sum::<f64>().exp()
        } else {
            0.0
        };
        let mut river = 0.0f64;
        if !(wants(Need::Height) || wants(Need::River) || wants(Need::Area)) {
            return Sample { height, area, river, lake };
        }
        let here = (floor_i64(u), floor_i64(v));
        if self.cell != Some(here) {
            detail.candidates(here.0, here.1, pixel, &mut self.candidates);
            self.cell = Some(here);
        }
        // The flat bottom is never narrower than a pixel and a half, so a row of pixels follows it.
        let min_flat = 0.75 * pixel;
        // Channels and rivers end at the coast: the sea floor beyond a mouth is not cut (a
        // channel's rounded end would leave a bowl off every mouth).
        let sea_level = f64::from(d.sea_level);
        let on_land = height >= sea_level;
        for &k in &self.candidates {
            let Some(ch) = detail.channel(k as usize) else { continue };
            let flat = (0.5 * ch.half_width).max(min_flat);
            let half = ch.half_width.max(flat + 0.5 * pixel);
            let (dist, t) = distance_to_curve(&ch.points, u, v);
            let dist = dist * cell;
            if dist >= half + pixel {
                continue;
            }
            let bed = ch.bed.0 + (ch.bed.1 - ch.bed.0) * t;
            let depth = bed - (ch.bottom.0 + (ch.bottom.1 - ch.bottom.0) * t);
            if dist < half {
                let profile = if dist <= flat {
                    1.0
                } else {
                    let s = (dist - flat) / (half - flat);
                    1.0 - s * s
                };
                if on_land {
                    // Never below the sea: a mouth is cut down to the sea's surface, not under it.
                    height = height.min((bed - depth * profile).max(sea_level));
                }
                area = area.max(ch.area.0 + (ch.area.1 - ch.area.0) * t);
            }
            if ch.river && on_land {
                // The channel's true width, antialiased: the share of a pixel it covers (roughly),
                // so a river narrower than a pixel is faint rather than a pixel wide.
                let coverage = ((ch.half_width + 0.5 * pixel - dist) / pixel).clamp(0.0, 1.0);
                river = river.max(coverage.min(2.0 * ch.half_width / pixel));
            }
        }
        Sample { height, area, river, lake }
    }
}

/// The distance from `(u, v)` to the Catmull-Rom curve from `points[1]` to `points[2]` (grid
/// units), and the curve parameter in `[0, 1]` of the nearest point, with the curve taken as
/// `PIECES` straight pieces.
fn distance_to_curve(points: &[(f64, f64); 4], u: f64, v: f64) -> (f64, f64) {
    const PIECES: usize = 4;
    let at = |t: f64| catmull_rom(points, t);
    let mut best = (f64::INFINITY, 0.0);
    let mut a = at(0.0);
    for s in 0..PIECES {
        let t0 = s as f64 / PIECES as f64;
        let t1 = (s + 1) as f64 / PIECES as f64;
        let b = at(t1);
        let (ex, ey) = (b.0 - a.0, b.1 - a.1);
        let length2 = ex * ex + ey * ey;
        let f = if length2 > 0.0 { (((u - a.0) * ex + (v - a.1) * ey) / length2).clamp(0.0, 1.0) } else { 0.0 };
        let (qx, qy) = (a.0 + ex * f - u, a.1 + ey * f - v);
        let dist = (qx * qx + qy * qy).sqrt();
        if dist < best.0 {
            best = (dist, t0 + (t1 - t0) * f);
        }
        a = b;
    }
    best
}

/// The centripetal-free (uniform) Catmull-Rom point at `t` between `p[1]` and `p[2]`.
fn catmull_rom(p: &[(f64, f64); 4], t: f64) -> (f64, f64) {
    let (t2, t3) = (t * t, t * t * t);
    let w0 = -0.5 * t3 + t2 - 0.5 * t;
    let w1 = 1.5 * t3 - 2.5 * t2 + 1.0;
    let w2 = -1.5 * t3 + 2.0 * t2 + 0.5 * t;
    let w3 = 0.5 * t3 - 0.5 * t2;
    (w0 * p[0].0 + w1 * p[1].0 + w2 * p[2].0 + w3 * p[3].0, w0 * p[0].1 + w1 * p[1].1 + w2 * p[2].1 + w3 * p[3].1)
}
