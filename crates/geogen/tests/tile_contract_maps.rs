//! The tile contract (spec README §4) for the map operations that read neighbourhoods, move pixels
//! or change extents: DistanceMap, ConvexityMap, CellNoise, Pattern, Crop, DrawLine, Distort,
//! Glaciate, Move, Rescale, Rotate, Shear, Flip and Transform.
//!
//! Each case is a script: noise (so every pixel differs and margins matter), then a chain of 1–3
//! of these operations with random arguments, sometimes followed by a blur. It is rendered over a
//! large rectangle and over a random tile of it, at a random scale, with negative origins; every
//! pixel of the tile must have exactly the bits of the large render. A second property compares
//! 1 and 3 threads.

use std::fmt;

use geogen::{CompileOptions, RenderConfig, Rendered, RunSettings, Script};
use proptest::prelude::*;
use proptest::sample::select;

fn number(lo: i32, hi: i32, divisor: f64) -> impl Strategy<Value = String> {
    (lo..=hi).prop_map(move |v| format!("{}", f64::from(v) / divisor))
}

fn point() -> impl Strategy<Value = String> {
    (-60i32..=60, -60i32..=60).prop_map(|(x, y)| format!("[{x}, {y}]"))
}

fn direction() -> impl Strategy<Value = String> {
    select(vec!["Direction.Horizontal".to_string(), "Direction.Vertical".to_string()])
}

/// An invertible matrix with entries in [-2, 2] that does not blow the bounds up.
fn matrix() -> impl Strategy<Value = String> {
    (-20i32..=20, -20i32..=20, -20i32..=20, -20i32..=20)
        .prop_filter("well-conditioned", |&(a, b, c, d)| (a * d - b * c).abs() >= 25)
        .prop_map(|(a, b, c, d)| {
            let f = |v: i32| f64::from(v) / 10.0;
            format!("{}, {}, {}, {}", f(a), f(b), f(c), f(d))
        })
}

/// One statement transforming the map `m`.
fn operation() -> BoxedStrategy<String> {
    prop_oneof![
        (0u32..=24).prop_map(|d| format!("m = HeightMap.DistanceMap(m, {d});")),
        (0u32..=8).prop_map(|r| format!("m = HeightMap.ConvexityMap(m, {r});")),
        (1u32..=24, 0u32..100).prop_map(|(n, s)| format!("m.Add(HeightMap.CellNoise({n}, {s}));")),
        (point(), point()).prop_map(|(a, b)| format!("m = HeightMap.Pattern(m, {a}, {b});")),
        (point(), point(), number(-100, 100, 100.0)).prop_map(|(a, b, r)| format!("m.Crop({a}, {b}, {r});")),
        (point(), point(), number(-100, 100, 100.0)).prop_map(|(a, b, h)| format!("m.DrawLine({a}, {b}, {h});")),
        ((1u32..=40), (0u32..=10), (0u32..100)).prop_map(|(p, d, s)| format!("m.Distort({p}, {d}, {s});")),
        (number(0, 100, 100.0), any::<bool>()).prop_map(|(s, n)| format!("m.Glaciate({s}, {n});")),
        point().prop_map(|o| format!("m.Move({o});")),
        (number(3, 40, 10.0), number(3, 40, 10.0)).prop_map(|(h, v)| format!("m.Rescale({h}, {v});")),
        number(-700, 700, 100.0).prop_map(|a| format!("m.Rotate({a});")),
        (number(-20, 20, 10.0), direction()).prop_map(|(f, d)| format!("m.Shear({f}, {d});")),
        direction().prop_map(|d| format!("m.Flip({d});")),
        matrix().prop_map(|t| format!("m.Transform({t});")),
    ]
    .boxed()
}

fn script() -> impl Strategy<Value = String> {
    let layers = prop_oneof![Just("{4: 0.5, 16: 0.5}"), Just("{8: 1}"), Just("{2: 0.3, 32: 0.7}"), Just("{1: 0.5}")];
    (layers, 0u32..100, prop::collection::vec(operation(), 1..=3), prop::option::of(0u32..=4)).prop_map(
        |(layers, seed, ops, blur)| {
            let mut s = format!("var m = HeightMap.Noise({layers}, {seed});\n");
            for op in ops {
                s.push_str(&op);
                s.push('\n');
            }
            if let Some(r) = blur {
                s.push_str(&format!("m.Blur({r});\n"));
            }
            s.push_str("yield m;\n");
            s
        },
    )
}

#[derive(Clone)]
struct Case {
    source: String,
    seed: u32,
    scale: f64,
    big: (i64, i64, u32, u32),
    tile: (i64, i64, u32, u32),
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "seed {}, scale {}, large render {:?}, tile {:?}", self.seed, self.scale, self.big, self.tile)?;
        write!(f, "script:\n{}", self.source)
    }
}

fn case() -> impl Strategy<Value = Case> {
    let scales = select(vec![1.0, 1.0, 0.5, 0.25, 0.75, 1.5, 2.0]);
    (script(), 0u32..50, scales, (-60i64..=20, -60i64..=20, 8u32..=40, 8u32..=40)).prop_flat_map(
        |(source, seed, scale, (x, y, w, h))| {
            ((0..w), (0..h)).prop_flat_map(move |(tx, ty)| {
                let source = source.clone();
                ((1..=w - tx), (1..=h - ty)).prop_map(move |(tw, th)| Case {
                    source: source.clone(),
                    seed,
                    scale,
                    big: (x, y, w, h),
                    tile: (x + i64::from(tx), y + i64::from(ty), tw, th),
                })
            })
        },
    )
}

fn render(script: &Script, case: &Case, (x, y, w, h): (i64, i64, u32, u32)) -> Result<Rendered, TestCaseError> {
    let settings = RunSettings {
        seed: case.seed,
        render_origin: (x, y),
        render_width: Some(w),
        render_height: Some(h),
        render_scale: case.scale,
        ..RunSettings::default()
    };
    script
        .render(&settings, &RenderConfig::default(), None)
        .map_err(|f| TestCaseError::fail(format!("render failed:\n{f}\n{case:?}")))
}

fn compile(case: &Case) -> Script {
    Script::compile("tile.ggs", &case.source, &CompileOptions::default())
        .unwrap_or_else(|f| panic!("a generated script does not compile:\n{f}\n{case:?}"))
}

fn check_tile(case: &Case) -> Result<(), TestCaseError> {
    let script = compile(case);
    let big = render(&script, case, case.big)?;
    let tile = render(&script, case, case.tile)?;
    let (whole, part) = (&big.maps["main"], &tile.maps["main"]);
    let (tx, ty, tw, th) = case.tile;
    for y in ty..ty + i64::from(th) {
        for x in tx..tx + i64::from(tw) {
            let (a, b) = (whole.get(x, y), part.get(x, y));
            prop_assert!(
                a.map(f32::to_bits) == b.map(f32::to_bits),
                "pixel ({}, {}) is {:?} in the tile but {:?} in the large render\n{:?}",
                x,
                y,
                b,
                a,
                case
            );
        }
    }
    Ok(())
}

fn check_threads(case: &Case) -> Result<(), TestCaseError> {
    let script = compile(case);
    let mut results = Vec::new();
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a rayon pool");
        let rendered = pool.install(|| render(&script, case, case.big))?;
        results.push(rendered.maps["main"].data().iter().map(|h| h.to_bits()).collect::<Vec<u32>>());
    }
    prop_assert!(results[0] == results[1], "1 and 3 threads give different bits\n{:?}", case);
    Ok(())
}

/// 48 cases per property, or `PROPTEST_CASES` for a longer search.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_tile_equals_the_same_rectangle_of_a_larger_render(case in case()) {
        check_tile(&case)?;
    }

    #[test]
    fn one_and_three_threads_give_the_same_bits(case in case()) {
        check_threads(&case)?;
    }
}

/// Every operation once, on tiles across the origin, at scales where rounding is most likely to
/// differ between a tile and a larger render.
#[test]
fn each_operation_on_fixed_tiles_and_scales() {
    let operations = [
        "m = HeightMap.DistanceMap(m, 9);",
        "m = HeightMap.ConvexityMap(m, 3);",
        "m.Add(HeightMap.CellNoise(7, 2));",
        "m = HeightMap.Pattern(m, [-5, 3], [6, 11]);",
        "m.Crop([-7, -3], [9, 5], 0.2);",
        "m.DrawLine([-40, -13], [37, 29], 1); m.DrawLine([5, -40], [-3, 40], -1);",
        "m.Distort(12, 5, 1);",
        "m.Glaciate(0.3, true);",
        "m.Move([7, -5]);",
        "m.Rescale(0.3, 2.5);",
        "m.Rotate(0.7);",
        "m.Shear(-0.6, Direction.Vertical);",
        "m.Flip(Direction.Horizontal);",
        "m.Transform(0.8, 0.3, -0.4, 1.1);",
    ];
    for op in operations {
        let source = format!("var m = HeightMap.Noise({{4: 0.5, 16: 0.5}}, 3);\n{op}\nm.Blur(2);\nyield m;\n");
        for scale in [1.0, 0.5, 0.75, 2.0] {
            for tile in [(-7, -9, 5, 3), (-1, -1, 2, 2), (0, 0, 1, 1), (3, -20, 17, 25)] {
                let case = Case { source: source.clone(), seed: 1, scale, big: (-24, -24, 48, 48), tile };
                if let Err(e) = check_tile(&case) {
                    panic!("{e}");
                }
            }
        }
    }
}
