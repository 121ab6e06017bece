//! Whole-map solves: steps whose result at a pixel depends on the whole of a finite map.
//!
//! A river's catchment can span the map, so an operation that routes water over it (drainage)
//! cannot declare a finite margin as its bounds rule: every tile would need the whole map. It can
//! need the whole map at a *coarse* resolution, though, fixed in map units: a grid whose rectangle
//! and scale ([`Grid`]) do not depend on the render's scale, rectangle, tile, block or shard. Such
//! an operation declares a [`SolveNeed`]: the grid and which of its map arguments it reads there.
//!
//! The engine then renders those arguments a second time, on the grid: the steps they depend on
//! are copied into a sequence of their own at the grid's scale, ending with a yield of each grid
//! argument over the grid's rectangle, and rendered like any sequence (planned, bounded, exact).
//! This is possible because every operation evaluates its pixels at logical coordinates, at any
//! scale: a map of 100 000² map units feeds a 1024² solve without ever being rendered at full
//! resolution. The operation's [`solve`](crate::Operation::solve) turns the grid inputs into a
//! [`Solution`], and its kernel ([`render_solved`](crate::Operation::render_solved)) reads the
//! solution at the render's own scale over the step's bounds.
//!
//! Why tiles stay exact: the grid render is a function of the copied steps, the grid and nothing
//! else (not of the render's rectangle or scale), and the solve is deterministic, so every render
//! of the script sees the same solution, bit for bit; the kernel is then an ordinary kernel of
//! its bounds. The memory plan counts, at the step, the grid render's peak or the grid inputs with
//! the solve's scratch and solution, whichever is more, and the solution from the step that makes
//! it to the last step of the render reading it again.
//!
//! Solving is the dear part (seconds for a large grid), so it is done once per run: a
//! [`SolveCache`] given to every render of one script (`geogen tiles`' blocks, a streamed
//! render's strips, a tile server's tiles) keeps solutions by a key naming everything that
//! determines them: the copied steps (each operation with all its parameters, its `Debug`, which
//! prints floats exactly, and its arguments by position), the grid, and the solving operation's
//! name and [identity](crate::SolveNeed::identity) (what besides its inputs decides the solution). The
//! first render to need a solution claims it and computes it; another that needs it meanwhile
//! waits for it. A render computing one solution may need another (a solve whose grid inputs
//! themselves go through a solve); it never waits for one it depends on itself, because a
//! solution's key includes every step it depends on, so the waits follow the steps' order and
//! cannot form a cycle. A claim given up (a failed or abandoned solve) is withdrawn, and a
//! waiting render claims the solution in its turn. Input rasters' pixels are not in the key: a
//! cache serves one set of inputs.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::error::RenderError;
use crate::graph::RenderingGraph;
use crate::operation::{Bounds, Effect, ObjectKind, Solution, SolveNeed};
use crate::raster::HeightMap;
use crate::renderer::RenderMetadata;
use crate::sequence::{RenderingSequence, Slot};

/// How deeply solves may nest (a solve whose grid inputs go through a solve, ...): GGE3003 beyond.
pub const MAX_SOLVE_NESTING: usize = 4;

/// The most grid cells one solve may have unless the host sets another limit
/// ([`RenderConfig::max_solve_cells`](crate::RenderConfig::max_solve_cells)): GGE3002 beyond.
/// 2²⁵ cells hold a grid of 4097 × 4097 nodes (a 4096² solve with its closing row and column) or
/// 8193 × 4096.
pub const DEFAULT_MAX_SOLVE_CELLS: u64 = 1 << 25;

/// A step's solve, planned before anything is rendered.
#[derive(Clone, Debug)]
pub struct SolvePlan {
    pub need: SolveNeed,
    /// The grid render: the steps the grid arguments depend on, at the grid's scale, each grid
    /// argument yielded over the grid's rectangle as `grid input N`.
    pub sequence: RenderingSequence,
    /// Its passes and memory plan.
    pub meta: Arc<RenderMetadata>,
    /// What makes two solves the same (module docs).
    pub key: String,
    /// Bytes the step needs for the solve beyond its own objects: the grid render's peak, or the
    /// grid inputs with the solve's scratch and its solution, whichever is more.
    pub solving_bytes: u64,
}

impl SolvePlan {
    /// The grid cells of this solve and of every solve nested in its grid render, largest first.
    fn largest_grid(&self) -> u64 {
        let own = self.need.grid.rect.area();
        let nested = largest_grid(&self.meta.solves).map_or(0, |(_, cells)| cells);
        own.max(nested)
    }
}

/// The name of the `n`-th grid input's yield in a grid render.
fn grid_input_name(n: usize) -> String {
    format!("grid input {n:04}")
}

/// Plans the solves of every step that declares some and is needed (non-empty bounds), in the order
/// of its needs. `depth` is how many grid renders this sequence is inside.
pub(crate) fn plan_solves(
    seq: &RenderingSequence,
    graph: &RenderingGraph,
    bounds: &[Bounds],
    support_pass: bool,
    depth: usize,
) -> Result<Vec<Vec<Arc<SolvePlan>>>, RenderError> {
    let ctx = crate::operation::OpContext { scale: seq.scale() };
    let mut plans = vec![Vec::new(); seq.len()];
    for (i, step) in seq.steps().iter().enumerate() {
        if bounds[i].is_empty() {
            continue;
        }
        for need in step.op.solve_needs(bounds[i], &ctx) {
            let invalid = |reason: String| {
                RenderError::Internal(format!("step #{} `{}`: its solve {reason}", i + 1, step.op.name()))
            };
            let kinds = step.op.arg_kinds();
            if need.grid_args.is_empty() || need.grid_args.iter().any(|&j| kinds.get(j) != Some(&ObjectKind::Map)) {
                return Err(invalid(format!("reads arguments {:?}, which are not all maps", need.grid_args)));
            }
            if need.grid.rect.is_empty() || !need.grid.rect.is_valid() {
                return Err(invalid(format!("has the grid {}, which is empty or out of range", need.grid.rect)));
            }
            if depth >= MAX_SOLVE_NESTING {
                return Err(RenderError::SolveNesting {
                    limit: MAX_SOLVE_NESTING,
                    step: i + 1,
                    name: step.op.name().to_string(),
                    location: step.location,
                });
            }
            let sequence = grid_sequence(seq, graph, i, &need)?;
            let meta = RenderMetadata::calculate_nested(&sequence, support_pass, depth + 1)?;
            let key = solve_key(&sequence, &meta, step, &need);
            let inputs = need.grid.rect.area().saturating_mul(4).saturating_mul(need.grid_args.len() as u64);
            let solving =
                inputs.saturating_add(need.scratch_bytes).saturating_add(need.solution_bytes).max(meta.plan.peak());
            plans[i].push(Arc::new(SolvePlan { need, sequence, meta: Arc::new(meta), key, solving_bytes: solving }));
        }
    }
    Ok(plans)
}

/// The bytes the solves add to each step's need (see the module docs): at the step making
/// solutions, their solving bytes; at a later step reading the same solution, and at every step in
/// between, the solution's bytes.
pub(crate) fn solve_bytes(plans: &[Vec<Arc<SolvePlan>>]) -> Vec<u64> {
    let mut extra = vec![0u64; plans.len()];
    let mut spans: BTreeMap<&str, (usize, usize, u64)> = BTreeMap::new();
    for (i, step) in plans.iter().enumerate() {
        for plan in step {
            spans.entry(plan.key.as_str()).and_modify(|span| span.1 = i).or_insert((i, i, plan.need.solution_bytes));
            if spans[plan.key.as_str()].0 == i {
                extra[i] = extra[i].saturating_add(plan.solving_bytes);
            }
        }
    }
    for (first, last, bytes) in spans.values() {
        for e in &mut extra[first + 1..=*last] {
            *e = e.saturating_add(*bytes);
        }
    }
    extra
}

/// The most grid cells any solve of these plans has, nested ones included, and its step.
pub(crate) fn largest_grid(plans: &[Vec<Arc<SolvePlan>>]) -> Option<(usize, u64)> {
    // The first step of the largest grid (`max_by_key` keeps the last of equals).
    plans
        .iter()
        .enumerate()
        .flat_map(|(i, step)| step.iter().map(move |p| (i, p.largest_grid())))
        .rev()
        .max_by_key(|(_, c)| *c)
}

/// The grid render of step `i`'s grid arguments: every step they depend on (yields left out), in
/// order, at the grid's scale, then a yield of each over the grid's rectangle.
fn grid_sequence(
    seq: &RenderingSequence,
    graph: &RenderingGraph,
    i: usize,
    need: &SolveNeed,
) -> Result<RenderingSequence, RenderError> {
    let steps = seq.steps();
    let mut wanted = vec![false; i];
    for &j in &need.grid_args {
        wanted[graph.producers(i)[j]] = true;
    }
    for k in (0..i).rev() {
        if wanted[k] {
            for &p in graph.producers(k) {
                wanted[p] = true;
            }
        }
    }
    let mut sub = RenderingSequence::new(need.grid.scale)?.with_max_steps(seq.max_steps());
    let mut slots: Vec<Option<Slot>> = vec![None; seq.slot_count()];
    let copied = |slots: &[Option<Slot>], slot: Slot| {
        slots[slot.index()]
            .ok_or_else(|| RenderError::Internal(format!("step #{}: the grid render lacks slot {slot}", i + 1)))
    };
    for (k, step) in steps[..i].iter().enumerate() {
        if !wanted[k] || step.op.as_yield().is_some() {
            continue;
        }
        // A copy whose original no later copied step changes is the original itself: leaving it
        // out makes `m.Drainage()` and `HeightMap.Clone(m).Drainage()` the same solve.
        if step.op.is_copy() && step.args.len() == 1 {
            let source = step.args[0];
            let changed_later = steps[k + 1..i]
                .iter()
                .enumerate()
                .any(|(d, later)| wanted[k + 1 + d] && later.ret == source && later.op.effect() == Effect::Modify);
            if !changed_later {
                slots[step.ret.index()] = Some(copied(&slots, source)?);
                continue;
            }
        }
        let args = step.args.iter().map(|s| copied(&slots, *s)).collect::<Result<Vec<_>, _>>()?;
        let ret = match step.op.effect() {
            Effect::Create(_) => sub.next_slot(),
            Effect::Modify => args[0],
        };
        sub.push(step.op.clone(), args, ret, step.location)?;
        slots[step.ret.index()] = Some(ret);
    }
    for (n, &j) in need.grid_args.iter().enumerate() {
        let slot = copied(&slots, steps[i].args[j])?;
        sub.push_yield(slot, &grid_input_name(n), need.grid.rect, steps[i].location)?;
    }
    Ok(sub)
}

/// The key of a solve: the grid render's steps (each operation's `Debug` with its arguments by
/// position), the grid and the solving operation.
fn solve_key(sub: &RenderingSequence, meta: &RenderMetadata, step: &crate::Step, need: &SolveNeed) -> String {
    let mut key = format!(
        "grid {} scale {:#x} args {:?}\nsolver {} {}\n",
        need.grid.rect,
        need.grid.scale.to_bits(),
        need.grid_args,
        step.op.name(),
        need.identity
    );
    for (j, s) in sub.steps().iter().enumerate() {
        let args: Vec<String> = meta.graph.producers(j).iter().map(|p| p.to_string()).collect();
        key.push_str(&format!("{:?} <- {:?} ({})\n", s.op.effect(), s.op, args.join(" ")));
    }
    key
}

/// The grid inputs a grid render yielded, in the order of the grid arguments.
pub(crate) fn grid_inputs(
    mut outputs: BTreeMap<String, HeightMap>,
    count: usize,
) -> Result<Vec<HeightMap>, RenderError> {
    (0..count)
        .map(|n| {
            outputs
                .remove(&grid_input_name(n))
                .ok_or_else(|| RenderError::Internal(format!("the grid render did not yield input {n}")))
        })
        .collect()
}

/// Solutions shared by the renders of one run (see the module docs). Cloning shares the cache.
#[derive(Clone)]
pub struct SolveCache {
    inner: Arc<CacheInner>,
}

struct CacheInner {
    entries: Mutex<CacheEntries>,
    changed: Condvar,
}

struct CacheEntries {
    list: Vec<CacheEntry>,
    /// Bytes the finished entries may hold together.
    capacity: u64,
    held: u64,
    next_id: u64,
    /// Solves computed (for statistics and tests).
    computed: u64,
    /// A counter of uses, for dropping the least recently used entry first.
    clock: u64,
}

struct CacheEntry {
    id: u64,
    key: String,
    bytes: u64,
    solution: Option<Solution>,
    last_used: u64,
}

impl std::fmt::Debug for SolveCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries = self.lock();
        write!(f, "SolveCache({} entries, {} of {} bytes)", entries.list.len(), entries.held, entries.capacity)
    }
}

/// Two handles are equal when they share one cache.
impl PartialEq for SolveCache {
    fn eq(&self, other: &SolveCache) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for SolveCache {}

/// Withdraws a claim unless it was fulfilled (a failed solve, or a panic unwinding through it).
struct Claim<'a> {
    cache: &'a SolveCache,
    id: Option<u64>,
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.cache.lock().list.retain(|e| e.id != id);
            self.cache.inner.changed.notify_all();
        }
    }
}

impl SolveCache {
    /// An empty cache keeping solutions of up to `capacity` bytes in all.
    pub fn new(capacity: u64) -> SolveCache {
        SolveCache {
            inner: Arc::new(CacheInner {
                entries: Mutex::new(CacheEntries {
                    list: Vec::new(),
                    capacity,
                    held: 0,
                    next_id: 0,
                    computed: 0,
                    clock: 0,
                }),
                changed: Condvar::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, CacheEntries> {
        self.inner.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Bytes the kept solutions hold.
    pub fn held_bytes(&self) -> u64 {
        self.lock().held
    }

    /// How many solutions are kept.
    pub fn len(&self) -> usize {
        self.lock().list.iter().filter(|e| e.solution.is_some()).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many solves the renders sharing this cache computed.
    pub fn solves_computed(&self) -> u64 {
        self.lock().computed
    }

    /// Drops kept solutions, least recently used first, until they hold at most `bytes` (renders
    /// holding one keep their reference until they end).
    pub fn release(&self, bytes: u64) {
        let mut entries = self.lock();
        evict(&mut entries, bytes);
    }

    /// The solution of `key`: kept, or being computed by another render (then waited for), or
    /// computed here by `compute` (and kept when `bytes` fit, dropping the least recently used).
    pub(crate) fn obtain(
        &self,
        key: &str,
        bytes: u64,
        compute: impl FnOnce() -> Result<Solution, RenderError>,
    ) -> Result<Solution, RenderError> {
        let mut entries = self.lock();
        let claim = loop {
            entries.clock += 1;
            let now = entries.clock;
            let capacity = entries.capacity;
            match entries.list.iter_mut().find(|e| e.key == key) {
                Some(CacheEntry { solution: Some(solution), last_used, .. }) => {
                    *last_used = now;
                    return Ok(solution.clone());
                }
                Some(CacheEntry { solution: None, .. }) => {
                    entries = self.inner.changed.wait(entries).unwrap_or_else(std::sync::PoisonError::into_inner);
                }
                None if bytes > capacity => break Claim { cache: self, id: None },
                None => {
                    let id = entries.next_id;
                    entries.next_id += 1;
                    entries.list.push(CacheEntry { id, key: key.to_string(), bytes, solution: None, last_used: now });
                    break Claim { cache: self, id: Some(id) };
                }
            }
        };
        entries.computed += 1;
        drop(entries);
        let mut claim = claim;
        let solution = compute()?;
        if let Some(id) = claim.id.take() {
            let mut entries = self.lock();
            let room = entries.capacity.saturating_sub(bytes);
            evict(&mut entries, room);
            if let Some(entry) = entries.list.iter_mut().find(|e| e.id == id) {
                entry.solution = Some(solution.clone());
                entries.held = entries.held.saturating_add(bytes);
            }
            drop(entries);
            self.inner.changed.notify_all();
        }
        Ok(solution)
    }
}

/// Drops finished entries, least recently used first, until they hold at most `bytes`.
fn evict(entries: &mut CacheEntries, bytes: u64) {
    while entries.held > bytes {
        let oldest = entries
            .list
            .iter()
            .enumerate()
            .filter(|(_, e)| e.solution.is_some())
            .min_by_key(|(_, e)| e.last_used)
            .map(|(k, _)| k);
        let Some(k) = oldest else { break };
        let entry = entries.list.remove(k);
        entries.held = entries.held.saturating_sub(entry.bytes);
    }
}
