//! The renderer (thesis §3.7): runs the passes, checks the memory plan, then executes the steps in
//! order, one [`Renderer::step`] at a time or all at once with [`Renderer::run`].
//!
//! * Steps with empty bounds are skipped entirely (a skipped creating step leaves an empty object
//!   in its slot, so later steps still find one).
//! * A creating step gets a zero-filled object of exactly the planned extent; an in-place step gets
//!   its slot's object. If an in-place step also reads its own slot as another argument
//!   (`m.Add(m)`), that argument is a copy taken before the kernel runs (counted by the plan).
//! * After each step, the slots whose last use it was are freed.
//! * [`Renderer::advance`] runs a step or a fused pass, and the next one beside it when the two are
//!   independent and the plan's peak holds both (`ARCHITECTURE.md`, "Units at once").
//! * Kernels parallelise across rows with rayon (the current pool: wrap the call in
//!   `ThreadPool::install` to choose the thread count). Results do not depend on it.

use std::collections::BTreeMap;

use crate::bounds::{calculate_narrowed_bounds, Narrowed};
use crate::error::RenderError;
use crate::geometry::Rect;
use crate::graph::RenderingGraph;
use crate::lifetimes::Lifetimes;
use crate::operation::{Bounds, Effect, KernelContext, ObjectKind, Solution};
use crate::plan::MemoryPlan;
use crate::raster::{HeightMap, HeightProfile, Object};
use crate::sequence::RenderingSequence;
use crate::shared::{SharedParts, SharedUse};
use crate::solve::{SolveCache, SolvePlan};
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
    /// Whether [`Renderer::advance`] may run two independent units (steps or fused passes) of the
    /// graph at once, when the memory plan's peak allows it. On by default; off only to compare.
    pub concurrent_branches: bool,
    /// Parts shared with other renders of the same script and settings (`shared.rs`; `geogen
    /// tiles` shares one between its blocks): a narrowed step's part another render computed is
    /// taken instead of computed again, with every step that only led to it. `None` by default.
    pub shared: Option<SharedParts>,
    /// Whether the pages of freed maps stay kept when the render ends (`pages.rs`), for a host that
    /// renders again at once (`geogen tiles`' next block; its first step trims them to its own
    /// plan). By default the render gives them all back.
    pub keep_pages_after: bool,
    /// Whole-map solutions shared with other renders of the same script and settings
    /// (`solve.rs`): a solve another render computed is taken instead of computed again. `None` by
    /// default: each render then solves what it needs once for itself.
    pub solutions: Option<SolveCache>,
    /// The most grid cells a whole-map solve may have (GGE3002 beyond).
    pub max_solve_cells: u64,
    /// Whether the host has given the render up (`stop.rs`): long kernels ask it as they go.
    /// Never, by default.
    pub stop: crate::StopSignal,
}

impl Default for RenderConfig {
    fn default() -> RenderConfig {
        RenderConfig {
            memory_limit: DEFAULT_MEMORY_LIMIT,
            support_pass: true,
            concurrent_branches: true,
            shared: None,
            keep_pages_after: false,
            solutions: None,
            max_solve_cells: crate::solve::DEFAULT_MAX_SOLVE_CELLS,
            stop: crate::StopSignal::default(),
        }
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
    /// For each step with whole-map solves that is needed, their plans (`solve.rs`).
    pub solves: Vec<Vec<std::sync::Arc<SolvePlan>>>,
}

impl RenderMetadata {
    /// Runs the graph, support, bounds, lifetime and memory passes.
    pub fn calculate(seq: &RenderingSequence) -> Result<RenderMetadata, RenderError> {
        RenderMetadata::calculate_with(seq, true)
    }

    /// [`RenderMetadata::calculate`], with the support pass on or off.
    pub fn calculate_with(seq: &RenderingSequence, support_pass: bool) -> Result<RenderMetadata, RenderError> {
        RenderMetadata::calculate_nested(seq, support_pass, 0)
    }

    /// The passes of a sequence `depth` grid renders deep (`solve.rs`).
    pub(crate) fn calculate_nested(
        seq: &RenderingSequence,
        support_pass: bool,
        depth: usize,
    ) -> Result<RenderMetadata, RenderError> {
        let graph = RenderingGraph::build(seq)?;
        let supports = if support_pass { Supports::calculate(seq, &graph) } else { Supports::unknown(seq.len()) };
        let (bounds, narrowed) = calculate_narrowed_bounds(seq, &graph, &supports)?;
        let lifetimes = Lifetimes::calculate(seq);
        let solves = crate::solve::plan_solves(seq, &graph, &bounds, support_pass, depth)?;
        let plan = MemoryPlan::calculate(seq, &bounds, &narrowed, &lifetimes, &crate::solve::solve_bytes(&solves));
        Ok(RenderMetadata { graph, supports, bounds, narrowed, lifetimes, plan, solves })
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
    /// Whether two independent units may run at once (`RenderConfig::concurrent_branches`).
    concurrent: bool,
    /// The first step of the unit the last [`Renderer::advance`] ran beside the one at its start.
    last_alongside: Option<usize>,
    /// Set when a unit failed while the one beside it succeeded: its result is in its slot but
    /// the render cannot go on from there (it would run that unit again).
    failed: Option<usize>,
    /// What this render takes from and gives to `RenderConfig::shared`.
    shared: Option<SharedUse>,
    /// `RenderConfig::keep_pages_after`.
    keep_pages_after: bool,
    /// What grid renders inside this one are given (`solve.rs`).
    config: RenderConfig,
    /// Solutions this render holds for a later step reading them again, by key (`solve.rs`).
    solutions: BTreeMap<String, Solution>,
}

/// One unit of [`Renderer::advance`]: a step on its own, or a pass of `len` steps.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Unit {
    first: usize,
    len: usize,
    kind: UnitKind,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum UnitKind {
    /// A creating or in-place step run alone (not a yield, not skipped, not narrowed, no copy
    /// elided before or at it).
    Step,
    /// Row-local steps on one map, band by band (`run_fused`).
    Fused,
    /// A chain streamed into its reader (`fusion.rs`).
    Streamed,
    /// A fused pass writing its result over the buffer of this map (`fusion.rs`).
    TakingOver(crate::Slot),
}

impl Unit {
    fn end(&self) -> usize {
        self.first + self.len
    }
}

/// What the units of a render read: the passes' results and the objects in the slots, shared by
/// units running at once (each takes the object it writes out of the slots first).
#[derive(Copy, Clone)]
struct View<'a> {
    seq: &'a RenderingSequence,
    meta: &'a RenderMetadata,
    slots: &'a [Option<Object>],
    /// The solutions of the step computed, for a step with whole-map solves (`solve.rs`).
    solutions: &'a [Solution],
    /// `RenderConfig::stop`, for the kernels.
    stop: &'a crate::StopSignal,
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
        if let Some((i, cells)) = crate::solve::largest_grid(&meta.solves) {
            if cells > config.max_solve_cells {
                let step = &seq.steps()[i];
                return Err(RenderError::SolveGridTooLarge {
                    cells,
                    limit: config.max_solve_cells,
                    step: i + 1,
                    name: step.op.name().to_string(),
                    location: step.location,
                });
            }
        }
        meta.plan.check_limit(config.memory_limit)?;
        let slots = vec![None; seq.slot_count()];
        let fused = (0..seq.len()).map(|i| meta.plan.fused_pass(i)).collect();
        let shared = config.shared.as_ref().map(|parts| parts.plan(&seq, &meta));
        Ok(Renderer {
            seq,
            meta,
            fused,
            slots,
            outputs: BTreeMap::new(),
            next: 0,
            on_progress: None,
            concurrent: config.concurrent_branches,
            last_alongside: None,
            failed: None,
            shared,
            keep_pages_after: config.keep_pages_after,
            config: config.clone(),
            solutions: BTreeMap::new(),
        })
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
    ///
    /// A render whose host renders again at once (`keep_pages_after`) keeps within its whole
    /// plan's peak instead, in its last steps too: the next render (`geogen tiles`' next block,
    /// of a like plan) then finds its pages kept rather than faulting them in afresh; resident
    /// memory still stays within this render's peak.
    fn keep_pages_for(&self, i: usize) {
        self.keep_pages_within(self.keep_budget(i));
    }

    /// The memory within which freed pages are kept from step `i` on (see
    /// [`Renderer::keep_pages_for`]).
    fn keep_budget(&self, i: usize) -> u64 {
        let plan = &self.meta.plan;
        if self.keep_pages_after {
            plan.peak()
        } else {
            plan.peak_from(i)
        }
    }

    /// Keeps at most `budget` minus what is held of freed pages (see [`Renderer::keep_pages_for`]).
    fn keep_pages_within(&self, budget: u64) {
        let held: u64 = self.slots.iter().flatten().map(Object::bytes).sum::<u64>()
            + self.outputs.values().map(|m| m.rect().area().saturating_mul(4)).sum::<u64>();
        crate::pages::keep_at_most(budget.saturating_sub(held));
    }

    /// Executes the next step. Returns `Ok(false)` when there was none left.
    pub fn step(&mut self) -> Result<bool, RenderError> {
        let i = self.next;
        if let Some(step) = self.failed {
            return Err(RenderError::Internal(format!("the render failed at step #{}", step + 1)));
        }
        let Some(step) = self.seq.steps().get(i) else {
            self.release_pages_at_end();
            return Ok(false);
        };
        if self.skipped(i) {
            self.end_pass(i, i + 1);
            return Ok(true);
        }
        self.keep_pages_for(i);
        let own = self.meta.bounds[i];
        let missing = |slot: crate::Slot| RenderError::Internal(format!("step #{}: slot {slot} is empty", i + 1));
        let hit = self.shared.as_ref().and_then(|s| s.hits[i].clone());
        if let (Some(part), Some(narrow)) = (hit, self.meta.narrowed[i]) {
            let location = step.location;
            self.take_shared(i, &part, narrow).map_err(|e| e.at_step(location))?;
        } else if let Some(y) = step.op.as_yield() {
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
            let ctx = KernelContext { scale: self.seq.scale(), bounds: own, stop: self.config.stop.clone() };
            let original = self.seq.steps()[i - 1].args[0];
            let source = self.slots[original.index()].as_ref().ok_or_else(|| missing(original))?;
            let inputs = step.args[1..]
                .iter()
                .map(|s| self.slots[s.index()].as_ref().ok_or_else(|| missing(*s)))
                .collect::<Result<Vec<_>, _>>()?;
            let result = step.op.render_replacing(&ctx, source, &inputs).map_err(|e| e.at_step(step.location))?;
            self.slots[step.ret.index()] = Some(result);
        } else if step.op.effect() == Effect::Modify && self.meta.narrowed[i].is_some() {
            let narrow = self.meta.narrowed[i].unwrap_or(Narrowed { part: Rect::EMPTY, fill: None });
            self.run_narrowed(i, narrow)?;
        } else if !self.meta.solves[i].is_empty() {
            let plans = self.meta.solves[i].clone();
            let solutions = plans
                .iter()
                .map(|plan| self.solution(i, plan))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.at_step(step.location))?;
            let unit = Unit { first: i, len: 1, kind: UnitKind::Step };
            let mut target = self.take_source(unit)?;
            let view = View { solutions: &solutions, ..self.view() };
            let result = view.compute_unit(unit, &mut target);
            self.put_result(unit, target, result.is_ok());
            result?;
            // Kept for a later step reading the same solution (the plan counts them until then).
            for (plan, solution) in plans.iter().zip(solutions) {
                let read_later = self.meta.solves[i + 1..].iter().flatten().any(|p| p.key == plan.key);
                if read_later {
                    self.solutions.insert(plan.key.clone(), solution);
                } else {
                    self.solutions.remove(&plan.key);
                }
            }
        } else {
            self.run_in_slots(Unit { first: i, len: 1, kind: UnitKind::Step })?;
        }
        self.release_after(i);
        self.next += 1;
        let progress = self.progress();
        if let Some(cb) = self.on_progress.as_mut() {
            cb(progress);
        }
        Ok(true)
    }

    /// The solution a step's plan names: held from an earlier step, kept by the shared cache (or
    /// being computed for another render, then waited for), or computed here: the grid inputs
    /// rendered on their grid, then solved.
    fn solution(&self, i: usize, plan: &SolvePlan) -> Result<Solution, RenderError> {
        if let Some(solution) = self.solutions.get(&plan.key) {
            return Ok(solution.clone());
        }
        let step = &self.seq.steps()[i];
        let compute = || -> Result<Solution, RenderError> {
            // The grid render shares this render's solutions cache (a solve nested in it is solved
            // once too) and runs within the step's planned need.
            let cache = self.config.solutions.clone().unwrap_or_else(|| SolveCache::new(0));
            // Never stopped half-way: the solution may be kept and shared by other renders.
            let config = RenderConfig {
                shared: None,
                keep_pages_after: true,
                solutions: Some(cache),
                stop: crate::StopSignal::default(),
                ..self.config.clone()
            };
            let mut grid = Renderer::new(plan.sequence.clone(), &config)?;
            grid.run()?;
            let inputs = crate::solve::grid_inputs(grid.into_outputs(), plan.need.grid_args.len())?;
            let refs: Vec<&HeightMap> = inputs.iter().collect();
            step.op.solve(&plan.need, &refs)
        };
        match &self.config.solutions {
            Some(cache) => cache.obtain(&plan.key, plan.need.solution_bytes, compute),
            None => compute(),
        }
    }

    /// Step `i`'s narrowed part taken from another render (`shared.rs`): as `run_narrowed` leaves
    /// its bounds, the part there and the rest filled with the background (the result made over
    /// the planned extent) or the target's own pixels (the part copied into the target).
    fn take_shared(&mut self, i: usize, part: &HeightMap, narrow: Narrowed) -> Result<(), RenderError> {
        let slot = self.seq.steps()[i].ret;
        let wanted = narrow.part;
        match narrow.fill {
            Some(height) => {
                let extent = self.meta.plan.extent(i).rect();
                let result = crate::raster::with_background(part, extent, wanted, height)?;
                self.slots[slot.index()] = Some(Object::Map(result));
            }
            None => {
                let target = self.slots[slot.index()]
                    .as_mut()
                    .ok_or_else(|| RenderError::Internal(format!("step #{}: slot {slot} is empty", i + 1)))?
                    .as_map_mut()?;
                if part.rect() == wanted {
                    crate::raster::copy_overlap(part, target);
                } else {
                    crate::raster::copy_overlap(&part.cut_out(wanted)?, target);
                }
            }
        }
        Ok(())
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
        let ctx = KernelContext { scale: self.seq.scale(), bounds: Bounds::Map(part), stop: self.config.stop.clone() };
        let mut target = self.slots[step.ret.index()].take().ok_or_else(|| missing(step.ret))?;
        let result = (|| {
            if part.is_empty() {
                return Ok(());
            }
            let self_copy = step.args[1..].contains(&step.ret).then(|| target.clone());
            let inputs = self.view().modify_inputs(i, self_copy.as_ref())?;
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
        // The part is final now (the fill below is outside it): another render may take it.
        if let (Ok(()), Some(shared), Ok(map)) = (&result, self.shared.as_mut(), target.as_map()) {
            shared.fulfil(i, map, part);
        }
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
    ///
    /// When the unit after this one is independent of it (neither writes what the other reads or
    /// writes) and the memory plan's peak from here on holds both at once, the two run at the same
    /// time ([`RenderConfig::concurrent_branches`]); the count then covers both.
    pub fn advance(&mut self) -> Result<usize, RenderError> {
        let i = self.next;
        self.last_alongside = None;
        if let Some(step) = self.failed {
            return Err(RenderError::Internal(format!("the render failed at step #{}", step + 1)));
        }
        let Some(unit) = self.unit_at(i) else {
            self.release_pages_at_end();
            return Ok(0);
        };
        if self.skipped(i) {
            // Only led to a part taken from `RenderConfig::shared`; a pass is skipped whole.
            self.end_pass(unit.first, unit.end());
            return Ok(unit.len);
        }
        if let Some((other, together)) = self.concurrent_partner(unit) {
            self.run_pair(unit, other, together)?;
            return Ok(unit.len + other.len);
        }
        if unit.kind == UnitKind::Step {
            return Ok(usize::from(self.step()?));
        }
        self.keep_pages_for(i);
        self.run_in_slots(unit)?;
        self.end_pass(unit.first, unit.end());
        Ok(unit.len)
    }

    /// The first step of the unit the last [`Renderer::advance`] ran at the same time as the one
    /// it started with, if it ran two.
    pub fn last_advance_alongside(&self) -> Option<usize> {
        self.last_alongside
    }

    /// The unit [`Renderer::advance`] runs from step `i`: a pass, or the step alone.
    fn unit_at(&self, i: usize) -> Option<Unit> {
        let len = *self.fused.get(i)?;
        let kind = if len == 0 {
            UnitKind::Step
        } else if self.meta.plan.streamed_pass(i).is_some() {
            UnitKind::Streamed
        } else if let Some(taken) = self.meta.plan.taken_over_buffer(i) {
            UnitKind::TakingOver(taken)
        } else {
            UnitKind::Fused
        };
        Some(Unit { first: i, len: len.max(1), kind })
    }

    /// The slots a unit reads and those it writes, if it can run beside another: a plain step
    /// (creating or in place; not a yield, not skipped, not narrowed, no copy elided before or
    /// at it) or a pass.
    fn unit_slots(&self, unit: Unit) -> Option<(Vec<crate::Slot>, Vec<crate::Slot>)> {
        let plan = &self.meta.plan;
        if unit.first > 0 && plan.elided_copy(unit.first - 1) {
            return None;
        }
        let (mut reads, mut writes) = (Vec::new(), Vec::new());
        for j in unit.first..unit.end() {
            let step = &self.seq.steps()[j];
            let plain = step.op.as_yield().is_none()
                && !self.meta.bounds[j].is_empty()
                && !plan.elided_copy(j)
                && self.meta.solves[j].is_empty()
                && (unit.kind != UnitKind::Step || self.meta.narrowed[j].is_none());
            if !plain {
                return None;
            }
            reads.extend_from_slice(&step.args);
            writes.push(step.ret);
        }
        if let UnitKind::TakingOver(taken) = unit.kind {
            writes.push(taken);
        }
        Some((reads, writes))
    }

    /// The unit after `unit` when the two can run at once: neither writes a slot the other reads
    /// or writes, and the plan's peak holds both (so the peak checked against the memory limit
    /// stays the most the render needs); with the bytes they need together.
    fn concurrent_partner(&self, unit: Unit) -> Option<(Unit, u64)> {
        if !self.concurrent {
            return None;
        }
        let other = self.unit_at(unit.end())?;
        if self.skipped(other.first) {
            return None;
        }
        let (reads_a, writes_a) = self.unit_slots(unit)?;
        let (reads_b, writes_b) = self.unit_slots(other)?;
        if writes_a.iter().any(|s| reads_b.contains(s) || writes_b.contains(s))
            || writes_b.iter().any(|s| reads_a.contains(s))
        {
            return None;
        }
        // Sequentially the second needs what is held before it plus its own new objects and
        // scratch; beside the first, that addition comes on top of the first's whole need.
        let plan = &self.meta.plan;
        let need = |u: Unit| (u.first..u.end()).map(|j| plan.step_bytes(j)).max().unwrap_or(0);
        let added = need(other).saturating_sub(plan.held_before(other.first));
        let together = need(unit).saturating_add(added);
        (together <= plan.peak()).then_some((other, together))
    }

    /// Runs two independent units at once (see [`Renderer::advance`]), which need `together`
    /// bytes (within the plan's peak).
    fn run_pair(&mut self, a: Unit, b: Unit, together: u64) -> Result<(), RenderError> {
        self.keep_pages_within(self.keep_budget(a.first).max(together));
        let mut target_a = self.take_source(a)?;
        let mut target_b = match self.take_source(b) {
            Ok(target) => target,
            Err(e) => {
                self.put_result(a, target_a, false);
                return Err(e);
            }
        };
        let view = self.view();
        let (result_a, result_b) =
            rayon::join(|| view.compute_unit(a, &mut target_a), || view.compute_unit(b, &mut target_b));
        self.put_result(a, target_a, result_a.is_ok());
        self.put_result(b, target_b, result_b.is_ok());
        if result_a.is_err() != result_b.is_err() {
            self.failed = Some(if result_a.is_err() { a.first } else { b.first });
        }
        result_a?;
        result_b?;
        self.end_pass(a.first, b.end());
        self.last_alongside = Some(b.first);
        Ok(())
    }

    /// At the end of the render: gives the kept pages back, unless the host keeps them for its next
    /// render (`RenderConfig::keep_pages_after`).
    fn release_pages_at_end(&self) {
        if !self.keep_pages_after {
            crate::pages::keep_at_most(0);
        }
    }

    /// Whether step `i` is not run: it only leads to a part taken from `RenderConfig::shared`.
    fn skipped(&self, i: usize) -> bool {
        self.shared.as_ref().is_some_and(|s| s.skipped.get(i).copied().unwrap_or(false))
    }

    fn view(&self) -> View<'_> {
        View { seq: &self.seq, meta: &self.meta, slots: &self.slots, solutions: &[], stop: &self.config.stop }
    }

    /// The slot whose object a unit works on (taken out of the slots while it runs): the target of
    /// an in-place step or pass, the map whose buffer a pass takes over; none for a new object.
    fn source_slot(&self, unit: Unit) -> Option<crate::Slot> {
        let steps = self.seq.steps();
        match unit.kind {
            UnitKind::TakingOver(taken) => Some(taken),
            UnitKind::Streamed => Some(steps[unit.end() - 1].ret),
            UnitKind::Step | UnitKind::Fused => {
                (steps[unit.first].op.effect() == Effect::Modify).then_some(steps[unit.first].ret)
            }
        }
    }

    /// The slot a unit's result goes to.
    fn result_slot(&self, unit: Unit) -> crate::Slot {
        let steps = self.seq.steps();
        match unit.kind {
            UnitKind::Streamed => steps[unit.end() - 1].ret,
            _ => steps[unit.first].ret,
        }
    }

    fn take_source(&mut self, unit: Unit) -> Result<Option<Object>, RenderError> {
        match self.source_slot(unit) {
            None => Ok(None),
            Some(slot) => self.slots[slot.index()]
                .take()
                .map(Some)
                .ok_or_else(|| RenderError::Internal(format!("step #{}: slot {slot} is empty", unit.first + 1))),
        }
    }

    /// Puts a unit's object back: its result where it belongs, or (after a failure) what is left
    /// of its target where it was taken from.
    fn put_result(&mut self, unit: Unit, object: Option<Object>, succeeded: bool) {
        if let Some(object) = object {
            let slot = if succeeded {
                self.result_slot(unit)
            } else {
                self.source_slot(unit).unwrap_or(self.result_slot(unit))
            };
            self.slots[slot.index()] = Some(object);
        }
    }

    /// Runs a unit on the objects in the slots (without releasing anything or moving on).
    fn run_in_slots(&mut self, unit: Unit) -> Result<(), RenderError> {
        let mut target = self.take_source(unit)?;
        let result = self.view().compute_unit(unit, &mut target);
        self.put_result(unit, target, result.is_ok());
        result
    }

    /// How many steps [`Renderer::advance`] executes next (0 when finished).
    pub fn next_advance_len(&self) -> usize {
        match self.unit_at(self.next) {
            None => 0,
            Some(unit) => unit.len + self.concurrent_partner(unit).map_or(0, |(other, _)| other.len),
        }
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

impl<'a> View<'a> {
    fn missing(&self, step: usize, slot: crate::Slot) -> RenderError {
        RenderError::Internal(format!("step #{}: slot {slot} is empty", step + 1))
    }

    fn slot(&self, step: usize, slot: crate::Slot) -> Result<&'a Object, RenderError> {
        self.slots[slot.index()].as_ref().ok_or_else(|| self.missing(step, slot))
    }

    /// Runs `unit` on `target` (the object taken out of its source slot, none for a new one),
    /// which holds the unit's result afterwards.
    fn compute_unit(&self, unit: Unit, target: &mut Option<Object>) -> Result<(), RenderError> {
        match unit.kind {
            UnitKind::Step => self.compute_step(unit.first, target),
            UnitKind::Fused => self.compute_fused(unit.first, unit.len, target),
            UnitKind::Streamed => self.compute_streamed(unit.first, unit.len, target),
            UnitKind::TakingOver(_) => self.compute_taking_over(unit.first, unit.len, target),
        }
    }

    /// The inputs of in-place step `i` (its arguments after the target), with `self_copy` (a copy
    /// of the target taken before the kernel) where it reads its own slot.
    fn modify_inputs<'b>(&self, i: usize, self_copy: Option<&'b Object>) -> Result<Vec<&'b Object>, RenderError>
    where
        'a: 'b,
    {
        let step = &self.seq.steps()[i];
        step.args[1..]
            .iter()
            .map(|s| if *s == step.ret { self_copy.ok_or_else(|| self.missing(i, *s)) } else { self.slot(i, *s) })
            .collect()
    }

    /// Step `i`'s kernel: its plain one, or the one reading its whole-map solution.
    fn kernel(
        &self,
        i: usize,
        ctx: &KernelContext,
        target: &mut Object,
        inputs: &[&Object],
    ) -> Result<(), RenderError> {
        let step = &self.seq.steps()[i];
        let plans = &self.meta.solves[i];
        if plans.is_empty() {
            step.op.render(ctx, target, inputs)
        } else if plans.len() == self.solutions.len() {
            step.op.render_solved(ctx, self.solutions, target, inputs)
        } else {
            Err(RenderError::Internal(format!("step #{}: its solutions are missing", i + 1)))
        }
    }

    /// A creating step (a zero-filled object of exactly the planned extent) or an in-place one.
    fn compute_step(&self, i: usize, target: &mut Option<Object>) -> Result<(), RenderError> {
        let step = &self.seq.steps()[i];
        let ctx = KernelContext { scale: self.seq.scale(), bounds: self.meta.bounds[i], stop: self.stop.clone() };
        match step.op.effect() {
            Effect::Create(_) => {
                let extent = self.meta.plan.extent(i);
                // The plan accepted exactly this extent; anything else is a bug, and must not
                // turn into an unplanned allocation.
                if extent.bytes() > self.meta.plan.step_bytes(i) {
                    return Err(RenderError::Internal(format!("step #{}: extent {extent} exceeds the plan", i + 1)));
                }
                let mut made = allocate(extent)?;
                let inputs = step.args.iter().map(|s| self.slot(i, *s)).collect::<Result<Vec<_>, _>>()?;
                self.kernel(i, &ctx, &mut made, &inputs).map_err(|e| e.at_step(step.location))?;
                *target = Some(made);
                Ok(())
            }
            Effect::Modify => {
                let object = target.as_mut().ok_or_else(|| self.missing(i, step.ret))?;
                let self_copy = step.args[1..].contains(&step.ret).then(|| object.clone());
                let inputs = self.modify_inputs(i, self_copy.as_ref()).map_err(|e| e.at_step(step.location))?;
                self.kernel(i, &ctx, object, &inputs).map_err(|e| e.at_step(step.location))
            }
        }
    }

    /// A run of row-local steps on one map, band by band (see [`Renderer::advance`]): a new map
    /// built band by band, or `target` updated in place.
    fn compute_fused(&self, first: usize, len: usize, target: &mut Option<Object>) -> Result<(), RenderError> {
        let steps = &self.seq.steps()[first..first + len];
        let extent = self.meta.plan.extent(first).rect();
        let create = matches!(steps[0].op.effect(), Effect::Create(_));
        if create && self.meta.plan.extent(first).bytes() > self.meta.plan.step_bytes(first) {
            return Err(RenderError::Internal(format!("step #{}: extent {extent} exceeds the plan", first + 1)));
        }
        let scale = self.seq.scale();
        let mut inputs: Vec<Vec<&Object>> = Vec::with_capacity(len);
        for (k, step) in steps.iter().enumerate() {
            let args = if create && k == 0 { &step.args[..] } else { &step.args[1..] };
            inputs.push(args.iter().map(|s| self.slot(first, *s)).collect::<Result<Vec<_>, _>>()?);
        }
        let contexts: Vec<KernelContext> = (first..first + len)
            .map(|j| KernelContext { scale, bounds: self.meta.bounds[j], stop: self.stop.clone() })
            .collect();
        let run_band = |band: &mut HeightMap| -> Result<(), RenderError> {
            let mut object = Object::Map(std::mem::replace(band, HeightMap::empty()));
            let result = crate::rows::serially(|| {
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
        let rows = crate::rows::band_rows(extent.width as usize);
        if create {
            *target = Some(Object::Map(HeightMap::try_from_bands(extent, rows, None, run_band)?));
            Ok(())
        } else {
            let object = target.as_mut().ok_or_else(|| self.missing(first, steps[0].ret))?;
            object.as_map_mut()?.update_by_bands(rows, run_band)
        }
    }

    /// A fused pass creating a map whose result takes over the buffer of a map covering its
    /// extent that the pass reads for the last time, on its own rows only (`fusion.rs`), passed
    /// in `target`: each band is computed into scratch from that map's rows and then written over
    /// them; at the end the rows are moved together in place. On failure the buffer is half
    /// written and dropped: the render stops there, so nobody reads it.
    fn compute_taking_over(&self, first: usize, len: usize, target: &mut Option<Object>) -> Result<(), RenderError> {
        let steps = &self.seq.steps()[first..first + len];
        let extent = self.meta.plan.extent(first).rect();
        let Some(taken) = self.meta.plan.taken_over_buffer(first) else {
            return Err(RenderError::Internal(format!("step #{}: no buffer to take over", first + 1)));
        };
        // A map that cannot take the pass stays where it was (the caller puts it back).
        if !matches!(target, Some(Object::Map(map)) if map.rect().contains_rect(&extent)) {
            return Err(RenderError::Internal(format!("step #{}: slot {taken} cannot take the pass", first + 1)));
        }
        let Some(Object::Map(mut buffer)) = target.take() else {
            return Err(RenderError::Internal(format!("step #{}: slot {taken} cannot take the pass", first + 1)));
        };
        let scale = self.seq.scale();
        // Each step's inputs, `None` where it reads the taken-over map (its band is passed).
        let mut inputs: Vec<Vec<Option<&Object>>> = Vec::with_capacity(len);
        for (k, step) in steps.iter().enumerate() {
            let args = if k == 0 { &step.args[..] } else { &step.args[1..] };
            inputs.push(
                args.iter()
                    .map(|s| if *s == taken { Ok(None) } else { self.slot(first, *s).map(Some) })
                    .collect::<Result<Vec<_>, _>>()?,
            );
        }
        let contexts: Vec<KernelContext> = (first..first + len)
            .map(|j| KernelContext { scale, bounds: self.meta.bounds[j], stop: self.stop.clone() })
            .collect();
        let rows = crate::rows::band_rows(buffer.width());
        buffer.update_by_bands(rows, |band| {
            let ys = band.rect().y_interval().intersect(&extent.y_interval());
            let part = Rect::new(extent.x, ys.start, extent.width, ys.length);
            if part.is_empty() {
                return Ok(());
            }
            let old = Object::Map(std::mem::replace(band, HeightMap::empty()));
            let mut object = Object::Map(HeightMap::try_zeroed(part)?);
            let result = crate::rows::serially(|| {
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
        })?;
        *target = Some(Object::Map(buffer.into_cut_out(extent)?));
        Ok(())
    }

    /// A streamed pass (`fusion.rs`): steps `first..first + len - 1` make a map that the last step
    /// (its consumer) reads for the last time; the consumer's target is updated band by band, each
    /// band of the streamed map being computed by the chain just before the consumer reads it.
    fn compute_streamed(&self, first: usize, len: usize, target: &mut Option<Object>) -> Result<(), RenderError> {
        let consumer = first + len - 1;
        let steps = &self.seq.steps()[first..=consumer];
        let (chain, last) = steps.split_at(len - 1);
        let last = &last[0];
        let made = chain[0].ret;
        let made_extent = self.meta.plan.extent(first).rect();
        let scale = self.seq.scale();
        let mut chain_inputs: Vec<Vec<&Object>> = Vec::with_capacity(chain.len());
        for (k, step) in chain.iter().enumerate() {
            let args = if k == 0 { &step.args[..] } else { &step.args[1..] };
            chain_inputs.push(args.iter().map(|s| self.slot(first, *s)).collect::<Result<Vec<_>, _>>()?);
        }
        // The consumer's inputs, `None` where it reads the streamed map.
        let last_inputs: Vec<Option<&Object>> = last.args[1..]
            .iter()
            .map(|s| if *s == made { Ok(None) } else { self.slot(first, *s).map(Some) })
            .collect::<Result<Vec<_>, _>>()?;
        let contexts: Vec<KernelContext> = (first..=consumer)
            .map(|j| KernelContext { scale, bounds: self.meta.bounds[j], stop: self.stop.clone() })
            .collect();
        let map = target.as_mut().ok_or_else(|| self.missing(first, last.ret))?.as_map_mut()?;
        let width = (map.rect().width.max(made_extent.width)) as usize;
        map.update_by_bands(crate::rows::band_rows(width), |band| {
            // The streamed map's whole rows meeting this band, computed by the chain.
            let ys = band.rect().y_interval().intersect(&made_extent.y_interval());
            let part = Rect::new(made_extent.x, ys.start, made_extent.width, ys.length);
            let mut streamed = Object::Map(HeightMap::try_zeroed(part)?);
            let mut object = Object::Map(std::mem::replace(band, HeightMap::empty()));
            let result = crate::rows::serially(|| {
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
    }
}

/// Plans, checks and renders a whole sequence; returns the yielded maps by name.
pub fn render(seq: RenderingSequence, config: &RenderConfig) -> Result<BTreeMap<String, HeightMap>, RenderError> {
    let mut renderer = Renderer::new(seq, config)?;
    renderer.run()?;
    Ok(renderer.into_outputs())
}
