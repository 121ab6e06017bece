//! `map.Combine(other, mask)`: blend two maps by a mask.

use geogen_render::raster::saturate;
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use super::input;
use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};
use geogen_render::rows::zip2;

#[derive(Clone, Debug, PartialEq)]
pub struct Combine;

impl Declared for Combine {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Combine",
        receiver: Receiver::Method,
        params: &[Param::map("other"), Param::map("mask")],
        checks: &[],
        family: Family::Combiner,
        summary: "Blends with another map: with f = max(mask, 0), each height becomes h·f + other·(1 − f). \
                  A mask of 1 keeps this map, 0 or below takes the other.",
        examples: &[Example {
            script: "var mask = HeightMap.Gradient([0, 0], [4, 0], -1, 1);\
                     yield HeightMap.Flat(1).Combine(HeightMap.Flat(-1), mask);",
            size: (5, 1),
            expect: &[(0, 0, -1.0), (2, 0, -1.0), (3, 0, 0.0), (4, 0, 1.0)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(Combine, &[call.object("other")?, call.object("mask")?])
    }
}

impl Operation for Combine {
    fn name(&self) -> &str {
        "HeightMap.Combine"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map, ObjectKind::Map, ObjectKind::Map]
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
    fn render(&self, _: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        zip2(target.as_map_mut()?, input(inputs, 0)?, input(inputs, 1)?, |h, o, m| {
            let f = m.max(0.0);
            saturate(h * f + o * (1.0 - f))
        });
        Ok(())
    }
}
