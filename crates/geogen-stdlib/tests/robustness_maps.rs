//! No accepted sequence of the neighbourhood, resampling and drawing operations (DistanceMap,
//! CellNoise, Pattern, Crop, DrawLine, Distort, Glaciate, Move, Rescale and the linear transforms)
//! makes the renderer panic, whatever the constants (NaN, infinities, huge distances and factors,
//! absurd coordinates and scales): it renders, or it returns an error; and heights stay in [-1, 1].

use geogen_render::{render, Rect, RenderConfig, RenderingSequence};
use geogen_stdlib::filters::*;
use geogen_stdlib::generators::*;
use geogen_stdlib::transforms::*;
use proptest::prelude::*;

fn extreme() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(1e300),
        Just(-1e300),
        Just(0.0),
        Just(-0.0),
        Just(1e-300),
        Just(4294967295.0),
        any::<f64>(),
        -3.0f64..3.0,
        -100.0f64..100.0,
    ]
}

/// One case: the operations applied in order; `Ok(true)` if the sequence rendered.
fn render_case(
    steps: &[(u8, f64, f64, f64, f64)],
    (x, y, w, h): (i64, i64, u64, u64),
    scale: f64,
) -> Result<bool, TestCaseError> {
    let mut s = RenderingSequence::new(scale).unwrap();
    let a = s.push_create(Gradient::new((0.0, 0.0), (10.0, 3.0), -1.0, 1.0), &[], None).unwrap();
    let b = s.push_create(Flat::new(0.5), &[], None).unwrap();
    let c = s.push_create(Flat::new(-0.5), &[], None).unwrap();
    let cell = |v: f64| if v.is_nan() { 1 } else { v.abs().clamp(1.0, u32::MAX as f64) as u32 };
    for &(kind, p, q, r, t) in steps {
        match kind {
            0 => s.push_create(DistanceMap { maximum_distance: p }, &[a], None),
            1 => s.push_create(CellNoise::new(cell(p), q as u32, 7), &[], None),
            2 => s.push_create(Pattern { a: (p, q), b: (r, t) }, &[a], None),
            3 => s.push_modify(Crop { a: (p, q), b: (r, t), replace: 0.25 }, a, &[], None),
            4 => s.push_modify(DrawLine { start: (p, q), end: (r, t), height: 1.0 }, a, &[], None),
            5 => s.push_modify(Distort { maximum_distance: p }, a, &[b, c], None),
            6 => s.push_modify(Glaciate { strength: p, include_negative: q > 0.0 }, a, &[], None),
            7 => s.push_modify(Move { offset: (p, q) }, a, &[], None),
            8 => s.push_modify(Rescale { horizontal: p, vertical: q }, a, &[], None),
            9 => match Transform::new("HeightMap.Transform", [p, q, r, t]) {
                Ok(op) => s.push_modify(op, a, &[], None),
                Err(_) => continue,
            },
            10 => s.push_modify(Distort { maximum_distance: q }, b, &[a, a], None),
            11 => s.push_modify(Rescale { horizontal: p.abs().clamp(0.1, 10.0), vertical: 0.1 }, b, &[], None),
            12 => s.push_modify(Move { offset: (p, 3.0) }, c, &[], None),
            _ => s.push_create(DistanceMap { maximum_distance: q.abs().min(30.0) }, &[c], None),
        }
        .unwrap();
    }
    // Yield rectangles past the coordinate range are rejected by push, not rendered.
    if s.push_yield(a, "main", Rect::new(x, y, w, h), None).is_err() {
        return Ok(false);
    }
    s.push_yield(b, "b", Rect::new(x, y, w, h), None).unwrap();
    match render(s, &RenderConfig { memory_limit: 64 << 20, ..RenderConfig::default() }) {
        Ok(out) => {
            for m in out.values() {
                prop_assert!(m.data().iter().all(|v| (-1.0..=1.0).contains(v)), "heights stay in [-1, 1]");
            }
            Ok(true)
        }
        Err(_) => Ok(false),
    }
}

#[test]
fn extreme_constants_never_panic() {
    let steps = prop::collection::vec((0u8..14, extreme(), extreme(), extreme(), extreme()), 1..6);
    let rect = (
        prop_oneof![Just(i64::MIN), Just(i64::MAX - 40), Just(i64::MIN / 2), -50i64..50],
        prop_oneof![Just(i64::MIN / 2), Just(i64::MAX - 30), -50i64..50],
        0u64..24,
        0u64..24,
    );
    let scale = prop_oneof![Just(1e-300), Just(1e300), Just(f64::MIN_POSITIVE), 0.01f64..10.0, Just(1.0)];
    let config = ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() };
    let rendered = std::cell::Cell::new(0u32);
    proptest::test_runner::TestRunner::new(config)
        .run(&(steps, rect, scale), |(steps, rect, scale)| {
            if render_case(&steps, rect, scale)? {
                rendered.set(rendered.get() + 1);
            }
            Ok(())
        })
        .unwrap();
    // Extreme cases mostly end in an error (memory plan, coordinate range); enough must render
    // for the property to mean something.
    assert!(rendered.get() >= 64, "only {} of 128 cases rendered", rendered.get());
}

/// A transform whose matrix cannot be inverted is refused when it is recorded (GGE2712).
#[test]
fn singular_and_non_finite_matrices_are_refused() {
    for m in [
        [1.0, 2.0, 2.0, 4.0],
        [0.0; 4],
        [f64::NAN, 0.0, 0.0, 1.0],
        [1e300, 0.0, 0.0, 1e300],
        [1e-300, 0.0, 0.0, 1e-300],
    ] {
        let e = Transform::new("HeightMap.Transform", m).unwrap_err();
        assert_eq!(e.code.to_string(), "GGE2712", "{m:?}");
    }
    assert!(Transform::new("HeightMap.Transform", [0.0, 1.0, -1.0, 0.0]).is_ok());
}
