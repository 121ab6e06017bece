//! `map.Blur(radius)`: box blur.

use geogen_render::scale::scaled_distance;
use geogen_render::{
    Bounds, Effect, Facts, KernelContext, Object, ObjectKind, OpContext, Operation, Range, RenderError, Support,
};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::blur::{box_blur, map_scratch_bytes, Window};

#[derive(Clone, Debug, PartialEq)]
pub struct Blur {
    /// Logical radius.
    pub radius: f64,
}

impl Blur {
    pub fn new(radius: f64) -> Blur {
        Blur { radius }
    }

    fn window(&self, scale: f64) -> Window {
        Window::of_radius(scaled_distance(self.radius, scale))
    }

    /// The kernel's blur of a map that is `height` everywhere: the kernel run on one pixel. Its
    /// clamped edges repeat that pixel, so every window holds the same heights as a window of a
    /// large constant map, and the sums and their exact divisions are the same (checked against
    /// the whole window in the tests). Cheap at any radius, unlike evaluating over the window.
    pub fn of_constant(&self, height: f32, scale: f64) -> Option<f32> {
        let pixel = geogen_render::Rect::new(0, 0, 1, 1);
        let mut map = geogen_render::HeightMap::from_data(pixel, vec![height])?;
        box_blur(&mut map, scaled_distance(self.radius, scale)).ok()?;
        map.get(0, 0)
    }
}

impl Declared for Blur {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Blur",
        receiver: Receiver::Method,
        params: &[Param::size("radius")],
        checks: &[],
        family: Family::Filter,
        summary: "Separable box blur of radius r (scaled): each pixel becomes the mean of the 2r + 1 pixels \
                  [x − r + 1, x + r + 1] on each axis, as the original computes it (so shapes move one \
                  pixel towards the origin). O(1) per pixel whatever the radius; exact across tiles.",
        examples: &[Example {
            // A unit step blurred with r = 1: the window of x is [x, x + 2].
            script: "yield HeightMap.Flat(0).FillRectangle([3, 0], [9, 9], 0.75).Blur(1);",
            size: (6, 3),
            expect: &[(0, 1, 0.0), (1, 1, 0.25), (2, 1, 0.5), (3, 1, 0.75), (5, 1, 0.75)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(Blur::new(call.number("radius")?), &[])
    }
}

impl Operation for Blur {
    fn name(&self) -> &str {
        "HeightMap.Blur"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        self.radius.to_string()
    }
    /// The argument needs the window around B: `r − 1` pixels before and `r + 1` after on each axis,
    /// so the clamped edge never reaches a needed pixel.
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        let w = self.window(ctx.scale);
        vec![Bounds::Map(own.rect().expand_sides(w.low, w.high))]
    }
    /// A pixel whose window lies where the map is constant gets the kernel's blur of that
    /// constant; the window of pixel `p` reads `low` pixels before and `high` after it, so the
    /// support grows by `high` before and `low` after (and a pixel for luck).
    fn support(&self, args: &[Facts], ctx: &OpContext) -> Option<Support> {
        let source = crate::support::support_of(args, 0)?;
        let w = self.window(ctx.scale);
        Some(Support {
            rect: source.rect.expand_sides(w.high.saturating_add(1), w.low.saturating_add(1)),
            background: self.of_constant(source.background, ctx.scale)?,
        })
    }
    /// The box blur is monotonic: every conversion and division in it rounds the same way.
    fn range(&self, args: &[Facts], ctx: &OpContext) -> Range {
        let range = crate::support::range_of(args, 0);
        if range == Range::FULL {
            return Range::FULL;
        }
        match (self.of_constant(range.low, ctx.scale), self.of_constant(range.high, ctx.scale)) {
            (Some(low), Some(high)) if low <= high => Range::between(low, high),
            _ => Range::FULL,
        }
    }
    fn extra_memory(&self, extent: Bounds, ctx: &OpContext) -> u64 {
        let rect = extent.rect();
        map_scratch_bytes(rect.width, rect.height, scaled_distance(self.radius, ctx.scale))
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        box_blur(target.as_map_mut()?, scaled_distance(self.radius, ctx.scale))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pixel evaluation equals the blur of a constant map over a whole window, at several
    /// radii, scales and heights (the bits the support rule promises).
    #[test]
    fn a_constant_blurred_on_one_pixel_equals_the_whole_window() {
        let heights = [-1.0f32, -0.4, -0.0, 0.0, 1e-9, 0.1, 0.3333, 0.7, 1.0];
        for radius in [0.0, 1.0, 3.0, 8.0, 50.0] {
            for scale in [0.5, 1.0, 1.7] {
                let blur = Blur::new(radius);
                let ctx = OpContext { scale };
                for h in heights {
                    let whole = geogen_render::background_of(&blur, &[h], &ctx).unwrap();
                    let one = blur.of_constant(h, scale).unwrap();
                    assert_eq!(one.to_bits(), whole.to_bits(), "r {radius} scale {scale} h {h}");
                }
            }
        }
    }
}
