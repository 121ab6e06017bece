//! How well a height map drains, measured as geomorphologists measure a digital elevation model:
//! steepest-descent (D8) flow over its pixels, with the map's edge and the sea (heights at or below
//! the sea level) as outlets.
//!
//! * Every land pixel sends its water to the neighbour of the steepest drop (diagonal drops over
//!   √2). A pixel with no lower neighbour on a flat (a run of pixels of exactly one height, such as a
//!   lake's surface or a quantised plain) drains across the flat to its nearest pixel that has a
//!   way down; a flat with no such pixel, or a pixel with no lower or equal neighbour, is a
//!   **closed pit**.
//! * A pixel's **terminal** is where its water ends: an outlet, or a pit. A **catchment** is the land
//!   draining to one outlet pixel; a **flow path**'s length is its pixels' steps (1 or √2) while on
//!   land.
//! * **Direction bias**: the gradient directions (Scharr's operator, nearly isotropic) of the steeper half of the land's pixels,
//!   folded into `[0°, 90°)`; the density within 7.5° of 45° (and of 0°) divided by that of a
//!   uniform spread. Channels that follow the pixel grid give values well above 1; an isotropic
//!   landscape about 1.

/// The measures of one height map.
#[derive(Clone, Debug, PartialEq)]
pub struct Measures {
    pub width: usize,
    pub height: usize,
    pub sea_level: f32,
    /// Pixels above the sea level.
    pub land: u64,
    /// Closed pits on land (distinct flats or pixels).
    pub pits: u64,
    /// Closed pits per million pixels of the map.
    pub pits_per_mpx: f64,
    /// The fraction of the land whose water ends in a closed pit.
    pub land_into_pits: f64,
    /// The fraction of the land in the largest catchment reaching the sea or the edge.
    pub largest_catchment: f64,
    /// The longest flow path on land, pixels.
    pub longest_flow_path: f64,
    /// Density of gradient directions near 45° over that of a uniform spread.
    pub diagonal_bias: f64,
    /// The same near 0° (along the rows and columns).
    pub axis_bias: f64,
    /// The closed pits draining the most land, most first (at most ten): a pixel of each, `(x,
    /// y)`, and the land pixels it drains.
    pub worst_pits: Vec<(usize, usize, u64)>,
}

const NEIGHBOURS: [(i64, i64); 8] = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)];
const NONE: u32 = u32::MAX;

/// Measures `heights` (`width × height`, row-major).
pub fn measure(heights: &[f32], width: usize, height: usize, sea_level: f32) -> Measures {
    let n = width * height;
    assert_eq!(heights.len(), n, "the heights must be width × height");
    let outlet = |p: usize| {
        let (x, y) = (p % width, p / width);
        x == 0 || y == 0 || x + 1 == width || y + 1 == height || heights[p] <= sea_level
    };
    let neighbour = |p: usize, d: usize| -> Option<usize> {
        let (dx, dy) = NEIGHBOURS[d];
        let (x, y) = ((p % width) as i64 + dx, (p / width) as i64 + dy);
        (x >= 0 && y >= 0 && x < width as i64 && y < height as i64).then(|| y as usize * width + x as usize)
    };
    // Steepest descent.
    let mut receiver = vec![NONE; n];
    for p in 0..n {
        if outlet(p) {
            receiver[p] = p as u32;
            continue;
        }
        let mut best = (0.0f64, NONE);
        for d in 0..8 {
            let Some(q) = neighbour(p, d) else { continue };
            let drop = f64::from(heights[p]) - f64::from(heights[q]);
            if drop > 0.0 {
                let slope = if d % 2 == 1 { drop / std::f64::consts::SQRT_2 } else { drop };
                if slope > best.0 {
                    best = (slope, q as u32);
                }
            }
        }
        receiver[p] = best.1;
    }
    // Flats: drained breadth first from their pixels that have a way down; the rest are pits.
    let mut pit = vec![false; n];
    let mut seen = vec![false; n];
    let mut pits = 0u64;
    let mut component = Vec::new();
    let mut queue = std::collections::VecDeque::new();
    for start in 0..n {
        if receiver[start] != NONE || seen[start] {
            continue;
        }
        // The flat: connected pixels of exactly this height.
        let level = heights[start];
        component.clear();
        component.push(start);
        seen[start] = true;
        let mut i = 0;
        while i < component.len() {
            let p = component[i];
            i += 1;
            for d in 0..8 {
                if let Some(q) = neighbour(p, d) {
                    if !seen[q] && heights[q] == level {
                        seen[q] = true;
                        component.push(q);
                    }
                }
            }
        }
        queue.clear();
        for &p in &component {
            if receiver[p] != NONE {
                queue.push_back(p);
            }
        }
        if queue.is_empty() {
            pits += u64::from(level > sea_level);
            for &p in &component {
                pit[p] = true;
                receiver[p] = p as u32;
            }
            continue;
        }
        while let Some(p) = queue.pop_front() {
            for d in 0..8 {
                if let Some(q) = neighbour(p, d) {
                    if heights[q] == level && receiver[q] == NONE {
                        receiver[q] = p as u32;
                        queue.push_back(q);
                    }
                }
            }
        }
    }
    // Terminals and path lengths, following receivers with a stack (memoised).
    let mut terminal = vec![NONE; n];
    let mut length = vec![0.0f64; n];
    let mut stack = Vec::new();
    for p in 0..n {
        if terminal[p] != NONE {
            continue;
        }
        let mut q = p;
        while terminal[q] == NONE {
            stack.push(q);
            let r = receiver[q] as usize;
            if r == q {
                terminal[q] = q as u32;
                length[q] = 0.0;
                stack.pop();
                break;
            }
            q = r;
        }
        while let Some(s) = stack.pop() {
            let r = receiver[s] as usize;
            terminal[s] = terminal[r];
            let land = heights[s] > sea_level;
            let step =
                if (s % width) != (r % width) && (s / width) != (r / width) { std::f64::consts::SQRT_2 } else { 1.0 };
            length[s] = if land { length[r] + step } else { 0.0 };
        }
    }
    let mut land = 0u64;
    let mut into_pits = 0u64;
    let mut catchment = vec![0u32; n];
    let mut longest = 0.0f64;
    for p in 0..n {
        if heights[p] <= sea_level {
            continue;
        }
        land += 1;
        let t = terminal[p] as usize;
        if pit[t] {
            into_pits += 1;
        } else {
            catchment[t] += 1;
        }
        longest = longest.max(length[p]);
    }
    let largest = catchment.iter().copied().max().unwrap_or(0);
    let mut drained: std::collections::BTreeMap<usize, u64> = std::collections::BTreeMap::new();
    for p in 0..n {
        let t = terminal[p] as usize;
        if heights[p] > sea_level && pit[t] {
            *drained.entry(t).or_default() += 1;
        }
    }
    let mut worst: Vec<(usize, usize, u64)> = drained.into_iter().map(|(t, c)| (t % width, t / width, c)).collect();
    worst.sort_by(|a, b| b.2.cmp(&a.2).then((a.1, a.0).cmp(&(b.1, b.0))));
    worst.truncate(10);
    let (diagonal_bias, axis_bias) = direction_bias(heights, width, height, sea_level);
    let fraction = |a: u64| if land == 0 { 0.0 } else { a as f64 / land as f64 };
    Measures {
        width,
        height,
        sea_level,
        land,
        pits,
        pits_per_mpx: pits as f64 / (n as f64 / 1e6),
        land_into_pits: fraction(into_pits),
        largest_catchment: fraction(u64::from(largest)),
        longest_flow_path: longest,
        diagonal_bias,
        axis_bias,
        worst_pits: worst,
    }
}

/// The densities of gradient directions (Scharr) within 7.5° of 45° and of 0° (folded into
/// `[0°, 90°)`), over the steeper half of the land's inner pixels, each divided by a uniform spread's.
fn direction_bias(heights: &[f32], width: usize, height: usize, sea_level: f32) -> (f64, f64) {
    if width < 3 || height < 3 {
        return (1.0, 1.0);
    }
    let at = |x: usize, y: usize| f64::from(heights[y * width + x]);
    let mut gradients = Vec::new();
    for y in 1..height - 1 {
        for x in 1..width - 1 {
            if heights[y * width + x] <= sea_level {
                continue;
            }
            let gx = (3.0 * at(x + 1, y - 1) + 10.0 * at(x + 1, y) + 3.0 * at(x + 1, y + 1))
                - (3.0 * at(x - 1, y - 1) + 10.0 * at(x - 1, y) + 3.0 * at(x - 1, y + 1));
            let gy = (3.0 * at(x - 1, y + 1) + 10.0 * at(x, y + 1) + 3.0 * at(x + 1, y + 1))
                - (3.0 * at(x - 1, y - 1) + 10.0 * at(x, y - 1) + 3.0 * at(x + 1, y - 1));
            let magnitude = gx * gx + gy * gy;
            if magnitude > 0.0 {
                gradients.push((magnitude, gy.atan2(gx)));
            }
        }
    }
    if gradients.is_empty() {
        return (1.0, 1.0);
    }
    let mut magnitudes: Vec<f64> = gradients.iter().map(|g| g.0).collect();
    let middle = magnitudes.len() / 2;
    magnitudes.select_nth_unstable_by(middle, f64::total_cmp);
    let median = magnitudes[middle];
    let (mut total, mut diagonal, mut axis) = (0u64, 0u64, 0u64);
    for &(magnitude, angle) in &gradients {
        if magnitude < median {
            continue;
        }
        let folded = angle.to_degrees().rem_euclid(90.0);
        total += 1;
        diagonal += u64::from((folded - 45.0).abs() <= 7.5);
        axis += u64::from(!(7.5..=82.5).contains(&folded));
    }
    let uniform = 15.0 / 90.0;
    let density = |count: u64| count as f64 / total.max(1) as f64 / uniform;
    (density(diagonal), density(axis))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cone_drains_and_a_bowl_is_one_pit() {
        let side = 64;
        let cone: Vec<f32> = (0..side * side)
            .map(|p| {
                let (x, y) = ((p % side) as f32 - 31.5, (p / side) as f32 - 31.5);
                1.0 - (x * x + y * y).sqrt() / 40.0
            })
            .collect();
        let m = measure(&cone, side, side, -1.0);
        assert_eq!(m.pits, 0);
        assert_eq!(m.land_into_pits, 0.0);
        assert!(m.longest_flow_path >= 31.0);
        let bowl: Vec<f32> = cone.iter().map(|h| 1.0 - h).collect();
        let m = measure(&bowl, side, side, -1.0);
        assert_eq!(m.pits, 1);
        assert!(m.land_into_pits > 0.3, "{m:?}");
    }

    #[test]
    fn a_flat_lake_with_an_outlet_is_no_pit() {
        let side = 32;
        // A plane falling west, with a flat lake in the middle whose west shore is its lowest.
        let mut h: Vec<f32> = (0..side * side).map(|p| (p % side) as f32 * 0.01).collect();
        for y in 10..20 {
            for x in 10..20 {
                h[y * side + x] = 0.095;
            }
        }
        let m = measure(&h, side, side, -1.0);
        assert_eq!(m.pits, 0, "{m:?}");
    }

    #[test]
    fn direction_bias_sees_grid_aligned_ridges() {
        let side = 128;
        // Ridges at 45°: every gradient points along a diagonal.
        let diagonal: Vec<f32> = (0..side * side).map(|p| (((p % side) + (p / side)) as f32 * 0.4).sin()).collect();
        let (d, _) = direction_bias(&diagonal, side, side, -2.0);
        assert!(d > 4.0, "{d}");
        // Concentric rings on a round island (a square's corners would add diagonals): all
        // directions alike.
        let rings: Vec<f32> = (0..side * side)
            .map(|p| {
                let (x, y) = ((p % side) as f32 - 64.0, (p / side) as f32 - 64.0);
                let r = (x * x + y * y).sqrt();
                if r > 60.0 {
                    -3.0
                } else {
                    (r * 0.2).sin()
                }
            })
            .collect();
        let (d, a) = direction_bias(&rings, side, side, -2.0);
        assert!((0.8..1.25).contains(&d) && (0.8..1.25).contains(&a), "{d} {a}");
    }
}
