//! Whole-map drainage (`HeightMap.Drainage`) through the library: the river network does not
//! depend on the render's scale, renders sharing a `SolveCache` solve once, and an infinite map's
//! super-tiles tile exactly.

use geogen::{CompileOptions, HeightMap, RenderConfig, RunSettings, Script, SolveCache};

/// The flagship example, on a small map.
fn flagship() -> Script {
    let source = include_str!("../../../../examples/drainage.ggs");
    Script::compile("drainage.ggs", source, &CompileOptions::default()).unwrap_or_else(|f| panic!("{f}"))
}

fn settings(map: u32, scale: f64, resolution: u32) -> RunSettings {
    let side = (f64::from(map) * scale) as u32;
    RunSettings {
        seed: 5,
        map_width: Some(map),
        map_height: Some(map),
        render_width: Some(side),
        render_height: Some(side),
        render_scale: scale,
        parameters: vec![("Resolution".into(), resolution.to_string())],
        ..RunSettings::default()
    }
}

fn render(
    script: &Script,
    settings: &RunSettings,
    config: &RenderConfig,
) -> std::collections::BTreeMap<String, HeightMap> {
    script.render(settings, config, None).unwrap_or_else(|f| panic!("{f}")).maps
}

/// The river mask rendered at scale 0.5 against the mask at scale 1 taken at every other pixel:
/// the networks are one (the solve is on a grid of its own, whatever the scale; only the pixels
/// differ). Measured as the share of each mask's river pixels (a quarter covered or more) that the
/// other has within one pixel.
#[test]
fn the_river_network_is_the_same_at_half_scale() {
    let script = flagship();
    let map = 384;
    let full = render(&script, &settings(map, 1.0, 192), &RenderConfig::default());
    let half = render(&script, &settings(map, 0.5, 192), &RenderConfig::default());
    let (full, half) = (&full["rivers"], &half["rivers"]);
    let side = (map / 2) as i64;
    let river = |m: &HeightMap, x: i64, y: i64, step: i64| m.get(x * step, y * step).is_some_and(|v| v >= 0.25);
    let near =
        |m: &HeightMap, x: i64, y: i64, step: i64| (-1..=1).any(|dy| (-1..=1).any(|dx| river(m, x + dx, y + dy, step)));
    let (mut a, mut a_hit, mut b, mut b_hit, mut same) = (0u32, 0u32, 0u32, 0u32, 0u32);
    for y in 0..side {
        for x in 0..side {
            if river(half, x, y, 1) {
                a += 1;
                a_hit += u32::from(near(full, x, y, 2));
                same += u32::from(river(full, x, y, 2));
            }
            if river(full, x, y, 2) {
                b += 1;
                b_hit += u32::from(near(half, x, y, 1));
            }
        }
    }
    assert!(a > 200 && b > 200, "too few river pixels to compare ({a}, {b})");
    let (overlap_a, overlap_b) = (f64::from(a_hit) / f64::from(a), f64::from(b_hit) / f64::from(b));
    eprintln!(
        "{a} and {b} river pixels of {}; at half scale found at full scale within a pixel: {overlap_a:.3}, \
         on the very pixel: {:.3}; the other way within a pixel: {overlap_b:.3}",
        side * side,
        f64::from(same) / f64::from(a)
    );
    assert!(overlap_a >= 0.8 && overlap_b >= 0.8, "overlaps {overlap_a:.3} and {overlap_b:.3}");
}

/// Renders of tiles sharing one cache solve once between them, and each tile has the pixels of the
/// same rectangle of a render that solved alone.
#[test]
fn tiles_sharing_a_cache_solve_once_and_match_a_render_that_solved_alone() {
    let script = flagship();
    let whole = render(&script, &settings(192, 1.0, 96), &RenderConfig::default());
    let cache = SolveCache::new(1 << 30);
    let config = RenderConfig { solutions: Some(cache.clone()), ..RenderConfig::default() };
    for (x, y, w, h) in [(0, 0, 96, 96), (96, 0, 96, 96), (40, 130, 70, 62)] {
        let tile = RunSettings {
            render_origin: (x, y),
            render_width: Some(w),
            render_height: Some(h),
            ..settings(192, 1.0, 96)
        };
        for (name, part) in render(&script, &tile, &config) {
            let r = part.rect();
            for py in r.y..r.y + r.height as i64 {
                for px in r.x..r.x + r.width as i64 {
                    assert_eq!(
                        part.get(px, py).map(f32::to_bits),
                        whole[&name].get(px, py).map(f32::to_bits),
                        "{name} at ({px}, {py})"
                    );
                }
            }
        }
    }
    assert_eq!(cache.solves_computed(), 1, "three tiles of three maps each solved once in all");
}

/// An infinite map is drained in super-tiles blended at their seams: a tile across a seam has
/// the pixels of a larger render, with one thread and with three.
#[test]
fn infinite_drainage_tiles_exactly_across_super_tile_seams() {
    let source = "var land = HeightMap.Noise(CreateNoiseLayers(2, 64, 0.5), 3).Add(0.2);\n\
                  land.Drainage(1, \"height\", 1, 1, 64);\nyield land;";
    let script = Script::compile("infinite.ggs", source, &CompileOptions::default()).unwrap_or_else(|f| panic!("{f}"));
    let at = |origin: (i64, i64), size: u32| RunSettings {
        render_origin: origin,
        render_width: Some(size),
        render_height: Some(size),
        ..RunSettings::default()
    };
    // Super-tile 0 spans [-32, 32): this covers the seams at ±32 and their blend bands.
    let big = render(&script, &at((-60, -60), 120), &RenderConfig::default());
    let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    let tile = pool.install(|| render(&script, &at((20, -45), 30), &RenderConfig::default()));
    let (big, tile) = (&big["main"], &tile["main"]);
    let r = tile.rect();
    let mut differs = 0;
    for y in r.y..r.y + r.height as i64 {
        for x in r.x..r.x + r.width as i64 {
            differs += usize::from(tile.get(x, y).map(f32::to_bits) != big.get(x, y).map(f32::to_bits));
        }
    }
    assert_eq!(differs, 0, "{differs} pixels of the tile differ");
    // The blend leaves no seam: neighbouring pixels across x = 32 differ no more than elsewhere.
    let step = |x: i64| (big.get(x + 1, 0).unwrap() - big.get(x, 0).unwrap()).abs();
    let typical: f32 = (-50..-10).map(step).sum::<f32>() / 40.0;
    assert!(step(31) < 6.0 * typical + 1e-3, "seam step {} against {typical}", step(31));
}
