//! `profile.Multiply(factor)`: multiply by a number or, position by position, by another profile.

use geogen_render::raster::saturate;
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Arg, Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::profile::{profile_input, profile_zip1};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileMultiply {
    /// A number factor (`Some`), or `None` when the factor is a profile (an argument).
    pub number: Option<f32>,
}

impl Declared for ProfileMultiply {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Multiply",
        receiver: Receiver::Method,
        params: &[Param::new("factor", Kind::NumberOr(Owner::HeightProfile))],
        checks: &[],
        family: Family::Combiner,
        summary: "Multiplies every height by a Number (any factor; the result saturates at ±1) or by the \
                  heights of another profile where both exist.",
        examples: &[
            Example {
                script: "yield HeightMap.Projection(HeightProfile.Flat(0.5).Multiply(-3), Direction.Vertical);",
                size: (2, 1),
                expect: &[(0, 0, -1.0)],
            },
            Example {
                script: "var p = HeightProfile.Flat(0.5).Multiply(HeightProfile.Gradient(0, 2, -1, 1));\
                         yield HeightMap.Projection(p, Direction.Vertical);",
                size: (3, 1),
                expect: &[(0, 0, -0.5), (1, 0, 0.0), (2, 0, 0.5)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        match &call.args[0] {
            Arg::Number(factor) => rec.modify(ProfileMultiply { number: Some(*factor as f32) }, &[]),
            _ => rec.modify(ProfileMultiply { number: None }, &[call.object("factor")?]),
        }
    }
}

impl Operation for ProfileMultiply {
    fn name(&self) -> &str {
        if self.number.is_some() {
            "HeightProfile.Multiply"
        } else {
            "HeightProfile.MultiplyProfile"
        }
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        if self.number.is_some() {
            &[ObjectKind::Profile]
        } else {
            &[ObjectKind::Profile, ObjectKind::Profile]
        }
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        self.number.map(|n| n.to_string()).unwrap_or_default()
    }
    fn render(&self, _: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        let target = target.as_profile_mut()?;
        match self.number {
            Some(f) => {
                for h in target.data_mut() {
                    *h = saturate(*h * f);
                }
            }
            None => profile_zip1(target, profile_input(inputs, 0)?, |h, o| saturate(h * o)),
        }
        Ok(())
    }
}
