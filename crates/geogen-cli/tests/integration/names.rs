//! `geogen names` and the labels of `geogen render`, end to end.

use std::path::Path;

use crate::common;
use common::{geogen, stderr, stdout, write};

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path).display().to_string()
}

#[test]
fn names_prints_n_names_and_the_first_ones_do_not_change() {
    let rivers = repo("examples/names/rivers.lds");
    let three = geogen(&["names", &rivers, "-n", "3", "--seed", "7"]);
    assert_eq!(three.status.code(), Some(0), "{}", stderr(&three));
    let ten = geogen(&["names", &rivers, "-n", "10", "--seed", "7"]);
    let three: Vec<String> = stdout(&three).lines().map(String::from).collect();
    let ten: Vec<String> = stdout(&ten).lines().map(String::from).collect();
    assert_eq!(three.len(), 3);
    assert_eq!(ten.len(), 10);
    assert_eq!(three, ten[..3]);
    let json = geogen(&["names", &rivers, "-n", "3", "--seed", "7", "--json"]);
    let parsed: Vec<String> = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(parsed, three);
    let other_seed = geogen(&["names", &rivers, "-n", "10", "--seed", "island"]);
    assert_ne!(stdout(&other_seed), ten.join("\n") + "\n");
}

#[test]
fn enumerate_lists_every_output_with_its_exact_probability() {
    let dir = tempfile::tempdir().unwrap();
    let rules = write(dir.path(), "r.lds", "<a> => <$c> <$c> [3] | plain;\r\n<$c> => red | blue;\r\n");
    let o = geogen(&["names", rules.to_str().unwrap(), "--enumerate", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let list: Vec<serde_json::Value> = serde_json::from_str(&stdout(&o)).unwrap();
    let got: Vec<(String, String)> = list
        .iter()
        .map(|e| (e["text"].as_str().unwrap().to_string(), e["fraction"].as_str().unwrap().to_string()))
        .collect();
    let expected = [("blue blue", "3/8"), ("red red", "3/8"), ("plain", "1/4")];
    assert_eq!(got, expected.map(|(a, b)| (a.to_string(), b.to_string())));
    assert_eq!(list[2]["p"].as_f64(), Some(0.25));
    let text = geogen(&["names", rules.to_str().unwrap(), "--enumerate"]);
    assert!(stdout(&text).starts_with("0.375000"), "{}", stdout(&text));
    // Variables steer computed weights.
    let peaks = repo("examples/names/peaks.lds");
    let high = geogen(&["names", &peaks, "--start", "<size>", "--enumerate", "--var", "height=0.9"]);
    assert_eq!(high.status.code(), Some(0), "{}", stderr(&high));
    assert_eq!(stdout(&high).lines().count(), 4);
}

#[test]
fn enumerate_stops_at_the_step_limit_or_its_work_budget() {
    let dir = tempfile::tempdir().unwrap();
    // A rule that may refer to itself forever, through a computed weight.
    let rules = write(dir.path(), "self.lds", "<a> => x [1] | <a> [`1`];");
    let rules = rules.to_str().unwrap();
    let o = geogen(&["names", rules, "--enumerate", "--max-steps", "20000"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains("GGE7309") && err.contains("did not end within 20000 steps"), "{err}");
    let o = geogen(&["names", rules, "--enumerate", "--max-steps", "20000", "--max-work", "10000"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains("GGE7309") && err.contains("more than 10000 units of work"), "{err}");
    assert!(err.contains("--max-work"), "{err}");
    // One name may do as much work: here less than its first weight's code needs.
    let o = geogen(&["names", rules, "--max-work", "50"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains("GGE7302") && err.contains("more than 50 units of work"), "{err}");
}

#[test]
fn rule_errors_exit_1_with_code_position_and_hint() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(dir.path(), "bad.lds", "<a> => x;\n<b> => Dragon's Lair;\n");
    let o = geogen(&["names", bad.to_str().unwrap(), "--strict"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("GGE7102") && err.contains("bad.lds:2:14") && err.contains("hint"), "{err}");
    // The same text is fine in the extended mode with an escape.
    let good = write(dir.path(), "good.lds", "<b> => Dragon\\'s Lair;");
    assert_eq!(stdout(&geogen(&["names", good.to_str().unwrap()])), "Dragon's Lair\n");
    let endless = write(dir.path(), "endless.lds", "<a> => x <a>;\n");
    let o = geogen(&["names", endless.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("GGE7301"), "{}", stderr(&o));
    let o = geogen(&["names", endless.to_str().unwrap(), "--truncate"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), format!("{}\n", "x ".repeat(500)));
    assert!(stderr(&o).contains("warning[GGE7301]"), "{}", stderr(&o));
    let o = geogen(&["names", endless.to_str().unwrap(), "--enumerate"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("GGE7309"), "{}", stderr(&o));
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let rules = write(dir.path(), "r.lds", "<a> => x;\n");
    let rules = rules.to_str().unwrap();
    for args in [
        vec!["names", rules, "--start", "<nope>"],
        vec!["names", rules, "--var", "1x=2"],
        vec!["names", rules, "--var", "rand=2"],
        vec!["names", "/nonexistent/r.lds"],
        vec!["names", rules, "-n", "0"],
        vec!["names", rules, "--enumerate", "-n", "3"],
    ] {
        let o = geogen(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn the_labelled_example_renders_with_its_labels_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let script = repo("examples/named-island.ggs");
    let peaks = format!("peaks={}", repo("examples/names/peaks.lds"));
    let args = [
        "render",
        &script,
        "--rules",
        &peaks,
        "--format",
        "colored",
        "--draw-labels",
        "--map-size",
        "256",
        "--seed",
        "3",
    ];
    let render = |out: &Path, extra: &[&str]| {
        let mut all: Vec<&str> = args.to_vec();
        all.extend_from_slice(extra);
        all.extend_from_slice(&["-o", out.to_str().unwrap(), "-q"]);
        let o = geogen(&all);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let text = std::fs::read_to_string(out.join("labels.geojson")).expect("labels.geojson");
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    };
    let labels = render(&out, &["--size", "256"]);
    assert_eq!(labels["type"], "FeatureCollection");
    let features = labels["features"].as_array().unwrap();
    // A title, a peak and three bays (the default).
    let kinds: Vec<&str> = features.iter().map(|f| f["properties"]["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["title", "peak", "bay", "bay", "bay"]);
    let title = features[0]["properties"]["name"].as_str().unwrap();
    let realm = title.rsplit(' ').next().unwrap();
    for bay in &features[2..] {
        assert!(bay["properties"]["name"].as_str().unwrap().contains(realm), "{bay}");
    }
    for f in features {
        let xy = f["geometry"]["coordinates"].as_array().unwrap();
        let (x, y) = (xy[0].as_f64().unwrap(), xy[1].as_f64().unwrap());
        assert!((0.0..256.0).contains(&x) && (0.0..256.0).contains(&y), "{f}");
        assert_eq!(f["geometry"]["type"], "Point");
    }
    assert_eq!(features[1]["geometry"]["coordinates"], serde_json::json!([128, 128]), "the peak is in the middle");
    // The preview with labels differs from the plain one.
    let plain_dir = dir.path().join("plain");
    let o = geogen(&[
        "render",
        &script,
        "--rules",
        &peaks,
        "--format",
        "colored",
        "--size",
        "256",
        "--seed",
        "3",
        "-q",
        "-o",
        plain_dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let drawn = std::fs::read(out.join("main_colored.png")).unwrap();
    assert_ne!(drawn, std::fs::read(plain_dir.join("main_colored.png")).unwrap());
    // Two halves of the render hold the labels of the whole, at the same map positions.
    let left = render(&dir.path().join("left"), &["--size", "128x256"]);
    let right = render(&dir.path().join("right"), &["--size", "128x256", "--origin", "128,0"]);
    let names_of = |v: &serde_json::Value| -> Vec<String> {
        v["features"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["properties"]["map_x"].to_string() + "," + &f["properties"]["map_y"].to_string())
            .collect()
    };
    let mut halves = names_of(&left);
    halves.extend(names_of(&right));
    halves.sort();
    let mut whole = names_of(&labels);
    whole.sort();
    assert_eq!(halves, whole);
}

#[test]
fn scripts_load_rule_files_named_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(
        dir.path(),
        "s.ggs",
        "metadata { Width: Finite, Height: Finite }\n\
         Names.PlaceLabel([5, 6], Names.Generate(Names.Load(\"peaks\"), \"<peak>\", {\"height\": 0.9}), \"peak\");\n\
         Names.PlaceLabel([500, 6], \"outside\");\n\
         yield HeightMap.Flat(0);\n",
    );
    let script = script.to_str().unwrap();
    let peaks = format!("peaks={}", repo("examples/names/peaks.lds"));
    let out = dir.path().join("out");
    let o = geogen(&["render", script, "--rules", &peaks, "--size", "64", "-q", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let labels: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("labels.geojson")).unwrap()).unwrap();
    let features = labels["features"].as_array().unwrap();
    assert_eq!(features.len(), 1, "only the label inside the render: {labels}");
    assert_eq!(features[0]["geometry"]["coordinates"], serde_json::json!([5, 6]));
    assert_eq!(features[0]["properties"]["kind"], "peak");
    // `--rules FILE` names the rule set after the file.
    let bare = repo("examples/names/peaks.lds");
    let o = geogen(&["run", script, "--rules", &bare, "--size", "64"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Without the rule file the script says what is missing.
    let o = geogen(&["run", script, "--size", "64"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("GGE7311") && stderr(&o).contains("--rules peaks=FILE"), "{}", stderr(&o));
    // An unreadable rule file is a usage error.
    let o = geogen(&["run", script, "--rules", "peaks=/nonexistent.lds"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn a_render_streamed_in_strips_writes_the_same_labels_file() {
    let dir = tempfile::tempdir().unwrap();
    let script = repo("examples/named-island.ggs");
    let peaks = format!("peaks={}", repo("examples/names/peaks.lds"));
    let render = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut args =
            vec!["render", &script, "--rules", &peaks, "--format", "colored", "--size", "1024", "--seed", "3"];
        args.extend_from_slice(&["--map-size", "1024", "-o", out.to_str().unwrap()]);
        args.extend_from_slice(extra);
        let o = geogen(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        (std::fs::read(out.join("labels.geojson")).expect("labels.geojson"), stderr(&o))
    };
    let (whole, _) = render("whole", &["-q"]);
    let (strips, err) = render("strips", &["--memory-limit", "1", "--draw-labels"]);
    assert!(err.contains("in strips"), "{err}");
    assert!(err.contains("--draw-labels is not supported"), "{err}");
    assert_eq!(strips, whole);
}

/// A one-time value whose text is a number is a Number in code, as in the original: `<@n> * 2`
/// with `<$n> => 7;` is 14 (it was an error: text times a number); other text stays text.
#[test]
fn a_one_time_number_is_a_number_in_code() {
    let dir = tempfile::tempdir().unwrap();
    let rules = write(
        dir.path(),
        "once.lds",
        "<$n> => 7;\n<$w> => seven;\n<start> => <$n> `<@n>*2` `<@n> + 1` `<@w> + \"s\"`;\n",
    );
    let o = geogen(&["names", rules.to_str().unwrap(), "-n", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "7 14 8 sevens");
}
