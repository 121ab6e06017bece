//! End-to-end tests of the `geogen` binary: output, JSON shapes and exit codes
//! (0 success, 1 script error, 2 usage error).

use std::path::Path;
use std::process::Output;

use crate::common;
use common::{geogen, stderr, stdout, write};

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
    // Host errors (GGE4xxx) are the user's settings: usage errors, exit 2.
    let o = geogen(&["run", s, "-p", "Nope=1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("GGE4001"), "{}", stderr(&o));
    let o = geogen(&["run", s, "-p", "Count=many"]);
    assert_eq!(o.status.code(), Some(2));
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

// ---------------------------------------------------------------------------------------------
// render and tiles

const DUNES: &str = r#"
metadata { Name: "Infinite test terrain" }
var m = HeightMap.Noise(CreateNoiseLayers(4, 64, 0.5), 3);
m.Blur(2).Add(HeightMap.RadialGradient([10, 20], 40, 0.3, 0));
yield m;
yield HeightMap.Clone(m).Abs() as "abs";
"#;

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

fn png_info(path: &Path) -> (u32, u32, png::BitDepth) {
    let decoder = png::Decoder::new(std::fs::File::open(path).expect("png exists"));
    let reader = decoder.read_info().expect("a valid png");
    let info = reader.info();
    (info.width, info.height, info.bit_depth)
}

/// The r16 samples of a file (little-endian u16, row-major).
fn r16(path: &Path) -> Vec<u16> {
    let bytes = std::fs::read(path).expect("r16 exists");
    bytes.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect()
}

#[test]
fn render_without_a_script_renders_the_built_in_example() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = geogen(&["render", "-q", "--size", "64", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(files_in(&out), ["main.png"]);
    assert_eq!(png_info(&out.join("main.png")), (64, 64, png::BitDepth::Sixteen));
}

#[test]
fn render_writes_every_format_for_every_map() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(dir.path(), "d.ggs", DUNES);
    let out = dir.path().join("out");
    let o = geogen(&[
        "render",
        script.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--size",
        "40x24",
        "--format",
        "png16,png8,r16,tiff,exr,colored,hillshade",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let files = files_in(&out);
    for map in ["main", "abs"] {
        for suffix in [".png", "_8bit.png", ".r16", ".tif", ".exr", "_colored.png", "_hillshade.png"] {
            assert!(files.contains(&format!("{map}{suffix}")), "{map}{suffix} missing from {files:?}");
        }
    }
    assert_eq!(png_info(&out.join("main.png")), (40, 24, png::BitDepth::Sixteen));
    assert_eq!(png_info(&out.join("main_8bit.png")), (40, 24, png::BitDepth::Eight));
    assert_eq!(r16(&out.join("abs.r16")).len(), 40 * 24);
    assert!(stdout(&o).contains("wrote"), "{}", stdout(&o));
    // --maps picks some of the maps.
    let only = dir.path().join("only");
    let o = geogen(&[
        "render",
        "-q",
        script.to_str().unwrap(),
        "-o",
        only.to_str().unwrap(),
        "--size",
        "8",
        "--maps",
        "abs",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(files_in(&only), ["abs.png"]);
}

#[test]
fn a_tile_at_a_negative_origin_equals_the_same_pixels_of_a_larger_render() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(dir.path(), "d.ggs", DUNES);
    let s = script.to_str().unwrap();
    let (big, small) = (dir.path().join("big"), dir.path().join("small"));
    let o = geogen(&[
        "render",
        "-q",
        s,
        "-o",
        big.to_str().unwrap(),
        "--origin=-64,-64",
        "--size",
        "96",
        "--format",
        "r16",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = geogen(&[
        "render",
        "-q",
        s,
        "-o",
        small.to_str().unwrap(),
        "--origin",
        "-40,-30",
        "--size",
        "32x20",
        "--format",
        "r16",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (big, small) = (r16(&big.join("main.r16")), r16(&small.join("main.r16")));
    for y in 0..20 {
        for x in 0..32 {
            let in_big = big[(y + 34) * 96 + (x + 24)];
            assert_eq!(small[y * 32 + x], in_big, "pixel ({x}, {y}) of the tile differs");
        }
    }
}

#[test]
fn tiles_match_a_full_render_and_resume_after_a_deleted_tile() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(dir.path(), "d.ggs", DUNES);
    let s = script.to_str().unwrap();
    let (full, tiles) = (dir.path().join("full"), dir.path().join("tiles"));
    let o = geogen(&[
        "render",
        "-q",
        s,
        "-o",
        full.to_str().unwrap(),
        "--origin=-30,-20",
        "--size",
        "50x40",
        "--format",
        "r16",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let args = ["tiles", s, "--region=-30,-20,50,40", "--tile", "32", "--format", "r16", "-o", tiles.to_str().unwrap()];
    let o = geogen(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("rendered 4 tiles"), "{}", stderr(&o));
    let full = r16(&full.join("main.r16"));
    // Tiles at x in {-30, 2}, y in {-20, 12}: 32 or 18 wide, 32 or 8 high.
    for (tx, ty, w, h) in [(-30i64, -20i64, 32usize, 32usize), (2, -20, 18, 32), (-30, 12, 32, 8), (2, 12, 18, 8)] {
        let tile = r16(&tiles.join(format!("tile_{tx}_{ty}_main.r16")));
        assert_eq!(tile.len(), w * h);
        for y in 0..h {
            for x in 0..w {
                let fx = (tx + 30) as usize + x;
                let fy = (ty + 20) as usize + y;
                assert_eq!(tile[y * w + x], full[fy * 50 + fx], "tile ({tx}, {ty}) pixel ({x}, {y})");
            }
        }
    }
    // Resume: a second run skips everything; after deleting one file only that tile is redone.
    let before = std::fs::read(tiles.join("tile_2_12_abs.r16")).unwrap();
    let o = geogen(&args);
    assert!(
        stderr(&o).contains("rendered 0 tiles") && stderr(&o).contains("4 complete tiles skipped"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_file(tiles.join("tile_2_12_abs.r16")).unwrap();
    let o = geogen(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rendered 1 tile ") && stderr(&o).contains("3 complete tiles skipped"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(tiles.join("tile_2_12_abs.r16")).unwrap(), before);
    assert!(!files_in(&tiles).iter().any(|f| f.contains(".tmp")), "{:?}", files_in(&tiles));
}

/// A render above the memory limit is split into strips streamed into the files: byte for byte
/// the files of the same render in one piece, for every streamable format, at an odd scale and
/// origin, with a blur whose margins cross the strip boundaries.
#[test]
fn a_render_above_the_memory_limit_is_streamed_in_strips_with_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(
        dir.path(),
        "s.ggs",
        "metadata { Width: Finite, Height: Finite }\n\
         var m = HeightMap.RadialGradient(@[0.5, 0.5], 300, 0.8, -0.5);\n\
         m.Add(HeightMap.Noise({64: 0.3, 8: 0.05, 1: 0.01}, 4));\n\
         m.Blur(9);\n\
         yield m;\n\
         var n = HeightMap.Noise({16: 0.5}, 5);\n\
         n.Multiply(m);\n\
         yield n as \"second\";\n",
    );
    let s = script.to_str().unwrap();
    let (whole, strips) = (dir.path().join("whole"), dir.path().join("strips"));
    let common = ["--size", "700x480", "--scale", "0.9", "--origin=-20,35", "--format", "png16,r16,png8,colored,tiff"];
    let o = geogen(&[&["render", s, "-o", whole.to_str().unwrap(), "-q"][..], &common[..]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let args = ["render", s, "-o", strips.to_str().unwrap(), "--memory-limit", "2", "--stats"];
    let o = geogen(&[&args[..], &common[..]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("strips"), "{}", stderr(&o));
    let stats = stdout(&o);
    let strips_made: u64 = stats
        .split_whitespace()
        .find_map(|f| f.strip_prefix("strips="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{stats}"));
    assert!(strips_made >= 2, "{stats}");
    assert!(stats.contains("peak_rss_bytes="), "{stats}");
    let names = files_in(&whole);
    assert_eq!(names.len(), 10, "{names:?}");
    assert_eq!(files_in(&strips), names);
    for name in names {
        let (a, b) = (std::fs::read(whole.join(&name)).unwrap(), std::fs::read(strips.join(&name)).unwrap());
        assert!(a == b, "{name} differs between the render in one piece and the one in strips");
    }
}

#[test]
fn render_errors_are_clear_have_the_right_exit_code_and_leave_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(dir.path(), "d.ggs", DUNES);
    let s = script.to_str().unwrap();

    // Above the limit in a format that cannot be streamed in strips (EXR): refused.
    let out = dir.path().join("memory");
    let o =
        geogen(&["render", s, "-o", out.to_str().unwrap(), "--size", "2000", "--memory-limit", "1", "--format", "exr"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("GGE3001"), "{}", stderr(&o));
    assert!(stderr(&o).contains("memory limit"), "{}", stderr(&o));
    assert!(stderr(&o).contains("not in exr"), "{}", stderr(&o));
    assert!(stderr(&o).contains("streamable: png16, png8, r16, tiff, colored"), "{}", stderr(&o));
    assert!(!out.exists(), "a failed render must not even create the directory");

    let out = dir.path().join("param");
    let o = geogen(&["render", s, "-o", out.to_str().unwrap(), "--size", "8", "-p", "Roughness=2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("GGE4001"), "{}", stderr(&o));
    assert!(files_in(&out).is_empty());

    let out = dir.path().join("format");
    let o = geogen(&["render", s, "-o", out.to_str().unwrap(), "--format", "png16,jpeg"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("jpeg") && stderr(&o).contains("png16") && stderr(&o).contains("exr"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists(), "a bad format must not even create the directory");

    let o = geogen(&["render", s, "-o", dir.path().join("maps").to_str().unwrap(), "--maps", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no map named \"nope\""), "{}", stderr(&o));
}

#[test]
fn run_prints_the_sequence_and_the_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(
        dir.path(),
        "b.ggs",
        "var m = HeightMap.RadialGradient([50, 50], 40, 1, 0);\nm.Blur(20);\nvar unused = HeightMap.Flat(0.5);\nyield m;\n",
    );
    let o = geogen(&["run", script.to_str().unwrap(), "--size", "100", "--sequence", "--bounds"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("HeightMap.RadialGradient"), "{text}");
    assert!(text.contains("HeightMap.Blur"), "{text}");
    assert!(text.contains("Yield"), "{text}");
    // The gradient must cover the yield rectangle plus the blur margin: 140x140 at -20,-20.
    assert!(text.contains("140"), "{text}");
    assert!(text.contains("peak memory"), "{text}");
}

#[test]
fn run_accepts_origin_and_scale_and_test_shows_messages_of_failures() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(
        dir.path(),
        "g.ggs",
        "metadata { Width: Finite, Height: Finite }\nPrint(\"{0} {1} {2}\", Parameters.RenderOriginX, Parameters.RenderScale, Parameters.MapWidth);\nyield HeightMap.Flat(0);\n",
    );
    let o = geogen(&["run", script.to_str().unwrap(), "--origin=-5,7", "--scale", "0.5", "--size", "100"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "-5 0.5 200\n");
    let failing = write(dir.path(), "f.ggs", "Print(\"step one\");\nAssertEquals(1, 2);\n");
    let o = geogen(&["test", failing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("FAIL") && stdout(&o).contains("| step one"), "{}", stdout(&o));
}

#[test]
fn tiles_partly_outside_a_finite_map_are_named_after_the_pixels_they_hold() {
    // A tile that starts above a finite map holds only the rows inside it; its file name must give
    // the position of its first pixel, or a stitcher would shift it by the clipped rows.
    let dir = tempfile::tempdir().unwrap();
    let script = write(
        dir.path(),
        "f.ggs",
        "metadata { Width: Finite, Height: Finite }\nyield HeightMap.Gradient([0, 0], [100, 60], -1, 1);\n",
    );
    let s = script.to_str().unwrap();
    let (full, tiles) = (dir.path().join("full"), dir.path().join("tiles"));
    let o = geogen(&["render", "-q", s, "--map-size", "100x60", "-o", full.to_str().unwrap(), "--format", "r16"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let args = [
        "tiles",
        s,
        "--map-size",
        "100x60",
        "--region=64,-10,100,60",
        "--tile",
        "32",
        "--format",
        "r16",
        "-o",
        tiles.to_str().unwrap(),
    ];
    let o = geogen(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let full = r16(&full.join("main.r16"));
    // Grid rows start at y = -10 and 22; the map covers x < 100 and 0 <= y < 60.
    for (tx, ty, w, h) in [(64i64, 0i64, 32usize, 22usize), (96, 0, 4, 22), (64, 22, 32, 28), (96, 22, 4, 28)] {
        let tile = r16(&tiles.join(format!("tile_{tx}_{ty}_main.r16")));
        assert_eq!(tile.len(), w * h, "tile ({tx}, {ty})");
        for y in 0..h {
            for x in 0..w {
                let (fx, fy) = (tx as usize + x, ty as usize + y);
                assert_eq!(tile[y * w + x], full[fy * 100 + fx], "tile ({tx}, {ty}) pixel ({x}, {y})");
            }
        }
    }
    let names = files_in(&tiles);
    assert!(!names.iter().any(|f| f.contains("_-10_") && !f.starts_with('.')), "{names:?}");
    // Resume still works with the grid's manifests.
    let o = geogen(&args);
    assert!(stderr(&o).contains("rendered 0 tiles"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    // A region entirely outside the map would write nothing: refused before rendering (the
    // region is the user's choice, so a usage error).
    let outside = dir.path().join("outside");
    let o = geogen(&[
        "tiles",
        s,
        "--map-size",
        "100x60",
        "--region",
        "200,200,64,64",
        "--tile",
        "32",
        "-o",
        outside.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("lies entirely outside the map"), "{}", stderr(&o));
    assert!(!outside.exists(), "nothing is created");
}

#[test]
fn negative_seed_and_scale_values_are_read_as_values() {
    // `--seed -5` is a seed (hashed as text), and `--scale -1` a bad scale, not unknown flags.
    let dir = tempfile::tempdir().unwrap();
    let script = write(dir.path(), "s.ggs", "Print(\"{0}\", Parameters.RenderScale);\nyield HeightMap.Flat(0);\n");
    let s = script.to_str().unwrap();
    let o = geogen(&["run", s, "--seed", "-5", "--size", "4"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = geogen(&["run", s, "--scale", "-1", "--size", "4"]);
    assert!(stderr(&o).contains("render scale -1"), "{}", stderr(&o));
    let o = geogen(&["tiles", s, "--region", "-8,-8,8,8", "--tile", "4", "-q", "-o", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn every_subcommand_documents_its_script_argument_and_shows_examples() {
    for command in ["render", "tiles", "run", "info", "check"] {
        let o = geogen(&[command, "--help"]);
        assert_eq!(o.status.code(), Some(0));
        let help = stdout(&o);
        let line =
            help.lines().find(|l| l.trim_start().starts_with("<SCRIPT>") || l.trim_start().starts_with("[SCRIPT]"));
        assert!(
            line.is_some_and(|l| l.split_once(']').or(l.split_once('>')).unwrap().1.trim().len() > 3),
            "{command}: {help}"
        );
        if command != "check" && command != "info" {
            assert!(help.contains("Examples:"), "{command}: {help}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// exit codes: every command × every kind of failure

/// A finite map with a size range and a parameter; it prints, then yields "main" and "second".
const EXITS: &str = r#"
metadata {
  Width: { Min: 10, Max: 200 }, Height: { Min: 10, Max: 200 },
  Parameters: { Count: { Min: 1, Max: 10, Default: 3 } }
}
Print("hello {0}", Parameters.Count);
yield HeightMap.Flat(0.25);
yield HeightMap.Flat(-0.25) as "second";
"#;

#[test]
fn exit_codes_follow_the_readme_for_every_command_and_failure() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str, text: &str| write(dir.path(), name, text).to_str().unwrap().to_string();
    let good = path("good.ggs", EXITS);
    let syntax = path("syntax.ggs", "var x = ;\nyield HeightMap.Flat(0);\n");
    let runtime = path("runtime.ggs", "TriggerError(\"no\");\nyield HeightMap.Flat(0);\n");
    let heavy = path("heavy.ggs", "yield HeightMap.Flat(0).Blur(5);\n");
    let failing = path("failing.ggs", "AssertEquals(1, 2);\n");
    let a_file = path("a_file", "not a directory");
    let missing = dir.path().join("missing.ggs").to_str().unwrap().to_string();
    let out = dir.path().join("out").to_str().unwrap().to_string();

    // (arguments, expected exit code, text the output must contain)
    let mut cases: Vec<(Vec<String>, i32, &str)> = Vec::new();
    let commands: [&[&str]; 6] = [
        &["check"],
        &["info"],
        &["info", "--json"],
        &["run", "--size", "16"],
        &["render", "-q", "--size", "16", "-o", &out],
        &["tiles", "-q", "--region", "0,0,16,16", "--tile", "8", "-o", &out],
    ];
    for command in commands {
        let name = command[0];
        let with = |script: &str, extra: &[&str]| -> Vec<String> {
            let mut args: Vec<String> = command.iter().map(|a| a.to_string()).collect();
            args.insert(1, script.to_string());
            args.extend(extra.iter().map(|a| a.to_string()));
            args
        };
        cases.push((with(&missing, &[]), 2, "cannot read"));
        cases.push((with(&syntax, &[]), 1, "GGE1201"));
        cases.push((with(&good, &["--no-such-flag"]), 2, "--no-such-flag"));
        if name == "run" || name == "render" || name == "tiles" {
            cases.push((with(&runtime, &[]), 1, "GGE6000"));
            cases.push((with(&good, &["-p", "Nope=1"]), 2, "GGE4001"));
            cases.push((with(&good, &["-p", "Count=many"]), 2, "GGE4002"));
            cases.push((with(&good, &["--scale", "100"]), 2, "GGE4003"));
            cases.push((with(&good, &["--map-size", "5x5"]), 2, "GGE4003"));
            cases.push((with(&good, &["--map-size", "0x5"]), 2, "at least 1"));
        }
        if name == "render" || name == "tiles" {
            cases.push((with(&good, &["--maps", "nope"]), 2, "GGE4000"));
            cases.push((with(&heavy, &["--memory-limit", "0"]), 1, "GGE3001"));
            cases.push((with(&good, &["--format", "jpeg"]), 2, "jpeg"));
            let mut into_file = with(&good, &[]);
            let at = into_file.iter().position(|a| a == "-o").unwrap();
            into_file[at + 1] = a_file.clone();
            cases.push((into_file, 2, "is a file, not a directory"));
        }
    }
    let strings = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    // A rectangle entirely outside a finite map writes nothing: refused.
    cases.push((
        strings(&["render", &good, "--map-size", "100x100", "--origin=500,500", "--size", "8", "-o", &out]),
        2,
        "outside",
    ));
    cases.push((
        strings(&["tiles", &good, "--map-size", "100x100", "--region", "500,500,16,16", "--tile", "8", "-o", &out]),
        2,
        "outside",
    ));
    cases.push((
        strings(&["tiles", &good, "--region", "0,0,100000,100000", "--tile", "1", "-o", &out]),
        2,
        "--max-tiles",
    ));
    // test: a failing file is 1, an unreadable one 2 (the more serious wins).
    cases.push((strings(&["test", &failing]), 1, "GGE9000"));
    cases.push((strings(&["test", &failing, &missing]), 2, "cannot read"));
    cases.push((strings(&["frobnicate"]), 2, "frobnicate"));

    let mut wrong = Vec::new();
    for (args, expected, needle) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = geogen(&args);
        let text = format!("{}{}", stderr(&o), stdout(&o));
        if o.status.code() != Some(*expected) || !text.contains(needle) {
            wrong.push(format!("{args:?}: exit {:?}, expected {expected} and {needle:?} in:\n{text}", o.status.code()));
        }
        // Refusals happen before anything is written; `tiles` meets script errors tile by tile,
        // after it has claimed the directory.
        if Path::new(&out).exists() {
            if !(args[0] == "tiles" && *expected == 1) {
                wrong.push(format!("{args:?} created the output directory"));
            }
            let _ = std::fs::remove_dir_all(&out);
        }
    }
    assert!(wrong.is_empty(), "{} of {} cases wrong:\n{}", wrong.len(), cases.len(), wrong.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// a yielded name is a name, never a path

/// Every file under `root`, relative, sorted.
fn all_files(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path.strip_prefix(root).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    found
}

/// A GeoGen Script string literal for `text` (only `\\`, `"`, newline and tab need escapes).
fn ggs_string(text: &str) -> String {
    let mut literal = String::from("\"");
    for c in text.chars() {
        match c {
            '\\' => literal.push_str("\\\\"),
            '"' => literal.push_str("\\\""),
            '\n' => literal.push_str("\\n"),
            '\t' => literal.push_str("\\t"),
            c => literal.push(c),
        }
    }
    literal.push('"');
    literal
}

/// Renders a script yielding a map named `name` into `<root>/a/b/out`; returns the run and every
/// file under `root` afterwards.
fn render_named(root: &Path, name: &str) -> (Output, Vec<String>) {
    let source = format!("yield HeightMap.Flat(0);\nyield HeightMap.Flat(0.5) as {};\n", ggs_string(name));
    std::fs::write(root.join("s.ggs"), source).unwrap();
    let out = root.join("a").join("b").join("out");
    let o = geogen(&["render", "-q", root.join("s.ggs").to_str().unwrap(), "--size", "2", "-o", out.to_str().unwrap()]);
    (o, all_files(root))
}

#[test]
fn hostile_map_names_are_refused_at_the_yield() {
    let dir = tempfile::tempdir().unwrap();
    let absolute = dir.path().join("abs").join("pwned").to_str().unwrap().to_string();
    for name in [absolute.as_str(), "../victim/f", "", ".", "..", "a\nb", "CON", "-rf", "x/y"] {
        let (o, files) = render_named(dir.path(), name);
        assert_eq!(o.status.code(), Some(1), "{name:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("GGE1315"), "{name:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("A-Z"), "the hint says what is allowed: {}", stderr(&o));
        assert_eq!(files, ["s.ggs"], "{name:?} wrote something");
    }
    let (o, files) = render_named(dir.path(), "Hills-2_b");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(files, ["a/b/out/Hills-2_b.png", "a/b/out/main.png", "s.ggs"]);
}

mod hostile_names {
    use super::*;
    use proptest::prelude::*;

    fn hostile_name() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(String::new()),
            Just(".".to_string()),
            Just("..".to_string()),
            "(\\.\\./){1,4}[a-z]{0,6}",
            "/[a-z]{1,8}(/[a-z]{1,8}){0,2}",
            "[a-z]{0,4}[\\n\\r\\t\\x00\\x1b\\\\/:*?<>|][a-z]{0,4}",
            "[a-zA-Z0-9_-]{60,70}",
            "\\PC{1,12}",
            any::<String>(),
            "[a-zA-Z0-9_.-]{1,12}",
        ]
    }

    proptest! {
        // Each case runs the binary: few cases, a fixed seed in CI (PROPTEST_RNG_SEED).
        #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

        /// However hostile the name, nothing lands outside -o: the script is refused with GGE1315
        /// (or an earlier lexical error for characters a string cannot hold), or the file is in -o.
        #[test]
        fn no_yielded_name_writes_outside_the_output_directory(name in hostile_name(), absolute in any::<bool>()) {
            let dir = tempfile::tempdir().unwrap();
            // Absolute names point into the sandbox, where a stray file would be seen.
            let name = if absolute { format!("{}/{name}", dir.path().display()) } else { name };
            let (o, files) = render_named(dir.path(), &name);
            let outside: Vec<&String> = files.iter().filter(|f| *f != "s.ggs" && !f.starts_with("a/b/out/")).collect();
            prop_assert!(outside.is_empty(), "{:?} wrote {:?}", name, outside);
            match o.status.code() {
                Some(0) => {
                    let expected = format!("a/b/out/{name}.png");
                    prop_assert!(files.contains(&expected), "{:?}: {:?}", name, files);
                    prop_assert!(geogen::check_map_name(&name).is_ok() || name == "main");
                }
                Some(1) => {
                    let err = stderr(&o);
                    prop_assert!(err.contains("GGE1315") || err.contains("GGE11"), "{:?}: {}", name, err);
                    prop_assert!(!files.iter().any(|f| f.starts_with("a/")), "{:?}: {:?}", name, files);
                }
                other => prop_assert!(false, "{:?}: exit {:?}: {}", name, other, stderr(&o)),
            }
        }
    }
}

#[test]
fn two_outputs_sharing_a_file_name_are_refused_before_rendering() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(dir.path(), "c.ggs", "yield HeightMap.Flat(0);\nyield HeightMap.Flat(0.5) as \"main_8bit\";\n");
    let s = script.to_str().unwrap();
    let out = dir.path().join("out");
    let o = geogen(&["render", s, "--size", "4", "--format", "png16,png8", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("\"main\" in png8") && err.contains("\"main_8bit\" in png16") && err.contains("main_8bit.png"),
        "{err}"
    );
    assert!(!out.exists());
    let o = geogen(&[
        "tiles",
        s,
        "--region",
        "0,0,4,4",
        "--tile",
        "2",
        "--format",
        "png8,png16",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!out.exists());
    // Picking one of the two maps resolves it.
    let o = geogen(&[
        "render",
        "-q",
        s,
        "--size",
        "4",
        "--format",
        "png16,png8",
        "--maps",
        "main",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(files_in(&out), ["main.png", "main_8bit.png"]);
}

// ---------------------------------------------------------------------------------------------
// smaller ones

#[test]
fn a_size_beyond_32_bits_is_too_large_and_says_the_maximum() {
    let o = geogen(&["run", "x.ggs", "--size", "4294967296x1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("too large") && stderr(&o).contains("4294967295"), "{}", stderr(&o));
}

#[test]
fn an_output_that_is_a_file_is_named_as_such_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(dir.path(), "s.ggs", "yield HeightMap.Flat(0);\n");
    let file = write(dir.path(), "x", "mine");
    let o = geogen(&["render", script.to_str().unwrap(), "--size", "4", "-o", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is a file, not a directory"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
}

#[test]
fn the_origin_may_be_at_either_end_of_the_32_bit_range() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(dir.path(), "d.ggs", DUNES);
    let s = script.to_str().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    for (origin, expected) in [
        ("--origin=-2147483648,-2147483648", 0),
        ("--origin=2147483644,2147483644", 0),
        ("--origin=-2147483649,0", 2),
        ("--origin=2147483645,0", 2),
    ] {
        let o = geogen(&["render", "-q", s, origin, "--size", "4", "--format", "r16", "-o", out]);
        assert_eq!(o.status.code(), Some(expected), "{origin}: {}", stderr(&o));
        if expected == 2 {
            assert!(stderr(&o).contains("GGE4003"), "{}", stderr(&o));
        }
    }
}

#[test]
fn tiny_renders_report_no_time_per_pixel() {
    let dir = tempfile::tempdir().unwrap();
    let o = geogen(&["render", "--size", "8", "-o", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("rendered 1 map (64 pixels) in"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("per pixel"), "{}", stderr(&o));
}

#[test]
fn info_json_on_a_broken_script_prints_the_diagnostics_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(dir.path(), "bad.ggs", "var x = ;\nyield HeightMap.Flat(0) as \"a/b\";\n");
    let o = geogen(&["info", "--json", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object on stdout");
    let first = &v["diagnostics"][0];
    assert_eq!(first["code"], "GGE1201");
    assert_eq!(first["line"], 1);
    assert!(first["column"].as_u64().is_some_and(|c| c > 1), "{first}");
    assert!(first["message"].as_str().is_some_and(|m| !m.is_empty()));
    assert!(first.get("hint").is_some());
    let o = geogen(&["info", "--json", dir.path().join("none.ggs").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON for a missing file too");
    assert_eq!(v["diagnostics"][0]["code"], "GGE4000");
}

#[test]
fn quiet_hides_the_summary_but_not_the_scripts_messages() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(dir.path(), "p.ggs", "Print(\"a message\");\nyield HeightMap.Flat(0);\n");
    let o = geogen(&[
        "render",
        "-q",
        script.to_str().unwrap(),
        "--size",
        "4",
        "-o",
        dir.path().join("o").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "a message\n");
    assert_eq!(stderr(&o), "");
}

#[test]
fn render_sweeps_temporary_files_of_killed_runs_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    for stray in [".main.png.tmp-999999-3", ".tile_0_0_main.r16.tmp-12-0"] {
        std::fs::write(out.join(stray), b"half a file").unwrap();
    }
    std::fs::write(out.join(".mine.tmp"), b"not ours").unwrap();
    let o = geogen(&["render", "--size", "4", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("removed 2 temporary files left by an interrupted run"), "{}", stderr(&o));
    assert_eq!(files_in(&out), [".mine.tmp", "main.png"]);
}

/// Found by the hardening review: invalid UTF-8 exited 2 with no position. It is a script error
/// (exit 1, GGE1106) at the line:column of the first invalid byte.
#[test]
fn invalid_utf8_is_a_script_error_with_a_position() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latin1.ggs");
    std::fs::write(&path, b"var a = 1;\nvar b = \"caf\xe9\";\n").unwrap();
    let o = geogen(&["check", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("GGE1106") && err.contains("latin1.ggs:2:13"), "{err}");
}

/// Found by the hardening review: `geogen check /dev/urandom` read without bound. At most the
/// script size limit plus one byte is read, then the script is refused (GGE1107, exit 1).
#[test]
fn an_endless_or_huge_script_file_is_refused_after_the_size_limit() {
    let dir = tempfile::tempdir().unwrap();
    let big = write(dir.path(), "big.ggs", &format!("{}yield HeightMap.Flat(0);\n", "a = 1;\n".repeat(300_000)));
    let o = geogen(&["check", big.to_str().unwrap(), "--max-script-size", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("GGE1107") && stderr(&o).contains("--max-script-size"), "{}", stderr(&o));
    assert_eq!(geogen(&["check", big.to_str().unwrap(), "--max-script-size", "3"]).status.code(), Some(0));
    if Path::new("/dev/urandom").exists() {
        let o = geogen(&["check", "/dev/urandom"]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("GGE1107"), "{}", stderr(&o));
    }
}

/// Found by the hardening review: 16 000 bad tokens printed 16 000 errors, each with the whole
/// 32 KB line. At most 50 are shown, each line cut around its caret, then one summary line.
#[test]
fn check_shows_at_most_fifty_errors_with_short_snippets() {
    let dir = tempfile::tempdir().unwrap();
    let junk = write(dir.path(), "junk.ggs", &"` ".repeat(16_000));
    let started = std::time::Instant::now();
    let o = geogen(&["check", junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let err = stderr(&o);
    assert_eq!(err.matches("error[GGE1101]").count(), 50, "{err}");
    assert!(err.ends_with("error: and 15950 more errors\n"), "{}", &err[err.len().saturating_sub(300)..]);
    assert!(err.len() < 30_000, "{} bytes", err.len());
    // Found by the hardening review too: the character is quoted readably, not as ```.
    assert!(err.contains("unexpected character '`'"), "{}", &err[..500]);
}

/// Found by the hardening review: snippets echoed raw terminal escape sequences from the script.
#[test]
fn control_characters_in_snippets_and_messages_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let script =
        write(dir.path(), "esc.ggs", "var s = \"\u{1b}[2J\u{1b}[31m\"; ` TriggerError(\"\u{1b}]0;x\u{7}\");\n");
    let o = geogen(&["check", script.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(!err.contains('\u{1b}'), "{err:?}");
    assert!(err.contains(r"\u{1b}[2J\u{1b}[31m"), "{err}");
    let script = write(
        dir.path(),
        "msg.ggs",
        "TriggerError(\"\u{1b}]0;title\u{7} and \u{1b}[2J\");\nyield HeightMap.Flat(0);\n",
    );
    let o = geogen(&["run", script.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("GGE6000") && !err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
    assert!(err.contains(r"\u{1b}]0;title\u{7} and \u{1b}[2J"), "{err}");
}

/// Found by the hardening review: the hints said "raise the limit" but no flag could. Every VM
/// limit has a flag on run, render, tiles and test, and the hints name it.
#[test]
fn every_vm_limit_has_a_flag_that_the_hint_names() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("loop.ggs", "while (true) {}\n", vec!["--max-instructions", "1000"], "GGE2505", "--max-instructions"),
        (
            "deep.ggs",
            "function f() { return f(); }\nf();\n",
            vec!["--max-call-depth", "10"],
            "GGE2501",
            "--max-call-depth",
        ),
        (
            "steps.ggs",
            "var m = HeightMap.Flat(0);\nfor (var i = 0; i < 10; i++) { m.Add(0); }\nyield m;\n",
            vec!["--max-steps", "5"],
            "GGE2504",
            "--max-steps",
        ),
        (
            "heap.ggs",
            "var kept = {};\nwhile (true) { kept.PushBack(Array.Repeat(0, 10000)); }\n",
            vec!["--max-heap", "1"],
            "GGE2508",
            "--max-heap",
        ),
        ("array.ggs", "var a = Array.Repeat(0, 100);\n", vec!["--max-array-len", "10"], "GGE2309", ""),
        (
            "push.ggs",
            "var a = {};\nfor (var i = 0; i < 100; i++) { a.PushBack(i); }\n",
            vec!["--max-array-len", "10"],
            "GGE2506",
            "--max-array-len",
        ),
        (
            "text.ggs",
            "var s = \"x\";\nfor (var i = 0; i < 10; i++) { s = s + s; }\n",
            vec!["--max-string-len", "100"],
            "GGE2507",
            "--max-string-len",
        ),
        (
            "blocks.ggs",
            "{{{{{{{{ var a = 1; }}}}}}}}\n",
            vec!["--max-block-depth", "4"],
            "GGE2502",
            "--max-block-depth",
        ),
    ];
    for (name, source, flags, code, flag) in cases {
        let script = write(dir.path(), name, &format!("{source}yield HeightMap.Flat(0);\n"));
        let mut args = vec!["run", script.to_str().unwrap()];
        args.extend(flags.iter().copied());
        let o = geogen(&args);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(code), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(flag), "{name}: {}", stderr(&o));
    }
    // The same flags on render, tiles and test.
    let script = write(dir.path(), "l.ggs", "while (true) {}\nyield HeightMap.Flat(0);\n");
    let s = script.to_str().unwrap();
    let out = dir.path().join("out");
    let o = geogen(&["render", s, "-o", out.to_str().unwrap(), "--size", "4", "--max-instructions", "500"]);
    assert!(stderr(&o).contains("GGE2505"), "{}", stderr(&o));
    let o = geogen(&[
        "tiles",
        s,
        "--region",
        "0,0,4,4",
        "--tile",
        "4",
        "-o",
        out.to_str().unwrap(),
        "--max-instructions",
        "500",
    ]);
    assert!(stderr(&o).contains("GGE2505"), "{}", stderr(&o));
    let o = geogen(&["test", s, "--max-instructions", "500"]);
    assert!(stderr(&o).contains("GGE2505"), "{}", stderr(&o));
}

/// Found by the hardening review: `Print` output was held until the run ended. `run` prints each
/// message as it comes, so printing far more than the script heap limit is fine.
#[test]
fn run_streams_messages_instead_of_holding_them() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(
        dir.path(),
        "p.ggs",
        "var line = \"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789\";\nfor (var i = 0; i < 30000; i++) { Print(line); }\nyield HeightMap.Flat(0);\n",
    );
    let o = geogen(&["run", script.to_str().unwrap(), "--max-heap", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(o.stdout.len(), 30_000 * 101);
    let o = geogen(&["test", script.to_str().unwrap(), "--max-heap", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// A render that fails after writing some of its files (here: the file size limit stops the
/// float TIFF after the PNG is written) leaves the previous run's files whole, not a mix of old
/// and new: every file is written under a temporary name and all are moved into place together.
#[cfg(target_os = "linux")]
#[test]
fn a_render_that_fails_half_way_leaves_the_previous_set_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out_arg = out.to_str().unwrap();
    let first = geogen(&["render", "--size", "256", "--format", "png16,tiff", "-q", "-o", out_arg]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let (png, tif) = (std::fs::read(out.join("main.png")).unwrap(), std::fs::read(out.join("main.tif")).unwrap());
    assert!(png.len() < 200_000 && tif.len() > 250_000, "png {} tif {}", png.len(), tif.len());
    // 200 KB a file at most: the PNG fits, the TIFF (4 bytes a pixel) does not.
    let binary = env!("CARGO_BIN_EXE_geogen");
    let o = std::process::Command::new("sh")
        .args([
            "-c",
            &format!("ulimit -f 400; exec '{binary}' render --size 256 --seed 7 --format png16,tiff -q -o '{out_arg}'"),
        ])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!o.status.success(), "the second run was meant to fail: {}", stderr(&o));
    assert!(std::fs::read(out.join("main.png")).unwrap() == png, "main.png was replaced while main.tif was not");
    assert!(std::fs::read(out.join("main.tif")).unwrap() == tif);
    // The next run sweeps what the failed one left and writes the new set.
    let o = geogen(&["render", "--size", "256", "--seed", "7", "--format", "png16,tiff", "-q", "-o", out_arg]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read(out.join("main.png")).unwrap() != png);
    assert_eq!(files_in(&out), ["main.png", "main.tif"]);
}

/// A link planted where the output directory's lock goes is refused, and the file it points to
/// is neither created nor touched.
#[cfg(unix)]
#[test]
fn a_link_in_place_of_the_lock_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let target = dir.path().join("elsewhere");
    std::os::unix::fs::symlink(&target, out.join(".geogen.lock")).unwrap();
    let script = write(dir.path(), "flat.ggs", "yield HeightMap.Flat(0);");
    for command in [
        vec!["render", "--size", "4", "-o", out.to_str().unwrap()],
        vec!["tiles", script.to_str().unwrap(), "--region", "0,0,8,8", "--tile", "4", "-o", out.to_str().unwrap()],
    ] {
        let o = geogen(&command);
        assert_eq!(o.status.code(), Some(2), "{command:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
        assert!(!target.exists(), "{command:?} created the link's target");
    }
}

/// Yields are found by name in constant time, by the compiler and by the simulation: four times
/// the yields take about four times as long to check and to run (a search per yield made it
/// sixteen: 195 698 yields took 28 s to check), and a repeated name is still refused.
#[test]
fn many_yields_check_in_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    let script = |count: usize| {
        let mut text = String::from("var m = HeightMap.Flat(0);\nyield m;\n");
        for i in 0..count {
            text.push_str(&format!("yield m as \"m{i}\";\n"));
        }
        text
    };
    let time = |command: &str, name: &str, text: &str| {
        let path = write(dir.path(), name, text);
        let started = std::time::Instant::now();
        let o = geogen(&[command, path.to_str().unwrap()]);
        (o, started.elapsed().as_secs_f64())
    };
    for command in ["check", "run"] {
        let (o, small) = time(command, "small.ggs", &script(20_000));
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let (o, large) = time(command, "large.ggs", &script(80_000));
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(large < 8.0 * small + 1.0, "{command}: 20 000 yields {small:.2} s, 80 000 {large:.2} s");
    }
    let (o, _) = time("run", "again.ggs", &(script(1000) + "yield m as \"m5\";\n"));
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("GGE2802"), "{}", stderr(&o));
}

/// An input map is read within the memory limit: a small compressed file holding a large map is
/// refused before it is decoded when the map would not fit (a 522 KB PNG of 16384² once took
/// 1.6 GB under a limit of 256 MB), and read when it fits, the render's peak staying under the
/// limit.
#[test]
fn an_input_map_is_read_within_the_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let made = dir.path().join("made");
    let flat = write(dir.path(), "flat.ggs", "yield HeightMap.Flat(0.25);");
    let o = geogen(&["render", flat.to_str().unwrap(), "--size", "4096", "-q", "-o", made.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let input = format!("big={}", made.join("main.png").display());
    assert!(std::fs::metadata(made.join("main.png")).unwrap().len() < 1 << 20, "a small file");
    let script = write(dir.path(), "reads.ggs", "yield HeightMap.Input(\"big\");");
    let out = dir.path().join("out");
    let render = |limit: &str| {
        geogen(&[
            "render",
            script.to_str().unwrap(),
            "--input",
            &input,
            "--size",
            "64",
            "--memory-limit",
            limit,
            "--stats",
            "-q",
            "-o",
            out.to_str().unwrap(),
        ])
    };
    let refused = render("64");
    assert_ne!(refused.status.code(), Some(0));
    assert!(
        stderr(&refused).contains("GGE4020") && stderr(&refused).contains("--memory-limit"),
        "{}",
        stderr(&refused)
    );
    let read = render("400");
    assert_eq!(read.status.code(), Some(0), "{}", stderr(&read));
    let peak: u64 = stdout(&read)
        .split_whitespace()
        .find_map(|field| field.strip_prefix("peak_rss_bytes="))
        .and_then(|v| v.parse().ok())
        .expect("peak_rss_bytes in --stats");
    assert!(peak < 400 << 20, "peak {peak} bytes");
}

/// Named pipes are refused before they are opened (opening one waits for a writer, for ever if
/// none comes); a Height-Slang program given to `serve` is told what to use instead; output
/// directory errors carry their codes.
#[cfg(unix)]
#[test]
fn pipes_height_slang_servers_and_busy_directories_are_refused_with_codes() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let started = std::time::Instant::now();
    let o = geogen(&["check", fifo.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("GGE4024") && stderr(&o).contains("named pipe"), "{}", stderr(&o));
    let script = write(dir.path(), "reads.ggs", "yield HeightMap.Input(\"a\");");
    let input = format!("a={}", fifo.display());
    let o = geogen(&[
        "render",
        script.to_str().unwrap(),
        "--input",
        &input,
        "--size",
        "4",
        "-o",
        dir.path().join("o").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("GGE4020") && stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    assert!(started.elapsed().as_secs() < 20, "a pipe was waited on");

    let slang = write(dir.path(), "hills.hs", "x*y");
    let o = geogen(&["serve", slang.to_str().unwrap(), "--port", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("Height-Slang") && !stderr(&o).contains("error: error["), "{}", stderr(&o));

    // Placing a tile server on the Earth: every bad setting refused before it listens.
    let island = write(dir.path(), "island.ggs", "yield HeightMap.Flat(0.5);");
    for (args, why) in [
        (&["--geo-origin", "7.5"][..], "LON,LAT"),
        (&["--geo-origin", "7.5,89"], "outside Web Mercator"),
        (&["--geo-origin", "7.5,46", "--pixel-size", "1e-9"], "no zoom"),
        (&["--height-scale", "50000"], "30000"),
    ] {
        let o = geogen(&[&["serve", island.to_str().unwrap(), "--port", "0"][..], args].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("GGE4021") && stderr(&o).contains(why), "{args:?}: {}", stderr(&o));
    }
    let o = geogen(&["serve", island.to_str().unwrap(), "--port", "0", "--pixel-size", "30"]);
    assert_eq!(o.status.code(), Some(2), "--pixel-size alone places nothing: {}", stderr(&o));

    // A directory another run holds: GGE4022.
    let out = dir.path().join("busy");
    std::fs::create_dir(&out).unwrap();
    let lock =
        std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(out.join(".geogen.lock")).unwrap();
    lock.try_lock().unwrap();
    let o = geogen(&["render", "--size", "4", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("GGE4022"), "{}", stderr(&o));
    drop(lock);
}

/// Every error the command line reports names a code: mkheightmap's flags and other misuse
/// GGE4000 unless a more specific code applies.
#[test]
fn command_line_errors_name_a_code() {
    let o = geogen(&["mkheightmap", "-Lhs", "x", "-w", "abc"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("error: GGE4000: "), "{}", stderr(&o));
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "not-a-dir", "x");
    let o = geogen(&["render", "--size", "4", "-o", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("error: GGE"), "{}", stderr(&o));
}
