//! Golden values: operators, the original's quirks (documented vs picogen-2008), errors with
//! their codes and positions, and picogen's noise at several points and parameter sets.
//!
//! Noise values were computed from the facts of spec height-slang §1.4 by an independent script
//! (MT19937, the tables, `L(i, j)`, the filters with C's `cos` and the single-precision π, the
//! octave loop), printed with full precision; the evaluator must agree to 1e-12. Values the spec
//! states (the tables, `L(0,0)`, the −1 discontinuity) are checked as stated.

use geogen_diag::SourceFile;
use geogen_slang::{compile, compile_with_arity, Dialect, Limits, Options};

fn options(dialect: Dialect) -> Options {
    Options { dialect, ..Options::default() }
}

fn eval_in(dialect: Dialect, program: &str, x: f64, y: f64) -> f64 {
    let compiled = compile(program, &options(dialect)).unwrap_or_else(|d| panic!("{program:?}: {d}"));
    compiled.eval_point(&[x, y]).unwrap_or_else(|e| panic!("{program:?}: {e}"))
}

fn eval(program: &str) -> f64 {
    eval_in(Dialect::Documented, program, 0.0, 0.0)
}

fn compat(program: &str) -> f64 {
    eval_in(Dialect::Picogen2008, program, 0.0, 0.0)
}

/// Bitwise equality, NaN equal to NaN.
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[track_caller]
fn close(got: f64, expected: f64) {
    assert!((got - expected).abs() <= 1e-12, "got {got:?}, expected {expected:?} (difference {:e})", got - expected);
}

#[test]
fn arithmetic_is_ieee() {
    assert_eq!(eval("(+ 1 2)"), 3.0);
    assert_eq!(eval("(- 1 2)"), -1.0);
    assert_eq!(eval("(* 1.5 4)"), 6.0);
    assert_eq!(eval("(/ 1 0)"), f64::INFINITY);
    assert!(eval("(/ 0 0)").is_nan());
    assert!(eval("(^ -8 0.5)").is_nan());
    assert_eq!(eval("(^ 0 -1)"), f64::INFINITY);
    assert_eq!(eval("(^ 2 10)"), 1024.0);
    assert_eq!(eval("(inv 4)"), 0.25);
    assert_eq!(eval("(neg 2)"), -2.0);
    assert!(eval("(sqrt -1)").is_nan());
    assert_eq!(eval("(sqrt 2)"), 2f64.sqrt());
    assert_eq!(eval("(abs -3)"), 3.0);
    assert_eq!(eval("(floor -1.5)"), -2.0);
    assert_eq!(eval("(frac -0.25)"), 0.75);
    assert_eq!(eval("(trunc -2.7)"), -2.0);
    assert_eq!(eval("(sin 1)"), libm::sin(1.0));
    assert_eq!(eval("(cos 1)"), libm::cos(1.0));
    assert_eq!(eval("(lerp 1 3 0.5)"), 2.0);
    assert_eq!(eval("(lerp 0 10 2)"), 20.0, "t is not clamped");
}

#[test]
fn comparisons_give_one_or_zero_and_nan_is_unequal() {
    assert_eq!(eval("(< 1 2)"), 1.0);
    assert_eq!(eval("(<= 2 2)"), 1.0);
    assert_eq!(eval("(> 1 2)"), 0.0);
    assert_eq!(eval("(= 2 2)"), 1.0);
    assert_eq!(eval("(<> 2 2)"), 0.0);
    assert_eq!(eval("(= (/ 0 0) (/ 0 0))"), 0.0);
    assert_eq!(eval("(<> (/ 0 0) 1)"), 1.0);
    assert_eq!(eval("(< (/ 0 0) 1)"), 0.0);
    assert_eq!(eval("(min (/ 0 0) 1)"), 1.0);
    assert!(eval("(min 1 (/ 0 0))").is_nan());
    assert_eq!(eval("(max (/ 0 0) 1)"), 1.0);
    assert_eq!(eval("(delta 1 2)"), 0.0);
    assert_eq!(eval("(delta 2 2)"), 1.0);
    assert_eq!(eval("(delta (/ 0 0) 1)"), 1.0);
}

#[test]
fn the_documented_semantics_and_the_original_differ_where_the_spec_says() {
    // Truth: documented v >= 0.5, the original v > 0.5.
    assert_eq!(eval("(? 0.5 1 2)"), 1.0);
    assert_eq!(compat("(? 0.5 1 2)"), 2.0);
    assert_eq!(eval("(not 0.5)"), 0.0);
    assert_eq!(compat("(not 0.5)"), 1.0);
    assert_eq!(eval("(and 0.5 1)"), 1.0);
    assert_eq!(compat("(and 0.5 1)"), 0.0);
    // `>=`: documented ≥, the original >.
    assert_eq!(eval("(>= 1 1)"), 1.0);
    assert_eq!(compat("(>= 1 1)"), 0.0);
    assert_eq!(compat("(>= 2 1)"), 1.0);
    // `or`: documented OR, the original AND.
    assert_eq!(eval("(or 1 0)"), 1.0);
    assert_eq!(compat("(or 1 0)"), 0.0);
    assert_eq!(compat("(or 1 1)"), 1.0);
    assert_eq!(eval("(xor 1 0)"), 1.0);
    assert_eq!(eval("(xor 1 1)"), 0.0);
    // trunc outside the i32 range: saturating (documented), x86's integer indefinite (original).
    assert_eq!(eval("(trunc (/ 1 0))"), 2_147_483_647.0);
    assert_eq!(compat("(trunc (/ 1 0))"), -2_147_483_648.0);
    assert_eq!(eval("(trunc (/ 0 0))"), 0.0);
    assert_eq!(compat("(trunc (/ 0 0))"), -2_147_483_648.0);
    // NaN is false in both.
    assert_eq!(eval("(? (/ 0 0) 1 2)"), 2.0);
    assert_eq!(compat("(? (/ 0 0) 1 2)"), 2.0);
}

#[test]
fn the_character_level_parser_reads_what_the_original_reads() {
    for dialect in Dialect::ALL {
        let at = |p: &str, x: f64| eval_in(dialect, p, x, 0.0);
        assert_eq!(at("(sinx)", 1.0), libm::sin(1.0));
        assert_eq!(at("( m a x 1 2)", 0.0), 2.0);
        assert_eq!(at("(max1 2)", 0.0), 2.0);
        assert_eq!(at("(-1 2)", 0.0), -1.0, "after `(` a `-` is subtraction");
        assert_eq!(at("(- - 1 2)", 0.0), -3.0, "as an operand it is a sign");
        assert_eq!(at("- 5", 0.0), -5.0);
        assert_eq!(at("-.5", 0.0), -0.5);
        assert_eq!(at("5.", 0.0), 5.0);
        assert_eq!(at("007", 0.0), 7.0);
        assert_eq!(at("(+ 1 2) junk", 0.0), 3.0, "text after the expression is ignored");
        assert_eq!(at("1e3", 0.0), 1.0, "no exponent: the `e` is trailing text");
        assert_eq!(at("(if (< x 1) 10 20)", 0.5), 10.0);
        assert_eq!(at("(? (< x 1) 0 (+ 1 (self (- x 1) y)))", 3.5), 3.0, "lazy `?` ends the recursion");
        assert_eq!(at("(+ 1 2)\r\n", 0.0), 3.0, "CR after the expression is trailing text");
        // A number too large for a double is the largest double, as C++ extraction stores it.
        assert_eq!(at(&format!("1{}", "0".repeat(400)), 0.0), f64::MAX);
    }
    // CR is whitespace only in the documented dialect.
    assert_eq!(eval("(+ 1\r\n2)"), 3.0);
    let e = compile("(+ 1\r\n2)", &options(Dialect::Picogen2008)).unwrap_err();
    assert_eq!((e.code.to_string().as_str(), e.message.as_str()), ("GGE8101", "token unknown: '\\r'"));
}

/// The code, `line:column` and message of a program's compile error.
fn error_in(dialect: Dialect, program: &str) -> (String, String, String) {
    let d = match compile(program, &options(dialect)) {
        Ok(_) => panic!("{program:?} compiled"),
        Err(d) => d,
    };
    let file = SourceFile::new("p.hs", program);
    let at = d.span.map(|s| file.span_start(s).to_string()).unwrap_or_default();
    assert!(d.hint.is_some(), "{program:?}: {} has no hint", d.code);
    (d.code.to_string(), at, d.message)
}

fn error(program: &str) -> (String, String, String) {
    error_in(Dialect::Documented, program)
}

#[test]
fn syntax_errors_have_codes_positions_and_hints() {
    let cases: &[(&str, &str, &str, &str)] = &[
        ("(sinus x)", "GGE8108", "1:5", "'u' is not a variable of this program: it has only x and y"),
        (".5", "GGE8101", "1:1", "token unknown: '.'"),
        ("(+ 1e3 2)", "GGE8101", "1:5", "token unknown: 'e'"),
        ("(+ 1)", "GGE8105", "1:5", "`+` takes 2 operands, but only 1 was given"),
        ("(+ 1 2 3)", "GGE8106", "1:8", "missing ')': `+` takes 2 operands"),
        ("(+ x", "GGE8105", "1:5", "`+` takes 2 operands, but only 1 was given"),
        ("(+ x y", "GGE8106", "1:7", "missing ')': the program ends inside this form"),
        ("(foo 1)", "GGE8107", "1:2", "unknown operation: fo"),
        ("(sia x)", "GGE8107", "1:2", "unknown operation: sia"),
        ("(", "GGE8107", "1:2", "the program ends after `(`: an operation is missing"),
        ("-x", "GGE8102", "1:1", "invalid number: the `-` sign is not followed by digits"),
        ("(+ 1.2.3 4)", "GGE8103", "1:4", "too many dots in float-number: 1.2.3"),
        ("", "GGE8104", "1:1", "the program is empty"),
        ("  \n ", "GGE8104", "1:1", "the program is empty"),
        ("(self 1)", "GGE8109", "1:8", "`self` takes exactly 2 arguments here, but only 1 was given"),
        ("(self x y z)", "GGE8109", "1:11", "missing ')': `self` takes exactly 2 arguments here"),
        (
            "(+ 1 (self x y))",
            "GGE8111",
            "1:6",
            "this `self` call is reached by every evaluation, so the recursion never ends",
        ),
        (
            "(? (self x y) 1 2)",
            "GGE8111",
            "1:4",
            "this `self` call is reached by every evaluation, so the recursion never ends",
        ),
        ("(+ 1\n  (z))", "GGE8107", "2:4", "unknown operation: z"),
        ("(* 2\n   z)", "GGE8108", "2:4", "'z' is not a variable of this program: it has only x and y"),
        ("([3 Noise] x y)", "GGE8201", "1:3", "configurable functions are currently only supported with 2 parameters"),
        ("([2 Noise frequency(4)] x y", "GGE8106", "1:28", "missing ')': the program ends inside this form"),
        ("([2 Noise frequency(4) x y)", "GGE8204", "1:24", "missing value for parameter x"),
        ("([2 Noise frequency(4] x y)", "GGE8202", "1:28", "missing ']'"),
        ("([2 Noise frequency((4] x y)", "GGE8205", "1:20", "missing ')' for parameter frequency"),
        ("([2 Noise", "GGE8202", "1:10", "missing ']'"),
        ("([2 Noise _a(1)] x y)", "GGE8203", "1:11", "expected alphanumeric parameter name, found '_'"),
        ("([2 Nose] x y)", "GGE8206", "1:5", "unknown configurable function: 'Nose'"),
        (
            "([2 Noise a(1) frequency(2) b(2)] x y)",
            "GGE8207",
            "1:11",
            "the following parameters do not exist for 'Noise': 'a', 'b'",
        ),
        (
            "([2 Noise frequency(abc)] x y)",
            "GGE8208",
            "1:21",
            "bad value for parameter 'frequency': 'abc' is not a number",
        ),
        ("([2 Noise filter(smooth)] x y)", "GGE8208", "1:18", "unknown filter type for 'filter': 'smooth'"),
        (
            "([2 LayeredNoise seed(-1)] x y)",
            "GGE8208",
            "1:23",
            "bad value for parameter 'seed': '-1' is not a whole number from 0 to 4294967295",
        ),
        ("([2 LayeredNoise persistence()] x y)", "GGE8104", "1:30", "the program is empty"),
        (
            "([2 LayeredNoise persistence((* x y))] x y)",
            "GGE8108",
            "1:35",
            "'y' is not a variable of this program: it has only x (it is a persistence or level function)",
        ),
        ("([2 Noise] x)", "GGE8105", "1:13", "`[2 Noise]` takes 2 operands, but only 1 was given"),
        (
            "([2 LayeredNoise layercount(4000000000)] x y)",
            "GGE8209",
            "1:1",
            "one point of this program costs 56000000003 operations, more than the limit of 100000",
        ),
    ];
    let mut wrong = Vec::new();
    for &(program, code, at, message) in cases {
        let got = error(program);
        if got != (code.to_string(), at.to_string(), message.to_string()) {
            wrong.push(format!("{program:?}: got {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_original_rejects_what_the_documented_dialect_adds() {
    // Without the arity digit, and `noisemapfilter`, the 2008-06 reference's parameter name.
    let plain = "([LayeredNoise] x y)";
    assert!(compile(plain, &options(Dialect::Documented)).is_ok());
    assert_eq!(error_in(Dialect::Picogen2008, plain).0, "GGE8201");
    let documented = "([2 LayeredNoise noisemapfilter(nearest)] x y)";
    let with_filter = "([2 LayeredNoise filter(nearest)] x y)";
    assert_eq!(eval_in(Dialect::Documented, documented, 0.3, 0.7), eval_in(Dialect::Documented, with_filter, 0.3, 0.7));
    let e = error_in(Dialect::Picogen2008, documented);
    assert_eq!(e.2, "the following parameters do not exist for 'LayeredNoise': 'noisemapfilter'");
    // A value that is not a number: an error, or 0 as C++ extraction reads it.
    let abc = "([2 Noise frequency(abc)] x y)";
    assert_eq!(eval_in(Dialect::Picogen2008, abc, 0.3, 0.7), -0.147_431_147_202_716_94, "frequency 0 samples L(0, 0)");
    assert_eq!(
        eval_in(Dialect::Picogen2008, "([2 Noise seed(42.9) frequency(8xyz)] x y)", 0.3, 0.7),
        eval("([2 Noise] 0.3 0.7)")
    );
}

#[test]
fn recursion_is_bounded_with_a_coded_error() {
    let program = "(? (< x 0) 0 (+ 1 (self (- x 1) y)))";
    let limits = Limits { max_self_depth: 50, ..Limits::default() };
    let compiled = compile(program, &Options { limits, ..Options::default() }).unwrap();
    assert_eq!(compiled.eval_point(&[49.5, 0.0]), Ok(50.0));
    let e = compiled.eval_point(&[50.5, 0.0]).unwrap_err();
    assert_eq!(e.code.to_string(), "GGE8301");
    assert_eq!(e.span.map(|s| &program[s.range()]), Some("(self (- x 1) y)"));
    // Branching recursion: the per-point budget stops it.
    let fib = "(? (< x 2) 1 (+ (self (- x 1) y) (self (- x 2) y)))";
    let compiled = compile(fib, &Options::default()).unwrap();
    assert_eq!(compiled.eval_point(&[10.0, 0.0]), Ok(89.0));
    assert_eq!(compiled.eval_point(&[60.0, 0.0]).unwrap_err().code.to_string(), "GGE8302");
    // Recursion inside a persistence function refers to that function (one variable).
    let inner = "([2 LayeredNoise layercount(2) persistence((? (< x 10) (self (+ x 1)) 0.25))] x y)";
    let lifted = "([2 LayeredNoise layercount(2) persistence(0.25)] x y)";
    assert_eq!(eval_in(Dialect::Documented, inner, 0.3, 0.6), eval_in(Dialect::Documented, lifted, 0.3, 0.6));
}

#[test]
fn noise_tables_and_lattice_are_the_originals() {
    let l00 = -0.147_431_147_202_716_94;
    assert_eq!(eval("([2 Noise frequency(1)] x y)"), l00);
    for filter in ["nearest", "bilinear", "cosine"] {
        assert_eq!(eval(&format!("([2 Noise filter({filter})] 0 0)")), l00, "{filter}");
    }
    // Every octave reads the same lattice: at lattice points LN = L(0,0)·1.96875.
    close(eval("([2 LayeredNoise] x y)"), l00 * 1.96875);
    // The lattice repeats every 256 cells.
    let p = "([2 Noise frequency(1)] x y)";
    assert_eq!(eval_in(Dialect::Documented, p, 0.375 + 256.0, 0.8125), eval_in(Dialect::Documented, p, 0.375, 0.8125));
    assert_eq!(eval_in(Dialect::Documented, p, 0.375 - 512.0, 0.8125), eval_in(Dialect::Documented, p, 0.375, 0.8125));
}

#[test]
fn the_negative_corner_quirk_at_minus_one() {
    // Spec §1.4: with `Noise frequency(1)` the original gives 0.2208 / −0.1618 / 0.2208 at
    // x = −1.0000001 / −1 / −0.9999999 (here at y = 0.369); the documented dialect is continuous.
    let p = "([2 Noise frequency(1)] x y)";
    let y = 0.369;
    let original: Vec<f64> =
        [-1.0000001, -1.0, -0.9999999].iter().map(|&x| eval_in(Dialect::Picogen2008, p, x, y)).collect();
    close(original[0], 0.220_786_016_471_247_63);
    close(original[1], -0.161_766_729_956_241_58);
    close(original[2], 0.220_786_016_471_242_27);
    close(eval_in(Dialect::Documented, p, -1.0, y), 0.220_786_016_471_251_7);
    close(eval_in(Dialect::Documented, p, -1.0000001, y), original[0]);
}

#[test]
fn noise_functions_at_points_and_parameter_sets() {
    let points = [(0.0, 0.0), (0.3, 0.7), (0.123, 0.456), (-0.4, 1.3), (2.5, -3.75)];
    let sets: &[(&str, [f64; 5])] = &[
        (
            "([2 LayeredNoise] x y)",
            [
                -0.290_255_071_055_348_9,
                -0.250_120_342_973_693_57,
                -0.407_339_587_829_435_2,
                0.252_413_310_825_808_65,
                0.011_878_760_140_178_933,
            ],
        ),
        (
            "([2 LayeredNoise seed(7) frequency(3) layercount(4) filter(bilinear)] x y)",
            [
                -0.774_856_059_104_752_7,
                -0.362_366_092_337_73,
                -0.370_862_359_900_613,
                -0.168_799_234_293_703_72,
                -0.115_388_997_522_622_55,
            ],
        ),
        (
            "([2 LayeredNoise seed(1) frequency(5) layercount(3) filter(nearest)] x y)",
            [
                -0.461_844_291_441_804_8,
                -0.382_100_616_234_145_26,
                -0.043_723_479_243_629_46,
                0.013_001_941_001_974_493,
                0.409_196_833_971_468,
            ],
        ),
        (
            "([2 LayeredNoise persistence((* x 2)) levelEvaluationFunction((abs x))] x y)",
            [
                0.194_711_215_869_198_12,
                0.312_028_132_098_319_3,
                0.350_421_176_604_546_75,
                0.446_116_281_610_081_4,
                0.011_383_538_660_432_456,
            ],
        ),
        (
            "([2 Noise] x y)",
            [
                -0.147_431_147_202_716_94,
                0.017_839_196_798_564_508,
                -0.053_583_161_370_852_6,
                0.021_500_279_369_207_49,
                -0.311_292_889_018_378_4,
            ],
        ),
    ];
    for (program, expected) in sets {
        for (&(x, y), &value) in points.iter().zip(expected) {
            let got = eval_in(Dialect::Documented, program, x, y);
            assert!((got - value).abs() <= 1e-12, "{program} at ({x}, {y}): {got:?}, expected {value:?}");
        }
    }
}

#[test]
fn the_functions_identities_hold_bit_for_bit() {
    let points = [(0.3, 0.7), (-0.4, 1.3), (17.25, -3.5), (0.0, 0.0), (1e6, 1e-6)];
    for &(x, y) in &points {
        let at = |p: &str| eval_in(Dialect::Documented, p, x, y);
        // Noise(F) ≡ LayeredNoise(F, layercount 1).
        assert!(same(at("([2 Noise frequency(3)] x y)"), at("([2 LayeredNoise frequency(3) layercount(1)] x y)")));
        // Layers with its defaults ≡ LayeredNoise with its defaults; Layers ignores `seed`.
        assert!(same(at("([2 Layers] x y)"), at("([2 LayeredNoise] x y)")));
        assert!(same(at("([2 Layers seed(5)] x y)"), at("([2 LayeredNoise] x y)")));
        // The default parameters written out.
        assert!(same(
            at("([2 LayeredNoise] x y)"),
            at("([2 LayeredNoise seed(42) frequency(2) layercount(6) filter(cosine) persistence(0.5) levelEvaluationFunction(x)] x y)")
        ));
        // A level function doubling Z doubles every octave exactly.
        assert!(same(
            at("([2 LayeredNoise levelEvaluationFunction((* 2 x))] x y)"),
            2.0 * at("([2 LayeredNoise] x y)")
        ));
        // The last of a repeated parameter wins.
        assert!(same(at("([2 Noise frequency(1) frequency(3)] x y)"), at("([2 Noise frequency(3)] x y)")));
        // Other seeds give other noise.
        assert!(!same(at("([2 Noise seed(43)] x y)"), at("([2 Noise] x y)")) || (x, y) == (0.0, 0.0));
    }
}

#[test]
fn one_variable_programs() {
    let p = compile_with_arity("(* x 3)", 1, &Options::default()).unwrap();
    assert_eq!(p.eval_point(&[2.0]), Ok(6.0));
    assert!(compile_with_arity("y", 1, &Options::default()).is_err());
}

/// `(+ f (+ f ...))` as a balanced tree of `count` copies of `leaf`.
fn tree_of(leaf: &str, count: usize) -> String {
    if count == 1 {
        leaf.to_string()
    } else {
        format!("(+ {} {})", tree_of(leaf, count / 2), tree_of(leaf, count - count / 2))
    }
}

#[test]
fn many_configurable_functions_are_bounded_before_their_tables_are_built() {
    // 100 000 operations per point allow 8333 functions; a wide tree of them is refused early.
    let e = compile(&tree_of("([2 Noise seed(7)] x y)", 20_000), &Options::default()).unwrap_err();
    assert_eq!(e.code.to_string(), "GGE8209");
    // Beyond 16 functions the row cache is off; the values are the same.
    let program = compile(&tree_of("([2 LayeredNoise layercount(2)] x y)", 20), &Options::default()).unwrap();
    assert_eq!(program.function_count(), 20);
    let xs: Vec<f64> = (0..300).map(|i| f64::from(i) / 300.0).collect();
    let mut row = vec![0.0; xs.len()];
    let mut ws = program.workspace();
    for y in [0.25, 0.5] {
        program.eval_row(&xs, y, &mut row, &mut ws).unwrap();
        for i in [0, 150, 299] {
            assert_eq!(row[i].to_bits(), program.eval_point(&[xs[i], y]).unwrap().to_bits());
        }
    }
}
