//! Into the engine and back, through the binary: derived maps and meshes of a tiled world equal
//! (or meet) those of the whole world, input maps render tile-exactly and scale-correctly, engine
//! presets size and name their files as the engines want, and bad inputs are coded errors.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common;
use common::{geogen, stderr};

fn ok(args: &[&str]) -> Output {
    let out = geogen(args);
    assert!(out.status.success(), "geogen {}\n{}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    out
}

/// Width, height, samples per pixel and the raw sample bytes of a PNG.
fn png(path: &Path) -> (u32, u32, usize, Vec<u8>) {
    let decoder = png::Decoder::new(std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut buf).unwrap();
    buf.truncate(frame.buffer_size());
    let bytes_per_pixel = frame.color_type.samples() * if frame.bit_depth == png::BitDepth::Sixteen { 2 } else { 1 };
    (frame.width, frame.height, bytes_per_pixel, buf)
}

/// The bytes of the `w × h` pixels at (x, y) of an image.
fn crop(image: &(u32, u32, usize, Vec<u8>), x: u32, y: u32, w: u32, h: u32) -> Vec<u8> {
    let (width, _, bpp, data) = image;
    let mut out = Vec::new();
    for row in y..y + h {
        let start = (row as usize * *width as usize + x as usize) * bpp;
        out.extend_from_slice(&data[start..start + w as usize * bpp]);
    }
    out
}

struct Dir {
    _temp: tempfile::TempDir,
    root: PathBuf,
}

impl Dir {
    fn new() -> Dir {
        let temp = tempfile::tempdir().unwrap();
        Dir { root: temp.path().to_path_buf(), _temp: temp }
    }
    fn path(&self, name: &str) -> String {
        self.root.join(name).to_str().unwrap().to_string()
    }
    fn write(&self, name: &str, text: &str) -> String {
        std::fs::write(self.root.join(name), text).unwrap();
        self.path(name)
    }
}

const HILLS: &str = "yield HeightMap.Noise({32: 0.5, 8: 0.2, 2: 0.05}, 5);\n\
                     yield HeightMap.Gradient([0, 0], [60, 40], -0.5, 0.8) as \"ramp\";\n";

const ISLAND: &str = "metadata { Width: Finite, Height: Finite }\n\
                      var m = HeightMap.RadialGradient(@[0.5, 0.5], 40, 0.7, -0.6);\n\
                      m.Add(HeightMap.Noise({16: 0.3, 4: 0.1}, 2));\nyield m;\n";

const DERIVED: &str = "hillshade,normal,slope,curvature,splat";

/// Every derived map and hillshade of every tile equals the same rectangle of the whole render's,
/// byte for byte (a one-pixel margin through the bounds pass, not the neighbours' files).
fn tiles_equal_the_whole(script: &str, region: (i64, i64, u32, u32), tile: u32, extra: &[&str], maps: &[&str]) {
    let dir = Dir::new();
    let script = dir.write("s.ggs", script);
    let (x, y, w, h) = region;
    let (whole, tiles) = (dir.path("whole"), dir.path("tiles"));
    let mut args = vec!["render", &script, "-o", &whole, "--format", DERIVED, "-q"];
    let (size, origin) = (format!("{w}x{h}"), format!("--origin={x},{y}"));
    args.extend(["--size", &size, &origin]);
    args.extend(extra);
    ok(&args);
    let region_text = format!("{x},{y},{w},{h}");
    let tile_text = tile.to_string();
    let mut args =
        vec!["tiles", &script, "--region", &region_text, "--tile", &tile_text, "-o", &tiles, "--format", DERIVED, "-q"];
    args.extend(extra);
    ok(&args);
    let mut compared = 0;
    for map in maps {
        for suffix in ["_hillshade.png", "_normal.png", "_slope.png", "_curvature.png", "_splat.png"] {
            let big = png(&Path::new(&whole).join(format!("{map}{suffix}")));
            assert_eq!((big.0, big.1), (w, h));
            for ty in (0..h).step_by(tile as usize) {
                for tx in (0..w).step_by(tile as usize) {
                    let (ax, ay) = (x + i64::from(tx), y + i64::from(ty));
                    let name = format!("tile_{ax}_{ay}_{map}{suffix}");
                    let part = png(&Path::new(&tiles).join(&name));
                    let (pw, ph) = (tile.min(w - tx), tile.min(h - ty));
                    assert_eq!((part.0, part.1), (pw, ph), "{name}");
                    assert!(crop(&big, tx, ty, pw, ph) == part.3, "{name} differs from the whole render's crop");
                    compared += 1;
                }
            }
        }
    }
    assert!(compared >= 8);
}

#[test]
fn derived_maps_of_an_infinite_tiled_world_are_crops_of_the_whole() {
    tiles_equal_the_whole(HILLS, (-23, -9, 70, 50), 16, &["--height-scale", "20"], &["main", "ramp"]);
}

#[test]
fn derived_maps_of_a_finite_tiled_world_are_crops_of_the_whole_edges_included() {
    // The region covers the whole 80 × 60 map: tiles at the edges see the same map edge as the
    // whole render; --splat reads a rule and a mask the script yields.
    let script = format!("{ISLAND}yield HeightMap.Gradient([0, 0], [80, 0], 0, 1) as \"east\";\n");
    tiles_equal_the_whole(
        &script,
        (0, 0, 80, 60),
        25,
        &["--map-size", "80x60", "--splat", "-1..0;0..1/0..20;@east", "--normal", "directx", "--pixel-size", "2"],
        &["main"],
    );
}

/// World positions of the `v` lines of an OBJ.
fn obj_vertices(path: &Path) -> Vec<[f64; 3]> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("v "))
        .map(|l| {
            let v: Vec<f64> = l.split(' ').map(|n| n.parse().unwrap()).collect();
            [v[0], v[1], v[2]]
        })
        .collect()
}

#[test]
fn tiled_meshes_meet_without_a_gap_or_a_step() {
    let dir = Dir::new();
    let script = dir.write("s.ggs", HILLS);
    let tiles = dir.path("tiles");
    for simplify in [&[][..], &["--mesh-error", "0.5"][..]] {
        let mut args = vec![
            "tiles",
            &script,
            "--region",
            "0,0,64,32",
            "--tile",
            "32",
            "-o",
            &tiles,
            "--format",
            "obj,glb",
            "--maps",
            "main",
            "-q",
            "--restart",
        ];
        args.extend(simplify);
        ok(&args);
        let left = obj_vertices(&Path::new(&tiles).join("tile_0_0_main.obj"));
        let right = obj_vertices(&Path::new(&tiles).join("tile_32_0_main.obj"));
        // The left tile reaches one vertex into its neighbour: its last column is x = 32 m.
        let edge = |vs: &[[f64; 3]]| -> BTreeSet<(i64, i64, u64)> {
            vs.iter().filter(|v| v[0] == 32.0).map(|v| (v[0] as i64, v[2] as i64, v[1].to_bits())).collect()
        };
        let (a, b) = (edge(&left), edge(&right));
        assert_eq!(a.len(), 33, "every pixel of the shared edge is a vertex on both sides ({simplify:?})");
        assert_eq!(a, b, "the shared edge has the same vertices and heights on both sides ({simplify:?})");
        let max_x = left.iter().map(|v| v[0]).fold(f64::MIN, f64::max);
        assert_eq!(max_x, 32.0);
    }
}

/// A 64 × 48 16-bit PNG sketch written by geogen itself, as an input.
fn sketch(dir: &Dir) -> String {
    let script = dir.write(
        "sketch.ggs",
        "yield HeightMap.RadialGradient([32, 24], 30, 0.9, -0.7).Add(HeightMap.Noise({8: 0.2}, 9));",
    );
    let out = dir.path("sketch");
    ok(&["render", &script, "-o", &out, "--size", "64x48", "-q"]);
    format!("{out}/main.png")
}

const REFINE: &str = "metadata { Width: Finite, Height: Finite }\n\
                      var base = HeightMap.Input(\"base\");\n\
                      base.Add(HeightMap.Noise({4: 0.1}, 3));\nyield base;\n";

#[test]
fn an_input_renders_tile_exact_and_scale_correct() {
    let dir = Dir::new();
    let input = format!("base={}", sketch(&dir));
    let script = dir.write("refine.ggs", REFINE);
    let (full, half, tiles) = (dir.path("full"), dir.path("half"), dir.path("tiles"));
    ok(&["render", &script, "--input", &input, "--map-size", "128x96", "-o", &full, "--format", "tiff", "-q"]);
    ok(&[
        "render",
        &script,
        "--input",
        &input,
        "--map-size",
        "128x96",
        "--scale",
        "0.5",
        "-o",
        &half,
        "--format",
        "tiff",
        "-q",
    ]);
    ok(&[
        "tiles",
        &script,
        "--input",
        &input,
        "--map-size",
        "128x96",
        "--region",
        "0,0,128,96",
        "--tile",
        "40",
        "-o",
        &tiles,
        "--format",
        "tiff",
        "-q",
    ]);
    let read = |path: &str| -> (u32, u32, Vec<f32>) {
        let heights = geogen_io::read_heights(Path::new(path), None, &geogen_io::InputLimits::default()).unwrap();
        (heights.width, heights.height, heights.data)
    };
    let (w, h, whole) = read(&format!("{full}/main.tif"));
    assert_eq!((w, h), (128, 96));
    // Scale 0.5: pixel p samples the logical coordinate 2p, exactly the full render's pixel 2p.
    let (hw, hh, halved) = read(&format!("{half}/main.tif"));
    assert_eq!((hw, hh), (64, 48));
    for y in 0..48 {
        for x in 0..64 {
            let (a, b) = (halved[(y * 64 + x) as usize], whole[(2 * y * 128 + 2 * x) as usize]);
            assert_eq!(a.to_bits(), b.to_bits(), "({x}, {y})");
        }
    }
    for ty in (0..96).step_by(40) {
        for tx in (0..128).step_by(40) {
            let (tw, th, tile) = read(&format!("{tiles}/tile_{tx}_{ty}_main.tif"));
            for y in 0..th {
                for x in 0..tw {
                    let expected = whole[((ty + y) * 128 + tx + x) as usize];
                    assert_eq!(
                        tile[(y * tw + x) as usize].to_bits(),
                        expected.to_bits(),
                        "tile {tx},{ty} at ({x}, {y})"
                    );
                }
            }
        }
    }
    // The sketch's heights reach the render: without the noise the map is the input stretched.
    let plain = dir.write("plain.ggs", "metadata { Width: Finite, Height: Finite }\nyield HeightMap.Input(\"base\");");
    let same = dir.path("same");
    ok(&["render", &plain, "--input", &input, "--map-size", "64x48", "-o", &same, "-q"]);
    let original = std::fs::read(sketch_path(&dir)).unwrap();
    assert_eq!(
        std::fs::read(format!("{same}/main.png")).unwrap(),
        original,
        "a 16-bit input at its own size renders back to the same file"
    );
}

fn sketch_path(dir: &Dir) -> String {
    format!("{}/main.png", dir.path("sketch"))
}

#[test]
fn bad_inputs_are_coded_errors() {
    let dir = Dir::new();
    let script = dir.write("refine.ggs", REFINE);
    let out = dir.path("out");
    let broken = dir.write("broken.png", "\u{89}PNG not really");
    let cases: [(Vec<String>, i32, &str); 5] = [
        (vec![format!("base={broken}")], 2, "GGE4020"),
        (vec![format!("base={}", dir.path("missing.png"))], 2, "GGE4020"),
        (vec![format!("base={}:7x7", dir.write("short.r16", "abc"))], 2, "GGE4020"),
        (vec![format!("other={}", sketch(&dir))], 1, "GGE2730"),
        (vec![], 1, "GGE2730"),
    ];
    for (inputs, code, text) in cases {
        let mut args =
            vec!["render".to_string(), script.clone(), "-o".into(), out.clone(), "--size".into(), "16".into()];
        for input in &inputs {
            args.push("--input".into());
            args.push(input.clone());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = geogen(&args);
        assert_eq!(o.status.code(), Some(code), "{inputs:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(text), "{inputs:?}: {}", stderr(&o));
    }
    assert!(!Path::new(&out).join("main.png").exists());
}

#[test]
fn unity_tiles_are_2n_plus_1_r16_sharing_their_edges() {
    let dir = Dir::new();
    let script = dir.write("s.ggs", HILLS);
    let tiles = dir.path("unity");
    ok(&[
        "tiles",
        &script,
        "--region",
        "0,0,64,64",
        "--tile",
        "32",
        "--preset",
        "unity",
        "--maps",
        "main",
        "-o",
        &tiles,
        "-q",
    ]);
    let read = |name: &str| -> Vec<u16> {
        let bytes = std::fs::read(Path::new(&tiles).join(name)).unwrap();
        assert_eq!(bytes.len(), 33 * 33 * 2, "{name}: a 33 × 33 Unity heightmap");
        bytes.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect()
    };
    let (a, b, c) = (read("main_0_0.r16"), read("main_1_0.r16"), read("main_0_1.r16"));
    for row in 0..33 {
        assert_eq!(a[row * 33 + 32], b[row * 33], "row {row}: the shared column");
    }
    for col in 0..33 {
        assert_eq!(a[32 * 33 + col], c[col], "column {col}: the shared row");
    }
    let sidecar: serde_json::Value =
        serde_json::from_slice(&std::fs::read(Path::new(&tiles).join("geogen-unity.json")).unwrap()).unwrap();
    assert_eq!(sidecar["tile_file_px"], 33);
    assert_eq!(sidecar["engine"]["resolution"], 33);
    assert_eq!(sidecar["height_scale_m"], 100.0);
    // A tile size Unity cannot import is refused before anything is written.
    let bad = dir.path("bad");
    let o = geogen(&["tiles", &script, "--region", "0,0,60,60", "--tile", "30", "--preset", "unity", "-o", &bad]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("GGE4021") && stderr(&o).contains("32"), "{}", stderr(&o));
    assert!(!Path::new(&bad).exists());
}

#[test]
fn unreal_tiles_are_named_for_world_partition_and_can_count_rows_from_the_bottom() {
    let dir = Dir::new();
    let script = dir.write("s.ggs", HILLS);
    let (down, up) = (dir.path("down"), dir.path("up"));
    let common = ["--region", "0,0,126,252", "--tile", "126", "--preset", "unreal", "--maps", "main", "-q"];
    let mut args = vec!["tiles", &script, "-o", &down];
    args.extend(common);
    ok(&args);
    let mut args = vec!["tiles", &script, "-o", &up, "--flip-y"];
    args.extend(common);
    ok(&args);
    for name in ["main_x0_y0.png", "main_x0_y1.png"] {
        let image = png(&Path::new(&down).join(name));
        assert_eq!((image.0, image.1), (127, 127), "{name}: 127 = 2 components of 63 quads + 1");
    }
    assert_eq!(
        std::fs::read(Path::new(&down).join("main_x0_y0.png")).unwrap(),
        std::fs::read(Path::new(&up).join("main_x0_y1.png")).unwrap(),
        "--flip-y counts rows from the bottom"
    );
    // A whole render must have a landscape size.
    let one = dir.path("one");
    ok(&["render", &script, "--size", "253x127", "--preset", "unreal", "--maps", "main", "-o", &one, "-q"]);
    let sidecar: serde_json::Value =
        serde_json::from_slice(&std::fs::read(Path::new(&one).join("main.unreal.json")).unwrap()).unwrap();
    assert_eq!(sidecar["files"][0], "main.png");
    let z_scale = sidecar["engine"]["scale_cm"][2].as_f64().unwrap();
    assert!((z_scale - 128.0 * 100.0 * 100.0 / 32767.0).abs() < 1e-9);
    let o = geogen(&["render", &script, "--size", "1024", "--preset", "unreal", "-o", &dir.path("bad")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("GGE4021"), "{}", stderr(&o));
}

#[test]
fn godot_tiles_are_terrain3d_regions_of_float_heights() {
    let dir = Dir::new();
    let script = dir.write("s.ggs", HILLS);
    let out = dir.path("godot");
    ok(&[
        "tiles",
        &script,
        "--region",
        "0,0,128,64",
        "--tile",
        "64",
        "--preset",
        "godot",
        "--maps",
        "main",
        "-o",
        &out,
        "-q",
    ]);
    for name in ["main_0_0.exr", "main_1_0.exr"] {
        let heights =
            geogen_io::read_heights(&Path::new(&out).join(name), None, &geogen_io::InputLimits::default()).unwrap();
        assert_eq!((heights.width, heights.height), (64, 64), "{name}");
    }
    assert!(Path::new(&out).join("geogen-godot.json").exists());
}

#[test]
fn export_settings_no_format_uses_are_warned_about() {
    let dir = Dir::new();
    let out = ok(&[
        "render",
        "--size",
        "16",
        "-q",
        "-o",
        &dir.path("a"),
        "--mesh-error",
        "1",
        "--splat",
        "-1..0",
        "--normal",
        "directx",
        "--flip-y",
    ]);
    let err = stderr(&out);
    for flag in ["--mesh-triangles/--mesh-error", "--splat", "--normal", "--flip-y"] {
        assert!(err.contains(&format!("warning: {flag} changes only")), "{flag}:\n{err}");
    }
    let out = ok(&[
        "render",
        "--size",
        "16",
        "-q",
        "-o",
        &dir.path("b"),
        "--format",
        "glb,splat,normal",
        "--mesh-error",
        "1",
        "--splat",
        "-1..0",
        "--normal",
        "directx",
    ]);
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
}
