//! Height-Slang: any bytes (as lossy UTF-8; the first byte picks the dialect) compile to a program
//! or to a diagnostic with a known GGE code, a hint and a span inside the text; a compiled program
//! is evaluated at a few points and over a short row (both must agree), under small limits, and
//! never panics or runs away.
#![no_main]

use geogen_slang::{compile, Dialect, Limits, Options};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (dialect, text) = match data.split_first() {
        Some((first, rest)) if first & 1 == 1 => (Dialect::Picogen2008, rest),
        Some((_, rest)) => (Dialect::Documented, rest),
        None => (Dialect::Documented, data),
    };
    let source = String::from_utf8_lossy(text);
    let limits = Limits { max_self_depth: 200, max_point_ops: 20_000, max_nesting: 64 };
    match compile(&source, &Options { dialect, limits }) {
        Ok(program) => {
            let xs: Vec<f64> = (0..40).map(|i| f64::from(i) * 0.37 - 3.0).collect();
            let mut row = vec![0.0; xs.len()];
            let mut ws = program.workspace();
            if program.eval_row(&xs, 0.5, &mut row, &mut ws).is_ok() {
                for (i, &x) in xs.iter().enumerate().step_by(7) {
                    let point = program.eval_point(&[x, 0.5]).expect("a row that evaluates has evaluating points");
                    assert!(point.to_bits() == row[i].to_bits() || (point.is_nan() && row[i].is_nan()));
                }
            }
            for (x, y) in [(0.0, 0.0), (-1.0, 1e300), (f64::NAN, f64::INFINITY)] {
                let _ = program.eval_point(&[x, y]);
            }
        }
        Err(d) => {
            assert!(d.code.info().is_some(), "unknown code {}", d.code);
            assert!(d.hint.is_some(), "{} without a hint", d.code);
            let span = d.span.expect("a span");
            assert!(span.start <= span.end && span.end as usize <= source.len(), "span {span:?} outside the text");
        }
    }
});
