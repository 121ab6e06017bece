//! Where the water goes: a priority flood from the outlets (Barnes et al. 2014), giving every node
//! a receiver, a water level, and an order in which every node comes after its receiver.
//!
//! The flood grows inwards from the outlets (the map's border and the sea), always from the
//! lowest water level reached so far. A node first reached from a level above its own height lies
//! in a depression: it is under a lake at that level, and its water crosses the lake to where the
//! flood came in, the lake's spill point (a plain queue, breadth first, so it takes a short way).
//! A node reached from below is on dry land at its own height. So every node drains to an outlet
//! and no pit is left: lakes fill and spill. Dry nodes then send their water down the steepest
//! link to a lower level (the flood's first link is the lowest neighbour, not the steepest one on
//! a mesh whose links differ in length); every such neighbour was reached earlier, so the order
//! still has receivers first.

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

/// Floods `mesh` with heights `h` from the nodes `outlet` marks, into `routing` (whose buffers
/// are reused).
pub fn route(mesh: &Mesh, h: &[f64], outlet: &[bool], routing: &mut Routing) {
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
    steepest_receivers(mesh, h, outlet, routing);
}

/// Points every dry node (not an outlet, not under a lake) down its steepest link to a lower level.
fn steepest_receivers(mesh: &Mesh, h: &[f64], outlet: &[bool], routing: &mut Routing) {
    let level = &routing.level;
    routing.receiver.par_chunks_mut(mesh.nx.max(1)).enumerate().for_each(|(j, row)| {
        for (i, receiver) in row.iter_mut().enumerate() {
            let k = j * mesh.nx + i;
            if outlet[k] || level[k] > h[k] {
                continue;
            }
            let mut best = *receiver as usize;
            let mut best_slope = (level[k] - level[best]) / mesh.distance(k, best);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn border(mesh: &Mesh) -> Vec<bool> {
        (0..mesh.len()).map(|k| mesh.on_border(k)).collect()
    }

    #[test]
    fn every_node_reaches_an_outlet_downhill_or_across_a_lake() {
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
        route(&mesh, &h, &outlet, &mut r);
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
