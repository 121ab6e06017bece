//! `HeightMap.DistanceMap(map, maximumDistance)`: how far each pixel is from the nearest pixel at
//! or below height 0.

use geogen_render::scale::scaled_distance;
use geogen_render::{Bounds, Effect, KernelContext, Object, ObjectKind, OpContext, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::distance::{distance_map, scratch_bytes};

#[derive(Clone, Debug, PartialEq)]
pub struct DistanceMap {
    /// Logical maximum distance.
    pub maximum_distance: f64,
}

impl DistanceMap {
    fn d(&self, scale: f64) -> u64 {
        scaled_distance(self.maximum_distance, scale)
    }
}

impl Declared for DistanceMap {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "DistanceMap",
        receiver: Receiver::Static,
        params: &[Param::map("map"), Param::size("maximumDistance")],
        checks: &[],
        family: Family::Filter,
        summary: "A new map of the exact Euclidean distance from each pixel to the nearest pixel of `map` \
                  at or below 0, divided by `maximumDistance` D (scaled) and capped at 1: 0 on those \
                  pixels, 1 at D or farther. With D = 0 (a distance below one pixel) it is 0 on those \
                  pixels and 1 elsewhere. Unlike the original, correct on any rectangle shape.",
        examples: &[
            Example {
                // The only feature is column 0: distance x / 4, capped at 1.
                script: "yield HeightMap.DistanceMap(HeightMap.Flat(1).FillRectangle([0, -9], [0, 9], 0), 4);",
                size: (6, 2),
                expect: &[(0, 0, 0.0), (1, 0, 0.25), (3, 1, 0.75), (4, 0, 1.0), (5, 1, 1.0)],
            },
            Example {
                // One feature pixel at (0, 0): (3, 4) is 5 away, (1, 1) is √2 away.
                script: "yield HeightMap.DistanceMap(HeightMap.Flat(0.5).FillRectangle([0, 0], [0, 0], -1), 10);",
                size: (5, 5),
                expect: &[(0, 0, 0.0), (3, 4, 0.5), (1, 1, 0.141_421_36), (0, 2, 0.2)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.create(DistanceMap { maximum_distance: call.number("maximumDistance")? }, &[call.object("map")?])
    }
}

impl Operation for DistanceMap {
    fn name(&self) -> &str {
        "HeightMap.DistanceMap"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn describe_params(&self) -> String {
        self.maximum_distance.to_string()
    }
    /// Features farther than D from B cannot change B's pixels.
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        vec![Bounds::Map(own.rect().expand(self.d(ctx.scale)))]
    }
    fn extra_memory(&self, extent: Bounds, ctx: &OpContext) -> u64 {
        scratch_bytes(extent.rect(), self.d(ctx.scale))
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        let source = inputs.first().ok_or_else(|| RenderError::Internal("DistanceMap without its map".into()))?;
        distance_map(source.as_map()?, target.as_map_mut()?, self.d(ctx.scale))
    }
}
