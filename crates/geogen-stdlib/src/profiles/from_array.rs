//! `HeightProfile.FromArray(points, direction?)`: a profile through given points.

use geogen_render::raster::saturate;
use geogen_render::scale::to_logical;
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Along, Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::profile::for_each_position;

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileFromArray {
    /// `(logical position, height)`, sorted by position (stably: of two points at one position the
    /// later given wins from that position on).
    pub points: Vec<(f64, f64)>,
}

impl ProfileFromArray {
    pub fn new(points: &[(i32, f64)]) -> ProfileFromArray {
        let mut points: Vec<(f64, f64)> = points.iter().map(|&(x, h)| (f64::from(x), h)).collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        ProfileFromArray { points }
    }

    /// The height at logical position `l`: the first height before the first point, the last
    /// after the last point, linear in between; 0 without points.
    pub fn height_at(&self, l: f64) -> f64 {
        let (Some(&(x_first, h_first)), Some(&(x_last, h_last))) = (self.points.first(), self.points.last()) else {
            return 0.0;
        };
        if l <= x_first {
            return h_first;
        }
        if l >= x_last {
            return h_last;
        }
        // The first point strictly after `l` (exists because l < x_last) and the one before it
        // (exists because l > x_first); their positions differ, so the division is safe. (Only a
        // NaN `l`, which no pixel has, could miss both; it reads the first height.)
        let k = self.points.partition_point(|&(x, _)| x <= l);
        match (k.checked_sub(1).and_then(|i| self.points.get(i)), self.points.get(k)) {
            (Some(&(x0, h0)), Some(&(x1, h1))) => h0 + (h1 - h0) * ((l - x0) / (x1 - x0)),
            _ => h_first,
        }
    }
}

impl Declared for ProfileFromArray {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "FromArray",
        receiver: Receiver::Static,
        params: &[Param::new("points", Kind::ProfilePoints(Along::Param(1))), Param::direction("direction").optional()],
        checks: &[],
        family: Family::Generator,
        summary: "A profile through the points of an array `{position: height}` (positions Numbers or \
                  Coordinates, in any order): linear between neighbouring points, the first height \
                  before the first point and the last after the last. Relative positions (`@0.5`) need \
                  `direction`, the axis they are fractions of (GGE2703). A position that is not a Number \
                  or Coordinate is GGE2706 and a height that is not a Number GGE2707 (the original \
                  silently skipped them). An empty array gives 0 everywhere.",
        examples: &[
            Example {
                script: "var p = HeightProfile.FromArray({6: 0, 0: -1, 4: 1});\
                         yield HeightMap.Projection(p, Direction.Vertical);",
                size: (8, 1),
                expect: &[(0, 0, -1.0), (1, 0, -0.5), (2, 0, 0.0), (4, 0, 1.0), (5, 0, 0.5), (6, 0, 0.0), (7, 0, 0.0)],
            },
            Example {
                script: "metadata { Width: Finite }\
                         var p = HeightProfile.FromArray({@0.5: 1, 0: 0}, Direction.Horizontal);\
                         yield HeightMap.Projection(p, Direction.Vertical);",
                size: (8, 1),
                expect: &[(0, 0, 0.0), (2, 0, 0.5), (4, 0, 1.0), (7, 0, 1.0)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.create(ProfileFromArray::new(call.points("points")?), &[])
    }
}

impl Operation for ProfileFromArray {
    fn name(&self) -> &str {
        "HeightProfile.FromArray"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Profile)
    }
    fn describe_params(&self) -> String {
        let points: Vec<String> = self.points.iter().map(|(x, h)| format!("{x}: {h}")).collect();
        format!("{{{}}}", points.join(", "))
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let scale = ctx.scale;
        for_each_position(target.as_profile_mut()?, |p, h| {
            *h = saturate(self.height_at(to_logical(p, scale)) as f32);
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heights_between_and_beyond_the_points() {
        let p = ProfileFromArray::new(&[(10, 0.5), (0, -0.5), (10, 1.0)]);
        assert_eq!(p.height_at(-5.0), -0.5);
        assert_eq!(p.height_at(5.0), 0.0);
        // Two points at 10: the ramp reaches the first, the second holds from there on.
        assert!((p.height_at(9.0) - 0.4).abs() < 1e-12);
        assert_eq!(p.height_at(10.0), 1.0);
        assert_eq!(p.height_at(11.0), 1.0);
        assert_eq!(ProfileFromArray::new(&[]).height_at(3.0), 0.0);
        assert_eq!(ProfileFromArray::new(&[(7, 0.25)]).height_at(-1e9), 0.25);
        assert_eq!(p.height_at(f64::NAN), -0.5);
    }
}
