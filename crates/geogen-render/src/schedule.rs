//! Scheduling: the steps of a sequence in an order that holds fewer maps at once.
//!
//! A script often makes a map long before it uses it (`var detail = ...Noise(...)` at the top, read
//! at the end), so the map is held through everything in between. A **generator chain**, a step
//! creating an object from no other object (`Flat`, `RadialGradient`, ...) followed by steps that
//! only modify that object in place and read nothing else (`NoiseLayer`, `Multiply(0.2)`, ...),
//! depends on nothing the other steps write, so it can run anywhere before its first reader:
//! [`RenderingSequence::scheduled`] moves each such chain to just before the first later step that
//! reads it. Every step still gets exactly the same inputs (the chain reads nothing else; the other
//! steps keep their order), and bounds are a property of the dependency graph, not of the order, so
//! the bytes are the same; only lifetimes shrink. The chain then also sits right before its reader,
//! where the renderer can fuse or stream it (`fusion.rs`). Slots are renumbered in the new order of
//! creation, so the result is a valid sequence of its own.
//!
//! Before that, a generator chain read in two places far apart is **split**: the reads from its
//! second use on get a copy of the chain of their own ([`split_chains`]). The bounds of one map
//! are a single rectangle, the hull of what its readers need; in the original's `ouroboros` the
//! noise is read by the island template around the origin and by the last step over the whole map,
//! and a tile far from the origin needed the noise over the hull of both, most of the map. A copy
//! computes the same pixels (a generator chain reads nothing but coordinates and constants, and
//! every pixel is exact wherever it is computed), so the bytes are the same; a split is kept only
//! when it lowers the pixels all steps compute by 1 % and does not raise the memory peak.

use crate::operation::Effect;
use crate::renderer::RenderMetadata;
use crate::sequence::{RenderingSequence, Slot};

impl RenderingSequence {
    /// This sequence with every generator chain moved to just before its first reader (see the
    /// module docs), or an unchanged copy when that would not lower the memory plan's peak.
    pub fn scheduled(&self) -> RenderingSequence {
        let split = split_chains(self);
        let order = deferred_order(&split);
        if order.iter().enumerate().all(|(i, &j)| i == j) {
            return split;
        }
        let Some(moved) = reordered(&split, &order) else { return split };
        let peak = |seq: &RenderingSequence| RenderMetadata::calculate(seq).ok().map(|m| m.plan.peak());
        match (peak(&split), peak(&moved)) {
            (Some(before), Some(after)) if after <= before => moved,
            _ => split,
        }
    }
}

/// The generator chains of a sequence, as `[start, end)`: a step creating an object from nothing,
/// then every step right after it modifying that object in place and reading nothing else.
fn generator_chains(seq: &RenderingSequence) -> Vec<(usize, usize)> {
    let steps = seq.steps();
    let n = steps.len();
    let mut chains = Vec::new();
    let mut i = 0;
    while i < n {
        let head = &steps[i];
        let is_head =
            head.args.is_empty() && head.op.as_yield().is_none() && matches!(head.op.effect(), Effect::Create(_));
        if !is_head {
            i += 1;
            continue;
        }
        let mut end = i + 1;
        while end < n
            && steps[end].ret == head.ret
            && steps[end].args.len() == 1
            && steps[end].op.as_yield().is_none()
            && steps[end].op.effect() == Effect::Modify
        {
            end += 1;
        }
        chains.push((i, end));
        i = end;
    }
    chains
}

/// At most this many chains are tried for a split (each try plans the sequence once), and none in
/// sequences longer than [`SPLIT_MAX_STEPS`], where planning that often would cost more than it
/// could save.
const SPLIT_TRIES: usize = 16;
const SPLIT_MAX_STEPS: usize = 4096;

/// `seq` with generator chains split where that pays (see the module docs): for a chain whose
/// object is only read (not modified) by the first step after it that names it, the steps from
/// the second one that names it on read a copy of the chain inserted right before that step.
fn split_chains(seq: &RenderingSequence) -> RenderingSequence {
    if seq.len() > SPLIT_MAX_STEPS {
        return seq.clone();
    }
    let cost = |seq: &RenderingSequence| {
        RenderMetadata::calculate(seq)
            .ok()
            .map(|m| (m.bounds.iter().map(|b| b.pixels()).fold(0u64, u64::saturating_add), m.plan.peak()))
    };
    // The sequence split so far (`None`: none yet) and its cost, (pixels computed, planned peak),
    // each sequence planned once.
    let mut split_so_far: Option<RenderingSequence> = None;
    let mut cost_so_far: Option<(u64, u64)> = None;
    let mut tries = 0;
    // Later chains first: copies for a chain are inserted after its own end, so the `start..end`
    // of earlier chains still hold in the sequence split so far; their uses are looked up there.
    for (start, end) in generator_chains(seq).into_iter().rev() {
        let now = split_so_far.as_ref().unwrap_or(seq);
        let steps = now.steps();
        let made = steps[start].ret;
        let mut names = (end..steps.len()).filter(|&j| steps[j].args.contains(&made) || steps[j].ret == made);
        let (Some(first), Some(second)) = (names.next(), names.next()) else { continue };
        // The first use must only read the object: a step returning it (an in-place step, or a
        // yield, which returns its argument) is taken to change it.
        if steps[first].ret == made || tries == SPLIT_TRIES {
            continue;
        }
        tries += 1;
        let Some(split) = with_copy(now, start, end, second) else { continue };
        let Some(before) = cost_so_far.or_else(|| cost(seq)) else { return seq.clone() };
        cost_so_far = Some(before);
        if let Some(after) = cost(&split) {
            if after.0 < before.0 - before.0 / 100 && after.1 <= before.1 {
                (split_so_far, cost_so_far) = (Some(split), Some(after));
            }
        }
    }
    split_so_far.unwrap_or_else(|| seq.clone())
}

/// `seq` with a copy of the chain `[start, end)` inserted before step `at`, the steps from `at` on
/// reading the copy instead of the chain's object.
fn with_copy(seq: &RenderingSequence, start: usize, end: usize, at: usize) -> Option<RenderingSequence> {
    let order: Vec<usize> = (0..seq.len())
        .flat_map(|i| if i == at { (start..end).chain(i..i + 1) } else { (i..i).chain(i..i + 1) })
        .collect();
    reordered(seq, &order)
}

/// The order of the steps with each generator chain deferred to just before its first reader.
fn deferred_order(seq: &RenderingSequence) -> Vec<usize> {
    let steps = seq.steps();
    let n = steps.len();
    // The steps that name each slot (as an argument or the result), in order.
    let mut mentions: Vec<Vec<usize>> = vec![Vec::new(); seq.slot_count()];
    for (i, step) in steps.iter().enumerate() {
        for slot in step.args.iter().chain(std::iter::once(&step.ret)) {
            if let Some(list) = mentions.get_mut(slot.index()) {
                if list.last() != Some(&i) {
                    list.push(i);
                }
            }
        }
    }
    let chains = generator_chains(seq);
    // The chain ending right before each step, if any.
    let mut chain_ending_at: Vec<Option<usize>> = vec![None; n + 1];
    for &(start, end) in &chains {
        chain_ending_at[end] = Some(start);
    }
    let mut before: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    let mut moved = vec![false; n];
    for &(start, end) in &chains {
        let made = steps[start].ret;
        let Some(reader) = mentions[made.index()].iter().copied().find(|&j| j >= end) else { continue };
        // Chains right before the reader stay where they are: they are streamed or fused into it
        // (`fusion.rs`). A chain moves to just before them, not between them and the reader.
        let mut at = reader;
        while let Some(previous) = chain_ending_at[at] {
            at = previous;
        }
        if start < at {
            before[at].push((start, end));
            moved[start..end].iter_mut().for_each(|m| *m = true);
        }
    }
    let mut order = Vec::with_capacity(n);
    for j in 0..n {
        for &(a, b) in &before[j] {
            order.extend(a..b);
        }
        if !moved[j] {
            order.push(j);
        }
    }
    order
}

/// The steps of `seq` in `order`, slots renumbered in their new order of creation; `None` if the
/// result is not a valid sequence (it always is for a [`deferred_order`]). A step may come twice
/// (a copied generator chain): its second creation renames the slot, so the steps after it read
/// the copy.
fn reordered(seq: &RenderingSequence, order: &[usize]) -> Option<RenderingSequence> {
    let mut out = RenderingSequence::new(seq.scale()).ok()?.with_max_steps(seq.max_steps());
    let mut renamed: Vec<Option<Slot>> = vec![None; seq.slot_count()];
    for &i in order {
        let step = &seq.steps()[i];
        let args: Vec<Slot> =
            step.args.iter().map(|s| renamed.get(s.index()).copied().flatten()).collect::<Option<_>>()?;
        let ret = match step.op.effect() {
            Effect::Create(_) => {
                let new = out.next_slot();
                *renamed.get_mut(step.ret.index())? = Some(new);
                new
            }
            Effect::Modify => renamed.get(step.ret.index()).copied().flatten()?,
        };
        out.push(step.op.clone(), args, ret, step.location).ok()?;
    }
    Some(out)
}
