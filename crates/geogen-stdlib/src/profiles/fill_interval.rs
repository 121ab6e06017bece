//! `profile.FillInterval(start, end, height)`: one height over an interval.

use geogen_render::raster::height_from_f64;
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Along, Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::profile::{for_each_position, physical_interval};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileFillInterval {
    /// Logical positions, both included, in either order.
    pub start: i32,
    pub end: i32,
    pub height: f32,
}

impl Declared for ProfileFillInterval {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "FillInterval",
        receiver: Receiver::Method,
        params: &[
            Param::new("start", Kind::Coordinate(Along::Absolute)),
            Param::new("end", Kind::Coordinate(Along::Absolute)),
            Param::height("height"),
        ],
        checks: &[],
        family: Family::Filter,
        summary: "Sets the heights of [start, end] (both ends included, in either order: (10, 40) and \
                  (40, 10) both fill 31 positions) to `height`. (The original filled one position when \
                  start < end.)",
        examples: &[
            Example {
                script: "var p = HeightProfile.Flat(0).FillInterval(1, 3, 0.5);\
                         yield HeightMap.Projection(p, Direction.Vertical);",
                size: (5, 1),
                expect: &[(0, 0, 0.0), (1, 0, 0.5), (2, 0, 0.5), (3, 0, 0.5), (4, 0, 0.0)],
            },
            Example {
                script: "var p = HeightProfile.Flat(0).FillInterval(3, 1, -0.5);\
                         yield HeightMap.Projection(p, Direction.Vertical);",
                size: (5, 1),
                expect: &[(0, 0, 0.0), (1, 0, -0.5), (3, 0, -0.5), (4, 0, 0.0)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let op = ProfileFillInterval {
            start: call.coordinate("start")?,
            end: call.coordinate("end")?,
            height: height_from_f64(call.number("height")?),
        };
        rec.modify(op, &[])
    }
}

impl Operation for ProfileFillInterval {
    fn name(&self) -> &str {
        "HeightProfile.FillInterval"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Profile]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!("{}, {}, {}", self.start, self.end, self.height)
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let filled = physical_interval(self.start, self.end, ctx.scale);
        for_each_position(target.as_profile_mut()?, |p, h| {
            if filled.contains(p) {
                *h = self.height;
            }
        });
        Ok(())
    }
}
