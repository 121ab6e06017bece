//! Spec §6: no input may crash geogen. Property tests of the whole pipeline (parse → compile →
//! simulate → render) on three kinds of input, each under tight limits so a case stays fast:
//!
//! * random bytes (as lossy UTF-8);
//! * random sequences of GeoGen Script tokens joined with spaces (keywords, operators,
//!   punctuation, identifiers including library names, numbers, strings), which get much deeper
//!   into the parser and compiler than bytes do;
//! * small well-formed programs from a tiny generator (variables, arithmetic, bounded loops,
//!   function calls, array operations, map operations with random arguments, yields), which must
//!   compile and are also rendered at 16×16.
//!
//! The property: nothing panics, and every failure is a [`Failure`] whose first diagnostic has a
//! code of the code table and, for compile and run errors, a span inside the source.
//!
//! The fuzz targets in `fuzz/` (see `fuzz/README.md`) explore the same ground far longer; this
//! test keeps the property in CI.

use crate::common;

use geogen::diag::codes::TABLE;
use geogen::diag::RenderOptions;
use geogen::{CompileOptions, Failure, Limits, RenderConfig, RunSettings, Script};
use proptest::prelude::*;
use proptest::sample::select;

fn settings() -> RunSettings {
    RunSettings {
        seed: 3,
        render_width: Some(16),
        render_height: Some(16),
        limits: Limits {
            max_call_depth: 200,
            max_block_depth: 200,
            max_object_stack: 10_000,
            instruction_budget: 20_000,
            max_rendering_steps: 200,
            max_array_len: 10_000,
            max_string_len: 100_000,
            max_heap_bytes: 16 << 20,
        },
        inputs: geogen_stdlib::generators::example_inputs(),
        ..RunSettings::default()
    }
}

/// The first diagnostic has a known code and, when `needs_span`, a span inside the source; the
/// failure renders as text.
fn check_failure(failure: &Failure, source: &str, needs_span: bool) -> Result<(), TestCaseError> {
    prop_assert!(!failure.diagnostics.is_empty(), "a failure without diagnostics");
    let first = failure.first();
    prop_assert!(TABLE.iter().any(|info| info.code == first.code), "unknown code {} in {:?}", first.code, first);
    match first.span {
        Some(span) => prop_assert!(
            span.start <= span.end && span.end as usize <= source.len(),
            "span {:?} outside the source (length {}): {:?}",
            span,
            source.len(),
            first
        ),
        None => prop_assert!(!needs_span, "no span: {:?}", first),
    }
    let _ = failure.render(RenderOptions { color: false });
    Ok(())
}

/// Compiles and simulates; renders too when `render` and the simulation succeeded. Returns the
/// compile failure, if any.
fn pipeline(source: &str, render: bool) -> Result<Option<Failure>, TestCaseError> {
    let options = CompileOptions { test_library: true, main_map_mandatory: false, ..CompileOptions::default() };
    let script = match Script::compile("prop.ggs", source, &options) {
        Ok(script) => script,
        Err(failure) => {
            check_failure(&failure, source, true)?;
            return Ok(Some(failure));
        }
    };
    let settings = settings();
    if let Err(failure) = script.simulate(&settings) {
        check_failure(&failure, source, true)?;
        return Ok(None);
    }
    if render {
        let config = RenderConfig { memory_limit: 8 << 20, ..RenderConfig::default() };
        if let Err(failure) = script.render(&settings, &config, None) {
            // A renderer error may concern the whole plan (GGE3001) rather than one line.
            check_failure(&failure, source, false)?;
        }
    }
    Ok(None)
}

// ---------------------------------------------------------------------------------------------
// (b) token soup

const TOKENS: &[&str] = &[
    // keywords
    "metadata",
    "enum",
    "function",
    "var",
    "global",
    "return",
    "yield",
    "as",
    "switch",
    "default",
    "case",
    "if",
    "else",
    "for",
    "while",
    "break",
    "continue",
    "true",
    "false",
    "is",
    "null",
    // operators and punctuation
    "<<=",
    ">>=",
    "++",
    "--",
    "<<",
    ">>",
    "<=",
    ">=",
    "==",
    "!=",
    "&&",
    "||",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "&=",
    "^=",
    "|=",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    ":",
    ".",
    "?",
    "@",
    "!",
    "*",
    "/",
    "%",
    "+",
    "-",
    "<",
    ">",
    "&",
    "^",
    "|",
    "=",
    "{",
    "}",
    "(",
    ")",
    ";",
    ";",
    // library and metadata names
    "HeightMap",
    "Flat",
    "Gradient",
    "RadialGradient",
    "Noise",
    "RidgedNoise",
    "Clone",
    "Add",
    "Multiply",
    "Blur",
    "Combine",
    "Array",
    "Repeat",
    "Empty",
    "PushBack",
    "Count",
    "Print",
    "TriggerError",
    "AssertEquals",
    "Random",
    "CreateNoiseLayers",
    "Parameters",
    "MapWidth",
    "Coordinate",
    "Point",
    "Number",
    "Direction",
    "Horizontal",
    "Width",
    "Height",
    "Finite",
    "Infinite",
    "Min",
    "Max",
    "Default",
    "Sqrt",
    "Pow",
    "Log",
    // plain identifiers
    "a",
    "b",
    "x",
    "main",
    "f",
];

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => select(TOKENS).prop_map(str::to_string),
        1 => "[a-z_][a-zA-Z0-9_]{0,6}",
        1 => prop_oneof![
            (0u32..100).prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|x| format!("{x}")),
            select(&["0.5", "1e308", "1e309", "0", "-1", "2147483648", "1.5e-320"][..]).prop_map(str::to_string),
        ],
        1 => "\"[a-z {}0-9\\\\]{0,6}\"",
    ]
}

// ---------------------------------------------------------------------------------------------
// (c) well-formed programs

/// A number expression over the program's variables and functions.
fn num_expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        4 => (0i32..10).prop_map(|n| n.to_string()),
        1 => select(&["0.5", "-3", "1000000000000000000000", "-99999999999", "0.000000001", "255", "100000"][..]).prop_map(str::to_string),
        2 => select(&["n0", "n1", "arr.Count()", "Random(0, 10)", "Parameters.MapWidth"][..]).prop_map(str::to_string),
    ];
    leaf.prop_recursive(3, 12, 2, |inner| {
        let op = select(&["+", "-", "*", "/", "%"][..]);
        prop_oneof![
            (inner.clone(), op, inner.clone()).prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            (select(&["Min", "Max", "Pow", "f"][..]), inner.clone(), inner.clone())
                .prop_map(|(name, a, b)| format!("{name}({a}, {b})")),
            (select(&["Abs", "Floor", "Sqrt", "-", "g"][..]), inner).prop_map(|(name, a)| format!("{name}({a})")),
        ]
    })
}

fn cond_expr() -> impl Strategy<Value = String> {
    (num_expr(), select(&["<", "<=", ">", ">=", "==", "!="][..]), num_expr())
        .prop_map(|(a, op, b)| format!("{a} {op} {b}"))
}

/// A map expression: a new map with random arguments.
fn map_expr() -> impl Strategy<Value = String> {
    let n = num_expr;
    prop_oneof![
        n().prop_map(|h| format!("HeightMap.Flat({h})")),
        (n(), n(), n(), n()).prop_map(|(x, y, a, b)| format!("HeightMap.Gradient([0, 0], [{x}, {y}], {a}, {b})")),
        (n(), n(), n()).prop_map(|(r, a, b)| format!("HeightMap.RadialGradient([8, 8], {r}, {a}, {b})")),
        (n(), n(), n()).prop_map(|(lo, hi, p)| format!("HeightMap.Noise(CreateNoiseLayers({lo}, {hi}, {p}))")),
        (0u32..4, n()).prop_map(|(lo, seed)| format!("HeightMap.RidgedNoise(CreateNoiseLayers({lo}, 8), {seed})")),
        Just("HeightMap.Clone(m)".to_string()),
    ]
}

fn map_stmt() -> impl Strategy<Value = String> {
    let n = num_expr;
    prop_oneof![
        n().prop_map(|x| format!("m.Add({x});")),
        map_expr().prop_map(|e| format!("m.Add({e});")),
        n().prop_map(|x| format!("m.Multiply({x});")),
        map_expr().prop_map(|e| format!("m.Multiply({e});")),
        n().prop_map(|r| format!("m.Blur({r});")),
        (n(), n()).prop_map(|(a, b)| format!("m.ClampHeights({a}, {b});")),
        (n(), n()).prop_map(|(a, b)| format!("m.CropHeights({a}, {b});")),
        n().prop_map(|h| format!("m.Fill({h});")),
        select(&["m.Abs();", "m.Invert();"][..]).prop_map(str::to_string),
        (map_expr(), map_expr()).prop_map(|(a, b)| format!("m.Combine({a}, {b});")),
        (select(&["Intersect", "Unify"][..]), map_expr()).prop_map(|(op, e)| format!("m.{op}({e});")),
        map_expr().prop_map(|e| format!("m = {e};")),
        (map_expr(), 0u32..3).prop_map(|(e, k)| format!("yield {e} as \"map{k}\";")),
    ]
}

fn simple_stmt() -> impl Strategy<Value = String> {
    let n = num_expr;
    prop_oneof![
        n().prop_map(|x| format!("n0 = {x};")),
        (select(&["+=", "-=", "*=", "="][..]), n()).prop_map(|(op, x)| format!("n1 {op} {x};")),
        n().prop_map(|x| format!("s = s + {x};")),
        n().prop_map(|x| format!("arr.PushBack({x});")),
        Just("if (arr.Count() > 0) { arr.Pop(); }".to_string()),
        (0u32..6, n()).prop_map(|(k, x)| format!("arr[{k}] = {x};")),
        select(&["arr.SortByValues();", "arr.SortByKeys();", "arr.Shuffle(2);", "arr = Array.Repeat(n0, 3);"][..])
            .prop_map(str::to_string),
        n().prop_map(|x| format!("Print(\"{{0}} {{1}}\", {x}, s);")),
        map_stmt(),
    ]
}

fn stmt() -> impl Strategy<Value = String> {
    simple_stmt().prop_recursive(3, 24, 4, |inner| {
        let body = prop::collection::vec(inner, 0..4).prop_map(|v| v.join(" "));
        prop_oneof![
            (0u32..5, body.clone()).prop_map(|(count, b)| format!("for (var i = 0; i < {count}; i++) {{ {b} }}")),
            (cond_expr(), body.clone(), body.clone())
                .prop_map(|(c, a, b)| format!("if ({c}) {{ {a} }} else {{ {b} }}")),
            (0u32..4, body).prop_map(|(count, b)| { format!("{{ var w = 0; while (w < {count}) {{ w++; {b} }} }}") }),
        ]
    })
}

fn program() -> impl Strategy<Value = String> {
    (prop::collection::vec(stmt(), 1..8), any::<bool>()).prop_map(|(statements, yield_main)| {
        let mut source = String::from(
            "metadata { Width: Finite, Height: Finite }\n\
             function f(a, b) { return a * 2 - b; }\n\
             function g(x) { if (x <= 0 || x > 50) { return 1; } return g(x - 1) + 1; }\n\
             var n0 = 1;\nvar n1 = 2;\nvar s = \"\";\nvar arr = {1, 2, 3};\nvar m = HeightMap.Flat(0.1);\n",
        );
        for statement in statements {
            source.push_str(&statement);
            source.push('\n');
        }
        if yield_main {
            source.push_str("yield m;\n");
        }
        source
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let source = String::from_utf8_lossy(&bytes);
        pipeline(&source, false)?;
    }

    #[test]
    fn random_token_sequences_never_panic(tokens in prop::collection::vec(token(), 0..64)) {
        let source = tokens.join(" ");
        pipeline(&source, true)?;
    }

    #[test]
    fn well_formed_programs_compile_and_never_panic(source in program()) {
        if let Some(failure) = pipeline(&source, true)? {
            prop_assert!(false, "a generated program did not compile:\n{}\n{}", source, failure);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// (d) every declared operation with hostile arguments

/// Each operation of the list, called with arguments drawn from valid values, extreme numbers and
/// values of other types, on maps (and profiles) made by random constructors, at a random render
/// scale and origin: compile, simulate and render must end in a result or a coded failure.
#[test]
fn every_operation_with_hostile_arguments_never_panics() {
    every_operation_never_panics(common::ops::Arguments::Hostile);
}

/// Each operation with valid arguments at the edges of their ranges (the largest sizes and
/// coordinates, the ends of every range, tiny and huge factors): it renders with heights in
/// [-1, 1], or is refused with a code (typically GGE3001: margins too large for memory).
#[test]
fn every_operation_with_extreme_valid_arguments_renders_or_is_refused() {
    every_operation_never_panics(common::ops::Arguments::Extreme);
}

fn every_operation_never_panics(mode: common::ops::Arguments) {
    use common::ops::{self, Vars};
    use geogen_stdlib::operation;
    use proptest::test_runner::{Config, TestRunner};

    let profiles = if ops::profiles_available() { 1 } else { 0 };
    for entry in operation::all() {
        let vars = Vars { maps: 2, profiles, finite: false };
        let source = (ops::declarations(vars), ops::call_statement(entry, vars, mode))
            .prop_map(|(decls, call)| format!("{decls}{call}\nyield m0;\n"));
        let place = (select(&[1.0, 0.5, 0.25, 2.0][..]), -40i64..40, -40i64..40);
        let mut runner = TestRunner::new(Config { cases: 12, failure_persistence: None, ..Config::default() });
        let result = runner.run(&(source, place), |(source, (scale, x, y))| {
            let options = CompileOptions { test_library: false, main_map_mandatory: true, ..CompileOptions::default() };
            let script = match Script::compile("op.ggs", &source, &options) {
                Ok(script) => script,
                Err(failure) => {
                    return Err(TestCaseError::fail(format!("a generated call does not compile:\n{source}\n{failure}")))
                }
            };
            let settings = RunSettings { render_scale: scale, render_origin: (x, y), ..settings() };
            if let Err(failure) = script.simulate(&settings) {
                check_failure(&failure, &source, true)?;
                return Ok(());
            }
            match script.render(&settings, &RenderConfig { memory_limit: 8 << 20, ..RenderConfig::default() }, None) {
                Err(failure) => check_failure(&failure, &source, false)?,
                Ok(rendered) => {
                    for map in rendered.maps.values() {
                        prop_assert!(
                            map.data().iter().all(|h| (-1.0..=1.0).contains(h)),
                            "heights outside [-1, 1]:\n{}",
                            source
                        );
                    }
                }
            }
            Ok(())
        });
        if let Err(e) = result {
            panic!("{}: {e}", entry.signature.qualified_name());
        }
    }
}
