//! The compiled evaluator against a plain recursive tree walk (`tree_walk.rs`), on one thread,
//! over a 1024×1024 grid (x, y in [0, 1)), for a 20-node arithmetic program and for
//! `(+ 0.5 ([2 LayeredNoise] x y))`. Criterion reports the time per grid; after each pair the ns
//! per pixel of a direct measurement and the speed-up are printed.
//!
//! `cargo bench -p geogen-slang --bench evaluator -- --warm-up-time 1 --measurement-time 3`

mod tree_walk;

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use geogen_slang::{compile, Dialect, Options, Program};

const SIDE: usize = 1024;

/// 20 nodes: `+ * 0.5 abs - x 0.5 ? < * x y 0.25 frac * 3 y - 1 x`.
const TWENTY_NODES: &str = "(+ (* 0.5 (abs (- x 0.5))) (? (< (* x y) 0.25) (frac (* 3 y)) (- 1 x)))";
const LAYERED_NOISE: &str = "(+ 0.5 ([2 LayeredNoise] x y))";

fn xs() -> Vec<f64> {
    (0..SIDE).map(|i| i as f64 / SIDE as f64).collect()
}

/// Sum of the grid (so nothing is optimised away), compiled, row by row.
fn compiled_grid(program: &Program, xs: &[f64]) -> f64 {
    let mut ws = program.workspace();
    let mut row = vec![0.0; SIDE];
    let mut sum = 0.0;
    for j in 0..SIDE {
        let y = j as f64 / SIDE as f64;
        program.eval_row(xs, y, &mut row, &mut ws).expect("evaluates");
        for &v in &row {
            sum += v;
        }
    }
    sum
}

/// The same grid, pixel by pixel through the tree walker.
fn walked_grid(program: &Program, walker: &tree_walk::Walker, xs: &[f64]) -> f64 {
    let mut sum = 0.0;
    for j in 0..SIDE {
        let y = j as f64 / SIDE as f64;
        for &x in xs {
            sum += walker.eval(program, &[x, y]).expect("evaluates");
        }
    }
    sum
}

fn ns_per_pixel(mut f: impl FnMut() -> f64) -> f64 {
    let start = Instant::now();
    let mut runs = 0u32;
    while runs < 2 || start.elapsed().as_millis() < 500 {
        black_box(f());
        runs += 1;
    }
    start.elapsed().as_nanos() as f64 / (f64::from(runs) * (SIDE * SIDE) as f64)
}

fn evaluator(c: &mut Criterion) {
    let xs = xs();
    let walker = tree_walk::Walker::new(Dialect::Documented);
    for (label, source) in [("20-node program", TWENTY_NODES), ("(+ 0.5 ([2 LayeredNoise] x y))", LAYERED_NOISE)] {
        let program = compile(source, &Options::default()).expect("compiles");
        assert_eq!(
            compiled_grid(&program, &xs).to_bits(),
            walked_grid(&program, &walker, &xs).to_bits(),
            "the two evaluators must agree"
        );
        let mut group = c.benchmark_group(label);
        group.throughput(Throughput::Elements((SIDE * SIDE) as u64));
        group.sample_size(10);
        group.bench_function("compiled (rows)", |b| b.iter(|| compiled_grid(black_box(&program), &xs)));
        group.bench_function("tree walk (per pixel)", |b| b.iter(|| walked_grid(black_box(&program), &walker, &xs)));
        group.finish();
        let fast = ns_per_pixel(|| compiled_grid(&program, &xs));
        let slow = ns_per_pixel(|| walked_grid(&program, &walker, &xs));
        println!(
            "{label:<34} compiled {fast:7.2} ns/pixel, tree walk {slow:7.2} ns/pixel: {:.1}x (1 thread, 1024x1024)",
            slow / fast
        );
    }
}

criterion_group!(benches, evaluator);
criterion_main!(benches);
