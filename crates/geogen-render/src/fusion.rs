//! Streamed inputs: a map made by a chain of row-local steps right before the one step that reads
//! it last is never held whole.
//!
//! Scripts often build a map only to mix it into another at once:
//!
//! ```text
//! {1} <- HeightMap.Flat(0)
//! {1} <- HeightMap.NoiseLayer({1}, ...)     (a chain of row-local steps making {1})
//! {1} <- HeightMap.Multiply({1}, 0.2)
//! {0} <- HeightMap.AddMap({0}, {1})         (its consumer, and {1}'s last use)
//! ```
//!
//! When the consumer reads its map inputs on its own rows only
//! ([`Operation::reads_inputs_on_its_rows`]), the renderer runs the chain and the consumer as one
//! pass over bands of the consumer's target: each band of `{1}` (its whole rows meeting the band)
//! is computed by the chain into a scratch band, read by the consumer's kernel, and dropped. Every
//! pixel goes through the same arithmetic in the same order as step by step (the chain's steps are
//! row-local, so a band of whole rows gives the pixels of the whole map on those rows; the consumer
//! reads only those rows), so the bytes are the same; the memory plan does not count `{1}` at all
//! (only the live objects before the chain and the chain head's scratch, for the whole pass).
//!
//! [`Operation::reads_inputs_on_its_rows`]: crate::Operation::reads_inputs_on_its_rows

use crate::lifetimes::Lifetimes;
use crate::operation::{Bounds, Effect, ObjectKind, OpContext};
use crate::sequence::RenderingSequence;

/// For each step, `Some(c)` when a streamed pass starts there: the step creates a map that steps
/// up to `c - 1` modify and step `c` reads for the last time, all in one banded pass. `extents`
/// are the plan's result extents.
pub(crate) fn streamed_passes(
    seq: &RenderingSequence,
    bounds: &[Bounds],
    lifetimes: &Lifetimes,
    extents: &[Bounds],
) -> Vec<Option<usize>> {
    let steps = seq.steps();
    let ctx = OpContext { scale: seq.scale() };
    let mut passes = vec![None; steps.len()];
    // The extent of each slot before the step looked at.
    let mut slot_extent: Vec<Option<Bounds>> = vec![None; seq.slot_count()];
    let live = |j: usize| !bounds[j].is_empty() && steps[j].op.as_yield().is_none();
    let mut i = 0;
    while i < steps.len() {
        let mut end = i + 1;
        if let Some(c) = chain_consumer(seq, lifetimes, extents, &slot_extent, &ctx, &live, i) {
            passes[i] = Some(c);
            end = c + 1;
        }
        for j in i..end {
            slot_extent[steps[j].ret.index()] = Some(extents[j]);
            for s in lifetimes.released_after(j) {
                slot_extent[s.index()] = None;
            }
        }
        i = end;
    }
    passes
}

/// The consumer of a streamed pass starting at `a`, if there is one.
#[allow(clippy::too_many_arguments)]
fn chain_consumer(
    seq: &RenderingSequence,
    lifetimes: &Lifetimes,
    extents: &[Bounds],
    slot_extent: &[Option<Bounds>],
    ctx: &OpContext,
    live: &dyn Fn(usize) -> bool,
    a: usize,
) -> Option<usize> {
    let steps = seq.steps();
    let head = &steps[a];
    let extent = extents[a];
    let made = head.ret;
    if !(live(a)
        && head.op.is_row_local()
        && head.op.effect() == Effect::Create(ObjectKind::Map)
        && matches!(extent, Bounds::Map(r) if !r.is_empty()))
    {
        return None;
    }
    // The chain: the head, then row-local steps modifying the new map in place, unresized, with
    // no scratch, not reading it twice.
    let mut c = a + 1;
    while c < steps.len() {
        let step = &steps[c];
        let joins = live(c)
            && step.ret == made
            && step.op.is_row_local()
            && step.op.effect() == Effect::Modify
            && !step.args[1..].contains(&made)
            && extents[c] == extent
            && step.op.extra_memory(extent, ctx) == 0;
        if !joins {
            break;
        }
        c += 1;
    }
    let consumer = steps.get(c)?;
    let target = consumer.ret;
    let target_extent = slot_extent[target.index()]?;
    let chain_reads_target = steps[a..c].iter().any(|s| s.args.contains(&target));
    let fits = live(c)
        && target != made
        && consumer.op.is_row_local()
        && consumer.op.reads_inputs_on_its_rows()
        && consumer.op.effect() == Effect::Modify
        && consumer.args[1..].contains(&made)
        && !consumer.args[1..].contains(&target)
        && lifetimes.released_after(c).contains(&made)
        && !chain_reads_target
        && matches!(target_extent, Bounds::Map(r) if !r.is_empty())
        && extents[c] == target_extent
        && consumer.op.extra_memory(target_extent, ctx) == 0;
    fits.then_some(c)
}
