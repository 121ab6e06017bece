//! Random calls of the declared operations, derived from their signatures (`geogen_stdlib::
//! operation::all()`), for the property tests: every operation in the list is exercised without a
//! per-operation line here.
//!
//! A generated script works on maps `m0..` and profiles `p0..` (profiles only once the library has
//! a profile constructor); each statement calls one operation with arguments drawn from each
//! parameter's kind.

use geogen_stdlib::operation::{self, Along, Check, Entry, Kind, Owner, Receiver};
use proptest::prelude::*;
use proptest::sample::select;

/// What a script has to work with.
#[derive(Copy, Clone, Debug)]
pub struct Vars {
    pub maps: usize,
    pub profiles: usize,
    /// Finite maps allow relative coordinates.
    pub finite: bool,
}

fn decimal(lo: i32, hi: i32, denominator: f64) -> BoxedStrategy<String> {
    (lo..=hi).prop_map(move |k| format!("{}", f64::from(k) / denominator)).boxed()
}

fn object(owner: Owner, vars: Vars) -> Option<BoxedStrategy<String>> {
    let (prefix, count) = match owner {
        Owner::HeightMap => ("m", vars.maps),
        Owner::HeightProfile => ("p", vars.profiles),
    };
    (count > 0).then(|| (0..count).prop_map(move |i| format!("{prefix}{i}")).boxed())
}

fn coordinate(along: Along, vars: Vars) -> BoxedStrategy<String> {
    let absolute = (-90i32..=90).prop_map(|c| c.to_string()).boxed();
    if vars.finite && along != Along::Absolute {
        prop_oneof![absolute, (0u32..=100).prop_map(|c| format!("@{}", f64::from(c) / 100.0))].boxed()
    } else {
        absolute
    }
}

fn point(vars: Vars) -> BoxedStrategy<String> {
    if vars.finite {
        prop_oneof![
            (0u32..=100, 0u32..=100).prop_map(|(x, y)| format!(
                "@[{}, {}]",
                f64::from(x) / 100.0,
                f64::from(y) / 100.0
            )),
            (-10i32..=80, -10i32..=80).prop_map(|(x, y)| format!("[{x}, {y}]")),
        ]
        .boxed()
    } else {
        (-90i32..=90, -90i32..=90).prop_map(|(x, y)| format!("[{x}, {y}]")).boxed()
    }
}

fn noise_layers() -> BoxedStrategy<String> {
    let layer = (select(vec![1u32, 2, 3, 4, 5, 7, 8, 12, 16, 32, 64]), 1u32..=100)
        .prop_map(|(w, a)| format!("{w}: {}", f64::from(a) / 100.0));
    prop_oneof![
        3 => prop::collection::vec(layer, 1..=3).prop_map(|l| format!("{{{}}}", l.join(", "))),
        1 => (1u32..=64).prop_map(|max| format!("CreateNoiseLayers(1, {max}, 0.5)")),
    ]
    .boxed()
}

fn profile_points(along: Along, vars: Vars) -> BoxedStrategy<String> {
    let point = (coordinate(along, vars), decimal(-100, 100, 100.0)).prop_map(|(c, h)| format!("{c}: {h}"));
    prop::collection::vec(point, 1..=4).prop_map(|p| format!("{{{}}}", p.join(", "))).boxed()
}

/// A valid argument of this kind (a random one). Numbers of kind `Number` stay in [-3, 3].
pub fn valid_argument(kind: Kind, vars: Vars) -> BoxedStrategy<String> {
    match kind {
        Kind::Number => decimal(-300, 300, 100.0),
        Kind::Height => decimal(-100, 100, 100.0),
        Kind::Size => decimal(0, 240, 10.0),
        Kind::Range { min, max, .. } => {
            (0u32..=100).prop_map(move |k| format!("{}", (min + (max - min) * f64::from(k) / 100.0).min(max))).boxed()
        }
        Kind::Seed => (0u32..1000).prop_map(|s| s.to_string()).boxed(),
        Kind::Boolean => any::<bool>().prop_map(|b| b.to_string()).boxed(),
        Kind::Point => point(vars),
        Kind::Coordinate(along) => coordinate(along, vars),
        Kind::Direction => select(vec!["Direction.Horizontal", "Direction.Vertical"]).prop_map(str::to_string).boxed(),
        Kind::Object(owner) => object(owner, vars).unwrap_or_else(|| Just("null".to_string()).boxed()),
        Kind::HeightOr(owner) => match object(owner, vars) {
            Some(o) => prop_oneof![decimal(-100, 100, 100.0), o].boxed(),
            None => decimal(-100, 100, 100.0),
        },
        Kind::NumberOr(owner) => match object(owner, vars) {
            Some(o) => prop_oneof![decimal(-300, 300, 100.0), o].boxed(),
            None => decimal(-300, 300, 100.0),
        },
        Kind::NoiseLayers => noise_layers(),
        Kind::ProfilePoints(along) => profile_points(along, vars),
        // The one input map the derived tests give (`geogen_stdlib::generators::example_inputs`).
        Kind::Text => Just("\"sketch\"".to_string()).boxed(),
        Kind::HeightSlang => height_slang(),
        Kind::Choice { items, .. } => select(items.to_vec()).prop_map(|i| format!("\"{i}\"")).boxed(),
    }
}

/// Height-Slang programs (as script strings) over operators, noise and recursion, with random
/// constants.
fn height_slang() -> BoxedStrategy<String> {
    let programs = vec![
        "(* K x)",
        "(- (* K (+ x y)) 0.5)",
        "(? (< (frac (* K x)) 0.5) (sin (* 6 y)) (neg K))",
        "(+ 0.25 ([2 LayeredNoise frequency(K) layercount(3)] x y))",
        "([2 Noise frequency(K) filter(bilinear)] (+ x 0.5) (* y 2))",
        "(lerp ([2 Noise seed(9) filter(nearest)] x y) (abs (- y x)) K)",
        "([2 Layers layercount(2) persistence((* x K))] (* x 3) y)",
        "(? (< (abs x) 1) K (* 0.5 (self (* x 0.5) y)))",
        "(/ (floor (* 8 x)) (* 8 K))",
    ];
    (select(programs), 1u32..=40)
        .prop_map(|(p, k)| format!("\"{}\"", p.replace('K', &format!("{}", f64::from(k) / 8.0))))
        .boxed()
}

/// Any argument at all: valid ones, extreme numbers, other kinds, nonsense (for the no-panic
/// property).
pub fn hostile_argument(kind: Kind, vars: Vars) -> BoxedStrategy<String> {
    let extremes = select(vec![
        "0",
        "-1",
        "1000000000000000000000000000000",
        "-99999999999999999999",
        "4294967296",
        "-4294967296",
        "2147483648",
        "0.0000000001",
        "0.5",
        "100000",
        "@0.5",
        "@-3",
        "[1000000000000, -1000000000000]",
        "[@2, @-1]",
        "\"text\"",
        "true",
        "null",
        "{}",
        "{1: 2}",
        "{-1: 0.5}",
        "{1000000000000: 1}",
        "Direction.Vertical",
        "HeightMap.Flat()",
        "Array.Empty()",
    ])
    .prop_map(str::to_string);
    prop_oneof![3 => valid_argument(kind, vars), 1 => extremes].boxed()
}

/// A valid argument at the edges of what its kind accepts: the largest sizes and coordinates, the
/// ends of every range, tiny and huge factors (the robustness property: such a call renders, or is
/// refused with a code, e.g. GGE3001 when its margins would need too much memory).
pub fn extreme_argument(kind: Kind, vars: Vars) -> BoxedStrategy<String> {
    let pick = |values: &[&'static str]| select(values.to_vec()).prop_map(str::to_string).boxed();
    match kind {
        Kind::Number => pick(&["0", "0.000000001", "-0.000000001", "1000000", "-1000000", "3.14159", "2147483647"]),
        Kind::Height | Kind::HeightOr(_) => pick(&["-1", "1", "0", "0.00003"]),
        Kind::Size => pick(&["0", "1", "0.5", "4294967295", "100000"]),
        Kind::Range { min, max, .. } => select(vec![min, max, (min + max) / 2.0]).prop_map(|v| format!("{v}")).boxed(),
        Kind::Seed => pick(&["0", "4294967295", "123456789"]),
        Kind::Point => pick(&["[0, 0]", "[2147483647, -2147483648]", "[-2147483648, 2147483647]", "[100000, 100000]"]),
        Kind::Coordinate(_) => pick(&["0", "2147483647", "-2147483648", "100000"]),
        Kind::NoiseLayers => pick(&["{1: 1}", "{4294967295: 1}", "{1: 0.00001, 2: 1, 100000: 1}"]),
        Kind::ProfilePoints(_) => pick(&["{-2147483648: -1, 2147483647: 1}", "{0: 1}", "{}"]),
        _ => valid_argument(kind, vars),
    }
}

/// A fixed, typical argument of this kind (for benchmarks and smoke tests). Numbers differ by the
/// parameter's position so that ordered pairs are in order and a 2×2 matrix is invertible.
pub fn typical_argument(kind: Kind, index: usize) -> String {
    let step = index as f64;
    match kind {
        Kind::Number | Kind::NumberOr(_) => format!("{}", 0.5 + 0.25 * step),
        Kind::Height | Kind::HeightOr(_) => format!("{}", (-0.5 + 0.25 * step).min(1.0)),
        Kind::Size => format!("{}", 8.0 + 4.0 * step),
        Kind::Range { min, max, .. } => format!("{}", (min + (max - min) * 0.1 * (1.0 + step / 10.0)).min(max)),
        Kind::Seed => "7".to_string(),
        Kind::Boolean => "true".to_string(),
        Kind::Point => format!("[{}, {}]", 100 + 50 * index, 200 + 50 * index),
        Kind::Coordinate(_) => format!("{}", 10 + 20 * index),
        Kind::Direction => "Direction.Vertical".to_string(),
        Kind::Object(Owner::HeightMap) => "m1".to_string(),
        Kind::Object(Owner::HeightProfile) => "p0".to_string(),
        Kind::NoiseLayers => "{64: 0.5, 16: 0.25, 4: 0.1}".to_string(),
        Kind::ProfilePoints(_) => "{0: -0.5, 500: 0.5, 1000: 0}".to_string(),
        Kind::Text => "\"sketch\"".to_string(),
        Kind::HeightSlang => "\"(+ 0.25 ([2 Noise] x y))\"".to_string(),
        Kind::Choice { items, .. } => format!("\"{}\"", items.first().copied().unwrap_or_default()),
    }
}

/// How `call_statement` draws its arguments.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Arguments {
    Valid,
    Extreme,
    Hostile,
}

/// Whether a script can call this entry with the objects it has.
pub fn callable(entry: &Entry, vars: Vars) -> bool {
    let has = |owner: Owner| match owner {
        Owner::HeightMap => vars.maps > 0,
        Owner::HeightProfile => vars.profiles > 0,
    };
    // A static assigns its new object to an existing variable of its owner; a method needs one.
    let receiver_ok = has(entry.signature.owner);
    receiver_ok
        && entry.signature.params.iter().all(|p| match p.kind {
            Kind::Object(owner) => has(owner) || p.default != operation::Default::Required,
            _ => true,
        })
}

/// A statement calling `entry`: `m1 = HeightMap.X(...)` for a static (into a random variable of
/// its owner), `p0.X(...)` for a method.
pub fn call_statement(entry: &'static Entry, vars: Vars, mode: Arguments) -> BoxedStrategy<String> {
    let sig = entry.signature;
    let required = sig.min_args();
    let args: Vec<BoxedStrategy<String>> = sig
        .params
        .iter()
        .map(|p| match mode {
            Arguments::Valid => valid_argument(p.tested_kind(), vars),
            Arguments::Extreme => extreme_argument(p.kind, vars),
            Arguments::Hostile => hostile_argument(p.kind, vars),
        })
        .collect();
    let count = required..=sig.params.len();
    let (prefix, objects) = match sig.owner {
        Owner::HeightMap => ("m", vars.maps),
        Owner::HeightProfile => ("p", vars.profiles),
    };
    (args, count, 0..objects.max(1))
        .prop_map(move |(mut args, count, target)| {
            if mode != Arguments::Hostile {
                // Valid calls respect the declared orderings (min ≤ max).
                for check in sig.checks {
                    let Check::Ordered(a, b) = *check;
                    if let (Ok(x), Ok(y)) = (args[a].parse::<f64>(), args[b].parse::<f64>()) {
                        if x > y {
                            args.swap(a, b);
                        }
                    }
                }
            }
            let call = format!("{}({})", sig.name, args[..count].join(", "));
            match sig.receiver {
                Receiver::Static => format!("{prefix}{target} = {}.{call};", sig.owner.type_name()),
                Receiver::Method => format!("{prefix}{target}.{call};"),
            }
        })
        .boxed()
}

/// The operations that create an object of `owner` from constants alone (to start a script).
pub fn creators(owner: Owner) -> Vec<&'static Entry> {
    operation::all()
        .filter(|e| {
            e.signature.owner == owner
                && e.signature.receiver == Receiver::Static
                && e.signature.params.iter().all(|p| !matches!(p.kind, Kind::Object(_)))
        })
        .collect()
}

/// The declarations of a script's variables: each map and profile created by a random creator.
pub fn declarations(vars: Vars) -> BoxedStrategy<String> {
    let none = Vars { maps: 0, profiles: 0, ..vars };
    let create = |owner: Owner, name: String| -> BoxedStrategy<String> {
        let options: Vec<BoxedStrategy<String>> = creators(owner)
            .into_iter()
            .map(|e| {
                let name = name.clone();
                call_statement(e, none, Arguments::Valid)
                    .prop_map(move |s| format!("var {name}{}", &s[s.find(" = ").unwrap_or(0)..]))
                    .boxed()
            })
            .collect();
        proptest::strategy::Union::new(options).boxed()
    };
    let mut parts: Vec<BoxedStrategy<String>> = Vec::new();
    for i in 0..vars.maps {
        parts.push(create(Owner::HeightMap, format!("m{i}")));
    }
    for i in 0..vars.profiles {
        parts.push(create(Owner::HeightProfile, format!("p{i}")));
    }
    parts.prop_map(|lines| lines.join("\n") + "\n").boxed()
}

/// Whether the library has profiles (a profile constructor) and a way to see them in a map.
pub fn profiles_available() -> bool {
    !creators(Owner::HeightProfile).is_empty() && operation::find(Owner::HeightMap, "Projection").is_some()
}
