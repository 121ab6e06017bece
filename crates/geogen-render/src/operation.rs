//! The [`Operation`] trait: one map operation is one unit.
//!
//! An operation is a struct holding its *constant* parameters (heights, points, seeds, radii, all
//! known after simulation) that declares, in one place:
//! * its script-facing **name** and **argument kinds** (the object slots it reads),
//! * its **effect**: it either creates a new object or modifies `args[0]` in place,
//! * its **bounds rule** ([`Operation::required_bounds`]): given the rectangle `B` this step must
//!   produce exactly, the rectangle each argument must provide exactly,
//! * its **result extent** (the rectangle the object has after the step),
//! * its **extra memory** (scratch beyond the live objects), counted by the memory plan,
//! * its **kernel** ([`Operation::render`]).
//!
//! The contract that makes tile-exactness work: if every argument is exact on its required bounds,
//! the kernel's output must be exact on `B` (i.e. equal to what an infinitely large render would give
//! there), and it must be computed without scheduling-dependent reductions. Pixels of the result
//! extent outside `B` may be anything (they are never read by anyone who needs them exactly).

use std::fmt;

use crate::error::RenderError;
use crate::geometry::{Interval, Rect};
use crate::raster::Object;
use crate::sequence::Yield;

/// What an object slot holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    Map,
    Profile,
}

/// Whether a step creates a new object or modifies its first argument in place.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Returns a new object of this kind in the next new slot.
    Create(ObjectKind),
    /// Modifies `args[0]`, which is also the return slot.
    Modify,
}

/// Rendering bounds of a step: a rectangle for maps, an interval for profiles.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Bounds {
    Map(Rect),
    Profile(Interval),
}

impl Bounds {
    pub fn empty(kind: ObjectKind) -> Bounds {
        match kind {
            ObjectKind::Map => Bounds::Map(Rect::EMPTY),
            ObjectKind::Profile => Bounds::Profile(Interval::EMPTY),
        }
    }

    pub fn kind(&self) -> ObjectKind {
        match self {
            Bounds::Map(_) => ObjectKind::Map,
            Bounds::Profile(_) => ObjectKind::Profile,
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            Bounds::Map(r) => r.is_empty(),
            Bounds::Profile(i) => i.is_empty(),
        }
    }

    /// Union (hull); `None` if the kinds differ.
    pub fn combine(&self, other: &Bounds) -> Option<Bounds> {
        match (self, other) {
            (Bounds::Map(a), Bounds::Map(b)) => Some(Bounds::Map(a.combine(b))),
            (Bounds::Profile(a), Bounds::Profile(b)) => Some(Bounds::Profile(a.combine(b))),
            _ => None,
        }
    }

    /// The rectangle, or empty for a profile.
    pub fn rect(&self) -> Rect {
        match self {
            Bounds::Map(r) => *r,
            Bounds::Profile(_) => Rect::EMPTY,
        }
    }

    /// Pixel count (saturating).
    pub fn pixels(&self) -> u64 {
        match self {
            Bounds::Map(r) => r.area(),
            Bounds::Profile(i) => i.length,
        }
    }

    /// Bytes an `f32` object of this extent occupies (saturating).
    pub fn bytes(&self) -> u64 {
        self.pixels().saturating_mul(4)
    }
}

impl fmt::Display for Bounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bounds::Map(r) => r.fmt(f),
            Bounds::Profile(i) => i.fmt(f),
        }
    }
}

/// What bounds rules and memory estimates may depend on besides the operation's own parameters.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct OpContext {
    /// Render scale (physical pixels per logical unit).
    pub scale: f64,
}

/// A grid of its own: `rect` in the physical pixels of `scale` (pixels per logical unit), whatever
/// the render's scale and rectangle.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Grid {
    pub rect: Rect,
    pub scale: f64,
}

/// What an operation solves once before its kernel runs (`solve.rs`): some of its map arguments are
/// read on a grid of their own (the whole map, or a large window of an infinite one, at a
/// resolution fixed in map units), the operation's [`solve`](Operation::solve) turns them into a
/// [`Solution`], and its kernel ([`render_solved`](Operation::render_solved)) reads the solutions
/// at the render's scale.
#[derive(Clone, Debug, PartialEq)]
pub struct SolveNeed {
    pub grid: Grid,
    /// The arguments read on the grid (indices into [`Operation::arg_kinds`], maps only). The bounds
    /// rule still says what each argument must provide at the render's scale (nothing, for an
    /// argument only the solve reads).
    pub grid_args: Vec<usize>,
    /// Bytes the solution holds while it is kept.
    pub solution_bytes: u64,
    /// Bytes the solve needs besides its grid inputs and its solution, while it runs.
    pub scratch_bytes: u64,
    /// Everything besides the grid inputs that determines the solution, as text (the solve's
    /// parameters, floats printed exactly): steps whose needs agree on it and on the grid inputs
    /// share one solution (`Drainage` asked for its rivers and for its heights solves once).
    pub identity: String,
}

/// The result of an operation's whole-map solve, shared by every render that needs it.
pub type Solution = std::sync::Arc<dyn std::any::Any + Send + Sync>;

/// What a kernel gets besides its objects.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelContext {
    pub scale: f64,
    /// The step's own rendering bounds `B` (never empty: steps with empty bounds are skipped).
    pub bounds: Bounds,
    /// Whether the render has been given up: a kernel whose step takes long asks it as it goes
    /// and may return early (see `stop.rs`).
    pub stop: crate::StopSignal,
}

impl KernelContext {
    /// The context of a step at `scale` over `bounds`, never stopped.
    pub fn new(scale: f64, bounds: Bounds) -> KernelContext {
        KernelContext { scale, bounds, stop: crate::StopSignal::default() }
    }
}

/// One map operation. See the module docs for the contract.
pub trait Operation: Send + Sync + fmt::Debug {
    /// Script-facing name, e.g. `"HeightMap.Blur"`.
    fn name(&self) -> &str;

    /// Kinds of the argument slots, in order. For [`Effect::Modify`] the first is the object
    /// modified.
    fn arg_kinds(&self) -> &[ObjectKind];

    fn effect(&self) -> Effect;

    /// The constant parameters as the listing shows them, e.g. `"20"`.
    fn describe_params(&self) -> String {
        String::new()
    }

    /// The bounds rule: given this step's own bounds `own` (non-empty), the bounds each argument
    /// must provide, one per argument. The default ("every argument needs B") suits pointwise and
    /// map-map operations; operations that read neighbours (Blur) or mix kinds must override it.
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        let _ = ctx;
        vec![own; self.arg_kinds().len()]
    }

    /// The extent of the resulting object, given the extents of the arguments (empty for
    /// arguments that were never rendered). Default: a new object covers exactly `own`; an
    /// in-place step keeps its object's extent.
    fn result_extent(&self, own: Bounds, arg_extents: &[Bounds], ctx: &OpContext) -> Bounds {
        let _ = ctx;
        match self.effect() {
            Effect::Create(_) => own,
            Effect::Modify => arg_extents.first().copied().unwrap_or(own),
        }
    }

    /// The **support rule** (`support.rs`): given the supports of the arguments (`None` where
    /// unknown), where the result may differ from one constant height and which height that is.
    /// Default `None` (anything, anywhere), which is always right. A rule must be exact: every
    /// pixel outside the rectangle must get exactly the bits of the background, at every scale;
    /// `tile_contract` compares random renders with and without the support pass bit for bit.
    fn support(&self, args: &[crate::support::Facts], ctx: &OpContext) -> Option<crate::support::Support> {
        let _ = (args, ctx);
        None
    }

    /// The **range rule**: given what is known of the arguments, bounds of every height of the
    /// result. Default [`Range::FULL`](crate::support::Range::FULL), which every map satisfies.
    /// A rule must hold for the bits the kernel computes, rounding included.
    fn range(&self, args: &[crate::support::Facts], ctx: &OpContext) -> crate::support::Range {
        let _ = (args, ctx);
        crate::support::Range::FULL
    }

    /// Whether the operation is **pointwise** in place: each pixel of the result depends only on
    /// the same pixel of the target and of the other map arguments, the same way everywhere. The
    /// support pass then derives its support from its arguments' (`support::pointwise_support`:
    /// constant wherever they all are, with the background its kernel gives theirs) when
    /// [`Operation::support`] names none. Default `false`.
    fn is_pointwise(&self) -> bool {
        false
    }

    /// For an in-place operation: given the supports of the arguments, the region outside which the
    /// kernel leaves every pixel of its target with exactly the bits it had (`Unify` with a map
    /// that is −1 outside a rectangle changes nothing outside it). Default `None`: any pixel may
    /// change. The renderer then computes only the step's bounds within the region and reads the
    /// other arguments there only, so the kernel must also leave the target alone wherever the
    /// other arguments' extents do not reach (the combiners work on the intersection of extents).
    fn changes_only(&self, args: &[crate::support::Facts], ctx: &OpContext) -> Option<Rect> {
        let _ = (args, ctx);
        None
    }

    /// Bytes of scratch memory the kernel needs beyond the live objects, given the extent of the
    /// object it writes.
    fn extra_memory(&self, extent: Bounds, ctx: &OpContext) -> u64 {
        let _ = (extent, ctx);
        0
    }

    /// Whether the kernel is **row-local**: for a map target, rendering any band of whole rows of
    /// the target (the same columns, a run of consecutive rows, as a map of its own) gives exactly
    /// the pixels the render of the whole target gives on those rows, and depends on nothing else
    /// of the target; other inputs are read by absolute coordinates. Pointwise filters, map-map
    /// combiners, noise layers and coordinate generators are; anything reading a neighbourhood
    /// (Blur) or resizing its target is not.
    ///
    /// The renderer fuses consecutive row-local steps on one map (`Noise`: `Flat` and its layers;
    /// chains of `Add`, `Multiply`, ...) into one pass over cache-sized bands, calling each step's
    /// [`render`](Operation::render) on the band in sequence order, so every pixel goes through
    /// the same arithmetic as unfused and the bytes are the same; only the memory traffic drops.
    /// Default `false`: declaring it wrongly breaks tiles, so `tile_contract` tests every operation
    /// fused and unfused.
    fn is_row_local(&self) -> bool {
        false
    }

    /// Whether a row-local kernel reads its map inputs on the target's own rows only: row `y` of
    /// the target depends on row `y` of each map input and nothing else of it (pointwise and
    /// map-map combiners: `AddMap`, `Combine`, `Intersect`, ...). Then an input that dies at this
    /// step and is made by a chain of row-local steps just before it can be computed band by band
    /// inside this step's pass and never held whole (see `fusion.rs`). Default `false`; declaring
    /// it wrongly breaks the bytes, which `tile_contract` checks fused against unfused.
    fn reads_inputs_on_its_rows(&self) -> bool {
        false
    }

    /// Whether the step's result is a copy of its one map input on the result's extent (`Clone`).
    /// Together with [`replaces_target`](Operation::replaces_target) it lets the renderer skip
    /// the copy (see `plan.rs`, elided copies). Default `false`.
    fn is_copy(&self) -> bool {
        false
    }

    /// Whether this in-place operation only reads its target and replaces it with a new object
    /// whose extent does not depend on the target's (the affine transforms, Rescale, Distort): its
    /// [`render`](Operation::render) is `*target = render_replacing(ctx, target, inputs)`. When
    /// such a step follows a [copy](Operation::is_copy) of a map into its target, the renderer
    /// calls [`render_replacing`](Operation::render_replacing) on the original and never makes the
    /// copy: the pixels in the step's bounds are the same, since the original covers everything
    /// the copy held. Default `false`.
    fn replaces_target(&self) -> bool {
        false
    }

    /// For an operation that [replaces its target](Operation::replaces_target): the new object,
    /// made from `source` read as the target would be.
    fn render_replacing(
        &self,
        ctx: &KernelContext,
        source: &Object,
        inputs: &[&Object],
    ) -> Result<Object, RenderError> {
        let _ = (ctx, source, inputs);
        Err(RenderError::Internal(format!("{} does not replace its target", self.name())))
    }

    /// The kernel. `target` is the object written: for [`Effect::Create`] a zero-filled object of
    /// the result extent, for [`Effect::Modify`] the object of `args[0]`. `inputs` are the other
    /// arguments, in order (all of them for `Create`, `args[1..]` for `Modify`).
    fn render(&self, ctx: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError>;

    /// What the operation solves over a whole map (or over large windows of an infinite one)
    /// before its kernel runs, for its bounds `own` (`solve.rs`): for each need, the engine renders
    /// the [grid arguments](SolveNeed::grid_args) on their grid (each argument's steps again, at
    /// the grid's scale) and calls [`solve`](Operation::solve) once per run and script; then it
    /// calls [`render_solved`](Operation::render_solved) with the solutions, in the order of the
    /// needs, instead of [`render`](Operation::render). Default: none.
    fn solve_needs(&self, own: Bounds, ctx: &OpContext) -> Vec<SolveNeed> {
        let _ = (own, ctx);
        Vec::new()
    }

    /// The whole-map solve of one need: `grid_inputs` are the [grid arguments](SolveNeed::grid_args)
    /// rendered over the grid's rectangle, in that order. It must be a deterministic function of
    /// the need and the inputs (the same bits on every thread count and machine): every tile of
    /// every render reads it.
    fn solve(&self, need: &SolveNeed, grid_inputs: &[&crate::raster::HeightMap]) -> Result<Solution, RenderError> {
        let _ = (need, grid_inputs);
        Err(RenderError::Internal(format!("{} has no whole-map solve", self.name())))
    }

    /// The kernel of an operation with whole-map solves: as [`render`](Operation::render), with
    /// the solutions of its needs, in their order.
    fn render_solved(
        &self,
        ctx: &KernelContext,
        solutions: &[Solution],
        target: &mut Object,
        inputs: &[&Object],
    ) -> Result<(), RenderError> {
        let _ = (ctx, solutions, target, inputs);
        Err(RenderError::Internal(format!("{} has no whole-map solve", self.name())))
    }

    /// Yield steps are special to the passes (they seed the bounds and produce outputs).
    fn as_yield(&self) -> Option<&Yield> {
        None
    }
}

/// The `Arc<dyn Operation>` every step holds.
pub type OpRef = std::sync::Arc<dyn Operation>;
