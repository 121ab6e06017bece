//! Combiners: operations reading several maps pixel by pixel. They work on the intersection of the
//! extents and leave the rest of the target alone; the default bounds rule (every argument needs
//! B) guarantees the intersection covers B, so the pixels anyone needs are exact.

use crate::error::RenderError;
use crate::kernels::{zip1, zip2};
use crate::operation::{Effect, KernelContext, ObjectKind, Operation};
use crate::ops::kinds;
use crate::raster::{copy_overlap, saturate, Object};

fn input<'a>(inputs: &[&'a Object], i: usize) -> Result<&'a crate::raster::HeightMap, RenderError> {
    inputs.get(i).ok_or_else(|| RenderError::Internal(format!("missing input {i}")))?.as_map()
}

/// `HeightMap.Clone(map)`: a copy cut out to B (zero outside the source's extent).
#[derive(Clone, Debug, PartialEq)]
pub struct Clone;

impl Operation for Clone {
    fn name(&self) -> &str {
        "HeightMap.Clone"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        kinds::ONE_MAP
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn render(&self, _: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        copy_overlap(input(inputs, 0)?, target.as_map_mut()?);
        Ok(())
    }
}

/// Implements a two-map in-place combiner `h = f(h, other)` on the intersection.
macro_rules! binary_op {
    ($ty:ident, $name:literal, |$h:ident, $o:ident| $kernel:expr) => {
        impl Operation for $ty {
            fn name(&self) -> &str {
                $name
            }
            fn arg_kinds(&self) -> &[ObjectKind] {
                kinds::TWO_MAPS
            }
            fn effect(&self) -> Effect {
                Effect::Modify
            }
            fn render(&self, _: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
                zip1(target.as_map_mut()?, input(inputs, 0)?, |$h: f32, $o: f32| $kernel);
                Ok(())
            }
        }
    };
}

/// `map.Add(otherMap)`: saturating h + other.
#[derive(Clone, Debug, PartialEq)]
pub struct AddMap;
binary_op!(AddMap, "HeightMap.AddMap", |h, o| saturate(h + o));

/// `map.Multiply(otherMap)`: h × other.
#[derive(Clone, Debug, PartialEq)]
pub struct MultiplyMap;
binary_op!(MultiplyMap, "HeightMap.MultiplyMap", |h, o| saturate(h * o));

/// `map.Intersect(other)`: min(h, other).
#[derive(Clone, Debug, PartialEq)]
pub struct Intersect;
binary_op!(Intersect, "HeightMap.Intersect", |h, o| h.min(o));

/// `map.Unify(other)`: max(h, other).
#[derive(Clone, Debug, PartialEq)]
pub struct Unify;
binary_op!(Unify, "HeightMap.Unify", |h, o| h.max(o));

/// `map.Add(addend, mask)`: saturating h + addend × max(mask, 0). The addend is a number
/// (`Some`, arguments `[self, mask]`) or a map (`None`, arguments `[self, addend, mask]`).
#[derive(Clone, Debug, PartialEq)]
pub struct AddMasked {
    pub number: Option<f32>,
}

impl AddMasked {
    pub fn with_number(addend: f64) -> AddMasked {
        let a = addend as f32;
        AddMasked { number: Some(if a.is_nan() { 0.0 } else { a.clamp(-2.0, 2.0) }) }
    }
    pub fn with_map() -> AddMasked {
        AddMasked { number: None }
    }
}

impl Operation for AddMasked {
    fn name(&self) -> &str {
        "HeightMap.AddMasked"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        if self.number.is_some() {
            kinds::TWO_MAPS
        } else {
            kinds::THREE_MAPS
        }
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        self.number.map(|n| n.to_string()).unwrap_or_default()
    }
    fn render(&self, _: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        let target = target.as_map_mut()?;
        match self.number {
            Some(n) => zip1(target, input(inputs, 0)?, |h, m| saturate(h + n * m.max(0.0))),
            None => zip2(target, input(inputs, 0)?, input(inputs, 1)?, |h, a, m| saturate(h + a * m.max(0.0))),
        }
        Ok(())
    }
}

/// `map.Combine(other, mask)`: with f = max(mask, 0), h·f + other·(1 − f).
#[derive(Clone, Debug, PartialEq)]
pub struct Combine;

impl Operation for Combine {
    fn name(&self) -> &str {
        "HeightMap.Combine"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        kinds::THREE_MAPS
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn render(&self, _: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        zip2(target.as_map_mut()?, input(inputs, 0)?, input(inputs, 1)?, |h, o, m| {
            let f = m.max(0.0);
            saturate(h * f + o * (1.0 - f))
        });
        Ok(())
    }
}
