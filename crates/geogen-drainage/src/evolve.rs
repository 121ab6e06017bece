//! One time step of the landscape: uplift, stream-power incision solved implicitly along the
//! receivers (Braun & Willett 2013), the sediment that incision frees settling in lakes and the
//! sea, and diffusion (hillslope creep on land, a faster spreading under the sea), solved
//! implicitly one axis at a time.
//!
//! Everything here is sequential along the flood's order, or parallel over rows or columns with
//! each row's arithmetic in a fixed order, so the result does not depend on the thread count.

use rayon::prelude::*;

use crate::flood::Routing;
use crate::mesh::Mesh;

/// The stream-power law's constants for one step, in the units of the solve (module `solve`).
#[derive(Copy, Clone, Debug)]
pub struct Incision {
    pub dt: f64,
    /// Exponents of area and slope.
    pub m: f64,
    pub n: f64,
    /// Length of one grid unit in the solve's units.
    pub spacing: f64,
    /// Rivers reaching the sea cut no lower than its surface.
    pub sea_level: f64,
    /// The area of one node (what [`accumulate`] was given).
    pub node_area: f64,
}

/// Upstream area: each node's own area plus everything draining through it.
pub fn accumulate(routing: &Routing, node_area: f64, area: &mut [f64]) {
    area.fill(node_area);
    for &k in routing.order.iter().rev() {
        let k = k as usize;
        let r = routing.receiver[k] as usize;
        if r != k {
            area[r] += area[k];
        }
    }
}

/// Raises every node by its uplift over `dt` and lets the rivers cut into it: on dry land
/// `∂h/∂t = U − K A^m S^n`, solved implicitly from the outlets upstream, so each node's new height
/// uses its receiver's new height and any step length is stable. Outlets stay where they are; a
/// node under a lake or the sea is only uplifted (a lake's spill point carries its water); the
/// map's `border` stays where it is. `eroded` gets what each node lost (height units; never
/// negative).
#[allow(clippy::too_many_arguments)]
pub fn incise(
    mesh: &Mesh,
    routing: &Routing,
    outlet: &[bool],
    border: &[bool],
    area: &[f64],
    uplift: &[f32],
    erodibility: &[f32],
    law: Incision,
    h: &mut [f64],
    eroded: &mut [f64],
) {
    // Each node's coefficient `K dt A^m / L^n` first, in parallel (the powers are most of the
    // work); `eroded` holds it until the node's turn.
    let coefficient = eroded;
    let area_power = AreaPower::new(law.node_area, law.m);
    coefficient.par_chunks_mut(4096).enumerate().for_each(|(c, chunk)| {
        for (i, f) in chunk.iter_mut().enumerate() {
            let k = c * 4096 + i;
            let r = routing.receiver[k] as usize;
            *f = if r == k {
                0.0
            } else {
                let length = mesh.distance(k, r) * law.spacing;
                let length_n = if law.n == 1.0 { length } else { libm::pow(length, law.n) };
                f64::from(erodibility[k]) * law.dt * area_power.of(area[k]) / length_n
            };
        }
    });
    for &k in &routing.order {
        let k = k as usize;
        let f = coefficient[k];
        coefficient[k] = 0.0;
        if border[k] {
            continue;
        }
        let raised = h[k] + f64::from(uplift[k]) * law.dt;
        let r = routing.receiver[k] as usize;
        if outlet[k] || routing.level[k] > h[k] {
            h[k] = raised;
            continue;
        }
        // The river's base: the receiver's new height, the lake surface it flows into, or the sea.
        let base = if routing.level[r] > h[r] {
            routing.level[r]
        } else if outlet[r] && !border[r] {
            h[r].max(law.sea_level)
        } else {
            h[r]
        };
        let new = if raised <= base {
            raised
        } else if law.n == 1.0 {
            (raised + f * base) / (1.0 + f)
        } else {
            implicit_power(raised, base, f, law.n)
        };
        coefficient[k] = (raised - new).max(0.0);
        h[k] = new;
    }
}

/// `A^m` for upstream areas `A`, most of them read from a table. With one receiver per node an
/// upstream area is a whole number of node areas, and most nodes drain only a few: their powers
/// are looked up. The table holds `pow(c × node_area, m)` and is read only where `A` equals
/// `c × node_area` exactly, so every power is the bits `pow(A, m)` gives.
struct AreaPower {
    node_area: f64,
    m: f64,
    table: Vec<f64>,
}

impl AreaPower {
    const ENTRIES: usize = 4096;

    fn new(node_area: f64, m: f64) -> AreaPower {
        let table = if node_area > 0.0 {
            (0..AreaPower::ENTRIES).map(|c| libm::pow(c as f64 * node_area, m)).collect()
        } else {
            Vec::new()
        };
        AreaPower { node_area, m, table }
    }

    fn of(&self, area: f64) -> f64 {
        let count = (area / self.node_area).round();
        if count >= 0.0 && (count as usize) < self.table.len() && count * self.node_area == area {
            self.table[count as usize]
        } else {
            libm::pow(area, self.m)
        }
    }
}

/// Solves `x − h + f (x − b)^n = 0` for `x` in `[b, h]` (Newton's method, kept inside the bracket
/// by bisection; a fixed, deterministic sequence of operations).
fn implicit_power(h: f64, b: f64, f: f64, n: f64) -> f64 {
    let (mut lo, mut hi) = (b, h);
    let mut x = h;
    for _ in 0..40 {
        let d = x - b;
        let g = x - h + f * libm::pow(d, n);
        if g > 0.0 {
            hi = x;
        } else {
            lo = x;
        }
        let slope = 1.0 + f * n * libm::pow(d, n - 1.0);
        let mut next = x - g / slope;
        if !(next > lo && next < hi && next.is_finite()) {
            next = 0.5 * (lo + hi);
        }
        if (next - x).abs() <= 1e-15 * (1.0 + x.abs()) {
            return next;
        }
        x = next;
    }
    x
}

/// Moves the sediment incision freed downstream and lays `deposition` of it where the water
/// stops: in lakes up to their surface (so lakes fill from where rivers enter them), and at river
/// mouths in the sea up to just below `sea_level` (submarine fans that the sea's diffusion spreads
/// into shoals and shelves). The rest leaves the map. `load` is scratch.
#[allow(clippy::too_many_arguments)]
pub fn settle(
    routing: &Routing,
    outlet: &[bool],
    eroded: &[f64],
    deposition: f64,
    sea_level: f64,
    h: &mut [f64],
    load: &mut [f64],
) {
    load.copy_from_slice(eroded);
    for &k in routing.order.iter().rev() {
        let k = k as usize;
        let carried = load[k];
        if carried <= 0.0 {
            continue;
        }
        let room = if outlet[k] {
            // Just below the sea, so the mouth stays an outlet.
            (sea_level - 1e-4 - h[k]).max(0.0)
        } else if routing.level[k] > h[k] {
            routing.level[k] - h[k]
        } else {
            0.0
        };
        let laid = (carried * deposition).min(room);
        h[k] += laid;
        let r = routing.receiver[k] as usize;
        if r != k {
            load[r] += carried - laid;
        }
    }
}

/// Diffusion `∂h/∂t = ∇·(D ∇h)` over `dt`, backward Euler along rows and then along columns (each
/// a tridiagonal solve: unconditionally stable, and never creating a height outside its
/// neighbours' range). `diffusivity` is per node, in grid units² per time unit; `fixed` nodes keep
/// their height. Rows run in parallel, columns in parallel blocks.
pub fn diffuse(nx: usize, ny: usize, diffusivity: &[f32], fixed: &[bool], dt: f64, h: &mut [f64]) {
    if nx < 3 || ny < 3 {
        return;
    }
    h.par_chunks_mut(nx).enumerate().for_each(|(j, row)| {
        let base = j * nx;
        let mut scratch = Tridiagonal::new(nx);
        scratch.solve(row, |i| diffusivity[base + i], |i| fixed[base + i], dt);
    });
    // Columns, a block of them at a time, read and written by rows (cache-friendly), each column
    // solved exactly as alone.
    const BLOCK: usize = 32;
    let blocks: Vec<usize> = (0..nx).step_by(BLOCK).collect();
    let columns: Vec<(usize, Vec<f64>)> = blocks
        .par_iter()
        .map(|&x0| {
            let width = BLOCK.min(nx - x0);
            let mut out = vec![0.0; width * ny];
            let mut column = vec![0.0; ny];
            let mut scratch = Tridiagonal::new(ny);
            for c in 0..width {
                let x = x0 + c;
                for (y, v) in column.iter_mut().enumerate() {
                    *v = h[y * nx + x];
                }
                scratch.solve(&mut column, |y| diffusivity[y * nx + x], |y| fixed[y * nx + x], dt);
                for (y, v) in column.iter().enumerate() {
                    out[y * width + c] = *v;
                }
            }
            (x0, out)
        })
        .collect();
    for (x0, out) in columns {
        let width = BLOCK.min(nx - x0);
        for y in 0..ny {
            h[y * nx + x0..y * nx + x0 + width].copy_from_slice(&out[y * width..(y + 1) * width]);
        }
    }
}

/// Scratch of one tridiagonal solve (the Thomas algorithm).
struct Tridiagonal {
    upper: Vec<f64>,
    rhs: Vec<f64>,
}

impl Tridiagonal {
    fn new(n: usize) -> Tridiagonal {
        Tridiagonal { upper: vec![0.0; n], rhs: vec![0.0; n] }
    }

    /// Solves `(I − dt L) x = v` in place of `v`, where `L` is the diffusion operator along the
    /// line with the conductance between nodes `i` and `i + 1` the mean of their diffusivities;
    /// fixed nodes are identity rows.
    fn solve(&mut self, v: &mut [f64], d: impl Fn(usize) -> f32, fixed: impl Fn(usize) -> bool, dt: f64) {
        let n = v.len();
        let conductance = |i: usize| dt * 0.5 * (f64::from(d(i)) + f64::from(d(i + 1)));
        // Forward sweep: row i is  -a x[i-1] + b x[i] - c x[i+1] = v[i].
        let mut previous_upper = 0.0;
        let mut previous_rhs = 0.0;
        for (i, value) in v.iter().enumerate() {
            let (a, b, c) = if fixed(i) {
                (0.0, 1.0, 0.0)
            } else {
                let a = if i > 0 { conductance(i - 1) } else { 0.0 };
                let c = if i + 1 < n { conductance(i) } else { 0.0 };
                (a, 1.0 + a + c, c)
            };
            let denominator = b - a * previous_upper;
            let upper = c / denominator;
            let rhs = (value + a * previous_rhs) / denominator;
            self.upper[i] = upper;
            self.rhs[i] = rhs;
            previous_upper = upper;
            previous_rhs = rhs;
        }
        // Back substitution.
        let mut next = 0.0;
        for i in (0..n).rev() {
            let x = self.rhs[i] + self.upper[i] * next;
            v[i] = x;
            next = x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flood::route;

    #[test]
    fn diffusion_keeps_fixed_nodes_and_stays_within_range() {
        let (nx, ny) = (17, 13);
        let mut h: Vec<f64> = (0..nx * ny).map(|k| if k == 6 * nx + 8 { 1.0 } else { 0.0 }).collect();
        let fixed: Vec<bool> =
            (0..nx * ny).map(|k| k % nx == 0 || k % nx == nx - 1 || k / nx == 0 || k / nx == ny - 1).collect();
        let d = vec![1.0f32; nx * ny];
        diffuse(nx, ny, &d, &fixed, 0.5, &mut h);
        assert!(h.iter().all(|&v| (0.0..=1.0).contains(&v)));
        assert!(h[6 * nx + 8] < 1.0 && h[6 * nx + 9] > 0.0 && h[5 * nx + 8] > 0.0);
        assert!(fixed.iter().zip(&h).all(|(f, v)| !f || *v == 0.0));
        // Symmetric about the peak along the row.
        assert!((h[6 * nx + 7] - h[6 * nx + 9]).abs() < 1e-12);
    }

    #[test]
    fn incision_lowers_channels_more_than_hillslopes_and_never_below_the_receiver() {
        let mesh = Mesh::new(30, 30, 3);
        let mut h: Vec<f64> =
            (0..mesh.len()).map(|k| 0.5 + 0.01 * f64::from(mesh.x[k]) + 0.001 * f64::from(mesh.y[k])).collect();
        let outlet: Vec<bool> = (0..mesh.len()).map(|k| mesh.on_border(k)).collect();
        let mut routing = Routing::default();
        route(&mesh, &h, &outlet, &mut routing);
        let mut area = vec![0.0; mesh.len()];
        accumulate(&routing, 1.0, &mut area);
        let before = h.clone();
        let mut eroded = vec![0.0; mesh.len()];
        let ones = vec![1.0f32; mesh.len()];
        let zeros = vec![0.0f32; mesh.len()];
        let law = Incision { dt: 0.1, m: 0.5, n: 1.0, spacing: 1.0, sea_level: -1.0, node_area: 1.0 };
        incise(&mesh, &routing, &outlet, &outlet, &area, &zeros, &ones, law, &mut h, &mut eroded);
        for k in 0..mesh.len() {
            let r = routing.receiver[k] as usize;
            assert!(h[k] <= before[k]);
            if !outlet[k] {
                assert!(h[k] >= h[r], "node {k} cut below its receiver");
            }
        }
        let most = (0..mesh.len()).filter(|&k| !outlet[k]).max_by(|&a, &b| area[a].total_cmp(&area[b])).unwrap();
        let least = (0..mesh.len()).filter(|&k| !outlet[k]).min_by(|&a, &b| area[a].total_cmp(&area[b])).unwrap();
        assert!(eroded[most] > eroded[least]);
    }

    #[test]
    fn area_powers_from_the_table_are_the_bits_pow_gives() {
        for node_area in [1.0, 0.25, 1.0 / 1024.0, 0.1, 3.7e-6] {
            let powers = AreaPower::new(node_area, 0.45);
            // Sums of node areas as `accumulate` makes them, which need not be `c × node_area`.
            let mut area = 0.0;
            for _ in 0..5000 {
                area += node_area;
                assert_eq!(powers.of(area).to_bits(), libm::pow(area, 0.45).to_bits(), "{node_area} {area}");
            }
            for area in [0.0, node_area * 0.5, 1e9 * node_area, 7.3] {
                assert_eq!(powers.of(area).to_bits(), libm::pow(area, 0.45).to_bits());
            }
        }
    }

    #[test]
    fn nonlinear_incision_solves_its_equation() {
        for &(h, b, f, n) in &[(1.0, 0.0, 0.5, 2.0), (0.3, 0.1, 3.0, 1.5), (0.9, 0.2, 0.01, 0.7)] {
            let x = implicit_power(h, b, f, n);
            assert!(x >= b && x <= h);
            assert!((x - h + f * libm::pow(x - b, n)).abs() < 1e-12, "{h} {b} {f} {n}: {x}");
        }
    }
}
