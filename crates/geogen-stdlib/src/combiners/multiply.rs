//! `map.Multiply(factor)`: multiply by a number or, pixel by pixel, by another map.

use geogen_render::raster::saturate;
use geogen_render::{
    monotone_range, Effect, Facts, KernelContext, Object, ObjectKind, OpContext, Operation, Range, Rect, RenderError,
};
use geogen_vm::{RuntimeError, Value};

use super::input;
use crate::operation::{Arg, Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_render::rows::{map_pixels, zip1};

#[derive(Clone, Debug, PartialEq)]
pub struct Multiply;

impl Declared for Multiply {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Multiply",
        receiver: Receiver::Method,
        params: &[Param::new("factor", Kind::NumberOr(Owner::HeightMap))],
        checks: &[],
        family: Family::Combiner,
        summary: "Multiplies every height by a Number (any factor; the result saturates at ±1) or by the \
                  heights of another map where both exist.",
        examples: &[
            Example { script: "yield HeightMap.Flat(0.5).Multiply(-3);", size: (2, 2), expect: &[(0, 0, -1.0)] },
            Example {
                script: "yield HeightMap.Flat(0.5).Multiply(HeightMap.Flat(-0.5));",
                size: (2, 2),
                expect: &[(1, 1, -0.25)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        match &call.args[0] {
            Arg::Number(factor) => rec.modify(MultiplyNumber::new(*factor), &[]),
            _ => rec.modify(MultiplyMap, &[call.object("factor")?]),
        }
    }
}

/// `map.Multiply(number)`: saturating h × f (no range check on f, as the original).
#[derive(Clone, Debug, PartialEq)]
pub struct MultiplyNumber {
    pub factor: f32,
}

impl MultiplyNumber {
    pub fn new(factor: f64) -> MultiplyNumber {
        MultiplyNumber { factor: factor as f32 }
    }
}

impl Operation for MultiplyNumber {
    fn name(&self) -> &str {
        "HeightMap.Multiply"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        self.factor.to_string()
    }
    fn is_row_local(&self) -> bool {
        true
    }
    /// Monotonic either way, by the factor's sign.
    fn range(&self, args: &[Facts], ctx: &OpContext) -> Range {
        monotone_range(self, args, ctx)
    }
    fn is_pointwise(&self) -> bool {
        true
    }
    fn render(&self, _: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let f = self.factor;
        map_pixels(target.as_map_mut()?, |h| saturate(h * f));
        Ok(())
    }
}

/// `map.Multiply(otherMap)`: h × other on the intersection.
#[derive(Clone, Debug, PartialEq)]
pub struct MultiplyMap;

impl Operation for MultiplyMap {
    fn name(&self) -> &str {
        "HeightMap.MultiplyMap"
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
    fn is_pointwise(&self) -> bool {
        true
    }
    /// Multiplying by 1 keeps every height.
    fn changes_only(&self, args: &[Facts], _: &OpContext) -> Option<Rect> {
        crate::support::unchanged_where_background(crate::support::support_of(args, 1), |b| b == 1.0)
    }
    fn render(&self, _: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        zip1(target.as_map_mut()?, input(inputs, 0)?, |h, o| saturate(h * o));
        Ok(())
    }
}
