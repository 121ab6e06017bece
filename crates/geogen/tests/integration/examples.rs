//! Every example script in `examples/` compiles, renders at 1000×1000 (finite maps: map size 1000),
//! and its tiles equal the same rectangles of the full render bit for bit (tile-exactness on real
//! scripts, not only on generated ones).

use std::path::Path;

use geogen::{CompileOptions, RenderConfig, RunSettings, Script};

const SIZE: u32 = 1000;
/// Tiles that straddle the quarters of the map, of odd sizes.
const TILES: [((i64, i64), (u32, u32)); 3] = [((0, 0), (333, 500)), ((333, 250), (500, 417)), ((917, 911), (83, 89))];

fn examples() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "ggs"))
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(e.path()).unwrap_or_else(|err| panic!("{name}: {err}"));
            (name, text)
        })
        .collect();
    out.sort();
    out
}

fn settings(origin: (i64, i64), size: (u32, u32)) -> RunSettings {
    RunSettings {
        seed: 7,
        map_width: Some(SIZE),
        map_height: Some(SIZE),
        render_origin: origin,
        render_width: Some(size.0),
        render_height: Some(size.1),
        ..RunSettings::default()
    }
}

#[test]
fn every_example_renders_and_its_tiles_match_the_full_render() {
    let examples = examples();
    assert!(examples.len() >= 6, "only {} examples found", examples.len());
    for (name, source) in examples {
        let script = Script::compile(&name, &source, &CompileOptions::default()).unwrap_or_else(|f| panic!("{f}"));
        let full = script
            .render(&settings((0, 0), (SIZE, SIZE)), &RenderConfig::default(), None)
            .unwrap_or_else(|f| panic!("{name}: {f}"));
        for (origin, size) in TILES {
            let tile = script
                .render(&settings(origin, size), &RenderConfig::default(), None)
                .unwrap_or_else(|f| panic!("{name}: {f}"));
            for (map, part) in &tile.maps {
                let whole = &full.maps[map];
                let r = part.rect();
                for y in r.y..r.y + r.height as i64 {
                    for x in r.x..r.x + r.width as i64 {
                        let (a, b) = (whole.get(x, y), part.get(x, y));
                        assert!(
                            a.map(f32::to_bits) == b.map(f32::to_bits),
                            "{name}, map {map}: pixel ({x}, {y}) is {b:?} in the tile {origin:?} {size:?} but {a:?} in the full render"
                        );
                    }
                }
            }
        }
    }
}
