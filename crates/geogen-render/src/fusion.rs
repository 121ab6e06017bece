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
//! **Fused passes** ([`fused_passes`]): consecutive row-local steps on one map run as one pass over
//! bands (see [`Operation::is_row_local`]).
//!
//! **Taken-over buffers** ([`taken_over_buffers`]): a fused pass that creates a map often ends by
//! mixing other maps into it and those maps die there (`highland.Combine(lowland, mask)` with the
//! highland made by `Noise` just before). The pass's result then needs a buffer of its own while
//! the maps it reads are still held, one map more than the script needs. When a map the pass reads
//! for the last time covers the pass's extent and every step of the pass that reads it reads it on
//! its own rows only, the pass writes each finished band over that map's pixels on the same rows,
//! which no other band reads; then the rows are moved together (the map's margins dropped) in
//! place. After the pass that buffer holds the new map and the old one is gone. Each band reads the
//! rows it overwrites before it overwrites them, so the bytes are the same.
//!
//! **Elided copies** ([`elided_copies`]): `HeightMap.Clone(template).Rotate(a)` copies the template
//! only for the rotation to read the copy once and replace it. When a step that
//! [replaces its target](crate::Operation::replaces_target) comes right after a
//! [copy](crate::Operation::is_copy) into that target, it reads the original instead and the copy
//! is never made. The original covers everything the copy held (the copy's extent is its bounds,
//! inside the original's), so the pixels in the step's bounds are the same; the original is kept
//! alive until that step if the copy was its last use.
//!
//! [`Operation::reads_inputs_on_its_rows`]: crate::Operation::reads_inputs_on_its_rows
//! [`Operation::is_row_local`]: crate::Operation::is_row_local

use crate::lifetimes::Lifetimes;
use crate::operation::{Bounds, Effect, ObjectKind, OpContext};
use crate::sequence::{RenderingSequence, Slot};

/// For each step, whether it is a copy that the next step reads in its place (see the module
/// docs): the copy is live (non-empty bounds), not part of a streamed pass or of a fused pass
/// longer than itself, and the next step replaces exactly the copy's slot, reading it nowhere else.
pub(crate) fn elided_copies(
    seq: &RenderingSequence,
    bounds: &[Bounds],
    narrowed: &[Option<crate::bounds::Narrowed>],
    streamed: &[Option<usize>],
    fused: &[usize],
) -> Vec<bool> {
    let steps = seq.steps();
    (0..steps.len())
        .map(|i| {
            let (copy, Some(next)) = (&steps[i], steps.get(i + 1)) else { return false };
            copy.op.is_copy()
                && copy.op.as_yield().is_none()
                && copy.args.len() == 1
                && copy.op.effect() == Effect::Create(ObjectKind::Map)
                && copy.op.arg_kinds() == [ObjectKind::Map]
                && !bounds[i].is_empty()
                && streamed[i].is_none()
                && fused[i] <= 1
                && next.op.replaces_target()
                && next.op.effect() == Effect::Modify
                && !bounds[i + 1].is_empty()
                && narrowed[i + 1].is_none()
                && next.args.first() == Some(&copy.ret)
                && next.ret == copy.ret
                && !next.args[1..].contains(&copy.ret)
        })
        .collect()
}

/// For each step, `Some(c)` when a streamed pass starts there: the step creates a map that steps
/// up to `c - 1` modify and step `c` reads for the last time, all in one banded pass. `extents`
/// are the plan's result extents.
pub(crate) fn streamed_passes(
    seq: &RenderingSequence,
    bounds: &[Bounds],
    narrowed: &[Option<crate::bounds::Narrowed>],
    lifetimes: &Lifetimes,
    extents: &[Bounds],
) -> Vec<Option<usize>> {
    let steps = seq.steps();
    let ctx = OpContext { scale: seq.scale() };
    let mut passes = vec![None; steps.len()];
    // The extent of each slot before the step looked at.
    let mut slot_extent: Vec<Option<Bounds>> = vec![None; seq.slot_count()];
    // A narrowed step (`bounds.rs`) runs alone: it is never part of a pass.
    let live = |j: usize| !bounds[j].is_empty() && steps[j].op.as_yield().is_none() && narrowed[j].is_none();
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

/// The fused passes of a sequence: for each step, how many steps from it on run as one pass (0 for
/// a step that runs alone). A pass is a streamed pass ([`streamed_passes`]), or a row-local step
/// creating a map, or modifying one in place without reading it twice and without resizing it,
/// followed by every immediately following row-local step modifying the same map the same way; a
/// modifying pass needs two steps or more (one alone gains nothing from bands). Steps in a pass
/// need no scratch memory beyond the first, so the pass needs what its first step was planned to
/// need: inputs of later steps stay alive until the pass ends, and no step of it allocates.
pub(crate) fn fused_passes(
    seq: &RenderingSequence,
    bounds: &[Bounds],
    narrowed: &[Option<crate::bounds::Narrowed>],
    lifetimes: &Lifetimes,
    extents: &[Bounds],
    streamed: &[Option<usize>],
) -> Vec<usize> {
    let steps = seq.steps();
    let ctx = OpContext { scale: seq.scale() };
    let mut fused = vec![0; steps.len()];
    // The extent each slot has before the step being looked at.
    let mut slot_extent: Vec<Option<Bounds>> = vec![None; seq.slot_count()];
    // A step that modifies its map in place, row-locally, keeping `extent`.
    let joins = |j: usize, extent: Bounds| {
        let step = &steps[j];
        step.op.as_yield().is_none()
            && !bounds[j].is_empty()
            && narrowed[j].is_none()
            && step.op.is_row_local()
            && step.op.effect() == Effect::Modify
            && !step.args[1..].contains(&step.ret)
            && extents[j] == extent
            && step.op.extra_memory(extent, &ctx) == 0
    };
    let mut i = 0;
    while i < steps.len() {
        let step = &steps[i];
        let extent = extents[i];
        let head = step.op.as_yield().is_none()
            && !bounds[i].is_empty()
            && narrowed[i].is_none()
            && step.op.is_row_local()
            && matches!(extent, Bounds::Map(r) if !r.is_empty())
            && match step.op.effect() {
                Effect::Create(ObjectKind::Map) => true,
                Effect::Create(ObjectKind::Profile) => false,
                Effect::Modify => slot_extent[step.ret.index()] == Some(extent) && joins(i, extent),
            };
        let mut end = i + 1;
        if let Some(consumer) = streamed[i] {
            fused[i] = consumer + 1 - i;
            end = consumer + 1;
        } else if head {
            while end < steps.len() && steps[end].ret == step.ret && joins(end, extent) {
                end += 1;
            }
            let create = matches!(step.op.effect(), Effect::Create(_));
            if create || end - i >= 2 {
                fused[i] = end - i;
            } else {
                end = i + 1;
            }
        }
        for j in i..end {
            slot_extent[steps[j].ret.index()] = Some(extents[j]);
            for s in lifetimes.released_after(j) {
                slot_extent[s.index()] = None;
            }
        }
        i = end;
    }
    fused
}

/// For each step starting a fused pass (not a streamed one) that creates a map, the slot of a map
/// whose buffer the pass's result takes over, if there is one (see the module docs): a map the
/// pass reads and releases, covering the pass's extent, read only by steps that read their inputs
/// on their own rows.
pub(crate) fn taken_over_buffers(
    seq: &RenderingSequence,
    lifetimes: &Lifetimes,
    extents: &[Bounds],
    fused: &[usize],
    streamed: &[Option<usize>],
) -> Vec<Option<Slot>> {
    let steps = seq.steps();
    let mut taken = vec![None; steps.len()];
    let mut slot_extent: Vec<Option<Bounds>> = vec![None; seq.slot_count()];
    let mut i = 0;
    while i < steps.len() {
        let end = i + fused[i].max(1);
        let head = &steps[i];
        let creates_map = matches!(head.op.effect(), Effect::Create(ObjectKind::Map));
        if fused[i] > 0 && streamed[i].is_none() && creates_map {
            let pass = &steps[i..end];
            let made = head.ret;
            let candidate = |&slot: &Slot| {
                slot != made
                    && matches!(slot_extent[slot.index()], Some(Bounds::Map(r)) if r.contains_rect(&extents[i].rect()))
                    && (i..end).any(|j| lifetimes.released_after(j).contains(&slot))
                    && pass.iter().all(|s| !s.args.contains(&slot) || s.op.reads_inputs_on_its_rows())
            };
            taken[i] = pass.iter().flat_map(|s| s.args.iter()).find(|s| candidate(s)).copied();
        }
        for j in i..end {
            slot_extent[steps[j].ret.index()] = Some(extents[j]);
            for s in lifetimes.released_after(j) {
                slot_extent[s.index()] = None;
            }
        }
        i = end;
    }
    taken
}
