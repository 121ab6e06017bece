//! No accepted sequence makes the renderer panic, whatever the constants (NaN, infinities, huge
//! radii, absurd coordinates): it renders, or it returns an error.

use geogen_kernels::noise::amplitude_units;
use geogen_render::{render, Rect, RenderConfig, RenderingSequence};
use geogen_stdlib::combiners::*;
use geogen_stdlib::filters::*;
use geogen_stdlib::generators::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::sync::atomic::{AtomicU32, Ordering};

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
        any::<f64>(),
        -3.0f64..3.0,
    ]
}

/// How many cases rendered (the rest were refused: a yield past the coordinate range, a plan over
/// the memory limit). A property whose cases are all refused tests nothing.
static RENDERED: AtomicU32 = AtomicU32::new(0);
static TRIED: AtomicU32 = AtomicU32::new(0);

#[test]
fn extreme_constants_never_panic() {
    let strategy = (
        prop::collection::vec((0u8..12, extreme(), extreme(), extreme()), 1..8),
        prop_oneof![Just(i64::MIN), Just(i64::MAX - 40), -50i64..50, -50i64..50],
        prop_oneof![Just(i64::MIN / 2), -50i64..50, -50i64..50],
        0u64..24,
        0u64..24,
        prop_oneof![Just(1e-300), Just(1e300), Just(f64::MIN_POSITIVE), 0.01f64..10.0, 0.01f64..10.0],
    );
    let mut runner = TestRunner::new(Config { cases: 64, failure_persistence: None, ..Config::default() });
    runner
        .run(&strategy, |(steps, x, y, w, h, scale)| extreme_case(steps, x, y, w, h, scale))
        .unwrap_or_else(|e| panic!("{e}"));
    let (rendered, tried) = (RENDERED.load(Ordering::Relaxed), TRIED.load(Ordering::Relaxed));
    eprintln!("robustness: {rendered} of {tried} cases rendered");
    assert!(rendered * 4 >= tried, "only {rendered} of {tried} cases rendered");
}

fn extreme_case(
    steps: Vec<(u8, f64, f64, f64)>,
    x: i64,
    y: i64,
    w: u64,
    h: u64,
    scale: f64,
) -> Result<(), TestCaseError> {
    TRIED.fetch_add(1, Ordering::Relaxed);
    {
        let mut s = RenderingSequence::new(scale).unwrap();
        let a = s.push_create(Flat::new(0.5), &[], None).unwrap();
        let b = s.push_create(Gradient::new((0.0, 0.0), (10.0, 3.0), -1.0, 1.0), &[], None).unwrap();
        for (kind, p, q, r) in steps {
            match kind {
                0 => s.push_modify(Blur::new(p), a, &[], None),
                1 => s.push_modify(AddNumber::new(p), a, &[], None),
                2 => s.push_modify(MultiplyNumber::new(p), a, &[], None),
                3 => s.push_modify(ClampHeights::new(p, q), a, &[], None),
                4 => s.push_modify(CropHeights::new(p, q, r), a, &[], None),
                5 => s.push_modify(
                    NoiseLayer::new(p.abs().min(1e9) as u32, amplitude_units(q), 1, 2, r > 0.0),
                    a,
                    &[],
                    None,
                ),
                6 => s.push_modify(AddMasked::with_number(p), a, &[b], None),
                7 => s.push_modify(Combine, a, &[b, a], None),
                8 => s.push_create(RadialGradient::new((p, q), r, p, q), &[], None),
                9 => s.push_create(Gradient::new((p, q), (r, p), q, r), &[], None),
                10 => s.push_modify(Fill::new(p), b, &[], None),
                _ => s.push_modify(AddMap, b, &[a], None),
            }
            .unwrap();
        }
        // Yield rectangles past the coordinate range are rejected by push, not rendered.
        if s.push_yield(a, "main", Rect::new(x, y, w, h), None).is_ok() {
            s.push_yield(b, "b", Rect::new(x, y, w, h), None).unwrap();
            if let Ok(out) = render(s, &RenderConfig { memory_limit: 64 << 20, ..RenderConfig::default() }) {
                RENDERED.fetch_add(1, Ordering::Relaxed);
                for m in out.values() {
                    prop_assert!(m.data().iter().all(|v| (-1.0..=1.0).contains(v)), "heights stay in [-1, 1]");
                }
            }
        }
    }
    Ok(())
}
