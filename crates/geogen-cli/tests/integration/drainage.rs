//! Whole-map drainage through the command line, on the flagship example `examples/drainage.ggs`
//! (a 160-unit map, an 80-cell solve): `geogen tiles` at four tile sizes, one tile per block and in
//! two shards gives the bytes of the full render; one and two threads give the same bytes; and
//! `geogen measure` finds the rendered map drained.

use std::collections::BTreeMap;
use std::process::Command;

use crate::common;
use common::{geogen, stderr, stdout};

const SIDE: usize = 160;

fn example() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/drainage.ggs").to_string()
}

fn settings() -> Vec<String> {
    ["--map-size", "160x160", "-p", "Resolution=80", "--seed", "3", "--format", "r16", "-q"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// `geogen render` of the example into `dir`, with `threads` rayon threads; the main map's bytes.
fn render(dir: &std::path::Path, threads: &str) -> Vec<u8> {
    let out = dir.to_str().unwrap();
    let mut args = vec!["render".to_string(), example(), "-o".to_string(), out.to_string()];
    args.extend(settings());
    let output = Command::new(env!("CARGO_BIN_EXE_geogen"))
        .args(&args)
        .env("NO_COLOR", "1")
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .expect("the binary runs");
    assert!(output.status.success(), "{}", stderr(&output));
    std::fs::read(dir.join("main.r16")).unwrap()
}

/// Every `tile_X_Y_main.r16` of a directory, by its corner.
fn tiles(dir: &std::path::Path) -> BTreeMap<(usize, usize), Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("tile_").and_then(|r| r.strip_suffix("_main.r16")) else { continue };
        let (x, y) = rest.split_once('_').unwrap();
        out.insert((x.parse().unwrap(), y.parse().unwrap()), std::fs::read(dir.join(&name)).unwrap());
    }
    out
}

/// Checks that the tiles of side `tile` cover the full render with its very bytes.
fn assert_tiles_match(full: &[u8], tiles: &BTreeMap<(usize, usize), Vec<u8>>, tile: usize, what: &str) {
    let per_side = SIDE.div_ceil(tile);
    assert_eq!(tiles.len(), per_side * per_side, "{what}: tile count");
    for (&(x0, y0), data) in tiles {
        let (w, h) = (tile.min(SIDE - x0), tile.min(SIDE - y0));
        assert_eq!(data.len(), w * h * 2, "{what}: tile ({x0}, {y0}) size");
        for row in 0..h {
            let at = ((y0 + row) * SIDE + x0) * 2;
            assert_eq!(
                &data[row * w * 2..(row + 1) * w * 2],
                &full[at..at + w * 2],
                "{what}: tile ({x0}, {y0}) row {row} differs from the full render"
            );
        }
    }
}

fn run_tiles(dir: &std::path::Path, tile: usize, extra: &[&str]) {
    let out = dir.to_str().unwrap().to_string();
    let mut args = vec![
        "tiles".to_string(),
        example(),
        "--region".to_string(),
        format!("0,0,{SIDE},{SIDE}"),
        "--tile".to_string(),
        tile.to_string(),
        "-o".to_string(),
        out,
    ];
    args.extend(settings());
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = geogen(&refs);
    assert!(output.status.success(), "tiles {tile} {extra:?}: {}", stderr(&output));
}

#[test]
fn drainage_tiles_blocks_shards_and_threads_give_the_full_render() {
    let root = tempfile::tempdir().unwrap();
    let full = render(&root.path().join("full"), "2");
    assert_eq!(full.len(), SIDE * SIDE * 2);
    assert_eq!(render(&root.path().join("one_thread"), "1"), full, "1 and 2 threads differ");

    for (tile, extra) in [(23, &[][..]), (37, &["--block", "1"][..]), (64, &[][..]), (100, &["--block", "1"][..])] {
        let dir = root.path().join(format!("t{tile}"));
        run_tiles(&dir, tile, extra);
        assert_tiles_match(&full, &tiles(&dir), tile, &format!("tiles of {tile} {extra:?}"));
    }

    // Two shards into one directory, as two machines would run them.
    let dir = root.path().join("sharded");
    run_tiles(&dir, 50, &["--shard", "0/2"]);
    run_tiles(&dir, 50, &["--shard", "1/2"]);
    assert_tiles_match(&full, &tiles(&dir), 50, "two shards");

    // The rendered map drains: `geogen measure` on it.
    let measured = geogen(&["measure", root.path().join("full/main.r16").to_str().unwrap(), "--json"]);
    assert!(measured.status.success(), "{}", stderr(&measured));
    let report: serde_json::Value = serde_json::from_str(&stdout(&measured)).unwrap();
    let m = &report[0];
    assert!(m["land_pixels"].as_u64().unwrap() > (SIDE * SIDE / 4) as u64, "{m}");
    assert!(m["land_into_pits"].as_f64().unwrap() <= 0.02, "{m}");
    assert!(m["largest_catchment"].as_f64().unwrap() >= 0.05, "{m}");
    assert!(m["longest_flow_path"].as_f64().unwrap() >= SIDE as f64 / 2.0, "{m}");
}

#[test]
fn a_solve_larger_than_the_limit_is_refused_before_anything_is_rendered() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("out");
    let output = geogen(&[
        "render",
        &example(),
        "--map-size",
        "160x160",
        "--max-solve-cells",
        "1000",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stderr(&output);
    assert!(text.contains("GGE3002") && text.contains("25921 cells") && text.contains("line 37"), "{text}");
    assert!(!out.join("main.png").exists(), "nothing is written");
}

#[test]
fn measure_reports_a_bowl_as_one_pit_and_refuses_what_is_no_height_map() {
    let root = tempfile::tempdir().unwrap();
    // A bowl: one closed pit holding all the land but the map's edge (an outlet: 30² of 32²
    // pixels drain into the pit).
    let side = 32usize;
    let mut bytes = Vec::new();
    for y in 0..side {
        for x in 0..side {
            let (dx, dy) = (x as f64 - 15.5, y as f64 - 15.5);
            let h = 0.2 + ((dx * dx + dy * dy).sqrt() / 30.0).min(0.7);
            bytes.extend_from_slice(&((h * 32767.0).round() as u16 + 32767).to_le_bytes());
        }
    }
    let path = root.path().join("bowl.r16");
    std::fs::write(&path, &bytes).unwrap();
    let output = geogen(&["measure", path.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("closed pits on land        1"), "{text}");
    assert!(text.contains("land draining into pits    87.89 %"), "{text}");

    let junk = root.path().join("junk.txt");
    std::fs::write(&junk, "not a map").unwrap();
    let output = geogen(&["measure", junk.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
}
