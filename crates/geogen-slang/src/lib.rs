//! Height-Slang: the s-expression height-map language of picogen's `mkheightmap` (2008), as a
//! second front end of geogen.
//!
//! ```text
//! let program = geogen_slang::compile("(+ 0.5 ([2 LayeredNoise] x y))", &Options::default())?;
//! let h = program.eval_point(&[0.25, 0.75])?;
//! ```
//!
//! * [`syntax`]: the hand-written, character-level parser (every error a GGE81xx/82xx
//!   diagnostic with a span and a hint).
//! * [`ast`]: the tree; [`ops`]: what each operator computes.
//! * [`noise`]: picogen's value noise (MT19937 tables, lattice, filters) and the configurable
//!   functions `LayeredNoise`, `Noise`, `Layers`.
//! * [`eval`]: the compiled evaluator (row blocks for ordinary programs, an explicit stack machine
//!   for recursive ones).
//! * [`mkheightmap`]: the original command's pixel mapping, anti-aliasing, normalisation, info
//!   line and text/BMP exports.
//!
//! A program is a pure function of its coordinates: evaluate any point, row or tile from any
//! thread, in any order, and get the same bits (see `docs/height-slang.md`).

// This crate has no unsafe code, and keeps it that way.
#![forbid(unsafe_code)]

pub mod ast;
pub mod dialect;
pub mod eval;
pub mod format;
pub mod mkheightmap;
pub mod noise;
pub mod ops;
mod syntax;

use geogen_diag::Diagnostic;

pub use dialect::Dialect;
pub use eval::{EvalError, Limits, Options, Program, Workspace, BLOCK};

/// Compiles a height-map program (variables x and y).
pub fn compile(text: &str, options: &Options) -> Result<Program, Diagnostic> {
    compile_with_arity(text, 2, options)
}

/// Compiles a program of `arity` variables (1: `x` only, as persistence and level functions; 2:
/// `x` and `y`). Checks the per-point cost against `options.limits.max_point_ops` (GGE8209).
pub fn compile_with_arity(text: &str, arity: usize, options: &Options) -> Result<Program, Diagnostic> {
    let functions = std::cell::Cell::new(0);
    let program = syntax::compile_range(text, 0..text.len(), arity.clamp(1, 2), options, 0, &functions)?;
    let limit = options.limits.max_point_ops;
    if program.cost() > limit {
        let span = eval::costliest(program.ast(), limit).unwrap_or(program.ast().span);
        return Err(Diagnostic::at(
            geogen_diag::codes::GGE8209,
            span,
            format!("one point of this program costs {} operations, more than the limit of {limit}", program.cost()),
        )
        .with_hint("lower the layercount (or the nesting of configurable functions)"));
    }
    Ok(program)
}
