//! The backward bounds pass (thesis Figure 23, reference §5.3).
//!
//! Every step starts with empty bounds. Steps are visited in reverse; a yield first unions its
//! yield rectangle into its own bounds; then every step with non-empty bounds `B` asks its
//! operation's bounds rule what each argument must provide and unions that into the bounds of the
//! argument's producer. When a step is visited, all its consumers (which come later) have already
//! been visited, so its bounds are final: exactly the union of what anybody downstream needs.
//! Steps that lead to no yield keep empty bounds and are skipped by the renderer.

use crate::error::RenderError;
use crate::graph::RenderingGraph;
use crate::operation::{Bounds, Effect, OpContext};
use crate::sequence::RenderingSequence;

/// The rendering bounds of every step, in physical pixels.
pub fn calculate_bounds(seq: &RenderingSequence, graph: &RenderingGraph) -> Result<Vec<Bounds>, RenderError> {
    let ctx = OpContext { scale: seq.scale() };
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
        let required = step.op.required_bounds(own, &ctx);
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
    Ok(bounds)
}
