//! The benchmark of the whole-map solve and of the river detail: for each grid side asked for,
//! solves a noise island (uplift, incision, diffusion, lakes, sediment, the default duration) a few
//! times and prints the fastest and the median time, then times the detail of a 1024² render of
//! the solution. Not a test: run it on a quiet machine, with the thread count you want
//! (RAYON_NUM_THREADS), and compare medians of alternated runs.
//!
//! `cargo run --release -p geogen-drainage --example solve_bench -- [--solve-only] [SIDE[xRUNS]]...`
//! (default `1024x5 4096x1`; `--solve-only` leaves out the detail).

use std::time::Instant;

use rayon::prelude::*;

mod common;
use common::island;

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    let solve_only = std::env::args().any(|a| a == "--solve-only");
    let mut cases: Vec<(usize, usize)> = std::env::args()
        .skip(1)
        .filter(|a| a != "--solve-only")
        .filter_map(|a| {
            let (side, runs) = a.split_once('x').unwrap_or((&a, "3"));
            Some((side.parse().ok()?, runs.parse().ok()?))
        })
        .collect();
    if cases.is_empty() {
        cases = vec![(1024, 5), (4096, 1)];
    }
    println!("threads: {}", rayon::current_num_threads());
    for (side, runs) in cases {
        let height = island(side);
        let n = side + 1;
        let input =
            geogen_drainage::Input { nx: n, ny: n, cell: 1.0, height: &height, uplift: None, erodibility: None };
        let params = geogen_drainage::Params::default();
        let mut times = Vec::new();
        let mut solved = None;
        for _ in 0..runs.max(1) {
            let started = Instant::now();
            let d = geogen_drainage::solve(&input, &params);
            times.push(started.elapsed().as_secs_f64());
            solved = Some(d);
        }
        let Some(d) = solved else { continue };
        let levels: Vec<String> = d.stats.levels.iter().map(|(w, _, s)| format!("{w}²×{s}")).collect();
        println!(
            "solve {n}²: fastest {:.3} s, median {:.3} s of {} (meshes and steps: {})",
            times.iter().copied().fold(f64::INFINITY, f64::min),
            median(times.clone()),
            times.len(),
            levels.join(" ")
        );
        if solve_only {
            continue;
        }
        let shape = geogen_drainage::RiverShape {
            width: 3.0,
            depth: 0.004,
            min_area: 8.0,
            river_area: 1e-3 * (side * side) as f64,
        };
        let started = Instant::now();
        let detail = geogen_drainage::Detail::new(d, shape);
        let prepared = started.elapsed().as_secs_f64();
        let render = 1024usize;
        let pixel = side as f64 / render as f64;
        let started = Instant::now();
        let heights: Vec<f64> = (0..render)
            .into_par_iter()
            .flat_map_iter(|row| {
                let mut sampler = detail.sampler(pixel);
                (0..render)
                    .map(|column| {
                        sampler
                            .sample_only(column as f64 * pixel, row as f64 * pixel, geogen_drainage::Need::Height)
                            .height
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let sampled = started.elapsed().as_secs_f64();
        println!(
            "detail of a 1024² render of it: {:.3} s ({:.0} ns per pixel), after {:.3} s preparing; mean height {:.4}",
            sampled,
            sampled * 1e9 / (render * render) as f64,
            prepared,
            heights.iter().sum::<f64>() / heights.len() as f64
        );
    }
}
