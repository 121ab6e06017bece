//! The whole pipeline under tight limits: compile with the test library, simulate, and when that
//! succeeds render every yielded map at 16×16 within 8 MiB. Whatever happens must be an `Ok` or a
//! `Failure` with a known code; never a panic, a hang or an unbounded allocation (libFuzzer's
//! `-timeout` and `-rss_limit_mb` catch the last two).
#![no_main]

use geogen::diag::RenderOptions;
use geogen::{CompileOptions, Limits, RenderConfig, RunSettings, Script};
use libfuzzer_sys::fuzz_target;

fn settings() -> RunSettings {
    RunSettings {
        seed: 7,
        render_width: Some(16),
        render_height: Some(16),
        limits: Limits {
            max_call_depth: 200,
            max_block_depth: 200,
            max_object_stack: 10_000,
            instruction_budget: 20_000,
            max_rendering_steps: 200,
            max_array_len: 10_000,
            max_string_len: 100_000,
            max_heap_bytes: 64 << 20,
        },
        ..RunSettings::default()
    }
}

fn check(failure: &geogen::Failure) {
    assert!(!failure.diagnostics.is_empty(), "a failure without diagnostics");
    let d = failure.first();
    assert!(d.code.info().is_some(), "unknown code {}", d.code);
    if let Some(span) = d.span {
        let len = failure.source.text().len() as u32;
        assert!(span.start <= span.end && span.end <= len, "span {span:?} outside 0..{len}: {d:?}");
    }
    let _ = failure.render(RenderOptions { color: false });
}

fuzz_target!(|data: &[u8]| {
    let source = String::from_utf8_lossy(data);
    let options = CompileOptions { test_library: true, main_map_mandatory: false, ..CompileOptions::default() };
    let script = match Script::compile("fuzz.ggs", &source, &options) {
        Ok(script) => script,
        Err(failure) => return check(&failure),
    };
    let settings = settings();
    match script.simulate(&settings) {
        Ok(_) => {}
        Err(failure) => return check(&failure),
    }
    let config = RenderConfig { memory_limit: 8 << 20, ..RenderConfig::default() };
    if let Err(failure) = script.render(&settings, &config, None) {
        check(&failure);
    }
});
