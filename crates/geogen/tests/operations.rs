//! Tests derived from the one list of declared operations (`geogen_stdlib::operation::all()`), so
//! an operation cannot be added without them:
//!
//! * `signature/<op>`: the declaration is consistent (required parameters first, indexes valid,
//!   examples and a summary present);
//! * `example/<op>/<n>`: every worked example renders the hand-computed heights (the numeric test
//!   of the operation's documented behaviour);
//! * `arguments/<op>`: a call with valid arguments records its steps, and every check the
//!   signature declares fires with its code: too few or too many arguments (GGE2103), a wrong type
//!   for each parameter (GGE2101), a value outside each ranged parameter (GGE2303, GGE2309,
//!   GGE2714, ...), each reversed ordered pair (GGE2705); each error points at the call's line;
//! * `step-name/<op>`: the rendering step its examples record carries the declared name
//!   (`HeightMap.Blur` for `map.Blur`), so the pixel side's name cannot drift from the script's;
//! * `coverage/golden/<op>`: a golden render case exists for it (`tests/golden/<op>*.ggs`);
//! * `coverage/fuzz-dictionary`: the fuzz dictionary knows every operation name;
//! * `docs/reference`: `docs/library.md` holds the generated reference tables.

use std::path::Path;

use geogen::{CompileOptions, RenderConfig, RunSettings, Script};
use geogen_stdlib::operation::{self, range_code, Check, Entry, Kind, Owner, Receiver, Signature};
use libtest_mimic::{Arguments, Failed, Trial};

/// Default settings with the input maps the examples read (`HeightMap.Input("sketch")`).
fn inputs() -> RunSettings {
    RunSettings { inputs: geogen_stdlib::generators::example_inputs(), ..RunSettings::default() }
}

fn compile(source: &str) -> Result<Script, String> {
    Script::compile("operation.ggs", source, &CompileOptions::default()).map_err(|f| f.to_string())
}

/// The file-name stem of an operation: `distance_map`, `profile_flat`.
pub fn snake_name(sig: &Signature) -> String {
    let mut out = String::new();
    if sig.owner == Owner::HeightProfile {
        out.push_str("profile_");
    }
    for (i, c) in sig.name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The operations that are compositions of others, so record only steps of other names: the
/// noises a `NoiseLayer` step per wavelength, `ConvexityMap` a blur, an inversion and an add.
const RECORDED_UNDER_ANOTHER_NAME: &[&str] =
    &["HeightMap.ConvexityMap", "HeightMap.Noise", "HeightMap.RidgedNoise", "HeightProfile.Noise"];

/// Whether an example of `sig` records a step named as it is declared.
fn check_step_name(sig: &'static Signature) -> Result<(), Failed> {
    let name = sig.qualified_name();
    let mut seen = std::collections::BTreeSet::new();
    for example in sig.examples {
        let script = compile(example.script)?;
        let settings =
            RunSettings { render_width: Some(example.size.0), render_height: Some(example.size.1), ..inputs() };
        let simulation = script.simulate(&settings).map_err(|f| f.to_string())?;
        for step in simulation.sequence.steps() {
            if step.op.name() == name {
                return Ok(());
            }
            seen.insert(step.op.name().to_string());
        }
    }
    Err(format!("no example of {name} records a step named {name}; the steps: {seen:?}").into())
}

fn check_example(sig: &'static Signature, index: usize) -> Result<(), Failed> {
    let example = &sig.examples[index];
    let script = compile(example.script)?;
    let settings = RunSettings { render_width: Some(example.size.0), render_height: Some(example.size.1), ..inputs() };
    let rendered = script.render(&settings, &RenderConfig::default(), None).map_err(|f| f.to_string())?;
    let map = rendered.maps.get("main").ok_or("the example yields no main map")?;
    let mut wrong = Vec::new();
    for &(x, y, expected) in example.expect {
        match map.get(x, y) {
            Some(v) if (v - expected).abs() <= 1e-6 => {}
            Some(v) => wrong.push(format!("({x}, {y}) is {v}, expected {expected}")),
            None => wrong.push(format!("({x}, {y}) is outside the render")),
        }
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n{}", example.script, wrong.join("\n")).into())
    }
}

/// A valid argument of this kind as script text. Numbers differ by position so that ordered pairs
/// are in order and a 2×2 matrix is invertible.
fn valid_argument(kind: Kind, index: usize) -> String {
    let step = index as f64;
    match kind {
        Kind::Number | Kind::NumberOr(_) => format!("{}", 0.5 + 0.25 * step),
        Kind::Height | Kind::HeightOr(_) => format!("{}", (-0.5 + 0.25 * step).min(1.0)),
        Kind::Size => format!("{}", 2.0 + step),
        Kind::Range { min, max, .. } => format!("{}", (min + (max - min) * 0.1 * (1.0 + step / 10.0)).min(max)),
        Kind::Seed => "7".to_string(),
        Kind::Boolean => "true".to_string(),
        Kind::Point => format!("[{}, {}]", 1 + index, 2 + index),
        Kind::Coordinate(_) => format!("{}", 3 + 2 * index),
        Kind::Direction => "Direction.Vertical".to_string(),
        Kind::Object(Owner::HeightMap) => "HeightMap.Flat(0.25)".to_string(),
        Kind::Object(Owner::HeightProfile) => "HeightProfile.Flat(0.25)".to_string(),
        Kind::NoiseLayers => "{8: 0.5, 2: 0.25}".to_string(),
        Kind::ProfilePoints(_) => "{0: -0.5, 10: 0.5}".to_string(),
        Kind::Text => "\"sketch\"".to_string(),
        Kind::HeightSlang => "\"(+ 0.25 ([2 Noise] x y))\"".to_string(),
        Kind::Choice { items, .. } => format!("\"{}\"", items.last().copied().unwrap_or_default()),
    }
}

/// A value of this kind outside its checked range, if it has one.
fn out_of_range(kind: Kind) -> Option<String> {
    match kind {
        Kind::Height | Kind::HeightOr(_) => Some("1.5".to_string()),
        Kind::Size => Some("-1".to_string()),
        Kind::Range { min, .. } => Some(format!("{}", min - 1.0)),
        Kind::Choice { .. } => Some("\"none of them\"".to_string()),
        _ => None,
    }
}

/// A script that calls the operation with these argument texts on line 2.
fn call_script(sig: &Signature, args: &[String]) -> String {
    let receiver = match (sig.receiver, sig.owner) {
        (Receiver::Static, owner) => owner.type_name().to_string(),
        (Receiver::Method, Owner::HeightMap) => "HeightMap.Flat(0.1)".to_string(),
        (Receiver::Method, Owner::HeightProfile) => "HeightProfile.Flat(0.1)".to_string(),
    };
    format!("var unused = 0;\nvar result = {receiver}.{}({});\nyield HeightMap.Flat(0);\n", sig.name, args.join(", "))
}

fn expect_error(sig: &Signature, args: &[String], code: &str, what: &str) -> Result<(), String> {
    let source = call_script(sig, args);
    let script = compile(&source)?;
    match script.simulate(&RunSettings { render_width: Some(8), render_height: Some(8), ..inputs() }) {
        Ok(_) => Err(format!("{what}: the call succeeded, expected {code}\n{source}")),
        Err(failure) => {
            let first = failure.first();
            if first.code.to_string() != code {
                return Err(format!("{what}: got {} ({}), expected {code}\n{source}", first.code, first.message));
            }
            match failure.first_location() {
                Some(at) if at.line == 2 => Ok(()),
                other => Err(format!("{what}: {code} points at {other:?}, not at the call on line 2\n{source}")),
            }
        }
    }
}

fn check_arguments(sig: &'static Signature) -> Result<(), Failed> {
    let valid: Vec<String> = sig.params.iter().enumerate().map(|(i, p)| valid_argument(p.tested_kind(), i)).collect();
    let source = call_script(sig, &valid);
    let script = compile(&source)?;
    let settings = RunSettings { render_width: Some(8), render_height: Some(8), ..inputs() };
    let simulation = script.simulate(&settings).map_err(|f| format!("valid arguments fail:\n{source}\n{f}"))?;
    if simulation.sequence.is_empty() {
        return Err(format!("valid arguments recorded no step:\n{source}").into());
    }
    script
        .render(&settings, &RenderConfig::default(), None)
        .map_err(|f| format!("valid call does not render:\n{f}"))?;

    let mut problems = Vec::new();
    let mut record = |r: Result<(), String>| {
        if let Err(e) = r {
            problems.push(e);
        }
    };
    let (min, max) = (sig.min_args(), sig.max_args());
    if min > 0 {
        record(expect_error(sig, &valid[..min - 1], "GGE2103", "one argument too few"));
    }
    let mut too_many = valid.clone();
    too_many.push("1".to_string());
    record(expect_error(sig, &too_many[..max + 1], "GGE2103", "one argument too many"));
    for (i, param) in sig.params.iter().enumerate() {
        let mut args = valid.clone();
        // A value of another type: a String, or a Number where a String is expected.
        let (wrong, what) =
            if param.kind.type_name() == "String" { ("1", "a Number") } else { ("\"text\"", "a String") };
        args[i] = wrong.to_string();
        record(expect_error(sig, &args, "GGE2101", &format!("{what} for {}", param.name)));
        if let (Some(bad), Some(code)) = (out_of_range(param.kind), range_code(param.kind)) {
            let mut args = valid.clone();
            args[i] = bad;
            record(expect_error(sig, &args, &code.to_string(), &format!("{} out of range", param.name)));
        }
    }
    for check in sig.checks {
        let Check::Ordered(a, b) = *check;
        let mut args = valid.clone();
        args.swap(a, b);
        record(expect_error(sig, &args, "GGE2705", &format!("{} above {}", sig.params[a].name, sig.params[b].name)));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n\n").into())
    }
}

fn golden_cases() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(".ggs")).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn main() {
    let args = Arguments::from_args();
    let entries: Vec<&'static Entry> = operation::all().collect();
    let goldens = golden_cases();
    let mut trials = Vec::new();
    for entry in &entries {
        let sig = entry.signature;
        let name = sig.qualified_name();
        trials.push(Trial::test(format!("signature/{name}"), move || sig.validate().map_err(Failed::from)));
        for i in 0..sig.examples.len() {
            trials.push(Trial::test(format!("example/{name}/{}", i + 1), move || check_example(sig, i)));
        }
        trials.push(Trial::test(format!("arguments/{name}"), move || check_arguments(sig)));
        if !RECORDED_UNDER_ANOTHER_NAME.contains(&name.as_str()) {
            trials.push(Trial::test(format!("step-name/{name}"), move || check_step_name(sig)));
        }
        let stem = snake_name(sig);
        let has_golden = goldens.iter().any(|g| g == &stem || g.starts_with(&format!("{stem}_")));
        trials.push(Trial::test(format!("coverage/golden/{name}"), move || {
            if has_golden {
                Ok(())
            } else {
                Err(format!("no golden render case: add crates/geogen/tests/golden/{stem}.ggs").into())
            }
        }));
    }
    let names: Vec<String> = entries.iter().map(|e| e.signature.name.to_string()).collect();
    trials.push(Trial::test("coverage/fuzz-dictionary", move || {
        let dict = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/ggs.dict"))
            .map_err(|e| format!("cannot read fuzz/ggs.dict: {e}"))?;
        let missing: Vec<&String> = names.iter().filter(|n| !dict.contains(&format!("\"{n}\""))).collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!("fuzz/ggs.dict lacks {missing:?}").into())
        }
    }));
    trials.push(Trial::test("docs/reference", || {
        let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/library.md"))
            .map_err(|e| format!("cannot read docs/library.md: {e}"))?;
        if doc.contains(&operation::reference_markdown()) {
            Ok(())
        } else {
            Err("docs/library.md is out of date: regenerate its reference tables with \
                 `cargo run -p geogen-stdlib --example library_reference` and paste them between the markers"
                .into())
        }
    }));
    trials.push(Trial::test("meta/operation_count", move || {
        if entries.len() >= 10 {
            Ok(())
        } else {
            Err(format!("only {} operations are declared", entries.len()).into())
        }
    }));
    libtest_mimic::run(&args, trials).exit();
}
