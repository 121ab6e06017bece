//! Triangle meshes of a height field, for binary glTF (`.glb`) and OBJ.
//!
//! # Layout
//!
//! Vertex (c, r) stands at pixel (c, r) of the field: x = c × pixel size (east), y = height ×
//! height scale (up), z = r × pixel size (south): glTF's right-handed, Y-up frame, faces wound
//! counter-clockwise seen from above. A mesh covers the quads whose top-left corner is a core pixel
//! and whose other corners were rendered: with the margin the renderer adds, a tile's mesh reaches
//! one vertex into its right and bottom neighbours, so the meshes of a tiled world meet without a
//! gap, and only a finite map's edge ends a mesh.
//!
//! The mesh is cut into chunks of at most [`CHUNK_QUADS`]² quads, so no chunk has more than
//! 129² = 16 641 vertices: 16-bit indices, which every engine loads (Unity's default index format
//! stops at 65 535 vertices). Each chunk is a glTF node placed at its first vertex by a
//! translation (positions stay small, so `f32` keeps them exact far from the origin) and an OBJ
//! object `chunk_<x>_<y>` (x, y its first pixel).
//!
//! Normals are those of the normal map (central differences over the margin), so shading has no
//! seams either; UVs put texel centres on vertices: u = (c + ½) / core width, v = (r + ½) / core
//! height, counted from the core's top-left pixel, so the normal, splat or colored map of the same
//! render drapes pixel-exactly.
//!
//! # Simplification
//!
//! Optional, and crack-free: every chunk keeps all vertices of its border, and inside it the grid
//! is coarsened to cells of k × k quads (k a power of two; the last cells of a chunk take what is
//! left), each a fan of triangles around an interior vertex (a cell one quad thick is a strip
//! zipped between its two long sides). A cell edge is subdivided only where it lies on the chunk
//! border, so neighbouring cells always share their edges exactly, and so do neighbouring chunks
//! and tiles. [`Simplify::TriangleBudget`] takes the smallest k that fits the budget everywhere,
//! then halves it in the roughest chunks while the budget allows; [`Simplify::MaxError`] coarsens
//! chunk by chunk, doubling k while the triangles stay within the error of every sample they
//! replace.

use crate::derived::{Surface, TerrainScale};
use crate::quantize::sanitize;

/// The most quads along a chunk side.
pub const CHUNK_QUADS: u32 = 128;

/// How much to thin the mesh out.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Simplify {
    /// Every pixel is a vertex.
    #[default]
    Full,
    /// At most this many triangles, if the coarsest grid allows it.
    TriangleBudget(u64),
    /// No sample further than this many metres (vertically) from the surface that replaces it.
    MaxError(f64),
}

/// What a mesh is made of, besides the heights.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct MeshOptions {
    pub scale: TerrainScale,
    pub simplify: Simplify,
}

/// One chunk, ready to write: positions relative to `translation`.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    /// The physical pixel of its first vertex.
    pub pixel: (i64, i64),
    /// Where its vertex (0, 0) stands, in metres.
    pub translation: [f64; 3],
    pub positions: Vec<[f32; 3]>,
    pub normals: Vec<[f32; 3]>,
    pub uvs: Vec<[f32; 2]>,
    pub indices: Vec<u16>,
}

impl Chunk {
    /// The smallest and largest position component per axis (glTF requires them).
    pub fn bounds(&self) -> ([f32; 3], [f32; 3]) {
        let mut min = [f32::INFINITY; 3];
        let mut max = [f32::NEG_INFINITY; 3];
        for p in &self.positions {
            for axis in 0..3 {
                min[axis] = min[axis].min(p[axis]);
                max[axis] = max[axis].max(p[axis]);
            }
        }
        (min, max)
    }
}

/// The vertex columns and rows of the mesh of a surface, in field coordinates: from the core's
/// first pixel to one past its last where the field has that pixel.
fn vertex_span(surface: &Surface<'_>) -> ((u32, u32), (u32, u32)) {
    let c = surface.core;
    let end_x = (c.x + c.width).min(surface.field.width - 1);
    let end_y = (c.y + c.height).min(surface.field.height - 1);
    ((c.x, end_x), (c.y, end_y))
}

/// The number of quads along each axis of a surface's mesh (0 when it is one vertex thin).
pub fn quad_counts(surface: &Surface<'_>) -> (u32, u32) {
    let ((x0, x1), (y0, y1)) = vertex_span(surface);
    (x1 - x0, y1 - y0)
}

/// A cell of a chunk: quads `[x0, x1) × [y0, y1)` in chunk coordinates (at least one each way).
#[derive(Clone, Copy)]
struct Cell {
    x0: u32,
    y0: u32,
    x1: u32,
    y1: u32,
}

/// The points of a cell edge from `a` to `b` (both included, `a` first): every pixel where the
/// edge lies on the chunk border, only the two ends otherwise.
fn edge_points(a: (u32, u32), b: (u32, u32), on_border: bool) -> Vec<(u32, u32)> {
    if !on_border {
        return vec![a, b];
    }
    let steps = a.0.abs_diff(b.0).max(a.1.abs_diff(b.1));
    let step = |from: u32, to: u32, i: u32| match to.cmp(&from) {
        std::cmp::Ordering::Greater => from + i,
        std::cmp::Ordering::Less => from - i,
        std::cmp::Ordering::Equal => from,
    };
    (0..=steps).map(|i| (step(a.0, b.0, i), step(a.1, b.1, i))).collect()
}

/// `[a, b, c]` wound counter-clockwise seen from above (x east, rows south), or `None` if the three
/// points are collinear.
fn upward(a: (u32, u32), b: (u32, u32), c: (u32, u32)) -> Option<[(u32, u32); 3]> {
    let (ax, ay) = (i64::from(a.0), i64::from(a.1));
    let (bx, by) = (i64::from(b.0), i64::from(b.1));
    let (cx, cy) = (i64::from(c.0), i64::from(c.1));
    // The y (up) component of (b − a) × (c − a) with z along the rows.
    let up = (by - ay) * (cx - ax) - (bx - ax) * (cy - ay);
    match up.signum() {
        1 => Some([a, b, c]),
        -1 => Some([a, c, b]),
        _ => None,
    }
}

/// The triangles of one cell whose edges on the chunk border are subdivided: a fan around an
/// interior vertex when the cell is at least two quads each way, otherwise (a strip one quad
/// thick) a zipper between its two long sides.
fn cell_triangles(cell: Cell, chunk_w: u32, chunk_h: u32, out: &mut Vec<[(u32, u32); 3]>) {
    let Cell { x0, y0, x1, y1 } = cell;
    let (left, right) = (x0 == 0, x1 == chunk_w);
    let (top, bottom) = (y0 == 0, y1 == chunk_h);
    if x1 - x0 >= 2 && y1 - y0 >= 2 {
        // Counter-clockwise ring: down the left side, along the bottom, up the right, back along the top.
        let mut ring = Vec::new();
        for side in [
            edge_points((x0, y0), (x0, y1), left),
            edge_points((x0, y1), (x1, y1), bottom),
            edge_points((x1, y1), (x1, y0), right),
            edge_points((x1, y0), (x0, y0), top),
        ] {
            ring.extend_from_slice(&side[..side.len() - 1]);
        }
        let centre = ((x0 + x1) / 2, (y0 + y1) / 2);
        for i in 0..ring.len() {
            out.extend(upward(centre, ring[i], ring[(i + 1) % ring.len()]));
        }
        return;
    }
    // One quad thick: the two long sides as point lists running the same way.
    let (a, b) = if x1 - x0 == 1 {
        (edge_points((x0, y0), (x0, y1), left), edge_points((x1, y0), (x1, y1), right))
    } else {
        (edge_points((x0, y0), (x1, y0), top), edge_points((x0, y1), (x1, y1), bottom))
    };
    let (mut i, mut j) = (0, 0);
    // Advance along whichever side is behind (by position along the strip), so every triangle
    // has points on both sides.
    let along = |p: (u32, u32)| if x1 - x0 == 1 { p.1 } else { p.0 };
    while i + 1 < a.len() || j + 1 < b.len() {
        let advance_a = j + 1 >= b.len() || (i + 1 < a.len() && along(a[i + 1]) <= along(b[j + 1]));
        if advance_a {
            out.extend(upward(a[i], a[i + 1], b[j]));
            i += 1;
        } else {
            out.extend(upward(a[i], b[j], b[j + 1]));
            j += 1;
        }
    }
}

/// The triangles of a chunk of `w × h` quads with cells of `k` quads (1: two per quad; the last
/// cells of a row or column take what is left), as vertex positions in chunk coordinates.
fn chunk_triangles(w: u32, h: u32, k: u32) -> Vec<[(u32, u32); 3]> {
    let mut triangles = Vec::new();
    if k <= 1 {
        for y in 0..h {
            for x in 0..w {
                let (tl, bl, tr, br) = ((x, y), (x, y + 1), (x + 1, y), (x + 1, y + 1));
                triangles.push([tl, bl, tr]);
                triangles.push([tr, bl, br]);
            }
        }
        return triangles;
    }
    for y0 in (0..h).step_by(k as usize) {
        for x0 in (0..w).step_by(k as usize) {
            let cell = Cell { x0, y0, x1: (x0 + k).min(w), y1: (y0 + k).min(h) };
            cell_triangles(cell, w, h, &mut triangles);
        }
    }
    triangles
}

/// The cell sizes a chunk may use: 1 and the powers of two up to a chunk side.
fn cell_sizes() -> impl Iterator<Item = u32> {
    (0..=CHUNK_QUADS.trailing_zeros()).map(|e| 1 << e)
}

/// The largest vertical distance (metres) between a sample of the chunk and the triangles.
fn chunk_error(surface: &Surface<'_>, origin: (u32, u32), triangles: &[[(u32, u32); 3]], scale: &TerrainScale) -> f64 {
    let z = |(x, y): (u32, u32)| surface.z(i64::from(origin.0 + x), i64::from(origin.1 + y), scale);
    let mut worst = 0.0f64;
    for t in triangles {
        let [a, b, c] = *t;
        let (ax, ay) = (f64::from(a.0), f64::from(a.1));
        let (bx, by) = (f64::from(b.0), f64::from(b.1));
        let (cx, cy) = (f64::from(c.0), f64::from(c.1));
        let det = (by - cy) * (ax - cx) + (cx - bx) * (ay - cy);
        if det == 0.0 {
            continue;
        }
        let (za, zb, zc) = (z(a), z(b), z(c));
        let (xmin, xmax) = (a.0.min(b.0).min(c.0), a.0.max(b.0).max(c.0));
        let (ymin, ymax) = (a.1.min(b.1).min(c.1), a.1.max(b.1).max(c.1));
        for y in ymin..=ymax {
            for x in xmin..=xmax {
                let (px, py) = (f64::from(x), f64::from(y));
                let wa = ((by - cy) * (px - cx) + (cx - bx) * (py - cy)) / det;
                let wb = ((cy - ay) * (px - cx) + (ax - cx) * (py - cy)) / det;
                let wc = 1.0 - wa - wb;
                if wa < -1e-9 || wb < -1e-9 || wc < -1e-9 {
                    continue;
                }
                let interpolated = wa * za + wb * zb + wc * zc;
                worst = worst.max((interpolated - z((x, y))).abs());
            }
        }
    }
    worst
}

/// The chunks of a surface's mesh, in row-major order of their first pixel. Empty when the mesh
/// has no quad (a field one pixel thin).
pub fn build_chunks(surface: &Surface<'_>, options: &MeshOptions) -> Vec<Chunk> {
    let ((vx0, vx1), (vy0, vy1)) = vertex_span(surface);
    let (quads_x, quads_y) = (vx1 - vx0, vy1 - vy0);
    if quads_x == 0 || quads_y == 0 {
        return Vec::new();
    }
    let mut origins = Vec::new();
    for cy in (0..quads_y).step_by(CHUNK_QUADS as usize) {
        for cx in (0..quads_x).step_by(CHUNK_QUADS as usize) {
            let w = CHUNK_QUADS.min(quads_x - cx);
            let h = CHUNK_QUADS.min(quads_y - cy);
            origins.push((vx0 + cx, vy0 + cy, w, h));
        }
    }
    let budget_cells = match options.simplify {
        Simplify::TriangleBudget(budget) => budget_cell_sizes(surface, &origins, budget, &options.scale),
        _ => Vec::new(),
    };
    origins
        .into_iter()
        .enumerate()
        .map(|(i, (x, y, w, h))| {
            let k = match options.simplify {
                Simplify::Full => 1,
                Simplify::TriangleBudget(_) => budget_cells[i],
                Simplify::MaxError(max) => {
                    let mut best = 1;
                    for k in cell_sizes().skip(1) {
                        if chunk_error(surface, (x, y), &chunk_triangles(w, h, k), &options.scale) <= max {
                            best = k;
                        } else {
                            break;
                        }
                    }
                    best
                }
            };
            build_chunk(surface, (x, y), &chunk_triangles(w, h, k), (w, h), &options.scale)
        })
        .collect()
}

/// The cell size of each chunk under a triangle budget: the smallest size k (a power of two) whose
/// triangles fit the budget over all chunks (or the coarsest one), then k / 2 for as many chunks as
/// the rest of the budget allows, the roughest first (largest error at k; ties in chunk order), so
/// the budget is used, not just kept, and spent where it buys the most.
fn budget_cell_sizes(
    surface: &Surface<'_>,
    chunks: &[(u32, u32, u32, u32)],
    budget: u64,
    scale: &TerrainScale,
) -> Vec<u32> {
    let count = |w: u32, h: u32, k: u32| chunk_triangles(w, h, k).len() as u64;
    let total = |k: u32| -> u64 { chunks.iter().map(|&(_, _, w, h)| count(w, h, k)).sum() };
    let mut k = 1;
    while k < CHUNK_QUADS && total(k) > budget {
        k *= 2;
    }
    let mut sizes = vec![k; chunks.len()];
    let mut used = total(k);
    if k == 1 || used > budget {
        return sizes;
    }
    let mut roughest: Vec<(f64, usize)> = chunks
        .iter()
        .enumerate()
        .map(|(i, &(x, y, w, h))| (chunk_error(surface, (x, y), &chunk_triangles(w, h, k), scale), i))
        .collect();
    roughest.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, i) in roughest {
        let (_, _, w, h) = chunks[i];
        let finer = used - count(w, h, k) + count(w, h, k / 2);
        if finer <= budget {
            sizes[i] = k / 2;
            used = finer;
        }
    }
    sizes
}

fn build_chunk(
    surface: &Surface<'_>,
    origin: (u32, u32),
    triangles: &[[(u32, u32); 3]],
    (w, h): (u32, u32),
    scale: &TerrainScale,
) -> Chunk {
    const UNUSED: u32 = u32::MAX;
    let columns = (w + 1) as usize;
    let mut index_of = vec![UNUSED; columns * (h + 1) as usize];
    let mut order: Vec<(u32, u32)> = Vec::new();
    let mut indices = Vec::with_capacity(triangles.len() * 3);
    for t in triangles {
        for &(x, y) in t {
            let slot = &mut index_of[y as usize * columns + x as usize];
            if *slot == UNUSED {
                *slot = order.len() as u32;
                order.push((x, y));
            }
            // At most 129² vertices per chunk: always a 16-bit index.
            indices.push(*slot as u16);
        }
    }
    let core = surface.core;
    let field_width = surface.field.width as usize;
    let (p, v) = (scale.pixel_size, scale.height_scale);
    let mut positions = Vec::with_capacity(order.len());
    let mut normals = Vec::with_capacity(order.len());
    let mut uvs = Vec::with_capacity(order.len());
    for &(x, y) in &order {
        let (fx, fy) = (origin.0 + x, origin.1 + y);
        let h = f64::from(sanitize(surface.field.data[fy as usize * field_width + fx as usize]));
        positions.push([(f64::from(x) * p) as f32, (h * v) as f32, (f64::from(y) * p) as f32]);
        let (dx, drow) = surface.gradient(i64::from(fx), i64::from(fy), scale);
        let len = (dx * dx + drow * drow + 1.0).sqrt();
        normals.push([(-dx / len) as f32, (1.0 / len) as f32, (-drow / len) as f32]);
        let u = (f64::from(fx) - f64::from(core.x) + 0.5) / f64::from(core.width);
        let v = (f64::from(fy) - f64::from(core.y) + 0.5) / f64::from(core.height);
        uvs.push([u as f32, v as f32]);
    }
    let pixel = (surface.origin.0 + i64::from(origin.0), surface.origin.1 + i64::from(origin.1));
    Chunk { pixel, translation: [pixel.0 as f64 * p, 0.0, pixel.1 as f64 * p], positions, normals, uvs, indices }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derived::Window;
    use crate::HeightField;

    fn ramp(width: u32, height: u32) -> Vec<f32> {
        (0..width * height).map(|i| ((i % width) as f32 * 0.001) - ((i / width) as f32 * 0.0005)).collect()
    }

    #[test]
    fn a_full_mesh_has_a_vertex_per_pixel_and_two_triangles_per_quad() {
        let data = ramp(5, 4);
        let surface = Surface::whole(HeightField::new(5, 4, &data).unwrap());
        let chunks = build_chunks(&surface, &MeshOptions::default());
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].positions.len(), 20);
        assert_eq!(chunks[0].indices.len(), 4 * 3 * 2 * 3);
        // Pixel (3, 2): x 3 m, y h × 100 m, z 2 m.
        let h = data[2 * 5 + 3] as f64 * 100.0;
        assert!(chunks[0].positions.contains(&[3.0, h as f32, 2.0]));
    }

    #[test]
    fn every_triangle_faces_up() {
        let data = ramp(20, 20);
        let surface = Surface::whole(HeightField::new(20, 20, &data).unwrap());
        for simplify in [Simplify::Full, Simplify::TriangleBudget(50), Simplify::MaxError(1000.0)] {
            let chunks = build_chunks(&surface, &MeshOptions { simplify, ..MeshOptions::default() });
            for chunk in &chunks {
                for t in chunk.indices.chunks(3) {
                    let [a, b, c] = [t[0], t[1], t[2]].map(|i| chunk.positions[i as usize]);
                    // The y of (b − a) × (c − a), in the horizontal plane.
                    let cross_y = (b[2] - a[2]) * (c[0] - a[0]) - (b[0] - a[0]) * (c[2] - a[2]);
                    assert!(cross_y > 0.0, "{simplify:?}: {a:?} {b:?} {c:?}");
                }
            }
        }
    }

    #[test]
    fn simplification_keeps_the_border_and_meets_its_budget() {
        let data = ramp(65, 65);
        let surface = Surface::whole(HeightField::new(65, 65, &data).unwrap());
        let full = build_chunks(&surface, &MeshOptions::default());
        assert_eq!(full[0].indices.len() / 3, 64 * 64 * 2);
        let thin =
            build_chunks(&surface, &MeshOptions { simplify: Simplify::TriangleBudget(2000), ..Default::default() });
        let triangles = thin[0].indices.len() / 3;
        assert!(triangles <= 2000 && triangles > 100, "{triangles}");
        // A plane is flat enough for the coarsest grid with no error at all.
        let coarse = build_chunks(&surface, &MeshOptions { simplify: Simplify::MaxError(1e-6), ..Default::default() });
        assert!(coarse[0].indices.len() / 3 < 64 * 4 + 8, "{}", coarse[0].indices.len() / 3);
        // Every border vertex is still there.
        for chunk in [&thin[0], &coarse[0]] {
            for i in 0..=64u32 {
                for (x, y) in [(i, 0), (i, 64), (0, i), (64, i)] {
                    assert!(
                        chunk.positions.iter().any(|p| p[0] == x as f32 && p[2] == y as f32),
                        "border vertex ({x}, {y}) missing"
                    );
                }
            }
        }
    }

    #[test]
    fn every_cell_size_covers_any_chunk_exactly_once() {
        for (w, h) in [(19, 19), (1, 7), (7, 1), (128, 37), (3, 128), (128, 128)] {
            for k in cell_sizes() {
                let triangles = chunk_triangles(w, h, k);
                let mut area2 = 0i64;
                for t in &triangles {
                    assert!(t.iter().all(|p| p.0 <= w && p.1 <= h), "{w}x{h} k {k}: {t:?}");
                    let [a, b, c] = t.map(|p| (i64::from(p.0), i64::from(p.1)));
                    let up = (b.1 - a.1) * (c.0 - a.0) - (b.0 - a.0) * (c.1 - a.1);
                    assert!(up > 0, "{w}x{h} k {k}: {t:?} faces down or is flat");
                    area2 += up;
                }
                // Twice the area of the triangles is twice the chunk's: no hole, no overlap.
                assert_eq!(area2, 2 * i64::from(w) * i64::from(h), "{w}x{h} k {k}");
            }
        }
    }

    /// A field smooth on its left (a gentle bowl) and rough on its right (a hashed checkerboard of
    /// bumps), so error-bounded simplification picks different cell sizes chunk by chunk.
    fn hills(width: u32, height: u32) -> Vec<f32> {
        (0..width * height)
            .map(|i| {
                let (x, y) = (f64::from(i % width), f64::from(i / width));
                let bowl = ((x - 60.0) * (x - 60.0) + (y - 40.0) * (y - 40.0)) * 2e-6;
                let rough = if x > 180.0 { f64::from((i.wrapping_mul(2_654_435_761) >> 27) & 7) * 0.01 } else { 0.0 };
                (bowl + rough) as f32
            })
            .collect()
    }

    /// The triangles of some chunks in world pixels, as wound (1 m pixels), each checked to sit on
    /// whole pixels.
    fn world_triangles(chunks: &[Chunk]) -> Vec<[(i64, i64); 3]> {
        let mut out = Vec::new();
        for chunk in chunks {
            for t in chunk.indices.chunks(3) {
                out.push([t[0], t[1], t[2]].map(|i| {
                    let p = chunk.positions[i as usize];
                    assert!(p[0].fract() == 0.0 && p[2].fract() == 0.0, "{p:?} is not on a pixel");
                    (chunk.pixel.0 + p[0] as i64, chunk.pixel.1 + p[2] as i64)
                }));
            }
        }
        out
    }

    /// Asserts that `triangles` tile the vertex rectangle `[x0, x1] × [y0, y1]` exactly: every
    /// triangle faces up (counter-clockwise from above, so never flat); every edge inside is used
    /// by exactly two triangles, once each way (no crack, T-junction, overlap or flipped face);
    /// every other edge lies on the rectangle's border and is one pixel long (so a neighbour's
    /// mesh, which also keeps its border whole, meets it edge for edge); the areas add up.
    fn assert_watertight(triangles: &[[(i64, i64); 3]], (x0, y0, x1, y1): (i64, i64, i64, i64), what: &str) {
        let mut edges = std::collections::HashMap::new();
        let mut area2 = 0i64;
        for t in triangles {
            let [a, b, c] = *t;
            let up = (b.1 - a.1) * (c.0 - a.0) - (b.0 - a.0) * (c.1 - a.1);
            assert!(up > 0, "{what}: {t:?} faces down or is flat");
            area2 += up;
            for (p, q) in [(a, b), (b, c), (c, a)] {
                *edges.entry((p, q)).or_insert(0u32) += 1;
            }
        }
        for (&(p, q), &count) in &edges {
            assert_eq!(count, 1, "{what}: edge {p:?}→{q:?} is used {count} times the same way");
            if edges.contains_key(&(q, p)) {
                continue;
            }
            let on_border = (p.0 == q.0 && (p.0 == x0 || p.0 == x1)) || (p.1 == q.1 && (p.1 == y0 || p.1 == y1));
            assert!(on_border, "{what}: edge {p:?}→{q:?} has one triangle but is inside the mesh");
            assert_eq!(p.0.abs_diff(q.0) + p.1.abs_diff(q.1), 1, "{what}: border edge {p:?}→{q:?} skips a vertex");
        }
        assert_eq!(area2, 2 * (x1 - x0) * (y1 - y0), "{what}: the triangles do not cover the rectangle once");
    }

    /// `(triangles, largest vertical distance in metres between a sample and the mesh above or
    /// below it)`, measured on the written chunks independently of the simplifier.
    fn measured_error(chunks: &[Chunk], data: &[f32], width: u32, scale: &TerrainScale) -> f64 {
        let mut worst = 0.0f64;
        for chunk in chunks {
            for t in chunk.indices.chunks(3) {
                let [a, b, c] = [t[0], t[1], t[2]].map(|i| chunk.positions[i as usize].map(f64::from));
                let (xmin, xmax) = (a[0].min(b[0]).min(c[0]) as i64, a[0].max(b[0]).max(c[0]) as i64);
                let (zmin, zmax) = (a[2].min(b[2]).min(c[2]) as i64, a[2].max(b[2]).max(c[2]) as i64);
                let det = (b[0] - a[0]) * (c[2] - a[2]) - (c[0] - a[0]) * (b[2] - a[2]);
                for z in zmin..=zmax {
                    for x in xmin..=xmax {
                        let (px, pz) = (x as f64, z as f64);
                        let wb = ((px - a[0]) * (c[2] - a[2]) - (c[0] - a[0]) * (pz - a[2])) / det;
                        let wc = ((b[0] - a[0]) * (pz - a[2]) - (px - a[0]) * (b[2] - a[2])) / det;
                        let wa = 1.0 - wb - wc;
                        if wa < -1e-9 || wb < -1e-9 || wc < -1e-9 {
                            continue;
                        }
                        let on_mesh = wa * a[1] + wb * b[1] + wc * c[1];
                        let (fx, fy) = (chunk.pixel.0 + x, chunk.pixel.1 + z);
                        let sample = f64::from(data[fy as usize * width as usize + fx as usize]) * scale.height_scale;
                        worst = worst.max((on_mesh - sample).abs());
                    }
                }
            }
        }
        worst
    }

    fn triangle_count(chunks: &[Chunk]) -> u64 {
        chunks.iter().map(|c| c.indices.len() as u64 / 3).sum()
    }

    #[test]
    fn every_mesh_is_watertight_across_cells_and_chunks() {
        // 260 × 150 pixels: chunks of 128, 128 and 3 quads across, 128 and 21 down, so cells of
        // every size leave remainders of many thicknesses, one quad included; the rough right side
        // makes error-bounded chunks choose different cell sizes side by side.
        let (w, h) = (260u32, 150u32);
        let data = hills(w, h);
        let surface = Surface::whole(HeightField::new(w, h, &data).unwrap());
        let mut modes = vec![Simplify::Full];
        modes.extend([0.01, 0.5, 3.0, 1e9].map(Simplify::MaxError));
        modes.extend([1, 2_000, 20_000, 40_000].map(Simplify::TriangleBudget));
        for simplify in modes {
            let chunks = build_chunks(&surface, &MeshOptions { simplify, ..MeshOptions::default() });
            assert_watertight(&world_triangles(&chunks), (0, 0, 259, 149), &format!("{simplify:?}"));
        }
        // Straight from the cell layout, for chunk shapes the field above does not make.
        for (cw, ch) in [(1, 1), (1, 9), (9, 1), (2, 2), (3, 5), (17, 33), (65, 2), (128, 128)] {
            for k in cell_sizes() {
                let triangles: Vec<_> = chunk_triangles(cw, ch, k)
                    .into_iter()
                    .map(|t| t.map(|(x, y)| (i64::from(x), i64::from(y))))
                    .collect();
                assert_watertight(&triangles, (0, 0, i64::from(cw), i64::from(ch)), &format!("{cw}x{ch} k {k}"));
            }
        }
    }

    #[test]
    fn neighbouring_tiles_simplified_differently_still_meet_edge_for_edge() {
        // Two tiles of a 300 × 140 world split at column 150, each rendered with a one-pixel margin
        // as the renderer does: the left one reaches one vertex into the right one.
        let (w, h) = (300u32, 140u32);
        let world = hills(w, h);
        let crop = |x0: u32, x1: u32| -> Vec<f32> {
            (0..h).flat_map(|y| (x0..x1).map(move |x| (x, y))).map(|(x, y)| world[(y * w + x) as usize]).collect()
        };
        let (left_data, right_data) = (crop(0, 151), crop(149, 300));
        let left = Surface {
            field: HeightField::new(151, h, &left_data).unwrap(),
            core: Window { x: 0, y: 0, width: 150, height: h },
            origin: (0, 0),
        };
        let right = Surface {
            field: HeightField::new(151, h, &right_data).unwrap(),
            core: Window { x: 1, y: 0, width: 150, height: h },
            origin: (149, 0),
        };
        for (a, b) in [
            (Simplify::MaxError(0.5), Simplify::TriangleBudget(1_000)),
            (Simplify::TriangleBudget(5_000), Simplify::Full),
            (Simplify::Full, Simplify::MaxError(1e9)),
        ] {
            let mut triangles =
                world_triangles(&build_chunks(&left, &MeshOptions { simplify: a, ..Default::default() }));
            triangles
                .extend(world_triangles(&build_chunks(&right, &MeshOptions { simplify: b, ..Default::default() })));
            assert_watertight(&triangles, (0, 0, 299, 139), &format!("{a:?} | {b:?}"));
        }
    }

    #[test]
    fn a_triangle_budget_is_kept_whenever_the_coarsest_grid_allows_it() {
        let (w, h) = (300u32, 200u32);
        let data = hills(w, h);
        let surface = Surface::whole(HeightField::new(w, h, &data).unwrap());
        let mesh = |simplify| build_chunks(&surface, &MeshOptions { simplify, ..Default::default() });
        let full = triangle_count(&mesh(Simplify::Full));
        assert_eq!(full, 299 * 199 * 2);
        let coarsest = triangle_count(&mesh(Simplify::TriangleBudget(0)));
        // Six chunks, each one cell: a fan around its border vertices, about 2 × its perimeter.
        assert!(coarsest < 6 * 4 * 128, "{coarsest}");
        let mut previous = coarsest;
        for budget in [coarsest, coarsest + 1, 3_000, 10_000, 30_000, 100_000, full - 1, full, full * 2] {
            let got = triangle_count(&mesh(Simplify::TriangleBudget(budget)));
            assert!(got <= budget, "budget {budget}: {got} triangles");
            assert!(got >= previous, "budget {budget}: {got} triangles, fewer than a smaller budget gave");
            previous = got;
        }
        assert_eq!(previous, full, "a budget the full mesh fits keeps every pixel");
        // The budget is used, not just kept: after the finest grid that fits everywhere, chunks are
        // refined one by one until the next would not fit.
        for budget in [3_000u64, 10_000, 30_000, 100_000] {
            let chunks = mesh(Simplify::TriangleBudget(budget));
            let got = triangle_count(&chunks);
            assert!(got * 10 > budget * 7, "budget {budget}: only {got} triangles");
        }
        // Refined roughest first: the rough right side gets the finer cells (40 000 triangles: every
        // chunk at k = 4 leaves room to halve k in a few).
        let chunks = mesh(Simplify::TriangleBudget(40_000));
        let per_quad = |x: i64| {
            let of = |c: &&Chunk| c.pixel.0 == x;
            let triangles = chunks.iter().filter(of).map(|c| c.indices.len()).sum::<usize>() as f64 / 3.0;
            let quads = |c: &Chunk| {
                let (_, max) = c.bounds();
                f64::from(max[0]) * f64::from(max[2])
            };
            triangles / chunks.iter().filter(of).map(quads).sum::<f64>()
        };
        assert!(per_quad(256) > per_quad(0) * 2.0, "rough {} vs smooth {}", per_quad(256), per_quad(0));
    }

    #[test]
    fn a_maximum_error_is_kept_and_smooth_chunks_coarsen() {
        let (w, h) = (300u32, 200u32);
        let data = hills(w, h);
        let surface = Surface::whole(HeightField::new(w, h, &data).unwrap());
        let scale = TerrainScale::default();
        let full = 299 * 199 * 2;
        let mut previous = full;
        for max in [0.05, 0.2, 1.0, 4.0, 1e9] {
            let chunks = build_chunks(&surface, &MeshOptions { scale, simplify: Simplify::MaxError(max) });
            let error = measured_error(&chunks, &data, w, &scale);
            // f32 positions round heights of up to ~8 m by less than a micrometre.
            assert!(error <= max + 1e-5, "max {max} m: a sample is {error} m off the mesh");
            let triangles = triangle_count(&chunks);
            assert!(triangles <= previous, "max {max}: {triangles} triangles, more than a tighter bound gave");
            previous = triangles;
        }
        // The rough right side (bumps up to 7 m) keeps its chunks whole under 1 m; the bowl (under
        // 1 m of curvature per chunk) coarsens.
        let chunks = build_chunks(&surface, &MeshOptions { scale, simplify: Simplify::MaxError(1.0) });
        let rough = chunks.iter().filter(|c| c.pixel.0 == 256).map(|c| c.indices.len() / 3).sum::<usize>();
        assert_eq!(rough, 43 * 199 * 2);
        let smooth = chunks.iter().filter(|c| c.pixel.0 == 0).map(|c| c.indices.len() / 3).sum::<usize>();
        assert!(smooth * 10 < 128 * 199 * 2, "{smooth} triangles in the smooth chunks");
        let error = measured_error(&chunks, &data, w, &scale);
        assert!(error > 0.05, "the bound is approached, not trivially met: {error}");
    }

    #[test]
    fn a_bumpy_chunk_refuses_to_coarsen_beyond_its_error() {
        let data: Vec<f32> = (0..33 * 33).map(|i| if (i % 33 + i / 33) % 2 == 0 { 0.1 } else { 0.0 }).collect();
        let surface = Surface::whole(HeightField::new(33, 33, &data).unwrap());
        let chunks = build_chunks(&surface, &MeshOptions { simplify: Simplify::MaxError(1.0), ..Default::default() });
        assert_eq!(chunks[0].indices.len() / 3, 32 * 32 * 2, "a 10 m checkerboard cannot be coarsened within 1 m");
    }

    #[test]
    fn large_meshes_are_chunked_and_tiles_reach_into_their_neighbours() {
        let data = ramp(300, 3);
        let field = HeightField::new(300, 3, &data).unwrap();
        let surface = Surface { field, core: Window { x: 1, y: 1, width: 298, height: 1 }, origin: (-1, -1) };
        let chunks = build_chunks(&surface, &MeshOptions::default());
        // 298 quads wide (the core's 298 pixels reach one into the margin): 128 + 128 + 42.
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks.iter().map(|c| c.pixel).collect::<Vec<_>>(), [(0, 0), (128, 0), (256, 0)]);
        assert_eq!(chunks[2].positions.len(), 43 * 2);
        assert!(chunks.iter().all(|c| c.positions.len() <= 129 * 129));
    }
}
