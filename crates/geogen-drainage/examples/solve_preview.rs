//! Solves a noise island on a grid and writes the grid's surface, area and lake depth as raw
//! little-endian f32 files (for looking at the solver alone, without the renderer):
//! `cargo run --release -p geogen-drainage --example solve_preview -- SIDE DURATION OUT_PREFIX`.

use std::io::Write;

mod common;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let side: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(512);
    let duration: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let out = args.get(3).cloned().unwrap_or_else(|| "/tmp/solve".into());
    let n = side + 1;
    let height = common::island(side);
    let cell = 1024.0 / side as f64;
    let input = geogen_drainage::Input { nx: n, ny: n, cell, height: &height, uplift: None, erodibility: None };
    let params = geogen_drainage::Params { duration, ..Default::default() };
    let started = std::time::Instant::now();
    let d = geogen_drainage::solve(&input, &params);
    eprintln!("solved {n}² in {:.3} s: {:?}", started.elapsed().as_secs_f64(), d.stats);
    let write = |name: &str, data: &[f32]| {
        let mut f = std::fs::File::create(format!("{out}_{name}.f32")).unwrap();
        for v in data {
            f.write_all(&v.to_le_bytes()).unwrap();
        }
    };
    if let Ok(at) = std::env::var("DEBUG_NODE") {
        let v: Vec<usize> = at.split(',').map(|s| s.parse().unwrap()).collect();
        for j in v[1] - 3..=v[1] + 3 {
            for i in v[0] - 3..=v[0] + 3 {
                let k = j * n + i;
                let r = d.receiver[k] as usize;
                eprint!("[{:.7} d{:.1e} a{:.0} ->({},{})] ", d.surface[k], d.depth[k], d.area[k], r % n, r / n);
            }
            eprintln!();
        }
    }
    write("input", &height);
    write("surface", &d.surface);
    write("area", &d.area);
    write("depth", &d.depth);
    let cell = d.cell;
    // The detail at a resolution of its own: RENDER pixels across the map.
    let render: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1024);
    let shape =
        geogen_drainage::RiverShape { width: 3.0, depth: 0.004, min_area: 8.0 * cell * cell, river_area: 300.0 };
    let detail = geogen_drainage::Detail::new(d, shape);
    let pixel = 1024.0 / render as f64;
    let started = std::time::Instant::now();
    let mut sampler = detail.sampler(pixel);
    let samples: Vec<geogen_drainage::Sample> = (0..render * render)
        .map(|p| sampler.sample((p % render) as f64 * pixel, (p / render) as f64 * pixel))
        .collect();
    eprintln!("detail {render}² in {:.3} s", started.elapsed().as_secs_f64());
    write("detail", &samples.iter().map(|s| s.height as f32).collect::<Vec<_>>());
    write("river", &samples.iter().map(|s| s.river as f32).collect::<Vec<_>>());
    write("lake", &samples.iter().map(|s| s.lake as f32).collect::<Vec<_>>());
    let heights: Vec<f32> = samples.iter().map(|s| s.height as f32).collect();
    eprintln!("detail: {:?}", geogen_drainage::measure(&heights, render, render, 0.0));
    let mut input = vec![0.0f32; render * render];
    for (p, v) in input.iter_mut().enumerate() {
        let (x, y) = ((p % render) as f64 * pixel / cell, (p / render) as f64 * pixel / cell);
        let (i, j) = ((x as usize).min(n - 2), (y as usize).min(n - 2));
        let (fx, fy) = (x - i as f64, y - j as f64);
        let h = |i: usize, j: usize| f64::from(height[j * n + i]);
        *v = ((h(i, j) * (1.0 - fx) + h(i + 1, j) * fx) * (1.0 - fy)
            + (h(i, j + 1) * (1.0 - fx) + h(i + 1, j + 1) * fx) * fy) as f32;
    }
    eprintln!("input:  {:?}", geogen_drainage::measure(&input, render, render, 0.0));
}
