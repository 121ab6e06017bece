//! Static constructors: `HeightMap.Flat`, `Gradient`, `RadialGradient`, `Noise`, `RidgedNoise`,
//! `Clone`.

use std::collections::BTreeMap;

use geogen_diag::codes;
use geogen_render::ops;
use geogen_vm::{Args, Ctx, Library, Native, RuntimeError, Value};

use super::{create, height_arg, map_arg, opt_height_arg, size_arg};
use crate::coordinates::resolve_point;
use crate::util::n;

const FLAT: Native = Native::function("Flat", "HeightMap.Flat(Number height = 0)", 0, Some(1), flat);
fn flat(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let h = opt_height_arg(args, 0, 0.0)?;
    create(ctx, ops::Flat::new(h), &[])
}

const GRADIENT: Native = Native::function(
    "Gradient",
    "HeightMap.Gradient(Point source, Point destination, Number fromHeight, Number toHeight)",
    4,
    Some(4),
    gradient,
);
fn gradient(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let source = resolve_point(args.point(0)?, &ctx.env.geometry)?;
    let destination = resolve_point(args.point(1)?, &ctx.env.geometry)?;
    let (from, to) = (height_arg(args, 2)?, height_arg(args, 3)?);
    let op = ops::Gradient::new(
        (f64::from(source.0), f64::from(source.1)),
        (f64::from(destination.0), f64::from(destination.1)),
        from,
        to,
    );
    create(ctx, op, &[])
}

const RADIAL_GRADIENT: Native = Native::function(
    "RadialGradient",
    "HeightMap.RadialGradient(Point center, Number radius, Number centerHeight, Number rimHeight)",
    4,
    Some(4),
    radial_gradient,
);
fn radial_gradient(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let center = resolve_point(args.point(0)?, &ctx.env.geometry)?;
    let radius = size_arg(args, 1)?;
    let (center_height, rim_height) = (height_arg(args, 2)?, height_arg(args, 3)?);
    let op = ops::RadialGradient::new((f64::from(center.0), f64::from(center.1)), radius, center_height, rim_height);
    create(ctx, op, &[])
}

const NOISE: Native =
    Native::function("Noise", "HeightMap.Noise(Array layers = default, Number seed = 0)", 0, Some(2), noise);
fn noise(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    record_noise(ctx, args, false)
}

const RIDGED_NOISE: Native = Native::function(
    "RidgedNoise",
    "HeightMap.RidgedNoise(Array layers = default, Number seed = 0)",
    0,
    Some(2),
    ridged_noise,
);
fn ridged_noise(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    record_noise(ctx, args, true)
}

fn record_noise(ctx: &mut Ctx<'_>, args: &Args<'_>, ridged: bool) -> Result<Value, RuntimeError> {
    let layers = if args.is_empty() { ops::default_noise_layers() } else { noise_layers(args, 0)? };
    let seed = geogen_random::seed_from_number(args.opt_number(1, 0.0)?);
    let location = ctx.env.location(ctx.span);
    let script_seed = ctx.env.script_seed;
    let slot = ops::push_noise(&mut ctx.env.sequence, &layers, seed, script_seed, ridged, location)
        .map_err(RuntimeError::from_render)?;
    Ok(super::new_handle(ctx, slot))
}

/// A `{wavelength: amplitude}` array (reference §4.6): keys and values Numbers (GGE2708/2709),
/// wavelengths positive (GGE2710), amplitudes in (0, 1] (GGE2711, GGE2303). Wavelengths are
/// truncated to whole units and amplitudes to height units (× 32767), as in the original.
pub(crate) fn noise_layers(args: &Args<'_>, i: usize) -> Result<BTreeMap<u32, i32>, RuntimeError> {
    let array = args.array(i)?;
    let items = array.items.borrow();
    let mut layers = BTreeMap::new();
    for (key, value) in items.iter() {
        let Value::Number(wavelength) = key else {
            return Err(RuntimeError::new(
                codes::GGE2708,
                "a noise layer wavelength (array key) must be a Number".into(),
            ));
        };
        let Value::Number(amplitude) = value else {
            return Err(RuntimeError::new(
                codes::GGE2709,
                "a noise layer amplitude (array value) must be a Number".into(),
            ));
        };
        let (wavelength, amplitude) = (*wavelength, *amplitude);
        if wavelength.trunc() < 1.0 {
            return Err(RuntimeError::new(
                codes::GGE2710,
                format!("the noise layer wavelength {} is not a positive whole number of units", n(wavelength)),
            ));
        }
        if wavelength > u32::MAX as f64 {
            return Err(RuntimeError::new(
                codes::GGE2309,
                format!("the noise layer wavelength {} is too large", n(wavelength)),
            ));
        }
        if amplitude <= 0.0 {
            return Err(RuntimeError::new(
                codes::GGE2711,
                format!("the noise layer amplitude {} is not positive", n(amplitude)),
            ));
        }
        if amplitude > 1.0 {
            return Err(RuntimeError::new(
                codes::GGE2303,
                format!("the noise layer amplitude {} is above 1", n(amplitude)),
            ));
        }
        layers.insert(wavelength.trunc() as u32, ops::amplitude_units(amplitude));
    }
    Ok(layers)
}

const CLONE: Native = Native::function("Clone", "HeightMap.Clone(HeightMap map)", 1, Some(1), clone);
fn clone(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let source = map_arg(args, 0)?;
    create(ctx, ops::Clone, &[source])
}

pub(super) fn register(lib: &mut Library) {
    for native in [FLAT, GRADIENT, RADIAL_GRADIENT, NOISE, RIDGED_NOISE, CLONE] {
        lib.add_static("HeightMap", native);
    }
}
