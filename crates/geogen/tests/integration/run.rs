//! End-to-end tests through the library facade: source text → parse → compile → simulate.

use geogen::diag::codes;
use geogen::{CompileOptions, Dimension, Failure, Limits, ParameterKind, RunOutput, RunSettings, Script};

fn options() -> CompileOptions {
    CompileOptions { test_library: true, main_map_mandatory: false, ..CompileOptions::default() }
}

fn compile(source: &str) -> Script {
    Script::compile("test.ggs", source, &options()).unwrap_or_else(|f| panic!("compile failed:\n{f}"))
}

fn run(source: &str) -> RunOutput {
    run_with(source, &RunSettings::default()).unwrap_or_else(|f| panic!("run failed:\n{f}"))
}

fn run_with(source: &str, settings: &RunSettings) -> Result<RunOutput, Failure> {
    compile(source).run(settings)
}

fn run_err(source: &str, settings: &RunSettings) -> Failure {
    match run_with(source, settings) {
        Ok(out) => panic!("expected an error, got {:?}", out.messages),
        Err(f) => f,
    }
}

#[test]
fn sieve_of_eratosthenes() {
    let out = run(r#"
        var n = 100;
        var composite = {};
        for (var i = 0; i <= n; i++) { composite[i] = false; }
        var primes = {};
        for (var i = 2; i <= n; i++) {
            if (composite[i]) { continue; }
            primes.PushBack(i);
            for (var j = i * i; j <= n; j += i) { composite[j] = true; }
        }
        Print("{0} {1}", primes.Count(), primes.Back());
    "#);
    assert_eq!(out.messages, ["25 97"]);
}

#[test]
fn fibonacci_recursive_and_iterative() {
    let out = run(r#"
        function fib(n) { if (n < 2) { return n; } return fib(n - 1) + fib(n - 2); }
        function fibLoop(n) {
            var a = 0; var b = 1;
            while (n > 0) { var t = a + b; a = b; b = t; n--; }
            return a;
        }
        Print("{0} {1}", fib(20), fibLoop(30));
    "#);
    assert_eq!(out.messages, ["6765 832040"]);
}

#[test]
fn switch_falls_through_until_break() {
    let out = run(r#"
        function describe(x) {
            var s = "";
            switch (x) {
                case 1: s = s + "one ";
                case 2: s = s + "two "; break;
                default: s = s + "other ";
                case 3: s = s + "three ";
            }
            return s;
        }
        Print(describe(1)); Print(describe(2)); Print(describe(3)); Print(describe(9));
    "#);
    assert_eq!(out.messages, ["one two ", "two ", "three ", "other three "]);
}

#[test]
fn continue_in_for_runs_the_increment() {
    let out = run(r#"
        var sum = 0;
        for (var i = 0; i < 10; i++) { if (i % 2 == 0) { continue; } sum += i; }
        Print("{0}", sum);
    "#);
    assert_eq!(out.messages, ["25"]);
}

#[test]
fn and_or_short_circuit() {
    let out = run(r#"
        function noisy(v) { Print("called"); return v; }
        if (false && noisy(true)) { Print("no"); }
        if (true || noisy(false)) { Print("yes"); }
        if (true && noisy(true)) { Print("both"); }
    "#);
    assert_eq!(out.messages, ["yes", "called", "both"]);
}

#[test]
fn scoping_through_the_facade() {
    let out = run(r#"
        global g = 1;
        var x = 1;
        { var x = 2; Print("{0}", x); }
        function f() { var g = 5; return g; }
        function h() { return g; }
        Print("{0} {1} {2}", x, f(), h());
    "#);
    assert_eq!(out.messages, ["2", "1 5 1"]);

    let f = run_err("var y = 1;\nfunction f() {\n  return y;\n}\nf();\n", &RunSettings::default());
    assert_eq!(f.first().code, codes::GGE2202);
    assert_eq!(f.first_location().map(|l| (l.line, l.column)), Some((3, 10)));
    // The call site is a secondary label.
    let (site, text) = &f.first().labels[0];
    assert_eq!(f.source.span_start(*site).line, 5);
    assert_eq!(text, "called from here");
}

const PARAMS: &str = r#"
metadata {
    Width: { Min: 10, Max: 5000 },
    Height: Finite,
    Parameters: {
        Size: { Type: Number, Default: 3, Min: 0, Max: 10, Restriction: Integers },
        Flat: { Default: true },
        Dir: { Type: Direction, Default: Vertical }
    }
}
Print("{0} {1} {2}", Parameters.Size, Parameters.Flat, Parameters.Dir == Direction.Horizontal);
Print("{0} {1} {2} {3} {4}", Parameters.MapWidth, Parameters.MapHeight, Parameters.RenderWidth, Parameters.RenderHeight, Parameters.RenderScale);
"#;

fn params(pairs: &[(&str, &str)]) -> RunSettings {
    RunSettings {
        parameters: pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..RunSettings::default()
    }
}

#[test]
fn parameters_from_strings() {
    let out = run_with(PARAMS, &RunSettings::default()).unwrap();
    assert_eq!(out.messages[0], "3 true false");
    let out = run_with(PARAMS, &params(&[("Size", "7.9"), ("Flat", "false"), ("Dir", "Horizontal")])).unwrap();
    assert_eq!(out.messages[0], "7 false true");

    let f = run_err(PARAMS, &params(&[("Sise", "1")]));
    assert_eq!(f.first().code, codes::GGE4001);
    let hint = f.first().hint.clone().unwrap_or_default();
    assert!(hint.contains("`Size`") && hint.contains("`Flat`") && hint.contains("`Dir`"), "{hint}");

    let f = run_err(PARAMS, &params(&[("Size", "big")]));
    assert_eq!(f.first().code, codes::GGE4002);
}

#[test]
fn map_and_render_sizes() {
    // A finite map with a map size: the render covers it.
    let settings = RunSettings { map_width: Some(640), map_height: Some(480), ..RunSettings::default() };
    let out = run_with(PARAMS, &settings).unwrap();
    assert_eq!(out.messages[1], "640 480 640 480 1");
    // Without a map size: floor(render / scale), clamped into the range.
    let settings =
        RunSettings { render_width: Some(300), render_height: Some(5), render_scale: 0.5, ..Default::default() };
    let out = run_with(PARAMS, &settings).unwrap();
    assert_eq!(out.messages[1], "600 10 300 5 0.5");
    // An explicit size outside the range is GGE4003 naming it.
    let f = run_err(PARAMS, &RunSettings { map_width: Some(9), ..RunSettings::default() });
    assert_eq!(f.first().code, codes::GGE4003);
    assert!(f.first().message.contains("[10, 5000]"), "{}", f.first().message);
    let f = run_err(PARAMS, &RunSettings { render_scale: 20.0, ..RunSettings::default() });
    assert_eq!(f.first().code, codes::GGE4003);
}

#[test]
fn map_width_of_an_infinite_map_is_undefined() {
    let f = run_err("var w = Parameters.RenderWidth;\nPrint(\"{0}\", Parameters.MapWidth);\n", &RunSettings::default());
    assert_eq!(f.first().code, codes::GGE2202);
    assert_eq!(f.first_location().map(|l| l.line), Some(2));
    assert!(f.first().hint.as_deref().unwrap_or("").contains("infinite"));
}

#[test]
fn parameters_are_read_only() {
    let f = run_err("Parameters.RenderScale = 2;", &RunSettings::default());
    assert_eq!(f.first().code, codes::GGE2108);
}

#[test]
fn limits_through_the_facade() {
    let budget =
        RunSettings { limits: Limits { instruction_budget: 50_000, ..Limits::default() }, ..Default::default() };
    let f = run_err("while (true) { }", &budget);
    assert_eq!(f.first().code, codes::GGE2505);

    let f = run_err("function f(n) { return f(n + 1); }\nf(0);", &RunSettings::default());
    assert_eq!(f.first().code, codes::GGE2501);
    assert_eq!(f.first_location().map(|l| l.line), Some(1));
    // The rendered report stays readable: only a few call sites are shown.
    assert!(f.to_string().matches("called from here").count() <= 8);
}

#[test]
fn deep_recursion_with_a_raised_limit() {
    let settings =
        RunSettings { limits: Limits { max_call_depth: 200_000, ..Limits::default() }, ..Default::default() };
    let out = run_with(
        "function down(n) { if (n == 0) { return 0; } return down(n - 1) + 1; }\nPrint(\"{0}\", down(100000));",
        &settings,
    )
    .unwrap();
    assert_eq!(out.messages, ["100000"]);
}

#[test]
fn runtime_error_location_and_messages_before_it() {
    let f = run_err("Print(\"before\");\nvar a = {};\nvar b = a[\"missing\"];\n", &RunSettings::default());
    assert_eq!(f.first().code, codes::GGE2602);
    assert_eq!(f.first_location().map(|l| (l.line, l.column)), Some((3, 9)));
    assert_eq!(f.messages, ["before"]);
}

#[test]
fn syntax_and_compile_errors_are_failures() {
    let f = Script::compile("bad.ggs", "var = 3;", &options()).unwrap_err();
    assert_eq!(f.first().code, codes::GGE1201);
    let f = Script::compile("main.ggs", "Print(\"x\");", &CompileOptions::default()).unwrap_err();
    assert_eq!(f.first().code, codes::GGE1312);
}

#[test]
fn main_map_is_mandatory_at_run_time() {
    let source = "if (false) { yield HeightMap.Flat(); }";
    let Ok(script) = Script::compile("t.ggs", source, &CompileOptions::default()) else {
        panic!("compiles");
    };
    let f = script.run(&RunSettings::default()).unwrap_err();
    assert_eq!(f.first().code, codes::GGE2801);
}

#[test]
fn yield_of_a_non_map() {
    let f = run_err("yield 5;", &RunSettings::default());
    assert_eq!(f.first().code, codes::GGE2107);
}

#[test]
fn info_lists_metadata() {
    let script = compile(
        r#"metadata { Name: "Island", Author: "me", Width: { Default: 800, Min: 10, Max: 5000 },
           Parameters: { Size: { Default: 3, Min: 0, Max: 10 }, Dir: { Type: Direction } } }
           enum E { A }
           var m = 1;"#,
    );
    let info = script.info();
    assert_eq!(info.metadata.name.as_deref(), Some("Island"));
    assert_eq!(info.metadata.author.as_deref(), Some("me"));
    assert_eq!(info.metadata.width, Dimension::Finite { default: Some(800), min: 10, max: 5000 });
    assert_eq!(info.metadata.height, Dimension::Infinite);
    assert_eq!(info.metadata.parameters.len(), 2);
    assert!(
        matches!(info.metadata.parameters[0].kind, ParameterKind::Number { default, min, max, .. } if default == 3.0 && min == 0.0 && max == 10.0)
    );
    assert_eq!(info.metadata.parameters[1].kind.type_name(), "Direction");
    assert!(info.maps.is_empty());
}

#[test]
fn one_script_runs_on_many_threads() {
    let script = std::sync::Arc::new(compile(
        "var s = 0; for (var i = 0; i < 1000; i++) { s += i; } Print(\"{0} {1}\", s, Random(0, 1000000));",
    ));
    let handles: Vec<_> = (0..4)
        .map(|seed| {
            let script = script.clone();
            std::thread::spawn(move || {
                script.run(&RunSettings { seed: seed % 2, ..Default::default() }).unwrap().messages
            })
        })
        .collect();
    let results: Vec<Vec<String>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(results[0], results[2]);
    assert_eq!(results[1], results[3]);
    assert!(results[0][0].starts_with("499500 "));
}

#[test]
fn a_given_map_size_renders_whole_at_the_scale() {
    let script = compile("metadata { Width: Finite, Height: Finite }\nyield HeightMap.Flat(0.25);\n");
    let settings =
        RunSettings { map_width: Some(400), map_height: Some(300), render_scale: 0.5, ..RunSettings::default() };
    let geometry = script.geometry(&settings).expect("valid settings");
    assert_eq!((geometry.render_width, geometry.render_height), (200, 150));
    let rendered = script.render(&settings, &geogen::RenderConfig::default(), None).expect("renders");
    let map = &rendered.maps["main"];
    assert_eq!((map.rect().width, map.rect().height), (200, 150));
}

#[test]
fn a_render_outside_the_32_bit_coordinate_range_is_refused() {
    let script = compile("yield HeightMap.Noise();\n");
    let far = RunSettings { render_origin: (i64::MIN, 0), render_width: Some(4), ..RunSettings::default() };
    let failure = script.render(&far, &geogen::RenderConfig::default(), None).expect_err("out of range");
    assert_eq!(failure.first().code.to_string(), "GGE4003");
    // At scale 0.5 the limit is reached at half the physical distance.
    let near_edge = RunSettings { render_origin: (1_200_000_000, 0), render_scale: 0.5, ..RunSettings::default() };
    assert!(script.render(&near_edge, &geogen::RenderConfig::default(), None).is_err());
    let fine = RunSettings {
        render_origin: (-2_000_000_000, 5),
        render_width: Some(8),
        render_height: Some(8),
        ..RunSettings::default()
    };
    assert!(script.render(&fine, &geogen::RenderConfig::default(), None).is_ok());
}

/// Found by the hardening review: `Print` output was held in memory until the run ended (1.96 GB
/// for 33 MB printed). Streamed messages reach the sink as they are printed, in order, and
/// nothing is kept; messages before a runtime error are delivered too.
#[test]
fn streamed_messages_arrive_as_printed_and_are_not_kept() {
    use std::sync::{Arc, Mutex};
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = Arc::clone(&seen);
    let settings = RunSettings {
        messages: geogen::MessageMode::stream(move |m| sink.lock().unwrap().push(m.to_string())),
        // Far too small to keep a hundred thousand messages: streaming holds none of them.
        limits: Limits { max_heap_bytes: 64 << 10, ..Limits::default() },
        ..RunSettings::default()
    };
    let source = "for (var i = 0; i < 100000; i++) { Print(\"line {0}\", i); }\nPrint(\"last\");\nvar x = 1 / 0;\n";
    let failure = run_err(source, &settings);
    assert_eq!(failure.first().code, codes::GGE2301);
    assert!(failure.messages.is_empty(), "streamed messages are not kept");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 100_001);
    assert_eq!(seen[7], "line 7");
    assert_eq!(seen.last().map(String::as_str), Some("last"));
    // Collected, the same messages pass the heap limit (GGE2508) and the ones kept so far survive.
    let settings =
        RunSettings { limits: Limits { max_heap_bytes: 64 << 10, ..Limits::default() }, ..RunSettings::default() };
    let failure = run_err(source, &settings);
    assert_eq!(failure.first().code, codes::GGE2508);
    assert!(failure.messages.len() > 100 && failure.messages[0] == "line 0", "{}", failure.messages.len());
}

/// An error about one argument of a call points at that argument, not at the call: a wrong type
/// (of a map operation and of a core function), a value out of range, a reversed pair (at its
/// first), a coordinate that cannot be resolved. Errors about the call itself keep the call.
#[test]
fn argument_errors_point_at_the_argument() {
    let at = |source: &str| {
        let f = run_err(source, &RunSettings::default());
        (f.first().code, f.first_location().map(|l| (l.line, l.column)))
    };
    let map = "var m = HeightMap.Flat(0);\n";
    assert_eq!(at(&format!("{map}m.Blur(   \"big\");")), (codes::GGE2101, Some((2, 11))));
    assert_eq!(at(&format!("{map}m.Blur(-5);")), (codes::GGE2309, Some((2, 8))));
    assert_eq!(at(&format!("{map}m.ClampHeights(0.5, -0.5);")), (codes::GGE2705, Some((2, 16))));
    assert_eq!(at(&format!("{map}m.Glaciate(0.5, 7);")), (codes::GGE2101, Some((2, 17))));
    assert_eq!(at("var x = Sqrt(\"four\");"), (codes::GGE2101, Some((1, 14))));
    // The call itself: too many arguments, an unknown method.
    assert_eq!(at(&format!("{map}m.Blur(1, 2);")), (codes::GGE2103, Some((2, 1))));
    assert_eq!(at(&format!("{map}m.Blurr(1);")), (codes::GGE2201, Some((2, 1))));
}

/// Found by the hardening review: invalid UTF-8 was a usage error without a position. It is a
/// script error (GGE1106) at the line and column of the first invalid byte, with a snippet.
#[test]
fn invalid_utf8_is_gge1106_at_the_first_bad_byte() {
    let bytes = b"var a = 1;\nvar b = \"caf\xe9\";\n";
    let failure = Script::compile_bytes("latin1.ggs", bytes, &options()).unwrap_err();
    assert_eq!(failure.first().code, codes::GGE1106);
    assert_eq!(failure.first_location().map(|l| (l.line, l.column)), Some((2, 13)));
    let text = failure.to_string();
    assert!(text.contains("latin1.ggs:2:13"), "{text}");
    assert!(text.contains("0xE9"), "{text}");
    assert!(text.contains("var b = \"caf"), "{text}");
    // A valid file compiles through the same entry point.
    assert!(Script::compile_bytes("ok.ggs", b"var a = 1;", &options()).is_ok());
}

#[test]
fn a_script_larger_than_the_limit_is_gge1107() {
    let small = CompileOptions { max_script_bytes: 16, ..options() };
    let failure = Script::compile("big.ggs", "var a = 1; var b = 2;", &small).unwrap_err();
    assert_eq!(failure.first().code, codes::GGE1107);
    assert!(failure.first().message.contains("16 bytes"), "{}", failure.first().message);
    assert_eq!(Script::compile_bytes("big.ggs", &[0xff; 17], &small).unwrap_err().first().code, codes::GGE1107);
    assert!(Script::compile("ok.ggs", "var a = 1;", &small).is_ok());
    // Reading stops after the limit plus one byte, whatever the file's length.
    let dir = std::env::temp_dir().join(format!("geogen-read-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("long.ggs");
    std::fs::write(&path, vec![b' '; 1000]).unwrap();
    assert_eq!(geogen::read_script(&path, 10).unwrap().len(), 11);
    assert_eq!(geogen::read_script(&path, 5000).unwrap().len(), 1000);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Found by the hardening review: 16 000 repeated bad tokens gave 16 000 diagnostics, each with
/// its 32 KB source line (28 s, 1.5 GB). At most 50 are kept, the rest counted.
#[test]
fn diagnostics_are_capped_per_file() {
    let source = "` ".repeat(16_000);
    let failure = Script::compile("junk.ggs", &source, &options()).unwrap_err();
    assert_eq!(failure.diagnostics.len(), geogen::diag::MAX_DIAGNOSTICS);
    assert_eq!(failure.diagnostics.total(), 16_000);
    let text = failure.to_string();
    assert!(text.len() < 50 * 1000, "{} bytes", text.len());
    assert!(text.ends_with("error: and 15950 more errors\n"), "{}", &text[text.len() - 200..]);
    // Compile errors are capped too.
    let failure = Script::compile("breaks.ggs", &"break;\n".repeat(1000), &options()).unwrap_err();
    assert_eq!(failure.diagnostics.len(), geogen::diag::MAX_DIAGNOSTICS);
    assert_eq!(failure.diagnostics.total(), 1000);
}

/// Found by the hardening review: language.md §9 said changes made after a `yield` count. They do
/// not, as in the original's rendering sequence: a yield takes the map as it is at that point.
/// Pinned here (and the docs now say so).
#[test]
fn a_yield_takes_the_map_as_it_is_at_the_yield() {
    let script = compile(
        "var m = HeightMap.Flat(0.25);\nyield m;\nm.Add(0.5);\nyield m as \"raised\";\nm.Add(0.25);\nyield HeightMap.Clone(m) as \"copy\";\n",
    );
    let settings = RunSettings { render_width: Some(8), render_height: Some(4), ..RunSettings::default() };
    let rendered = script.render(&settings, &geogen::RenderConfig::default(), None).expect("renders");
    let all = |name: &str, value: f32| {
        let data = rendered.maps[name].data();
        assert_eq!(data.len(), 32, "{name}");
        assert!(data.iter().all(|&h| h == value), "{name}: {:?}", &data[..4]);
    };
    all("main", 0.25);
    all("raised", 0.75);
    all("copy", 1.0);
}
