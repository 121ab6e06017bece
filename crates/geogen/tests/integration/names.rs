//! Lodestone with geogen's code evaluator (embedded code as GeoGen Script expressions) and the
//! `Names` script API: values, references, one-time variables, helpers, hostile code, labels.

use std::sync::Arc;

use geogen::diag::{codes, ErrorCode, SourceFile};
use geogen::names::{self as lodestone, EnumerationLimits, Limits, Mode, RuleSet, ScriptCode, Value};
use geogen::{CompileOptions, RunSettings, Script};
use proptest::prelude::*;

fn rules(text: &str) -> RuleSet {
    lodestone::parse(Arc::new(SourceFile::new("t.lds", text)), Mode::Extended)
        .unwrap_or_else(|d| panic!("{text:?}: {:?}", d.as_slice()))
}

fn run_with(text: &str, start: &str, seed: u32, vars: &[(&str, Value)]) -> Result<String, (ErrorCode, String)> {
    let set = rules(text);
    let vars: Vec<(String, Value)> = vars.iter().map(|(n, v)| (n.to_string(), v.clone())).collect();
    lodestone::generate(&set, start, seed, &Limits::default(), &mut ScriptCode::default(), &vars)
        .map(|g| g.text)
        .map_err(|d| (d.code, d.message))
}

fn run(text: &str) -> String {
    run_with(text, "<a>", 0, &[]).unwrap_or_else(|e| panic!("{text:?}: {e:?}"))
}

fn fails(text: &str) -> (ErrorCode, String) {
    run_with(text, "<a>", 0, &[]).expect_err(text)
}

fn support(text: &str, vars: &[(&str, Value)]) -> Vec<(String, String)> {
    let set = rules(text);
    let vars: Vec<(String, Value)> = vars.iter().map(|(n, v)| (n.to_string(), v.clone())).collect();
    lodestone::enumerate(
        &set,
        "<a>",
        &Limits::default(),
        &EnumerationLimits::default(),
        &mut ScriptCode::default(),
        &vars,
    )
    .unwrap_or_else(|d| panic!("{text:?}: {d:?}"))
    .into_iter()
    .map(|o| (o.text, o.fraction.map(|f| f.to_string()).unwrap_or_default()))
    .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[test]
fn code_values_become_text_as_javascript_wrote_them() {
    assert_eq!(run("<a> => `1 + 2`;"), "3");
    assert_eq!(run("<a> => `0.1 + 0.2`;"), "0.30000000000000004");
    assert_eq!(run("<a> => `\"a\" + 1`;"), "a1");
    assert_eq!(run("<a> => `2 > 1`;"), "true");
    assert_eq!(run("<a> => [`hide(1)`]`hide(1)`;"), "");
    assert_eq!(run("<a> => `Math.floor(2.7) + Math.max(1, 5) + Utils.randInt(1)`;"), "7");
    assert_eq!(run("<a> => `Floor(PI * 100)`;"), "314");
    // Raw code: `<`, `'`, `;` and `|` are code, not rules.
    assert_eq!(run("<a> => `1 < 2 && 3 > 2 ? \"a;b|c'd\" : \"no\"`;"), "a;b|c'd");
}

#[test]
fn references_in_code_are_expanded_first() {
    assert_eq!(support("<a> => `<n> * 10`;\n<n> => 3 | 4;", &[]), pairs(&[("30", "1/2"), ("40", "1/2")]));
    // Weights computed by code.
    assert_eq!(support("<a> => x [`1 + 2`] | y;", &[]), pairs(&[("x", "3/4"), ("y", "1/4")]));
    // The blog's example: almost always the second choice.
    assert_eq!(
        support("<$pi> => `Math.PI`;\n<a> => <first> [1] | <second> [`99+99`];\n<first> => I am surprised;\n<second> => pi is <$pi>;", &[]),
        pairs(&[("pi is 3.141592653589793", "198/199"), ("I am surprised", "1/199")])
    );
}

#[test]
fn one_time_values_are_variables_inside_code() {
    // Set from inside one one-time rule, read by later code, as the compass rules do.
    assert_eq!(run("<a> => <$setup><@n> and `<@n> * 2`;\n<$setup> => `hide(<@n> = 3)`;"), "3 and 6");
    assert_eq!(run("<a> => `<@c> + \"!\"`;\n<$c> => red;"), "red!");
    // Unset is null.
    assert_eq!(run("<a> => `<@none> == null`;"), "true");
    // Arrays cannot be one-time values.
    assert_eq!(fails("<a> => `hide(<@x> = {1, 2})`;").0, codes::GGE7308);
}

#[test]
fn variables_from_outside_are_readable_and_steer_weights() {
    let text = "<a> => x [`height > 0.5 ? 3 : 1`] | y;";
    assert_eq!(support(text, &[("height", Value::Number(0.8))]), pairs(&[("x", "3/4"), ("y", "1/4")]));
    assert_eq!(support(text, &[("height", Value::Number(0.2))]), pairs(&[("x", "1/2"), ("y", "1/2")]));
    // A write changes a copy: the next piece of code sees the value passed in.
    assert_eq!(
        run_with("<a> => `kind = \"x\"`/`kind`;", "<a>", 0, &[("kind", Value::Text("river".into()))]).unwrap(),
        "x/river"
    );
    assert!(lodestone::check_variable_name("height").is_ok());
    for bad in ["", "1x", "a-b", "PI", "rand", "var", "Names", "__x"] {
        assert!(lodestone::check_variable_name(bad).is_err(), "{bad}");
    }
}

#[test]
fn helpers_draw_from_the_seeded_generator() {
    let text = "<a> => `randIntRange(1, 3)`;";
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..200 {
        let value = run_with(text, "<a>", seed, &[]).unwrap();
        assert_eq!(value, run_with(text, "<a>", seed, &[]).unwrap(), "same seed, same value");
        seen.insert(value);
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), ["1", "2", "3"], "inclusive at both ends");
    for seed in 0..50 {
        let v: f64 = run_with("<a> => `rand(2, 5)`;", "<a>", seed, &[]).unwrap().parse().unwrap();
        assert!((2.0..5.0).contains(&v), "{v}");
        let e = run_with("<a> => `randElement({\"p\", \"q\"})`;", "<a>", seed, &[]).unwrap();
        assert!(e == "p" || e == "q");
        let i: f64 = run_with("<a> => `randInt(4)`;", "<a>", seed, &[]).unwrap().parse().unwrap();
        assert!((0.0..4.0).contains(&i) && i.fract() == 0.0);
    }
    assert_eq!(fails("<a> => `rand(5, 1)`;").0, codes::GGE7307);
    assert_eq!(fails("<a> => `randInt(0)`;").0, codes::GGE7307);
    // Code that draws cannot be enumerated.
    let set = rules("<a> => `rand()`;");
    let error = lodestone::enumerate(
        &set,
        "<a>",
        &Limits::default(),
        &EnumerationLimits::default(),
        &mut ScriptCode::default(),
        &[],
    )
    .unwrap_err();
    assert_eq!(error.code, codes::GGE7309);
}

#[test]
fn hostile_code_ends_with_an_error() {
    let cases = [
        // Not one expression: statements smuggled in.
        "<a> => `1); Print(\"x\"); (2`;",
        "<a> => `1); function f() { return 1; } (2`;",
        "<a> => `1 2`;",
        "<a> => `var x = 1`;",
        // Unbounded work and memory.
        "<a> => `Array.Repeat(1, 1000000000).Count()`;",
        // No maps, no names, no messages.
        "<a> => `HeightMap.Flat(0)`;",
        "<a> => `Names.Generate(\"x\")`;",
        "<a> => `Print(\"hello\")`;",
        "<a> => `Random()`;",
        // Errors of the language.
        "<a> => `1 / 0`;",
        "<a> => `nope`;",
        "<a> => `{1, 2}`;",
        "<a> => `/* unclosed`;",
    ];
    for text in cases {
        let (code, message) = fails(text);
        assert!(code == codes::GGE7307 || code == codes::GGE7308, "{text}: {code} {message}");
    }
    // Nesting in code: parser limit, not a stack overflow.
    let deep = format!("<a> => `{}1{}`;", "(".repeat(5000), ")".repeat(5000));
    assert_eq!(fails(&deep).0, codes::GGE7307);
    // Code that refers to its own rule: the depth limit.
    assert_eq!(fails("<a> => `<a>`;").0, codes::GGE7302);
    // Weights that refer to their own rule.
    assert_eq!(fails("<a> => x [<a>] | y;").0, codes::GGE7302);
    // Computed weights that are not numbers, negative, or all zero.
    assert_eq!(fails("<a> => x [`\"many\"`] | y;").0, codes::GGE7304);
    assert_eq!(fails("<a> => x [`-1`] | y;").0, codes::GGE7304);
    assert_eq!(fails("<a> => x [`0`] | y [`0`];").0, codes::GGE7305);
}

const SCRIPT: &str = r#"
metadata { Width: Finite, Height: Finite }
var realm = Names.FromText("<title> => Kingdom of <$realm>;\n<$realm> => Ar | Bel | Cor | Dun;\n<bay> => Bay of <$realm> | <$realm> Sound;\n");
var title = Names.Generate(realm, "<title>");
Names.PlaceLabel(@[0.5, 0.1], title, "title");
for (var i = 0; i < 4; i++) {
    Names.PlaceLabel([10 * i, 20], Names.Generate(realm, "bay"), "bay");
}
Print(Names.Generate(Names.Load("rivers"), null, {"width": 12}));
yield HeightMap.Flat(0);
"#;

fn script_run(seed: u32, rules: Vec<(String, Arc<str>)>) -> Result<geogen::RunOutput, geogen::Failure> {
    let script = Script::compile("t.ggs", SCRIPT, &CompileOptions::default()).unwrap();
    let settings = RunSettings { seed, rules, map_width: Some(100), map_height: Some(100), ..RunSettings::default() };
    script.run(&settings)
}

fn rivers() -> Vec<(String, Arc<str>)> {
    vec![("rivers".to_string(), Arc::from("<river> => River `width > 10 ? \"Wide\" : \"Narrow\"`;"))]
}

#[test]
fn scripts_generate_names_and_place_labels() {
    let output = script_run(3, rivers()).unwrap();
    assert_eq!(output.messages, ["River Wide"]);
    assert_eq!(output.labels.len(), 5);
    let title = &output.labels[0];
    assert_eq!((title.x, title.y, title.kind.as_str()), (50.0, 10.0, "title"));
    let realm = title.text.strip_prefix("Kingdom of ").expect(&title.text);
    // One realm per run: every bay names it.
    for bay in &output.labels[1..] {
        assert!(bay.text.contains(realm), "{} / {}", bay.text, realm);
        assert_eq!(bay.kind, "bay");
    }
    assert_eq!((output.labels[2].x, output.labels[2].y), (10.0, 20.0));
    // The same seed gives the same labels; the seed decides the realm.
    assert_eq!(script_run(3, rivers()).unwrap().labels, output.labels);
    let realms: std::collections::BTreeSet<String> =
        (0..20).map(|seed| script_run(seed, rivers()).unwrap().labels[0].text.clone()).collect();
    assert!(realms.len() > 1, "{realms:?}");
}

#[test]
fn script_names_report_their_errors() {
    let failure = script_run(3, Vec::new()).unwrap_err();
    assert_eq!(failure.first().code, codes::GGE7311);
    let bad = vec![("rivers".to_string(), Arc::from("<river> => ;"))];
    let failure = script_run(3, bad).unwrap_err();
    assert_eq!(failure.first().code, codes::GGE7202);
    assert!(failure.first().message.contains("line 1, column 1"), "{}", failure.first().message);
    let compile = |text: &str| Script::compile("t.ggs", text, &CompileOptions::default()).unwrap();
    let output =
        compile("Names.Generate(\"<a> => x;\", \"<b>\"); yield HeightMap.Flat(0);").run(&RunSettings::default());
    assert_eq!(output.unwrap_err().first().code, codes::GGE7312);
    let output = compile("Names.Generate(\"<a> => x;\", \"<a>\", {\"PI\": 1}); yield HeightMap.Flat(0);")
        .run(&RunSettings::default());
    assert_eq!(output.unwrap_err().first().code, codes::GGE7313);
    let output = compile("Names.PlaceLabel(@[0.5, 0.5], \"x\"); yield HeightMap.Flat(0);").run(&RunSettings::default());
    assert_eq!(output.unwrap_err().first().code, codes::GGE2704, "relative points need a finite map");
}

/// A script whose rules run code building arrays of 50 000 items, `calls` times per name.
fn costly_names(calls: usize, budget: u64) -> Result<geogen::RunOutput, geogen::Failure> {
    let code = "<c>".repeat(calls);
    let text = format!(
        "var rules = Names.FromText(\"<a> => {code};\\n<c> => `Array.Repeat(1, 50000).Count()`;\");\n\
         Print(Names.Generate(rules));\nyield HeightMap.Flat(0);"
    );
    let script = Script::compile("t.ggs", &text, &CompileOptions::default()).unwrap();
    let limits = geogen::Limits { instruction_budget: budget, ..geogen::Limits::default() };
    script.run(&RunSettings { limits, ..RunSettings::default() })
}

#[test]
fn embedded_code_is_charged_to_the_script_budget() {
    // One piece of code: about 50 000 units of work, within a budget of 100 000.
    assert_eq!(costly_names(1, 100_000).unwrap().messages, ["50000"]);
    // Four: about 200 000, more than the budget, although every piece stays within the limit
    // of one piece of code.
    let failure = costly_names(4, 100_000).unwrap_err();
    assert_eq!(failure.first().code, codes::GGE2505, "{:?}", failure.first());
    assert_eq!(costly_names(4, 1_000_000).unwrap().messages, ["50000500005000050000"]);
}

#[test]
fn a_script_cannot_hide_unbounded_work_in_its_names() {
    // Hundreds of pieces of code per name and many names: the budget stops the run at once
    // instead of after minutes of uncharged work.
    let text = "var rules = Names.FromText(\"<a> => <b><b><b><b><b><b><b><b><b><b>;\\n\
                <b> => <c><c><c><c><c><c><c><c><c><c>;\\n<c> => `Array.Repeat(1, 99999).Count()`;\");\n\
                for (var i = 0; i < 20; i++) { Names.Generate(rules); }\nyield HeightMap.Flat(0);";
    let script = Script::compile("t.ggs", text, &CompileOptions::default()).unwrap();
    let limits = geogen::Limits { instruction_budget: 100_000, ..geogen::Limits::default() };
    let started = std::time::Instant::now();
    let failure = script.run(&RunSettings { limits, ..RunSettings::default() }).unwrap_err();
    assert_eq!(failure.first().code, codes::GGE2505, "{:?}", failure.first());
    // About 100 000 units of work were done: a fraction of a second even in a debug build.
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
}

#[test]
fn each_piece_of_code_is_compiled_once() {
    let mut code = ScriptCode::default();
    // A computed weight met at every level of a recursion, until the step limit.
    let recursive = rules("<a> => x [1] | <a> [`1 + 1`];");
    let limits = Limits { max_steps: 300, ..Limits::default() };
    let error = lodestone::enumerate(&recursive, "<a>", &limits, &EnumerationLimits::default(), &mut code, &[]);
    assert_eq!(error.unwrap_err().code, codes::GGE7309);
    assert_eq!(code.compilations(), 1);
    // Many names.
    let batch = lodestone::Batch { seed: 1, count: 200, distinct: None };
    lodestone::names(&recursive, "<a>", batch, &Limits::default(), &mut code, &[]).unwrap();
    assert_eq!(code.compilations(), 1);
    // Code whose text depends on a choice: once per text it can have.
    let mut code = ScriptCode::default();
    let referring = rules("<a> => `<n> * 10`;\n<n> => 3 | 4;");
    let made = lodestone::names(&referring, "<a>", batch, &Limits::default(), &mut code, &[]).unwrap();
    assert!(made.names.iter().any(|n| n == "30") && made.names.iter().any(|n| n == "40"));
    assert_eq!(code.compilations(), 2);
}

/// Rule texts from the characters that matter to the lexer, with code fragments that a hostile
/// author might write.
fn rule_text() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "<a>",
        "<b>",
        "<$c>",
        "<@c>",
        " => ",
        "=>",
        " | ",
        "|",
        ";",
        ";\n",
        "\n",
        "\r\n",
        " ",
        "x",
        "'",
        "''",
        "[",
        "]",
        "[2]",
        "[0]",
        "[-1]",
        "`",
        "`1+1`",
        "`<@c> = 5`",
        "`rand()`",
        "`<a>`",
        "`Array.Repeat(1, 1e9)`",
        "`\"s\" + <b>`",
        "#",
        "\\",
        "\\'",
        "<",
        ">",
        "é",
        "<$c> => q | r;\n",
        "<a> => ",
        "<b> => y | <a>;\n",
    ]);
    prop::collection::vec(pieces, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Parsing, generating and enumerating any text ends without a panic, in bounded time.
    #[test]
    fn no_text_panics_the_parser_or_the_executor(text in rule_text(), strict in any::<bool>(), seed in any::<u32>()) {
        let mode = if strict { Mode::Strict } else { Mode::Extended };
        let file = Arc::new(SourceFile::new("p.lds", text));
        if let Ok(set) = lodestone::parse(file, mode) {
            let limits = Limits { max_work: 200_000, ..Limits::default() };
            let mut code = ScriptCode::new(Limits::default_code_limits_for_tests());
            for rule in set.rules().iter().take(3) {
                let _ = lodestone::generate(&set, &rule.name, seed, &limits, &mut code, &[]);
                let small = EnumerationLimits { max_outputs: 50, max_paths: 200, max_work: 200_000 };
                let _ = lodestone::enumerate(&set, &rule.name, &limits, &small, &mut code, &[]);
            }
        }
    }
}

/// Small code limits keep the property test fast.
trait TestLimits {
    fn default_code_limits_for_tests() -> geogen::Limits;
}

impl TestLimits for Limits {
    fn default_code_limits_for_tests() -> geogen::Limits {
        geogen::Limits { instruction_budget: 10_000, ..lodestone::default_code_limits() }
    }
}
