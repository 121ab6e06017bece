//! ns per 2D sample (one octave) of geogen's Perlin, simplex and cellular noise next to the same
//! noise from `noise` (0.9), `fastnoise-lite` (1.1) and `simdnoise` (3.1), measured in one run:
//! each figure is the median of 9 renders of a 512×512 block (after a warm-up), on 1 thread and
//! on 2 threads (per-point libraries split by rows with rayon, as geogen's renderer does;
//! simdnoise's block generator is single-threaded and `noise::Worley` is not `Sync`, so their
//! 2-thread figures are not given). geogen
//! is measured on its scalar reference path and on the best instruction set (the same bits).
//!
//! `cargo bench -p geogen-noise-bench --bench compare`

use std::hint::black_box;
use std::time::Instant;

use fastnoise_lite::{CellularDistanceFunction, CellularReturnType, FastNoiseLite, NoiseType};
use geogen_kernels::coherent::{render_field, Basis, CellOutput, Cellular, Distance, Fractal, Isa, NoiseSpec};
use geogen_render::{HeightMap, Rect};
use noise::{NoiseFn, OpenSimplex, Perlin, Worley};
use rayon::prelude::*;

const SIDE: usize = 512;
const RUNS: usize = 9;
const FREQUENCY: f64 = 1.0 / 64.0;

fn median_ns(mut render: impl FnMut()) -> f64 {
    render();
    let mut times: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            render();
            start.elapsed().as_nanos() as f64 / (SIDE * SIDE) as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[RUNS / 2]
}

fn geogen(basis: Basis, isa: Isa) -> f64 {
    let spec = NoiseSpec { basis, wavelength: 1.0 / FREQUENCY, fractal: Fractal::SINGLE, seed: 3 };
    let mut map = HeightMap::try_zeroed(Rect::new(0, 0, SIDE as u64, SIDE as u64)).unwrap();
    median_ns(|| render_field(black_box(&mut map), 1.0, &spec, isa))
}

/// A per-point function over the block, rows in parallel on the current rayon pool.
fn per_point(f: impl Fn(f64, f64) -> f32 + Sync) -> f64 {
    let mut out = vec![0.0f32; SIDE * SIDE];
    median_ns(|| {
        out.par_chunks_mut(SIDE).enumerate().for_each(|(y, row)| {
            for (x, v) in row.iter_mut().enumerate() {
                *v = f(x as f64, y as f64);
            }
        });
        black_box(&out);
    })
}

fn fastnoise(noise_type: NoiseType) -> FastNoiseLite {
    let mut n = FastNoiseLite::with_seed(3);
    n.set_noise_type(Some(noise_type));
    n.set_frequency(Some(FREQUENCY as f32));
    n.set_cellular_distance_function(Some(CellularDistanceFunction::Euclidean));
    n.set_cellular_return_type(Some(CellularReturnType::Distance));
    n
}

fn table(threads: usize) {
    let f1 = Basis::Cellular(Cellular { output: CellOutput::F1, distance: Distance::Euclidean, jitter: 1.0 });
    let best = Isa::best();
    println!("{threads} thread(s), {SIDE}x{SIDE} block, one octave, median of {RUNS}, ns per sample:");
    let row = |name: &str, ns: f64| println!("  {name:<44} {ns:8.3}");

    row("geogen PerlinNoise (scalar)", geogen(Basis::Perlin, Isa::Scalar));
    row(&format!("geogen PerlinNoise ({best:?})"), geogen(Basis::Perlin, best));
    let perlin = Perlin::new(3);
    row("noise::Perlin", per_point(|x, y| perlin.get([x * FREQUENCY, y * FREQUENCY]) as f32));
    let fnl = fastnoise(NoiseType::Perlin);
    row("fastnoise-lite Perlin", per_point(|x, y| fnl.get_noise_2d(x as f32, y as f32)));

    row("geogen SimplexNoise (scalar)", geogen(Basis::Simplex, Isa::Scalar));
    row(&format!("geogen SimplexNoise ({best:?})"), geogen(Basis::Simplex, best));
    let os = OpenSimplex::new(3);
    row("noise::OpenSimplex", per_point(|x, y| os.get([x * FREQUENCY, y * FREQUENCY]) as f32));
    let fnl = fastnoise(NoiseType::OpenSimplex2);
    row("fastnoise-lite OpenSimplex2", per_point(|x, y| fnl.get_noise_2d(x as f32, y as f32)));
    if threads == 1 {
        row(
            "simdnoise gradient_2d (simplex, block)",
            median_ns(|| {
                let mut b = simdnoise::NoiseBuilder::gradient_2d(SIDE, SIDE);
                b.with_freq(FREQUENCY as f32).with_seed(3);
                black_box(b.generate());
            }),
        );
    }

    row("geogen CellularNoise F1 (scalar)", geogen(f1, Isa::Scalar));
    row(&format!("geogen CellularNoise F1 ({best:?})"), geogen(f1, best));
    if threads == 1 {
        // `noise::Worley` is not `Sync` (it holds an `Rc`): one thread only.
        let worley = Worley::new(3);
        let mut out = vec![0.0f32; SIDE * SIDE];
        row(
            "noise::Worley",
            median_ns(|| {
                for (y, r) in out.chunks_mut(SIDE).enumerate() {
                    for (x, v) in r.iter_mut().enumerate() {
                        *v = worley.get([x as f64 * FREQUENCY, y as f64 * FREQUENCY]) as f32;
                    }
                }
                black_box(&out);
            }),
        );
    }
    let fnl = fastnoise(NoiseType::Cellular);
    row("fastnoise-lite Cellular (distance)", per_point(|x, y| fnl.get_noise_2d(x as f32, y as f32)));
    if threads == 1 {
        row(
            "simdnoise cellular_2d (block)",
            median_ns(|| {
                let mut b = simdnoise::NoiseBuilder::cellular_2d(SIDE, SIDE);
                b.with_freq(FREQUENCY as f32).with_seed(3);
                black_box(b.generate());
            }),
        );
    }
}

fn main() {
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| table(threads));
    }
}
