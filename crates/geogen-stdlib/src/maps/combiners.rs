//! Methods combining the receiver with numbers or other maps: `Add`, `Multiply`, `Combine`,
//! `Intersect`, `Unify`.

use geogen_render::ops;
use geogen_vm::{Args, Ctx, Library, Native, RuntimeError, Value};

use super::{check_height, map_arg, modify};

const ADD: Native =
    Native::function("Add", "map.Add(Number addend | HeightMap addend, HeightMap mask = none)", 1, Some(2), add);
/// The type of the first argument chooses the mode, as in the original.
fn add(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let mask = if args.len() > 1 { Some(map_arg(args, 1)?) } else { None };
    match (args.value(0)?, mask) {
        (Value::Number(addend), None) => {
            let addend = check_height(args, 0, *addend)?;
            modify(ctx, args, ops::AddNumber::new(addend), &[])
        }
        (Value::Number(addend), Some(mask)) => {
            let addend = check_height(args, 0, *addend)?;
            modify(ctx, args, ops::AddMasked::with_number(addend), &[mask])
        }
        (Value::HeightMap(_), None) => modify(ctx, args, ops::AddMap, &[map_arg(args, 0)?]),
        (Value::HeightMap(_), Some(mask)) => modify(ctx, args, ops::AddMasked::with_map(), &[map_arg(args, 0)?, mask]),
        _ => Err(args.type_error(0, "Number or HeightMap")),
    }
}

const MULTIPLY: Native =
    Native::function("Multiply", "map.Multiply(Number factor | HeightMap factor)", 1, Some(1), multiply);
fn multiply(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    match args.value(0)? {
        Value::Number(factor) => modify(ctx, args, ops::MultiplyNumber::new(*factor), &[]),
        Value::HeightMap(_) => modify(ctx, args, ops::MultiplyMap, &[map_arg(args, 0)?]),
        _ => Err(args.type_error(0, "Number or HeightMap")),
    }
}

const COMBINE: Native =
    Native::function("Combine", "map.Combine(HeightMap other, HeightMap mask)", 2, Some(2), combine);
fn combine(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let (other, mask) = (map_arg(args, 0)?, map_arg(args, 1)?);
    modify(ctx, args, ops::Combine, &[other, mask])
}

const INTERSECT: Native = Native::function("Intersect", "map.Intersect(HeightMap other)", 1, Some(1), intersect);
fn intersect(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let other = map_arg(args, 0)?;
    modify(ctx, args, ops::Intersect, &[other])
}

const UNIFY: Native = Native::function("Unify", "map.Unify(HeightMap other)", 1, Some(1), unify);
fn unify(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let other = map_arg(args, 0)?;
    modify(ctx, args, ops::Unify, &[other])
}

pub(super) fn register(lib: &mut Library) {
    for native in [ADD, MULTIPLY, COMBINE, INTERSECT, UNIFY] {
        lib.add_method("HeightMap", native);
    }
}
