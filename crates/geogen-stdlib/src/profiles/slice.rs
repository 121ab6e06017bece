//! `HeightProfile.Slice(map, direction, coordinate)`: one row or column of a map as a profile.

use geogen_render::scale::to_physical;
use geogen_render::{
    Bounds, Effect, Interval, KernelContext, Object, ObjectKind, OpContext, Operation, Rect, RenderError,
};
use geogen_vm::{RuntimeError, Value};

use crate::combiners::input;
use crate::coordinates::Axis;
use crate::operation::{Along, Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::profile::for_each_position;

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileSlice {
    /// `Horizontal`: the row at `coordinate`, as a profile along X; `Vertical`: the column.
    pub direction: Axis,
    /// Logical position of the row (or column).
    pub coordinate: i32,
}

impl ProfileSlice {
    /// The pixels of the map read for the profile interval `along`: a strip one pixel thick.
    fn strip(&self, along: Interval, scale: f64) -> Rect {
        let across = Interval::new(to_physical(f64::from(self.coordinate), scale), 1);
        match self.direction {
            Axis::Horizontal => Rect::from_intervals(along, across),
            Axis::Vertical => Rect::from_intervals(across, along),
        }
    }
}

impl Declared for ProfileSlice {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Slice",
        receiver: Receiver::Static,
        params: &[
            Param::map("map"),
            Param::direction("direction"),
            Param::new("coordinate", Kind::Coordinate(Along::Across(1))),
        ],
        checks: &[],
        family: Family::Generator,
        summary: "A new profile cut out of a map: `Direction.Horizontal` takes the row at y = \
                  `coordinate` (a relative coordinate is a fraction of the map height), \
                  `Direction.Vertical` the column at x = `coordinate` (of the map width). (The \
                  original's documentation gives the order (map, coordinate, direction); the code, and \
                  this, take the direction second.)",
        examples: &[
            Example {
                // Row 1 of a vertical ramp is 0 everywhere; column 3 of it runs −1, 0, 1, 1, ...
                script: "var ramp = HeightMap.Gradient([0, 0], [0, 2], -1, 1);\
                         var column = HeightProfile.Slice(ramp, Direction.Vertical, 3);\
                         yield HeightMap.Projection(column, Direction.Horizontal);",
                size: (4, 4),
                expect: &[(0, 0, -1.0), (3, 0, -1.0), (1, 1, 0.0), (2, 2, 1.0), (0, 3, 1.0)],
            },
            Example {
                script: "metadata { Height: Finite }\
                         var ramp = HeightMap.Gradient([0, 0], [4, 4], -1, 1);\
                         var row = HeightProfile.Slice(ramp, Direction.Horizontal, @0.5);\
                         yield HeightMap.Projection(row, Direction.Vertical);",
                size: (5, 4),
                // Row y = 2 of the diagonal ramp: t = (x + 2) / 8.
                expect: &[(0, 0, -0.5), (2, 1, 0.0), (4, 3, 0.5)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let op = ProfileSlice { direction: call.axis("direction")?, coordinate: call.coordinate("coordinate")? };
        rec.create(op, &[call.object("map")?])
    }
}

impl Operation for ProfileSlice {
    fn name(&self) -> &str {
        "HeightProfile.Slice"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Profile)
    }
    fn describe_params(&self) -> String {
        format!("{:?}, {}", self.direction, self.coordinate)
    }
    /// The map is needed on the one-pixel strip of the row (column) along B.
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        let along = match own {
            Bounds::Profile(interval) => interval,
            Bounds::Map(_) => Interval::EMPTY,
        };
        vec![Bounds::Map(self.strip(along, ctx.scale))]
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        let map = input(inputs, 0)?;
        let across = to_physical(f64::from(self.coordinate), ctx.scale);
        let direction = self.direction;
        for_each_position(target.as_profile_mut()?, |p, h| {
            let at = match direction {
                Axis::Horizontal => map.get(p, across),
                Axis::Vertical => map.get(across, p),
            };
            *h = at.unwrap_or(0.0);
        });
        Ok(())
    }
}
