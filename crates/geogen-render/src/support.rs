//! The forward **support pass**: where each map can differ from one constant height, and which
//! in-place steps leave most of their target alone.
//!
//! Scripts build local features on a constant sea: `HeightMap.RadialGradient(c, r, 1, -1)` is −1
//! everywhere beyond `r`, and so is the island made from it, rotated, moved and unified into a map
//! that is −1 outside the islands (the original's `ouroboros`). The backward bounds pass alone
//! cannot see that: `main.Unify(island)` needs the island on all of `main`'s bounds, so the island,
//! its rotation and everything it is made of are rendered over the whole map, mostly to compute
//! −1 again and again.
//!
//! This pass walks the sequence forwards and gives each step's result a [`Support`] when its
//! operation can name one ([`Operation::support`](crate::Operation::support)): a rectangle outside
//! which every pixel has exactly the bits of one background height. An in-place operation can also
//! say, from its arguments' supports, outside which region it leaves its target's pixels exactly
//! as they were ([`Operation::changes_only`](crate::Operation::changes_only)): `Unify` with a map
//! whose background is −1 changes nothing where that map is −1, since no height is below −1.
//!
//! The bounds pass (`bounds.rs`) then lets such a step compute only `B ∩ region` (its *narrowed*
//! bounds): its other arguments need only what that part reads, and the rest of `B` keeps the
//! target's pixels, which the target must still provide exactly on all of `B`. Nothing else
//! changes: every pixel anybody needs gets the bits it would get without the pass (`tile_contract`
//! renders random scripts with the pass and without it and compares every bit).
//!
//! Every rule must be exact, not approximately right: a rule that claims a support too small, or
//! a background one ulp off, changes bytes. So backgrounds are not derived by reasoning about
//! formulas but computed by running the operation's own kernel on constant inputs
//! ([`background_of`]), and the rectangles of the rules carry a pixel of margin for rounding.

use crate::geometry::Rect;
use crate::graph::RenderingGraph;
use crate::operation::{Bounds, Effect, KernelContext, ObjectKind, OpContext, Operation};
use crate::raster::{HeightMap, Object};
use crate::sequence::RenderingSequence;

/// Where a map may differ from one constant height: every pixel outside `rect`, anywhere on the
/// infinite plane, holds exactly the bits of `background`. An empty `rect` is a constant map.
#[derive(Copy, Clone, Debug)]
pub struct Support {
    pub rect: Rect,
    pub background: f32,
}

impl PartialEq for Support {
    /// Bit equality of the backgrounds (−0 and +0 differ; they are different bytes).
    fn eq(&self, other: &Support) -> bool {
        self.rect == other.rect && self.background.to_bits() == other.background.to_bits()
    }
}

impl Support {
    /// A constant map.
    pub fn constant(background: f32) -> Support {
        Support { rect: Rect::EMPTY, background }
    }
}

/// Bounds of every height of a map, by value (−0 and +0 are both 0 here): `low ≤ h ≤ high`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Range {
    pub low: f32,
    pub high: f32,
}

impl Range {
    /// What every map satisfies: each kernel saturates its heights to [−1, 1] and turns NaN to 0.
    pub const FULL: Range = Range { low: -1.0, high: 1.0 };

    /// The range of two bounds in either order, clipped to [−1, 1] (`FULL` if one is NaN).
    pub fn between(a: f32, b: f32) -> Range {
        if a.is_nan() || b.is_nan() {
            return Range::FULL;
        }
        Range { low: a.min(b).max(-1.0), high: a.max(b).min(1.0) }
    }
}

/// What the support pass knows of a map argument.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Facts {
    pub support: Option<Support>,
    pub range: Range,
}

impl Facts {
    /// Nothing known beyond [`Range::FULL`].
    pub const UNKNOWN: Facts = Facts { support: None, range: Range::FULL };
}

/// The results of the support pass, per step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Supports {
    /// What is known of each step's result (unknown for profiles).
    pub of_step: Vec<Facts>,
    /// For each in-place step, the region outside which it leaves its target unchanged, if its
    /// operation names one.
    pub changed: Vec<Option<Rect>>,
}

impl Supports {
    /// Nothing known: the passes behave as if this one did not exist.
    pub fn unknown(steps: usize) -> Supports {
        Supports { of_step: vec![Facts::UNKNOWN; steps], changed: vec![None; steps] }
    }

    /// Walks the sequence forwards (see the module docs).
    pub fn calculate(seq: &RenderingSequence, graph: &RenderingGraph) -> Supports {
        let ctx = OpContext { scale: seq.scale() };
        let mut out = Supports::unknown(seq.len());
        for (i, step) in seq.steps().iter().enumerate() {
            let args: Vec<Facts> = graph.producers(i).iter().map(|&p| out.of_step[p]).collect();
            if step.op.as_yield().is_some() {
                out.of_step[i] = args.first().copied().unwrap_or(Facts::UNKNOWN);
                continue;
            }
            let result_is_map = match step.op.effect() {
                Effect::Create(kind) => kind == ObjectKind::Map,
                Effect::Modify => step.op.arg_kinds().first() == Some(&ObjectKind::Map),
            };
            if !result_is_map {
                continue;
            }
            let changed = match step.op.effect() {
                Effect::Modify => step.op.changes_only(&args, &ctx),
                Effect::Create(_) => None,
            };
            // An in-place step that changes nothing outside `region` keeps its target's
            // background there.
            let kept = || match (changed, args.first().and_then(|a| a.support)) {
                (Some(region), Some(target)) => {
                    Some(Support { rect: target.rect.combine(&region), background: target.background })
                }
                _ => None,
            };
            // A pointwise operation's support follows from its arguments' (`pointwise_support`).
            let derived = || step.op.is_pointwise().then(|| pointwise_support(step.op.as_ref(), &args, &ctx)).flatten();
            let support = step.op.support(&args, &ctx).or_else(derived).or_else(kept);
            out.of_step[i] = Facts { support, range: step.op.range(&args, &ctx) };
            out.changed[i] = changed;
        }
        out
    }
}

/// The largest map [`background_of`] builds to evaluate a kernel on constant inputs.
const EVALUATION_PIXELS: u64 = 1 << 18;

/// The height `op` gives a pixel whose inputs all hold constant heights (`backgrounds`, one per
/// argument, all maps): the operation's own kernel run on constant maps covering what one output
/// pixel needs. For an operation whose result at a pixel depends only on the inputs around it
/// (pointwise filters and combiners, Blur), that is the bits its result has wherever its inputs
/// are constant. `None` if an argument is not a map, the inputs would be large (a blur of a huge
/// radius), or the kernel fails.
pub fn background_of(op: &dyn Operation, backgrounds: &[f32], ctx: &OpContext) -> Option<f32> {
    if backgrounds.len() != op.arg_kinds().len() || op.arg_kinds().iter().any(|k| *k != ObjectKind::Map) {
        return None;
    }
    let pixel = Rect::new(0, 0, 1, 1);
    let required = op.required_bounds(Bounds::Map(pixel), ctx);
    if required.len() != backgrounds.len() {
        return None;
    }
    let mut maps = Vec::with_capacity(backgrounds.len());
    for (need, &height) in required.iter().zip(backgrounds) {
        let rect = need.rect().combine(&pixel);
        if rect.area() > EVALUATION_PIXELS {
            return None;
        }
        maps.push(Object::Map(HeightMap::from_data(rect, vec![height; rect.area() as usize])?));
    }
    let kernel = KernelContext::new(ctx.scale, Bounds::Map(pixel));
    let result = match op.effect() {
        Effect::Create(_) => {
            let mut target = Object::Map(HeightMap::try_zeroed(pixel).ok()?);
            let inputs: Vec<&Object> = maps.iter().collect();
            op.render(&kernel, &mut target, &inputs).ok()?;
            target
        }
        Effect::Modify => {
            let mut maps = maps.into_iter();
            let mut target = maps.next()?;
            let rest: Vec<Object> = maps.collect();
            let inputs: Vec<&Object> = rest.iter().collect();
            op.render(&kernel, &mut target, &inputs).ok()?;
            target
        }
    };
    result.as_map().ok()?.get(0, 0)
}

/// The support of a pointwise operation (each result pixel depends on the arguments' pixels at the
/// same place only, the same way everywhere): constant wherever all arguments are, with the
/// background its kernel gives the arguments' backgrounds. `None` unless every argument's support
/// is known.
pub fn pointwise_support(op: &dyn Operation, args: &[Facts], ctx: &OpContext) -> Option<Support> {
    let args: Vec<Support> = args.iter().map(|a| a.support).collect::<Option<_>>()?;
    let rect = args.iter().fold(Rect::EMPTY, |acc, s| acc.combine(&s.rect));
    let backgrounds: Vec<f32> = args.iter().map(|s| s.background).collect();
    Some(Support { rect, background: background_of(op, &backgrounds, ctx)? })
}

/// The range of an operation whose result never decreases when any argument's height increases
/// (sums, maxima, box blurs: every rounding they do is monotonic), or, with one argument, that is
/// monotonic either way (a product with a negative number): its kernel on the arguments' lows and
/// on their highs, as [`background_of`] computes it. [`Range::FULL`] if that fails.
pub fn monotone_range(op: &dyn Operation, args: &[Facts], ctx: &OpContext) -> Range {
    let lows: Vec<f32> = args.iter().map(|a| a.range.low).collect();
    let highs: Vec<f32> = args.iter().map(|a| a.range.high).collect();
    match (background_of(op, &lows, ctx), background_of(op, &highs, ctx)) {
        (Some(low), Some(high)) if low <= high || args.len() == 1 => Range::between(low, high),
        _ => Range::FULL,
    }
}
