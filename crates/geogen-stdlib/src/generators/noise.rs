//! `HeightMap.Noise(layers?, seed = 0)`: the original's layered value noise, one rendering step
//! per layer (so progress moves per layer, as in the original).

use std::collections::BTreeMap;

use geogen_render::raster::HEIGHT_UNITS;
use geogen_render::{
    Effect, KernelContext, Location, Object, ObjectKind, Operation, RenderError, RenderingSequence, Slot,
};
use geogen_vm::{RuntimeError, Value};

use super::flat::Flat;
use crate::filters::{AddNumber, Invert};
use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::noise::{add_noise_layer, default_noise_layers, LayerField};

/// `HeightMap.Noise` itself only records steps: `Flat(0)` and one [`NoiseLayer`] per wavelength.
#[derive(Clone, Debug, PartialEq)]
pub struct Noise;

pub(crate) const NOISE_PARAMS: &[Param] = &[Param::new("layers", Kind::NoiseLayers).optional(), Param::seed("seed")];

impl Declared for Noise {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Noise",
        receiver: Receiver::Static,
        params: NOISE_PARAMS,
        checks: &[],
        family: Family::Generator,
        summary: "Layered value noise: for each `{wavelength: amplitude}` layer (ascending wavelengths; \
                  by default 256: 0.5 down to 1: 1/512), random values on a lattice of that spacing, \
                  interpolated bicubically (Catmull-Rom) and added, saturating. Seeded by `seed` and the \
                  script seed, bit for bit as the original.",
        examples: &[Example {
            // At a lattice point of the only layer the interpolation weight is 0, so the pixel is
            // the field value itself, −A + hash mod (2A + 1) in height units (A = 32767). The hash
            // and MT19937 are checked against the original's test vectors in geogen-random; these
            // values pin their composition for script seed 0 and seed argument 0.
            script: "yield HeightMap.Noise({4: 1}, 0);",
            size: (9, 9),
            expect: &[
                (0, 0, -3942.0 / 32767.0),
                (4, 0, -31248.0 / 32767.0),
                (0, 4, -9741.0 / 32767.0),
                (4, 4, 2101.0 / 32767.0),
                (8, 8, 17239.0 / 32767.0),
            ],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let slot = record_noise(call, rec, false)?;
        Ok(rec.handle(ObjectKind::Map, slot))
    }
}

/// Records `Flat(0)` and one layer per wavelength (layer index = position in ascending order), and
/// for ridged noise `Invert` and `+1` (`1 − Σ|layer|`). Returns the new slot.
pub(crate) fn record_noise(call: &Call, rec: &mut Recorder<'_, '_>, ridged: bool) -> Result<Slot, RuntimeError> {
    let default_layers;
    let layers: &BTreeMap<u32, i32> = match call.layers("layers")? {
        Some(layers) => layers,
        None => {
            default_layers = default_noise_layers();
            &default_layers
        }
    };
    let (seed, script_seed, location) = (call.seed("seed")?, rec.script_seed(), rec.location());
    push_noise(rec.sequence(), layers, seed, script_seed, ridged, location).map_err(RuntimeError::from_render)
}

/// The steps of `Noise` (or `RidgedNoise`) appended to a sequence: `Flat(0)`, one [`NoiseLayer`]
/// per wavelength with seed `combine_seeds(seed_arg, script_seed)`, and for ridged noise `Invert`
/// and `+1`. Returns the new slot.
pub fn push_noise(
    seq: &mut RenderingSequence,
    layers: &BTreeMap<u32, i32>,
    seed_arg: u32,
    script_seed: u32,
    ridged: bool,
    location: Location,
) -> Result<Slot, RenderError> {
    let seed = geogen_random::combine_seeds(&[seed_arg, script_seed]);
    let slot = seq.push_create(Flat::new(0.0), &[], location)?;
    for (k, (&wavelength, &amplitude)) in layers.iter().enumerate() {
        seq.push_modify(NoiseLayer::new(wavelength, amplitude, seed, k as u32, ridged), slot, &[], location)?;
    }
    if ridged {
        seq.push_modify(Invert, slot, &[], location)?;
        seq.push_modify(AddNumber::new(1.0), slot, &[], location)?;
    }
    Ok(slot)
}

/// One layer of `Noise` / `RidgedNoise`: adds the interpolated random field of one wavelength,
/// saturating.
#[derive(Clone, Debug, PartialEq)]
pub struct NoiseLayer {
    pub field: LayerField,
    /// Layer index k (0 = smallest wavelength); `field.current` is the k-th advance.
    pub layer_index: u32,
    /// The combined seed the field was derived from (for listings).
    pub seed: u32,
    /// Adds |value| instead of value (RidgedNoise).
    pub ridged: bool,
}

impl NoiseLayer {
    /// A layer of logical `wavelength` (≥ 1) and `amplitude` in height units (0..=32767), for the
    /// combined `seed` and layer index `k`.
    pub fn new(wavelength: u32, amplitude: i32, seed: u32, layer_index: u32, ridged: bool) -> NoiseLayer {
        NoiseLayer { field: LayerField::new(wavelength, amplitude, seed, layer_index), layer_index, seed, ridged }
    }
}

impl Operation for NoiseLayer {
    fn name(&self) -> &str {
        "HeightMap.NoiseLayer"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!(
            "{}, {}, {}, layer {}{}",
            self.field.wavelength,
            f64::from(self.field.amplitude) / HEIGHT_UNITS,
            self.seed,
            self.layer_index,
            if self.ridged { ", ridged" } else { "" }
        )
    }
    fn is_row_local(&self) -> bool {
        true
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        add_noise_layer(target.as_map_mut()?, ctx.scale, self.field, self.ridged);
        Ok(())
    }
}
