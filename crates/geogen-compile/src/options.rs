//! What the compiler needs to know about the host: which names the native library already takes.

use std::collections::BTreeSet;

/// The types every geogen host defines (reference §3.1). A script enum may not reuse these names
/// (GGE1308).
pub const CORE_TYPE_NAMES: &[&str] = &[
    "null",
    "Boolean",
    "Number",
    "String",
    "Array",
    "Coordinate",
    "Point",
    "Direction",
    "RandomSequence2D",
    "HeightMap",
    "HeightProfile",
    "Parameters",
    // geogen's own: Lodestone names and map labels (docs/lodestone.md).
    "Names",
];

/// Options of [`crate::compile`].
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// Global functions of the native library (`Sin`, `Print`, `AssertEquals`, ...). A script
    /// function with one of these names is GGE1306. Operator functions (`+`, `[]`...) need not be
    /// listed: the parser cannot produce such a function name.
    pub native_functions: BTreeSet<String>,
    /// Types of the native library. A script enum with one of these names is GGE1308.
    pub native_types: BTreeSet<String>,
    /// Report GGE1312 when no `yield` in the script produces the map "main".
    pub main_map_mandatory: bool,
}

impl Default for CompileOptions {
    /// The core types of [`CORE_TYPE_NAMES`], no native functions, and the main map mandatory.
    fn default() -> CompileOptions {
        CompileOptions {
            native_functions: BTreeSet::new(),
            native_types: CORE_TYPE_NAMES.iter().map(|s| s.to_string()).collect(),
            main_map_mandatory: true,
        }
    }
}

impl CompileOptions {
    /// Options with the given native function and type names.
    pub fn new<F, T>(native_functions: F, native_types: T, main_map_mandatory: bool) -> CompileOptions
    where
        F: IntoIterator,
        F::Item: Into<String>,
        T: IntoIterator,
        T::Item: Into<String>,
    {
        CompileOptions {
            native_functions: native_functions.into_iter().map(Into::into).collect(),
            native_types: native_types.into_iter().map(Into::into).collect(),
            main_map_mandatory,
        }
    }

    /// Adds native global function names (builder style).
    pub fn with_functions<I>(mut self, names: I) -> CompileOptions
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.native_functions.extend(names.into_iter().map(Into::into));
        self
    }

    /// Sets whether a yield of "main" is required (builder style).
    pub fn with_main_map_mandatory(mut self, mandatory: bool) -> CompileOptions {
        self.main_map_mandatory = mandatory;
        self
    }
}
