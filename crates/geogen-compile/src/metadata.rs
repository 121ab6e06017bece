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

/// The built-in enum `Direction`, usable as a parameter type.
pub const DIRECTION_ITEMS: &[(&str, f64)] = &[("Horizontal", 0.0), ("Vertical", 1.0)];

/// Parameter names that `Parameters` already uses for the map and render geometry (GGE1405).
pub const RESERVED_PARAMETER_NAMES: &[&str] =
    &["MapWidth", "MapHeight", "RenderOriginX", "RenderOriginY", "RenderWidth", "RenderHeight", "RenderScale"];

impl Restriction {
    /// The metadata identifier of the restriction.
    pub fn name(self) -> &'static str {
        match self {
            Restriction::Unrestricted => "Unrestricted",
            Restriction::Integers => "Integers",
            Restriction::PowersOf2 => "PowersOf2",
            Restriction::PowersOf10 => "PowersOf10",
        }
    }

    /// The restriction a metadata identifier names, if any.
    pub fn from_name(name: &str) -> Option<Restriction> {
        [Restriction::Unrestricted, Restriction::Integers, Restriction::PowersOf2, Restriction::PowersOf10]
            .into_iter()
            .find(|r| r.name() == name)
    }

    /// Forces `value` into the restriction: `Integers` floors; `PowersOf2` gives
    /// `1 << floor(log2(max(v, 1)))` and `PowersOf10` `10^floor(log10(max(v, 1)))`.
    ///
    /// The powers are found by repeated multiplication rather than with `log2`/`log10`, whose
    /// rounding at exact powers varies between math libraries (`log10(1000)` may be 2.9999...).
    pub fn apply(self, value: f64) -> f64 {
        fn largest_power_at_most(value: f64, base: f64) -> f64 {
            let mut power = 1.0;
            // Stops at infinity too: `inf * base <= inf` holds, so also test finiteness.
            while (power * base).is_finite() && power * base <= value {
                power *= base;
            }
            power
        }
        match self {
            Restriction::Unrestricted => value,
            Restriction::Integers => value.floor(),
            Restriction::PowersOf2 => largest_power_at_most(value, 2.0),
            Restriction::PowersOf10 => largest_power_at_most(value, 10.0),
        }
    }

    /// True if the restriction leaves `value` unchanged.
    pub fn allows(self, value: f64) -> bool {
        self.apply(value) == value
    }

    /// What the allowed values are, for messages ("an integer", "a power of 2", ...).
    pub fn describe(self) -> &'static str {
        match self {
            Restriction::Unrestricted => "a number",
            Restriction::Integers => "an integer",
            Restriction::PowersOf2 => "a power of 2",
            Restriction::PowersOf10 => "a power of 10",
        }
    }
}

impl ParameterKind {
    /// `Boolean`, `Number` or the enum's name.
    pub fn type_name(&self) -> &str {
        match self {
            ParameterKind::Boolean { .. } => "Boolean",
            ParameterKind::Number { .. } => "Number",
            ParameterKind::Enum { type_name, .. } => type_name,
        }
    }
}

impl ScriptMetadata {
    /// The parameter called `name`, if the script declares one.
    pub fn parameter(&self, name: &str) -> Option<&ScriptParameter> {
        self.parameters.iter().find(|p| &*p.name == name)
    }
}

impl Dimension {
    pub fn is_finite(&self) -> bool {
        matches!(self, Dimension::Finite { .. })
    }
}
