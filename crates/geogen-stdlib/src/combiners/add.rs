//! `map.Add(addend, mask?)`: add a height or a map, optionally scaled by a mask. The type of the
//! first argument chooses the mode, as in the original, so it records one of three steps.

use geogen_render::raster::saturate;
use geogen_render::{
    monotone_range, Effect, Facts, KernelContext, Object, ObjectKind, OpContext, Operation, Range, Rect, RenderError,
};
use geogen_vm::{RuntimeError, Value};

use super::input;
use crate::operation::{Arg, Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use crate::support::{range_of, unchanged_adding_zero, unchanged_where_background};
use geogen_render::rows::{map_pixels, zip1, zip2};

#[derive(Clone, Debug, PartialEq)]
pub struct Add;

impl Declared for Add {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Add",
        receiver: Receiver::Method,
        params: &[Param::new("addend", Kind::HeightOr(Owner::HeightMap)), Param::map("mask").optional()],
        checks: &[],
        family: Family::Combiner,
        summary: "Adds a height (a Number) or another map, saturating at ±1. With a mask, the addend is \
                  scaled by max(mask, 0) at each pixel. Maps combine where both exist.",
        examples: &[
            Example {
                script: "yield HeightMap.Flat(0.5).Add(0.25);",
                size: (2, 2),
                expect: &[(0, 0, 0.75), (1, 1, 0.75)],
            },
            Example {
                script: "yield HeightMap.Flat(0.75).Add(HeightMap.Flat(0.5));",
                size: (2, 2),
                expect: &[(0, 0, 1.0)],
            },
            Example {
                script: "var mask = HeightMap.Gradient([0, 0], [2, 0], -1, 1);\
                         yield HeightMap.Flat(0).Add(HeightMap.Flat(0.5), mask);",
                size: (4, 1),
                expect: &[(0, 0, 0.0), (1, 0, 0.0), (2, 0, 0.5), (3, 0, 0.5)],
            },
            Example {
                script: "yield HeightMap.Flat(0.25).Add(0.5, HeightMap.Flat(0.5));",
                size: (2, 2),
                expect: &[(1, 0, 0.5)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let mask = call.opt_object("mask")?;
        match (&call.args[0], mask) {
            (Arg::Number(addend), None) => rec.modify(AddNumber::new(*addend), &[]),
            (Arg::Number(addend), Some(mask)) => rec.modify(AddMasked::with_number(*addend), &[mask]),
            (_, None) => rec.modify(AddMap, &[call.object("addend")?]),
            (_, Some(mask)) => rec.modify(AddMasked::with_map(), &[call.object("addend")?, mask]),
        }
    }
}

/// A height difference may be up to 2 in magnitude; NaN becomes 0.
fn addend(x: f64) -> f32 {
    let a = x as f32;
    if a.is_nan() {
        0.0
    } else {
        a.clamp(-2.0, 2.0)
    }
}

/// `map.Add(number)`: saturating h + x.
#[derive(Clone, Debug, PartialEq)]
pub struct AddNumber {
    pub addend: f32,
}

impl AddNumber {
    pub fn new(x: f64) -> AddNumber {
        AddNumber { addend: addend(x) }
    }
}

impl Operation for AddNumber {
    fn name(&self) -> &str {
        "HeightMap.Add"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        self.addend.to_string()
    }
    fn is_row_local(&self) -> bool {
        true
    }
    fn range(&self, args: &[Facts], ctx: &OpContext) -> Range {
        monotone_range(self, args, ctx)
    }
    fn is_pointwise(&self) -> bool {
        true
    }
    fn render(&self, _: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let a = self.addend;
        map_pixels(target.as_map_mut()?, |h| saturate(h + a));
        Ok(())
    }
}

/// `map.Add(otherMap)`: saturating h + other on the intersection.
#[derive(Clone, Debug, PartialEq)]
pub struct AddMap;

impl Operation for AddMap {
    fn name(&self) -> &str {
        "HeightMap.AddMap"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map, ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn is_row_local(&self) -> bool {
        true
    }
    fn reads_inputs_on_its_rows(&self) -> bool {
        true
    }
    fn range(&self, args: &[Facts], ctx: &OpContext) -> Range {
        monotone_range(self, args, ctx)
    }
    fn is_pointwise(&self) -> bool {
        true
    }
    /// Adding −0 keeps every height; adding +0 keeps every height but −0.
    fn changes_only(&self, args: &[Facts], _: &OpContext) -> Option<Rect> {
        let (target, other) = (crate::support::support_of(args, 0), crate::support::support_of(args, 1));
        unchanged_where_background(other, |b| b.to_bits() == (-0.0f32).to_bits())
            .or_else(|| unchanged_adding_zero(target, other, other.is_some_and(|o| o.background == 0.0)))
    }
    fn render(&self, _: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        zip1(target.as_map_mut()?, input(inputs, 0)?, |h, o| saturate(h + o));
        Ok(())
    }
}

/// `map.Add(addend, mask)`: saturating h + addend × max(mask, 0). The addend is a number (`Some`,
/// arguments `[self, mask]`) or a map (`None`, arguments `[self, addend, mask]`).
#[derive(Clone, Debug, PartialEq)]
pub struct AddMasked {
    pub number: Option<f32>,
}

impl AddMasked {
    pub fn with_number(x: f64) -> AddMasked {
        AddMasked { number: Some(addend(x)) }
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
            &[ObjectKind::Map, ObjectKind::Map]
        } else {
            &[ObjectKind::Map, ObjectKind::Map, ObjectKind::Map]
        }
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        self.number.map(|n| n.to_string()).unwrap_or_default()
    }
    fn is_row_local(&self) -> bool {
        true
    }
    fn reads_inputs_on_its_rows(&self) -> bool {
        true
    }
    /// `h + a × max(m, 0)`: the product's bounds are among its corners (each rounding is
    /// monotonic in each factor, and the mask's factor is never negative), the sum's at its ends.
    fn range(&self, args: &[Facts], _: &OpContext) -> Range {
        let target = range_of(args, 0);
        let addend = match self.number {
            Some(n) => (n, n),
            None => (range_of(args, 1).low, range_of(args, 1).high),
        };
        let mask = range_of(args, args.len().saturating_sub(1));
        let factor = (mask.low.max(0.0), mask.high.max(0.0));
        let corners = [addend.0 * factor.0, addend.0 * factor.1, addend.1 * factor.0, addend.1 * factor.1];
        let low = corners.iter().copied().fold(f32::INFINITY, f32::min);
        let high = corners.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        Range::between(saturate(target.low + low), saturate(target.high + high))
    }
    fn is_pointwise(&self) -> bool {
        true
    }
    /// Where the mask is at most 0 the addend is scaled by a signed zero.
    fn changes_only(&self, args: &[Facts], _: &OpContext) -> Option<Rect> {
        let (target, mask) = (crate::support::support_of(args, 0), args.last().and_then(|a| a.support));
        unchanged_adding_zero(target, mask, mask.is_some_and(|m| m.background <= 0.0))
    }
    fn render(&self, _: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        let target = target.as_map_mut()?;
        match self.number {
            Some(n) => zip1(target, input(inputs, 0)?, move |h, m| saturate(h + n * m.max(0.0))),
            None => zip2(target, input(inputs, 0)?, input(inputs, 1)?, |h, a, m| saturate(h + a * m.max(0.0))),
        }
        Ok(())
    }
}
