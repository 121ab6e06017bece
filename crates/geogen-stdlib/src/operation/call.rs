//! Checking a script's arguments against a [`Signature`]: every operation's arguments go through
//! this one function, so each kind of parameter is checked the same way, with the same error code
//! and message, everywhere.

use std::collections::BTreeMap;

use geogen_diag::codes;
use geogen_render::Slot;
use geogen_vm::{Args, Coordinate, Ctx, RuntimeError, TypeId, Value};

use super::signature::{Along, Check, Default, Kind, Owner, Param, Signature};
use crate::coordinates::{resolve_coordinate, Axis};
use crate::util::n;

/// One checked argument, with defaults filled in.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// An optional parameter that was not passed.
    Absent,
    Number(f64),
    Bool(bool),
    /// A point in whole logical coordinates.
    Point(i32, i32),
    /// A coordinate in whole logical units.
    Coordinate(i32),
    Direction(Axis),
    /// The renderer slot of a HeightMap or HeightProfile.
    Object(Owner, Slot),
    /// Noise layers: wavelength → amplitude in height units, ascending wavelengths.
    Layers(BTreeMap<u32, i32>),
    /// Profile points: (coordinate, height), in the order given.
    Points(Vec<(i32, f64)>),
    /// A String (a Height-Slang program, an input map's name, or one of a choice's items).
    Text(String),
}

/// Which argument an accessor of [`Call`] reads: its parameter's name as the signature declares
/// it (`call.number("wavelength")`, the way operations read them), or its position.
pub trait At: Copy {
    /// The position in the signature's parameters, if the signature has it.
    fn position(self, params: &[Param]) -> Option<usize>;
    /// How an error names it.
    fn describe(self) -> String;
}

impl At for usize {
    fn position(self, _: &[Param]) -> Option<usize> {
        Some(self)
    }
    fn describe(self) -> String {
        format!("argument {}", self + 1)
    }
}

impl At for &str {
    fn position(self, params: &[Param]) -> Option<usize> {
        params.iter().position(|p| p.name == self)
    }
    fn describe(self) -> String {
        format!("argument `{self}`")
    }
}

/// The checked arguments of one call. The accessors return an internal error if the operation asks
/// for something its signature does not declare (a bug the derived tests catch, never a panic).
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub args: Vec<Arg>,
    signature: &'static Signature,
}

impl Call {
    /// The declaration the arguments were checked against (for an operation's own messages).
    pub fn signature(&self) -> &'static Signature {
        self.signature
    }

    fn get(&self, at: impl At) -> Result<&Arg, RuntimeError> {
        match at.position(self.signature.params) {
            Some(i) => Ok(self.args.get(i).unwrap_or(&Arg::Absent)),
            None => Err(RuntimeError::internal(format!(
                "`{}` read {}, which its signature does not declare",
                self.signature.name,
                at.describe()
            ))),
        }
    }

    fn mismatch(&self, at: impl At, what: &str) -> RuntimeError {
        RuntimeError::internal(format!(
            "`{}` read {} as {what}, which its signature does not declare",
            self.signature.name,
            at.describe()
        ))
    }

    pub fn number(&self, at: impl At) -> Result<f64, RuntimeError> {
        match self.get(at)? {
            Arg::Number(x) => Ok(*x),
            _ => Err(self.mismatch(at, "a Number")),
        }
    }

    /// A seed argument, reduced to 32 bits as the original does.
    pub fn seed(&self, at: impl At) -> Result<u32, RuntimeError> {
        Ok(geogen_random::seed_from_number(self.number(at)?))
    }

    pub fn boolean(&self, at: impl At) -> Result<bool, RuntimeError> {
        match self.get(at)? {
            Arg::Bool(b) => Ok(*b),
            _ => Err(self.mismatch(at, "a Boolean")),
        }
    }

    pub fn point(&self, at: impl At) -> Result<(i32, i32), RuntimeError> {
        match self.get(at)? {
            Arg::Point(x, y) => Ok((*x, *y)),
            _ => Err(self.mismatch(at, "a Point")),
        }
    }

    /// A point as `f64` logical coordinates.
    pub fn point_f64(&self, at: impl At) -> Result<(f64, f64), RuntimeError> {
        let (x, y) = self.point(at)?;
        Ok((f64::from(x), f64::from(y)))
    }

    pub fn coordinate(&self, at: impl At) -> Result<i32, RuntimeError> {
        match self.get(at)? {
            Arg::Coordinate(c) => Ok(*c),
            _ => Err(self.mismatch(at, "a Coordinate")),
        }
    }

    pub fn axis(&self, at: impl At) -> Result<Axis, RuntimeError> {
        match self.get(at)? {
            Arg::Direction(a) => Ok(*a),
            _ => Err(self.mismatch(at, "a Direction")),
        }
    }

    /// The slot of a map or profile argument.
    pub fn object(&self, at: impl At) -> Result<Slot, RuntimeError> {
        match self.get(at)? {
            Arg::Object(_, slot) => Ok(*slot),
            _ => Err(self.mismatch(at, "an object")),
        }
    }

    /// An optional object argument.
    pub fn opt_object(&self, at: impl At) -> Result<Option<Slot>, RuntimeError> {
        match self.get(at)? {
            Arg::Absent => Ok(None),
            _ => self.object(at).map(Some),
        }
    }

    pub fn layers(&self, at: impl At) -> Result<Option<&BTreeMap<u32, i32>>, RuntimeError> {
        match self.get(at)? {
            Arg::Layers(layers) => Ok(Some(layers)),
            Arg::Absent => Ok(None),
            _ => Err(self.mismatch(at, "noise layers")),
        }
    }

    /// A String argument (a program or a choice's item).
    pub fn text(&self, at: impl At) -> Result<&str, RuntimeError> {
        match self.get(at)? {
            Arg::Text(t) => Ok(t),
            _ => Err(self.mismatch(at, "a String")),
        }
    }

    pub fn points(&self, at: impl At) -> Result<&[(i32, f64)], RuntimeError> {
        match self.get(at)? {
            Arg::Points(points) => Ok(points),
            _ => Err(self.mismatch(at, "profile points")),
        }
    }
}

/// Checks the arguments of a call against `sig` (the VM has checked their number already).
pub fn check(sig: &'static Signature, ctx: &Ctx<'_>, args: &Args<'_>) -> Result<Call, RuntimeError> {
    let mut checked: Vec<Arg> = Vec::with_capacity(sig.params.len());
    // Directions first: coordinates may be resolved along them, whatever their order.
    for (i, param) in sig.params.iter().enumerate() {
        let value = if i < args.len() { Some(args.value(i)?) } else { None };
        let arg = match (value, param.default) {
            (None, Default::Required) => {
                return Err(RuntimeError::internal(format!("`{}` is missing argument {}", sig.name, i + 1)))
            }
            (None, Default::Optional) => Arg::Absent,
            // A coordinate's default is a whole absolute coordinate (`TransformHeights(p, 0, 100)`).
            (None, Default::Number(x)) => match param.kind {
                Kind::Coordinate(_) => Arg::Coordinate(crate::util::trunc_i32(x).unwrap_or(0)),
                _ => Arg::Number(x),
            },
            (None, Default::Bool(b)) => Arg::Bool(b),
            (None, Default::Text(t)) => Arg::Text(t.to_string()),
            (None, Default::SameAs(j)) => checked.get(j).cloned().unwrap_or(Arg::Absent),
            (Some(value), _) => match param.kind {
                // Resolved in the second pass.
                Kind::Coordinate(_) | Kind::ProfilePoints(_) => Arg::Absent,
                _ => check_simple(sig, ctx, args, i, param, value).map_err(|e| e.at_argument(i))?,
            },
        };
        checked.push(arg);
    }
    for (i, param) in sig.params.iter().enumerate() {
        let Some(value) = args.get(i) else { continue };
        let axis_of = |along: Along| -> Result<Option<Axis>, RuntimeError> {
            Ok(match along {
                Along::Horizontal => Some(Axis::Horizontal),
                Along::Vertical => Some(Axis::Vertical),
                Along::Absolute => None,
                Along::Param(j) => match checked.get(j) {
                    Some(Arg::Direction(axis)) => Some(*axis),
                    _ => None,
                },
                Along::Across(j) => match checked.get(j) {
                    Some(Arg::Direction(Axis::Horizontal)) => Some(Axis::Vertical),
                    Some(Arg::Direction(Axis::Vertical)) => Some(Axis::Horizontal),
                    _ => None,
                },
            })
        };
        let resolved = match param.kind {
            Kind::Coordinate(along) => {
                let c = match value {
                    Value::Coordinate(c) => *c,
                    Value::Number(x) => Coordinate::absolute(*x),
                    _ => return Err(args.type_error(i, "Coordinate")),
                };
                axis_of(along).and_then(|axis| coordinate(ctx, sig, param, c, axis)).map(Arg::Coordinate)
            }
            Kind::ProfilePoints(along) => {
                axis_of(along).and_then(|axis| profile_points(ctx, args, i, axis)).map(Arg::Points)
            }
            _ => continue,
        };
        checked[i] = resolved.map_err(|e| e.at_argument(i))?;
    }
    for check in sig.checks {
        let Check::Ordered(a, b) = *check;
        let value = |i: usize| match checked.get(i) {
            Some(Arg::Number(x)) => Some(*x),
            Some(Arg::Coordinate(c)) => Some(f64::from(*c)),
            _ => None,
        };
        if let (Some(lo), Some(hi)) = (value(a), value(b)) {
            if lo > hi {
                return Err(RuntimeError::new(
                    codes::GGE2705,
                    format!(
                        "`{}`: {} ({}) is greater than {} ({})",
                        sig.name,
                        sig.params[a].name,
                        n(lo),
                        sig.params[b].name,
                        n(hi)
                    ),
                )
                .with_hint(format!("{} must not exceed {}", sig.params[a].name, sig.params[b].name))
                .at_argument(a));
            }
        }
    }
    Ok(Call { args: checked, signature: sig })
}

fn out_of_range(
    sig: &Signature,
    i: usize,
    param: &Param,
    x: f64,
    range: &str,
    code: geogen_diag::ErrorCode,
) -> RuntimeError {
    RuntimeError::new(
        code,
        format!("argument {} of `{}` ({}) is {}, outside {range}", i + 1, sig.name, param.name, n(x)),
    )
}

fn height(sig: &Signature, i: usize, param: &Param, x: f64) -> Result<f64, RuntimeError> {
    if (-1.0..=1.0).contains(&x) {
        Ok(x)
    } else {
        Err(out_of_range(sig, i, param, x, "[-1, 1]", codes::GGE2303)
            .with_hint("heights run from -1 (lowest) to 1 (highest)"))
    }
}

fn check_simple(
    sig: &'static Signature,
    ctx: &Ctx<'_>,
    args: &Args<'_>,
    i: usize,
    param: &Param,
    value: &Value,
) -> Result<Arg, RuntimeError> {
    let type_error = || args.type_error(i, param.kind.type_name());
    let number = || match value {
        Value::Number(x) => Ok(*x),
        _ => Err(type_error()),
    };
    let object = |owner: Owner| match (owner, value) {
        (Owner::HeightMap, Value::HeightMap(h)) | (Owner::HeightProfile, Value::HeightProfile(h)) => {
            Ok(Arg::Object(owner, Slot(h.slot)))
        }
        _ => Err(type_error()),
    };
    Ok(match param.kind {
        Kind::Number | Kind::Seed => Arg::Number(number()?),
        Kind::Height => Arg::Number(height(sig, i, param, number()?)?),
        Kind::Size => {
            let x = number()?;
            if !(0.0..=u32::MAX as f64).contains(&x) {
                return Err(out_of_range(sig, i, param, x, "[0, 4294967295]", codes::GGE2309)
                    .with_hint("sizes, radii and distances are in map units, from 0 up"));
            }
            Arg::Number(x)
        }
        Kind::Range { min, max, code } => {
            let x = number()?;
            if !(min..=max).contains(&x) {
                return Err(out_of_range(sig, i, param, x, &format!("[{}, {}]", n(min), n(max)), code));
            }
            Arg::Number(x)
        }
        Kind::Boolean => match value {
            Value::Bool(b) => Arg::Bool(*b),
            _ => return Err(type_error()),
        },
        Kind::Point => match value {
            Value::Point(p) => {
                let (x, y) = crate::coordinates::resolve_point(*p, &ctx.env.geometry)?;
                Arg::Point(x, y)
            }
            _ => return Err(type_error()),
        },
        Kind::Direction => match value {
            Value::Enum(e) if e.ty == TypeId::DIRECTION => {
                Arg::Direction(if e.value == 0.0 { Axis::Horizontal } else { Axis::Vertical })
            }
            _ => return Err(type_error()),
        },
        Kind::Object(owner) => object(owner)?,
        Kind::HeightOr(owner) => match value {
            Value::Number(x) => Arg::Number(height(sig, i, param, *x)?),
            _ => object(owner)?,
        },
        Kind::NumberOr(owner) => match value {
            Value::Number(x) => Arg::Number(*x),
            _ => object(owner)?,
        },
        Kind::NoiseLayers => Arg::Layers(noise_layers(args, i)?),
        Kind::Text => match value {
            Value::String(text) => Arg::Text(text.as_str().to_string()),
            _ => return Err(type_error()),
        },
        Kind::HeightSlang => match value {
            Value::String(text) => Arg::Text(text.as_str().to_string()),
            _ => return Err(type_error()),
        },
        Kind::Choice { items, code } => match value {
            Value::String(text) if items.contains(&text.as_str()) => Arg::Text(text.as_str().to_string()),
            Value::String(text) => {
                let list: Vec<String> = items.iter().map(|i| format!("\"{i}\"")).collect();
                return Err(RuntimeError::new(
                    code,
                    format!(
                        "argument {} of `{}` ({}) is \"{}\", which is none of {}",
                        i + 1,
                        sig.name,
                        param.name,
                        text.as_str().escape_debug(),
                        list.join(", ")
                    ),
                )
                .with_hint(format!("{} is one of {}", param.name, list.join(", "))));
            }
            _ => return Err(type_error()),
        },
        Kind::Coordinate(_) | Kind::ProfilePoints(_) => Arg::Absent,
    })
}

fn coordinate(
    ctx: &Ctx<'_>,
    sig: &Signature,
    param: &Param,
    c: Coordinate,
    axis: Option<Axis>,
) -> Result<i32, RuntimeError> {
    match axis {
        Some(axis) => resolve_coordinate(c, axis, &ctx.env.geometry),
        None if c.relative => Err(RuntimeError::new(
            codes::GGE2703,
            format!(
                "`{}`: {} is the relative coordinate @{}, but it has no direction to be relative to",
                sig.name,
                param.name,
                n(c.value)
            ),
        )
        .with_hint("use an absolute coordinate here")),
        None => resolve_coordinate(c, Axis::Horizontal, &ctx.env.geometry),
    }
}

/// A `{wavelength: amplitude}` array (reference §4.6): keys and values Numbers (GGE2708/2709),
/// wavelengths positive (GGE2710), amplitudes in (0, 1] (GGE2711, GGE2303). Wavelengths are
/// truncated to whole units and amplitudes to height units (× 32767), as in the original; a
/// wavelength repeated after truncation keeps the last amplitude.
fn noise_layers(args: &Args<'_>, i: usize) -> Result<BTreeMap<u32, i32>, RuntimeError> {
    let array = args.array(i)?;
    let items = array.items.borrow();
    let mut layers = BTreeMap::new();
    for (key, value) in items.iter() {
        let Value::Number(wavelength) = key else {
            return Err(RuntimeError::new(
                codes::GGE2708,
                "a noise layer wavelength (array key) must be a Number".into(),
            )
            .with_hint("write the layers as {wavelength: amplitude, ...}, e.g. {256: 0.5, 64: 0.25}"));
        };
        let Value::Number(amplitude) = value else {
            return Err(RuntimeError::new(
                codes::GGE2709,
                "a noise layer amplitude (array value) must be a Number".into(),
            )
            .with_hint("write the layers as {wavelength: amplitude, ...}, e.g. {256: 0.5, 64: 0.25}"));
        };
        let (wavelength, amplitude) = (*wavelength, *amplitude);
        if wavelength.trunc() < 1.0 {
            return Err(RuntimeError::new(
                codes::GGE2710,
                format!("the noise layer wavelength {} is not a positive whole number of units", n(wavelength)),
            ));
        }
        if wavelength > u32::MAX as f64 {
            return Err(RuntimeError::new(
                codes::GGE2309,
                format!("the noise layer wavelength {} is too large", n(wavelength)),
            ));
        }
        if amplitude <= 0.0 {
            return Err(RuntimeError::new(
                codes::GGE2711,
                format!("the noise layer amplitude {} is not positive", n(amplitude)),
            ));
        }
        if amplitude > 1.0 {
            return Err(RuntimeError::new(
                codes::GGE2303,
                format!("the noise layer amplitude {} is above 1", n(amplitude)),
            ));
        }
        layers.insert(wavelength.trunc() as u32, geogen_kernels::noise::amplitude_units(amplitude));
    }
    Ok(layers)
}

/// A `{coordinate: height}` array for `HeightProfile.FromArray`: keys Numbers or Coordinates
/// (GGE2706; relative ones need the axis, GGE2703), values heights (GGE2707, GGE2303). The original
/// silently skipped wrong types (reference §4.8); here they are errors.
fn profile_points(
    ctx: &Ctx<'_>,
    args: &Args<'_>,
    i: usize,
    axis: Option<Axis>,
) -> Result<Vec<(i32, f64)>, RuntimeError> {
    let array = args.array(i)?;
    let items = array.items.borrow();
    let mut points = Vec::with_capacity(items.len());
    for (key, value) in items.iter() {
        let c = match key {
            Value::Number(x) => Coordinate::absolute(*x),
            Value::Coordinate(c) => *c,
            _ => {
                return Err(RuntimeError::new(
                    codes::GGE2706,
                    format!(
                        "a profile point's position (array key) must be a Number or Coordinate, not {}",
                        key.type_name(args.types)
                    ),
                )
                .with_hint("write the points as {position: height, ...}, e.g. {0: -1, 100: 1}"))
            }
        };
        let Value::Number(h) = value else {
            return Err(RuntimeError::new(
                codes::GGE2707,
                format!("a profile point's height (array value) must be a Number, not {}", value.type_name(args.types)),
            )
            .with_hint("write the points as {position: height, ...}, e.g. {0: -1, 100: 1}"));
        };
        if !(-1.0..=1.0).contains(h) {
            return Err(RuntimeError::new(
                codes::GGE2303,
                format!("the profile point height {} is outside [-1, 1]", n(*h)),
            ));
        }
        let position = match axis {
            Some(axis) => resolve_coordinate(c, axis, &ctx.env.geometry)?,
            None if c.relative => {
                return Err(RuntimeError::new(
                    codes::GGE2703,
                    format!("the profile point position @{} is relative, but no direction was given", n(c.value)),
                )
                .with_hint(
                    "pass the direction the profile runs in: HeightProfile.FromArray(points, Direction.Vertical)",
                ))
            }
            None => resolve_coordinate(c, Axis::Horizontal, &ctx.env.geometry)?,
        };
        points.push((position, *h));
    }
    Ok(points)
}
