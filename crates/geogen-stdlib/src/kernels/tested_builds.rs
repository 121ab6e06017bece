//! Which vector builds of the kernels the tests run on this machine.
//!
//! A test that compares every build of a kernel with its scalar definition can only run the
//! builds the processor has. A build it cannot run is not silently passed over: [`has`] says so
//! on stderr, and a machine meant to prove a build sets `GEOGEN_REQUIRE_ISAS` (features separated
//! by commas, e.g. `avx2,avx512f`): then a test that would skip one fails instead.

/// Whether the processor has `feature` (`"avx2"`, `"avx512f"` or `"avx512vl"`), so a test runs
/// the builds that need it; see the module docs for what happens when it does not.
pub(crate) fn has(feature: &str) -> bool {
    let present = detected(feature);
    if !present {
        let required = std::env::var("GEOGEN_REQUIRE_ISAS").unwrap_or_default();
        assert!(
            !required.split(',').any(|r| r.trim() == feature),
            "this machine lacks {feature}, whose builds GEOGEN_REQUIRE_ISAS requires the tests to run"
        );
        eprintln!("note: the {feature} builds are not tested here: the processor lacks {feature}");
    }
    present
}

fn detected(feature: &str) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        match feature {
            "avx2" => std::arch::is_x86_feature_detected!("avx2"),
            "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
            "avx512vl" => std::arch::is_x86_feature_detected!("avx512vl"),
            _ => false,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = feature;
        false
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_unknown_feature_is_absent() {
        assert!(!super::detected("no-such-feature"));
    }
}
