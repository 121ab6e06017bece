//! The backward bounds pass (thesis Figure 23, reference §5.3).
//!
//! Every step starts with empty bounds. Steps are visited in reverse; a yield first unions its
//! yield rectangle into its own bounds; then every step with non-empty bounds `B` asks its
//! operation's bounds rule what each argument must provide and unions that into the bounds of the
//! argument's producer. When a step is visited, all its consumers (which come later) have already
//! been visited, so its bounds are final: exactly the union of what anybody downstream needs.
//! Steps that lead to no yield keep empty bounds and are skipped by the renderer.
//!
//! With the support pass (`support.rs`), an in-place step that changes its target only inside a
//! region computes only its bounds within that region (its *narrowed* bounds `C = B ∩ region`):
//! its other arguments need what `C` reads, and its target needs `B` itself besides, since the
//! pixels of `B` outside `C` are the target's own, unchanged. A step whose result is one constant
//! outside its support computes only `C = B ∩ support` and fills the rest of `B`: its arguments,
//! its target included, need only what `C` reads, so a chain making a small feature on a large
//! constant map computes the feature only.

use crate::error::RenderError;
use crate::geometry::Rect;
use crate::graph::RenderingGraph;
use crate::operation::{Bounds, Effect, OpContext};
use crate::sequence::RenderingSequence;
use crate::support::Supports;

/// The part of its bounds an in-place step computes when the support pass narrows it; the rest
/// keeps the target's pixels, or is set to `fill`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Narrowed {
    pub part: Rect,
    pub fill: Option<f32>,
}

/// The rendering bounds of every step, in physical pixels, without the support pass.
pub fn calculate_bounds(seq: &RenderingSequence, graph: &RenderingGraph) -> Result<Vec<Bounds>, RenderError> {
    Ok(calculate_narrowed_bounds(seq, graph, &Supports::unknown(seq.len()))?.0)
}

/// How the support pass narrows in-place step `i` with bounds `own`, if it does: an operation that
/// changes its target only within a region computes only its bounds there (the rest keeps the
/// target's pixels); one whose result is constant outside its support computes only its bounds
/// within the support, and the rest is filled with that constant.
///
/// Only when that saves at least half the step: a narrowed step runs alone, outside the fused
/// passes (`fusion.rs`), which would cost more than a small saving brings.
fn narrowing(seq: &RenderingSequence, supports: &Supports, i: usize, own: Bounds) -> Option<Narrowed> {
    let step = &seq.steps()[i];
    let Bounds::Map(rect) = own else { return None };
    if step.op.as_yield().is_some() {
        return None;
    }
    // Far out, bounds rules clip and clamp rectangles at the ends of the coordinate range, where the
    // support rules' arithmetic no longer holds: such steps are never narrowed.
    const FAR: i128 = 1 << 61;
    let (x1, y1) = rect.last_pixel();
    if [rect.x, rect.y, x1, y1].iter().any(|&c| i128::from(c).abs() > FAR) {
        return None;
    }
    // Only in-place steps: a creating step computes from nothing (a generator, whose own work is
    // about a fill's) or copies a map that a transform would otherwise read in place (`fusion.rs`,
    // elided copies), so computing part of it and filling the rest saves little or costs more.
    if step.op.effect() != Effect::Modify {
        return None;
    }
    let narrow = if let Some(region) = supports.changed.get(i).copied().flatten() {
        Narrowed { part: rect.intersect(&region), fill: None }
    } else {
        let support = supports.of_step.get(i).and_then(|f| f.support)?;
        Narrowed { part: rect.intersect(&support.rect), fill: Some(support.background) }
    };
    (narrow.part.area() <= rect.area() / 2).then_some(narrow)
}

/// The rendering bounds of every step and, for each in-place step the support pass lets compute
/// less than its bounds, what it computes.
pub fn calculate_narrowed_bounds(
    seq: &RenderingSequence,
    graph: &RenderingGraph,
    supports: &Supports,
) -> Result<(Vec<Bounds>, Vec<Option<Narrowed>>), RenderError> {
    let ctx = OpContext { scale: seq.scale() };
    let mut narrowed: Vec<Option<Narrowed>> = vec![None; seq.len()];
    let steps = seq.steps();
    let mut bounds: Vec<Bounds> = steps
        .iter()
        .map(|s| {
            let kind = match s.op.effect() {
                Effect::Create(kind) => kind,
                Effect::Modify => s.op.arg_kinds()[0],
            };
            Bounds::empty(kind)
        })
        .collect();
    for i in (0..steps.len()).rev() {
        let step = &steps[i];
        if let Some(y) = step.op.as_yield() {
            bounds[i] = bounds[i]
                .combine(&Bounds::Map(y.rect))
                .ok_or_else(|| RenderError::Internal(format!("step #{i}: yield of a non-map")))?;
        }
        let own = bounds[i];
        if own.is_empty() {
            continue;
        }
        let required = match narrowing(seq, supports, i, own) {
            None => step.op.required_bounds(own, &ctx),
            Some(narrow) => {
                narrowed[i] = Some(narrow);
                let part = narrow.part;
                let mut required = if part.is_empty() {
                    step.op.arg_kinds().iter().map(|k| Bounds::empty(*k)).collect()
                } else {
                    step.op.required_bounds(Bounds::Map(part), &ctx)
                };
                // The target keeps its own pixels on the rest of B. A filled step's result is
                // made over B whatever its target covers (`plan.rs`, `renderer.rs`).
                if narrow.fill.is_none() {
                    if let Some(target) = required.first_mut() {
                        *target = target.combine(&own).unwrap_or(own);
                    }
                }
                required
            }
        };
        if required.len() != step.args.len() {
            return Err(RenderError::Internal(format!(
                "step #{i} `{}`: its bounds rule returned {} bounds for {} arguments",
                step.op.name(),
                required.len(),
                step.args.len()
            )));
        }
        for (j, need) in required.iter().enumerate() {
            let producer = graph.producers(i)[j];
            bounds[producer] = bounds[producer].combine(need).ok_or_else(|| {
                RenderError::Internal(format!(
                    "step #{i} `{}`: argument {j} bounds of the wrong kind (the operation must override its bounds rule)",
                    step.op.name()
                ))
            })?;
        }
    }
    Ok((bounds, narrowed))
}
