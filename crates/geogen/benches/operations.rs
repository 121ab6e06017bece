//! Every declared operation, timed at 1024² (derived from the operation list, so a new operation is
//! benchmarked without an edit here). Each is called once with typical arguments on noise maps and
//! rendered; the time of the steps its call recorded (the steps on its line) is the median of five
//! renders, in ns per output pixel.
//!
//! ```text
//! cargo bench -p geogen --bench operations            # all operations
//! cargo bench -p geogen --bench operations -- Blur    # those whose name contains "Blur"
//! ```

#[path = "../tests/common/ops.rs"]
#[allow(dead_code)]
mod ops;

use geogen::{CompileOptions, RenderConfig, RunSettings, Script};
use geogen_stdlib::operation::{self, Owner, Receiver};

const SIZE: u32 = 1024;
const RUNS: usize = 5;

fn script_for(entry: &operation::Entry) -> String {
    let sig = entry.signature;
    let args: Vec<String> =
        sig.params.iter().enumerate().map(|(i, p)| ops::typical_argument(p.tested_kind(), i)).collect();
    let receiver = match (sig.receiver, sig.owner) {
        (Receiver::Static, owner) => owner.type_name().to_string(),
        (Receiver::Method, Owner::HeightMap) => "m0".to_string(),
        (Receiver::Method, Owner::HeightProfile) => "p1".to_string(),
    };
    let result = match sig.owner {
        Owner::HeightMap => "var r = ",
        Owner::HeightProfile => "var q = ",
    };
    let seen = match sig.owner {
        Owner::HeightMap => "r",
        Owner::HeightProfile => "HeightMap.Projection(q, Direction.Vertical)",
    };
    format!(
        "var m0 = HeightMap.Noise({{256: 0.4, 32: 0.2, 4: 0.05}}, 1);\n\
         var m1 = HeightMap.Noise({{128: 0.5, 8: 0.1}}, 2);\n\
         var p0 = HeightProfile.Noise({{256: 0.5, 16: 0.2}}, 3);\n\
         var p1 = HeightProfile.Noise({{128: 0.6}}, 4);\n\
         {result}{receiver}.{}({});\n\
         yield {seen};\n",
        sig.name,
        args.join(", ")
    )
}

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    println!("{:<34} {:>10} {:>12}", "operation (1024², median of 5)", "ms", "ns/px");
    for entry in operation::all() {
        let name = entry.signature.qualified_name();
        if filter.as_ref().is_some_and(|f| !name.contains(f.as_str())) {
            continue;
        }
        let source = script_for(entry);
        let script = match Script::compile("bench.ggs", &source, &CompileOptions::default()) {
            Ok(s) => s,
            Err(f) => {
                println!("{name:<34} does not compile: {}", f.first().message);
                continue;
            }
        };
        let settings = RunSettings {
            render_width: Some(SIZE),
            render_height: Some(SIZE),
            inputs: geogen_stdlib::generators::example_inputs(),
            ..RunSettings::default()
        };
        let mut times = Vec::new();
        for _ in 0..RUNS {
            match script.render(&settings, &RenderConfig::default(), None) {
                Ok(rendered) => {
                    // The call is on line 5.
                    let spent: std::time::Duration = rendered
                        .timings
                        .iter()
                        .filter(|t| t.location.is_some_and(|(l, _)| l == 5))
                        .map(|t| t.duration)
                        .sum();
                    times.push(spent);
                }
                Err(f) => {
                    println!("{name:<34} fails: {}", f.first().message);
                    break;
                }
            }
        }
        if times.len() == RUNS {
            times.sort();
            let median = times[RUNS / 2];
            let pixels = f64::from(SIZE) * f64::from(SIZE);
            println!("{name:<34} {:>10.3} {:>12.2}", median.as_secs_f64() * 1e3, median.as_secs_f64() * 1e9 / pixels);
        }
    }
}
