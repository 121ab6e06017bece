//! geogen's renderer: the second stage of the GeoGen pipeline (thesis §3.4–3.7).
//!
//! The VM records a linear [`RenderingSequence`] of map operations. This crate then
//! 1. builds the [`RenderingGraph`] (def-use edges),
//! 2. finds where maps are constant (the **support pass**, [`Supports`]), so an in-place step that
//!    changes only part of its target computes only that part,
//! 3. propagates **rendering bounds** backwards from the yields ([`calculate_bounds`]), so each step
//!    computes exactly the rectangle somebody downstream needs (plus the margins its consumers
//!    declare),
//! 4. computes **object lifetimes** ([`Lifetimes`]) and a **memory plan** ([`MemoryPlan`]) whose
//!    peak is checked against a limit before any pixel is touched (GGE3001),
//! 5. executes the steps with data-parallel kernels ([`Renderer`]).
//!
//! It knows nothing of scripts: operations ([`Operation`]) are structs of constants, declared with
//! their script side in the standard library (`geogen-stdlib`); this crate is the engine that plans
//! and runs them.
//! See `ARCHITECTURE.md` for the tile-exactness argument.

pub mod bounds;
pub mod error;
mod fusion;
pub mod geometry;
pub mod graph;
pub mod input;
pub mod lifetimes;
pub mod operation;
pub mod pages;
pub mod plan;
pub mod raster;
pub mod renderer;
pub mod rows;
pub mod scale;
mod schedule;
pub mod sequence;
mod shared;
pub mod solve;
pub mod stop;
pub mod support;

pub use bounds::{calculate_bounds, calculate_narrowed_bounds};
pub use error::{Location, RenderError};
pub use geometry::{Interval, Rect};
pub use graph::RenderingGraph;
pub use input::InputRaster;
pub use lifetimes::Lifetimes;
pub use operation::{
    Bounds, Effect, Grid, KernelContext, ObjectKind, OpContext, OpRef, Operation, Solution, SolveNeed,
};
pub use pages::{fresh_bytes, keep_small_pages, LargePages};
pub use plan::MemoryPlan;
pub use raster::{HeightMap, HeightProfile, Object};
pub use renderer::{render, Progress, RenderConfig, RenderMetadata, Renderer, DEFAULT_MEMORY_LIMIT};
pub use sequence::{RenderingSequence, Slot, Step, Yield, DEFAULT_MAX_STEPS};
pub use shared::SharedParts;
pub use solve::{SolveCache, DEFAULT_MAX_SOLVE_CELLS};
pub use stop::StopSignal;
pub use support::{background_of, monotone_range, pointwise_support, Facts, Range, Support, Supports};
