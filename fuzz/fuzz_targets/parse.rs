//! Lexer and parser: any bytes (as lossy UTF-8) must give tokens, a tree and diagnostics, never a
//! panic. Every diagnostic must carry a span inside the text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let source = String::from_utf8_lossy(data);
    let len = source.len() as u32;

    let (_tokens, lex_diagnostics) = geogen_syntax::lexer::lex(&source);
    let parsed = geogen_syntax::parse(&source);
    for d in lex_diagnostics.iter().chain(&parsed.diagnostics) {
        assert!(d.code.info().is_some(), "unknown code {}", d.code);
        if let Some(span) = d.span {
            assert!(span.start <= span.end && span.end <= len, "span {span:?} outside 0..{len}: {d:?}");
        }
    }
    // The debugging dump walks the whole tree too.
    let _ = geogen_syntax::dump::script(&parsed.script);
});
