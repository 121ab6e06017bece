//! Parser and compiler: any text must compile or fail with diagnostics that carry a known code and
//! a span inside the text, and those diagnostics must render; a compiled script must disassemble
//! and describe itself. Never a panic.
#![no_main]

use geogen::diag::RenderOptions;
use geogen::{CompileOptions, Script};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let source = String::from_utf8_lossy(data);
    let len = source.len() as u32;
    // The first byte picks the options, so both library flavours and both main-map modes are
    // covered without a structured input.
    let flags = data.first().copied().unwrap_or(0);
    let options = CompileOptions {
        test_library: flags & 1 != 0,
        main_map_mandatory: flags & 2 != 0,
        ..CompileOptions::default()
    };
    match Script::compile("fuzz.ggs", &source, &options) {
        Ok(script) => {
            let _ = script.info();
            let _ = script.compiled().disassemble(Some(script.source()));
        }
        Err(failure) => {
            assert!(!failure.diagnostics.is_empty(), "a failure without diagnostics");
            for d in &failure.diagnostics {
                assert!(d.code.info().is_some(), "unknown code {}", d.code);
                let span = d.span.unwrap_or_else(|| panic!("a compile error without a span: {d:?}"));
                assert!(span.start <= span.end && span.end <= len, "span {span:?} outside 0..{len}: {d:?}");
            }
            let _ = failure.render(RenderOptions { color: false });
            let _ = failure.first_location();
        }
    }
});
