//! Where the water goes: every node gets a receiver, a water level, and a place in an order in which
//! every node comes after its receiver.
//!
//! Dry land sends its water down the steepest link to a lower neighbour. A node with no lower
//! neighbour that is not an outlet (the map's border, the sea) is a pit: the bottom of a closed
//! depression, which fills with water up to its spill point and overflows there. Finding the
//! spill points is a priority flood (Barnes et al. 2014), but only the depressions need it: the
//! nodes are grouped into basins by where their steepest path ends, and the flood runs over the
//! graph of basins, whose edges are the lowest passes between neighbouring basins (as in the lake
//! handling of Cordonnier et al. 2019). A pit's basin is reached from the outlets' basins through
//! its lowest pass; its lake's level is that pass, or the level of the lake beyond it if that is
//! higher (lakes that spill into lakes). Inside a lake the water crosses to the pass breadth first,
//! so it takes a short way. The result is the same as flooding every node from the outlets
//! ([`route_by_flood`], kept as the reference the tests compare with) at a fraction of the cost,
//! since a landscape being eroded has a few hundred pits among a million nodes.

use std::collections::VecDeque;

use rayon::prelude::*;

use crate::mesh::Mesh;
use crate::queue::{height_key, RadixHeap};

/// The flow of water over the mesh for one set of heights.
#[derive(Clone, Debug, Default)]
pub struct Routing {
    /// Every node, each after its receiver: the outlets first, then upstream.
    pub order: Vec<u32>,
    /// Where each node's water goes: a linked neighbour, or the node itself at an outlet.
    pub receiver: Vec<u32>,
    /// The water surface: the node's height on dry land, the lake's level in a lake.
    pub level: Vec<f64>,
}

impl Routing {
    /// Whether node `k` is under a lake (its water surface above its height).
    #[inline]
    pub fn in_lake(&self, k: usize, h: &[f64]) -> bool {
        self.level[k] > h[k]
    }
}

/// Floods every node of `mesh` with heights `h` from the nodes `outlet` marks, into `routing`:
/// the whole priority flood, the reference [`route`] must agree with.
pub fn route_by_flood(mesh: &Mesh, h: &[f64], outlet: &[bool], routing: &mut Routing) {
    let n = mesh.len();
    routing.order.clear();
    routing.order.reserve(n);
    routing.receiver.clear();
    routing.receiver.extend(0..n as u32);
    routing.level.clear();
    routing.level.extend_from_slice(h);
    let mut closed = vec![false; n];
    let mut heap = RadixHeap::new();
    let mut lake: VecDeque<u32> = VecDeque::new();
    for k in 0..n {
        if outlet[k] {
            closed[k] = true;
            heap.push(height_key(h[k]), k as u32);
        }
    }
    // Nothing drains without an outlet: the lowest node becomes one.
    if heap.is_empty() && n > 0 {
        let lowest = (0..n).min_by(|&a, &b| h[a].total_cmp(&h[b])).unwrap_or(0);
        closed[lowest] = true;
        heap.push(height_key(h[lowest]), lowest as u32);
    }
    while let Some(c) = lake.pop_front().or_else(|| heap.pop().map(|(_, v)| v)) {
        let c = c as usize;
        routing.order.push(c as u32);
        let level = routing.level[c];
        mesh.for_each_neighbour(c, |m, _| {
            if closed[m] {
                return;
            }
            closed[m] = true;
            routing.receiver[m] = c as u32;
            if h[m] <= level {
                routing.level[m] = level;
                lake.push_back(m as u32);
            } else {
                heap.push(height_key(h[m]), m as u32);
            }
        });
    }
    let level = routing.level.clone();
    steepest_receivers(mesh, &level, |k| outlet[k] || level[k] > h[k], &mut routing.receiver);
}

/// Points every node `skip` does not name down its steepest link to a lower `level`, if it has
/// one (a pit keeps its receiver).
fn steepest_receivers(mesh: &Mesh, level: &[f64], skip: impl Fn(usize) -> bool + Sync, receiver: &mut [u32]) {
    receiver.par_chunks_mut(mesh.nx.max(1)).enumerate().for_each(|(j, row)| {
        for (i, receiver) in row.iter_mut().enumerate() {
            let k = j * mesh.nx + i;
            if skip(k) {
                continue;
            }
            let mut best = *receiver as usize;
            let mut best_slope = if best == k { 0.0 } else { (level[k] - level[best]) / mesh.distance(k, best) };
            mesh.for_each_neighbour(k, |m, _| {
                if level[m] < level[k] {
                    let slope = (level[k] - level[m]) / mesh.distance(k, m);
                    if slope > best_slope {
                        best_slope = slope;
                        best = m;
                    }
                }
            });
            *receiver = best as u32;
        }
    });
}

/// Routes the water of `mesh` with heights `h`, the nodes `outlet` marks draining out, into
/// `routing` (whose buffers are reused). See the module docs.
pub fn route(mesh: &Mesh, h: &[f64], outlet: &[bool], routing: &mut Routing) {
    let n = mesh.len();
    routing.receiver.clear();
    routing.receiver.extend(0..n as u32);
    steepest_receivers(mesh, h, |k| outlet[k], &mut routing.receiver);
    routing.level.clear();
    routing.level.extend_from_slice(h);
    let donors = Donors::new(&routing.receiver);
    let pits: Vec<usize> = (0..n).filter(|&k| routing.receiver[k] as usize == k && !outlet[k]).collect();
    if pits.is_empty() {
        donors.walk((0..n).filter(|&k| outlet[k]), |_, _| {}, &mut routing.order);
        return;
    }
    // Pit basins: every node whose steepest path ends in a pit, labelled with the pit; the rest
    // (`DRAINED`) ends at an outlet.
    let mut basin = vec![DRAINED; n];
    donors.walk(pits.iter().copied(), |k, root| basin[k] = root as u32, &mut routing.order);
    fill_lakes(mesh, h, &basin, routing);
    let donors = Donors::new(&routing.receiver);
    donors.walk((0..n).filter(|&k| outlet[k]), |_, _| {}, &mut routing.order);
}

/// The basin label of nodes whose steepest path ends at an outlet.
const DRAINED: u32 = u32::MAX;

/// Who sends their water to each node, as compressed rows.
struct Donors {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Donors {
    fn new(receiver: &[u32]) -> Donors {
        let n = receiver.len();
        let mut start = vec![0u32; n + 1];
        for (k, &r) in receiver.iter().enumerate() {
            if r as usize != k {
                start[r as usize + 1] += 1;
            }
        }
        for k in 0..n {
            start[k + 1] += start[k];
        }
        let mut fill = start.clone();
        let mut list = vec![0u32; start[n] as usize];
        for (k, &r) in receiver.iter().enumerate() {
            if r as usize != k {
                list[fill[r as usize] as usize] = k as u32;
                fill[r as usize] += 1;
            }
        }
        Donors { start, list }
    }

    /// Every node reachable upstream from each root, in `order` (each after its receiver: a depth
    /// first walk from the roots in the order given), calling `visit(node, root)` on each.
    fn walk(&self, roots: impl Iterator<Item = usize>, mut visit: impl FnMut(usize, usize), order: &mut Vec<u32>) {
        order.clear();
        let mut stack: Vec<u32> = Vec::new();
        for root in roots {
            stack.push(root as u32);
            while let Some(c) = stack.pop() {
                let c = c as usize;
                order.push(c as u32);
                visit(c, root);
                stack.extend_from_slice(&self.list[self.start[c] as usize..self.start[c + 1] as usize]);
            }
        }
    }
}

/// One lowest pass out of a pit's basin: into basin `to`, over the link from `inner` (in the pit's
/// basin) to `outer`, at `height` (the higher of the two).
#[derive(Copy, Clone)]
struct Pass {
    from: u32,
    to: u32,
    height: f64,
    inner: u32,
    outer: u32,
}

/// Fills every pit's depression up to its spill point and routes its water across the lake to
/// the spill (see the module docs). `basin` labels each node with the pit its steepest path ends
/// in, or [`DRAINED`].
fn fill_lakes(mesh: &Mesh, h: &[f64], basin: &[u32], routing: &mut Routing) {
    let n = mesh.len();
    let is_pit_basin = |b: u32| b != DRAINED;
    // The passes out of pit basins: the lowest link to each neighbouring basin.
    let mut passes: Vec<Pass> = Vec::new();
    for a in 0..n {
        let from = basin[a];
        if !is_pit_basin(from) {
            continue;
        }
        mesh.for_each_neighbour(a, |b, _| {
            let to = basin[b];
            if to != from {
                passes.push(Pass { from, to, height: h[a].max(h[b]), inner: a as u32, outer: b as u32 });
            }
        });
    }
    passes.sort_unstable_by(|p, q| {
        (p.from, p.to, height_key(p.height), p.inner, p.outer).cmp(&(
            q.from,
            q.to,
            height_key(q.height),
            q.inner,
            q.outer,
        ))
    });
    passes.dedup_by(|later, first| later.from == first.from && later.to == first.to);
    // For each basin, the passes into it (to flood onwards from it once it is drained).
    let mut into: Vec<u32> = (0..passes.len() as u32).collect();
    into.sort_unstable_by_key(|&e| (passes[e as usize].to, e));
    let mut level_of: std::collections::BTreeMap<u32, f64> = std::collections::BTreeMap::new();
    let mut spills: Vec<(u32, f64, u32, u32)> = Vec::new();
    let mut heap = RadixHeap::new();
    for (e, pass) in passes.iter().enumerate() {
        if !is_pit_basin(pass.to) {
            heap.push(height_key(pass.height), e as u32);
        }
    }
    while let Some((_, e)) = heap.pop() {
        let pass = passes[e as usize];
        if level_of.contains_key(&pass.from) {
            continue;
        }
        let beyond = if is_pit_basin(pass.to) { level_of.get(&pass.to).copied() } else { None };
        let level = beyond.map_or(pass.height, |l| l.max(pass.height));
        level_of.insert(pass.from, level);
        spills.push((pass.from, level, pass.inner, pass.outer));
        // The basins spilling into this one may now drain through it.
        let first = into.partition_point(|&x| passes[x as usize].to < pass.from);
        for &x in &into[first..] {
            let next = passes[x as usize];
            if next.to != pass.from {
                break;
            }
            if !level_of.contains_key(&next.from) {
                heap.push(height_key(next.height.max(level)), x);
            }
        }
    }
    // Each lake: its nodes below the level, reached breadth first from the spill's inner node.
    let mut seen = vec![false; n];
    let mut queue: VecDeque<u32> = VecDeque::new();
    for (from, level, inner, outer) in spills {
        let (inner, outer) = (inner as usize, outer as usize);
        routing.receiver[inner] = outer as u32;
        if h[inner] < level {
            routing.level[inner] = level;
        }
        seen[inner] = true;
        queue.clear();
        queue.push_back(inner as u32);
        while let Some(c) = queue.pop_front() {
            let c = c as usize;
            mesh.for_each_neighbour(c, |m, _| {
                if !seen[m] && basin[m] == from && h[m] < level {
                    seen[m] = true;
                    routing.receiver[m] = c as u32;
                    routing.level[m] = level;
                    queue.push_back(m as u32);
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn border(mesh: &Mesh) -> Vec<bool> {
        (0..mesh.len()).map(|k| mesh.on_border(k)).collect()
    }

    #[test]
    fn every_node_reaches_an_outlet_downhill_or_across_a_lake() {
        for by_flood in [false, true] {
            let mesh = Mesh::new(33, 29, 5);
            // A bowl with bumps: many closed depressions.
            let h: Vec<f64> = (0..mesh.len())
                .map(|k| {
                    let (x, y) = (f64::from(mesh.x[k]) - 16.0, f64::from(mesh.y[k]) - 14.0);
                    0.5 - 0.001 * (x * x + y * y) + 0.05 * (x * 0.9).sin() * (y * 1.3).cos()
                })
                .collect();
            let outlet = border(&mesh);
            let mut r = Routing::default();
            if by_flood {
                route_by_flood(&mesh, &h, &outlet, &mut r);
            } else {
                route(&mesh, &h, &outlet, &mut r);
            }
            assert_eq!(r.order.len(), mesh.len());
            let mut position = vec![0usize; mesh.len()];
            for (p, &k) in r.order.iter().enumerate() {
                position[k as usize] = p;
            }
            for k in 0..mesh.len() {
                let rcv = r.receiver[k] as usize;
                if outlet[k] {
                    assert_eq!(rcv, k);
                    continue;
                }
                assert_ne!(rcv, k, "node {k} has no receiver");
                assert!(position[rcv] < position[k], "receiver after node");
                assert!(r.level[k] >= h[k]);
                // Water never flows up: the level never rises downstream.
                assert!(r.level[rcv] <= r.level[k]);
                assert!(mesh.links[k] & (1 << (0..8).find(|&d| mesh.neighbour(k, d) == rcv).unwrap()) != 0);
            }
            // The bowl holds a lake.
            assert!((0..mesh.len()).any(|k| r.in_lake(k, &h)));
        }
    }

    #[test]
    fn routing_by_basins_gives_the_levels_of_the_whole_flood() {
        for seed in 0..6u32 {
            let mesh = Mesh::new(41, 37, seed);
            let h: Vec<f64> = (0..mesh.len())
                .map(|k| {
                    let (x, y) = (f64::from(mesh.x[k]), f64::from(mesh.y[k]));
                    let hash = geogen_random::hash3(k as u32, seed, 11);
                    0.3 * (x * 0.37 + f64::from(seed)).sin() * (y * 0.29).cos() + f64::from(hash % 1000) * 1e-4
                })
                .collect();
            let outlet: Vec<bool> = (0..mesh.len()).map(|k| mesh.on_border(k) || h[k] < -0.25).collect();
            let (mut fast, mut whole) = (Routing::default(), Routing::default());
            route(&mesh, &h, &outlet, &mut fast);
            route_by_flood(&mesh, &h, &outlet, &mut whole);
            assert_eq!(fast.level, whole.level, "seed {seed}");
            let lakes = (0..mesh.len()).filter(|&k| fast.in_lake(k, &h)).count();
            assert!(lakes > 20, "the field holds lakes ({lakes} nodes, seed {seed})");
            let mut position = vec![usize::MAX; mesh.len()];
            for (p, &k) in fast.order.iter().enumerate() {
                position[k as usize] = p;
            }
            assert!(position.iter().all(|&p| p != usize::MAX), "every node is in the order");
            for k in 0..mesh.len() {
                let r = fast.receiver[k] as usize;
                assert_eq!(r == k, outlet[k], "only outlets keep their water (seed {seed}, node {k})");
                assert!(position[r] <= position[k]);
                assert!(fast.level[r] <= fast.level[k]);
            }
        }
    }

    #[test]
    fn a_plane_drains_straight_down_its_slope() {
        let mesh = Mesh::new(20, 20, 1);
        let h: Vec<f64> = (0..mesh.len()).map(|k| f64::from(mesh.x[k]) * 0.01).collect();
        let outlet: Vec<bool> = (0..mesh.len()).map(|k| k % 20 == 0).collect();
        let mut r = Routing::default();
        route(&mesh, &h, &outlet, &mut r);
        for k in 0..mesh.len() {
            assert!(!r.in_lake(k, &h));
            if !outlet[k] {
                assert!(h[r.receiver[k] as usize] < h[k]);
            }
        }
    }
}
