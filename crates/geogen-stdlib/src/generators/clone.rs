//! `HeightMap.Clone(map)`: an independent copy.

use geogen_render::raster::copy_overlap;
use geogen_render::{
    Effect, Facts, KernelContext, Object, ObjectKind, OpContext, Operation, Range, RenderError, Support,
};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct Clone;

impl Declared for Clone {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Clone",
        receiver: Receiver::Static,
        params: &[Param::map("map")],
        checks: &[],
        family: Family::Generator,
        summary: "A copy of `map` that later changes to either do not affect the other.",
        examples: &[Example {
            script: "var a = HeightMap.Flat(0.5); var b = HeightMap.Clone(a); a.Fill(-1); yield b;",
            size: (3, 3),
            expect: &[(0, 0, 0.5), (2, 2, 0.5)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.create(Clone, &[call.object("map")?])
    }
}

impl Operation for Clone {
    fn name(&self) -> &str {
        "HeightMap.Clone"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn is_row_local(&self) -> bool {
        true
    }
    /// Row `y` of the copy is row `y` of the source: so a fused pass headed by the copy of a map
    /// used for the last time writes its bands over that map's buffer (`fusion.rs`) instead of
    /// filling a new one.
    fn reads_inputs_on_its_rows(&self) -> bool {
        true
    }
    fn is_copy(&self) -> bool {
        true
    }
    fn support(&self, args: &[Facts], _: &OpContext) -> Option<Support> {
        crate::support::support_of(args, 0)
    }
    fn range(&self, args: &[Facts], _: &OpContext) -> Range {
        crate::support::range_of(args, 0)
    }
    fn render(&self, _: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        let source = inputs.first().ok_or_else(|| RenderError::Internal("Clone without its source".into()))?;
        copy_overlap(source.as_map()?, target.as_map_mut()?);
        Ok(())
    }
}
