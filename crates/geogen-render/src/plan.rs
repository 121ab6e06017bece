//! The memory plan, computed before any pixel is rendered.
//!
//! A forward walk simulates the object table with extents instead of pixels: each step's result
//! extent comes from its operation ([`crate::Operation::result_extent`]) applied to its bounds, and
//! slots are dropped as [`Lifetimes`] says. The need of step `i` is
//!
//! `Σ bytes(live objects) + bytes(new result, if the step creates or resizes) + extra_memory(i)
//!  + bytes(copy of the target, if it is also read as another argument) + bytes(outputs so far)`
//!
//! except that a yield of a map at its last use moves (crops) the map into the output, so its
//! output bytes are not counted twice.
//!
//! with 4 bytes per `f32` pixel. Skipped steps (empty bounds) need nothing. The peak is checked
//! against the configured limit (GGE3001) before rendering starts, and the renderer allocates
//! exactly the planned extents. Per-thread row scratch (O(width)) is not counted.

use geogen_diag::Diagnostic;

use crate::error::{Location, RenderError};
use crate::lifetimes::Lifetimes;
use crate::operation::{Bounds, Effect, OpContext};
use crate::sequence::RenderingSequence;

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

#[derive(Clone, Debug, PartialEq)]
pub struct MemoryPlan {
    /// The extent of each step's result object (empty for skipped creating steps).
    extents: Vec<Bounds>,
    /// Bytes needed while each step runs.
    step_bytes: Vec<u64>,
    peak: u64,
    peak_step: Option<usize>,
    peak_name: String,
    peak_location: Location,
}

impl MemoryPlan {
    pub fn calculate(seq: &RenderingSequence, bounds: &[Bounds], lifetimes: &Lifetimes) -> MemoryPlan {
        let ctx = OpContext { scale: seq.scale() };
        let mut slot_extent: Vec<Option<Bounds>> = vec![None; seq.slot_count()];
        let mut extents = Vec::with_capacity(seq.len());
        let mut step_bytes = Vec::with_capacity(seq.len());
        let mut outputs: u128 = 0;
        let (mut peak, mut peak_step) = (0u128, None);
        for (i, step) in seq.steps().iter().enumerate() {
            let own = bounds[i];
            let live: u128 = slot_extent.iter().flatten().fold(0, |acc, b| acc.saturating_add(exact_bytes(b)));
            let arg_extents: Vec<Bounds> = step
                .args
                .iter()
                .zip(step.op.arg_kinds())
                .map(|(s, k)| slot_extent[s.index()].unwrap_or(Bounds::empty(*k)))
                .collect();
            let mut need = live;
            let extent = if let Some(y) = step.op.as_yield() {
                let moved = lifetimes.released_after(i).contains(&step.args[0])
                    && !y.rect.is_empty()
                    && arg_extents[0].rect().contains_rect(&y.rect);
                let output = exact_bytes(&Bounds::Map(y.rect));
                outputs = outputs.saturating_add(output);
                if moved {
                    // The renderer crops the argument's buffer in place into the output: the
                    // output's bytes are the argument's (counted in `live`), not new ones.
                    need = need.saturating_sub(output);
                }
                arg_extents[0]
            } else if own.is_empty() {
                match step.op.effect() {
                    Effect::Create(kind) => Bounds::empty(kind),
                    Effect::Modify => arg_extents[0],
                }
            } else {
                let extent = step.op.result_extent(own, &arg_extents, &ctx);
                let resized = match step.op.effect() {
                    Effect::Create(_) => true,
                    Effect::Modify => extent != arg_extents[0],
                };
                if resized {
                    need = need.saturating_add(exact_bytes(&extent));
                }
                need = need.saturating_add(u128::from(step.op.extra_memory(extent, &ctx)));
                if step.op.effect() == Effect::Modify && step.args[1..].contains(&step.ret) {
                    need = need.saturating_add(exact_bytes(&arg_extents[0]));
                }
                extent
            };
            need = need.saturating_add(outputs);
            if peak_step.is_none() || need > peak {
                peak = need;
                peak_step = Some(i);
            }
            step_bytes.push(saturated(need));
            extents.push(extent);
            slot_extent[step.ret.index()] = Some(extent);
            for slot in lifetimes.released_after(i) {
                slot_extent[slot.index()] = None;
            }
        }
        let (peak_name, peak_location) = match peak_step {
            Some(i) => (seq.steps()[i].op.name().to_string(), seq.steps()[i].location),
            None => (String::new(), None),
        };
        MemoryPlan { extents, step_bytes, peak: saturated(peak), peak_step, peak_name, peak_location }
    }

    /// The extent of the object step `i` produces.
    pub fn extent(&self, step: usize) -> Bounds {
        self.extents[step]
    }

    /// Bytes needed while step `i` runs.
    pub fn step_bytes(&self, step: usize) -> u64 {
        self.step_bytes[step]
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
