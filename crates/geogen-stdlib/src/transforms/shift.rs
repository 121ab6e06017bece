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
use geogen_render::kernels::in_serial_mode;
use rayon::prelude::*;

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

/// Columns per strip of the vertical shift (a few cache lines of each source row).
const STRIP_COLUMNS: usize = 64;

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

/// [`sample_line`] with the same bits, without the out-of-line `floor` call: for offsets within
/// ±2^31 (NaN and beyond take `sample_line`) the floor is the truncation corrected by one, an
/// exact integer, so the reads, the fraction `at − floor` and the interpolation are those of
/// `sample_line`. Reads are unchecked only where the index was tested against `len`.
#[inline(always)]
fn sample_line_fast(len: usize, at: f64, line: impl Fn(usize) -> f32) -> f32 {
    const LIMIT: f64 = 2_147_483_648.0; // 2^31
    if !(at > -LIMIT && at < LIMIT) {
        return sample_line(len, at, line);
    }
    let truncated = at as i64;
    let floor = if (truncated as f64) > at { truncated - 1 } else { truncated };
    let read = |i: i64| if (i as u64) < len as u64 { f64::from(line(i as usize)) } else { 0.0 };
    let t = at - floor as f64;
    if t == 0.0 {
        return read(floor) as f32;
    }
    let (a, b) = (read(floor), read(floor + 1));
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
                    *h = sample_line_fast(width, i as f64 - by, |k| line[k]);
                }
            }),
            Axis::Vertical => {
                let by: Vec<f64> = (0..width as i64).map(|i| offset(rect.x + i)).collect();
                // Column strips inside tall bands of rows: neighbouring columns read neighbouring
                // source rows, so a strip walked down its rows reuses each cache line it loads
                // (a whole row at a time would touch a new line for almost every pixel).
                let band = |y0: usize, out: &mut [f32]| {
                    for x0 in (0..width).step_by(STRIP_COLUMNS) {
                        let x1 = (x0 + STRIP_COLUMNS).min(width);
                        for (r, out_row) in out.chunks_mut(width).enumerate() {
                            let y = (y0 + r) as f64;
                            for (i, (h, &b)) in out_row[x0..x1].iter_mut().zip(&by[x0..x1]).enumerate() {
                                let column = &source[x0 + i..];
                                *h = sample_line_fast(height, y - b, |k| column[k * width]);
                            }
                        }
                    }
                };
                let data = shifted.data_mut();
                if in_serial_mode() {
                    band(0, data);
                } else {
                    let rows = height.div_ceil(4 * rayon::current_num_threads().max(1)).clamp(16, 256);
                    data.par_chunks_mut(width * rows).enumerate().for_each(|(i, out)| band(i * rows, out));
                }
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

    /// The fast read gives the bits of the plain one for fractional, whole, negative, tiny,
    /// huge and non-finite offsets, inside and around the line.
    #[test]
    fn fast_line_read_equals_the_plain_one() {
        let line: Vec<f32> = (0..37).map(|k| geogen_random::hash1(k) as f32 / u32::MAX as f32 * 2.0 - 1.0).collect();
        let mut offsets = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            36.0,
            36.5,
            37.0,
            37.5,
            -0.5,
            -1e-300,
            1e-300,
            5e-324,
            -5e-324,
            1.0 - f64::EPSILON / 2.0,
            -(1.0 - f64::EPSILON / 2.0),
            2147483647.5,
            -2147483647.5,
            2147483648.0,
            -2147483648.0,
            -2147483649.5,
            1e18,
            -1e18,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MAX,
            f64::MIN,
        ];
        let mut x = 7u32;
        for _ in 0..20000 {
            x = geogen_random::hash1(x);
            let y = geogen_random::hash1(x ^ 0x5bd1);
            let unit = (u64::from(x) << 21 ^ u64::from(y)) as f64 / (1u64 << 53) as f64;
            offsets.push(unit * 50.0 - 6.0);
            offsets.push(f64::from(x % 45) - 4.0 - unit * 1e-12);
            offsets.push((f64::from(y % 400) - 200.0) - unit * 76.0 * 0.37);
        }
        for &at in &offsets {
            let plain = sample_line(line.len(), at, |k| line[k]);
            let fast = sample_line_fast(line.len(), at, |k| line[k]);
            assert_eq!(fast.to_bits(), plain.to_bits(), "at {at:e}");
        }
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
