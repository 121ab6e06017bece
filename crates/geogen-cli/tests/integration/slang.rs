//! `geogen mkheightmap` (text exports of small maps: x, y, anti-aliasing, normalisation, info, the
//! fixed defects), `geogen slang eval`, and `.hs` files through `check`, `render` and `tiles`.

use crate::common;
use common::{geogen_in, stderr, stdout};

/// Runs mkheightmap with `-Et` into a fresh directory; returns (stdout, the text export).
fn text_export(args: &[&str]) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec!["mkheightmap", "-Et"];
    all.extend_from_slice(args);
    let o = geogen_in(Some(dir.path()), &all);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains("Exporting as text to file 'mkheightmap-out.txt' ...okay."), "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.path().join("mkheightmap-out.txt")).unwrap();
    (stdout(&o), text)
}

#[test]
fn x_is_the_pixel_corner_over_the_width() {
    let (_, text) = text_export(&["-Lhs", "x", "-w", "4", "-h", "1"]);
    assert_eq!(text, "width:4\nheight:1\nvalues:0.000000 0.250000 0.500000 0.750000 ");
    let (_, text) = text_export(&["-Lhs", "x", "-w", "4", "-h", "1", "-W", "2"]);
    assert_eq!(text, "width:4\nheight:1\nvalues:0.000000 0.500000 1.000000 1.000000 ", "clamped to [0, 1]");
}

#[test]
fn y_is_up_and_non_square_images_work() {
    // 2 wide, 3 high: y = py / W from the bottom row, so the top row is y = 1, then 0.5, then 0.
    // (The original flipped with the width: it read outside its buffer here.)
    let (_, text) = text_export(&["-Lhs", "y", "-w", "2", "-h", "3"]);
    assert_eq!(text, "width:2\nheight:3\nvalues:1.000000 1.000000 0.500000 0.500000 0.000000 0.000000 ");
    let (_, text) = text_export(&["-Lhs", "(* 0.25 y)", "-w", "3", "-h", "2"]);
    assert_eq!(text, "width:3\nheight:2\nvalues:0.083333 0.083333 0.083333 0.000000 0.000000 0.000000 ");
}

#[test]
fn anti_aliasing_averages_the_sub_samples() {
    // x with a = 2, W = 4: the means of 0/8 and 1/8, 2/8 and 3/8, ...
    let (info, text) = text_export(&["-Lhs", "x", "-w", "4", "-h", "1", "-a", "2", "-i"]);
    assert_eq!(text, "width:4\nheight:1\nvalues:0.062500 0.312500 0.562500 0.812500 ");
    assert_eq!(info, "info:min..max:0.0625..0.8125\n");
    // A step at x = 0.5 seen with 3×3 sub-samples: the pixel holding it is partly covered.
    let (_, text) = text_export(&["-Lhs", "(delta x 0.5)", "-w", "3", "-h", "1", "-a", "3"]);
    assert_eq!(text, "width:3\nheight:1\nvalues:0.000000 0.333333 1.000000 ");
}

#[test]
fn normalisation_info_and_the_constant_map() {
    let (info, text) = text_export(&["-Lhs", "(* 10 x)", "-w", "4", "-h", "1", "-n", "-i"]);
    assert_eq!(info, "info:min..max:0..1\n");
    assert_eq!(text, "width:4\nheight:1\nvalues:0.000000 0.333333 0.666667 1.000000 ");
    let (info, _) = text_export(&["-Lhs", "(* 10 x)", "-w", "4", "-h", "1", "-i"]);
    assert_eq!(info, "info:min..max:0..7.5\n");
    // The original divided 0 by 0 here (every value NaN); a constant map normalises to 0.
    let (info, text) = text_export(&["-Lhs", "0.7", "-w", "2", "-h", "2", "-n", "-i"]);
    assert_eq!(info, "info:min..max:0..0\n");
    assert_eq!(text, "width:2\nheight:2\nvalues:0.000000 0.000000 0.000000 0.000000 ");
    // NaN is not clamped.
    let (_, text) = text_export(&["-Lhs", "(/ 0 0)", "-w", "1", "-h", "1"]);
    assert!(text.ends_with("values:nan ") || text.ends_with("values:-nan "), "{text}");
}

#[test]
fn the_bitmap_export_and_overwriting() {
    let dir = tempfile::tempdir().unwrap();
    let o = geogen_in(Some(dir.path()), &["mkheightmap", "-Lhs", "x", "-w", "3", "-h", "2", "-Ebmp", "-En", "pic"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("Exporting as bitmap to file 'pic.bmp' ...okay."), "{}", stderr(&o));
    let bmp = std::fs::read(dir.path().join("pic.bmp")).unwrap();
    assert_eq!(&bmp[..2], b"BM");
    assert_eq!(bmp.len(), 54 + 2 * 12, "two rows of 3 pixels padded to 12 bytes");
    // x = 0, 1/3, 2/3: grey 0, trunc(85.0) = 84 or 85, trunc(170) = 169 or 170.
    assert_eq!(&bmp[54..57], &[0, 0, 0]);
    assert_eq!(bmp[57], (255.0 * (1.0f64 / 3.0)) as u8);
    // Without -f an existing file is kept, and the run fails (the original exited 0).
    let o = geogen_in(Some(dir.path()), &["mkheightmap", "-Lhs", "y", "-w", "3", "-h", "2", "-Ebmp", "-En", "pic"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("exists; add -f"), "{}", stderr(&o));
    assert_eq!(std::fs::read(dir.path().join("pic.bmp")).unwrap(), bmp);
    let o =
        geogen_in(Some(dir.path()), &["mkheightmap", "-Lhs", "y", "-w", "3", "-h", "2", "-Ebmp", "-En", "pic", "-f"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_ne!(std::fs::read(dir.path().join("pic.bmp")).unwrap(), bmp);
}

#[test]
fn mkheightmap_errors() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| geogen_in(Some(dir.path()), args);
    let o = run(&["mkheightmap", "-w", "4"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("you gave me no code"), "{}", stderr(&o));
    let o = run(&["mkheightmap", "-Lhs", "x", "-Lhs", "y"]);
    assert!(stderr(&o).contains("only one formula or program allowed"), "{}", stderr(&o));
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["mkheightmap", "-Lhs", "(+ 1", "-Et"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("GGE8105") && stderr(&o).contains("-Lhs:1:5"), "{}", stderr(&o));
    let o = run(&["mkheightmap", "-Lhs", "x", "-a", "0"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["mkheightmap", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("-h, --height H"), "{}", stdout(&o));
    // The original's semantics on request.
    let (_, text) = text_export(&["-Lhs", "(>= x 0)", "-w", "2", "-h", "1", "--compat", "picogen-2008"]);
    assert_eq!(text, "width:2\nheight:1\nvalues:0.000000 1.000000 ");
}

#[test]
fn slang_eval_prints_the_shortest_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let eval = |args: &[&str]| {
        let mut all = vec!["slang", "eval"];
        all.extend_from_slice(args);
        geogen_in(Some(dir.path()), &all)
    };
    let o = eval(&["([2 Noise frequency(1)] x y)", "--at", "0,0"]);
    assert_eq!(stdout(&o), "-0.14743114720271694\n", "{}", stderr(&o));
    assert_eq!(stdout(&eval(&["(/ 1 3)", "--at=-1,0.5"])), "0.3333333333333333\n");
    assert_eq!(stdout(&eval(&["(+ x y)", "--at", "1,2"])), "3\n");
    assert_eq!(stdout(&eval(&["(or 1 0)", "--at", "0,0"])), "1\n");
    assert_eq!(stdout(&eval(&["(or 1 0)", "--at", "0,0", "--compat", "picogen-2008"])), "0\n");
    assert_eq!(stdout(&eval(&["(/ 0 0)", "--at", "0,0"])), "nan\n");
    let o = eval(&["(sinus x)", "--at", "0,0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("GGE8108") && stderr(&o).contains("<program>:1:5") && stderr(&o).contains("hint"));
    let o = eval(&["(? (< x 0) 0 (+ 1 (self (- x 1) y)))", "--at", "5,0", "--max-call-depth", "3"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("GGE8301"), "{}", stderr(&o));
    assert_eq!(eval(&["x", "--at", "0,0", "--compat", "nope"]).status.code(), Some(2));
}

#[test]
fn hs_files_check_render_and_tile_like_scripts() {
    let dir = tempfile::tempdir().unwrap();
    let program = "(+ 0.25 (* 0.5 ([2 LayeredNoise frequency(4)] x y)))\n";
    std::fs::write(dir.path().join("t.hs"), program).unwrap();
    std::fs::write(dir.path().join("t.txt"), program).unwrap();
    std::fs::write(dir.path().join("bad.hs"), "(+ 1\n  (sinus x))").unwrap();
    let run = |args: &[&str]| geogen_in(Some(dir.path()), args);
    assert_eq!(run(&["check", "t.hs"]).status.code(), Some(0));
    let o = run(&["check", "bad.hs"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("bad.hs:2:7") && stderr(&o).contains("GGE8108"), "{}", stderr(&o));
    // Whole render vs tiles: the same bytes (r16 is raw, so files can be compared by pixel).
    let o = run(&[
        "render",
        "t.hs",
        "-o",
        "whole",
        "--size",
        "48x32",
        "--origin=-16,-8",
        "--format",
        "r16",
        "-p",
        "UnitSize=40",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&[
        "tiles",
        "t.hs",
        "--region=-16,-8,48,32",
        "--tile",
        "16",
        "-o",
        "tiles",
        "--format",
        "r16",
        "-p",
        "UnitSize=40",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let whole = std::fs::read(dir.path().join("whole/main.r16")).unwrap();
    for (tx, ty) in [(-16i64, -8i64), (0, -8), (16, 8)] {
        let tile = std::fs::read(dir.path().join(format!("tiles/tile_{tx}_{ty}_main.r16"))).unwrap();
        for row in 0..16usize {
            let (wx, wy) = ((tx + 16) as usize, (ty + 8) as usize + row);
            let expected = &whole[(wy * 48 + wx) * 2..(wy * 48 + wx + 16) * 2];
            assert_eq!(&tile[row * 32..row * 32 + 32], expected, "tile {tx},{ty} row {row}");
        }
    }
    // --lang reads any file as Height-Slang; another dialect is another world for tiles.
    assert_eq!(run(&["render", "t.txt", "--lang", "hs", "-o", "txt", "--size", "8", "-q"]).status.code(), Some(0));
    let o = run(&[
        "tiles",
        "t.hs",
        "--region=-16,-8,48,32",
        "--tile",
        "16",
        "-o",
        "tiles",
        "--format",
        "r16",
        "-p",
        "UnitSize=40",
        "--compat",
        "picogen-2008",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("script (SHA-256)"), "{}", stderr(&o));
    assert_eq!(run(&["render", "t.txt", "--compat", "picogen-2008", "-o", "x"]).status.code(), Some(2));
}
