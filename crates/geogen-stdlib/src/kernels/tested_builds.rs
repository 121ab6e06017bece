//! Which vector builds of the kernels the tests run on this machine.
//!
//! A test that compares every build of a kernel with its scalar definition can only run the
//! builds the processor has. A build it cannot run is not silently passed over: [`has`] says so
//! on stderr, and a machine meant to prove a build sets `GEOGEN_REQUIRE_ISA` (levels separated by
//! commas, e.g. `avx2,avx512`): then a test that would skip one fails instead.

use geogen_simd::{Isa, REQUIRE_VARIABLE};

/// Whether the processor runs `isa`, so a test runs the builds of that level; see the module
/// docs for what happens when it does not.
pub(crate) fn has(isa: Isa) -> bool {
    let present = isa.is_supported();
    if !present {
        let required = geogen_simd::required().unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !required.contains(&isa),
            "this machine lacks {isa}, whose builds {REQUIRE_VARIABLE} requires the tests to run"
        );
        eprintln!("note: the {isa} builds are not tested here: the processor lacks {isa}");
    }
    present
}
