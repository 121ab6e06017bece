//! The C library from C: compiles `tests/c/capi_test.c` and the example of docs/embedding.md
//! with the system's C compiler (`$CC`, else `cc`) against `include/geogen.h` and each of
//! libgeogen.so and libgeogen.a, runs them and checks what they wrote and printed.
//!
//! The test program checks everything it can see from C (see its header comment) and writes the
//! island's 257 × 257 pixels at 300,128 twice: as the 16-bit samples of `geogen_render_u16` and as
//! the heights of `geogen_render_float`. Here the samples must be the bytes the command line's
//! R16 encoder (`geogen_io::encode`, what `--format r16` writes) makes of those heights, and both
//! programs must write the same. That the heights are those of `geogen render examples/island.ggs
//! --seed 7 --map-size 1024x1024 --origin 300,128 --size 257x257` is checked by the library's unit
//! test `the_island_renders_as_the_command_line_renders_it` (src/lib.rs), with the `geogen` crate
//! that this test cannot name: here `geogen` is the C library's own Rust name.
//!
//! The libraries are the ones cargo built for this run: the crate's rlib makes cargo build its
//! cdylib and staticlib first, into the directory of this test's program (`target/<profile>/deps`).

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const SIDE: u32 = 257;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn workspace_dir() -> PathBuf {
    crate_dir().join("../..")
}

/// The C libraries cargo built for this run: (shared, static).
fn built_libraries() -> (PathBuf, PathBuf) {
    let exe = std::env::current_exe().expect("the test's path");
    let dir = exe.parent().expect("the test's directory");
    let shared = ["libgeogen.so", "libgeogen.dylib"]
        .iter()
        .map(|name| dir.join(name))
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("no libgeogen.so beside the test in {}", dir.display()));
    let archive = dir.join("libgeogen.a");
    assert!(archive.is_file(), "no libgeogen.a beside the test in {}", dir.display());
    (shared, archive)
}

/// How to link the shared library.
fn shared_link(library: &Path) -> Vec<String> {
    let dir = library.parent().unwrap().display();
    vec![format!("-L{dir}"), format!("-Wl,-rpath,{dir}"), "-lgeogen".to_string(), "-lm".to_string()]
}

/// How to link the static library: the archive and the system libraries rustc names for it
/// (`--print native-static-libs`), as docs/embedding.md says.
fn static_link(archive: &Path) -> Vec<String> {
    let mut args = vec![archive.display().to_string()];
    args.extend(["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl", "-lc"].map(String::from));
    args
}

/// Compiles a C program against the header, linked as `link_args` say.
fn compile_program(source: &Path, out: &Path, link_args: &[String]) {
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let include = crate_dir().join("include");
    let started = Instant::now();
    let output = Command::new(&compiler)
        .args(["-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-O1", "-D_POSIX_C_SOURCE=200809L"])
        .arg("-I")
        .arg(&include)
        .arg(source)
        .args(link_args)
        .arg("-lpthread")
        .arg("-o")
        .arg(out)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{compiler}`: {e}"));
    assert!(
        output.status.success(),
        "{compiler} failed on {}:\n{}",
        source.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!("compiled {} in {:.1} s", out.display(), started.elapsed().as_secs_f64());
}

/// Runs the test program; returns the samples and the heights it wrote.
fn run_program(program: &Path) -> (Vec<u8>, Vec<f32>) {
    let island = workspace_dir().join("examples/island.ggs");
    let out = program.with_extension("island");
    let started = Instant::now();
    let output = Command::new(program).arg(&island).arg(&out).output().expect("the C test program runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("{} ran in {:.1} s:\n{stdout}", program.display(), started.elapsed().as_secs_f64());
    assert!(output.status.success(), "{} failed ({}):\n{stdout}\n{stderr}", program.display(), output.status);
    assert!(stdout.contains("all checks passed"), "the program stopped early:\n{stdout}");
    let samples = std::fs::read(out.with_extension("island.r16")).expect("the program wrote its samples");
    let heights = std::fs::read(out.with_extension("island.f32")).expect("the program wrote its heights");
    let heights = heights.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    (samples, heights)
}

/// The C example of docs/embedding.md (its one ```c block).
fn documented_example() -> String {
    let doc = std::fs::read_to_string(workspace_dir().join("docs/embedding.md")).unwrap();
    let blocks: Vec<&str> = doc.split("```c\n").skip(1).map(|b| b.split("```").next().unwrap()).collect();
    assert_eq!(blocks.len(), 1, "docs/embedding.md should hold one C example");
    blocks[0].to_string()
}

/// A directory of this test's own, removed when the test passes.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("geogen-capi-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn c_programs_render_through_both_libraries_what_the_command_line_writes() {
    let scratch = scratch_dir("test");
    let (shared, archive) = built_libraries();
    let source = crate_dir().join("tests/c/capi_test.c");
    let dynamic = scratch.join("capi_test_shared");
    compile_program(&source, &dynamic, &shared_link(&shared));
    let statically = scratch.join("capi_test_static");
    compile_program(&source, &statically, &static_link(&archive));

    let (samples, heights) = run_program(&dynamic);
    assert_eq!(heights.len(), (SIDE * SIDE) as usize, "the heights written");
    let field = geogen_io::HeightField::new(SIDE, SIDE, &heights).unwrap();
    let r16 = geogen_io::encode(geogen_io::Format::R16, &field).unwrap();
    assert_eq!(r16.len(), samples.len(), "the samples written");
    let first_difference = samples.iter().zip(&r16).position(|(a, b)| a != b);
    assert_eq!(first_difference, None, "the samples differ from the R16 encoding of the heights");
    assert!(heights.iter().any(|&h| h < 0.0) && heights.iter().any(|&h| h > 0.0), "sea and land");

    let (static_samples, static_heights) = run_program(&statically);
    assert!(static_samples == samples, "the static library's samples differ from the shared one's");
    assert!(
        static_heights.iter().map(|h| h.to_bits()).eq(heights.iter().map(|h| h.to_bits())),
        "the static library's heights differ from the shared one's"
    );
    std::fs::remove_dir_all(&scratch).ok();
}

#[test]
fn the_documented_example_does_what_the_page_says() {
    let scratch = scratch_dir("example");
    let (shared, archive) = built_libraries();
    let example = documented_example();
    let good = scratch.join("example.c");
    std::fs::write(&good, &example).unwrap();
    let bad_line = "var radius = Parameters.MapWidth * Parameters.Size;";
    assert!(example.contains(bad_line), "the example no longer computes `radius` as the page says");
    let bad = scratch.join("example_bad.c");
    std::fs::write(&bad, example.replace(bad_line, "var radius = ;")).unwrap();
    for (name, link) in [("shared", shared_link(&shared)), ("static", static_link(&archive))] {
        let program = scratch.join(format!("example_{name}"));
        compile_program(&good, &program, &link);
        let output = Command::new(&program).output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "the example failed:\n{stdout}{}", String::from_utf8_lossy(&output.stderr));
        assert!(stdout.starts_with("the tile's heights run from "), "{stdout}");
    }
    // With the error the page shows (the shared library is enough for this).
    let program = scratch.join("example_bad");
    compile_program(&bad, &program, &shared_link(&shared));
    let output = Command::new(&program).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "the broken example: {stderr}");
    assert!(
        stderr.starts_with("geogen: status 2, GGE1201 at line 3, column 13: expected an expression, found `;`"),
        "{stderr}"
    );
    assert!(stderr.contains("island.ggs:3:13"), "the error's text shows the place: {stderr}");
    std::fs::remove_dir_all(&scratch).ok();
}
