//! `HeightMap.Flat(height = 0)`: one height everywhere.

use geogen_render::raster::height_from_f64;
use geogen_render::{
    Effect, Facts, KernelContext, Object, ObjectKind, OpContext, Operation, Range, RenderError, Support,
};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};
use geogen_render::rows::map_pixels;

#[derive(Clone, Debug, PartialEq)]
pub struct Flat {
    pub height: f32,
}

impl Flat {
    pub fn new(height: f64) -> Flat {
        Flat { height: height_from_f64(height) }
    }
}

impl Declared for Flat {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Flat",
        receiver: Receiver::Static,
        params: &[Param::height("height").or(0.0)],
        checks: &[],
        family: Family::Generator,
        summary: "A new map with the same height everywhere.",
        examples: &[
            Example { script: "yield HeightMap.Flat(0.25);", size: (4, 3), expect: &[(0, 0, 0.25), (3, 2, 0.25)] },
            Example { script: "yield HeightMap.Flat();", size: (2, 2), expect: &[(1, 1, 0.0)] },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.create(Flat::new(call.number("height")?), &[])
    }
}

impl Operation for Flat {
    fn name(&self) -> &str {
        "HeightMap.Flat"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn describe_params(&self) -> String {
        self.height.to_string()
    }
    fn is_row_local(&self) -> bool {
        true
    }
    fn support(&self, _: &[Facts], _: &OpContext) -> Option<Support> {
        Some(Support::constant(self.height))
    }
    fn range(&self, _: &[Facts], _: &OpContext) -> Range {
        Range::between(self.height, self.height)
    }
    fn render(&self, _: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let h = self.height;
        map_pixels(target.as_map_mut()?, |_| h);
        Ok(())
    }
}
