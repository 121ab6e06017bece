//! `map.ThermalErosion(iterations = 50, talus = 0.004, strength = 0.5)`: material slides down every
//! slope steeper than the talus until the slope rests at it (scree, rounded ridges). (Not in the
//! original GeoGen.)

use geogen_diag::codes;
use geogen_render::{Bounds, Effect, KernelContext, Object, ObjectKind, OpContext, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::erosion::{thermal, thermal_scratch_bytes, Thermal, THERMAL_RADIUS};

/// Most iterations a script may ask for (GGE2750): the halo is `iterations × scale` pixels, and
/// a tile of side T pays ((T + 2 × halo) / T)² for it.
pub const MAX_ITERATIONS: f64 = 200.0;
/// Most physical iterations whatever the render scale (a render at scale > 5 of 200 iterations is
/// capped here, so time stays bounded; the landforms then stop growing with the scale).
pub const MAX_PHYSICAL_ITERATIONS: u32 = 1000;

/// Iterations in pixels of a render at `scale`: `iterations` logical units of travel become
/// `round(iterations × scale)` pixel steps (at least one if any were asked for).
pub fn physical_iterations(iterations: u32, scale: f64) -> u32 {
    if iterations == 0 {
        return 0;
    }
    let v = libm::round(f64::from(iterations) * scale);
    if v.is_nan() || v < 1.0 {
        1
    } else {
        (v as u64).min(u64::from(MAX_PHYSICAL_ITERATIONS)) as u32
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ThermalErosion {
    /// Logical iterations, whole, in [0, 200].
    pub iterations: u32,
    /// The steepest stable slope, height per logical unit.
    pub talus: f64,
    /// In [0, 1]: the fraction of the largest stable exchange done per iteration.
    pub strength: f64,
}

impl ThermalErosion {
    fn kernel_params(&self, scale: f64) -> Thermal {
        Thermal {
            iterations: physical_iterations(self.iterations, scale),
            // A pixel spans 1 / scale logical units.
            talus: (self.talus / scale) as f32,
            rate: (self.strength / 8.0) as f32,
        }
    }

    fn halo(&self, scale: f64) -> u64 {
        u64::from(physical_iterations(self.iterations, scale)) * THERMAL_RADIUS
    }
}

impl Declared for ThermalErosion {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "ThermalErosion",
        receiver: Receiver::Method,
        params: &[
            Param::new("iterations", Kind::Range { min: 0.0, max: MAX_ITERATIONS, code: codes::GGE2750 }).or(50.0),
            Param::new("talus", Kind::Range { min: 0.0, max: 2.0, code: codes::GGE2751 }).or(0.004),
            Param::new("strength", Kind::Range { min: 0.0, max: 1.0, code: codes::GGE2715 }).or(0.5),
        ],
        checks: &[],
        family: Family::Filter,
        summary: "Thermal erosion (talus relaxation): in each of `iterations` synchronous steps (whole, in \
                  [0, 200], GGE2750; × the render scale in pixels), every pair of neighbouring pixels whose \
                  height difference exceeds `talus` (a slope: height per map unit, in [0, 2], GGE2751; × √2 \
                  for diagonal neighbours) exchanges `strength` / 8 of the excess (`strength` in [0, 1], \
                  GGE2715), so steep slopes slump into scree at the talus and material is conserved. Needs \
                  a halo of `iterations` map units around what is rendered (that is its bounds rule), and \
                  is exact in every tile. Not in the original.",
        examples: &[Example {
            // A one-pixel spike of 1 on a plain, one step with talus 0 and strength 1: each of the 8
            // pairs exchanges 1/8 of the difference, so the spike gives 8 × 0.125 and is flat, and
            // each neighbour holds 0.125.
            script: "yield HeightMap.Flat(0).FillRectangle([2, 2], [2, 2], 1).ThermalErosion(1, 0, 1);",
            size: (5, 5),
            expect: &[(2, 2, 0.0), (1, 1, 0.125), (2, 1, 0.125), (3, 2, 0.125), (0, 0, 0.0), (4, 2, 0.0)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let iterations = libm::trunc(call.number("iterations")?) as u32;
        rec.modify(ThermalErosion { iterations, talus: call.number("talus")?, strength: call.number("strength")? }, &[])
    }
}

impl Operation for ThermalErosion {
    fn name(&self) -> &str {
        "HeightMap.ThermalErosion"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!("{}, {}, {}", self.iterations, self.talus, self.strength)
    }
    /// Each synchronous step reads the 8 neighbours, so `n` steps need `n` pixels all round.
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        vec![Bounds::Map(own.rect().expand(self.halo(ctx.scale)))]
    }
    fn extra_memory(&self, extent: Bounds, ctx: &OpContext) -> u64 {
        if self.halo(ctx.scale) == 0 {
            0
        } else {
            thermal_scratch_bytes(extent.pixels())
        }
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        thermal(target.as_map_mut()?, ctx.bounds.rect(), self.kernel_params(ctx.scale))
    }
}
