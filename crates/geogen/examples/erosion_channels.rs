//! Do the rivers of `HydraulicErosion` cut? The measure of docs/erosion.md, on the island of its
//! pictures (docs/pictures/erosion.ggs):
//!
//! ```text
//! cargo run -p geogen --example erosion_channels -- [SIDE] [ARGUMENTS] [FAN_SLOPE]
//! cargo run -p geogen --example erosion_channels -- 256 "60, 0.002, 0.02, 40, 0.01, 0.3, 0" 0.003
//! ```
//!
//! `ARGUMENTS` are the first seven arguments of `HydraulicErosion` (default: its defaults) and
//! `FAN_SLOPE` its `fanSlope` (default: its default). Over
//! the 5 % of the pixels with the most flow (the `"flow"` mask of the same run, the map's border
//! left out) it prints the mean of each pixel's height minus the mean of its 8 neighbours before
//! and after (negative: the channel lies below its banks), the mean change of height there, and
//! where the deposits went: the share on those pixels, and the mean slope under the deposits
//! against the map's mean slope (lower: sediment settles where the slope drops). It does so over
//! all pixels and over the land alone (input height ≥ 0): most of the top-flow pixels of the whole
//! map lie in the closed hollows of the sea floor. With `DECILES=1` it also prints, per tenth of
//! the pixels ranked by flow, the mean flow, slope and change of height.

use geogen::{CompileOptions, HeightMap, RenderConfig, RunSettings, Script};

const ISLAND: &str = r#"
metadata { Width: Finite, Height: Finite }
var island = HeightMap.RadialGradient(@[0.5, 0.5], Parameters.MapWidth * 0.4, 0.7, -0.6);
island.Add(HeightMap.Noise(CreateNoiseLayers(1, Max(2, Floor(Parameters.MapWidth / 4)), 0.5)).Multiply(0.5));
island.Blur(1);
yield island;
yield HeightMap.Clone(island).HydraulicErosion(ARGS, "height", FAN) as "eroded";
yield HeightMap.Clone(island).HydraulicErosion(ARGS, "flow", FAN) as "flow";
"#;

fn main() {
    let mut args = std::env::args().skip(1);
    let side: u32 = args.next().map_or(256, |s| s.parse().expect("SIDE: a whole number"));
    let hydraulic = args.next().unwrap_or_else(|| "60, 0.002, 0.02, 40, 0.01, 0.3, 0".to_string());
    let fan = args.next().unwrap_or_else(|| "0.001".to_string());
    let source = ISLAND.replace("ARGS", &hydraulic).replace("FAN", &fan);
    let script =
        Script::compile("erosion_channels.ggs", &source, &CompileOptions::default()).unwrap_or_else(|f| panic!("{f}"));
    let settings = RunSettings { map_width: Some(side), map_height: Some(side), ..RunSettings::default() };
    let started = std::time::Instant::now();
    let rendered = script
        .render(&settings, &RenderConfig { memory_limit: 2 << 30, ..RenderConfig::default() }, None)
        .unwrap_or_else(|f| panic!("{f}"));
    let elapsed = started.elapsed();
    let get = |name: &str| rendered.maps.get(name).unwrap_or_else(|| panic!("no map {name}"));
    println!("HydraulicErosion({hydraulic}, fanSlope {fan}) on the {side}² island, {:.2} s:", elapsed.as_secs_f64());
    for land in [false, true] {
        println!("{}", if land { "Land only (input height ≥ 0):" } else { "All pixels:" });
        report(&measure(get("main"), get("eroded"), get("flow"), land));
    }
}

fn report(m: &Measure) {
    println!(
        "  top 5 % flow pixels: {} of {}, {:.0} % of them below height 0",
        m.channels,
        m.pixels,
        m.below_zero * 100.0
    );
    println!("  height minus 8-neighbour mean: before {:+.5}, after {:+.5}", m.relief_before, m.relief_after);
    println!("  mean change of height there: {:+.5} (whole map {:+.5})", m.change_channels, m.change_all);
    println!(
        "  deposits: {:.1} % of the deposited volume on the channel pixels; mean slope under the deposits {:.5} \
         (map {:.5}); eroded volume {:.3}, deposited {:.3}",
        m.deposit_share_on_channels * 100.0,
        m.deposit_slope,
        m.mean_slope,
        m.eroded,
        m.deposited
    );
}

/// The figures the example prints (see the module comment).
struct Measure {
    pixels: usize,
    below_zero: f64,
    channels: usize,
    relief_before: f64,
    relief_after: f64,
    change_channels: f64,
    change_all: f64,
    deposit_share_on_channels: f64,
    deposit_slope: f64,
    mean_slope: f64,
    eroded: f64,
    deposited: f64,
}

fn measure(input: &HeightMap, eroded: &HeightMap, flow: &HeightMap, land: bool) -> Measure {
    let (w, h) = (input.rect().width as usize, input.rect().height as usize);
    let (a, b, f) = (input.data(), eroded.data(), flow.data());
    let inner: Vec<usize> =
        (1..h - 1).flat_map(|y| (1..w - 1).map(move |x| y * w + x)).filter(|&i| !land || a[i] >= 0.0).collect();
    let mut by_flow = inner.clone();
    by_flow.sort_by(|&i, &j| f[j].total_cmp(&f[i]).then(i.cmp(&j)));
    let top = &by_flow[..inner.len() / 20];
    if std::env::var("DECILES").is_ok() {
        for (k, part) in by_flow.chunks(inner.len().div_ceil(10)).enumerate() {
            let n = part.len() as f64;
            let change: f64 = part.iter().map(|&i| f64::from(b[i]) - f64::from(a[i])).sum::<f64>() / n;
            let fl: f64 = part.iter().map(|&i| f64::from(f[i])).sum::<f64>() / n;
            let sl: f64 = part
                .iter()
                .map(|&i| {
                    let dx = f64::from(a[i + 1]) - f64::from(a[i - 1]);
                    let dy = f64::from(a[i + w]) - f64::from(a[i - w]);
                    (dx * dx + dy * dy).sqrt() / 2.0
                })
                .sum::<f64>()
                / n;
            println!("    decile {k}: flow {fl:.3} slope {sl:.4} change {change:+.4}");
        }
    }
    let relief = |d: &[f32], i: usize| {
        let around: f64 = [i - w - 1, i - w, i - w + 1, i - 1, i + 1, i + w - 1, i + w, i + w + 1]
            .iter()
            .map(|&j| f64::from(d[j]))
            .sum();
        f64::from(d[i]) - around / 8.0
    };
    let slope = |i: usize| {
        let dx = f64::from(a[i + 1]) - f64::from(a[i - 1]);
        let dy = f64::from(a[i + w]) - f64::from(a[i - w]);
        (dx * dx + dy * dy).sqrt() / 2.0
    };
    let mean = |v: &mut dyn Iterator<Item = f64>, n: usize| v.sum::<f64>() / n as f64;
    let is_top = {
        let mut t = vec![false; w * h];
        for &i in top {
            t[i] = true;
        }
        t
    };
    let (mut dep, mut dep_top, mut dep_slope, mut ero) = (0.0, 0.0, 0.0, 0.0);
    for &i in &inner {
        let d = f64::from(b[i]) - f64::from(a[i]);
        if d > 0.0 {
            dep += d;
            dep_slope += d * slope(i);
            if is_top[i] {
                dep_top += d;
            }
        } else {
            ero -= d;
        }
    }
    Measure {
        pixels: inner.len(),
        below_zero: top.iter().filter(|&&i| a[i] < 0.0).count() as f64 / top.len() as f64,
        channels: top.len(),
        relief_before: mean(&mut top.iter().map(|&i| relief(a, i)), top.len()),
        relief_after: mean(&mut top.iter().map(|&i| relief(b, i)), top.len()),
        change_channels: mean(&mut top.iter().map(|&i| f64::from(b[i]) - f64::from(a[i])), top.len()),
        change_all: mean(&mut inner.iter().map(|&i| f64::from(b[i]) - f64::from(a[i])), inner.len()),
        deposit_share_on_channels: if dep > 0.0 { dep_top / dep } else { 0.0 },
        deposit_slope: if dep > 0.0 { dep_slope / dep } else { 0.0 },
        mean_slope: mean(&mut inner.iter().map(|&i| slope(i)), inner.len()),
        eroded: ero,
        deposited: dep,
    }
}
