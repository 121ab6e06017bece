//! `HeightProfile.Flat(height = 0)`: one height everywhere.

use geogen_render::raster::height_from_f64;
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileFlat {
    pub height: f32,
}

impl ProfileFlat {
    pub fn new(height: f64) -> ProfileFlat {
        ProfileFlat { height: height_from_f64(height) }
    }
}

impl Declared for ProfileFlat {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Flat",
        receiver: Receiver::Static,
        params: &[Param::height("height").or(0.0)],
        checks: &[],
        family: Family::Generator,
        summary: "A new profile with the same height everywhere.",
        examples: &[
            Example {
                script: "yield HeightMap.Projection(HeightProfile.Flat(-0.25), Direction.Vertical);",
                size: (3, 1),
                expect: &[(0, 0, -0.25), (2, 0, -0.25)],
            },
            Example {
                script: "yield HeightMap.Projection(HeightProfile.Flat(), Direction.Vertical);",
                size: (2, 1),
                expect: &[(1, 0, 0.0)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.create(ProfileFlat::new(call.number("height")?), &[])
    }
}

impl Operation for ProfileFlat {
    fn name(&self) -> &str {
        "HeightProfile.Flat"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Profile)
    }
    fn describe_params(&self) -> String {
        self.height.to_string()
    }
    fn render(&self, _: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        target.as_profile_mut()?.data_mut().fill(self.height);
        Ok(())
    }
}
