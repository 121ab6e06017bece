//! `HeightProfile.Noise(layers?, seed = 0)`: the original's 1-D value noise, one rendering step
//! per layer as for maps.

use std::collections::BTreeMap;

use geogen_render::raster::{saturate, HEIGHT_UNITS};
use geogen_render::scale::to_logical;
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use super::flat::ProfileFlat;
use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::noise::{default_noise_layers, floor_i64, previous_multiple_inclusive, LayerField};
use geogen_kernels::profile::for_each_position;

/// `HeightProfile.Noise` only records steps: a flat profile and one [`ProfileNoiseLayer`] per
/// wavelength.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileNoise;

impl Declared for ProfileNoise {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Noise",
        receiver: Receiver::Static,
        params: &[Param::new("layers", Kind::NoiseLayers).optional(), Param::seed("seed")],
        checks: &[],
        family: Family::Generator,
        summary: "1-D layered value noise, as the original computes it: for each `{wavelength: \
                  amplitude}` layer (ascending wavelengths; by default 256: 0.5 down to 1: 1/512), \
                  random values at the multiples of the wavelength, joined by a cubic through the four \
                  nearest (not Catmull-Rom: it may overshoot) and added, saturating. Seeded by `seed` \
                  and the script seed like `HeightMap.Noise`; the values are those of the map noise's \
                  field along its row 0.",
        examples: &[Example {
            // The field values at 0, 4, 8 (and at −4 and 12 for the cubic) are those of
            // HeightMap.Noise({4: 1}, 0) along its row 0: −3942, −31248, −24901 (12377, −23472)
            // in height units. At x = 2 (t = ½) between p0..p3 = 12377, −3942, −31248, −24901:
            // a0 = (p3 − p2) − (p0 − p1) = −9972, a1 = (p0 − p1) − a0 = 26291, a2 = p2 − p0 = −43625,
            // a3 = p1 = −3942, so a0/8 + a1/4 + a2/2 + a3 = −20428.25. At x = 5 the cubic
            // undershoots −32767 and saturates.
            script: "yield HeightMap.Projection(HeightProfile.Noise({4: 1}), Direction.Vertical);",
            size: (9, 1),
            expect: &[
                (0, 0, -3942.0 / 32767.0),
                (2, 0, -20428.25 / 32767.0),
                (4, 0, -31248.0 / 32767.0),
                (5, 0, -1.0),
                (8, 0, -24901.0 / 32767.0),
            ],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let default_layers;
        let layers: &BTreeMap<u32, i32> = match call.layers("layers")? {
            Some(layers) => layers,
            None => {
                default_layers = default_noise_layers();
                &default_layers
            }
        };
        let seed = geogen_random::combine_seeds(&[call.seed("seed")?, rec.script_seed()]);
        let slot = rec.push_create(ProfileFlat::new(0.0), &[])?;
        for (k, (&wavelength, &amplitude)) in layers.iter().enumerate() {
            rec.push_modify(ProfileNoiseLayer::new(wavelength, amplitude, seed, k as u32), slot, &[])?;
        }
        Ok(rec.handle(ObjectKind::Profile, slot))
    }
}

/// One layer of `HeightProfile.Noise`: adds the interpolated 1-D field of one wavelength,
/// saturating.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileNoiseLayer {
    pub field: LayerField,
    pub layer_index: u32,
    /// The combined seed the field was derived from (for listings).
    pub seed: u32,
}

impl ProfileNoiseLayer {
    /// A layer of logical `wavelength` and `amplitude` in height units, for the combined `seed` and
    /// layer index `k` (the k-th advance of the random sequence, as for maps).
    pub fn new(wavelength: u32, amplitude: i32, seed: u32, layer_index: u32) -> ProfileNoiseLayer {
        ProfileNoiseLayer { field: LayerField::new(wavelength, amplitude, seed, layer_index), layer_index, seed }
    }

    /// The layer's value (height units) at logical position `lx`, for a physical wavelength of
    /// more than one pixel: the cubic through the field at the four lattice points around `lx`.
    pub fn value_at(&self, lx: f64) -> f64 {
        let w = i64::from(self.field.wavelength.max(1));
        let x1 = previous_multiple_inclusive(floor_i64(lx), w);
        let t = (lx - x1 as f64) / w as f64;
        let p = |k: i64| f64::from(self.field.value(x1.saturating_add(k.saturating_mul(w)), 0));
        let (p0, p1, p2, p3) = (p(-1), p(0), p(1), p(2));
        let a0 = (p3 - p2) - (p0 - p1);
        let a1 = (p0 - p1) - a0;
        let a2 = p2 - p0;
        let a3 = p1;
        ((a0 * t + a1) * t + a2) * t + a3
    }
}

impl Operation for ProfileNoiseLayer {
    fn name(&self) -> &str {
        "HeightProfile.NoiseLayer"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Profile]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!(
            "{}, {}, {}, layer {}",
            self.field.wavelength,
            f64::from(self.field.amplitude) / HEIGHT_UNITS,
            self.seed,
            self.layer_index
        )
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let scale = ctx.scale;
        // A wavelength of at most one pixel has nothing to interpolate: each pixel takes the field
        // at its own logical position (as the map noise does; the original skipped layers below
        // one pixel).
        let per_pixel = (f64::from(self.field.wavelength) * scale).floor() <= 1.0;
        for_each_position(target.as_profile_mut()?, |p, h| {
            let lx = to_logical(p, scale);
            let v = if per_pixel { f64::from(self.field.value(floor_i64(lx), 0)) } else { self.value_at(lx) };
            *h = saturate(*h + (v / HEIGHT_UNITS) as f32);
        });
        Ok(())
    }
}
