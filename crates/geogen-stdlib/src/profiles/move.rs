//! `profile.Move(offset)`: translate the profile (no resampling).

use geogen_render::scale::to_physical;
use geogen_render::{
    Bounds, Effect, HeightProfile, KernelContext, Object, ObjectKind, OpContext, Operation, RenderError,
};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Along, Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileMove {
    /// Logical offset.
    pub offset: i32,
}

impl ProfileMove {
    /// The offset in physical pixels.
    fn physical(&self, scale: f64) -> i64 {
        to_physical(f64::from(self.offset), scale)
    }
}

impl Declared for ProfileMove {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Move",
        receiver: Receiver::Method,
        params: &[Param::new("offset", Kind::Coordinate(Along::Absolute))],
        checks: &[],
        family: Family::Transform,
        summary: "Moves the profile by `offset` (an absolute coordinate; scaled and truncated to whole \
                  pixels): the height at x becomes the old height at x − offset.",
        examples: &[Example {
            script: "var p = HeightProfile.Gradient(0, 2, -1, 1).Move(2);\
                     yield HeightMap.Projection(p, Direction.Vertical);",
            size: (6, 1),
            expect: &[(0, 0, -1.0), (2, 0, -1.0), (3, 0, 0.0), (4, 0, 1.0), (5, 0, 1.0)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(ProfileMove { offset: call.coordinate("offset")? }, &[])
    }
}

impl Operation for ProfileMove {
    fn name(&self) -> &str {
        "HeightProfile.Move"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Profile]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        self.offset.to_string()
    }
    /// B moved back by the offset.
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        match own {
            Bounds::Profile(interval) => {
                vec![Bounds::Profile(interval.translate(self.physical(ctx.scale).saturating_neg()))]
            }
            Bounds::Map(_) => vec![own],
        }
    }
    /// The input's extent moved by the offset.
    fn result_extent(&self, own: Bounds, arg_extents: &[Bounds], ctx: &OpContext) -> Bounds {
        match arg_extents.first() {
            Some(Bounds::Profile(interval)) => Bounds::Profile(interval.translate(self.physical(ctx.scale))),
            _ => own,
        }
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let profile = target.as_profile_mut()?;
        let moved = std::mem::replace(profile, HeightProfile::empty()).translated(self.physical(ctx.scale));
        *profile = moved;
        Ok(())
    }
}
