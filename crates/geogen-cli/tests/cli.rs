//! End-to-end tests of the `geogen` binary: output, JSON shapes and exit codes
//! (0 success, 1 script error, 2 usage error).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn geogen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_geogen")).args(args).env("NO_COLOR", "1").output().expect("the binary runs")
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("temp file");
    path
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn check_reports_every_syntax_error_with_code_line_and_caret() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(dir.path(), "bad.ggs", "var x = ;\nvar y = 1\nvar z = 2;\n");
    let o = geogen(&["check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("GGE1201"), "{err}");
    assert!(err.contains("bad.ggs:1:"), "{err}");
    assert!(err.contains("bad.ggs:2:") || err.contains("bad.ggs:3:"), "second error missing: {err}");
    assert!(err.contains('^'), "{err}");
}

#[test]
fn check_accepts_a_valid_script() {
    let dir = tempfile::tempdir().unwrap();
    let ok = write(dir.path(), "ok.ggs", "var x = 1;\nyield HeightMap.Flat(0);\n");
    let o = geogen(&["check", ok.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn test_json_is_one_array_with_an_object_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let pass = write(dir.path(), "pass.ggs", "Print(\"hi {0}\", 1 + 1);\nAssertEquals(4, 2 * 2);\n");
    let fail = write(dir.path(), "fail.ggs", "var x = 1;\n\nAssertEquals(3, x);\n");
    let o = geogen(&["test", "--json", pass.to_str().unwrap(), fail.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("exactly one JSON value");
    let files = v.as_array().expect("an array");
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["passed"], true);
    assert_eq!(files[0]["error"], serde_json::Value::Null);
    assert_eq!(files[0]["messages"][0], "hi 2");
    assert_eq!(files[1]["passed"], false);
    assert_eq!(files[1]["error"]["code"], "GGE9000");
    assert_eq!(files[1]["error"]["line"], 3);
    assert_eq!(files[1]["error"]["column"], 1);
    assert!(files[1]["file"].as_str().unwrap().ends_with("fail.ggs"));
}

#[test]
fn test_exits_zero_when_all_pass() {
    let dir = tempfile::tempdir().unwrap();
    let pass = write(dir.path(), "pass.ggs", "AssertEquals(\"ab\", \"a\" + \"b\");\n");
    let o = geogen(&["test", pass.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("1 passed, 0 failed"));
}

const PARAMS: &str = r#"
metadata {
  Name: "Params",
  Width: Finite, Height: Finite,
  Parameters: {
    Count: { Min: 1, Max: 10, Default: 3, Restriction: Integers },
    Snow: { Default: true }
  }
}
Print("count {0} snow {1} width {2}", Parameters.Count, Parameters.Snow, Parameters.MapWidth);
yield HeightMap.Flat(0);
"#;

#[test]
fn run_prints_messages_with_parameters_seed_and_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(dir.path(), "p.ggs", PARAMS);
    let s = script.to_str().unwrap();
    let o = geogen(&["run", s, "-p", "Count=7.9", "-p", "Snow=false", "--map-size", "300x200"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "count 7 snow false width 300\n");
    let o = geogen(&["run", s, "--size", "500", "--seed", "island"]);
    assert_eq!(stdout(&o), "count 3 snow true width 500\n", "{}", stderr(&o));
}

#[test]
fn run_rejects_unknown_parameters_and_bad_values() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(dir.path(), "p.ggs", PARAMS);
    let s = script.to_str().unwrap();
    let o = geogen(&["run", s, "-p", "Nope=1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("GGE4001"), "{}", stderr(&o));
    let o = geogen(&["run", s, "-p", "Count=many"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("GGE4002"), "{}", stderr(&o));
}

#[test]
fn usage_errors_exit_with_two() {
    let o = geogen(&["run"]);
    assert_eq!(o.status.code(), Some(2));
    let o = geogen(&["run", "/nonexistent/script.ggs"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read"), "{}", stderr(&o));
    let o = geogen(&["run", "x.ggs", "--size", "0x3"]);
    assert_eq!(o.status.code(), Some(2));
    let o = geogen(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn runtime_errors_keep_earlier_messages_and_point_at_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(
        dir.path(),
        "r.ggs",
        "Print(\"before\");\nfunction f(n) { return f(n + 1); }\nf(0);\nyield HeightMap.Flat(0);\n",
    );
    let o = geogen(&["run", script.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "before\n");
    assert!(stderr(&o).contains("GGE2501"), "{}", stderr(&o));
}

#[test]
fn info_describes_parameters_and_sizes_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(dir.path(), "p.ggs", PARAMS);
    let o = geogen(&["info", "--json", script.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["name"], "Params");
    assert_eq!(v["width"]["finite"], true);
    assert_eq!(v["parameters"][0]["name"], "Count");
    assert_eq!(v["parameters"][0]["type"], "Number");
    assert_eq!(v["parameters"][0]["default"], 3);
    assert_eq!(v["parameters"][0]["restriction"], "Integers");
    assert_eq!(v["parameters"][1]["type"], "Boolean");
    assert_eq!(v["maps"][0], "main");
    let text = geogen(&["info", script.to_str().unwrap()]);
    assert!(stdout(&text).contains("Count"), "{}", stdout(&text));
}
