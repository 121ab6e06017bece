//! The rendering graph (thesis §3.5, reference §5.2): def-use edges between steps.
//!
//! The producer of argument `j` of step `i` is the most recent step before `i` whose return slot is
//! `args[j]` (for an in-place chain on one slot, each step's producer is the previous step on that
//! slot). Because [`crate::RenderingSequence::push`] only accepts existing argument slots, every
//! argument has a producer; the graph is built in one forward pass.

use crate::error::RenderError;
use crate::sequence::RenderingSequence;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderingGraph {
    producers: Vec<Vec<usize>>,
    consumers: Vec<Vec<usize>>,
}

impl RenderingGraph {
    pub fn build(seq: &RenderingSequence) -> Result<RenderingGraph, RenderError> {
        let n = seq.len();
        let mut last_writer: Vec<Option<usize>> = vec![None; seq.slot_count()];
        let mut producers = Vec::with_capacity(n);
        let mut consumers = vec![Vec::new(); n];
        for (i, step) in seq.steps().iter().enumerate() {
            let mut p = Vec::with_capacity(step.args.len());
            for slot in &step.args {
                let writer = last_writer
                    .get(slot.index())
                    .copied()
                    .flatten()
                    .ok_or_else(|| RenderError::Internal(format!("step #{i}: slot {slot} has no producer")))?;
                p.push(writer);
                if !consumers[writer].contains(&i) {
                    consumers[writer].push(i);
                }
            }
            producers.push(p);
            let ret = step.ret.index();
            if ret >= last_writer.len() {
                return Err(RenderError::Internal(format!("step #{i}: return slot {} out of range", step.ret)));
            }
            last_writer[ret] = Some(i);
        }
        Ok(RenderingGraph { producers, consumers })
    }

    /// For each argument of `step`, the index of the step producing it.
    pub fn producers(&self, step: usize) -> &[usize] {
        &self.producers[step]
    }

    /// The later steps reading the result of `step`.
    pub fn consumers(&self, step: usize) -> &[usize] {
        &self.consumers[step]
    }

    /// Steps whose result nobody reads (the thesis' "entry nodes" of the backward walk).
    pub fn entry_nodes(&self) -> Vec<usize> {
        (0..self.consumers.len()).filter(|&i| self.consumers[i].is_empty()).collect()
    }

    pub fn len(&self) -> usize {
        self.producers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.producers.is_empty()
    }
}
