//! The data-driven conformance suite: every `tests/conformance/<family>/*.ggs` file is one test.
//!
//! The header format is documented in `tests/conformance/README.md`. In short, comment lines at the
//! very top of a file carry directives:
//!
//! ```text
//! // expect: ok                  (default) compile and run succeed; the script checks itself
//! // expect-error: GGE2202       compile or run fails with this code as the first diagnostic
//! // expect-line: 7              ... on this 1-based line of the file
//! // expect-output: <text>       (repeatable) the exact Print messages, in order
//! // seed: 5                     the run's seed (default 0)
//! // param: Name=Value           (repeatable) a script parameter set by the harness
//! // map-size: 400x300           map_width x map_height
//! // budget: 100000              the instruction budget (default: the library default)
//! // heap: 1000000               the script heap limit in bytes (default: the library default)
//! // main-map: required          compile with the mandatory main map (GGE1312 / GGE2801)
//! ```
//!
//! Every script is compiled with the test library (`AssertEquals`) and, unless `main-map: required`,
//! without the mandatory main map.

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use geogen::diag::{ErrorCode, RenderOptions};
use geogen::{CompileOptions, Failure, RunSettings, Script};
use libtest_mimic::{Arguments, Failed, Trial};

/// Fewer cases than this means the directory walk is broken.
const MIN_CASES: usize = 400;
/// A case that takes longer than this is reported as hanging (the thread is abandoned).
const TIMEOUT: Duration = Duration::from_secs(60);
/// The stack of the thread running a case: the size of a typical main thread.
const STACK_SIZE: usize = 8 * 1024 * 1024;

#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Ok,
    Error(ErrorCode),
}

#[derive(Clone, Debug)]
struct Case {
    name: String,
    path: PathBuf,
    source: String,
    expect: Outcome,
    line: Option<u32>,
    output: Option<Vec<String>>,
    seed: u32,
    params: Vec<(String, String)>,
    map_size: Option<(u32, u32)>,
    budget: Option<u64>,
    heap: Option<u64>,
    main_map_mandatory: bool,
}

fn conformance_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance")
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "ggs") {
            out.push(path);
        }
    }
}

/// Parses the header directives of one case.
fn parse_case(name: String, path: PathBuf, source: String) -> Result<Case, String> {
    let mut case = Case {
        name,
        path,
        source: source.clone(),
        expect: Outcome::Ok,
        line: None,
        output: None,
        seed: 0,
        params: Vec::new(),
        map_size: None,
        budget: None,
        heap: None,
        main_map_mandatory: false,
    };
    let mut saw_expect = false;
    for (index, raw) in source.lines().enumerate() {
        let line_no = index + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let Some(comment) = line.strip_prefix("//") else { break };
        let comment = comment.strip_prefix(' ').unwrap_or(comment);
        let Some((key, value)) = comment.split_once(':') else { continue };
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
            continue; // a free-form comment
        }
        let value_exact = value.strip_prefix(' ').unwrap_or(value);
        let value = value.trim();
        let bad = |what: &str| format!("line {line_no}: bad `{key}` directive ({what}): {line:?}");
        match key {
            "expect" => {
                if value != "ok" {
                    return Err(bad("only `ok` is allowed; use expect-error for errors"));
                }
                if saw_expect {
                    return Err(bad("a second expectation"));
                }
                saw_expect = true;
            }
            "expect-error" => {
                if saw_expect {
                    return Err(bad("a second expectation"));
                }
                saw_expect = true;
                let code = ErrorCode::parse(value).ok_or_else(|| bad("unknown GGE code"))?;
                case.expect = Outcome::Error(code);
            }
            "expect-line" => case.line = Some(value.parse().map_err(|_| bad("not a line number"))?),
            "expect-output" => case.output.get_or_insert_with(Vec::new).push(value_exact.to_string()),
            "seed" => case.seed = value.parse().map_err(|_| bad("not a u32"))?,
            "param" => {
                let (n, v) = value.split_once('=').ok_or_else(|| bad("expected Name=Value"))?;
                case.params.push((n.trim().to_string(), v.trim().to_string()));
            }
            "map-size" => {
                let (w, h) = value.split_once('x').ok_or_else(|| bad("expected WxH"))?;
                let w = w.trim().parse().map_err(|_| bad("bad width"))?;
                let h = h.trim().parse().map_err(|_| bad("bad height"))?;
                case.map_size = Some((w, h));
            }
            "budget" => case.budget = Some(value.parse().map_err(|_| bad("not a u64"))?),
            "heap" => case.heap = Some(value.parse().map_err(|_| bad("not a u64"))?),
            "main-map" => match value {
                "required" => case.main_map_mandatory = true,
                "optional" => case.main_map_mandatory = false,
                _ => return Err(bad("expected `required` or `optional`")),
            },
            _ => return Err(bad("unknown directive")),
        }
    }
    if case.line.is_some() && case.expect == Outcome::Ok {
        return Err("`expect-line` needs `expect-error`".to_string());
    }
    Ok(case)
}

fn describe_failure(failure: &Failure) -> String {
    let first = failure.diagnostics.first();
    let location = first
        .and_then(|d| d.span)
        .map(|s| format!(" at line {}", failure.source.line_col(s.start)))
        .unwrap_or_default();
    let code = first.map(|d| d.code.to_string()).unwrap_or_else(|| "<no diagnostic>".to_string());
    format!(
        "error {code}{location}\n--- rendered diagnostics ---\n{}\n--- messages before the error ---\n{:#?}",
        failure.render(RenderOptions::default()),
        failure.messages
    )
}

fn expected_text(case: &Case) -> String {
    let mut s = match &case.expect {
        Outcome::Ok => "success".to_string(),
        Outcome::Error(code) => format!("error {code}"),
    };
    if let Some(line) = case.line {
        s.push_str(&format!(" at line {line}"));
    }
    if let Some(out) = &case.output {
        s.push_str(&format!(", output {out:#?}"));
    }
    s
}

/// Compiles and runs one case and checks its expectations.
fn check(case: &Case) -> Result<(), String> {
    let options =
        CompileOptions { test_library: true, main_map_mandatory: case.main_map_mandatory, ..CompileOptions::default() };
    let mut settings = RunSettings { seed: case.seed, parameters: case.params.clone(), ..RunSettings::default() };
    if let Some((w, h)) = case.map_size {
        settings.map_width = Some(w);
        settings.map_height = Some(h);
    }
    if let Some(budget) = case.budget {
        settings.limits.instruction_budget = budget;
    }
    if let Some(heap) = case.heap {
        settings.limits.max_heap_bytes = heap;
    }
    let result = Script::compile(&case.name, &case.source, &options).and_then(|script| script.run(&settings));
    let header = format!("{}\nexpected: {}\n", case.path.display(), expected_text(case));
    match (&case.expect, result) {
        (Outcome::Ok, Ok(output)) => check_output(case, &output.messages, &header),
        (Outcome::Ok, Err(failure)) => Err(format!("{header}actual: {}", describe_failure(&failure))),
        (Outcome::Error(_), Ok(output)) => Err(format!("{header}actual: success, messages {:#?}", output.messages)),
        (Outcome::Error(code), Err(failure)) => {
            let Some(first) = failure.diagnostics.first() else {
                return Err(format!("{header}actual: a failure without diagnostics"));
            };
            if first.code != *code {
                return Err(format!("{header}actual: {}", describe_failure(&failure)));
            }
            if let Some(line) = case.line {
                let actual = first.span.map(|s| failure.source.line_col(s.start).line);
                if actual != Some(line) {
                    let actual = actual.map_or("no span".to_string(), |l| format!("line {l}"));
                    return Err(format!(
                        "{header}actual: the right code but at {actual}\n{}",
                        describe_failure(&failure)
                    ));
                }
            }
            check_output(case, &failure.messages, &header)
        }
    }
}

fn check_output(case: &Case, messages: &[String], header: &str) -> Result<(), String> {
    match &case.output {
        Some(expected) if expected.as_slice() != messages => {
            Err(format!("{header}actual: messages {messages:#?}\nexpected messages: {expected:#?}"))
        }
        _ => Ok(()),
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic payload>".to_string()
    }
}

/// Runs a case on its own thread, turning panics and hangs into failures.
fn run_case(case: Case) -> Result<(), Failed> {
    let (tx, rx) = mpsc::channel();
    let path = case.path.display().to_string();
    let expected = expected_text(&case);
    std::thread::Builder::new()
        .name(case.name.clone())
        .stack_size(STACK_SIZE)
        .spawn(move || {
            let result = panic::catch_unwind(AssertUnwindSafe(|| check(&case)));
            let _ = tx.send(result.map_err(|p| panic_text(&*p)));
        })
        .map_err(|e| Failed::from(format!("{path}: cannot spawn a thread: {e}")))?;
    match rx.recv_timeout(TIMEOUT) {
        Ok(Ok(Ok(()))) => Ok(()),
        Ok(Ok(Err(message))) => Err(message.into()),
        Ok(Err(panic)) => Err(format!("{path}\nexpected: {expected}\nactual: PANIC: {panic}").into()),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            Err(format!("{path}\nexpected: {expected}\nactual: no result within {TIMEOUT:?} (hang?)").into())
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Err(format!("{path}\nexpected: {expected}\nactual: the case thread died").into())
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let root = conformance_dir();
    let mut files = Vec::new();
    collect_files(&root, &mut files);

    let mut trials = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(&root).unwrap_or(path);
        let name = rel.with_extension("").to_string_lossy().replace('\\', "/");
        let path = path.clone();
        let parsed = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))
            .and_then(|source| parse_case(name.clone(), path.clone(), source))
            .map_err(|e| format!("{}: {e}", path.display()));
        trials.push(Trial::test(name, move || match parsed {
            Ok(case) => run_case(case),
            Err(message) => Err(message.into()),
        }));
    }

    let count = files.len();
    trials.push(Trial::test("meta/case_count", move || {
        if count < MIN_CASES {
            Err(format!(
                "only {count} conformance cases found under {} (expected at least {MIN_CASES})",
                root.display()
            )
            .into())
        } else {
            Ok(())
        }
    }));

    // Keep the panic hook quiet: panics are reported in the failure message of their case.
    panic::set_hook(Box::new(|_| {}));

    let conclusion = libtest_mimic::run(&args, trials);
    if count < MIN_CASES && !args.list {
        eprintln!("conformance: only {count} cases found (expected at least {MIN_CASES})");
        std::process::exit(101);
    }
    conclusion.exit();
}
