//! `HeightProfile.Gradient(source, destination, fromHeight, toHeight)`: a linear ramp.

use geogen_render::raster::{height_from_f64, saturate};
use geogen_render::scale::to_logical;
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Along, Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::profile::for_each_position;

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileGradient {
    /// Logical positions.
    pub source: f64,
    pub destination: f64,
    pub from: f32,
    pub to: f32,
}

impl ProfileGradient {
    /// The height at logical position `l`.
    pub fn height_at(&self, l: f64) -> f64 {
        let (from, to) = (f64::from(self.from), f64::from(self.to));
        let span = self.destination - self.source;
        // Ramp parameter: 0 at the source, 1 at the destination, in whichever order they lie.
        let t = if span != 0.0 {
            (l - self.source) / span
        } else if l > self.source {
            1.0
        } else {
            0.0
        };
        if t <= 0.0 {
            from
        } else if t >= 1.0 {
            to
        } else {
            from + (to - from) * t
        }
    }
}

impl Declared for ProfileGradient {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Gradient",
        receiver: Receiver::Static,
        params: &[
            Param::new("source", Kind::Coordinate(Along::Absolute)),
            Param::new("destination", Kind::Coordinate(Along::Absolute)),
            Param::height("fromHeight"),
            Param::height("toHeight"),
        ],
        checks: &[],
        family: Family::Generator,
        summary: "A linear ramp from `fromHeight` at `source` to `toHeight` at `destination`, constant \
                  beyond either end. The direction is honoured: a destination below the source ramps \
                  the other way (the original always started at the lower position).",
        examples: &[
            Example {
                script: "yield HeightMap.Projection(HeightProfile.Gradient(1, 5, -1, 1), Direction.Vertical);",
                size: (7, 1),
                expect: &[(0, 0, -1.0), (1, 0, -1.0), (2, 0, -0.5), (3, 0, 0.0), (5, 0, 1.0), (6, 0, 1.0)],
            },
            Example {
                script: "yield HeightMap.Projection(HeightProfile.Gradient(4, 0, 1, 0), Direction.Vertical);",
                size: (6, 1),
                expect: &[(0, 0, 0.0), (1, 0, 0.25), (3, 0, 0.75), (4, 0, 1.0), (5, 0, 1.0)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let op = ProfileGradient {
            source: f64::from(call.coordinate("source")?),
            destination: f64::from(call.coordinate("destination")?),
            from: height_from_f64(call.number("fromHeight")?),
            to: height_from_f64(call.number("toHeight")?),
        };
        rec.create(op, &[])
    }
}

impl Operation for ProfileGradient {
    fn name(&self) -> &str {
        "HeightProfile.Gradient"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Profile)
    }
    fn describe_params(&self) -> String {
        format!("{}, {}, {}, {}", self.source, self.destination, self.from, self.to)
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let scale = ctx.scale;
        for_each_position(target.as_profile_mut()?, |p, h| {
            *h = saturate(self.height_at(to_logical(p, scale)) as f32);
        });
        Ok(())
    }
}
