//! `profile.Rescale(scale)`: stretch or shrink the profile about position 0.

use geogen_diag::codes;
use geogen_render::{
    Bounds, Effect, HeightProfile, Interval, KernelContext, Object, ObjectKind, OpContext, Operation, RenderError,
};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::profile::{for_each_position, sample_linear};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileRescale {
    /// The stretch factor, in [0.1, 10].
    pub factor: f64,
}

fn interval_of(bounds: Bounds) -> Interval {
    match bounds {
        Bounds::Profile(interval) => interval,
        Bounds::Map(_) => Interval::EMPTY,
    }
}

impl ProfileRescale {
    /// Where the height of pixel `p` comes from (a physical, fractional position): the map is
    /// scaled about 0, so logical x takes the old height at x / factor, and the render scale
    /// cancels out.
    fn source(&self, p: i64) -> f64 {
        p as f64 / self.factor
    }

    /// Floor of a source position, saturating.
    fn floor(&self, p: i64) -> i128 {
        let f = libm::floor(self.source(p));
        if f.is_nan() {
            0
        } else {
            f as i128
        }
    }
}

impl Declared for ProfileRescale {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Rescale",
        receiver: Receiver::Method,
        params: &[Param::new("scale", Kind::Range { min: 0.1, max: 10.0, code: codes::GGE2714 })],
        checks: &[],
        family: Family::Transform,
        summary: "Stretches the profile about position 0 by `scale` (in [0.1, 10], GGE2714): the height at \
                  x becomes the old height at x / scale, read linearly between the two nearest \
                  positions. (It crashed the original at render time.)",
        examples: &[
            Example {
                script: "var p = HeightProfile.Gradient(0, 4, 0, 1).Rescale(2);\
                         yield HeightMap.Projection(p, Direction.Vertical);",
                size: (10, 1),
                expect: &[(0, 0, 0.0), (1, 0, 0.125), (2, 0, 0.25), (3, 0, 0.375), (8, 0, 1.0), (9, 0, 1.0)],
            },
            Example {
                script: "var p = HeightProfile.Gradient(0, 4, 0, 1).Rescale(0.5);\
                         yield HeightMap.Projection(p, Direction.Vertical);",
                size: (4, 1),
                expect: &[(0, 0, 0.0), (1, 0, 0.5), (2, 0, 1.0), (3, 0, 1.0)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(ProfileRescale { factor: call.number("scale")? }, &[])
    }
}

impl Operation for ProfileRescale {
    fn name(&self) -> &str {
        "HeightProfile.Rescale"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Profile]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        self.factor.to_string()
    }
    /// The sources of B's pixels and the pixel after each (linear reads): since p / factor grows
    /// with p, that is [floor(first / factor), floor(last / factor) + 1].
    fn required_bounds(&self, own: Bounds, _: &OpContext) -> Vec<Bounds> {
        let b = interval_of(own);
        if b.is_empty() {
            return vec![Bounds::Profile(Interval::EMPTY)];
        }
        let last = (b.end() - 1) as i64;
        vec![Bounds::Profile(Interval::from_range(self.floor(b.start), self.floor(last) + 2))]
    }
    /// The result covers B.
    fn result_extent(&self, own: Bounds, _: &[Bounds], _: &OpContext) -> Bounds {
        own
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let profile = target.as_profile_mut()?;
        let mut rescaled = HeightProfile::try_zeroed(interval_of(ctx.bounds))?;
        let source = &*profile;
        for_each_position(&mut rescaled, |p, h| *h = sample_linear(source, self.source(p)));
        *profile = rescaled;
        Ok(())
    }
}
