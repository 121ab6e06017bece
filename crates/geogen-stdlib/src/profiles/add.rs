//! `profile.Add(addend, mask?)`: add a height or a profile, optionally scaled by a mask profile.
//! The type of the first argument chooses the mode, as for maps.

use geogen_render::raster::{height_from_f64, saturate};
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Arg, Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::profile::{profile_input, profile_zip1, profile_zip2};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileAdd {
    /// A height added everywhere (`Some`), or `None` when the addend is a profile (an argument).
    pub number: Option<f32>,
    /// Whether a mask profile is the last argument.
    pub masked: bool,
}

impl Declared for ProfileAdd {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Add",
        receiver: Receiver::Method,
        params: &[Param::new("addend", Kind::HeightOr(Owner::HeightProfile)), Param::profile("mask").optional()],
        checks: &[],
        family: Family::Combiner,
        summary: "Adds a height (a Number) or another profile, saturating at ±1. With a mask, the addend \
                  is scaled by max(mask, 0) at each position. Profiles combine where both exist.",
        examples: &[
            Example {
                script: "yield HeightMap.Projection(HeightProfile.Flat(0.5).Add(0.75), Direction.Vertical);",
                size: (2, 1),
                expect: &[(0, 0, 1.0), (1, 0, 1.0)],
            },
            Example {
                script: "var p = HeightProfile.Flat(0.25).Add(HeightProfile.Gradient(0, 2, -1, 0));\
                         yield HeightMap.Projection(p, Direction.Vertical);",
                size: (3, 1),
                expect: &[(0, 0, -0.75), (1, 0, -0.25), (2, 0, 0.25)],
            },
            Example {
                script: "var mask = HeightProfile.Gradient(0, 2, -1, 1);\
                         var p = HeightProfile.Flat(0).Add(0.5, mask);\
                         yield HeightMap.Projection(p, Direction.Vertical);",
                size: (4, 1),
                expect: &[(0, 0, 0.0), (1, 0, 0.0), (2, 0, 0.5), (3, 0, 0.5)],
            },
            Example {
                script: "var mask = HeightProfile.Gradient(0, 4, 0, 1);\
                         var p = HeightProfile.Flat(0.25).Add(HeightProfile.Flat(-0.5), mask);\
                         yield HeightMap.Projection(p, Direction.Vertical);",
                size: (5, 1),
                expect: &[(0, 0, 0.25), (2, 0, 0.0), (4, 0, -0.25)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let mask = call.opt_object("mask")?;
        let masked = mask.is_some();
        let mut others = Vec::with_capacity(2);
        let number = match &call.args[0] {
            Arg::Number(x) => Some(height_from_f64(*x)),
            _ => {
                others.push(call.object("addend")?);
                None
            }
        };
        others.extend(mask);
        rec.modify(ProfileAdd { number, masked }, &others)
    }
}

impl Operation for ProfileAdd {
    fn name(&self) -> &str {
        match (self.number.is_some(), self.masked) {
            (true, false) => "HeightProfile.Add",
            (true, true) => "HeightProfile.AddMasked",
            (false, false) => "HeightProfile.AddProfile",
            (false, true) => "HeightProfile.AddProfileMasked",
        }
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        const P: ObjectKind = ObjectKind::Profile;
        match (self.number.is_some(), self.masked) {
            (true, false) => &[P],
            (true, true) | (false, false) => &[P, P],
            (false, true) => &[P, P, P],
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
        match (self.number, self.masked) {
            (Some(n), false) => {
                for h in target.data_mut() {
                    *h = saturate(*h + n);
                }
            }
            (Some(n), true) => profile_zip1(target, profile_input(inputs, 0)?, |h, m| saturate(h + n * m.max(0.0))),
            (None, false) => profile_zip1(target, profile_input(inputs, 0)?, |h, a| saturate(h + a)),
            (None, true) => profile_zip2(target, profile_input(inputs, 0)?, profile_input(inputs, 1)?, |h, a, m| {
                saturate(h + a * m.max(0.0))
            }),
        }
        Ok(())
    }
}
