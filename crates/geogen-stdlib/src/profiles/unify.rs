//! `profile.Unify(other)`: max(h, other) where both profiles exist.

use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::profile::{profile_input, profile_zip1};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileUnify;

impl Declared for ProfileUnify {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Unify",
        receiver: Receiver::Method,
        params: &[Param::profile("other")],
        checks: &[],
        family: Family::Combiner,
        summary: "Keeps the higher of the two heights at each position (max), where both profiles exist.",
        examples: &[Example {
            script: "var p = HeightProfile.Flat(0).Unify(HeightProfile.Gradient(0, 2, -1, 1));\
                     yield HeightMap.Projection(p, Direction.Vertical);",
            size: (3, 1),
            expect: &[(0, 0, 0.0), (1, 0, 0.0), (2, 0, 1.0)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(ProfileUnify, &[call.object("other")?])
    }
}

impl Operation for ProfileUnify {
    fn name(&self) -> &str {
        "HeightProfile.Unify"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Profile, ObjectKind::Profile]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn render(&self, _: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        profile_zip1(target.as_profile_mut()?, profile_input(inputs, 0)?, |h, o| h.max(o));
        Ok(())
    }
}
