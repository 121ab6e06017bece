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
//! is coarsened to cells of k × k quads (k a power of two dividing the chunk), each a fan of
//! triangles around its centre vertex. A cell edge is subdivided only where it lies on the chunk
//! border, so neighbouring cells always share their edges exactly, and so do neighbouring chunks
//! and tiles. [`Simplify::TriangleBudget`] takes the smallest k that fits the budget (the same k
//! everywhere); [`Simplify::MaxError`] takes, chunk by chunk, the largest k whose triangles stay
//! within the error of every sample they replace.

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

/// A cell of a chunk: quads `[x, x + w) × [y, y + h)` in chunk coordinates.
struct Cell {
    x: u32,
    y: u32,
    size: u32,
}

/// The boundary of a cell counter-clockwise seen from above (down the left side, along the bottom,
/// up the right side, back along the top), edges subdivided where they lie on the chunk border.
fn cell_boundary(cell: &Cell, chunk_w: u32, chunk_h: u32) -> Vec<(u32, u32)> {
    let (x0, y0, k) = (cell.x, cell.y, cell.size);
    let (x1, y1) = (x0 + k, y0 + k);
    let step = |on_border: bool| if on_border { 1 } else { k };
    let mut ring = Vec::new();
    let left = step(x0 == 0);
    ring.extend((0..k / left).map(|i| (x0, y0 + i * left)));
    let bottom = step(y1 == chunk_h);
    ring.extend((0..k / bottom).map(|i| (x0 + i * bottom, y1)));
    let right = step(x1 == chunk_w);
    ring.extend((0..k / right).map(|i| (x1, y1 - i * right)));
    let top = step(y0 == 0);
    ring.extend((0..k / top).map(|i| (x1 - i * top, y0)));
    ring
}

/// The triangles of a chunk of `w × h` quads with cells of `k` (1: two per quad), as vertex
/// positions in chunk coordinates.
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
    for cy in (0..h).step_by(k as usize) {
        for cx in (0..w).step_by(k as usize) {
            let cell = Cell { x: cx, y: cy, size: k };
            let centre = (cx + k / 2, cy + k / 2);
            let ring = cell_boundary(&cell, w, h);
            for i in 0..ring.len() {
                triangles.push([centre, ring[i], ring[(i + 1) % ring.len()]]);
            }
        }
    }
    triangles
}

/// The cell sizes a chunk of `w × h` quads allows: 1, and the powers of two dividing both, up to
/// the smaller side.
fn cell_sizes(w: u32, h: u32) -> Vec<u32> {
    let mut sizes = vec![1];
    let mut k = 2;
    while k <= w.min(h) && w.is_multiple_of(k) && h.is_multiple_of(k) {
        sizes.push(k);
        k *= 2;
    }
    sizes
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
    let budget_cell = match options.simplify {
        Simplify::TriangleBudget(budget) => Some(budget_cell_size(&origins, budget)),
        _ => None,
    };
    origins
        .into_iter()
        .map(|(x, y, w, h)| {
            let sizes = cell_sizes(w, h);
            let k = match options.simplify {
                Simplify::Full => 1,
                Simplify::TriangleBudget(_) => {
                    let wanted = budget_cell.unwrap_or(1);
                    sizes.iter().copied().filter(|&k| k <= wanted).max().unwrap_or(1)
                }
                Simplify::MaxError(max) => {
                    let mut best = 1;
                    for &k in sizes.iter().skip(1) {
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

/// The smallest cell size (a power of two) whose triangles fit the budget over all chunks, or the
/// coarsest one.
fn budget_cell_size(chunks: &[(u32, u32, u32, u32)], budget: u64) -> u32 {
    let count = |k: u32| -> u64 {
        chunks
            .iter()
            .map(|&(_, _, w, h)| {
                let k = cell_sizes(w, h).into_iter().filter(|&s| s <= k).max().unwrap_or(1);
                chunk_triangles(w, h, k).len() as u64
            })
            .sum()
    };
    let mut k = 1;
    while k < CHUNK_QUADS && count(k) > budget {
        k *= 2;
    }
    k
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
