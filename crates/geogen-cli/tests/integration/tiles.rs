//! `geogen tiles` resume: a run killed at any moment and resumed gives exactly the bytes of an
//! uninterrupted run; a directory never mixes tiles of two settings; damaged tiles are redone;
//! one run at a time writes a directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::{geogen, stderr};

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_geogen"))
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts")
}

/// Slow enough per tile (a loop in the script, three atomic writes) that a run can be caught
/// half-way, with two maps.
const SLOW: &str = r#"
metadata { Parameters: { Count: { Min: 1, Max: 10, Default: 3 } } }
var n = 0;
for (var i = 0; i < 4000; i++) { n = n + 1; }
var m = HeightMap.Noise(CreateNoiseLayers(2, 32, 0.5), 3);
yield m;
yield HeightMap.Clone(m).Abs() as "abs";
"#;

const TOTAL_TILES: usize = 100;

struct Setup {
    _root: tempfile::TempDir,
    script: String,
    root: PathBuf,
}

fn setup() -> Setup {
    let root = tempfile::tempdir().unwrap();
    let script = root.path().join("slow.ggs");
    std::fs::write(&script, SLOW).unwrap();
    Setup { script: script.to_str().unwrap().to_string(), root: root.path().to_path_buf(), _root: root }
}

impl Setup {
    fn dir(&self, name: &str) -> String {
        self.root.join(name).to_str().unwrap().to_string()
    }

    /// `tiles` over 40×40 pixels in 4-pixel tiles (100 tiles) as r16 into `dir`, plus `extra`.
    fn args<'a>(&'a self, dir: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["tiles", &self.script, "--region=-20,-20,40,40", "--tile", "4"];
        if !extra.contains(&"--format") {
            args.extend_from_slice(&["--format", "r16"]);
        }
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-o", dir]);
        args
    }

    fn run(&self, dir: &str, extra: &[&str]) -> Output {
        geogen(&self.args(dir, extra))
    }
}

/// Every file of a directory by name, with its bytes.
fn contents(dir: &str) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap()))
        .collect()
}

fn markers(dir: &str) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.starts_with(".tile_") && name.ends_with(".done")
                })
                .count()
        })
        .unwrap_or(0)
}

fn temp_files(dir: &str) -> Vec<String> {
    contents(dir).into_keys().filter(|n| geogen_io::is_temp_file_name(n)).collect()
}

fn assert_same(actual: &str, expected: &str) {
    let (actual, expected) = (contents(actual), contents(expected));
    let names = |c: &BTreeMap<String, Vec<u8>>| c.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&actual), names(&expected), "the same files");
    for (name, bytes) in &expected {
        assert!(actual[name] == *bytes, "{name} differs");
    }
}

/// Starts the run and kills it (SIGKILL) once `at_markers` tiles are complete. Returns how many
/// were complete when it died. The run renders its tiles one by one (`--block 1`): rendered as one
/// block, all 100 would be written in one batch, too fast to catch half-way.
fn kill_after(setup: &Setup, dir: &str, at_markers: usize) -> usize {
    let mut child = spawn(&setup.args(dir, &["--block", "1"]));
    let deadline = Instant::now() + Duration::from_secs(60);
    while markers(dir) < at_markers && Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let _ = child.kill();
    child.wait().unwrap();
    markers(dir)
}

#[cfg(unix)] // SIGKILL
#[test]
fn a_run_killed_at_any_moment_resumes_to_the_bytes_of_an_uninterrupted_run() {
    let started = Instant::now();
    let setup = setup();
    let reference = setup.dir("reference");
    let o = setup.run(&reference, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(markers(&reference), TOTAL_TILES);

    let mut interrupted = 0;
    for (i, at) in [0, TOTAL_TILES / 4, TOTAL_TILES * 3 / 4].into_iter().enumerate() {
        let dir = setup.dir(&format!("killed{i}"));
        let complete = kill_after(&setup, &dir, at);
        interrupted += usize::from(complete < TOTAL_TILES);
        let o = setup.run(&dir, &[]);
        assert_eq!(o.status.code(), Some(0), "resume after {complete} tiles: {}", stderr(&o));
        assert!(temp_files(&dir).is_empty(), "{:?}", temp_files(&dir));
        assert!(!Path::new(&dir).join(".geogen.lock").exists());
        assert_same(&dir, &reference);
    }
    assert!(interrupted >= 2, "the runs finished before they could be killed: make SLOW slower");

    // The killed directory now belongs to seed 0: another seed refuses, naming the difference.
    let dir = setup.dir("killed1");
    let o = setup.run(&dir, &["--seed", "2"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("seed: 0 before, 2 now") && stderr(&o).contains("--restart"), "{}", stderr(&o));
    assert_same(&dir, &reference);
    // --restart starts over: the result is that of a fresh run with the new seed.
    let o = setup.run(&dir, &["--seed", "2", "--restart"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("rendered {TOTAL_TILES} tiles")), "{}", stderr(&o));
    let fresh = setup.dir("seed2");
    assert_eq!(setup.run(&fresh, &["--seed", "2"]).status.code(), Some(0));
    assert_same(&dir, &fresh);
    eprintln!("kill test took {:.1} s", started.elapsed().as_secs_f64());
}

#[cfg(unix)]
#[test]
fn sigterm_and_sigint_remove_unfinished_files_and_exit_143_and_130() {
    let setup = setup();
    for (signal, code) in [("-TERM", 143), ("-INT", 130)] {
        let dir = setup.dir(&format!("signal{code}"));
        let mut child = spawn(&setup.args(&dir, &[]));
        let deadline = Instant::now() + Duration::from_secs(60);
        while markers(&dir) < 10 && Instant::now() < deadline && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let sent = Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
        assert!(sent.success());
        let status = child.wait().unwrap();
        if markers(&dir) == TOTAL_TILES && status.code() == Some(0) {
            continue; // finished before the signal arrived
        }
        assert_eq!(status.code(), Some(code), "{signal}");
        assert!(temp_files(&dir).is_empty(), "{signal}: {:?}", temp_files(&dir));
        assert!(!Path::new(&dir).join(".geogen.lock").exists(), "{signal}: the lock file is removed");
    }
}

#[test]
fn two_runs_cannot_write_one_directory_at_once() {
    let setup = setup();
    let dir = setup.dir("busy");
    let mut first = spawn(&setup.args(&dir, &[]));
    let lock = Path::new(&dir).join(".geogen.lock");
    let deadline = Instant::now() + Duration::from_secs(60);
    while markers(&dir) < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(lock.exists());
    let second = setup.run(&dir, &["--seed", "9"]);
    let render = geogen(&["render", &setup.script, "--size", "4", "-o", &dir]);
    let first_done = first.try_wait().unwrap().is_some();
    first.wait().unwrap();
    if first_done {
        return; // the first run ended before the others started: nothing to contend with
    }
    for o in [&second, &render] {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
        assert!(stderr(o).contains("another geogen run is writing into") && stderr(o).contains(&dir), "{}", stderr(o));
    }
    assert!(!lock.exists(), "the first run removed its lock");
    assert!(!Path::new(&dir).join("main.png").exists());
}

#[test]
fn damaged_tiles_are_redone_and_intact_ones_skipped() {
    let setup = setup();
    let (reference, dir) = (setup.dir("reference"), setup.dir("damaged"));
    assert_eq!(setup.run(&reference, &["-q"]).status.code(), Some(0));
    assert_eq!(setup.run(&dir, &["-q"]).status.code(), Some(0));
    let path = |name: &str| Path::new(&dir).join(name);
    // Empty, truncated, and garbage of the same size: each makes its tile incomplete.
    std::fs::write(path("tile_0_0_main.r16"), b"").unwrap();
    let r16 = std::fs::read(path("tile_4_0_abs.r16")).unwrap();
    std::fs::write(path("tile_4_0_abs.r16"), &r16[..r16.len() / 2]).unwrap();
    std::fs::write(path("tile_-20_-20_main.r16"), vec![0x55; r16.len()]).unwrap();
    std::fs::remove_file(path("tile_8_8_abs.r16")).unwrap();
    let o = setup.run(&dir, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rendered 4 tiles") && stderr(&o).contains("96 complete tiles skipped"),
        "{}",
        stderr(&o)
    );
    assert_same(&dir, &reference);
    // A marker that is itself garbage counts as no marker.
    std::fs::write(path(".tile_0_4.done"), b"{garbage").unwrap();
    let o = setup.run(&dir, &[]);
    assert!(stderr(&o).contains("rendered 1 tile "), "{}", stderr(&o));
    assert_same(&dir, &reference);
}

#[test]
fn more_formats_and_more_maps_on_a_rerun_write_the_new_files() {
    let setup = setup();
    let dir = setup.dir("grow");
    let only = |extra: &[&str]| {
        let mut args = vec!["tiles", &setup.script, "--region=-8,-8,16,16", "--tile", "8"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-o", &dir]);
        geogen(&args)
    };
    let o = only(&["--format", "r16", "--maps", "abs"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let files = || contents(&dir).into_keys().filter(|n| n.starts_with("tile_")).collect::<Vec<_>>();
    assert_eq!(files().len(), 4);
    // Dropping --maps renders the other map.
    let o = only(&["--format", "r16"]);
    assert!(stderr(&o).contains("rendered 4 tiles"), "{}", stderr(&o));
    assert_eq!(files().len(), 8);
    assert!(Path::new(&dir).join("tile_0_0_main.r16").exists());
    // More formats write the new files.
    let o = only(&["--format", "r16,png8"]);
    assert!(stderr(&o).contains("rendered 4 tiles"), "{}", stderr(&o));
    assert_eq!(files().len(), 16);
    // Every earlier combination is now complete.
    for formats in ["r16", "png8", "png8,r16"] {
        let o = only(&["--format", formats]);
        assert!(stderr(&o).contains("rendered 0 tiles"), "{formats}: {}", stderr(&o));
    }
}

#[test]
fn equal_settings_written_differently_agree_and_a_region_may_grow_on_the_same_grid() {
    let setup = setup();
    let dir = setup.dir("same");
    let with = |region: &str, extra: &[&str]| {
        let mut args = vec!["tiles", &setup.script, region, "--tile", "4", "--format", "r16"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-o", &dir]);
        geogen(&args)
    };
    assert_eq!(with("--region=0,0,10,8", &["-p", "Count=1"]).status.code(), Some(0));
    // 1 and 1.0 are the same value; a numeric seed and the same number as text too.
    let o = with("--region=0,0,10,8", &["-p", "Count=1.0", "--seed", "0"]);
    assert!(stderr(&o).contains("rendered 0 tiles"), "{}", stderr(&o));
    // Growing the region on the same grid renders the new cells and the edge cells that grew
    // (x = 8 was 2 pixels wide, now 4).
    let o = with("--region=-4,0,16,8", &["-p", "Count=1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rendered 4 tiles") && stderr(&o).contains("(4 complete tiles skipped)"),
        "{}",
        stderr(&o)
    );
    let reference = setup.dir("grown");
    let o = geogen(&[
        "tiles",
        &setup.script,
        "--region=-4,0,16,8",
        "--tile",
        "4",
        "--format",
        "r16",
        "-p",
        "Count=1",
        "-o",
        &reference,
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_same(&dir, &reference);
    // A grid shifted by less than a tile, or another parameter value, would not fit.
    let o = with("--region=-2,0,16,8", &["-p", "Count=1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("tile grid origin"), "{}", stderr(&o));
    let o = with("--region=-4,0,16,8", &["-p", "Count=2"]);
    assert!(stderr(&o).contains("parameter Count: 1.0 before, 2.0 now"), "{}", stderr(&o));
}

#[test]
fn restart_removes_only_what_geogen_wrote() {
    let setup = setup();
    let dir = setup.dir("mixed");
    std::fs::create_dir(&dir).unwrap();
    // Markers without a manifest (an older geogen, or a deleted manifest): refused.
    std::fs::write(Path::new(&dir).join(".tile_0_0.done"), "tile_0_0_main.png\n").unwrap();
    std::fs::write(Path::new(&dir).join("notes.txt"), "mine").unwrap();
    std::fs::write(Path::new(&dir).join("tile_0_0_main.png"), "from an older run").unwrap();
    let args = ["tiles", &setup.script, "--region=0,0,8,8", "--tile", "4", "-o", &dir];
    let o = geogen(&args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no manifest"), "{}", stderr(&o));
    let mut restart = args.to_vec();
    restart.push("--restart");
    let o = geogen(&restart);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(Path::new(&dir).join("notes.txt")).unwrap(), "mine");
    // A marker that lists a file outside the tiles makes --restart delete nothing outside them.
    let marker = Path::new(&dir).join(".tile_0_0.done");
    let text = std::fs::read_to_string(&marker).unwrap().replace("tile_0_0_main.png", "notes.txt");
    std::fs::write(&marker, text).unwrap();
    let o = geogen(&restart);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(Path::new(&dir).join("notes.txt")).unwrap(), "mine");
}

#[test]
fn a_region_of_too_many_tiles_is_refused_at_once() {
    let setup = setup();
    let dir = setup.dir("huge");
    let started = Instant::now();
    let o = geogen(&["tiles", &setup.script, "--region", "0,0,100000,100000", "--tile", "1", "-o", &dir]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("10000000000 tiles") && stderr(&o).contains("--max-tiles"), "{}", stderr(&o));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!Path::new(&dir).exists());
    let o = setup.run(&dir, &["--max-tiles", "99"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = setup.run(&dir, &["--max-tiles", "100", "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// N shard processes (the index given, from JOB_COMPLETION_INDEX, and from SLURM_ARRAY_TASK_ID),
/// running at once into one directory, write exactly the tiles and markers of one run;
/// `finish-tiles` finds the directory complete, writes an XYZ tile set, and finds a deleted tile
/// and an unfinished shard.
#[test]
fn shards_running_at_once_write_the_tiles_of_one_run_and_finish_checks_them() {
    let setup = setup();
    let (one, sharded, web) = (setup.dir("one"), setup.dir("sharded"), setup.dir("web"));
    let o = setup.run(&one, &["--format", "r16,colored"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let start = |extra: &[&str], env: &[(&str, &str)]| {
        let mut extra = extra.to_vec();
        extra.extend_from_slice(&["--format", "r16,colored", "-q"]);
        let args = setup.args(&sharded, &extra);
        let mut command = Command::new(env!("CARGO_BIN_EXE_geogen"));
        command.args(&args).env("NO_COLOR", "1").env_remove("JOB_COMPLETION_INDEX").env_remove("SLURM_ARRAY_TASK_ID");
        for (k, v) in env {
            command.env(k, v);
        }
        command.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("the binary starts")
    };
    let shards = [
        start(&["--shard", "0/3"], &[]),
        start(&["--shard", "3"], &[("JOB_COMPLETION_INDEX", "1")]),
        // The index as Slurm gives it, whatever the array's minimum (a resubmitted task).
        start(&["--shard", "3"], &[("SLURM_ARRAY_TASK_ID", "2"), ("SLURM_ARRAY_TASK_MIN", "2")]),
    ];
    for child in shards {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let tiles = |dir: &str| -> BTreeMap<String, Vec<u8>> {
        contents(dir).into_iter().filter(|(n, _)| n.starts_with("tile_") || n.starts_with(".tile_")).collect()
    };
    let (expected, actual) = (tiles(&one), tiles(&sharded));
    assert_eq!(expected.len(), 5 * TOTAL_TILES, "{:?}", expected.keys().take(6).collect::<Vec<_>>());
    assert_eq!(actual.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>());
    for (name, bytes) in &expected {
        assert!(actual[name] == *bytes, "{name} differs between the shards and one run");
    }
    let finish = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_geogen")).args(args).output().unwrap();
    let archive = format!("{web}.pmtiles");
    let o = finish(&["finish-tiles", &sharded, "--xyz", &web, "--pmtiles", &archive]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("3 part records"), "{}", stderr(&o));
    assert!(Path::new(&web).join("0/0/0.png").is_file(), "zoom 0");
    // The archive holds every tile of the XYZ set, byte for byte, and nothing else.
    let bytes = std::fs::read(&archive).unwrap();
    let xyz = xyz_tiles(Path::new(&web));
    assert!(!xyz.is_empty(), "no XYZ tiles");
    for ((z, x, y), tile) in &xyz {
        assert!(pmtiles_tile(&bytes, *z, *x, *y) == Some(&tile[..]), "{z}/{x}/{y} differs in the archive");
    }
    assert_eq!(u64::from_le_bytes(bytes[72..80].try_into().unwrap()), xyz.len() as u64, "addressed tiles");
    // Without --xyz, with uncompressed directories: the same tiles, no tile set left behind.
    let alone = setup.dir("alone.pmtiles");
    let o = finish(&["finish-tiles", &sharded, "--pmtiles", &alone, "--pmtiles-compression", "none"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&alone).unwrap();
    assert_eq!(bytes[97], 1, "internal compression none");
    for ((z, x, y), tile) in &xyz {
        assert!(pmtiles_tile(&bytes, *z, *x, *y) == Some(&tile[..]), "{z}/{x}/{y} differs in the archive");
    }
    let left: Vec<_> = std::fs::read_dir(Path::new(&alone).parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".xyz-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // Nothing of the tiles directory is replaced, and an existing archive only with --force.
    let manifest = Path::new(&sharded).join("geogen-tiles.json");
    let before = std::fs::read(&manifest).unwrap();
    for (flag, target) in [("--pmtiles", manifest.to_string_lossy().into_owned()), ("--xyz", format!("{sharded}/web"))]
    {
        let o = finish(&["finish-tiles", &sharded, flag, &target]);
        assert_eq!(o.status.code(), Some(2), "{flag}: {}", stderr(&o));
        assert!(stderr(&o).contains("inside the tiles directory"), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(&manifest).unwrap(), before, "the manifest was replaced");
    assert!(!Path::new(&sharded).join("web").exists());
    std::fs::write(&alone, b"mine").unwrap();
    let o = finish(&["finish-tiles", &sharded, "--pmtiles", &alone]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&alone).unwrap(), b"mine");
    let o = finish(&["finish-tiles", &sharded, "--pmtiles", &alone, "--force", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(&std::fs::read(&alone).unwrap()[..7], b"PMTiles");
    let o = finish(&["finish-tiles", &one]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Elevations and GeoTIFFs are made from heights, which 16-bit raw tiles of unknown size are not.
    for args in [&["--xyz", &web, "--format", "terrarium"][..], &["--cog", &setup.dir("one.tif")]] {
        let o = finish(&[&["finish-tiles", &one][..], args].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("--format tiff too"), "{}", stderr(&o));
    }

    // A shard without its index, or with an index past the count, is refused.
    let o = Command::new(env!("CARGO_BIN_EXE_geogen"))
        .args(setup.args(&setup.dir("x"), &["--shard", "3"]))
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(setup.run(&setup.dir("x"), &["--shard", "3/3"]).status.code(), Some(2));

    // A deleted tile file and a missing shard record are found.
    let victim = expected.keys().find(|n| n.starts_with("tile_") && n.ends_with(".r16")).unwrap().clone();
    std::fs::remove_file(Path::new(&sharded).join(&victim)).unwrap();
    std::fs::remove_file(Path::new(&sharded).join("geogen-tiles.part-2-of-3.json")).unwrap();
    let o = finish(&["finish-tiles", &sharded]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains(&victim), "{}", stderr(&o));
    assert!(stderr(&o).contains("have not finished: 2"), "{}", stderr(&o));
}

/// From float tiles, `finish-tiles` writes Terrarium tiles (RGB, every zoom) and one GeoTIFF of the
/// region; an existing GeoTIFF is replaced only with --force, and none is written into the tiles.
#[test]
fn elevation_tile_sets_and_geotiffs_come_from_the_tiles_heights() {
    let setup = setup();
    let (dir, dem, cog) = (setup.dir("heights"), setup.dir("dem"), setup.dir("region.tif"));
    let o = setup.run(&dir, &["--format", "tiff", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let finish = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_geogen")).args(args).output().unwrap();
    let o = finish(&["finish-tiles", &dir, "--xyz", &dem, "--format", "terrarium", "--cog", &cog, "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let tiles = xyz_tiles(Path::new(&dem));
    assert!(tiles.contains_key(&(0, 0, 0)), "{:?}", tiles.keys().collect::<Vec<_>>());
    for bytes in tiles.values() {
        let info = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().unwrap().info().clone();
        assert_eq!((info.width, info.color_type), (256, png::ColorType::Rgb), "elevations have no alpha");
    }
    assert_eq!(&std::fs::read(&cog).unwrap()[..4], b"II*\0", "a little-endian TIFF");
    std::fs::write(&cog, b"mine").unwrap();
    let o = finish(&["finish-tiles", &dir, "--cog", &cog]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&cog).unwrap(), b"mine");
    let inside = format!("{dir}/region.tif");
    let o = finish(&["finish-tiles", &dir, "--cog", &inside]);
    assert!(o.status.code() == Some(2) && stderr(&o).contains("inside the tiles directory"), "{}", stderr(&o));
    let o = finish(&["finish-tiles", &dir, "--xyz", &dem, "--format", "sepia"]);
    assert!(o.status.code() == Some(2) && stderr(&o).contains("terrarium or terrain-rgb"), "{}", stderr(&o));
}

/// Every `z/x/y.png` below `dir`.
fn xyz_tiles(dir: &Path) -> BTreeMap<(u8, u64, u64), Vec<u8>> {
    let mut tiles = BTreeMap::new();
    for z in std::fs::read_dir(dir).unwrap() {
        let z = z.unwrap();
        for x in std::fs::read_dir(z.path()).unwrap() {
            let x = x.unwrap();
            for y in std::fs::read_dir(x.path()).unwrap() {
                let y = y.unwrap();
                let name = y.file_name().to_string_lossy().into_owned();
                let key = (
                    z.file_name().to_string_lossy().parse().unwrap(),
                    x.file_name().to_string_lossy().parse().unwrap(),
                    name.strip_suffix(".png").unwrap().parse().unwrap(),
                );
                tiles.insert(key, std::fs::read(y.path()).unwrap());
            }
        }
    }
    tiles
}

/// A tile of a PMTiles v3 archive whose root directory holds every entry, read by the
/// specification's rules: the header's offsets, the directory (gzip or not) of varint columns, the
/// entry with the greatest tile ID not above the tile's, within its run.
fn pmtiles_tile(archive: &[u8], z: u8, x: u64, y: u64) -> Option<&[u8]> {
    use std::io::Read;
    assert_eq!(&archive[..8], b"PMTiles\x03");
    let field = |i: usize| u64::from_le_bytes(archive[8 + 8 * i..16 + 8 * i].try_into().unwrap()) as usize;
    assert_eq!(field(5), 0, "no leaf directories expected for a small set");
    let raw = &archive[field(0)..field(0) + field(1)];
    let mut dir = Vec::new();
    match archive[97] {
        1 => dir.extend_from_slice(raw),
        2 => {
            flate2::read::GzDecoder::new(raw).read_to_end(&mut dir).unwrap();
        }
        other => panic!("compression {other}"),
    }
    let mut at = 0;
    let mut next = || {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let b = dir[at];
            at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return v;
            }
            shift += 7;
        }
    };
    let n = next() as usize;
    let mut ids = vec![0u64; n];
    let mut last = 0;
    for id in ids.iter_mut() {
        last += next();
        *id = last;
    }
    let runs: Vec<u64> = (0..n).map(|_| next()).collect();
    let lengths: Vec<u64> = (0..n).map(|_| next()).collect();
    let mut offsets = vec![0u64; n];
    for i in 0..n {
        let v = next();
        offsets[i] = if v == 0 { offsets[i - 1] + lengths[i - 1] } else { v - 1 };
    }
    // The tile ID: tiles of the shallower zooms, then the Hilbert curve position (Wikipedia's xy2d).
    let size = 1u64 << z;
    let mut id = (size * size - 1) / 3;
    let (mut hx, mut hy) = (x, y);
    let mut s = size / 2;
    while s > 0 {
        let (rx, ry) = (u64::from(hx & s > 0), u64::from(hy & s > 0));
        id += s * s * ((3 * rx) ^ ry);
        if ry == 0 {
            if rx == 1 {
                (hx, hy) = (size - 1 - hx, size - 1 - hy);
            }
            (hx, hy) = (hy, hx);
        }
        s /= 2;
    }
    let i = ids.partition_point(|&t| t <= id).checked_sub(1)?;
    if id >= ids[i] + runs[i] {
        return None;
    }
    let start = field(6) + offsets[i] as usize;
    Some(&archive[start..start + lengths[i] as usize])
}

/// A finite map with a blurred noise (operations with a halo) and a second map used as a splat mask.
const FINITE: &str = r#"
metadata { Width: Finite, Height: Finite }
var m = HeightMap.Noise(CreateNoiseLayers(2, 16, 0.5), 5);
m.Blur(3);
yield m;
yield HeightMap.Clone(m).Abs() as "mask";
"#;

/// Tiles are rendered in blocks of several tiles and cut apart (`--block`, by default as many as fit
/// in 1024 pixels): the bytes must be those of every tile rendered alone (`--block 1`), at a finite
/// map's edges with the region starting outside it, for a derived map that reads neighbours beyond
/// the tile (normal, splat with a mask), with a preset whose tiles share an edge, and when a block
/// holds tiles that are already complete.
#[test]
fn tiles_cut_out_of_blocks_equal_tiles_rendered_alone() {
    let root = tempfile::tempdir().unwrap();
    let script = root.path().join("finite.ggs");
    std::fs::write(&script, FINITE).unwrap();
    let script = script.to_str().unwrap();
    let dir = |name: &str| root.path().join(name).to_str().unwrap().to_string();
    let run = |out: &str, extra: &[&str]| {
        let mut args = vec!["tiles", script, "-q", "-o", out];
        args.extend_from_slice(extra);
        let o = geogen(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    };
    let edges = ["--region=-7,-5,52,41", "--tile", "8", "--map-size", "40x30", "--format", "r16,normal,splat"];
    let edges: Vec<&str> = edges.into_iter().chain(["--splat", "@mask;-1..0"]).collect();
    let unity = ["--region", "0,0,96,64", "--tile", "32", "--preset", "unity", "--maps", "main"];
    for (name, settings) in [("edges", &edges[..]), ("unity", &unity[..])] {
        let alone = dir(&format!("{name}-alone"));
        run(&alone, &[settings, &["--block", "1"]].concat());
        for block in [None, Some("2"), Some("3")] {
            let out = dir(&format!("{name}-{block:?}"));
            let extra = block.map_or(vec![], |b| vec!["--block", b]);
            run(&out, &[settings, &extra[..]].concat());
            // The preset's sidecar records the output directory; the tiles must be the same.
            let sidecar = Path::new(&out).join("geogen-unity.json");
            if sidecar.exists() {
                std::fs::copy(Path::new(&alone).join("geogen-unity.json"), sidecar).unwrap();
            }
            assert_same(&out, &alone);
        }
    }
    // Two tiles of a block deleted: the block is rendered again and only they are written.
    let out = dir("edges-None");
    let victims: Vec<String> = contents(&out).into_keys().filter(|n| n.starts_with("tile_0_0_")).collect();
    assert!(!victims.is_empty());
    for name in &victims {
        std::fs::remove_file(Path::new(&out).join(name)).unwrap();
    }
    let before = std::fs::metadata(Path::new(&out).join("tile_1_0_main.r16")).unwrap().modified().unwrap();
    let o = geogen(&[&["tiles", script, "-o", &out][..], &edges].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("rendered 1 tile"), "{}", stderr(&o));
    assert_same(&out, &dir("edges-alone"));
    let after = std::fs::metadata(Path::new(&out).join("tile_1_0_main.r16")).unwrap().modified().unwrap();
    assert_eq!(before, after, "a complete tile of the block is not written again");
}
