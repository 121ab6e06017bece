//! ns per sample of the coherent noises (Perlin, simplex, cellular, one octave and fBm) on each
//! available instruction set, next to the existing value noise (`NoiseLayer`, one lattice layer,
//! and the default 9-layer `HeightMap.Noise`), all in one run, on 1 thread and on 2 threads.
//! Each figure is the median of 9 timed renders of a 512×512 map (after one warm-up render).
//!
//! `cargo bench -p geogen-stdlib --bench coherent`

use std::hint::black_box;
use std::time::Instant;

use geogen_kernels::coherent::{
    render_field, Basis, CellOutput, Cellular, Distance, Fractal, FractalKind, Isa, NoiseSpec,
};
use geogen_kernels::noise::default_noise_layers;
use geogen_render::{Bounds, HeightMap, KernelContext, Object, Operation, Rect};
use geogen_stdlib::generators::NoiseLayer;

const SIDE: u64 = 512;
const RUNS: usize = 9;

fn rect() -> Rect {
    Rect::new(-300, 1000, SIDE, SIDE)
}

/// Median ns per sample of `render` (which renders SIDE² samples `samples_per_pixel` times).
fn median_ns(samples_per_pixel: f64, mut render: impl FnMut()) -> f64 {
    render();
    let mut times: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            render();
            start.elapsed().as_nanos() as f64 / ((SIDE * SIDE) as f64 * samples_per_pixel)
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[RUNS / 2]
}

fn coherent(spec: &NoiseSpec, isa: Isa) -> f64 {
    let mut map = HeightMap::try_zeroed(rect()).unwrap();
    median_ns(f64::from(spec.fractal.octaves), || render_field(black_box(&mut map), 1.0, spec, isa))
}

fn value_noise(layers: &[(u32, i32)]) -> f64 {
    let ctx = KernelContext::new(1.0, Bounds::Map(rect()));
    let mut target = Object::Map(HeightMap::try_zeroed(rect()).unwrap());
    let ops: Vec<NoiseLayer> =
        layers.iter().enumerate().map(|(k, &(w, a))| NoiseLayer::new(w, a, 3, k as u32, false)).collect();
    median_ns(layers.len() as f64, || {
        for op in &ops {
            op.render(&ctx, black_box(&mut target), &[]).unwrap();
        }
    })
}

fn spec(basis: Basis, octaves: u32) -> NoiseSpec {
    NoiseSpec {
        basis,
        wavelength: 64.0,
        fractal: Fractal { kind: FractalKind::Fbm, octaves, gain: 0.5, lacunarity: 2.0, weighting: 0.0 },
        seed: 3,
    }
}

fn table() {
    let threads = rayon::current_num_threads();
    let f1 = Basis::Cellular(Cellular { output: CellOutput::F1, distance: Distance::Euclidean, jitter: 1.0 });
    println!("{threads} thread(s), {SIDE}x{SIDE} map, median of {RUNS}, ns per sample (per octave or layer):");
    println!("  value noise, NoiseLayer w=64 (1 layer)      {:7.3}", value_noise(&[(64, 16000)]));
    let default: Vec<(u32, i32)> = default_noise_layers().into_iter().collect();
    println!("  value noise, HeightMap.Noise default (9)    {:7.3}", value_noise(&default));
    for isa in Isa::available() {
        for (name, basis) in [("perlin", Basis::Perlin), ("simplex", Basis::Simplex), ("cellular F1", f1)] {
            for octaves in [1, 6] {
                let label = format!("{name}, {octaves} octave(s), {isa:?}");
                println!("  {label:<43} {:7.3}", coherent(&spec(basis, octaves), isa));
            }
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not run benches with harness = false
    // beyond building them unless asked.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(table);
    }
}
