//! `profile.Crop(start, end, replace = 0)`: everything outside an interval becomes `replace`.

use geogen_render::raster::height_from_f64;
use geogen_render::{
    Bounds, Effect, HeightProfile, Interval, KernelContext, Object, ObjectKind, OpContext, Operation, RenderError,
};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Along, Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::profile::{for_each_position, physical_interval};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileCrop {
    /// The kept interval, logical positions, both included, in either order.
    pub start: i32,
    pub end: i32,
    pub replace: f32,
}

impl ProfileCrop {
    fn kept(&self, scale: f64) -> Interval {
        physical_interval(self.start, self.end, scale)
    }
}

fn interval_of(bounds: Bounds) -> Interval {
    match bounds {
        Bounds::Profile(interval) => interval,
        Bounds::Map(_) => Interval::EMPTY,
    }
}

impl Declared for ProfileCrop {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Crop",
        receiver: Receiver::Method,
        params: &[
            Param::new("start", Kind::Coordinate(Along::Absolute)),
            Param::new("end", Kind::Coordinate(Along::Absolute)),
            Param::height("replace").or(0.0),
        ],
        checks: &[],
        family: Family::Filter,
        summary: "Heights outside [start, end] (both ends included, in either order) become `replace`. \
                  The profile before the crop is only computed inside the interval. (The original kept \
                  one position when start < end.)",
        examples: &[Example {
            script: "var p = HeightProfile.Gradient(0, 4, -1, 1).Crop(1, 3, 0.75);\
                     yield HeightMap.Projection(p, Direction.Vertical);",
            size: (6, 1),
            expect: &[(0, 0, 0.75), (1, 0, -0.5), (2, 0, 0.0), (3, 0, 0.5), (4, 0, 0.75), (5, 0, 0.75)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let op = ProfileCrop {
            start: call.coordinate("start")?,
            end: call.coordinate("end")?,
            replace: height_from_f64(call.number("replace")?),
        };
        rec.modify(op, &[])
    }
}

impl Operation for ProfileCrop {
    fn name(&self) -> &str {
        "HeightProfile.Crop"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Profile]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!("{}, {}, {}", self.start, self.end, self.replace)
    }
    /// Only the kept part of B is read.
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        vec![Bounds::Profile(interval_of(own).intersect(&self.kept(ctx.scale)))]
    }
    /// The result covers B, whatever part of it the input covered.
    fn result_extent(&self, own: Bounds, _: &[Bounds], _: &OpContext) -> Bounds {
        own
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let kept = self.kept(ctx.scale);
        let profile = target.as_profile_mut()?;
        let mut cropped = HeightProfile::try_zeroed(interval_of(ctx.bounds))?;
        let source = &*profile;
        for_each_position(&mut cropped, |p, h| {
            *h = if kept.contains(p) { source.get(p).unwrap_or(0.0) } else { self.replace };
        });
        *profile = cropped;
        Ok(())
    }
}
