//! HeightMap operations as scripts see them (reference §4.7).
//!
//! A binding checks the script's arguments (types, heights in [-1, 1], sizes, ranges) and records
//! one or more rendering steps; it never computes pixels. The operation itself (bounds rule, memory
//! need, kernel) lives in `geogen_render::ops`. Each family module declares its natives next to
//! their functions and registers them.
//!
//! Handles: a static constructor returns a new `HeightMap` handle naming a fresh renderer slot; an
//! instance method records an in-place step on its receiver's slot and returns the receiver, so
//! calls chain (`HeightMap.Flat(0).Add(0.5).Blur(3)`) and aliases (`var b = a;`) see the changes.

mod combiners;
mod filters;
mod generators;

use std::rc::Rc;

use geogen_diag::codes;
use geogen_render::{Operation, Slot};
use geogen_vm::value::MapHandle;
use geogen_vm::{Args, Ctx, Library, RuntimeError, Value};

use crate::util::n;

pub(crate) fn register(lib: &mut Library) {
    generators::register(lib);
    combiners::register(lib);
    filters::register(lib);
}

/// The slot of the receiver of an instance method.
fn this_slot(args: &Args<'_>) -> Result<Slot, RuntimeError> {
    match args.this {
        Value::HeightMap(handle) => Ok(Slot(handle.slot)),
        _ => Err(RuntimeError::internal(format!("`{}` called on something that is not a HeightMap", args.native.name))),
    }
}

/// Argument `i` as a map slot (GGE2101 otherwise).
fn map_arg(args: &Args<'_>, i: usize) -> Result<Slot, RuntimeError> {
    match args.value(i)? {
        Value::HeightMap(handle) => Ok(Slot(handle.slot)),
        _ => Err(args.type_error(i, "HeightMap")),
    }
}

/// Argument `i` as a height: a Number in [-1, 1] (GGE2303 otherwise).
fn height_arg(args: &Args<'_>, i: usize) -> Result<f64, RuntimeError> {
    let h = args.number(i)?;
    check_height(args, i, h)
}

fn opt_height_arg(args: &Args<'_>, i: usize, default: f64) -> Result<f64, RuntimeError> {
    if i < args.len() {
        height_arg(args, i)
    } else {
        Ok(default)
    }
}

fn check_height(args: &Args<'_>, i: usize, h: f64) -> Result<f64, RuntimeError> {
    if (-1.0..=1.0).contains(&h) {
        Ok(h)
    } else {
        Err(RuntimeError::new(
            codes::GGE2303,
            format!("argument {} of `{}` is the height {}, outside [-1, 1]", i + 1, args.native.name, n(h)),
        )
        .with_hint("heights run from -1 (lowest) to 1 (highest)"))
    }
}

/// Argument `i` as a size, radius or distance: a Number in [0, 4294967295] (GGE2309 otherwise).
fn size_arg(args: &Args<'_>, i: usize) -> Result<f64, RuntimeError> {
    let s = args.number(i)?;
    if (0.0..=u32::MAX as f64).contains(&s) {
        Ok(s)
    } else {
        Err(RuntimeError::new(
            codes::GGE2309,
            format!("argument {} of `{}` is the size {}, outside [0, 4294967295]", i + 1, args.native.name, n(s)),
        ))
    }
}

/// GGE2705 when a range is reversed.
fn ordered(args: &Args<'_>, min: f64, max: f64) -> Result<(), RuntimeError> {
    if min > max {
        return Err(RuntimeError::new(
            codes::GGE2705,
            format!("`{}`: the minimum {} is greater than the maximum {}", args.native.name, n(min), n(max)),
        ));
    }
    Ok(())
}

/// A new handle for a freshly created slot.
fn new_handle(ctx: &mut Ctx<'_>, slot: Slot) -> Value {
    Value::HeightMap(Rc::new(MapHandle { id: ctx.env.new_object_id(), slot: slot.0 }))
}

/// Records a step creating a new map from `inputs`; returns its handle.
fn create(ctx: &mut Ctx<'_>, op: impl Operation + 'static, inputs: &[Slot]) -> Result<Value, RuntimeError> {
    let location = ctx.env.location(ctx.span);
    let slot = ctx.env.sequence.push_create(op, inputs, location).map_err(RuntimeError::from_render)?;
    Ok(new_handle(ctx, slot))
}

/// Records an in-place step on the receiver with further map arguments; returns the receiver.
fn modify(
    ctx: &mut Ctx<'_>,
    args: &Args<'_>,
    op: impl Operation + 'static,
    others: &[Slot],
) -> Result<Value, RuntimeError> {
    let target = this_slot(args)?;
    let location = ctx.env.location(ctx.span);
    ctx.env.sequence.push_modify(op, target, others, location).map_err(RuntimeError::from_render)?;
    Ok(args.this.clone())
}
