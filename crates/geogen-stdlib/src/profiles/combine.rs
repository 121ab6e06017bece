//! `profile.Combine(other, mask)`: blend two profiles by a mask.

use geogen_render::raster::saturate;
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::profile::{profile_input, profile_zip2};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileCombine;

impl Declared for ProfileCombine {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Combine",
        receiver: Receiver::Method,
        params: &[Param::profile("other"), Param::profile("mask")],
        checks: &[],
        family: Family::Combiner,
        summary: "Blends with another profile: with f = max(mask, 0), each height becomes \
                  h·f + other·(1 − f), as for maps. (The original added the blend to the old height.)",
        examples: &[Example {
            script: "var mask = HeightProfile.Gradient(0, 4, -1, 1);\
                     var p = HeightProfile.Flat(1).Combine(HeightProfile.Flat(-1), mask);\
                     yield HeightMap.Projection(p, Direction.Vertical);",
            size: (5, 1),
            expect: &[(0, 0, -1.0), (2, 0, -1.0), (3, 0, 0.0), (4, 0, 1.0)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(ProfileCombine, &[call.object("other")?, call.object("mask")?])
    }
}

impl Operation for ProfileCombine {
    fn name(&self) -> &str {
        "HeightProfile.Combine"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Profile, ObjectKind::Profile, ObjectKind::Profile]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn render(&self, _: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        profile_zip2(target.as_profile_mut()?, profile_input(inputs, 0)?, profile_input(inputs, 1)?, |h, o, m| {
            let f = m.max(0.0);
            saturate(h * f + o * (1.0 - f))
        });
        Ok(())
    }
}
