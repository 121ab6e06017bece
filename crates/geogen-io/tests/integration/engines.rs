//! Meshes read back with an independent glTF reader (and, where Node is installed, checked by the
//! Khronos glTF validator), and every input format read back to the heights that were written.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::sample_field;
use geogen_io::mesh::{build_chunks, MeshOptions, CHUNK_QUADS};
use geogen_io::read::{read_heights, InputLimits};
use geogen_io::{encode, encode_surface, ExportOptions, Format, HeightField, Simplify, Surface, TerrainScale, Window};

/// A 300 × 140 field (more than one chunk wide), a margin of one pixel around a 298 × 138 core.
fn bumpy(width: u32, height: u32) -> Vec<f32> {
    (0..width * height)
        .map(|i| {
            let (x, y) = (f64::from(i % width), f64::from(i / width));
            (libm::sin(x / 9.0) * libm::cos(y / 7.0) * 0.6 + (x - y) / 1000.0) as f32
        })
        .collect()
}

fn options() -> ExportOptions {
    ExportOptions { scale: TerrainScale { pixel_size: 2.0, height_scale: 50.0 }, ..ExportOptions::default() }
}

#[test]
fn a_glb_reads_back_with_its_vertices_bounds_and_heights() {
    let (w, h) = (300u32, 140u32);
    let data = bumpy(w, h);
    let field = HeightField::new(w, h, &data).unwrap();
    let surface = Surface { field, core: Window { x: 1, y: 1, width: w - 2, height: h - 2 }, origin: (-1, -1) };
    let options = options();
    let bytes = encode_surface(Format::Glb, &surface, &options, &[], "main").unwrap();
    let gltf = gltf::Gltf::from_slice(&bytes).expect("a glTF reader accepts the file");
    let blob = gltf.blob.as_deref().expect("a BIN chunk");
    // The mesh covers the quads whose top-left is a core pixel: 298 × 138, one pixel into the margin.
    let quads = (w - 2, h - 2);
    let chunks_x = quads.0.div_ceil(CHUNK_QUADS);
    let chunks_y = quads.1.div_ceil(CHUNK_QUADS);
    assert_eq!(gltf.nodes().count() as u32, chunks_x * chunks_y);
    let mut vertices = 0usize;
    let mut triangles = 0usize;
    for node in gltf.nodes() {
        let [tx, ty, tz] = node.transform().decomposed().0;
        let mesh = node.mesh().expect("every node has a mesh");
        for primitive in mesh.primitives() {
            assert_eq!(primitive.mode(), gltf::mesh::Mode::Triangles);
            let reader = primitive.reader(|_| Some(blob));
            let positions: Vec<[f32; 3]> = reader.read_positions().expect("positions").collect();
            let normals: Vec<[f32; 3]> = reader.read_normals().expect("normals").collect();
            let uvs: Vec<[f32; 2]> = reader.read_tex_coords(0).expect("uvs").into_f32().collect();
            let indices: Vec<u32> = reader.read_indices().expect("indices").into_u32().collect();
            assert_eq!(positions.len(), normals.len());
            assert_eq!(positions.len(), uvs.len());
            assert!(positions.len() <= 65_535, "16-bit indices suffice");
            assert!(indices.iter().all(|&i| (i as usize) < positions.len()));
            vertices += positions.len();
            triangles += indices.len() / 3;
            // Declared bounds are the real ones.
            let bounds = primitive.bounding_box();
            for axis in 0..3 {
                let lo = positions.iter().map(|p| p[axis]).fold(f32::INFINITY, f32::min);
                let hi = positions.iter().map(|p| p[axis]).fold(f32::NEG_INFINITY, f32::max);
                assert_eq!((bounds.min[axis], bounds.max[axis]), (lo, hi));
            }
            // Every vertex stands on the map: world x, z give the pixel; y is its height in metres.
            for (p, n) in positions.iter().zip(&normals) {
                let (wx, wy, wz) =
                    (f64::from(p[0]) + f64::from(tx), f64::from(p[1]) + f64::from(ty), f64::from(p[2]) + f64::from(tz));
                let (px, py) = (wx / 2.0, wz / 2.0);
                assert_eq!((px.fract(), py.fract()), (0.0, 0.0), "vertices sit on pixels");
                let (fx, fy) = ((px as i64 + 1) as u32, (py as i64 + 1) as u32);
                let expected = f64::from(data[(fy * w + fx) as usize]) * 50.0;
                assert!((wy - expected).abs() < 1e-3, "({px}, {py}): {wy} vs {expected}");
                let length = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
                assert!((length - 1.0).abs() < 1e-5 && n[1] > 0.0);
            }
        }
    }
    // Chunks repeat their shared edge vertices.
    let columns: u32 = (0..chunks_x).map(|c| (quads.0 - c * CHUNK_QUADS).min(CHUNK_QUADS) + 1).sum();
    let rows: u32 = (0..chunks_y).map(|c| (quads.1 - c * CHUNK_QUADS).min(CHUNK_QUADS) + 1).sum();
    assert_eq!(vertices as u32, columns * rows);
    assert_eq!(triangles as u32, quads.0 * quads.1 * 2);
}

#[test]
fn glb_and_obj_bytes_are_deterministic_and_agree() {
    let data = sample_field(40, 30);
    let field = HeightField::new(40, 30, &data).unwrap();
    let surface = Surface::whole(field);
    for simplify in [Simplify::Full, Simplify::TriangleBudget(500), Simplify::MaxError(2.0)] {
        let options = ExportOptions { simplify, ..options() };
        let a = encode_surface(Format::Glb, &surface, &options, &[], "m").unwrap();
        assert_eq!(a, encode_surface(Format::Glb, &surface, &options, &[], "m").unwrap());
        let obj = String::from_utf8(encode_surface(Format::Obj, &surface, &options, &[], "m").unwrap()).unwrap();
        let chunks = build_chunks(&surface, &MeshOptions { scale: options.scale, simplify });
        let vertices: usize = chunks.iter().map(|c| c.positions.len()).sum();
        let faces: usize = chunks.iter().map(|c| c.indices.len() / 3).sum();
        assert_eq!(obj.lines().filter(|l| l.starts_with("v ")).count(), vertices);
        assert_eq!(obj.lines().filter(|l| l.starts_with("vn ")).count(), vertices);
        assert_eq!(obj.lines().filter(|l| l.starts_with("f ")).count(), faces);
    }
}

/// Where the Khronos glTF validator gets installed (under `target/`, which git ignores).
fn validator_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/gltf-validator")
}

/// Opt-in (`cargo test -p geogen-io --test engines -- --ignored`): it needs Node.js, and npm with
/// network access the first time, which the default test run must not need. The glTF reader test
/// above runs by default.
#[test]
#[ignore = "needs Node.js and, the first time, npm with network access"]
fn the_khronos_validator_finds_no_error_or_warning() {
    Command::new("node").arg("--version").output().expect("the Khronos validator test needs Node.js");
    let dir = validator_dir();
    let module = dir.join("node_modules/gltf-validator");
    if !module.exists() {
        std::fs::create_dir_all(&dir).unwrap();
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
            .arg(&dir)
            .arg("gltf-validator@2.0.0-dev.3.10")
            .status()
            .expect("npm runs");
        assert!(status.success(), "npm could not install gltf-validator into {}", dir.display());
    }
    let files = tempfile::tempdir().unwrap();
    let data = bumpy(150, 140);
    let field = HeightField::new(150, 140, &data).unwrap();
    let cases = [
        ("full", Surface::whole(field), Simplify::Full),
        (
            "margin",
            Surface { field, core: Window { x: 1, y: 1, width: 148, height: 138 }, origin: (-1, -1) },
            Simplify::Full,
        ),
        ("budget", Surface::whole(field), Simplify::TriangleBudget(3000)),
        ("error", Surface::whole(field), Simplify::MaxError(5.0)),
    ];
    let mut paths = Vec::new();
    for (name, surface, simplify) in cases {
        let bytes = encode_surface(Format::Glb, &surface, &ExportOptions { simplify, ..options() }, &[], name).unwrap();
        let path = files.path().join(format!("{name}.glb"));
        std::fs::write(&path, bytes).unwrap();
        paths.push(path);
    }
    // A one-pixel field has no quad: an empty scene, still valid.
    let tiny = [0.5f32];
    let path = files.path().join("empty.glb");
    std::fs::write(&path, encode(Format::Glb, &HeightField::new(1, 1, &tiny).unwrap()).unwrap()).unwrap();
    paths.push(path);
    let script = r#"
        const validator = require('gltf-validator');
        const fs = require('fs');
        (async () => {
          for (const file of process.argv.slice(1)) {
            const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(file)));
            const issues = report.issues;
            console.log(JSON.stringify({ file, errors: issues.numErrors, warnings: issues.numWarnings, messages: issues.messages.slice(0, 5) }));
          }
        })().catch((e) => { console.error(e); process.exit(3); });
    "#;
    let output = Command::new("node")
        .arg("-e")
        .arg(script)
        .args(&paths)
        .env("NODE_PATH", dir.join("node_modules"))
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}\n{}", stdout, String::from_utf8_lossy(&output.stderr));
    let mut seen = 0;
    for line in stdout.lines() {
        let report: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(report["errors"], 0, "{report}");
        assert_eq!(report["warnings"], 0, "{report}");
        seen += 1;
    }
    assert_eq!(seen, paths.len());
}

#[test]
fn every_input_format_reads_back_the_heights_written() {
    let (w, h) = (37u32, 23u32);
    let data = sample_field(w, h);
    let field = HeightField::new(w, h, &data).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let limits = InputLimits::default();
    for (format, tolerance) in [
        (Format::Png16, 0.5 / 32767.0),
        (Format::R16, 0.5 / 32767.0),
        (Format::Png8, 1.0 / 255.0),
        (Format::Tiff32, 0.0),
        (Format::Exr, 0.0),
    ] {
        let path = dir.path().join(format.file_name("map"));
        std::fs::write(&path, encode(format, &field).unwrap()).unwrap();
        let size = (format == Format::R16).then_some((w, h));
        let back = read_heights(&path, size, &limits).unwrap_or_else(|e| panic!("{format}: {e}"));
        assert_eq!((back.width, back.height), (w, h), "{format}");
        for (i, (&a, &b)) in data.iter().zip(&back.data).enumerate() {
            let a = a.clamp(-1.0, 1.0);
            let a = if a.is_nan() { 0.0 } else { a };
            assert!(
                (f64::from(a) - f64::from(b)).abs() <= tolerance + 1e-7,
                "{format} sample {i}: wrote {a}, read {b}"
            );
        }
        // A quantised format reads back to heights that quantise to the same file.
        if format != Format::Tiff32 && format != Format::Exr {
            let again = encode(format, &HeightField::new(w, h, &back.data).unwrap()).unwrap();
            assert_eq!(again, std::fs::read(&path).unwrap(), "{format}");
        }
    }
}

#[test]
fn hostile_inputs_are_errors_not_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let limits = InputLimits { max_side: 64, max_pixels: 64 * 64 };
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let data = sample_field(100, 10);
    let big = HeightField::new(100, 10, &data).unwrap();
    let small_data = sample_field(8, 8);
    let small = HeightField::new(8, 8, &small_data).unwrap();
    let png = encode(Format::Png16, &small).unwrap();
    let cases = [
        ("too wide", write("wide.png", &encode(Format::Png16, &big).unwrap()), None),
        ("too wide tiff", write("wide.tif", &encode(Format::Tiff32, &big).unwrap()), None),
        ("too wide exr", write("wide.exr", &encode(Format::Exr, &big).unwrap()), None),
        ("truncated png", write("cut.png", &png[..png.len() / 2]), None),
        ("png header only", write("head.png", &png[..8]), None),
        ("garbage tiff", write("bad.tif", b"II*\0\xff\xff\xff\xff garbage"), None),
        ("garbage exr", write("bad.exr", &[0x76, 0x2f, 0x31, 0x01, 2, 0, 0, 0, 1, 2, 3]), None),
        ("odd r16", write("odd.r16", &[1, 2, 3]), None),
        ("non-square r16", write("rect.r16", &[0; 2 * 6]), None),
        ("r16 of another size", write("sized.r16", &[0; 2 * 16]), Some((5, 5))),
        ("r16 too large", write("large.r16", &[0; 2 * 100 * 100]), None),
        ("empty file", write("empty.r16", &[]), None),
    ];
    for (what, path, size) in cases {
        match read_heights(&path, size, &limits) {
            Ok(h) => panic!("{what}: read as {}x{}", h.width, h.height),
            Err(e) => assert!(e.to_string().contains(&path.display().to_string()), "{what}: {e}"),
        }
    }
    assert!(read_heights(&dir.path().join("missing.png"), None, &limits).is_err());
    assert!(read_heights(dir.path(), None, &limits).is_err(), "a directory");
    // What fits is read.
    let ok = write("ok.png", &png);
    assert_eq!(read_heights(&ok, None, &limits).unwrap().data.len(), 64);
    let square = write("square.r16", &encode(Format::R16, &small).unwrap());
    assert_eq!(read_heights(&square, None, &limits).unwrap().width, 8);
}

#[test]
fn colour_and_8_bit_pngs_read_through_their_gray_value() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rgb.png");
    let file = std::fs::File::create(&path).unwrap();
    let mut encoder = png::Encoder::new(file, 2, 1);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().unwrap();
    writer.write_image_data(&[255, 255, 255, 0, 0, 255]).unwrap();
    writer.finish().unwrap();
    let back = read_heights(&path, None, &InputLimits::default()).unwrap();
    assert_eq!(back.data[0], 1.0);
    assert!((back.data[1] - (85.0 / 255.0 * 2.0 - 1.0)).abs() < 1e-6);
}

/// Valid files of every input format with bytes flipped, cut or repeated: each reads or is refused,
/// and no decoder panics (the reader would catch it, but it would be a decoder we trust wrongly).
#[test]
fn mutated_input_files_are_read_or_refused_without_a_panic() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static PANICS: AtomicUsize = AtomicUsize::new(0);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {
        PANICS.fetch_add(1, Ordering::SeqCst);
    }));
    let data = sample_field(12, 9);
    let field = HeightField::new(12, 9, &data).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let limits = InputLimits { max_side: 4096, max_pixels: 1 << 20 };
    let mut state = 0x2545_F491_u32;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    };
    let mut outcomes = [0usize; 2];
    for format in [Format::Png16, Format::Png8, Format::Tiff32, Format::Exr, Format::R16] {
        let original = encode(format, &field).unwrap();
        for case in 0..150 {
            let mut bytes = original.clone();
            match case % 3 {
                0 => {
                    for _ in 0..1 + next() % 4 {
                        let i = next() as usize % bytes.len();
                        bytes[i] ^= 1 << (next() % 8);
                    }
                }
                1 => bytes.truncate(next() as usize % bytes.len()),
                _ => {
                    let i = next() as usize % bytes.len();
                    let run: Vec<u8> = bytes[i..].iter().take(64).copied().collect();
                    bytes.splice(i..i, run);
                }
            }
            let path = dir.path().join(format!("m{case}.{}", format.extension()));
            std::fs::write(&path, &bytes).unwrap();
            outcomes[usize::from(read_heights(&path, None, &limits).is_ok())] += 1;
        }
    }
    std::panic::set_hook(previous);
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a decoder panicked on a mutated file");
    assert!(outcomes[0] > 100 && outcomes[1] > 10, "refused {}, read {}", outcomes[0], outcomes[1]);
}
