//! What the drainage examples share: the noise island they solve.

use rayon::prelude::*;

/// A noise island like the examples' (a dome plus seven octaves of value noise), `side + 1`
/// nodes across, one map unit per cell on a map of `side` units.
pub fn island(side: usize) -> Vec<f32> {
    let n = side + 1;
    let value = |x: f64, y: f64, seed: u32| {
        let (xi, yi) = (x.floor(), y.floor());
        let (fx, fy) = (x - xi, y - yi);
        let corner = |dx: f64, dy: f64| {
            let h = geogen_random::hash3((xi + dx) as i64 as u32, (yi + dy) as i64 as u32, seed);
            f64::from(h) / f64::from(u32::MAX) * 2.0 - 1.0
        };
        let s = |t: f64| t * t * (3.0 - 2.0 * t);
        let (sx, sy) = (s(fx), s(fy));
        let top = corner(0.0, 0.0) + (corner(1.0, 0.0) - corner(0.0, 0.0)) * sx;
        let bottom = corner(0.0, 1.0) + (corner(1.0, 1.0) - corner(0.0, 1.0)) * sx;
        top + (bottom - top) * sy
    };
    (0..n * n)
        .into_par_iter()
        .map(|k| {
            let (x, y) = ((k % n) as f64 / side as f64, (k / n) as f64 / side as f64);
            let r = ((x - 0.5).powi(2) + (y - 0.5).powi(2)).sqrt();
            let (mut v, mut amplitude, mut frequency) = (0.6 - 1.6 * r, 0.35, 4.0);
            for octave in 0..7 {
                v += amplitude * value(x * frequency, y * frequency, 17 + octave);
                amplitude *= 0.5;
                frequency *= 2.0;
            }
            v.clamp(-1.0, 1.0) as f32
        })
        .collect()
}
