//! Generators: operations that create a map from nothing but constants and logical coordinates.
//! Each pixel is a pure function of its logical coordinate (or, for `RadialGradient`, of its
//! physical coordinate and scaled constants), so their bounds rule is trivial (`own = B`) and any
//! tile reproduces the same pixels.

use std::collections::BTreeMap;

use crate::error::{Location, RenderError};
use crate::kernels::noise::{add_noise_layer, LayerField};
use crate::kernels::{for_each_row, map_pixels};
use crate::operation::{Effect, KernelContext, ObjectKind, Operation};
use crate::ops::kinds;
use crate::ops::pointwise::{AddNumber, Invert};
use crate::raster::{height_from_f64, saturate, Object, HEIGHT_UNITS};
use crate::scale::{scaled_distance, to_logical, to_physical};
use crate::sequence::{RenderingSequence, Slot};

/// `HeightMap.Flat(h)`: every pixel = h.
#[derive(Clone, Debug, PartialEq)]
pub struct Flat {
    pub height: f32,
}

impl Flat {
    pub fn new(height: f64) -> Flat {
        Flat { height: height_from_f64(height) }
    }
}

impl Operation for Flat {
    fn name(&self) -> &str {
        "HeightMap.Flat"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        kinds::NONE
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn describe_params(&self) -> String {
        self.height.to_string()
    }
    fn render(&self, _: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let h = self.height;
        map_pixels(target.as_map_mut()?, |_| h);
        Ok(())
    }
}

/// `HeightMap.Gradient(source, destination, from, to)`: a linear ramp along source→destination
/// (logical points), constant beyond either end.
#[derive(Clone, Debug, PartialEq)]
pub struct Gradient {
    pub source: (f64, f64),
    pub destination: (f64, f64),
    pub from: f32,
    pub to: f32,
}

impl Gradient {
    pub fn new(source: (f64, f64), destination: (f64, f64), from: f64, to: f64) -> Gradient {
        Gradient { source, destination, from: height_from_f64(from), to: height_from_f64(to) }
    }
}

impl Operation for Gradient {
    fn name(&self) -> &str {
        "HeightMap.Gradient"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        kinds::NONE
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn describe_params(&self) -> String {
        format!(
            "[{}, {}], [{}, {}], {}, {}",
            self.source.0, self.source.1, self.destination.0, self.destination.1, self.from, self.to
        )
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let (sx, sy) = self.source;
        let (vx, vy) = (self.destination.0 - sx, self.destination.1 - sy);
        let len2 = vx * vx + vy * vy;
        let (from, to) = (f64::from(self.from), f64::from(self.to));
        let scale = ctx.scale;
        for_each_row(target.as_map_mut()?, |py, x0, row| {
            let ly = to_logical(py, scale);
            for (i, h) in row.iter_mut().enumerate() {
                let lx = to_logical(x0 + i as i64, scale);
                // Projection parameter of the pixel on the segment (0 at source, 1 at destination).
                let t = if len2 > 0.0 { ((lx - sx) * vx + (ly - sy) * vy) / len2 } else { 0.0 };
                let v = if t <= 0.0 {
                    from
                } else if t >= 1.0 {
                    to
                } else {
                    from + (to - from) * t
                };
                *h = saturate(v as f32);
            }
        });
        Ok(())
    }
}

/// `HeightMap.RadialGradient(center, radius, centerHeight, rimHeight)`: a cone. Distances are
/// physical, from the scaled centre, against the scaled radius S(radius).
#[derive(Clone, Debug, PartialEq)]
pub struct RadialGradient {
    pub center: (f64, f64),
    pub radius: f64,
    pub center_height: f32,
    pub rim_height: f32,
}

impl RadialGradient {
    pub fn new(center: (f64, f64), radius: f64, center_height: f64, rim_height: f64) -> RadialGradient {
        RadialGradient {
            center,
            radius,
            center_height: height_from_f64(center_height),
            rim_height: height_from_f64(rim_height),
        }
    }
}

impl Operation for RadialGradient {
    fn name(&self) -> &str {
        "HeightMap.RadialGradient"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        kinds::NONE
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn describe_params(&self) -> String {
        format!("[{}, {}], {}, {}, {}", self.center.0, self.center.1, self.radius, self.center_height, self.rim_height)
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let cx = to_physical(self.center.0, ctx.scale) as f64;
        let cy = to_physical(self.center.1, ctx.scale) as f64;
        let r = scaled_distance(self.radius, ctx.scale) as f64;
        let (center, rim) = (f64::from(self.center_height), f64::from(self.rim_height));
        for_each_row(target.as_map_mut()?, |py, x0, row| {
            let dy = py as f64 - cy;
            for (i, h) in row.iter_mut().enumerate() {
                let dx = (x0 + i as i64) as f64 - cx;
                let d = libm::sqrt(dx * dx + dy * dy);
                let v = if d > r {
                    rim
                } else if r == 0.0 {
                    center
                } else {
                    center + (rim - center) * d / r
                };
                *h = saturate(v as f32);
            }
        });
        Ok(())
    }
}

/// One layer of `HeightMap.Noise` / `RidgedNoise` (one rendering step per layer, as the
/// original): adds the interpolated random field of one wavelength, saturating.
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
    /// combined `seed` (`combine_seeds(&[seed_arg, script_seed])`) and layer index `k`.
    pub fn new(wavelength: u32, amplitude: i32, seed: u32, layer_index: u32, ridged: bool) -> NoiseLayer {
        let mut mt = geogen_random::Mt19937::new(seed);
        let mut current = mt.next_u32();
        for _ in 0..layer_index {
            current = mt.next_u32();
        }
        let field = LayerField { wavelength: wavelength.max(1), amplitude: amplitude.clamp(0, 32767), current };
        NoiseLayer { field, layer_index, seed, ridged }
    }
}

impl Operation for NoiseLayer {
    fn name(&self) -> &str {
        "HeightMap.NoiseLayer"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        kinds::ONE_MAP
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
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        add_noise_layer(target.as_map_mut()?, ctx.scale, self.field, self.ridged);
        Ok(())
    }
}

/// A noise amplitude (a Number, nominally (0, 1]) in height units: `trunc(amp × 32767)`.
pub fn amplitude_units(amplitude: f64) -> i32 {
    let v = (amplitude * HEIGHT_UNITS).trunc();
    if v.is_nan() {
        0
    } else {
        v.clamp(0.0, HEIGHT_UNITS) as i32
    }
}

/// The layers used when a script gives no array: wavelength → amplitude in height units.
pub fn default_noise_layers() -> BTreeMap<u32, i32> {
    [(256, 16383), (128, 8191), (64, 4095), (32, 2047), (16, 1023), (8, 511), (4, 255), (2, 127), (1, 63)]
        .into_iter()
        .collect()
}

/// Records `HeightMap.Noise` (or `RidgedNoise` when `ridged`): `Flat(0)`, then one
/// [`NoiseLayer`] per wavelength in ascending order (layer index = position), and for ridged noise
/// `Invert` and `+1` (i.e. `1 − Σ|layer|`). Returns the new slot.
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
