//! `profile.Blur(radius)`: 1-D box blur, with the map blur's window and arithmetic.

use geogen_render::scale::scaled_distance;
use geogen_render::{Bounds, Effect, KernelContext, Object, ObjectKind, OpContext, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::blur::{box_blur_profile, scratch_bytes, Window};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileBlur {
    /// Logical radius.
    pub radius: f64,
}

impl ProfileBlur {
    fn window(&self, scale: f64) -> Window {
        Window::of_radius(scaled_distance(self.radius, scale))
    }
}

impl Declared for ProfileBlur {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Blur",
        receiver: Receiver::Method,
        params: &[Param::size("radius")],
        checks: &[],
        family: Family::Filter,
        summary: "Box blur of radius r (scaled): each height becomes the mean of the 2r + 1 heights \
                  [x − r + 1, x + r + 1], exactly as `map.Blur` along one axis. (It crashed the original \
                  at render time.)",
        examples: &[Example {
            // A unit step at 3 blurred with r = 1: the window of x is [x, x + 2].
            script: "var p = HeightProfile.Gradient(2, 3, 0, 0.75).Blur(1);\
                     yield HeightMap.Projection(p, Direction.Vertical);",
            size: (6, 1),
            expect: &[(0, 0, 0.0), (1, 0, 0.25), (2, 0, 0.5), (3, 0, 0.75), (5, 0, 0.75)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(ProfileBlur { radius: call.number("radius")? }, &[])
    }
}

impl Operation for ProfileBlur {
    fn name(&self) -> &str {
        "HeightProfile.Blur"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Profile]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        self.radius.to_string()
    }
    /// The profile needs the window around B, so the clamped edge never reaches a needed height.
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        let w = self.window(ctx.scale);
        match own {
            Bounds::Profile(interval) => vec![Bounds::Profile(interval.expand_sides(w.low, w.high))],
            Bounds::Map(_) => vec![own],
        }
    }
    fn extra_memory(&self, extent: Bounds, ctx: &OpContext) -> u64 {
        if self.window(ctx.scale) == Window::of_radius(0) {
            0
        } else {
            scratch_bytes(extent.pixels())
        }
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        box_blur_profile(target.as_profile_mut()?, scaled_distance(self.radius, ctx.scale));
        Ok(())
    }
}
