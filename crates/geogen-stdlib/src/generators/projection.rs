//! `HeightMap.Projection(profile, direction)`: a map of stripes, every row (or column) one height
//! of a profile.

use geogen_render::{Bounds, Effect, KernelContext, Object, ObjectKind, OpContext, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::coordinates::Axis;
use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::profile::profile_input;
use geogen_render::rows::for_each_row;

#[derive(Clone, Debug, PartialEq)]
pub struct Projection {
    /// `Horizontal`: the profile runs along Y and each row is one height (stripes along X);
    /// `Vertical`: the profile runs along X and each column is one height.
    pub direction: Axis,
}

impl Declared for Projection {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Projection",
        receiver: Receiver::Static,
        params: &[Param::profile("profile"), Param::direction("direction")],
        checks: &[],
        family: Family::Generator,
        summary: "A new map extending a profile across the other axis: `Direction.Horizontal` gives \
                  pixel (x, y) the profile's height at y (horizontal stripes), `Direction.Vertical` its \
                  height at x (vertical stripes).",
        examples: &[
            Example {
                script: "var p = HeightProfile.Gradient(0, 4, -1, 1);\
                         yield HeightMap.Projection(p, Direction.Vertical);",
                size: (5, 3),
                expect: &[(0, 0, -1.0), (1, 2, -0.5), (2, 1, 0.0), (4, 0, 1.0), (4, 2, 1.0)],
            },
            Example {
                script: "var p = HeightProfile.Gradient(0, 2, -1, 1);\
                         yield HeightMap.Projection(p, Direction.Horizontal);",
                size: (4, 3),
                expect: &[(0, 0, -1.0), (3, 0, -1.0), (0, 1, 0.0), (3, 1, 0.0), (2, 2, 1.0)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.create(Projection { direction: call.axis("direction")? }, &[call.object("profile")?])
    }
}

impl Operation for Projection {
    fn name(&self) -> &str {
        "HeightMap.Projection"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Profile]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn describe_params(&self) -> String {
        format!("{:?}", self.direction)
    }
    /// The profile is needed over B's rows (Horizontal) or columns (Vertical).
    fn required_bounds(&self, own: Bounds, _: &OpContext) -> Vec<Bounds> {
        let rect = own.rect();
        vec![Bounds::Profile(match self.direction {
            Axis::Horizontal => rect.y_interval(),
            Axis::Vertical => rect.x_interval(),
        })]
    }
    fn is_row_local(&self) -> bool {
        true
    }
    fn render(&self, _: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        let profile = profile_input(inputs, 0)?;
        let at = |p: i64| profile.get(p).unwrap_or(0.0);
        match self.direction {
            Axis::Horizontal => for_each_row(target.as_map_mut()?, |py, _, row| row.fill(at(py))),
            Axis::Vertical => for_each_row(target.as_map_mut()?, |_, x0, row| {
                for (i, h) in row.iter_mut().enumerate() {
                    *h = at(x0 + i as i64);
                }
            }),
        }
        Ok(())
    }
}
