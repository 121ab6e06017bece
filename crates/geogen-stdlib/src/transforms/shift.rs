//! `map.Shift(profile, maxDistance, direction)`: slide every row (or column) of a map by its own
//! distance, given by a profile.

use geogen_render::raster::saturate;
use geogen_render::scale::scaled_distance;
use geogen_render::{
    Bounds, Effect, HeightMap, KernelContext, Object, ObjectKind, OpContext, Operation, Rect, RenderError,
};
use geogen_vm::{RuntimeError, Value};

use crate::coordinates::Axis;
use crate::kernels::for_each_row;
use crate::kernels::profile::profile_input;
use crate::operation::{Along, Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct Shift {
    /// The distance a profile height of 1 moves a row, in logical units (negative: the other way).
    pub distance: i32,
    /// `Horizontal`: row y slides along X by profile(y) × distance; `Vertical`: column x slides
    /// along Y by profile(x) × distance.
    pub direction: Axis,
}

impl Shift {
    /// The distance in physical pixels, `S(|distance|)` with the sign of `distance` (the original
    /// did not scale it: a scale-consistency defect).
    fn physical_distance(&self, scale: f64) -> i64 {
        let magnitude = scaled_distance(f64::from(self.distance.unsigned_abs()), scale);
        let magnitude = i64::try_from(magnitude).unwrap_or(i64::MAX);
        if self.distance < 0 {
            -magnitude
        } else {
            magnitude
        }
    }
}

/// Linear read of `line` (a row or a column, `line(i)` for the pixel at offset `i`, `len` long) at
/// the fractional offset `at`; positions outside read 0. A whole offset reads one pixel only.
fn sample_line(len: usize, at: f64, line: impl Fn(usize) -> f32) -> f32 {
    let floor = libm::floor(at);
    let read = |i: f64| if i >= 0.0 && i < len as f64 { f64::from(line(i as usize)) } else { 0.0 };
    let t = at - floor;
    if t == 0.0 {
        return read(floor) as f32;
    }
    let (a, b) = (read(floor), read(floor + 1.0));
    saturate((a + (b - a) * t) as f32)
}

impl Declared for Shift {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Shift",
        receiver: Receiver::Method,
        params: &[
            Param::profile("profile"),
            Param::new("maxDistance", Kind::Coordinate(Along::Param(2))),
            Param::direction("direction"),
        ],
        checks: &[],
        family: Family::Transform,
        summary: "Slides every row (`Direction.Horizontal`, along X) or column (`Direction.Vertical`, \
                  along Y) by its own distance: the profile's height at that row (column) times \
                  `maxDistance` (a relative distance is a fraction of the map size along the \
                  direction). The pixel at x takes the old height at x − distance, read linearly. The \
                  distance scales with the render (the original did not scale it).",
        examples: &[
            Example {
                // Every row moves right by 0.5 × 4 = 2: x takes the ramp's height at x − 2.
                script: "var ramp = HeightMap.Gradient([0, 0], [8, 0], -1, 1);\
                         yield ramp.Shift(HeightProfile.Flat(0.5), 4, Direction.Horizontal);",
                size: (8, 2),
                expect: &[(2, 0, -1.0), (3, 1, -0.75), (4, 0, -0.5), (7, 1, 0.25)],
            },
            Example {
                // A fractional distance (0.25 × 2 = 0.5) reads between two pixels.
                script: "var ramp = HeightMap.Gradient([0, 0], [8, 0], -1, 1);\
                         yield ramp.Shift(HeightProfile.Flat(0.25), 2, Direction.Horizontal);",
                size: (8, 1),
                expect: &[(4, 0, -0.125), (1, 0, -0.875)],
            },
            Example {
                // Column x moves down by x / 4 × 4 = x (for x ≤ 4): (x, y) takes the ramp at y − x.
                script: "var ramp = HeightMap.Gradient([0, 0], [0, 8], -1, 1);\
                         yield ramp.Shift(HeightProfile.Gradient(0, 4, 0, 1), 4, Direction.Vertical);",
                size: (6, 8),
                expect: &[(0, 6, 0.5), (2, 6, 0.0), (4, 6, -0.5), (5, 7, -0.25), (3, 2, -1.0)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let op = Shift { distance: call.coordinate(1)?, direction: call.axis(2)? };
        rec.modify(op, &[call.object(0)?])
    }
}

impl Operation for Shift {
    fn name(&self) -> &str {
        "HeightMap.Shift"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map, ObjectKind::Profile]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!("{}, {:?}", self.distance, self.direction)
    }
    /// The map needs B widened by the distance along the direction (every source of a pixel of B,
    /// and the pixel after it, lies within); the profile needs B's rows (Horizontal) or columns
    /// (Vertical).
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        let rect = own.rect();
        let d = self.physical_distance(ctx.scale).unsigned_abs();
        let (map, profile) = match self.direction {
            Axis::Horizontal => {
                (Rect::from_intervals(rect.x_interval().expand(d), rect.y_interval()), rect.y_interval())
            }
            Axis::Vertical => (Rect::from_intervals(rect.x_interval(), rect.y_interval().expand(d)), rect.x_interval()),
        };
        vec![Bounds::Map(map), Bounds::Profile(profile)]
    }
    /// The shifted copy is built beside the original.
    fn extra_memory(&self, extent: Bounds, _: &OpContext) -> u64 {
        extent.bytes()
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        let profile = profile_input(inputs, 0)?;
        let distance = self.physical_distance(ctx.scale) as f64;
        let map = target.as_map_mut()?;
        let rect = map.rect();
        let mut shifted = HeightMap::try_zeroed(rect)?;
        let (width, height) = (map.width(), map.height());
        let source = map.data();
        let offset = |p: i64| f64::from(profile.get(p).unwrap_or(0.0)) * distance;
        match self.direction {
            Axis::Horizontal => for_each_row(&mut shifted, |py, _, row| {
                let start = (py - rect.y) as usize * width;
                let line = &source[start..start + width];
                let by = offset(py);
                for (i, h) in row.iter_mut().enumerate() {
                    *h = sample_line(width, i as f64 - by, |k| line[k]);
                }
            }),
            Axis::Vertical => {
                let by: Vec<f64> = (0..width as i64).map(|i| offset(rect.x + i)).collect();
                for_each_row(&mut shifted, |py, _, row| {
                    let y = (py - rect.y) as f64;
                    for (i, h) in row.iter_mut().enumerate() {
                        *h = sample_line(height, y - by[i], |k| source[k * width + i]);
                    }
                });
            }
        }
        *map = shifted;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_linearly_and_whole_offsets_read_one_pixel() {
        let line = [0.0f32, 1.0, 0.5];
        assert_eq!(sample_line(3, 1.0, |k| line[k]), 1.0);
        assert_eq!(sample_line(3, 0.5, |k| line[k]), 0.5);
        assert_eq!(sample_line(3, 1.5, |k| line[k]), 0.75);
        assert_eq!(sample_line(3, 2.5, |k| line[k]), 0.25); // past the end reads 0
        assert_eq!(sample_line(3, -0.5, |k| line[k]), 0.0);
        assert_eq!(sample_line(3, f64::NAN, |k| line[k]), 0.0);
    }

    #[test]
    fn distances_scale_and_keep_their_sign() {
        let shift = |distance| Shift { distance, direction: Axis::Vertical };
        assert_eq!(shift(76).physical_distance(1.0), 76);
        assert_eq!(shift(76).physical_distance(0.5), 38);
        assert_eq!(shift(-5).physical_distance(0.5), -2);
        assert_eq!(shift(i32::MIN).physical_distance(1.0), -2147483648);
    }
}
