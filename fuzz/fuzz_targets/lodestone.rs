//! Lodestone: any bytes are read as rules in both modes; when they parse, every rule is generated
//! (with GeoGen Script code under small limits) and enumerated within small limits. Never a panic
//! or a hang; every diagnostic has a known code and a span inside the text.
#![no_main]

use std::sync::Arc;

use geogen::diag::SourceFile;
use geogen::names::{self as lodestone, EnumerationLimits, Limits, Mode, ScriptCode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let mode = if first & 1 == 0 { Mode::Extended } else { Mode::Strict };
    let text = String::from_utf8_lossy(rest).into_owned();
    let len = text.len() as u32;
    let file = Arc::new(SourceFile::new("f.lds", text));
    let rules = match lodestone::parse(file, mode) {
        Ok(rules) => rules,
        Err(diagnostics) => {
            for d in diagnostics.iter() {
                assert!(d.code.info().is_some(), "unknown code {}", d.code);
                if let Some(span) = d.span {
                    assert!(span.start <= span.end && span.end <= len, "span {span:?} outside 0..{len}: {d:?}");
                }
            }
            return;
        }
    };
    let limits = Limits { max_work: 200_000, ..Limits::default() };
    let code_limits = geogen::Limits { instruction_budget: 20_000, ..lodestone::default_code_limits() };
    let mut code = ScriptCode::new(code_limits);
    let enumeration = EnumerationLimits { max_outputs: 100, max_paths: 500, max_work: 200_000 };
    for rule in rules.rules().iter().take(4) {
        for seed in 0..2 {
            if let Err(d) = lodestone::generate(&rules, &rule.name, seed, &limits, &mut code, &[]) {
                assert!(d.code.info().is_some(), "unknown code {}", d.code);
            }
        }
        if let Err(d) = lodestone::enumerate(&rules, &rule.name, &limits, &enumeration, &mut code, &[]) {
            assert!(d.code.info().is_some(), "unknown code {}", d.code);
        }
    }
});
