//! Script metadata (reference §2): name, description, map size per dimension, and parameters.

use geogen_diag::Span;

use crate::ir::Name;

#[derive(Clone, Debug, PartialEq, Default)]
pub struct ScriptMetadata {
    pub name: Option<String>,
    pub description: Option<String>,
    pub author: Option<String>,
    pub width: Dimension,
    pub height: Dimension,
    pub parameters: Vec<ScriptParameter>,
}

/// Whether the map is finite along one axis, and its size limits.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Dimension {
    #[default]
    Infinite,
    Finite {
        /// Informational (the original never used it); `None` = "automatic".
        default: Option<u32>,
        min: u32,
        max: u32,
    },
}

/// The largest finite map size (2^32 − 3) and the smallest (1).
pub const MAP_SIZE_MAX: u32 = 0xFFFF_FFFD;
pub const MAP_SIZE_MIN: u32 = 1;

#[derive(Clone, Debug, PartialEq)]
pub struct ScriptParameter {
    pub name: Name,
    /// Defaults to the name.
    pub label: String,
    pub description: String,
    pub kind: ParameterKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ParameterKind {
    Boolean {
        default: bool,
    },
    Number {
        default: f64,
        min: f64,
        max: f64,
        restriction: Restriction,
    },
    /// `Direction` or a script enum.
    Enum {
        type_name: Name,
        items: Vec<(Name, f64)>,
        default: Name,
    },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Restriction {
    Unrestricted,
    /// floor
    Integers,
    /// `1 << floor(log2(max(v, 1)))`
    PowersOf2,
    /// `10^floor(log10(max(v, 1)))`
    PowersOf10,
}

/// A parameter's value, as the VM exposes it through `Parameters`.
#[derive(Clone, Debug, PartialEq)]
pub enum ParameterValue {
    Boolean(bool),
    Number(f64),
    /// The item name and its value.
    Enum(Name, f64),
}
