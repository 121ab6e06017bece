//! `map.HydraulicErosion(iterations = 60, rain = 0.002, evaporation = 0.02, capacity = 40, erosion
//! = 0.01, deposition = 0.3, seed = 0, output = "height", fanSlope = 0.001, seaLevel = 0)`: rain
//! falls in storms and runs down the water surface (hollows fill and spill), picks up material
//! where it flows fast and steep and drops it where it slows down (fans where valleys open onto
//! flat land, lakes filling up, deltas where rivers reach the sea); or one of the masks of that run
//! (where water flowed, where the terrain was cut, where it was filled). (Not in the original
//! GeoGen.)

use geogen_diag::codes;
use geogen_random::combine_seeds;
use geogen_render::{Bounds, Effect, KernelContext, Object, ObjectKind, OpContext, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use super::thermal_erosion::physical_iterations;
use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::erosion::{
    hydraulic, hydraulic_scratch_bytes, lift_pits, Hydraulic, Output, HYDRAULIC_RADIUS, STORM_WAVELENGTH, WATER_DEPTH,
};

/// Most iterations a script may ask for (GGE2750): the halo is `2 × iterations × scale` pixels.
pub const MAX_ITERATIONS: f64 = 100.0;

const RATE: Kind = Kind::Range { min: 0.0, max: 1.0, code: codes::GGE2751 };
const OUTPUTS: &[&str] = &["height", "flow", "erosion", "deposition"];

#[derive(Clone, Debug, PartialEq)]
pub struct HydraulicErosion {
    pub iterations: u32,
    pub rain: f64,
    pub evaporation: f64,
    pub capacity: f64,
    pub erosion: f64,
    pub deposition: f64,
    /// The gradient deposits settle at, height per logical unit.
    pub fan_slope: f64,
    /// The base level: terrain at or below it is sea.
    pub sea_level: f64,
    /// The rain pattern's seed, combined with the script seed.
    pub seed: u32,
    pub output: Output,
}

impl HydraulicErosion {
    fn kernel_params(&self, scale: f64) -> Hydraulic {
        Hydraulic {
            iterations: physical_iterations(self.iterations, scale),
            rain: self.rain as f32,
            evaporation: self.evaporation as f32,
            capacity: self.capacity as f32,
            erosion: self.erosion as f32,
            deposition: self.deposition as f32,
            // A pixel spans 1 / scale logical units.
            fan_drop: (self.fan_slope / scale) as f32,
            slope_scale: scale as f32,
            area_scale: (scale * scale) as f32,
            sea_level: self.sea_level as f32,
            // At most 1: a unit of water never stands higher than itself (scales below 1/4).
            water_depth: (WATER_DEPTH / (scale * scale * scale)).min(1.0) as f32,
            // The storms' lattice is in map units.
            storm_spacing: STORM_WAVELENGTH * scale,
            seed: self.seed,
            output: self.output,
        }
    }

    /// Two pixels per step (each step is two passes that each read the 8 neighbours) and one for
    /// the pits lifted at the end ([`lift_pits`]).
    fn halo(&self, scale: f64) -> u64 {
        match physical_iterations(self.iterations, scale) {
            0 => 0,
            n => u64::from(n) * HYDRAULIC_RADIUS + 1,
        }
    }
}

impl Declared for HydraulicErosion {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "HydraulicErosion",
        receiver: Receiver::Method,
        params: &[
            Param::new("iterations", Kind::Range { min: 0.0, max: MAX_ITERATIONS, code: codes::GGE2750 }).or(60.0),
            Param::new("rain", Kind::Range { min: 0.0, max: 0.1, code: codes::GGE2751 }).or(0.002),
            Param::new("evaporation", RATE).or(0.02),
            Param::new("capacity", Kind::Range { min: 0.0, max: 1000.0, code: codes::GGE2751 }).or(40.0),
            Param::new("erosion", RATE).or(0.01),
            Param::new("deposition", RATE).or(0.3),
            Param::seed("seed"),
            Param::new("output", Kind::Choice { items: OUTPUTS, code: codes::GGE2752 }).or_text("height"),
            Param::new("fanSlope", Kind::Range { min: 0.0, max: 0.1, code: codes::GGE2754 }).or(0.001),
            Param::height("seaLevel").or(0.0),
        ],
        checks: &[],
        family: Family::Filter,
        summary: "Hydraulic erosion on the grid, all pixels at once (synchronous, so exact in every tile \
                  and for any thread count): in each of `iterations` steps (whole, in [0, 100], GGE2750; × \
                  the render scale in pixels) every pixel sends its water and load to its neighbours lower on \
                  the water surface (terrain plus a share of the water, so a hollow's pond rises and spills \
                  over the low side of its rim; standing water levels out gradually) in proportion to the \
                  drops; the discharge through a pixel carries up to `capacity` × discharge × slope (in [0, \
                  1000]); `erosion` of what is missing is taken from the ground, `deposition` of any excess \
                  dropped (rates in [0, 1]), at most up to the neighbours' surface less `fanSlope` × the \
                  distance (height per map unit, in [0, 0.1], GGE2754), so where the flow slows, deposits \
                  build fans of that gradient and never a spike, and ponds fill up to their water surface; \
                  `evaporation` of the water evaporates and a rain of mean `rain` (in [0, 0.1]) falls in \
                  storms (a seeded smooth pattern about 32 map units across, new each step). Terrain at or \
                  below `seaLevel` (a height, GGE2303; -1 for no sea) is sea: its water joins the sea, it \
                  is never cut, and what arrives there settles (deltas, which can emerge). At the end a \
                  pit's load settles in it; the load still moving is washed out (so channels stay cut); \
                  a land pixel lower than all its neighbours is lifted to the lowest. Rates are GGE2751. `output` (GGE2752) picks the map: \"height\" (the eroded terrain, \
                  not saturated), or a mask in [0, 1): \"flow\" (where water ran), \"erosion\" (where \
                  ground was cut) or \"deposition\" (where sediment was laid). Needs a halo of 2 × \
                  `iterations` map units and a pixel (its bounds rule). See docs/erosion.md. Not in the original.",
        examples: &[Example {
            // A flat plain (above the sea level 0): the storms' rain forms puddles that level out, but
            // with no drop of the ground nothing is cut and the water carries nothing, so the heights
            // stay exactly as they were.
            script: "yield HeightMap.Flat(0.25).HydraulicErosion(10);",
            size: (6, 4),
            expect: &[(0, 0, 0.25), (3, 2, 0.25), (5, 3, 0.25)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let output = match call.text("output")? {
            "flow" => Output::Flow,
            "erosion" => Output::Erosion,
            "deposition" => Output::Deposition,
            _ => Output::Height,
        };
        let op = HydraulicErosion {
            iterations: libm::trunc(call.number("iterations")?) as u32,
            rain: call.number("rain")?,
            evaporation: call.number("evaporation")?,
            capacity: call.number("capacity")?,
            erosion: call.number("erosion")?,
            deposition: call.number("deposition")?,
            fan_slope: call.number("fanSlope")?,
            sea_level: call.number("seaLevel")?,
            seed: combine_seeds(&[call.seed("seed")?, rec.script_seed()]),
            output,
        };
        rec.modify(op, &[])
    }
}

impl Operation for HydraulicErosion {
    fn name(&self) -> &str {
        "HeightMap.HydraulicErosion"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!(
            "{}, {}, {}, {}, {}, {}, {:#x}, {:?}, {}, {}",
            self.iterations,
            self.rain,
            self.evaporation,
            self.capacity,
            self.erosion,
            self.deposition,
            self.seed,
            self.output,
            self.fan_slope,
            self.sea_level
        )
    }
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        vec![Bounds::Map(own.rect().expand(self.halo(ctx.scale)))]
    }
    fn extra_memory(&self, extent: Bounds, ctx: &OpContext) -> u64 {
        if physical_iterations(self.iterations, ctx.scale) == 0 {
            0
        } else {
            hydraulic_scratch_bytes(extent.pixels())
        }
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let map = target.as_map_mut()?;
        let own = ctx.bounds.rect();
        let p = self.kernel_params(ctx.scale);
        if p.iterations == 0 || p.output != Output::Height {
            return hydraulic(map, own, p);
        }
        // The eroded terrain one pixel beyond the bounds, then its one-pixel pits lifted.
        hydraulic(map, own.expand(1), p)?;
        lift_pits(map, own, p.sea_level);
        Ok(())
    }
}
