//! The tile contract for Height-Slang files (`.hs`, compiled through their wrapper script): a
//! random program rendered over a large rectangle and over a random tile of it, at a random scale
//! and unit size, gives the tile's pixels bit for bit; and 1 and 3 threads give the same bits.
//! (`HeightMap.FromHeightSlang` chained with other operations is covered by `tile_contract.rs`,
//! which draws Height-Slang programs for it.)

use geogen::{CompileOptions, Dialect, HeightMap, RenderConfig, RunSettings, Script};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, TestRunner};

fn program() -> impl Strategy<Value = String> {
    let shapes = vec![
        "(+ (* K (sin (* 9 x))) (* 0.5 ([2 LayeredNoise frequency(3)] x y)))",
        "(? (< (frac (* K x)) 0.5) ([2 Noise filter(bilinear)] x y) (- y x))",
        "([2 Layers layercount(3) persistence((* x K))] x (neg y))",
        "(lerp ([2 Noise seed(3) filter(nearest) frequency(5)] x y) (abs (- y 0.3)) K)",
        "(* K (? (< (abs x) 0.25) 1 (* 0.5 (self (* x 0.5) y))))",
        "(/ (floor (* 16 x)) (+ K (* 16 (abs y))))",
        "(or (>= x K) (<> (trunc (* 4 y)) 0))",
    ];
    (select(shapes), 1u32..=16).prop_map(|(s, k)| s.replace('K', &format!("{}", f64::from(k) / 8.0)))
}

#[derive(Clone, Debug)]
struct Case {
    program: String,
    dialect: Dialect,
    unit_size: f64,
    scale: f64,
    big: (i64, i64, u32, u32),
    tile: (i64, i64, u32, u32),
}

fn case() -> impl Strategy<Value = Case> {
    let dialect = prop_oneof![Just(Dialect::Documented), Just(Dialect::Picogen2008)];
    (
        program(),
        dialect,
        select(vec![1.0, 16.0, 50.0, 333.0]),
        select(vec![1.0, 0.5, 0.25, 1.5, 2.0]),
        (-60i64..=30, -60i64..=30, 8u32..=48, 8u32..=48),
    )
        .prop_flat_map(|(program, dialect, unit_size, scale, big)| {
            let (bx, by, bw, bh) = big;
            ((0..bw), (0..bh)).prop_flat_map(move |(ox, oy)| {
                let program = program.clone();
                (1..=bw - ox, 1..=bh - oy).prop_map(move |(tw, th)| Case {
                    program: program.clone(),
                    dialect,
                    unit_size,
                    scale,
                    big,
                    tile: (bx + i64::from(ox), by + i64::from(oy), tw, th),
                })
            })
        })
}

fn render(case: &Case, (x, y, w, h): (i64, i64, u32, u32)) -> HeightMap {
    let script =
        Script::compile_height_slang("case.hs", case.program.as_bytes(), &CompileOptions::default(), case.dialect)
            .unwrap_or_else(|f| panic!("{f}\n{case:?}"));
    let settings = RunSettings {
        parameters: vec![("UnitSize".into(), case.unit_size.to_string())],
        render_origin: (x, y),
        render_width: Some(w),
        render_height: Some(h),
        render_scale: case.scale,
        ..RunSettings::default()
    };
    let mut rendered =
        script.render(&settings, &RenderConfig::default(), None).unwrap_or_else(|f| panic!("{f}\n{case:?}"));
    rendered.maps.remove("main").expect("main")
}

fn pixel(map: &HeightMap, x: i64, y: i64) -> f32 {
    let r = map.rect();
    map.data()[(y - r.y) as usize * r.width as usize + (x - r.x) as usize]
}

#[test]
fn a_tile_of_a_height_slang_render_has_the_bits_of_the_larger_render() {
    let mut runner = TestRunner::new(Config { cases: 48, ..Config::default() });
    runner
        .run(&case(), |case| {
            let big = render(&case, case.big);
            let tile = render(&case, case.tile);
            let (tx, ty, tw, th) = case.tile;
            for y in ty..ty + i64::from(th) {
                for x in tx..tx + i64::from(tw) {
                    let (a, b) = (pixel(&tile, x, y), pixel(&big, x, y));
                    prop_assert_eq!(a.to_bits(), b.to_bits(), "pixel ({}, {}): tile {} vs {}\n{:?}", x, y, a, b, case);
                }
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn one_and_three_threads_give_the_same_bits() {
    let mut runner = TestRunner::new(Config { cases: 12, ..Config::default() });
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let three = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    runner
        .run(&case(), |case| {
            let region = (case.big.0, case.big.1, 96, 80);
            let a = one.install(|| render(&case, region));
            let b = three.install(|| render(&case, region));
            prop_assert!(a.data().iter().zip(b.data()).all(|(a, b)| a.to_bits() == b.to_bits()), "{:?}", case);
            Ok(())
        })
        .unwrap();
}
