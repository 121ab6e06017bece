//! Filters: operations whose output pixel reads a neighbourhood, so their bounds rule adds a
//! margin.

use crate::error::RenderError;
use crate::kernels::blur::{box_blur, scratch_bytes};
use crate::operation::{Bounds, Effect, KernelContext, ObjectKind, OpContext, Operation};
use crate::ops::kinds;
use crate::raster::Object;
use crate::scale::scaled_distance;

/// `map.Blur(radius)`: separable box blur, window 2r + 1 with r = S(radius), clamp-to-edge.
/// Bounds: the argument needs expand(B, r), so the clamped edge never reaches a needed pixel.
#[derive(Clone, Debug, PartialEq)]
pub struct Blur {
    /// Logical radius.
    pub radius: f64,
}

impl Blur {
    pub fn new(radius: f64) -> Blur {
        Blur { radius }
    }

    fn physical_radius(&self, scale: f64) -> u64 {
        scaled_distance(self.radius, scale)
    }
}

impl Operation for Blur {
    fn name(&self) -> &str {
        "HeightMap.Blur"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        kinds::ONE_MAP
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        self.radius.to_string()
    }
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        vec![Bounds::Map(own.rect().expand(self.physical_radius(ctx.scale)))]
    }
    fn extra_memory(&self, extent: Bounds, ctx: &OpContext) -> u64 {
        if self.physical_radius(ctx.scale) == 0 {
            0
        } else {
            scratch_bytes(extent.pixels())
        }
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        box_blur(target.as_map_mut()?, self.physical_radius(ctx.scale))
    }
}
