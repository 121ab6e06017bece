//! Methods changing the receiver's heights: `Abs`, `Invert`, `Fill`, `ClampHeights`,
//! `CropHeights`, `Blur`.

use geogen_render::ops;
use geogen_vm::{Args, Ctx, Library, Native, RuntimeError, Value};

use super::{height_arg, modify, opt_height_arg, ordered, size_arg};

const ABS: Native = Native::function("Abs", "map.Abs()", 0, Some(0), abs);
fn abs(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    modify(ctx, args, ops::Abs, &[])
}

const INVERT: Native = Native::function("Invert", "map.Invert()", 0, Some(0), invert);
fn invert(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    modify(ctx, args, ops::Invert, &[])
}

const FILL: Native = Native::function("Fill", "map.Fill(Number height)", 1, Some(1), fill);
fn fill(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let h = height_arg(args, 0)?;
    modify(ctx, args, ops::Fill::new(h), &[])
}

const CLAMP_HEIGHTS: Native =
    Native::function("ClampHeights", "map.ClampHeights(Number min, Number max)", 2, Some(2), clamp_heights);
fn clamp_heights(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let (min, max) = (height_arg(args, 0)?, height_arg(args, 1)?);
    ordered(args, min, max)?;
    modify(ctx, args, ops::ClampHeights::new(min, max), &[])
}

const CROP_HEIGHTS: Native = Native::function(
    "CropHeights",
    "map.CropHeights(Number min, Number max, Number replace = 0)",
    2,
    Some(3),
    crop_heights,
);
fn crop_heights(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let (min, max) = (height_arg(args, 0)?, height_arg(args, 1)?);
    let replace = opt_height_arg(args, 2, 0.0)?;
    ordered(args, min, max)?;
    modify(ctx, args, ops::CropHeights::new(min, max, replace), &[])
}

const BLUR: Native = Native::function("Blur", "map.Blur(Number radius)", 1, Some(1), blur);
fn blur(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let radius = size_arg(args, 0)?;
    modify(ctx, args, ops::Blur::new(radius), &[])
}

pub(super) fn register(lib: &mut Library) {
    for native in [ABS, INVERT, FILL, CLAMP_HEIGHTS, CROP_HEIGHTS, BLUR] {
        lib.add_method("HeightMap", native);
    }
}
