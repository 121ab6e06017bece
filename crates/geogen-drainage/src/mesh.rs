//! The mesh water flows on: a grid of nodes, each moved off its grid point by a hashed jitter,
//! joined to its four axis neighbours and to the diagonal neighbours of a triangulation that splits
//! each grid square along one hashed diagonal.
//!
//! Why not the plain grid with eight neighbours: on a square grid steepest descent can only leave a
//! node in eight directions, so rivers run in straight lines at multiples of 45° and bend in steps
//! (the grid bias of D8 networks). Jittered nodes make every link's direction and length differ,
//! and one diagonal per square (never both) keeps links from crossing, as on the irregular meshes
//! of Cordonnier et al. (2016), while the nodes stay addressable by row and column: a node's
//! neighbours are found by index, and a point of the map finds its nodes by division.
//!
//! Positions are in grid units (node `(i, j)` lies within `JITTER` of `(i, j)`). Nodes on the
//! border are not jittered, so the mesh covers its rectangle exactly.

use geogen_random::hash3;
use rayon::prelude::*;

/// Nodes lie within this fraction of a cell of their grid point, on each axis. Less than a half
/// keeps every grid square a simple quadrilateral (its corners in their order), so at least one
/// of its diagonals lies inside it.
pub const JITTER: f64 = 0.45;

/// The eight directions, clockwise from east, as `(dx, dy)` (y grows downwards).
pub const DIRECTIONS: [(i32, i32); 8] = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)];

/// A direction's opposite.
#[inline]
pub fn opposite(k: usize) -> usize {
    (k + 4) & 7
}

/// Salts of the hashes, so jitter and diagonals are independent.
const SALT_X: u32 = 0x6a09_e667;
const SALT_Y: u32 = 0xbb67_ae85;
const SALT_DIAGONAL: u32 = 0x3c6e_f372;

#[derive(Clone, Debug)]
pub struct Mesh {
    pub nx: usize,
    pub ny: usize,
    pub seed: u32,
    /// Node positions, grid units, row-major.
    pub x: Vec<f32>,
    pub y: Vec<f32>,
    /// Bit `k` set when the node is linked to its neighbour in direction `k`.
    pub links: Vec<u8>,
}

/// The hashed jitter of node `(i, j)` in `[-JITTER, JITTER]²` (zero on the border).
pub fn jitter(i: usize, j: usize, nx: usize, ny: usize, seed: u32) -> (f64, f64) {
    let unit = |salt: u32| {
        let h = hash3(i as u32 ^ salt, j as u32, seed);
        (f64::from(h >> 8) / f64::from(1u32 << 24)) * 2.0 - 1.0
    };
    let jx = if i == 0 || i + 1 == nx { 0.0 } else { unit(SALT_X) * JITTER };
    let jy = if j == 0 || j + 1 == ny { 0.0 } else { unit(SALT_Y) * JITTER };
    (jx, jy)
}

/// Whether the grid square with top-left node `(i, j)` is split along `\\` (joining `(i, j)` and
/// `(i + 1, j + 1)`) rather than `/`: the diagonal inside the square when only one is (a
/// non-convex square), else a hashed choice.
fn falling_diagonal(x: &[f32], y: &[f32], nx: usize, i: usize, j: usize, seed: u32) -> bool {
    let p = |k: usize| (f64::from(x[k]), f64::from(y[k]));
    let (a, b, c, d) = (p(j * nx + i), p(j * nx + i + 1), p((j + 1) * nx + i + 1), p((j + 1) * nx + i));
    let side = |o: (f64, f64), e: (f64, f64), q: (f64, f64)| (e.0 - o.0) * (q.1 - o.1) - (e.1 - o.1) * (q.0 - o.0);
    let falling_inside = side(a, c, b) * side(a, c, d) < 0.0;
    let rising_inside = side(b, d, a) * side(b, d, c) < 0.0;
    match (falling_inside, rising_inside) {
        (true, false) => true,
        (false, true) => false,
        _ => hash3(i as u32, j as u32 ^ SALT_DIAGONAL, seed) & 0x100 != 0,
    }
}

impl Mesh {
    pub fn new(nx: usize, ny: usize, seed: u32) -> Mesh {
        let n = nx * ny;
        let (x, y): (Vec<f32>, Vec<f32>) = (0..n)
            .into_par_iter()
            .map(|k| {
                let (i, j) = (k % nx.max(1), k / nx.max(1));
                let (jx, jy) = jitter(i, j, nx, ny, seed);
                ((i as f64 + jx) as f32, (j as f64 + jy) as f32)
            })
            .unzip();
        let squares = nx.saturating_sub(1);
        let falling: Vec<bool> = (0..squares * ny.saturating_sub(1))
            .into_par_iter()
            .map(|q| falling_diagonal(&x, &y, nx, q % squares, q / squares, seed))
            .collect();
        // Axis links wherever the neighbour exists; a diagonal link where its square holds it.
        let mut links = vec![0u8; n];
        links.par_chunks_mut(nx.max(1)).enumerate().for_each(|(j, row)| {
            let square = |i: usize, j: usize| falling[j * squares + i];
            let (up, down) = (j > 0, j + 1 < ny);
            for (i, mask) in row.iter_mut().enumerate() {
                let (left, right) = (i > 0, i + 1 < nx);
                let mut bits = 0u8;
                let mut link = |d: usize, linked: bool| {
                    if linked {
                        bits |= 1 << d;
                    }
                };
                link(0, right);
                link(1, right && down && square(i, j));
                link(2, down);
                link(3, left && down && !square(i - 1, j));
                link(4, left);
                link(5, left && up && square(i - 1, j - 1));
                link(6, up);
                link(7, right && up && !square(i, j - 1));
                *mask = bits;
            }
        });
        Mesh { nx, ny, seed, x, y, links }
    }

    pub fn len(&self) -> usize {
        self.nx * self.ny
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether node `k` lies on the border of the grid.
    #[inline]
    pub fn on_border(&self, k: usize) -> bool {
        let (i, j) = (k % self.nx, k / self.nx);
        i == 0 || j == 0 || i + 1 == self.nx || j + 1 == self.ny
    }

    /// The index of node `k`'s neighbour in direction `d` (the caller checks the link).
    #[inline]
    pub fn neighbour(&self, k: usize, d: usize) -> usize {
        let (dx, dy) = DIRECTIONS[d];
        (k as i64 + i64::from(dx) + i64::from(dy) * self.nx as i64) as usize
    }

    /// The distance between nodes `a` and `b`, grid units.
    #[inline]
    pub fn distance(&self, a: usize, b: usize) -> f64 {
        let dx = f64::from(self.x[a]) - f64::from(self.x[b]);
        let dy = f64::from(self.y[a]) - f64::from(self.y[b]);
        (dx * dx + dy * dy).sqrt()
    }

    /// The triangle of the mesh holding the point `(px, py)` (grid units, inside the mesh's
    /// rectangle), as its three nodes and the point's barycentric weights. Points outside every
    /// triangle (only ever beyond the border) take the nearest grid square's nearer triangle with
    /// weights clamped to it.
    pub fn locate(&self, px: f64, py: f64) -> ([usize; 3], [f64; 3]) {
        let (nx, ny) = (self.nx as i64, self.ny as i64);
        let ci = floor_i64(px).clamp(0, (nx - 2).max(0));
        let cj = floor_i64(py).clamp(0, (ny - 2).max(0));
        let mut best: Option<([usize; 3], [f64; 3], f64)> = None;
        for dj in [0i64, -1, 1] {
            for di in [0i64, -1, 1] {
                let (i, j) = (ci + di, cj + dj);
                if i < 0 || j < 0 || i + 1 >= nx || j + 1 >= ny {
                    continue;
                }
                let a = (j * nx + i) as usize;
                let (b, c, d) = (a + 1, a + 1 + self.nx, a + self.nx);
                let falling = self.links[a] & (1 << 1) != 0;
                let mut triangles = if falling { [[a, b, c], [a, c, d]] } else { [[a, b, d], [b, c, d]] };
                // The side of the diagonal the point lies on names its triangle: that one first.
                let p = |k: usize| (f64::from(self.x[k]), f64::from(self.y[k]));
                let ((ox, oy), (ex, ey)) = if falling { (p(a), p(c)) } else { (p(b), p(d)) };
                // Positive: the side of `d` for `\\` (the second triangle), of `a` for `/` (the first).
                let side = (ex - ox) * (py - oy) - (ey - oy) * (px - ox);
                if (side > 0.0) == falling {
                    triangles.swap(0, 1);
                }
                for t in triangles {
                    let w = self.barycentric(t, px, py);
                    // The most negative weight: 0 or more inside.
                    let inside = w[0].min(w[1]).min(w[2]);
                    if inside >= 0.0 {
                        return (t, w);
                    }
                    if best.as_ref().is_none_or(|b| inside > b.2) {
                        best = Some((t, w, inside));
                    }
                }
            }
        }
        match best {
            Some((t, w, _)) => {
                let clamped = [w[0].max(0.0), w[1].max(0.0), w[2].max(0.0)];
                let sum = clamped[0] + clamped[1] + clamped[2];
                (t, if sum > 0.0 { clamped.map(|v| v / sum) } else { [1.0, 0.0, 0.0] })
            }
            None => ([0, 0, 0], [1.0, 0.0, 0.0]),
        }
    }

    /// The barycentric weights of `(px, py)` in triangle `t`.
    fn barycentric(&self, t: [usize; 3], px: f64, py: f64) -> [f64; 3] {
        let p = |k: usize| (f64::from(self.x[k]), f64::from(self.y[k]));
        let (a, b, c) = (p(t[0]), p(t[1]), p(t[2]));
        let det = (b.1 - c.1) * (a.0 - c.0) + (c.0 - b.0) * (a.1 - c.1);
        if det == 0.0 {
            return [1.0, 0.0, 0.0];
        }
        let wa = ((b.1 - c.1) * (px - c.0) + (c.0 - b.0) * (py - c.1)) / det;
        let wb = ((c.1 - a.1) * (px - c.0) + (a.0 - c.0) * (py - c.1)) / det;
        [wa, wb, 1.0 - wa - wb]
    }

    /// `values` (one per node) interpolated linearly over the mesh's triangles at `(px, py)`.
    pub fn interpolate(&self, values: &[f64], px: f64, py: f64) -> f64 {
        let (t, w) = self.locate(px, py);
        w[0] * values[t[0]] + w[1] * values[t[1]] + w[2] * values[t[2]]
    }

    /// Calls `f(neighbour, direction)` for every node linked to `k`, in direction order.
    #[inline]
    pub fn for_each_neighbour(&self, k: usize, mut f: impl FnMut(usize, usize)) {
        let mut mask = self.links[k];
        while mask != 0 {
            let d = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            f(self.neighbour(k, d), d);
        }
    }
}

/// `floor(x)` as an integer, without a call to the C library's `floor` (the baseline x86-64 has
/// no rounding instruction for it): exact for every `x` within ±2⁶², saturating beyond.
#[inline]
pub fn floor_i64(x: f64) -> i64 {
    let t = x as i64;
    if (t as f64) > x {
        t - 1
    } else {
        t
    }
}

/// A grid's value at `(px, py)` (grid units), bilinearly from its four nearest grid points
/// (clamped to the grid).
pub fn bilinear(values: &[f64], nx: usize, ny: usize, px: f64, py: f64) -> f64 {
    let x = px.clamp(0.0, (nx - 1) as f64);
    let y = py.clamp(0.0, (ny - 1) as f64);
    let (i, j) = ((floor_i64(x) as usize).min(nx.saturating_sub(2)), (floor_i64(y) as usize).min(ny.saturating_sub(2)));
    let (fx, fy) = (x - i as f64, y - j as f64);
    let at = |i: usize, j: usize| values[j.min(ny - 1) * nx + i.min(nx - 1)];
    let top = at(i, j) + (at(i + 1, j) - at(i, j)) * fx;
    let bottom = at(i, j + 1) + (at(i + 1, j + 1) - at(i, j + 1)) * fx;
    top + (bottom - top) * fy
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_without_the_c_library() {
        for x in [-2.5, -2.0, -1e-300, -0.0, 0.0, 0.3, 1.0, 7.999, 1e15 + 0.5, -1e15 - 0.5] {
            assert_eq!(floor_i64(x), x.floor() as i64, "{x}");
        }
    }

    #[test]
    fn interpolation_is_exact_on_planes_and_at_nodes() {
        let mesh = Mesh::new(12, 9, 4);
        let plane: Vec<f64> =
            (0..mesh.len()).map(|k| 0.3 * f64::from(mesh.x[k]) - 0.2 * f64::from(mesh.y[k]) + 1.0).collect();
        for s in 0..200 {
            let (px, py) = ((s * 37 % 110) as f64 / 10.0, (s * 53 % 80) as f64 / 10.0);
            let v = mesh.interpolate(&plane, px, py);
            assert!((v - (0.3 * px - 0.2 * py + 1.0)).abs() < 1e-5, "{px} {py}");
        }
        for k in 0..mesh.len() {
            let v = mesh.interpolate(&plane, f64::from(mesh.x[k]), f64::from(mesh.y[k]));
            assert!((v - plane[k]).abs() < 1e-6);
        }
    }

    #[test]
    fn links_are_symmetric_and_never_cross() {
        let segments_cross = |a: (f64, f64), b: (f64, f64), c: (f64, f64), d: (f64, f64)| {
            let side =
                |o: (f64, f64), e: (f64, f64), q: (f64, f64)| (e.0 - o.0) * (q.1 - o.1) - (e.1 - o.1) * (q.0 - o.0);
            side(a, b, c) * side(a, b, d) < 0.0 && side(c, d, a) * side(c, d, b) < 0.0
        };
        let mesh = Mesh::new(23, 17, 99);
        for k in 0..mesh.len() {
            mesh.for_each_neighbour(k, |n, d| {
                assert!(mesh.links[n] & (1 << opposite(d)) != 0, "link {k} -> {n} not mirrored");
            });
        }
        // Each square holds exactly one of its diagonals.
        for j in 0..mesh.ny - 1 {
            for i in 0..mesh.nx - 1 {
                let k = j * mesh.nx + i;
                let falling = mesh.links[k] & (1 << 1) != 0;
                let rising = mesh.links[k + 1] & (1 << 3) != 0;
                assert!(falling != rising, "square ({i}, {j})");
                // The diagonal taken crosses none of the square's sides.
                let p = |k: usize| (f64::from(mesh.x[k]), f64::from(mesh.y[k]));
                let (a, b, c, d) = (p(k), p(k + 1), p(k + 1 + mesh.nx), p(k + mesh.nx));
                let (e0, e1) = if falling { (a, c) } else { (b, d) };
                for (s0, s1) in [(a, b), (b, c), (c, d), (d, a)] {
                    assert!(!segments_cross(e0, e1, s0, s1), "square ({i}, {j}) diagonal leaves it");
                }
            }
        }
    }

    #[test]
    fn jitter_stays_inside_and_borders_stay_put() {
        let mesh = Mesh::new(40, 30, 7);
        let mut moved = 0;
        for k in 0..mesh.len() {
            let (i, j) = ((k % mesh.nx) as f32, (k / mesh.nx) as f32);
            assert!((mesh.x[k] - i).abs() <= JITTER as f32 && (mesh.y[k] - j).abs() <= JITTER as f32);
            if mesh.on_border(k) {
                assert!(mesh.x[k] == i || mesh.y[k] == j);
            }
            moved += usize::from(mesh.x[k] != i);
        }
        assert!(moved > mesh.len() / 2);
        // Both diagonals occur, about equally.
        let falling = (0..mesh.len()).filter(|&k| mesh.links[k] & (1 << 1) != 0).count();
        assert!((450..700).contains(&falling), "{falling} of 1131");
    }
}
