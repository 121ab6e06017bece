//! Parts shared between renders (`geogen_render::SharedParts`, what `geogen tiles` gives its
//! blocks): a block that takes a part another block computed, and skips the steps that led to it,
//! has every pixel of the same rectangle of one large render, whether the blocks run one after
//! another or at once, and whatever the scale and origin; a render given up after claiming a part
//! lets the others go on.

use std::sync::atomic::{AtomicUsize, Ordering};

use geogen::{CompileOptions, HeightMap, RenderConfig, RunSettings, Script, SharedParts};

/// A feature made once (noise under a blurred mask, added to a blurred cone), placed three times
/// by rotations and moves on a constant sea, then the sea roughened: the part made once is the
/// same in every block that shows a copy.
const SCRIPT: &str = "
var rough = HeightMap.Noise({8: 0.6, 32: 0.4}, 3).Multiply(0.5);
var mask = HeightMap.RadialGradient([0, 0], 34, 1, 0).Rescale(2, 1).Multiply(3).Blur(7);
var feature = HeightMap.RadialGradient([0, 0], 26, 1, -1).Multiply(0.9).Rescale(2, 1).Blur(5).Add(rough, mask);
var world = HeightMap.Flat(-1);
for (var k = 0; k < 3; k++)
{
    var copy = HeightMap.Clone(feature).Rotate(k * 2.1 + 0.4).Move([70 + k * 60, 80 + (k % 2) * 70]);
    world.Unify(copy);
}
var shore = HeightMap.Clone(world).ClampHeights(-1, -0.1).Invert().Blur(3);
world.Add(HeightMap.Noise({4: 1}, 9).Multiply(0.2), shore);
yield world;
";

fn script() -> Script {
    Script::compile("shared.ggs", SCRIPT, &CompileOptions::default()).expect("the test script compiles")
}

fn settings(scale: f64, (x, y, w, h): (i64, i64, u32, u32)) -> RunSettings {
    RunSettings {
        seed: 5,
        render_origin: (x, y),
        render_width: Some(w),
        render_height: Some(h),
        render_scale: scale,
        ..RunSettings::default()
    }
}

fn render(script: &Script, scale: f64, rect: (i64, i64, u32, u32), shared: Option<&SharedParts>) -> HeightMap {
    let config = RenderConfig { shared: shared.cloned(), ..RenderConfig::default() };
    let rendered = script.render(&settings(scale, rect), &config, None).expect("the test script renders");
    rendered.maps["main"].clone()
}

fn assert_same_pixels(whole: &HeightMap, block: &HeightMap, what: &str) {
    let r = block.rect();
    assert!(!r.is_empty(), "{what}: an empty block");
    for y in r.y..r.y + r.height as i64 {
        for x in r.x..r.x + r.width as i64 {
            assert_eq!(
                whole.get(x, y).map(f32::to_bits),
                block.get(x, y).map(f32::to_bits),
                "{what}: pixel ({x}, {y}) differs from the large render"
            );
        }
    }
}

/// Blocks of `side` covering `(x, y, w, h)`, in rows.
fn blocks((x, y, w, h): (i64, i64, u32, u32), side: u32) -> Vec<(i64, i64, u32, u32)> {
    let mut out = Vec::new();
    for by in (0..h).step_by(side as usize) {
        for bx in (0..w).step_by(side as usize) {
            out.push((x + i64::from(bx), y + i64::from(by), side.min(w - bx), side.min(h - by)));
        }
    }
    out
}

#[test]
fn blocks_sharing_parts_equal_the_large_render_one_after_another_and_at_once() {
    let script = script();
    for (scale, region, side) in
        [(1.0, (0, 0, 260, 240), 100), (0.75, (-13, 7, 203, 190), 64), (1.5, (17, -9, 300, 310), 128)]
    {
        let whole = render(&script, scale, region, None);
        let parts = SharedParts::new(1 << 30);
        for block in blocks(region, side) {
            let shared = render(&script, scale, block, Some(&parts));
            assert_same_pixels(&whole, &shared, &format!("scale {scale}, block {block:?} after another"));
        }
        assert!(parts.finished() > 0, "scale {scale}: no part was shared");
        // At once: two threads taking blocks in turn, with a fresh cache (claims and waits).
        let parts = SharedParts::new(1 << 30);
        let list = blocks(region, side);
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| {
                    while let Some(&block) = list.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let shared = render(&script, scale, block, Some(&parts));
                        assert_same_pixels(&whole, &shared, &format!("scale {scale}, block {block:?} at once"));
                    }
                });
            }
        });
        assert!(parts.finished() > 0, "scale {scale}: no part was shared at once");
    }
}

#[test]
fn a_cache_too_small_for_a_part_keeps_nothing_and_changes_nothing() {
    let script = script();
    let region = (0, 0, 260, 240);
    let whole = render(&script, 1.0, region, None);
    let parts = SharedParts::new(16);
    for block in blocks(region, 130) {
        assert_same_pixels(&whole, &render(&script, 1.0, block, Some(&parts)), "tiny cache");
    }
    assert_eq!((parts.finished(), parts.held_bytes()), (0, 0));
}

#[test]
fn a_render_given_up_after_claiming_a_part_lets_the_next_one_compute_it() {
    let script = script();
    let parts = SharedParts::new(1 << 30);
    let config = RenderConfig { shared: Some(parts.clone()), ..RenderConfig::default() };
    let block = (0, 0, 130, 120);
    // Stops before the first rendering step: the renderer (and its claims) is dropped.
    let calls = AtomicUsize::new(0);
    let stopped = script
        .render_until(&settings(1.0, block), &config, None, &|| calls.fetch_add(1, Ordering::Relaxed) > 0)
        .expect("no failure");
    assert!(stopped.is_none(), "the render was not given up");
    assert_eq!(parts.finished(), 0);
    // The next render would wait forever on a claim left behind; it claims and fills it instead.
    let whole = render(&script, 1.0, (0, 0, 260, 240), None);
    assert_same_pixels(&whole, &render(&script, 1.0, block, Some(&parts)), "after a given-up render");
    assert!(parts.finished() > 0);
}
