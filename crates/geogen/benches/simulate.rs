//! Compile + simulate benchmarks: a generated ~500-line script (loops, functions, arrays, math)
//! and a typical 30-line map-like script (parameters, noise layers, points, a little logic).
//!
//! `CARGO_TARGET_DIR=... cargo bench -p geogen --bench simulate`

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use geogen::{CompileOptions, RunSettings, Script};

/// About 500 lines: 40 functions of ~11 lines each (loops, arrays, math, calls), then a main
/// part that calls each of them.
fn generated_script() -> String {
    let mut s = String::new();
    for i in 0..40 {
        s.push_str(&format!(
            "function f{i}(n) {{
    var values = {{}};
    for (var k = 0; k < n; k++) {{
        values.PushBack(Sin(k * {i}.5) * Sqrt(k + 1));
    }}
    var total = 0;
    for (var k = 0; k < values.Count(); k++) {{
        if (values[k] > 0) {{ total += values[k]; }} else {{ total -= values[k] / 2; }}
    }}
    return Round(total * 1000) / 1000 + Max(n, {i}) % 7;
}}
"
        ));
    }
    s.push_str("var results = {};\n");
    for i in 0..40 {
        s.push_str(&format!("results.PushBack(f{i}({}));\n", 10 + i % 7));
    }
    s.push_str(
        "var sum = 0;
var i = 0;
while (i < results.Count()) {
    sum = sum + results[i];
    i++;
}
results.SortByValues();
var message = \"sum \" + sum;
",
    );
    s
}

const MAP_LIKE: &str = r#"
metadata {
    Name: "Islands",
    Width: Finite, Height: Finite,
    Parameters: {
        Islands: { Type: Number, Default: 12, Min: 1, Max: 100, Restriction: Integers },
        Mountains: { Default: true },
        Direction: { Type: Direction, Default: Horizontal }
    }
}
enum Biome { Sea, Beach, Grass, Rock = 10 }
var layers = CreateNoiseLayers(4, 512, 0.55);
var centers = {};
for (var i = 0; i < Parameters.Islands; i++) {
    var p = [Random(0, Parameters.MapWidth), Random(0, Parameters.MapHeight)];
    centers.PushBack(p);
}
function biomeAt(h) {
    if (h < 0) { return Biome.Sea; }
    if (h < 0.05) { return Biome.Beach; }
    return h < 0.6 ? Biome.Grass : Biome.Rock;
}
var counts = {};
for (var i = 0; i < centers.Count(); i++) {
    var b = biomeAt(Random() * 2 - 1);
    var key = Number.FromEnum(b);
    counts[key] = counts.ContainsKey(key) ? counts[key] + 1 : 1;
}
var scale = Parameters.Mountains ? 0.8 : 0.3;
var radius = Min(Parameters.MapWidth, Parameters.MapHeight) / (2 + Parameters.Islands) * scale;
"#;

fn compile(source: &str) -> Script {
    let options = CompileOptions { test_library: false, main_map_mandatory: false, ..CompileOptions::default() };
    Script::compile("bench.ggs", source, &options).unwrap_or_else(|f| panic!("{f}"))
}

fn bench(c: &mut Criterion) {
    let generated = generated_script();
    let settings = RunSettings { map_width: Some(1024), map_height: Some(1024), ..RunSettings::default() };
    // Fail loudly (not inside the timing loop) if a script stops working.
    let out = compile(&generated).run(&settings).unwrap_or_else(|f| panic!("{f}"));
    eprintln!("generated script: {} instructions per run", out.instructions);
    let out = compile(MAP_LIKE).run(&settings).unwrap_or_else(|f| panic!("{f}"));
    eprintln!("map-like script: {} instructions per run", out.instructions);

    let lines = generated.lines().count();
    c.bench_function(&format!("compile+simulate generated ({lines} lines)"), |b| {
        b.iter(|| compile(black_box(&generated)).run(&settings).map(|o| o.instructions).ok())
    });
    c.bench_function("compile+simulate map-like (30 lines)", |b| {
        b.iter(|| compile(black_box(MAP_LIKE)).run(&settings).map(|o| o.instructions).ok())
    });
    let script = compile(&generated);
    c.bench_function("simulate only generated", |b| b.iter(|| script.run(&settings).map(|o| o.instructions).ok()));
}

criterion_group!(benches, bench);
criterion_main!(benches);
