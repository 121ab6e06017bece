//! The renderer (thesis §3.7): runs the passes, checks the memory plan, then executes the steps in
//! order, one [`Renderer::step`] at a time or all at once with [`Renderer::run`].
//!
//! * Steps with empty bounds are skipped entirely (a skipped creating step leaves an empty object
//!   in its slot, so later steps still find one).
//! * A creating step gets a zero-filled object of exactly the planned extent; an in-place step gets
//!   its slot's object. If an in-place step also reads its own slot as another argument
//!   (`m.Add(m)`), that argument is a copy taken before the kernel runs (counted by the plan).
//! * After each step, the slots whose last use it was are freed.
//! * Kernels parallelise across rows with rayon (the current pool: wrap the call in
//!   `ThreadPool::install` to choose the thread count). Results do not depend on it.

use std::collections::BTreeMap;

use crate::bounds::{calculate_narrowed_bounds, Narrowed};
use crate::error::RenderError;
use crate::geometry::Rect;
use crate::graph::RenderingGraph;
use crate::lifetimes::Lifetimes;
use crate::operation::{Bounds, Effect, KernelContext, ObjectKind};
use crate::plan::MemoryPlan;
use crate::raster::{HeightMap, HeightProfile, Object};
use crate::sequence::RenderingSequence;
use crate::support::Supports;

/// Default memory limit: 1 GiB. Hosts set their own (the CLI uses a quarter of the machine's memory).
pub const DEFAULT_MEMORY_LIMIT: u64 = 1 << 30;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderConfig {
    /// Maximum bytes the plan may need (GGE3001 beyond).
    pub memory_limit: u64,
    /// Whether the support pass (`support.rs`) may narrow in-place steps. On by default; off only
    /// to check that it changes no bit.
    pub support_pass: bool,
}

impl Default for RenderConfig {
    fn default() -> RenderConfig {
        RenderConfig { memory_limit: DEFAULT_MEMORY_LIMIT, support_pass: true }
    }
}

/// Steps executed so far out of the total.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
}

impl Progress {
    /// Fraction done in [0, 1] (1 for an empty sequence).
    pub fn fraction(&self) -> f64 {
        if self.total == 0 {
            1.0
        } else {
            self.done as f64 / self.total as f64
        }
    }
}

type ProgressCallback = Box<dyn FnMut(Progress) + Send>;

/// The passes' results, for inspection (`geogen run --bounds`, debuggers).
#[derive(Clone, Debug)]
pub struct RenderMetadata {
    pub graph: RenderingGraph,
    /// The support pass's results (all unknown when it is off).
    pub supports: Supports,
    pub bounds: Vec<Bounds>,
    /// For each step the support pass narrowed, the part of its bounds it computes (`bounds.rs`).
    pub narrowed: Vec<Option<Narrowed>>,
    pub lifetimes: Lifetimes,
    pub plan: MemoryPlan,
}

impl RenderMetadata {
    /// Runs the graph, support, bounds, lifetime and memory passes.
    pub fn calculate(seq: &RenderingSequence) -> Result<RenderMetadata, RenderError> {
        RenderMetadata::calculate_with(seq, true)
    }

    /// [`RenderMetadata::calculate`], with the support pass on or off.
    pub fn calculate_with(seq: &RenderingSequence, support_pass: bool) -> Result<RenderMetadata, RenderError> {
        let graph = RenderingGraph::build(seq)?;
        let supports = if support_pass { Supports::calculate(seq, &graph) } else { Supports::unknown(seq.len()) };
        let (bounds, narrowed) = calculate_narrowed_bounds(seq, &graph, &supports)?;
        let lifetimes = Lifetimes::calculate(seq);
        let plan = MemoryPlan::calculate(seq, &bounds, &narrowed, &lifetimes);
        Ok(RenderMetadata { graph, supports, bounds, narrowed, lifetimes, plan })
    }

    /// The sequence listing annotated with bounds, memory and releases, one step per line.
    pub fn annotated_listing(&self, seq: &RenderingSequence) -> String {
        let mut out = String::new();
        for (i, step) in seq.steps().iter().enumerate() {
            let released: Vec<String> = self.lifetimes.released_after(i).iter().map(|s| s.to_string()).collect();
            let computed = match self.narrowed[i] {
                Some(Narrowed { part, fill: None }) => format!(" (computes {part})"),
                Some(Narrowed { part, fill: Some(h) }) => format!(" (computes {part}, fills the rest with {h})"),
                None => String::new(),
            };
            out.push_str(&format!(
                "#{} {}    bounds {}{computed}, {} bytes{}\n",
                i + 1,
                step,
                self.bounds[i],
                self.plan.step_bytes(i),
                if released.is_empty() { String::new() } else { format!(", release {}", released.join(" ")) }
            ));
        }
        out
    }
}

pub struct Renderer {
    seq: RenderingSequence,
    meta: RenderMetadata,
    /// For each step, the number of steps [`Renderer::advance`] runs as one fused pass starting
    /// there (0: the step runs on its own).
    fused: Vec<usize>,
    slots: Vec<Option<Object>>,
    outputs: BTreeMap<String, HeightMap>,
    next: usize,
    on_progress: Option<ProgressCallback>,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer").field("progress", &self.progress()).finish_non_exhaustive()
    }
}

fn empty_object(kind: ObjectKind) -> Object {
    match kind {
        ObjectKind::Map => Object::Map(HeightMap::empty()),
        ObjectKind::Profile => Object::Profile(HeightProfile::empty()),
    }
}

fn allocate(extent: Bounds) -> Result<Object, RenderError> {
    Ok(match extent {
        Bounds::Map(r) => Object::Map(HeightMap::try_zeroed(r)?),
        Bounds::Profile(i) => Object::Profile(HeightProfile::try_zeroed(i)?),
    })
}

impl Renderer {
    /// Runs the passes and checks the memory plan against `config.memory_limit` (GGE3001).
    pub fn new(seq: RenderingSequence, config: &RenderConfig) -> Result<Renderer, RenderError> {
        let meta = RenderMetadata::calculate_with(&seq, config.support_pass)?;
        meta.plan.check_limit(config.memory_limit)?;
        let slots = vec![None; seq.slot_count()];
        let fused = (0..seq.len()).map(|i| meta.plan.fused_pass(i)).collect();
        Ok(Renderer { seq, meta, fused, slots, outputs: BTreeMap::new(), next: 0, on_progress: None })
    }

    /// Calls `f` after every executed step.
    pub fn set_progress_callback(&mut self, f: impl FnMut(Progress) + Send + 'static) {
        self.on_progress = Some(Box::new(f));
    }

    pub fn sequence(&self) -> &RenderingSequence {
        &self.seq
    }

    pub fn metadata(&self) -> &RenderMetadata {
        &self.meta
    }

    pub fn progress(&self) -> Progress {
        Progress { done: self.next, total: self.seq.len() }
    }

    pub fn is_finished(&self) -> bool {
        self.next >= self.seq.len()
    }

    /// The object currently in a slot (for debuggers).
    pub fn slot(&self, slot: crate::Slot) -> Option<&Object> {
        self.slots.get(slot.index()).and_then(|s| s.as_ref())
    }

    /// Maps yielded so far.
    pub fn outputs(&self) -> &BTreeMap<String, HeightMap> {
        &self.outputs
    }

    pub fn into_outputs(self) -> BTreeMap<String, HeightMap> {
        self.outputs
    }

    /// Bounds the freed pages kept for reuse (`pages.rs`, when the binary installs
    /// [`LargePages`](crate::LargePages)) so that resident memory stays within the plan's peak
    /// from step `i` on, while keeping as much as possible for the steps to come (every page
    /// kept is a page not faulted in again, and on a virtual machine a fresh page costs several
    /// times a copy of it).
    ///
    /// Step `i` holds `held` bytes and allocates `need = step_bytes(i) - held` more, from the
    /// kept blocks first (a fresh mapping only once none is left); so with `kept` bytes kept,
    /// resident memory during the step stays within `held + max(kept, need)`. Keeping
    /// `peak_from(i) - held` bounds it by `peak_from(i)`: the kept pages fill the room that this
    /// step or a later, bigger one will use anyway.
    fn keep_pages_for(&self, i: usize) {
        let held: u64 = self.slots.iter().flatten().map(Object::bytes).sum::<u64>()
            + self.outputs.values().map(|m| m.rect().area().saturating_mul(4)).sum::<u64>();
        crate::pages::keep_at_most(self.meta.plan.peak_from(i).saturating_sub(held));
    }

    /// Executes the next step. Returns `Ok(false)` when there was none left.
    pub fn step(&mut self) -> Result<bool, RenderError> {
        let i = self.next;
        let Some(step) = self.seq.steps().get(i) else {
            crate::pages::keep_at_most(0);
            return Ok(false);
        };
        self.keep_pages_for(i);
        let own = self.meta.bounds[i];
        let missing = |slot: crate::Slot| RenderError::Internal(format!("step #{}: slot {slot} is empty", i + 1));
        if let Some(y) = step.op.as_yield() {
            let arg = step.args[0];
            // A map yielded for the last time is moved into the output (cropped in place) instead
            // of copied: no second buffer, no copy when the extents match. The plan counts it so.
            let map = if self.meta.lifetimes.released_after(i).contains(&arg) {
                match self.slots[arg.index()].take() {
                    Some(Object::Map(map)) => map.into_cut_out(y.rect)?,
                    Some(other) => {
                        self.slots[arg.index()] = Some(other);
                        return Err(RenderError::Internal(format!("step #{}: yield of a non-map", i + 1)));
                    }
                    None => return Err(missing(arg)),
                }
            } else {
                match &self.slots[arg.index()] {
                    Some(obj) => obj.as_map()?.cut_out(y.rect)?,
                    None => return Err(missing(arg)),
                }
            };
            self.outputs.entry(y.name.clone()).or_insert(map);
        } else if self.meta.plan.elided_copy(i) {
            // The copy is never made: the next step reads the original (kept until then).
        } else if own.is_empty() {
            if let Effect::Create(kind) = step.op.effect() {
                self.slots[step.ret.index()] = Some(empty_object(kind));
            }
        } else if i > 0 && self.meta.plan.elided_copy(i - 1) {
            let ctx = KernelContext { scale: self.seq.scale(), bounds: own };
            let original = self.seq.steps()[i - 1].args[0];
            let source = self.slots[original.index()].as_ref().ok_or_else(|| missing(original))?;
            let inputs = step.args[1..]
                .iter()
                .map(|s| self.slots[s.index()].as_ref().ok_or_else(|| missing(*s)))
                .collect::<Result<Vec<_>, _>>()?;
            let result = step.op.render_replacing(&ctx, source, &inputs).map_err(|e| e.at_step(step.location))?;
            self.slots[step.ret.index()] = Some(result);
        } else {
            let ctx = KernelContext { scale: self.seq.scale(), bounds: own };
            match step.op.effect() {
                Effect::Create(_) => {
                    let extent = self.meta.plan.extent(i);
                    // The plan accepted exactly this extent; anything else is a bug, and must not
                    // turn into an unplanned allocation.
                    if extent.bytes() > self.meta.plan.step_bytes(i) {
                        return Err(RenderError::Internal(format!(
                            "step #{}: extent {extent} exceeds the plan",
                            i + 1
                        )));
                    }
                    let mut target = allocate(extent)?;
                    let inputs = step
                        .args
                        .iter()
                        .map(|s| self.slots[s.index()].as_ref().ok_or_else(|| missing(*s)))
                        .collect::<Result<Vec<_>, _>>()?;
                    step.op.render(&ctx, &mut target, &inputs).map_err(|e| e.at_step(step.location))?;
                    self.slots[step.ret.index()] = Some(target);
                }
                Effect::Modify if self.meta.narrowed[i].is_some() => {
                    let narrow = self.meta.narrowed[i].unwrap_or(Narrowed { part: Rect::EMPTY, fill: None });
                    self.run_narrowed(i, narrow)?;
                }
                Effect::Modify => {
                    let mut target = self.slots[step.ret.index()].take().ok_or_else(|| missing(step.ret))?;
                    let self_copy = step.args[1..].contains(&step.ret).then(|| target.clone());
                    let result = self
                        .modify_inputs(i, self_copy.as_ref())
                        .and_then(|inputs| step.op.render(&ctx, &mut target, &inputs));
                    self.slots[step.ret.index()] = Some(target);
                    result.map_err(|e| e.at_step(step.location))?;
                }
            }
        }
        self.release_after(i);
        self.next += 1;
        let progress = self.progress();
        if let Some(cb) = self.on_progress.as_mut() {
            cb(progress);
        }
        Ok(true)
    }

    /// The inputs of in-place step `i` (its arguments after the target), with `self_copy` (a copy
    /// of the target taken before the kernel) where it reads its own slot.
    fn modify_inputs<'a>(&'a self, i: usize, self_copy: Option<&'a Object>) -> Result<Vec<&'a Object>, RenderError> {
        let step = &self.seq.steps()[i];
        let missing = |slot: crate::Slot| RenderError::Internal(format!("step #{}: slot {slot} is empty", i + 1));
        step.args[1..]
            .iter()
            .map(|s| {
                let object = if *s == step.ret { self_copy } else { self.slots[s.index()].as_ref() };
                object.ok_or_else(|| missing(*s))
            })
            .collect()
    }

    /// An in-place step the support pass narrowed to a part of its bounds (`bounds.rs`): its
    /// arguments are exact on what the part reads only, and the rest of the bounds either keeps
    /// the target's pixels (the operation leaves them unchanged there) or is filled with the
    /// result's background (then the target too is exact on what the part reads only, and the
    /// result is made over the planned extent if the kernel's is smaller).
    /// Without a fill, the kernel runs on the target directly when no other argument
    /// reaches the rest of the bounds (a combiner works on the intersection of extents, so it
    /// touches nothing there); otherwise on a copy of the part, written back after, so that
    /// arguments' pixels outside their bounds never reach a pixel anybody needs.
    fn run_narrowed(&mut self, i: usize, narrow: Narrowed) -> Result<(), RenderError> {
        let step = &self.seq.steps()[i];
        let own = self.meta.bounds[i].rect();
        let part = narrow.part;
        let missing = |slot: crate::Slot| RenderError::Internal(format!("step #{}: slot {slot} is empty", i + 1));
        let ctx = KernelContext { scale: self.seq.scale(), bounds: Bounds::Map(part) };
        let mut target = self.slots[step.ret.index()].take().ok_or_else(|| missing(step.ret))?;
        let result = (|| {
            if part.is_empty() {
                return Ok(());
            }
            let self_copy = step.args[1..].contains(&step.ret).then(|| target.clone());
            let inputs = self.modify_inputs(i, self_copy.as_ref())?;
            if narrow.fill.is_some() {
                // Everything outside the part is filled after the kernel, whatever it wrote there.
                return step.op.render(&ctx, &mut target, &inputs);
            }
            let reach = target.as_map()?.rect().intersect(&own);
            // A kernel without map inputs would run over the whole target: it runs on the part.
            let contained = inputs.iter().any(|input| matches!(input, Object::Map(_)))
                && inputs.iter().all(|input| match input {
                    Object::Map(map) => part.contains_rect(&map.rect().intersect(&reach)),
                    Object::Profile(_) => true,
                });
            if contained {
                step.op.render(&ctx, &mut target, &inputs)
            } else {
                let map = target.as_map_mut()?;
                let mut piece = Object::Map(map.cut_out(part)?);
                step.op.render(&ctx, &mut piece, &inputs)?;
                crate::raster::copy_overlap(piece.as_map()?, map);
                Ok(())
            }
        })();
        // After the kernel, which never touches the rest of the bounds: filled in place when the
        // result has the planned extent, else made over the planned extent (`plan.rs`).
        let result = result.and_then(|()| match narrow.fill {
            Some(height) => {
                let extent = self.meta.plan.extent(i).rect();
                let map = target.as_map_mut()?;
                if map.rect() == extent {
                    crate::raster::fill_outside(map, own, part, height);
                } else {
                    *map = crate::raster::with_background(map, extent, part, height)?;
                }
                Ok(())
            }
            None => Ok(()),
        });
        self.slots[step.ret.index()] = Some(target);
        result.map_err(|e| e.at_step(step.location))
    }

    /// Executes the next step, or the next fused pass: a run of row-local steps on one map (see
    /// [`Operation::is_row_local`](crate::Operation::is_row_local)) computed band by band, each
    /// band going through all of them while it is in cache, with the same bytes as step by step.
    /// Returns how many steps were executed (0 when none was left). The progress callback is
    /// called once, after the last of them.
    pub fn advance(&mut self) -> Result<usize, RenderError> {
        let i = self.next;
        match self.fused.get(i).copied() {
            None => {
                crate::pages::keep_at_most(0);
                Ok(0)
            }
            Some(0) => Ok(usize::from(self.step()?)),
            Some(len) => {
                self.keep_pages_for(i);
                if self.meta.plan.streamed_pass(i).is_some() {
                    self.run_streamed(i, len)?;
                } else if let Some(taken) = self.meta.plan.taken_over_buffer(i) {
                    self.run_taking_over(i, len, taken)?;
                } else {
                    self.run_fused(i, len)?;
                }
                Ok(len)
            }
        }
    }

    /// How many steps [`Renderer::advance`] executes next (0 when finished).
    pub fn next_advance_len(&self) -> usize {
        match self.fused.get(self.next).copied() {
            None => 0,
            Some(0) => 1,
            Some(len) => len,
        }
    }

    fn run_fused(&mut self, first: usize, len: usize) -> Result<(), RenderError> {
        let steps = &self.seq.steps()[first..first + len];
        let slot = steps[0].ret;
        let extent = self.meta.plan.extent(first).rect();
        let create = matches!(steps[0].op.effect(), Effect::Create(_));
        if create && self.meta.plan.extent(first).bytes() > self.meta.plan.step_bytes(first) {
            return Err(RenderError::Internal(format!("step #{}: extent {extent} exceeds the plan", first + 1)));
        }
        let missing = |s: crate::Slot| RenderError::Internal(format!("step #{}: slot {s} is empty", first + 1));
        let mut target =
            if create { None } else { Some(self.slots[slot.index()].take().ok_or_else(|| missing(slot))?) };
        let result = (|| {
            let scale = self.seq.scale();
            let mut inputs: Vec<Vec<&Object>> = Vec::with_capacity(len);
            for step in steps {
                let args = if create && std::ptr::eq(step, &steps[0]) { &step.args[..] } else { &step.args[1..] };
                inputs.push(
                    args.iter()
                        .map(|s| self.slots[s.index()].as_ref().ok_or_else(|| missing(*s)))
                        .collect::<Result<Vec<_>, _>>()?,
                );
            }
            let contexts: Vec<KernelContext> =
                (first..first + len).map(|j| KernelContext { scale, bounds: self.meta.bounds[j] }).collect();
            let run_band = |band: &mut HeightMap| -> Result<(), RenderError> {
                let mut object = Object::Map(std::mem::replace(band, HeightMap::empty()));
                let result = crate::kernels::serially(|| {
                    steps
                        .iter()
                        .zip(&contexts)
                        .zip(&inputs)
                        .try_for_each(|((step, ctx), inputs)| step.op.render(ctx, &mut object, inputs))
                });
                match object {
                    Object::Map(map) => *band = map,
                    Object::Profile(_) => return Err(RenderError::Internal("a fused step made a profile".into())),
                }
                result
            };
            let rows = crate::kernels::band_rows(extent.width as usize);
            match target.as_mut() {
                None => Ok(Object::Map(HeightMap::try_from_bands(extent, rows, None, run_band)?)),
                Some(object) => {
                    object.as_map_mut()?.update_by_bands(rows, run_band)?;
                    Ok(std::mem::replace(object, Object::Map(HeightMap::empty())))
                }
            }
        })();
        match result {
            Ok(object) => self.slots[slot.index()] = Some(object),
            Err(e) => {
                if let Some(object) = target {
                    self.slots[slot.index()] = Some(object);
                }
                return Err(e);
            }
        }
        self.end_pass(first, first + len);
        Ok(())
    }

    /// A fused pass creating a map whose result takes over the buffer of `taken`, a map covering
    /// its extent that the pass reads for the last time, on its own rows only (`fusion.rs`): each
    /// band is computed into scratch from `taken`'s rows and then written over them; at the end the
    /// rows are moved together in place.
    fn run_taking_over(&mut self, first: usize, len: usize, taken: crate::Slot) -> Result<(), RenderError> {
        let steps = &self.seq.steps()[first..first + len];
        let made = steps[0].ret;
        let extent = self.meta.plan.extent(first).rect();
        let missing = |s: crate::Slot| RenderError::Internal(format!("step #{}: slot {s} is empty", first + 1));
        let mut buffer = match self.slots[taken.index()].take() {
            Some(Object::Map(map)) if map.rect().contains_rect(&extent) => map,
            Some(other) => {
                self.slots[taken.index()] = Some(other);
                return Err(RenderError::Internal(format!("step #{}: slot {taken} cannot take the pass", first + 1)));
            }
            None => return Err(missing(taken)),
        };
        let result = (|| {
            let scale = self.seq.scale();
            // Each step's inputs, `None` where it reads the taken-over map (its band is passed).
            let mut inputs: Vec<Vec<Option<&Object>>> = Vec::with_capacity(len);
            for (k, step) in steps.iter().enumerate() {
                let args = if k == 0 { &step.args[..] } else { &step.args[1..] };
                inputs.push(
                    args.iter()
                        .map(|s| {
                            if *s == taken {
                                Ok(None)
                            } else {
                                self.slots[s.index()].as_ref().map(Some).ok_or_else(|| missing(*s))
                            }
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                );
            }
            let contexts: Vec<KernelContext> =
                (first..first + len).map(|j| KernelContext { scale, bounds: self.meta.bounds[j] }).collect();
            let rows = crate::kernels::band_rows(buffer.width());
            buffer.update_by_bands(rows, |band| {
                let ys = band.rect().y_interval().intersect(&extent.y_interval());
                let part = Rect::new(extent.x, ys.start, extent.width, ys.length);
                if part.is_empty() {
                    return Ok(());
                }
                let old = Object::Map(std::mem::replace(band, HeightMap::empty()));
                let mut object = Object::Map(HeightMap::try_zeroed(part)?);
                let result = crate::kernels::serially(|| {
                    steps.iter().zip(&contexts).zip(&inputs).try_for_each(|((step, ctx), inputs)| {
                        let inputs: Vec<&Object> = inputs.iter().map(|i| i.unwrap_or(&old)).collect();
                        step.op.render(ctx, &mut object, &inputs)
                    })
                });
                *band = match old {
                    Object::Map(map) => map,
                    Object::Profile(_) => return Err(RenderError::Internal("a fused pass read a profile".into())),
                };
                crate::raster::copy_overlap(object.as_map()?, band);
                result
            })
        })();
        // On failure the buffer is half written: the render stops here, so nobody reads it.
        result?;
        self.slots[made.index()] = Some(Object::Map(buffer.into_cut_out(extent)?));
        self.end_pass(first, first + len);
        Ok(())
    }

    /// A streamed pass (`fusion.rs`): steps `first..first + len - 1` make a map that the last step
    /// (its consumer) reads for the last time; the consumer's target is updated band by band, each
    /// band of the streamed map being computed by the chain just before the consumer reads it.
    fn run_streamed(&mut self, first: usize, len: usize) -> Result<(), RenderError> {
        let consumer = first + len - 1;
        let steps = &self.seq.steps()[first..=consumer];
        let (chain, last) = steps.split_at(len - 1);
        let last = &last[0];
        let made = chain[0].ret;
        let target_slot = last.ret;
        let made_extent = self.meta.plan.extent(first).rect();
        let missing = |s: crate::Slot| RenderError::Internal(format!("step #{}: slot {s} is empty", first + 1));
        let mut target = self.slots[target_slot.index()].take().ok_or_else(|| missing(target_slot))?;
        let result = (|| {
            let scale = self.seq.scale();
            let slot = |s: &crate::Slot| self.slots[s.index()].as_ref().ok_or_else(|| missing(*s));
            let mut chain_inputs: Vec<Vec<&Object>> = Vec::with_capacity(chain.len());
            for (k, step) in chain.iter().enumerate() {
                let args = if k == 0 { &step.args[..] } else { &step.args[1..] };
                chain_inputs.push(args.iter().map(slot).collect::<Result<Vec<_>, _>>()?);
            }
            // The consumer's inputs, `None` where it reads the streamed map.
            let last_inputs: Vec<Option<&Object>> = last.args[1..]
                .iter()
                .map(|s| if *s == made { Ok(None) } else { slot(s).map(Some) })
                .collect::<Result<Vec<_>, _>>()?;
            let contexts: Vec<KernelContext> =
                (first..=consumer).map(|j| KernelContext { scale, bounds: self.meta.bounds[j] }).collect();
            let map = target.as_map_mut()?;
            let width = (map.rect().width.max(made_extent.width)) as usize;
            map.update_by_bands(crate::kernels::band_rows(width), |band| {
                // The streamed map's whole rows meeting this band, computed by the chain.
                let ys = band.rect().y_interval().intersect(&made_extent.y_interval());
                let part = Rect::new(made_extent.x, ys.start, made_extent.width, ys.length);
                let mut streamed = Object::Map(HeightMap::try_zeroed(part)?);
                let mut object = Object::Map(std::mem::replace(band, HeightMap::empty()));
                let result = crate::kernels::serially(|| {
                    if !part.is_empty() {
                        for ((step, ctx), inputs) in chain.iter().zip(&contexts).zip(&chain_inputs) {
                            step.op.render(ctx, &mut streamed, inputs)?;
                        }
                    }
                    let inputs: Vec<&Object> = last_inputs.iter().map(|i| i.unwrap_or(&streamed)).collect();
                    last.op.render(&contexts[len - 1], &mut object, &inputs)
                });
                match object {
                    Object::Map(map) => *band = map,
                    Object::Profile(_) => return Err(RenderError::Internal("a streamed pass made a profile".into())),
                }
                result
            })
        })();
        self.slots[target_slot.index()] = Some(target);
        result?;
        self.end_pass(first, consumer + 1);
        Ok(())
    }

    /// Frees the objects whose last use step `i` was; the original of an elided copy is freed
    /// after the step that reads it in the copy's place instead.
    fn release_after(&mut self, i: usize) {
        let original = self.meta.plan.elided_copy(i).then(|| self.seq.steps()[i].args[0]);
        for slot in self.meta.lifetimes.released_after(i) {
            if Some(*slot) != original {
                self.slots[slot.index()] = None;
            }
        }
        if i > 0 && self.meta.plan.elided_copy(i - 1) {
            let original = self.seq.steps()[i - 1].args[0];
            if self.meta.lifetimes.released_after(i - 1).contains(&original) {
                self.slots[original.index()] = None;
            }
        }
    }

    /// After a pass over steps `first..end`: frees what their last uses were, moves on, reports.
    fn end_pass(&mut self, first: usize, end: usize) {
        for j in first..end {
            self.release_after(j);
        }
        self.next = end;
        let progress = self.progress();
        if let Some(cb) = self.on_progress.as_mut() {
            cb(progress);
        }
    }

    /// Executes all remaining steps (fused where possible, see [`Renderer::advance`]).
    pub fn run(&mut self) -> Result<(), RenderError> {
        while self.advance()? > 0 {}
        Ok(())
    }
}

/// Plans, checks and renders a whole sequence; returns the yielded maps by name.
pub fn render(seq: RenderingSequence, config: &RenderConfig) -> Result<BTreeMap<String, HeightMap>, RenderError> {
    let mut renderer = Renderer::new(seq, config)?;
    renderer.run()?;
    Ok(renderer.into_outputs())
}
