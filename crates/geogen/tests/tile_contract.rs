//! The tile and scale contract (spec README §4) through the whole pipeline: script text →
//! simulation → rendering.
//!
//! Random scripts are built from the script-visible map operations (random chains of 1–6
//! operations on 1–3 maps, random in-range arguments, random seeds, infinite maps with absolute
//! points and finite maps with relative points, at a random render scale). Each is rendered once
//! over a large rectangle and once over a random sub-rectangle of it (negative origins included on
//! infinite maps): every pixel of the tile must have exactly the bits of the same pixel of the large
//! render. A second property renders the same script in a 1-thread and a 3-thread rayon pool and
//! requires identical bits. Every large render is also compared with the same render executed one
//! step at a time: the renderer fuses row-local steps into band passes, which must not change a bit.

mod common;

use std::collections::BTreeMap;
use std::fmt;

use common::ops::{self, Vars};
use geogen::{CompileOptions, HeightMap, RenderConfig, Rendered, RunSettings, Script};
use geogen_render::Renderer;
use geogen_stdlib::operation::{self, Entry, Kind, Owner};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, TestRunner};

/// The operations a script with these variables can call.
fn callable_entries(vars: Vars) -> Vec<&'static Entry> {
    operation::all().filter(|e| ops::callable(e, vars)).collect()
}

/// One statement: a call of a random operation, or a yield in the middle.
fn statement(vars: Vars, yield_index: usize) -> BoxedStrategy<String> {
    let calls: Vec<BoxedStrategy<String>> =
        callable_entries(vars).into_iter().map(|e| ops::call_statement(e, vars, ops::Arguments::Valid)).collect();
    prop_oneof![
        9 => proptest::strategy::Union::new(calls),
        1 => (0..vars.maps).prop_map(move |m| format!("yield m{m} as \"y{yield_index}\";")),
    ]
    .boxed()
}

/// The end of every script: the main map, and the first profile seen through a projection.
fn epilogue(vars: Vars) -> String {
    let mut s = String::from("yield m0;\n");
    if vars.profiles > 0 {
        s.push_str("yield HeightMap.Projection(p0, Direction.Vertical) as \"profile\";\n");
    }
    s
}

fn variables(finite: bool) -> impl Strategy<Value = Vars> {
    let profiles = if ops::profiles_available() { 0..=2usize } else { 0..=0usize };
    (1usize..=3, profiles).prop_map(move |(maps, profiles)| Vars { maps, profiles, finite })
}

fn header(finite: bool) -> &'static str {
    if finite {
        "metadata { Width: Finite, Height: Finite }\n"
    } else {
        ""
    }
}

/// A random script: variables, 1–6 random operations (yields in between), the epilogue.
fn script_source(finite: bool) -> impl Strategy<Value = String> {
    variables(finite).prop_flat_map(move |vars| {
        let statements: Vec<BoxedStrategy<String>> = (0..6).map(|k| statement(vars, k)).collect();
        (ops::declarations(vars), statements, 1usize..=6).prop_map(move |(decls, statements, n)| {
            format!("{}{decls}{}\n{}", header(finite), statements[..n].join("\n"), epilogue(vars))
        })
    })
}

/// A random script that calls `entry` once, between random statements.
fn script_calling(entry: &'static Entry, finite: bool) -> impl Strategy<Value = String> {
    variables(finite)
        .prop_map(move |mut vars| {
            // The operation may need objects of a kind the draw did not give.
            if entry.signature.params.iter().any(|p| p.kind == Kind::Object(Owner::HeightProfile))
                || entry.signature.owner == Owner::HeightProfile
            {
                vars.profiles = vars.profiles.max(1);
            }
            vars
        })
        .prop_flat_map(move |vars| {
            let before: Vec<BoxedStrategy<String>> = (0..2).map(|k| statement(vars, k)).collect();
            let after: Vec<BoxedStrategy<String>> = (2..4).map(|k| statement(vars, k)).collect();
            (
                ops::declarations(vars),
                before,
                ops::call_statement(entry, vars, ops::Arguments::Valid),
                after,
                0usize..=2,
                0usize..=2,
            )
                .prop_map(move |(decls, before, call, after, nb, na)| {
                    format!(
                        "{}{decls}{}\n{call}\n{}\n{}",
                        header(finite),
                        before[..nb].join("\n"),
                        after[..na].join("\n"),
                        epilogue(vars)
                    )
                })
        })
}

/// A random script and where to render it.
#[derive(Clone)]
struct Case {
    finite: bool,
    source: String,
    seed: u32,
    scale: f64,
    map_size: (u32, u32),
    /// The large render: origin and size in physical pixels.
    big: ((i64, i64), (u32, u32)),
    /// The tile, inside the large render.
    tile: ((i64, i64), (u32, u32)),
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "seed {}, scale {}, {}", self.seed, self.scale, if self.finite { "finite" } else { "infinite" })?;
        if self.finite {
            writeln!(f, "map size {}x{}", self.map_size.0, self.map_size.1)?;
        }
        writeln!(f, "large render: origin {:?}, size {:?}", self.big.0, self.big.1)?;
        writeln!(f, "tile: origin {:?}, size {:?}", self.tile.0, self.tile.1)?;
        write!(f, "script:\n{}", self.source)
    }
}

/// A sub-interval [start, start + len) of [origin, origin + size).
fn sub_interval(origin: i64, size: u32) -> impl Strategy<Value = (i64, u32)> {
    (0..size).prop_flat_map(move |offset| (Just(origin + i64::from(offset)), 1..=size - offset))
}

/// A case: a script from `source_for(finite)`, a seed, a scale, a large render and a tile in it.
fn case_from(source_for: impl Fn(bool) -> BoxedStrategy<String> + Clone + 'static) -> impl Strategy<Value = Case> {
    let scales = select(vec![1.0, 1.0, 0.5, 0.25, 0.75, 1.5, 2.0]);
    (any::<bool>(), 0u32..100, scales).prop_flat_map(move |(finite, seed, scale)| {
        let big = if finite {
            // The large render starts inside the map (a render outside a finite map is empty).
            ((0i64..24, 0i64..24), (16u32..=64, 16u32..=64)).boxed()
        } else {
            ((-80i64..=40, -80i64..=40), (16u32..=64, 16u32..=64)).boxed()
        };
        (source_for(finite), big, (24u32..=96, 24u32..=96)).prop_flat_map(
            move |(source, ((bx, by), (bw, bh)), map_size)| {
                (sub_interval(bx, bw), sub_interval(by, bh)).prop_map(move |((tx, tw), (ty, th))| Case {
                    finite,
                    source: source.clone(),
                    seed,
                    scale,
                    map_size,
                    big: ((bx, by), (bw, bh)),
                    tile: ((tx, ty), (tw, th)),
                })
            },
        )
    })
}

fn case() -> impl Strategy<Value = Case> {
    case_from(|finite| script_source(finite).boxed())
}

fn settings(case: &Case, (origin, (w, h)): ((i64, i64), (u32, u32))) -> RunSettings {
    RunSettings {
        seed: case.seed,
        map_width: case.finite.then_some(case.map_size.0),
        map_height: case.finite.then_some(case.map_size.1),
        render_origin: origin,
        render_width: Some(w),
        render_height: Some(h),
        render_scale: case.scale,
        inputs: geogen_stdlib::generators::example_inputs(),
        ..RunSettings::default()
    }
}

fn compile(case: &Case) -> Script {
    Script::compile("tile.ggs", &case.source, &CompileOptions::default())
        .unwrap_or_else(|f| panic!("a generated script does not compile:\n{f}\n{case:?}"))
}

/// Generated operations may ask for absurd extents (a transform with tiny coefficients); such a
/// case is refused quickly by the memory plan (GGE3001) and counted as not rendered.
fn config() -> RenderConfig {
    RenderConfig { memory_limit: 256 << 20, ..RenderConfig::default() }
}

fn render(script: &Script, case: &Case, settings: &RunSettings) -> Result<Rendered, TestCaseError> {
    script.render(settings, &config(), None).map_err(|f| TestCaseError::fail(format!("render failed:\n{f}\n{case:?}")))
}

/// The value of the physical pixel (x, y) of `map`, if inside.
fn pixel(map: &HeightMap, x: i64, y: i64) -> Option<f32> {
    let r = map.rect();
    let (dx, dy) = (x.checked_sub(r.x)?, y.checked_sub(r.y)?);
    if dx < 0 || dy < 0 || dx as u64 >= r.width || dy as u64 >= r.height {
        return None;
    }
    Some(map.data()[dy as usize * r.width as usize + dx as usize])
}

/// The intersection of a requested rectangle with a map's rectangle, as (x, y, w, h).
fn intersect(a: (i64, i64, u64, u64), b: (i64, i64, u64, u64)) -> (i64, i64, u64, u64) {
    let x0 = a.0.max(b.0);
    let y0 = a.1.max(b.1);
    let x1 = (a.0 + a.2 as i64).min(b.0 + b.2 as i64);
    let y1 = (a.1 + a.3 as i64).min(b.1 + b.3 as i64);
    if x1 <= x0 || y1 <= y0 {
        (0, 0, 0, 0)
    } else {
        (x0, y0, (x1 - x0) as u64, (y1 - y0) as u64)
    }
}

/// Renders the large rectangle and the tile and compares them bit for bit. `Ok(false)` when the
/// script itself fails on the large render (a singular matrix, a plan over the memory limit): such
/// a case tests nothing and is counted.
fn check_tile(case: &Case) -> Result<bool, TestCaseError> {
    let script = compile(case);
    let Ok(big) = script.render(&settings(case, case.big), &config(), None) else { return Ok(false) };
    let tile = render(&script, case, &settings(case, case.tile))?;
    let names = |r: &Rendered| r.maps.keys().cloned().collect::<Vec<_>>();
    prop_assert_eq!(names(&big), names(&tile), "different maps\n{:?}", case);
    let ((tx, ty), (tw, th)) = case.tile;
    for (name, whole) in &big.maps {
        let part = &tile.maps[name];
        let w = whole.rect();
        let expected = intersect((tx, ty, u64::from(tw), u64::from(th)), (w.x, w.y, w.width, w.height));
        let p = part.rect();
        let got = if p.width == 0 || p.height == 0 { (0, 0, 0, 0) } else { (p.x, p.y, p.width, p.height) };
        prop_assert_eq!(got, expected, "map \"{}\": tile rectangle (large render: {:?})\n{:?}", name, w, case);
        for y in p.y..p.y + p.height as i64 {
            for x in p.x..p.x + p.width as i64 {
                let a = pixel(whole, x, y).expect("inside the large render");
                let b = pixel(part, x, y).expect("inside the tile");
                prop_assert!(
                    a.to_bits() == b.to_bits(),
                    "map \"{}\": pixel ({}, {}) is {} in the tile but {} in the large render\n{:?}",
                    name,
                    x,
                    y,
                    b,
                    a,
                    case
                );
            }
        }
    }
    Ok(true)
}

/// Every map's rectangle and the bits of its heights.
type Bits = BTreeMap<String, ((i64, i64, u64, u64), Vec<u32>)>;

fn bits(rendered: &Rendered) -> Bits {
    rendered
        .maps
        .iter()
        .map(|(name, map)| {
            let r = map.rect();
            (name.clone(), ((r.x, r.y, r.width, r.height), map.data().iter().map(|h| h.to_bits()).collect()))
        })
        .collect()
}

/// The maps of a render executed one step at a time ([`Renderer::step`], never fused), in the
/// order the script made its steps (not scheduled: no generator chain moved or split) and without
/// the support pass (no step narrowed to where its maps are not constant), by name.
fn render_unfused(script: &Script, case: &Case, settings: &RunSettings) -> Result<Bits, TestCaseError> {
    let fail = |what: String| TestCaseError::fail(format!("{what}\n{case:?}"));
    let simulation = script.simulate_in_script_order(settings).map_err(|f| fail(format!("simulation failed:\n{f}")))?;
    let plain = RenderConfig { support_pass: false, ..config() };
    let mut renderer = Renderer::new(simulation.sequence, &plain).map_err(|e| fail(format!("planning failed: {e}")))?;
    while renderer.step().map_err(|e| fail(format!("step failed: {e}")))? {}
    Ok(renderer
        .into_outputs()
        .into_iter()
        .map(|(name, map)| {
            let r = map.rect();
            (name, ((r.x, r.y, r.width, r.height), map.data().iter().map(|h| h.to_bits()).collect()))
        })
        .collect())
}

/// A tile equals the larger render (`check_tile`), and the render scheduled and fused into band
/// passes with the support pass (what `Script::render` does) has the bits of the same render in
/// the script's order, one step at a time, without it: an operation that declares itself row-local
/// wrongly, a wrong support, range or unchanged-region rule, or a schedule (a chain moved or split)
/// that changes what a step reads, fails here.
fn check_tile_and_fusion(case: &Case) -> Result<bool, TestCaseError> {
    if !check_tile(case)? {
        return Ok(false);
    }
    let script = compile(case);
    let settings = settings(case, case.big);
    let fused = bits(&render(&script, case, &settings)?);
    let unfused = render_unfused(&script, case, &settings)?;
    prop_assert!(
        fused == unfused,
        "the scheduled, fused render with the support pass differs from the step-by-step one in script order without it\n{:?}",
        case
    );
    Ok(true)
}

fn check_threads(case: &Case) -> Result<bool, TestCaseError> {
    let script = compile(case);
    let settings = settings(case, case.big);
    if script.render(&settings, &config(), None).is_err() {
        return Ok(false);
    }
    let mut results = Vec::new();
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a rayon pool");
        let rendered = pool.install(|| render(&script, case, &settings))?;
        results.push(bits(&rendered));
    }
    prop_assert!(results[0] == results[1], "1 and 3 threads give different bits\n{:?}", case);
    Ok(true)
}

/// Cases per property (a few seconds), or `PROPTEST_CASES` for a longer search.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Runs `check` on `count` cases drawn from `strategy`; fails on the first failing case (shrunk)
/// and when fewer than `min_rendered` of the cases rendered at all (a generator that only makes
/// failing scripts tests nothing). Deterministic under `PROPTEST_RNG_SEED` like the macro.
fn run_property<S: Strategy<Value = Case>>(
    what: &str,
    strategy: S,
    count: u32,
    min_rendered: f64,
    check: fn(&Case) -> Result<bool, TestCaseError>,
) {
    let rendered = std::cell::Cell::new(0u32);
    let tried = std::cell::Cell::new(0u32);
    let config = Config { cases: count, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |case| {
        tried.set(tried.get() + 1);
        if check(&case)? {
            rendered.set(rendered.get() + 1);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{what}: {e}");
    }
    let share = f64::from(rendered.get()) / f64::from(tried.get().max(1));
    assert!(
        share >= min_rendered,
        "{what}: only {} of {} generated cases rendered (at least {:.0} % must)",
        rendered.get(),
        tried.get(),
        min_rendered * 100.0
    );
}

#[test]
fn a_tile_equals_the_same_rectangle_of_a_larger_render() {
    run_property("random scripts", case(), cases(48), 0.6, check_tile_and_fusion);
}

#[test]
fn one_and_three_threads_give_the_same_bits() {
    run_property("random scripts", case(), cases(24), 0.6, check_threads);
}

/// Every declared operation, called with random valid arguments between random statements: a tile
/// equals the same rectangle of a larger render. At least one of its cases must render.
#[test]
fn every_operation_is_tile_exact() {
    for entry in operation::all() {
        let name = entry.signature.qualified_name();
        run_property(
            &name,
            case_from(move |finite| script_calling(entry, finite).boxed()),
            cases(6),
            0.15,
            check_tile_and_fusion,
        );
    }
}

/// A script placing local features on a constant map, the shape the support pass narrows
/// (`geogen_render::support`): cones on a flat background, transformed and blurred, combined into
/// the base in every way the rules know, some through masks or with noise that is never constant.
fn feature_script(_finite: bool) -> BoxedStrategy<String> {
    let height = || select(vec!["-1", "-0.4", "0", "0.3", "1"]);
    let transform = select(vec![
        ".Multiply(3)",
        ".Multiply(0.4)",
        ".Multiply(-1)",
        ".Multiply(0)",
        ".Add(0.2)",
        ".Add(-0.5)",
        ".Rescale(3, 1)",
        ".Rescale(0.5, 2)",
        ".Rotate(0.3)",
        ".Rotate(2.5)",
        ".Move([17, -9])",
        ".Move([-30, 4])",
        ".Blur(1)",
        ".Blur(3)",
        ".Blur(8)",
        ".Invert()",
        ".Abs()",
        ".ClampHeights(-0.5, 0.5)",
    ]);
    let feature = (-40i64..100, -40i64..100, select(vec![0u32, 3, 10, 25]), height(), height(), vec(transform, 0..4))
        .prop_map(|(x, y, r, a, b, chain)| {
            format!("HeightMap.RadialGradient([{x}, {y}], {r}, {a}, {b}){}", chain.concat())
        });
    let combiner = select(vec![
        "base.Unify(f{k});",
        "base.Intersect(f{k});",
        "base.Add(f{k});",
        "base.Add(f{k}, g{k});",
        "base.Add(0.3, g{k});",
        "base.Multiply(f{k});",
        "base.Combine(f{k}, g{k});",
        "base.Add(HeightMap.Noise(CreateNoiseLayers(8)), g{k});",
        "f{k}.Unify(base); base = f{k};",
    ]);
    let step = (feature.clone(), feature, combiner);
    (height(), vec(step, 1..=4))
        .prop_map(|(base, steps)| {
            let mut s = format!("var base = HeightMap.Flat({base});\n");
            for (k, (f, g, combine)) in steps.iter().enumerate() {
                s.push_str(&format!("var f{k} = {f};\nvar g{k} = {g};\n{}\n", combine.replace("{k}", &k.to_string())));
            }
            s.push_str("yield base;\n");
            s
        })
        .boxed()
}

/// Local features on constant maps, narrowed by the support pass: the render with it has the bits
/// of the render without it, step by step (`check_tile_and_fusion`), and tiles are exact. The
/// pass must actually narrow some steps in at least a fifth of the cases.
#[test]
fn local_features_keep_their_bits_when_the_support_pass_narrows_steps() {
    let (narrowed, rendered) = (std::cell::Cell::new(0u32), std::cell::Cell::new(0u32));
    let tried = std::cell::Cell::new(0u32);
    let config = Config { cases: cases(40), failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&case_from(feature_script), |case| {
        tried.set(tried.get() + 1);
        let script = compile(&case);
        if let Ok(simulation) = script.simulate(&settings(&case, case.big)) {
            let meta = geogen::RenderMetadata::calculate(&simulation.sequence);
            if meta.is_ok_and(|m| m.narrowed.iter().any(Option::is_some)) {
                narrowed.set(narrowed.get() + 1);
            }
        }
        if check_tile_and_fusion(&case)? {
            rendered.set(rendered.get() + 1);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("local features: {e}");
    }
    eprintln!(
        "local features: {} of {} cases rendered, steps narrowed in {}",
        rendered.get(),
        tried.get(),
        narrowed.get()
    );
    assert!(rendered.get() * 5 >= tried.get() * 4, "too few cases rendered");
    assert!(narrowed.get() * 5 >= tried.get(), "the support pass narrowed steps in too few cases");
}

/// Fixed cases that exercise the contract at known-tricky places, whatever proptest draws.
#[test]
fn fixed_tiles_across_the_origin_and_at_odd_scales() {
    let scripts = [
        "var m = HeightMap.Noise(); m.Blur(3); yield m;",
        "var m = HeightMap.RadialGradient([0, 0], 20, 1, -1); m.Blur(5); yield m;",
        "var a = HeightMap.Gradient([-10, -10], [10, 10], -1, 1); var b = HeightMap.RidgedNoise({8: 0.5}, 3);\
         a.Combine(b, HeightMap.RadialGradient([0, 0], 16, 1, -1)); a.Blur(2); yield a;",
    ];
    let tiles = [((-7, -9), (5, 3)), ((-1, -1), (2, 2)), ((0, 0), (1, 1)), ((3, -20), (17, 25))];
    check_fixed_tiles(&scripts, 1, &tiles);
}

/// A rectangle in physical pixels: origin and size.
type Placement = ((i64, i64), (u32, u32));

/// Each infinite-map script at four scales: each tile equals the same rectangle of a 48² render
/// around the origin; every case must render.
fn check_fixed_tiles(scripts: &[&str], seed: u32, tiles: &[Placement]) {
    for source in scripts {
        for scale in [1.0, 0.5, 0.75, 2.0] {
            for &tile in tiles {
                let case = Case {
                    finite: false,
                    source: source.to_string(),
                    seed,
                    scale,
                    map_size: (0, 0),
                    big: ((-24, -24), (48, 48)),
                    tile,
                };
                match check_tile(&case) {
                    Ok(true) => {}
                    Ok(false) => panic!("the fixed case does not render:\n{case:?}"),
                    Err(e) => panic!("{e}"),
                }
            }
        }
    }
}

/// Maps large enough that the kernels really split rows across threads.
#[test]
fn a_large_render_is_the_same_on_one_and_three_threads() {
    let source = "var m = HeightMap.Noise(); var r = HeightMap.RidgedNoise({16: 0.5, 3: 0.3}, 5);\
                  m.Combine(r, HeightMap.RadialGradient([100, 60], 90, 1, -1)); m.Blur(4); m.Add(r, m);\
                  m.Multiply(1.7); m.CropHeights(-0.5, 0.9, 0.1); yield m; yield r as \"ridges\";";
    let case = Case {
        finite: false,
        source: source.to_string(),
        seed: 9,
        scale: 0.75,
        map_size: (0, 0),
        big: ((-37, -11), (300, 200)),
        tile: ((0, 0), (1, 1)),
    };
    match check_threads(&case) {
        Ok(true) => {}
        Ok(false) => panic!("the fixed case does not render:\n{case:?}"),
        Err(e) => panic!("{e}"),
    }
}

/// Profile operations and the map operations that read profiles, chained after noise so that the
/// 1-D bounds (blur margins, pattern stretches, flips, moves, rescales, slices, shift distances)
/// matter: every tile, at every scale, equals the same rectangle of the large render.
#[test]
fn profile_operations_keep_tiles_exact() {
    let scripts = [
        "var p = HeightProfile.Noise({8: 0.5, 3: 0.3}, 2); p.Blur(2); yield HeightMap.Projection(p, Direction.Vertical);",
        "var p = HeightProfile.FromArray({-20: -1, 3: 0.5, 7: -0.2, 30: 1}); p.Blur(4);\
         yield HeightMap.Projection(p, Direction.Horizontal);",
        "var n = HeightProfile.Noise({4: 1}, 1).Blur(1); var p = HeightProfile.Pattern(n, 6, -5);\
         yield HeightMap.Projection(p, Direction.Horizontal);",
        "var m = HeightMap.Noise({8: 0.7}, 3); m.Blur(2); var p = HeightProfile.Slice(m, Direction.Horizontal, -3);\
         p.Rescale(1.7).Blur(1); yield HeightMap.Projection(p, Direction.Vertical);",
        "var m = HeightMap.Noise({8: 0.7}, 3); m.Blur(3); var p = HeightProfile.Slice(m, Direction.Vertical, 5);\
         yield HeightMap.Projection(p.Flip(), Direction.Horizontal);",
        "var p = HeightProfile.Noise({6: 1}, 4); p.Flip().Move(-7).Crop(-10, 12, 0.3).FillInterval(3, -2, -0.4).Blur(3);\
         yield HeightMap.Projection(p, Direction.Vertical);",
        "var p = HeightProfile.Noise({5: 1}, 4).Rescale(0.3).Blur(1).Move(4);\
         yield HeightMap.Projection(p, Direction.Vertical);",
        "var a = HeightProfile.Noise({4: 0.6}, 1); var b = HeightProfile.Gradient(10, -10, -1, 1);\
         var c = HeightProfile.Clone(a).Blur(2); a.Add(b, c).Multiply(b).Combine(c, b).Intersect(c).Unify(b);\
         a.Add(0.1, c).Add(c).Multiply(1.3).Abs().Invert().ClampHeights(-0.7, 0.7).CropHeights(-0.5, 0.6, 0.2);\
         yield HeightMap.Projection(a, Direction.Horizontal);",
        "var m = HeightMap.Noise({8: 0.8, 2: 0.2}, 5); m.Blur(1);\
         m.Shift(HeightProfile.Noise({6: 1}, 2).Blur(2), 9, Direction.Vertical);\
         m.Shift(HeightProfile.Gradient(-20, 20, 1, -1), 5, Direction.Horizontal); m.Blur(1); yield m;",
        "var m = HeightMap.Noise(); m.Blur(2); var p = HeightProfile.Noise({3: 1}, 9).Blur(1);\
         m.TransformHeights(p, 20, -5, -0.3, 0.6); yield m;",
        "var m = HeightMap.Noise({16: 1}, 3); m.Blur(3); m.Stratify(4, 0.3, 0.6); m.Blur(1); yield m;\
         var n = HeightMap.Noise({8: 1}, 1).Stratify(3, 1, 1, true); yield n as \"negative\";",
    ];
    let tiles = [((-7, -9), (5, 3)), ((-1, -1), (2, 2)), ((0, 0), (1, 1)), ((3, -20), (17, 25)), ((-24, 10), (48, 3))];
    check_fixed_tiles(&scripts, 4, &tiles);
    // Relative positions on a finite map: FromArray along a direction, Slice across one, Shift along one.
    let finite = "metadata { Width: Finite, Height: Finite }\
                  var banks = HeightProfile.FromArray({@0.2: 1, @0.5: -1, @0.8: 1}, Direction.Vertical);\
                  var m = HeightMap.Projection(banks, Direction.Horizontal);\
                  m.Shift(HeightProfile.Noise({8: 1}, 3), @0.1, Direction.Vertical);\
                  var row = HeightProfile.Slice(HeightMap.Noise({4: 1}, 2).Blur(2), Direction.Horizontal, @0.5);\
                  m.Add(HeightMap.Projection(row.Blur(1), Direction.Vertical).Multiply(0.3)); yield m;";
    for scale in [1.0, 0.5, 1.5] {
        for tile in [((0, 0), (7, 9)), ((20, 31), (17, 5)), ((40, 2), (8, 46))] {
            let case = Case {
                finite: true,
                source: finite.to_string(),
                seed: 2,
                scale,
                map_size: (64, 64),
                big: ((0, 0), (48, 48)),
                tile,
            };
            match check_tile(&case) {
                Ok(true) => {}
                Ok(false) => panic!("the fixed case does not render:\n{case:?}"),
                Err(e) => panic!("{e}"),
            }
        }
    }
}
