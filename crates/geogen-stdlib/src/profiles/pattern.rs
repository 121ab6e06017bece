//! `HeightProfile.Pattern(pattern, start, end)`: a stretch of a profile repeated everywhere.

use geogen_render::{Bounds, Effect, Interval, KernelContext, Object, ObjectKind, OpContext, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Along, Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::profile::{for_each_position, physical_interval, profile_input};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfilePattern {
    /// The repeated stretch, logical positions, both included, in either order.
    pub start: i32,
    pub end: i32,
}

impl ProfilePattern {
    fn repeat(&self, scale: f64) -> Interval {
        physical_interval(self.start, self.end, scale)
    }
}

impl Declared for ProfilePattern {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Pattern",
        receiver: Receiver::Static,
        params: &[
            Param::profile("pattern"),
            Param::new("start", Kind::Coordinate(Along::Absolute)),
            Param::new("end", Kind::Coordinate(Along::Absolute)),
        ],
        checks: &[],
        family: Family::Generator,
        summary: "A new profile repeating the stretch [start, end] of `pattern` (both ends included, in \
                  either order) everywhere, with its period anchored at position 0: position x takes \
                  the pattern at start + (x mod length), negative positions included (the original \
                  always gave zeros).",
        examples: &[Example {
            // The stretch [2, 4] of a ramp 0, 0.25, 0.5, ... holds 0.5, 0.75, 1 and repeats with
            // period 3 from position 0: x → ramp(2 + x mod 3).
            script: "var ramp = HeightProfile.Gradient(0, 4, 0, 1);\
                     yield HeightMap.Projection(HeightProfile.Pattern(ramp, 4, 2), Direction.Vertical);",
            size: (7, 1),
            expect: &[(0, 0, 0.5), (1, 0, 0.75), (2, 0, 1.0), (3, 0, 0.5), (5, 0, 1.0), (6, 0, 0.5)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.create(
            ProfilePattern { start: call.coordinate("start")?, end: call.coordinate("end")? },
            &[call.object("pattern")?],
        )
    }
}

impl Operation for ProfilePattern {
    fn name(&self) -> &str {
        "HeightProfile.Pattern"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Profile]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Profile)
    }
    fn describe_params(&self) -> String {
        format!("{}, {}", self.start, self.end)
    }
    /// The pattern is needed over the repeated stretch only, whatever B is.
    fn required_bounds(&self, _: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        vec![Bounds::Profile(self.repeat(ctx.scale))]
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        let pattern = profile_input(inputs, 0)?;
        let repeat = self.repeat(ctx.scale);
        // The length is at least 1 (both ends are included) and, for intervals this module builds,
        // fits in i64.
        let period = i64::try_from(repeat.length).unwrap_or(i64::MAX).max(1);
        for_each_position(target.as_profile_mut()?, |p, h| {
            let at = repeat.start.saturating_add(p.rem_euclid(period));
            *h = pattern.get(at).unwrap_or(0.0);
        });
        Ok(())
    }
}
