//! What an operation declares about its script side: its name, its parameters with their kinds
//! and defaults, the cross-parameter checks, its family and its documentation.
//!
//! Everything here is `const` data, so a declaration is a plain `const SIGNATURE: Signature = ...`
//! in the operation's own file, and every consumer (binding, argument checks, registration, the
//! library reference, the derived tests) reads the same value.

use geogen_diag::{codes, ErrorCode};
use geogen_render::ObjectKind;

use crate::messages::format_number;

/// The script type an operation belongs to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Owner {
    HeightMap,
    HeightProfile,
}

impl Owner {
    pub const fn type_name(self) -> &'static str {
        match self {
            Owner::HeightMap => "HeightMap",
            Owner::HeightProfile => "HeightProfile",
        }
    }

    /// How messages name an instance (`map.Blur(...)`, `profile.Blur(...)`).
    pub const fn instance_name(self) -> &'static str {
        match self {
            Owner::HeightMap => "map",
            Owner::HeightProfile => "profile",
        }
    }

    pub const fn object_kind(self) -> ObjectKind {
        match self {
            Owner::HeightMap => ObjectKind::Map,
            Owner::HeightProfile => ObjectKind::Profile,
        }
    }
}

/// Whether scripts call the operation on the type (`HeightMap.Flat()`, it creates an object) or on
/// an instance (`map.Blur(5)`, it modifies the instance and returns it).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Receiver {
    Static,
    Method,
}

/// The families of the standard library (spec §5), for the reference and the tests.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// Create an object from constants and coordinates (gradients, noise, patterns).
    Generator,
    /// Combine the object with numbers or other objects (add, multiply, combine, min, max).
    Combiner,
    /// Change heights, pointwise or from a neighbourhood (blur, crop, distance map, glaciate).
    Filter,
    /// Move pixels around (move, rotate, rescale, distort, shift).
    Transform,
}

impl Family {
    pub const ALL: [Family; 4] = [Family::Generator, Family::Combiner, Family::Filter, Family::Transform];

    pub const fn title(self) -> &'static str {
        match self {
            Family::Generator => "Generators",
            Family::Combiner => "Combiners",
            Family::Filter => "Filters",
            Family::Transform => "Transforms",
        }
    }
}

/// Along which axis a coordinate argument is resolved (relative coordinates need one).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Along {
    Horizontal,
    Vertical,
    /// Along the direction given by the `Direction` parameter at this index.
    Param(usize),
    /// Across the direction given by the `Direction` parameter at this index: a row for
    /// `Horizontal` (resolved against the map height), a column for `Vertical` (`Slice`).
    Across(usize),
    /// No axis: a relative coordinate is an error (GGE2703), as for most profile positions.
    Absolute,
}

/// What a parameter accepts and how it is checked. Each check has its error code.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Kind {
    /// Any Number.
    Number,
    /// A height: a Number in [-1, 1] (GGE2303).
    Height,
    /// A size, radius or distance in map units: a Number in [0, 4294967295] (GGE2309).
    Size,
    /// A Number in `[min, max]`, `code` otherwise.
    Range {
        min: f64,
        max: f64,
        code: ErrorCode,
    },
    /// A seed: a Number, reduced to 32 bits as the original does.
    Seed,
    Boolean,
    /// A Point, resolved to whole logical coordinates (relative components × map size).
    Point,
    /// A Coordinate (or a Number), resolved to a whole logical coordinate along an axis.
    Coordinate(Along),
    Direction,
    /// A HeightMap or HeightProfile object.
    Object(Owner),
    /// A height (GGE2303) or an object: the type chooses the mode (`Add`).
    HeightOr(Owner),
    /// Any Number or an object (`Multiply`).
    NumberOr(Owner),
    /// Noise layers: an Array `{wavelength: amplitude}` (GGE2708–GGE2711, GGE2303).
    NoiseLayers,
    /// Profile points: an Array `{coordinate: height}` (GGE2706, GGE2707, GGE2303), keys resolved
    /// along the axis.
    ProfilePoints(Along),
    /// A String, e.g. the name of an input map (`HeightMap.Input("base")`).
    Text,
    /// A String holding a Height-Slang program (compiled by the operation's `record`, whose
    /// errors point at the call).
    HeightSlang,
    /// A String that must be one of `items` (`code` otherwise).
    Choice {
        items: &'static [&'static str],
        code: ErrorCode,
    },
}

impl Kind {
    /// The type name shown in signatures and type errors.
    pub const fn type_name(self) -> &'static str {
        match self {
            Kind::Number | Kind::Height | Kind::Size | Kind::Range { .. } | Kind::Seed => "Number",
            Kind::Boolean => "Boolean",
            Kind::Point => "Point",
            Kind::Coordinate(_) => "Coordinate",
            Kind::Direction => "Direction",
            Kind::Object(owner) => owner.type_name(),
            Kind::HeightOr(Owner::HeightMap) | Kind::NumberOr(Owner::HeightMap) => "Number or HeightMap",
            Kind::HeightOr(Owner::HeightProfile) | Kind::NumberOr(Owner::HeightProfile) => "Number or HeightProfile",
            Kind::NoiseLayers | Kind::ProfilePoints(_) => "Array",
            Kind::Text | Kind::HeightSlang | Kind::Choice { .. } => "String",
        }
    }
}

/// What happens when a parameter is not passed.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Default {
    /// It must be passed (GGE2103 otherwise).
    Required,
    /// It may be left out; the operation sees [`crate::operation::Arg::Absent`].
    Optional,
    Number(f64),
    Bool(bool),
    /// The value of the parameter at this (earlier) index (`Rescale(h, v = h)`).
    SameAs(usize),
    /// A String default (a `Choice` item).
    Text(&'static str),
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Param {
    /// The name in signatures and messages (the original's documented name).
    pub name: &'static str,
    pub kind: Kind,
    pub default: Default,
    /// For a range whose cost grows with the value (a solve's resolution): the largest value the
    /// derived tests draw valid arguments from ([`Param::tested_kind`]); the range's ends are
    /// still tested where a call may be refused.
    pub tested_up_to: Option<f64>,
}

impl Param {
    pub const fn new(name: &'static str, kind: Kind) -> Param {
        Param { name, kind, default: Default::Required, tested_up_to: None }
    }
    pub const fn number(name: &'static str) -> Param {
        Param::new(name, Kind::Number)
    }
    pub const fn height(name: &'static str) -> Param {
        Param::new(name, Kind::Height)
    }
    pub const fn size(name: &'static str) -> Param {
        Param::new(name, Kind::Size)
    }
    pub const fn point(name: &'static str) -> Param {
        Param::new(name, Kind::Point)
    }
    pub const fn map(name: &'static str) -> Param {
        Param::new(name, Kind::Object(Owner::HeightMap))
    }
    pub const fn profile(name: &'static str) -> Param {
        Param::new(name, Kind::Object(Owner::HeightProfile))
    }
    pub const fn direction(name: &'static str) -> Param {
        Param::new(name, Kind::Direction)
    }
    pub const fn seed(name: &'static str) -> Param {
        Param::new(name, Kind::Seed).or(0.0)
    }
    /// This parameter, whose cost grows with its value, tested with valid values up to `max`.
    pub const fn tested_up_to(self, max: f64) -> Param {
        Param { tested_up_to: Some(max), ..self }
    }
    /// The kind valid test arguments are drawn from: the declared kind, its range cut at
    /// [`Param::tested_up_to`].
    pub const fn tested_kind(&self) -> Kind {
        match (self.kind, self.tested_up_to) {
            (Kind::Range { min, max, code }, Some(cut)) => {
                Kind::Range { min, max: if cut < max { cut } else { max }, code }
            }
            (kind, _) => kind,
        }
    }
    /// This parameter with a Number default.
    pub const fn or(self, default: f64) -> Param {
        Param { default: Default::Number(default), ..self }
    }
    /// This parameter with a Boolean default.
    pub const fn or_bool(self, default: bool) -> Param {
        Param { default: Default::Bool(default), ..self }
    }
    /// This parameter with a String default.
    pub const fn or_text(self, default: &'static str) -> Param {
        Param { default: Default::Text(default), ..self }
    }
    /// This parameter, optional without a default value.
    pub const fn optional(self) -> Param {
        Param { default: Default::Optional, ..self }
    }
    /// This parameter, defaulting to the value of parameter `index`.
    pub const fn same_as(self, index: usize) -> Param {
        Param { default: Default::SameAs(index), ..self }
    }
}

/// Checks that involve several parameters.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Check {
    /// The Number at the first index must not exceed the one at the second (GGE2705).
    Ordered(usize, usize),
}

/// A worked example: a whole script, rendered over `size` pixels from the origin at scale 1, and
/// hand-computed heights it must produce at some pixels of its map `main` (for a yielded profile,
/// `y` is 0). The examples are the numeric tests of the operation and appear in the reference.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Example {
    pub script: &'static str,
    pub size: (u32, u32),
    /// `(x, y, height)`, compared within 1e-6.
    pub expect: &'static [(i64, i64, f32)],
}

/// The script side of an operation.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Signature {
    pub owner: Owner,
    /// The name scripts call, e.g. `Blur`.
    pub name: &'static str,
    pub receiver: Receiver,
    pub params: &'static [Param],
    pub checks: &'static [Check],
    pub family: Family,
    /// One or two sentences for the reference: what it does, its numerics, its bounds.
    pub summary: &'static str,
    pub examples: &'static [Example],
}

impl Signature {
    /// `HeightMap.Blur`: the name of the operation's (first) rendering step.
    pub fn qualified_name(&self) -> String {
        format!("{}.{}", self.owner.type_name(), self.name)
    }

    /// Arguments that must be passed.
    pub fn min_args(&self) -> usize {
        self.params.iter().take_while(|p| p.default == Default::Required).count()
    }

    pub fn max_args(&self) -> usize {
        self.params.len()
    }

    /// The signature as messages and the reference show it:
    /// `HeightMap.Glaciate(Number strength = 0.2, Boolean includeNegative = false)` for statics,
    /// `map.Blur(Number radius)` for methods.
    pub fn text(&self) -> String {
        let receiver = match self.receiver {
            Receiver::Static => self.owner.type_name(),
            Receiver::Method => self.owner.instance_name(),
        };
        let params: Vec<String> = self.params.iter().map(|p| self.param_text(p)).collect();
        format!("{receiver}.{}({})", self.name, params.join(", "))
    }

    fn param_text(&self, p: &Param) -> String {
        let base = format!("{} {}", p.kind.type_name(), p.name);
        match p.default {
            Default::Required => base,
            Default::Optional => format!("{base}?"),
            Default::Number(n) => format!("{base} = {}", format_number(n)),
            Default::Bool(b) => format!("{base} = {b}"),
            Default::Text(t) => format!("{base} = \"{t}\""),
            Default::SameAs(i) => format!("{base} = {}", self.params.get(i).map_or("?", |q| q.name)),
        }
    }

    /// Internal consistency, checked by a test for every declared operation: required parameters
    /// come first, every index points where it must, examples exist.
    pub fn validate(&self) -> Result<(), String> {
        let name = self.qualified_name();
        let required = self.min_args();
        if self.params[required..].iter().any(|p| p.default == Default::Required) {
            return Err(format!("{name}: a required parameter follows an optional one"));
        }
        for (i, p) in self.params.iter().enumerate() {
            if let Default::SameAs(j) = p.default {
                if j >= i {
                    return Err(format!("{name}: parameter {} defaults to a later parameter", p.name));
                }
            }
            let along = match p.kind {
                Kind::Coordinate(a) | Kind::ProfilePoints(a) => Some(a),
                _ => None,
            };
            if let Some(Along::Param(j) | Along::Across(j)) = along {
                if self.params.get(j).map(|q| q.kind) != Some(Kind::Direction) {
                    return Err(format!(
                        "{name}: parameter {} is resolved along a parameter that is no Direction",
                        p.name
                    ));
                }
            }
            if let Kind::Range { min, max, code } = p.kind {
                if min.partial_cmp(&max) == Some(std::cmp::Ordering::Greater)
                    || min.is_nan()
                    || max.is_nan()
                    || code.info().is_none()
                {
                    return Err(format!("{name}: parameter {} has a bad range or code", p.name));
                }
            }
        }
        for p in self.params {
            if let Kind::Choice { items, code } = p.kind {
                let default_ok = match p.default {
                    Default::Text(t) => items.contains(&t),
                    Default::Required | Default::Optional => true,
                    _ => false,
                };
                if items.is_empty() || code.info().is_none() || !default_ok {
                    return Err(format!(
                        "{name}: parameter {} has no items, a bad code or a default not among them",
                        p.name
                    ));
                }
            }
        }
        for check in self.checks {
            let Check::Ordered(a, b) = *check;
            let numeric = |i: usize| {
                self.params.get(i).is_some_and(|p| {
                    matches!(
                        p.kind,
                        Kind::Number | Kind::Height | Kind::Size | Kind::Range { .. } | Kind::Coordinate(_)
                    )
                })
            };
            if !numeric(a) || !numeric(b) {
                return Err(format!("{name}: an ordering check names a parameter that is not a number"));
            }
        }
        if self.examples.is_empty() {
            return Err(format!("{name}: no example (the examples are its numeric tests)"));
        }
        if self.summary.trim().is_empty() {
            return Err(format!("{name}: no summary"));
        }
        Ok(())
    }
}

impl Signature {
    /// The error codes its argument checks can give, derived from the declaration (operations may
    /// name further ones in their summary, such as a singular matrix).
    pub fn error_codes(&self) -> Vec<ErrorCode> {
        let mut out = vec![codes::GGE2101, codes::GGE2103];
        for p in self.params {
            let extra: &[ErrorCode] = match p.kind {
                Kind::Point => &[codes::GGE2704, codes::GGE2304],
                Kind::Coordinate(Along::Absolute) => &[codes::GGE2703, codes::GGE2304],
                Kind::Coordinate(_) => &[codes::GGE2704, codes::GGE2304],
                Kind::NoiseLayers => &[codes::GGE2708, codes::GGE2709, codes::GGE2710, codes::GGE2711, codes::GGE2303],
                Kind::ProfilePoints(_) => {
                    &[codes::GGE2706, codes::GGE2707, codes::GGE2303, codes::GGE2703, codes::GGE2704]
                }
                _ => &[],
            };
            out.extend_from_slice(extra);
            out.extend(range_code(p.kind));
        }
        if !self.checks.is_empty() {
            out.push(codes::GGE2705);
        }
        out.sort();
        out.dedup();
        out
    }
}

/// The error code a wrong value of this kind gives, if the kind checks a range (for messages and
/// the derived tests).
pub const fn range_code(kind: Kind) -> Option<ErrorCode> {
    match kind {
        Kind::Height | Kind::HeightOr(_) => Some(codes::GGE2303),
        Kind::Size => Some(codes::GGE2309),
        Kind::Range { code, .. } | Kind::Choice { code, .. } => Some(code),
        _ => None,
    }
}
