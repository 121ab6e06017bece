//! `map.DrawLine(start, end, height)`: a one-pixel line.

use geogen_render::raster::height_from_f64;
use geogen_render::scale::to_physical;
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct DrawLine {
    /// End points in logical units.
    pub start: (f64, f64),
    pub end: (f64, f64),
    pub height: f32,
}

/// The pixels of the line between two physical points: one per column when it is at least as
/// wide as tall (one per row otherwise), the other coordinate being the exact position on the line
/// truncated toward zero. Each pixel comes straight from the end points (no stepping from a clipped
/// start), so every tile draws the same pixels.
#[derive(Copy, Clone, Debug)]
struct Line {
    from: (i128, i128),
    to: (i128, i128),
}

impl Line {
    /// Along the major axis `(from, to)` and the minor `(from, to)`, and whether X is major.
    fn axes(&self) -> ((i128, i128), (i128, i128), bool) {
        let (dx, dy) = (self.to.0 - self.from.0, self.to.1 - self.from.1);
        if dx.abs() >= dy.abs() {
            ((self.from.0, self.to.0), (self.from.1, self.to.1), true)
        } else {
            ((self.from.1, self.to.1), (self.from.0, self.to.0), false)
        }
    }

    /// Calls `plot(x, y)` for each pixel of the line whose major coordinate lies in `major_range`
    /// (inclusive).
    fn for_each_pixel(&self, major_range: (i128, i128), mut plot: impl FnMut(i128, i128)) {
        let ((m0, m1), (n0, n1), x_major) = self.axes();
        let (lo, hi) = (m0.min(m1).max(major_range.0), m0.max(m1).min(major_range.1));
        let dm = m1 - m0;
        let mut m = lo;
        while m <= hi {
            // n0 + (m − m0)(n1 − n0)/dm as an exact fraction, truncated toward zero by `/`.
            // (Saturating only matters for absurd coordinates, where it avoids overflow.)
            let numerator = n0.saturating_mul(dm).saturating_add((m - m0).saturating_mul(n1 - n0));
            let n = numerator.checked_div(dm).unwrap_or(n0);
            if x_major {
                plot(m, n);
            } else {
                plot(n, m);
            }
            m += 1;
        }
    }
}

impl Declared for DrawLine {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "DrawLine",
        receiver: Receiver::Method,
        params: &[Param::point("start"), Param::point("end"), Param::height("height")],
        checks: &[],
        family: Family::Filter,
        summary: "Draws a line one pixel wide from `start` to `end` (both included) at `height`: one pixel \
                  per column (or per row, for a line steeper than 45°), at the exact position on the \
                  line truncated toward zero.",
        examples: &[
            Example {
                // y = x / 2, truncated: (0, 0), (1, 0), (2, 1), (3, 1), (4, 2).
                script: "yield HeightMap.Flat(0).DrawLine([4, 2], [0, 0], 1);",
                size: (5, 3),
                expect: &[(0, 0, 1.0), (1, 0, 1.0), (2, 1, 1.0), (3, 1, 1.0), (4, 2, 1.0), (2, 0, 0.0), (4, 1, 0.0)],
            },
            Example {
                // Steep: x = 1 + y / 3, truncated: (1, 0), (1, 1), (1, 2), (2, 3).
                script: "yield HeightMap.Flat(0).DrawLine([1, 0], [2, 3], -1);",
                size: (3, 4),
                expect: &[(1, 0, -1.0), (1, 2, -1.0), (2, 3, -1.0), (2, 2, 0.0), (1, 3, 0.0)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let op = DrawLine {
            start: call.point_f64("start")?,
            end: call.point_f64("end")?,
            height: height_from_f64(call.number("height")?),
        };
        rec.modify(op, &[])
    }
}

impl Operation for DrawLine {
    fn name(&self) -> &str {
        "HeightMap.DrawLine"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!("[{}, {}], [{}, {}], {}", self.start.0, self.start.1, self.end.0, self.end.1, self.height)
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let map = target.as_map_mut()?;
        let rect = map.rect();
        if rect.is_empty() {
            return Ok(());
        }
        let physical =
            |p: (f64, f64)| (i128::from(to_physical(p.0, ctx.scale)), i128::from(to_physical(p.1, ctx.scale)));
        let line = Line { from: physical(self.start), to: physical(self.end) };
        let (xs, ys) = (rect.x_interval(), rect.y_interval());
        let (_, _, x_major) = line.axes();
        let major = if x_major { xs } else { ys };
        let width = map.width();
        let height = self.height;
        let data = map.data_mut();
        // O(length of the line inside the map); each plotted pixel gets a constant, so the order
        // does not matter.
        line.for_each_pixel((major.start as i128, major.end() - 1), |x, y| {
            if x >= xs.start as i128 && x < xs.end() && y >= ys.start as i128 && y < ys.end() {
                data[(y - ys.start as i128) as usize * width + (x - xs.start as i128) as usize] = height;
            }
        });
        Ok(())
    }
}
