//! The memory plan, computed before any pixel is rendered.
//!
//! A forward walk simulates the object table with extents instead of pixels: each step's result
//! extent comes from its operation ([`crate::Operation::result_extent`]) applied to its bounds, and
//! slots are dropped as [`Lifetimes`] says. The need of step `i` is
//!
//! `Σ bytes(live objects) + bytes(new result, if the step creates or resizes) + extra_memory(i)
//!  + bytes(copy of the target, if it is also read as another argument) + bytes(outputs so far)`
//!
//! with 4 bytes per `f32` pixel, plus what whole-map solves hold (`solve.rs`: the grid render or
//! the solving at the step making a solution, the solution until its last reader), except that a yield of a map at its last use moves (crops) the map
//! into the output, so its output bytes are not counted twice, and that a streamed pass
//! (`fusion.rs`: a map made by a row-local chain just before its last reader) never holds that map:
//! every step of the pass needs the objects live before it plus the chain head's scratch; so does a
//! fused pass whose result takes over the buffer of a map it reads for the last time (`fusion.rs`),
//! which allocates nothing for its result. Skipped
//! steps (empty bounds) need nothing. The peak is checked against the configured limit (GGE3001)
//! before rendering starts, and the renderer allocates exactly the planned extents (a streamed map
//! band by band, one band per thread). Per-thread row and band scratch (O(width)) is not counted.
//! [`Renderer::step`](crate::Renderer::step), which runs one step at a time for debuggers, holds a
//! streamed map whole and may exceed the plan by that map.

use geogen_diag::Diagnostic;

use crate::error::{Location, RenderError};
use crate::lifetimes::Lifetimes;
use crate::operation::{Bounds, Effect, OpContext};
use crate::sequence::{RenderingSequence, Slot};

/// The bytes of an `f32` object of this extent, without saturating (see the module comment).
fn exact_bytes(extent: &Bounds) -> u128 {
    let pixels = match extent {
        Bounds::Map(rect) if rect.is_empty() => 0,
        Bounds::Map(rect) => u128::from(rect.width) * u128::from(rect.height),
        Bounds::Profile(interval) => u128::from(interval.length),
    };
    pixels.saturating_mul(4)
}

fn saturated(bytes: u128) -> u64 {
    u64::try_from(bytes).unwrap_or(u64::MAX)
}

/// The extent of each step's result: its operation's result extent on its bounds, the argument's
/// extent for a yield and for a skipped in-place step, empty for a skipped creating step. A step
/// narrowed with a fill keeps that extent when it covers the bounds (the kernel's result is filled
/// in place) and is otherwise made over its bounds (`renderer.rs`).
fn result_extents(
    seq: &RenderingSequence,
    bounds: &[Bounds],
    narrowed: &[Option<crate::bounds::Narrowed>],
    lifetimes: &Lifetimes,
) -> Vec<Bounds> {
    let ctx = OpContext { scale: seq.scale() };
    let mut slot_extent: Vec<Option<Bounds>> = vec![None; seq.slot_count()];
    let mut extents = Vec::with_capacity(seq.len());
    for (i, step) in seq.steps().iter().enumerate() {
        let own = bounds[i];
        let arg_extents: Vec<Bounds> = step
            .args
            .iter()
            .zip(step.op.arg_kinds())
            .map(|(s, k)| slot_extent[s.index()].unwrap_or(Bounds::empty(*k)))
            .collect();
        let extent = if step.op.as_yield().is_some() {
            arg_extents[0]
        } else if own.is_empty() {
            match step.op.effect() {
                Effect::Create(kind) => Bounds::empty(kind),
                Effect::Modify => arg_extents[0],
            }
        } else {
            let extent = step.op.result_extent(own, &arg_extents, &ctx);
            match narrowed.get(i).copied().flatten() {
                Some(crate::bounds::Narrowed { fill: Some(_), .. }) if !extent.rect().contains_rect(&own.rect()) => own,
                _ => extent,
            }
        };
        extents.push(extent);
        slot_extent[step.ret.index()] = Some(extent);
        for slot in lifetimes.released_after(i) {
            slot_extent[slot.index()] = None;
        }
    }
    extents
}

#[derive(Clone, Debug, PartialEq)]
pub struct MemoryPlan {
    /// The extent of each step's result object (empty for skipped creating steps).
    extents: Vec<Bounds>,
    /// For each step, the last step of the streamed pass starting there, if any.
    streamed: Vec<Option<usize>>,
    /// For each step, how many steps from it on run as one fused pass (0: alone).
    fused: Vec<usize>,
    /// For each step starting a fused pass, the map whose buffer the pass's result takes over.
    taken_over: Vec<Option<Slot>>,
    /// For each step, whether it is a copy the next step reads in its place (never made).
    elided: Vec<bool>,
    /// Bytes needed while each step runs.
    step_bytes: Vec<u64>,
    /// Bytes held before each step starts: the live objects and the outputs so far.
    held: Vec<u64>,
    peak: u64,
    peak_step: Option<usize>,
    peak_name: String,
    peak_location: Location,
}

impl MemoryPlan {
    /// The plan for these bounds; `narrowed` are the parts the support pass lets steps compute
    /// (`bounds.rs`): such a step runs alone, and may copy that part of its target out and back.
    pub fn calculate(
        seq: &RenderingSequence,
        bounds: &[Bounds],
        narrowed: &[Option<crate::bounds::Narrowed>],
        lifetimes: &Lifetimes,
        solve_bytes: &[u64],
    ) -> MemoryPlan {
        let extents = result_extents(seq, bounds, narrowed, lifetimes);
        let streamed = crate::fusion::streamed_passes(seq, bounds, narrowed, lifetimes, &extents);
        let mut fused = crate::fusion::fused_passes(seq, bounds, narrowed, lifetimes, &extents, &streamed);
        let elided = crate::fusion::elided_copies(seq, bounds, narrowed, &streamed, &fused);
        for (i, _) in elided.iter().enumerate().filter(|(_, e)| **e) {
            fused[i] = 0;
        }
        let taken_over = crate::fusion::taken_over_buffers(seq, lifetimes, &extents, &fused, &streamed);
        let ctx = OpContext { scale: seq.scale() };
        let mut slot_extent: Vec<Option<Bounds>> = vec![None; seq.slot_count()];
        let mut step_bytes = Vec::with_capacity(seq.len());
        let mut held = Vec::with_capacity(seq.len());
        let mut outputs: u128 = 0;
        let (mut peak, mut peak_step) = (0u128, None);
        // The streamed or taken-over pass under way: until which step, and what it needs.
        let mut pass: Option<(usize, u128)> = None;
        // The original of an elided copy, when the copy was its last use: it lives one step more.
        let mut deferred: Option<Slot> = None;
        for (i, step) in seq.steps().iter().enumerate() {
            let own = bounds[i];
            let extent = extents[i];
            // Whole-map solves (`solve.rs`): the solving at the step making a solution, the
            // solution itself until the last step reading it.
            let solving = u128::from(solve_bytes.get(i).copied().unwrap_or(0));
            let live: u128 = slot_extent.iter().flatten().fold(solving, |acc, b| acc.saturating_add(exact_bytes(b)));
            held.push(saturated(live.saturating_add(outputs)));
            let arg_extent =
                |j: usize| slot_extent[step.args[j].index()].unwrap_or(Bounds::empty(step.op.arg_kinds()[j]));
            let scratch = || live.saturating_add(u128::from(step.op.extra_memory(extent, &ctx)));
            if let Some(consumer) = streamed[i] {
                // The streamed map is never allocated whole: the pass needs the objects live
                // before it (all the chain and the consumer read, kept to its end) and the
                // chain head's scratch.
                pass = Some((consumer, scratch()));
            } else if taken_over[i].is_some() {
                // The result is written over a map live before the pass: nothing new is held.
                pass = Some((i + fused[i] - 1, scratch()));
            }
            let need = if let Some((_, need)) = pass {
                need.saturating_add(outputs)
            } else if elided[i] {
                // Nothing is copied; the next step reads the original.
                live.saturating_add(outputs)
            } else if let Some(y) = step.op.as_yield() {
                let moved = lifetimes.released_after(i).contains(&step.args[0])
                    && !y.rect.is_empty()
                    && arg_extent(0).rect().contains_rect(&y.rect);
                let output = exact_bytes(&Bounds::Map(y.rect));
                outputs = outputs.saturating_add(output);
                // A map yielded at its last use is cropped in place into the output: the output's
                // bytes are the argument's (counted in `live`), not new ones.
                let copy = if moved { 0 } else { output };
                live.saturating_add(copy).saturating_add(outputs - output)
            } else if own.is_empty() {
                live.saturating_add(outputs)
            } else {
                let mut need = live;
                let resized = match step.op.effect() {
                    Effect::Create(_) => true,
                    Effect::Modify => extent != arg_extent(0),
                };
                if resized {
                    need = need.saturating_add(exact_bytes(&extent));
                }
                // A kernel narrowed with a fill runs on its target, which may reach past the
                // extent made over the bounds (a blur's scratch grows with what it blurs).
                let worked_on = match (narrowed.get(i).copied().flatten(), step.op.effect()) {
                    (Some(crate::bounds::Narrowed { fill: Some(_), .. }), Effect::Modify) => {
                        extent.combine(&arg_extent(0)).unwrap_or(extent)
                    }
                    _ => extent,
                };
                need = need.saturating_add(u128::from(step.op.extra_memory(worked_on, &ctx)));
                // A narrowed step's part: the copy its kernel runs on (unchanged-region mode), or
                // the new map a replacing kernel makes of it before the result is made over the
                // extent (fill mode; an in-place kernel works on its target, counted as live).
                match narrowed.get(i).copied().flatten() {
                    Some(narrow) if narrow.fill.is_none() || step.op.replaces_target() => {
                        need = need.saturating_add(exact_bytes(&Bounds::Map(narrow.part)));
                    }
                    _ => {}
                }
                if step.op.effect() == Effect::Modify && step.args[1..].contains(&step.ret) {
                    need = need.saturating_add(exact_bytes(&arg_extent(0)));
                }
                need.saturating_add(outputs)
            };
            if peak_step.is_none() || need > peak {
                peak = need;
                peak_step = Some(i);
            }
            step_bytes.push(saturated(need));
            // The map a pass makes is not held until the pass ends (a streamed map never is; a
            // taken-over buffer counts under its old slot until then).
            let held_by_pass = matches!(pass, Some((last, _)) if last != i);
            slot_extent[step.ret.index()] = if held_by_pass || elided[i] { None } else { Some(extent) };
            if matches!(pass, Some((last, _)) if last == i) {
                pass = None;
            }
            for slot in lifetimes.released_after(i) {
                if elided[i] && *slot == step.args[0] {
                    deferred = Some(*slot);
                } else {
                    slot_extent[slot.index()] = None;
                }
            }
            if i > 0 && elided[i - 1] {
                if let Some(slot) = deferred.take() {
                    slot_extent[slot.index()] = None;
                }
            }
        }
        let (peak_name, peak_location) = match peak_step {
            Some(i) => (seq.steps()[i].op.name().to_string(), seq.steps()[i].location),
            None => (String::new(), None),
        };
        MemoryPlan {
            extents,
            streamed,
            fused,
            taken_over,
            elided,
            step_bytes,
            held,
            peak: saturated(peak),
            peak_step,
            peak_name,
            peak_location,
        }
    }

    /// How many steps from step `i` on run as one fused pass (0: the step runs alone).
    pub fn fused_pass(&self, step: usize) -> usize {
        self.fused[step]
    }

    /// The map whose buffer the fused pass starting at step `i` writes its result over, if any.
    pub fn taken_over_buffer(&self, step: usize) -> Option<Slot> {
        self.taken_over[step]
    }

    /// Whether step `i` is a copy that is never made: step `i + 1` reads its original instead
    /// (`fusion.rs`, elided copies).
    pub fn elided_copy(&self, step: usize) -> bool {
        self.elided[step]
    }

    /// Whether a streamed pass (`fusion.rs`) starts at step `i`, and the step ending it.
    pub fn streamed_pass(&self, step: usize) -> Option<usize> {
        self.streamed[step]
    }

    /// The extent of the object step `i` produces.
    pub fn extent(&self, step: usize) -> Bounds {
        self.extents[step]
    }

    /// Bytes needed while step `i` runs.
    pub fn step_bytes(&self, step: usize) -> u64 {
        self.step_bytes[step]
    }

    /// Bytes held before step `i` starts (live objects and outputs so far): what its need adds
    /// to is `step_bytes(i) - held_before(i)`.
    pub fn held_before(&self, step: usize) -> u64 {
        self.held[step]
    }

    /// The largest need of step `i` and the steps after it: what resident memory may still reach
    /// from step `i` on without exceeding the plan.
    pub fn peak_from(&self, step: usize) -> u64 {
        self.step_bytes[step.min(self.step_bytes.len())..].iter().copied().max().unwrap_or(0)
    }

    /// The largest need over all steps (`u64::MAX` when it is that much or more).
    pub fn peak(&self) -> u64 {
        self.peak
    }

    /// The step with the largest need (the first one on ties).
    pub fn peak_step(&self) -> Option<usize> {
        self.peak_step
    }

    pub(crate) fn check_limit(&self, limit: u64) -> Result<(), RenderError> {
        match self.peak_step {
            Some(step) if self.peak > limit => Err(RenderError::MemoryLimit {
                need: self.peak,
                limit,
                step: step + 1,
                name: self.peak_name.clone(),
                location: self.peak_location,
            }),
            _ => Ok(()),
        }
    }

    /// `Ok` if the peak fits in `limit` bytes, otherwise a GGE3001 diagnostic naming the need,
    /// the limit and the peaking step with its script location.
    pub fn check(&self, limit: u64) -> Result<(), Diagnostic> {
        self.check_limit(limit).map_err(|e| e.to_diagnostic())
    }
}
