//! `map.FillRectangle(a, b, height)`: one height over a rectangle.

use geogen_render::raster::height_from_f64;
use geogen_render::scale::to_physical;
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, Rect, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};
use geogen_render::rows::for_each_row;

#[derive(Clone, Debug, PartialEq)]
pub struct FillRectangle {
    /// Opposite corners in logical units, both included.
    pub a: (f64, f64),
    pub b: (f64, f64),
    pub height: f32,
}

impl FillRectangle {
    /// The filled rectangle in physical pixels: both corners included, in any order.
    pub fn physical_rect(a: (f64, f64), b: (f64, f64), scale: f64) -> Rect {
        Rect::from_corners(
            (to_physical(a.0, scale), to_physical(a.1, scale)),
            (to_physical(b.0, scale), to_physical(b.1, scale)),
        )
    }
}

impl Declared for FillRectangle {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "FillRectangle",
        receiver: Receiver::Method,
        params: &[Param::point("a"), Param::point("b"), Param::height("height")],
        checks: &[],
        family: Family::Filter,
        summary: "Sets the heights of the rectangle with corners `a` and `b` (both included, in any \
                  order: [10, 10]–[20, 20] is 11×11) to `height`.",
        examples: &[Example {
            script: "yield HeightMap.Flat(0).FillRectangle([3, 2], [1, 1], 0.5);",
            size: (5, 4),
            expect: &[(0, 0, 0.0), (1, 1, 0.5), (3, 2, 0.5), (2, 2, 0.5), (4, 2, 0.0), (1, 3, 0.0)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let op = FillRectangle {
            a: call.point_f64("a")?,
            b: call.point_f64("b")?,
            height: height_from_f64(call.number("height")?),
        };
        rec.modify(op, &[])
    }
}

impl Operation for FillRectangle {
    fn name(&self) -> &str {
        "HeightMap.FillRectangle"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!("[{}, {}], [{}, {}], {}", self.a.0, self.a.1, self.b.0, self.b.1, self.height)
    }
    fn is_row_local(&self) -> bool {
        true
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let rect = FillRectangle::physical_rect(self.a, self.b, ctx.scale);
        let height = self.height;
        for_each_row(target.as_map_mut()?, |py, x0, row| {
            if !rect.y_interval().contains(py) {
                return;
            }
            for (i, h) in row.iter_mut().enumerate() {
                if rect.x_interval().contains(x0 + i as i64) {
                    *h = height;
                }
            }
        });
        Ok(())
    }
}
