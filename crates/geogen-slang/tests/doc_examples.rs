//! Every `hs-example` block of `docs/height-slang.md` is run: each line `PROGRAM @ X,Y => VALUE`
//! must evaluate to VALUE (shortest round-trip text) in the documented dialect, and to the value
//! after `| picogen-2008:` in the original's dialect (the same value when none is given);
//! `error GGExxxx` means a compile error with that code.

use geogen_slang::format::shortest;
use geogen_slang::{compile, Dialect, Options};

fn outcome(program: &str, x: f64, y: f64, dialect: Dialect) -> String {
    match compile(program, &Options { dialect, ..Options::default() }) {
        Err(d) => format!("error {}", d.code),
        Ok(p) => match p.eval_point(&[x, y]) {
            Ok(v) => shortest(v),
            Err(e) => format!("error {}", e.code),
        },
    }
}

#[test]
fn the_documented_examples_hold() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/height-slang.md")).unwrap();
    let mut in_block = false;
    let mut checked = 0;
    let mut wrong = Vec::new();
    for line in doc.lines() {
        if line.trim() == "```hs-example" {
            in_block = true;
            continue;
        }
        if line.trim() == "```" {
            in_block = false;
            continue;
        }
        if !in_block || line.trim().is_empty() {
            continue;
        }
        let (program, rest) = line.rsplit_once(" @ ").unwrap_or_else(|| panic!("no ` @ ` in {line:?}"));
        let (point, expected) = rest.split_once(" => ").unwrap_or_else(|| panic!("no ` => ` in {line:?}"));
        let (x, y) = point.split_once(',').unwrap_or_else(|| panic!("no X,Y in {line:?}"));
        let (x, y): (f64, f64) = (x.trim().parse().unwrap(), y.trim().parse().unwrap());
        let (documented, original) = match expected.split_once(" | picogen-2008: ") {
            Some((d, o)) => (d.trim(), o.trim()),
            None => (expected.trim(), expected.trim()),
        };
        for (dialect, want) in [(Dialect::Documented, documented), (Dialect::Picogen2008, original)] {
            let got = outcome(program, x, y, dialect);
            if got != want {
                wrong.push(format!("{program} @ {x},{y} in {dialect}: {got}, the doc says {want}"));
            }
        }
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} examples found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
