//! Properties of the compiled evaluator, on random programs:
//!
//! * it agrees bit for bit with the plain tree walker of the benchmark (an independent
//!   evaluation of the same tree), in both dialects;
//! * a point's value does not depend on where it is in a block or row (rows of any length and
//!   offset give the bits of single points), which is what makes tiles exact;
//! * no input text makes the parser or the evaluator panic: any bytes compile to a program or a
//!   diagnostic with a known code and a span inside the text, and evaluation ends.
//!
//! Case counts are bounded (CI runs on two cores).

#[path = "../benches/tree_walk.rs"]
mod tree_walk;

use geogen_slang::{compile, Dialect, Limits, Options};
use proptest::prelude::*;
use proptest::test_runner::Config;

fn leaf() -> BoxedStrategy<String> {
    prop_oneof![
        Just("x".to_string()),
        Just("y".to_string()),
        (-40i32..40).prop_map(|k| format!("{}", f64::from(k) / 8.0)),
        Just("0.5".to_string()),
        Just("(/ 0 0)".to_string()),
        Just("(/ 1 0)".to_string()),
    ]
    .boxed()
}

/// Random programs over every operator and the three configurable functions, some of them
/// recursive (a guarded `self` at the top, so the recursion is at most |x| + 1 deep).
fn program() -> BoxedStrategy<String> {
    prop_oneof![
        3 => expression(),
        1 => (expression(), expression()).prop_map(|(a, b)| format!("(? (< x 0) {a} (+ {b} (self (- x 1) y)))")),
    ]
    .boxed()
}

/// Random expressions without `self`.
fn expression() -> BoxedStrategy<String> {
    leaf()
        .prop_recursive(5, 40, 3, |inner| {
            let unary = ["inv", "sin", "cos", "floor", "abs", "trunc", "frac", "neg", "not", "sqrt"];
            let binary =
                ["+", "-", "*", "/", "^", "=", "<>", "<", "<=", ">", ">=", "and", "or", "xor", "min", "max", "delta"];
            let function = prop_oneof![
                Just("[2 Noise]".to_string()),
                Just("[2 Noise frequency(3) filter(bilinear)]".to_string()),
                Just("[2 Noise seed(5) filter(nearest)]".to_string()),
                Just("[2 LayeredNoise layercount(3)]".to_string()),
                Just(
                    "[2 LayeredNoise frequency(1.5) persistence((* x 3)) levelEvaluationFunction((abs x))]".to_string()
                ),
                Just("[2 Layers layercount(2) base((* x y))]".to_string()),
            ];
            prop_oneof![
                (proptest::sample::select(unary.to_vec()), inner.clone()).prop_map(|(op, a)| format!("({op} {a})")),
                (proptest::sample::select(binary.to_vec()), inner.clone(), inner.clone())
                    .prop_map(|(op, a, b)| format!("({op} {a} {b})")),
                (prop_oneof![Just("?"), Just("if"), Just("lerp")], inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(op, a, b, c)| format!("({op} {a} {b} {c})")),
                (function, inner.clone(), inner).prop_map(|(f, a, b)| format!("({f} {a} {b})")),
            ]
        })
        .boxed()
}

fn coordinate() -> BoxedStrategy<f64> {
    prop_oneof![(-2000i32..2000).prop_map(|k| f64::from(k) / 64.0), -3.0f64..3.0, Just(-1.0), Just(0.0)].boxed()
}

fn dialect() -> impl Strategy<Value = Dialect> {
    prop_oneof![Just(Dialect::Documented), Just(Dialect::Picogen2008)]
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

proptest! {
    #![proptest_config(Config { cases: 160, ..Config::default() })]

    #[test]
    fn the_compiled_evaluator_agrees_with_the_tree_walker(
        source in program(),
        dialect in dialect(),
        points in prop::collection::vec((coordinate(), coordinate()), 1..6),
    ) {
        let options = Options { dialect, ..Options::default() };
        let compiled = compile(&source, &options).unwrap_or_else(|d| panic!("{source}: {d}"));
        let walker = tree_walk::Walker::new(dialect);
        for (x, y) in points {
            let fast = compiled.eval_point(&[x, y]);
            let slow = walker.eval(&compiled, &[x, y]);
            match (fast, slow) {
                (Ok(a), Ok(b)) => prop_assert!(same(a, b), "{} at ({}, {}): compiled {:?}, walked {:?}", source, x, y, a, b),
                // Both stop on the depth limit (the budget may stop the compiled one first).
                (Err(_), Err(_)) => {}
                (Err(e), Ok(_)) => prop_assert!(e.code.to_string() == "GGE8302", "{}: {}", source, e),
                (Ok(a), Err(_)) => prop_assert!(false, "{}: compiled {:?} but the walk was too deep", source, a),
            }
        }
    }

    #[test]
    fn a_point_has_the_same_bits_anywhere_in_a_row(
        source in program(),
        dialect in dialect(),
        x0 in -50.0f64..50.0,
        step in 0.001f64..0.7,
        len in 1usize..600,
        y in coordinate(),
    ) {
        let options = Options { dialect, ..Options::default() };
        let compiled = compile(&source, &options).unwrap_or_else(|d| panic!("{source}: {d}"));
        let xs: Vec<f64> = (0..len).map(|i| x0 + step * i as f64).collect();
        let mut row = vec![0.0; len];
        let mut ws = compiled.workspace();
        if compiled.eval_row(&xs, y, &mut row, &mut ws).is_ok() {
            // A shifted sub-row, reusing the workspace, and single points.
            let skip = len / 3;
            let mut tail = vec![0.0; len - skip];
            compiled.eval_row(&xs[skip..], y, &mut tail, &mut ws).unwrap_or_else(|e| panic!("{source}: {e}"));
            for (i, &v) in tail.iter().enumerate() {
                prop_assert!(same(v, row[skip + i]), "{} x = {}: {:?} vs {:?}", source, xs[skip + i], v, row[skip + i]);
            }
            for i in [0, len / 2, len - 1] {
                let point = compiled.eval_point(&[xs[i], y]).unwrap_or_else(|e| panic!("{source}: {e}"));
                prop_assert!(same(point, row[i]), "{} at x = {}: point {:?}, row {:?}", source, xs[i], point, row[i]);
            }
            // The next rows of a grid reuse what the workspace cached for these x values.
            for y2 in [y + 0.375, y - 1.0] {
                if compiled.eval_row(&xs, y2, &mut row, &mut ws).is_ok() {
                    for i in [0, len / 2, len - 1] {
                        let point = compiled.eval_point(&[xs[i], y2]).unwrap_or_else(|e| panic!("{source}: {e}"));
                        prop_assert!(same(point, row[i]), "{} at ({}, {}): point {:?}, row {:?}", source, xs[i], y2, point, row[i]);
                    }
                }
            }
        }
    }

    #[test]
    fn any_text_compiles_or_gives_a_coded_diagnostic_inside_it(
        source in prop_oneof![
            any::<String>(),
            "[-()+*/^=<>?a-z0-9 .\\[\\]\r\n]{0,60}",
            program().prop_map(|p| {
                // A random program with a random cut: unbalanced and truncated forms.
                let cut = p.len() * 2 / 3;
                p.get(..cut).map(str::to_string).unwrap_or(p)
            }),
        ],
        dialect in dialect(),
    ) {
        let limits = Limits { max_self_depth: 64, max_point_ops: 20_000, max_nesting: 64 };
        match compile(&source, &Options { dialect, limits }) {
            Ok(program) => {
                for (x, y) in [(0.0, 0.0), (0.7, -3.2), (1e300, f64::NAN)] {
                    let _ = program.eval_point(&[x, y]);
                }
            }
            Err(d) => {
                prop_assert!(d.code.info().is_some(), "unknown code {}", d.code);
                prop_assert!(d.hint.is_some(), "{} has no hint: {}", d.code, d.message);
                let span = d.span.expect("every compile error has a span");
                prop_assert!(span.start <= span.end && span.end as usize <= source.len(), "{:?} outside {}", span, source.len());
                prop_assert!(source.is_char_boundary(span.start as usize) && source.is_char_boundary(span.end as usize));
            }
        }
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    for depth in [199usize, 201, 100_000] {
        let source = format!("{}x{}", "(neg ".repeat(depth), ")".repeat(depth));
        let result = compile(&source, &Options::default());
        if depth < 200 {
            assert!(result.is_ok(), "{depth}");
        } else {
            assert_eq!(result.err().map(|d| d.code.to_string()), Some("GGE8110".to_string()), "{depth}");
        }
        // Nesting through parameter programs counts too.
        let nested = format!(
            "{}x y{}",
            "([2 Layers layercount(1) base(".repeat(depth.min(300)),
            ")] x y)".repeat(depth.min(300))
        );
        let _ = compile(&nested, &Options::default());
    }
}
