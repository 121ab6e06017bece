//! The rendering sequence: the linear list of steps the VM records while simulating a script
//! (thesis §3.4).
//!
//! Invariants enforced by [`RenderingSequence::push`] (so every later pass can rely on them and the
//! renderer never panics on an accepted sequence):
//! * Slots are numbered densely from 0 in order of creation; each slot holds one object kind for
//!   its whole life.
//! * Every argument slot already exists and has the kind the operation declares.
//! * A creating step returns exactly the next new slot; an in-place step (and a yield) returns its
//!   first argument (`args[0] == ret`).
//! * At most `max_len` steps (default 100 000; GGE2504 beyond).
//! * Yield rectangles end at or before `i64::MAX` (so do all bounds derived from them).
//! * Yield names are unique (the original silently kept the first; the spec makes it an error).

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use crate::error::{Location, RenderError};
use crate::geometry::Rect;
use crate::operation::{Effect, KernelContext, ObjectKind, OpRef, Operation};
use crate::raster::Object;

/// Default maximum number of steps in a sequence.
pub const DEFAULT_MAX_STEPS: usize = 100_000;

/// An object slot index.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slot(pub u32);

impl Slot {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{}}}", self.0)
    }
}

/// One step of the sequence.
#[derive(Clone, Debug)]
pub struct Step {
    pub op: OpRef,
    pub args: Vec<Slot>,
    pub ret: Slot,
    /// Script line and column, for messages.
    pub location: Location,
}

impl fmt::Display for Step {
    /// `{0} <- HeightMap.Blur({0}, 20)`, as thesis Figures 19 and 21.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = self.args.iter().map(|s| s.to_string()).collect();
        let params = self.op.describe_params();
        if !params.is_empty() {
            parts.push(params);
        }
        write!(f, "{} <- {}({})", self.ret, self.op.name(), parts.join(", "))
    }
}

/// The yield step: copies a cut-out of its argument for `rect` (zero outside the argument's extent)
/// into the output table under `name`.
#[derive(Clone, Debug, PartialEq)]
pub struct Yield {
    pub name: String,
    /// The yield rectangle, physical pixels.
    pub rect: Rect,
}

impl Operation for Yield {
    fn name(&self) -> &str {
        "Yield"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!("\"{}\", [{}, {}], [{}, {}]", self.name, self.rect.x, self.rect.y, self.rect.width, self.rect.height)
    }
    fn render(&self, _: &KernelContext, _: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        // The renderer performs the copy itself: it owns the output table.
        Ok(())
    }
    fn as_yield(&self) -> Option<&Yield> {
        Some(self)
    }
}

/// A validated, linear list of steps plus the render scale.
#[derive(Clone, Debug)]
pub struct RenderingSequence {
    scale: f64,
    steps: Vec<Step>,
    slot_kinds: Vec<ObjectKind>,
    yield_names: BTreeSet<String>,
    max_steps: usize,
}

impl RenderingSequence {
    /// An empty sequence at `scale` (finite and > 0) with the default step limit.
    pub fn new(scale: f64) -> Result<RenderingSequence, RenderError> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(RenderError::InvalidScale(scale));
        }
        Ok(RenderingSequence {
            scale,
            steps: Vec::new(),
            slot_kinds: Vec::new(),
            yield_names: BTreeSet::new(),
            max_steps: DEFAULT_MAX_STEPS,
        })
    }

    /// Sets the maximum number of steps (GGE2504 beyond).
    pub fn with_max_steps(mut self, max_steps: usize) -> RenderingSequence {
        self.max_steps = max_steps;
        self
    }

    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The maximum number of steps (GGE2504 beyond).
    pub fn max_steps(&self) -> usize {
        self.max_steps
    }

    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    pub fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Number of slots created so far (the next new slot is `Slot(slot_count)`).
    pub fn slot_count(&self) -> usize {
        self.slot_kinds.len()
    }

    pub fn slot_kind(&self, slot: Slot) -> Option<ObjectKind> {
        self.slot_kinds.get(slot.index()).copied()
    }

    /// The next new slot.
    pub fn next_slot(&self) -> Slot {
        Slot(self.slot_kinds.len() as u32)
    }

    /// Appends a step after validating it (see the module docs). Returns the return slot.
    pub fn push(&mut self, op: OpRef, args: Vec<Slot>, ret: Slot, location: Location) -> Result<Slot, RenderError> {
        if self.steps.len() >= self.max_steps {
            return Err(RenderError::SequenceTooLong { limit: self.max_steps });
        }
        let invalid = |reason: String| RenderError::InvalidStep {
            index: self.steps.len(),
            name: op.name().to_string(),
            location,
            reason,
        };
        let kinds = op.arg_kinds();
        if kinds.len() != args.len() {
            return Err(invalid(format!("expects {} argument slots, got {}", kinds.len(), args.len())));
        }
        for (i, (slot, kind)) in args.iter().zip(kinds).enumerate() {
            match self.slot_kind(*slot) {
                None => return Err(invalid(format!("argument {i} uses slot {slot}, which does not exist yet"))),
                Some(k) if k != *kind => {
                    return Err(invalid(format!("argument {i} (slot {slot}) holds a {k:?}, expected a {kind:?}")))
                }
                Some(_) => {}
            }
        }
        let new_kind = match op.effect() {
            Effect::Create(kind) => {
                if ret != self.next_slot() {
                    return Err(invalid(format!(
                        "a creating step must return the next new slot {}, not {ret}",
                        self.next_slot()
                    )));
                }
                Some(kind)
            }
            Effect::Modify => {
                if args.first() != Some(&ret) {
                    return Err(invalid(format!("an in-place step must return its first argument, not {ret}")));
                }
                None
            }
        };
        if let Some(y) = op.as_yield() {
            if !y.rect.is_valid() {
                return Err(invalid(format!("the yield rectangle {} reaches past the coordinate range", y.rect)));
            }
            if self.yield_names.contains(&y.name) {
                return Err(invalid(format!("the map \"{}\" is yielded twice", y.name)));
            }
            self.yield_names.insert(y.name.clone());
        }
        if let Some(kind) = new_kind {
            self.slot_kinds.push(kind);
        }
        self.steps.push(Step { op, args, ret, location });
        Ok(ret)
    }

    /// Pushes a creating step; returns its new slot.
    pub fn push_create(
        &mut self,
        op: impl Operation + 'static,
        args: &[Slot],
        location: Location,
    ) -> Result<Slot, RenderError> {
        let ret = self.next_slot();
        self.push(Arc::new(op), args.to_vec(), ret, location)
    }

    /// Pushes an in-place step on `target` with further arguments `others`.
    pub fn push_modify(
        &mut self,
        op: impl Operation + 'static,
        target: Slot,
        others: &[Slot],
        location: Location,
    ) -> Result<Slot, RenderError> {
        let mut args = Vec::with_capacity(1 + others.len());
        args.push(target);
        args.extend_from_slice(others);
        self.push(Arc::new(op), args, target, location)
    }

    /// Pushes a yield of `slot` as `name` over the physical rectangle `rect`.
    pub fn push_yield(&mut self, slot: Slot, name: &str, rect: Rect, location: Location) -> Result<Slot, RenderError> {
        self.push(Arc::new(Yield { name: name.to_string(), rect }), vec![slot], slot, location)
    }

    /// The same sequence with each yield rectangle replaced by `rect_for(yield)`, e.g. to render
    /// another tile without simulating the script again. (Only valid when the script itself does
    /// not depend on the render rectangle; the host knows whether it does.)
    pub fn retargeted(&self, rect_for: impl Fn(&Yield) -> Rect) -> Result<RenderingSequence, RenderError> {
        let mut out = self.clone();
        for (index, step) in out.steps.iter_mut().enumerate() {
            if let Some(y) = step.op.as_yield() {
                let rect = rect_for(y);
                if !rect.is_valid() {
                    return Err(RenderError::InvalidStep {
                        index,
                        name: "Yield".into(),
                        location: step.location,
                        reason: format!("the yield rectangle {rect} reaches past the coordinate range"),
                    });
                }
                step.op = Arc::new(Yield { name: y.name.clone(), rect });
            }
        }
        Ok(out)
    }

    /// The human listing, one step per line: `#1 {0} <- HeightMap.Flat(0)`.
    pub fn listing(&self) -> String {
        let mut out = String::new();
        for (i, step) in self.steps.iter().enumerate() {
            out.push_str(&format!("#{} {}\n", i + 1, step));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stand-ins for the standard library's operations (which live in another crate): a creating
    /// step with a parameter and in-place steps reading one or two slots.
    #[derive(Debug)]
    struct Flat(f64);
    #[derive(Debug)]
    struct Blur(f64);
    #[derive(Debug)]
    struct Unify;

    impl Flat {
        fn new(h: f64) -> Flat {
            Flat(h)
        }
    }
    impl Blur {
        fn new(r: f64) -> Blur {
            Blur(r)
        }
    }

    macro_rules! stand_in {
        ($ty:ty, $name:literal, $kinds:expr, $effect:expr, |$s:ident| $describe:expr) => {
            impl Operation for $ty {
                fn name(&self) -> &str {
                    $name
                }
                fn arg_kinds(&self) -> &[ObjectKind] {
                    $kinds
                }
                fn effect(&self) -> Effect {
                    $effect
                }
                fn describe_params(&self) -> String {
                    let $s = self;
                    $describe
                }
                fn render(&self, _: &KernelContext, _: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
                    Ok(())
                }
            }
        };
    }
    stand_in!(Flat, "HeightMap.Flat", &[], Effect::Create(ObjectKind::Map), |s| s.0.to_string());
    stand_in!(Blur, "HeightMap.Blur", &[ObjectKind::Map], Effect::Modify, |s| s.0.to_string());
    stand_in!(Unify, "HeightMap.Unify", &[ObjectKind::Map, ObjectKind::Map], Effect::Modify, |_s| String::new());

    #[test]
    fn push_validates_slots_and_convention() {
        let mut seq = RenderingSequence::new(1.0).unwrap();
        let a = seq.push_create(Flat::new(0.0), &[], None).unwrap();
        assert_eq!(a, Slot(0));
        // Argument slot that does not exist.
        assert!(seq.push_modify(Unify, a, &[Slot(5)], None).is_err());
        // Creating step returning an existing slot.
        assert!(seq.push(Arc::new(Flat::new(0.0)), vec![], Slot(0), None).is_err());
        // Creating step skipping a slot number.
        assert!(seq.push(Arc::new(Flat::new(0.0)), vec![], Slot(2), None).is_err());
        // In-place step not returning its first argument.
        let b = seq.push_create(Flat::new(0.0), &[], None).unwrap();
        assert!(seq.push(Arc::new(Unify), vec![a, b], b, None).is_err());
        // Wrong number of arguments.
        assert!(seq.push(Arc::new(Blur::new(1.0)), vec![a, b], a, None).is_err());
        seq.push_modify(Unify, a, &[b], Some((3, 4))).unwrap();
        seq.push_yield(a, "main", Rect::new(0, 0, 4, 4), None).unwrap();
        let dup = seq.push_yield(b, "main", Rect::new(0, 0, 4, 4), None).unwrap_err();
        assert!(dup.to_string().contains("yielded twice"), "{dup}");
        assert_eq!(seq.len(), 4);
        assert!(seq.push_yield(a, "far", Rect::new(i64::MAX - 1, 0, 5, 5), None).is_err());
    }

    #[test]
    fn sequence_length_limit_is_gge2504() {
        let mut seq = RenderingSequence::new(1.0).unwrap().with_max_steps(2);
        seq.push_create(Flat::new(0.0), &[], None).unwrap();
        seq.push_create(Flat::new(0.0), &[], None).unwrap();
        let err = seq.push_create(Flat::new(0.0), &[], None).unwrap_err();
        assert_eq!(err.code(), geogen_diag::codes::GGE2504);
    }

    #[test]
    fn invalid_scale_is_rejected() {
        assert!(RenderingSequence::new(0.0).is_err());
        assert!(RenderingSequence::new(f64::NAN).is_err());
        assert!(RenderingSequence::new(-1.0).is_err());
    }

    #[test]
    fn listing_looks_like_the_thesis() {
        let mut seq = RenderingSequence::new(1.0).unwrap();
        let a = seq.push_create(Flat::new(0.5), &[], None).unwrap();
        seq.push_modify(Blur::new(20.0), a, &[], None).unwrap();
        seq.push_yield(a, "main", Rect::new(0, 0, 1000, 1000), None).unwrap();
        assert_eq!(
            seq.listing(),
            "#1 {0} <- HeightMap.Flat(0.5)\n#2 {0} <- HeightMap.Blur({0}, 20)\n#3 {0} <- Yield({0}, \"main\", [0, 0], [1000, 1000])\n"
        );
    }
}
