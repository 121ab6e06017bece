//! Object lifetimes (thesis Figure 25): after which step each slot can be freed.
//!
//! Walking backwards, the first time a slot is met (as an argument *or* as the return slot) marks
//! its last use; the object is released right after that step. Counting the return slot as a use
//! extends Figure 25 (which only looks at arguments): an object that nobody ever reads is freed
//! right after the step that made it, instead of living until the end of the render.

use crate::sequence::{RenderingSequence, Slot};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lifetimes {
    release_after: Vec<Vec<Slot>>,
}

impl Lifetimes {
    pub fn calculate(seq: &RenderingSequence) -> Lifetimes {
        let steps = seq.steps();
        let mut seen = vec![false; seq.slot_count()];
        let mut release_after = vec![Vec::new(); steps.len()];
        for (i, step) in steps.iter().enumerate().rev() {
            for slot in step.args.iter().chain(std::iter::once(&step.ret)) {
                if let Some(flag) = seen.get_mut(slot.index()) {
                    if !*flag {
                        *flag = true;
                        release_after[i].push(*slot);
                    }
                }
            }
        }
        Lifetimes { release_after }
    }

    /// Slots to free once `step` has executed.
    pub fn released_after(&self, step: usize) -> &[Slot] {
        &self.release_after[step]
    }
}
