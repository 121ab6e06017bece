//! `HeightProfile.Clone(profile)`: an independent copy.

use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::profile::{profile_input, profile_zip1};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileClone;

impl Declared for ProfileClone {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Clone",
        receiver: Receiver::Static,
        params: &[Param::profile("profile")],
        checks: &[],
        family: Family::Generator,
        summary: "A copy of `profile` that later changes to either do not affect the other (documented \
                  by the original but missing from it).",
        examples: &[Example {
            script: "var a = HeightProfile.Flat(0.5); var b = HeightProfile.Clone(a); a.Fill(-1);\
                     yield HeightMap.Projection(b, Direction.Vertical);",
            size: (3, 1),
            expect: &[(0, 0, 0.5), (2, 0, 0.5)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.create(ProfileClone, &[call.object("profile")?])
    }
}

impl Operation for ProfileClone {
    fn name(&self) -> &str {
        "HeightProfile.Clone"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Profile]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Profile)
    }
    fn render(&self, _: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        // The target starts zero-filled over B; the source covers B (default bounds rule).
        profile_zip1(target.as_profile_mut()?, profile_input(inputs, 0)?, |_, s| s);
        Ok(())
    }
}
