//! Front end of GeoGen Script: source text to syntax tree.
//!
//! [`parse`] never fails and never panics: it returns the tree it could build together with every
//! syntax error of the file (GGE1101 to GGE1105 from the lexer, GGE1201 and GGE1314 from the parser).
//!
//! The pipeline inside is [`lexer::lex`] (text to tokens) then a recursive-descent parser (tokens
//! to [`ast::Script`]). [`dump`] renders a tree as S-expressions for tests and debugging.

// This crate has no unsafe code, and keeps it that way.
#![forbid(unsafe_code)]

pub mod ast;
pub mod dump;
pub mod lexer;
mod parser;

use geogen_diag::Diagnostics;

/// The deepest nesting the parser accepts, counting blocks, statements, brackets and operators
/// (each operator applied in a chain such as `a + b + c` counts as one level). Deeper input gets
/// one GGE1201 and the nested part is skipped. Hence any tree from [`parse`] has a depth of at
/// most a small multiple of this, and later stages may walk it recursively without overflowing
/// the stack.
pub const MAX_NESTING: u32 = 200;

/// The result of parsing one file.
#[derive(Clone, Debug)]
pub struct Parsed {
    pub script: ast::Script,
    /// The lexical and syntax errors, in source order: the first [`geogen_diag::MAX_DIAGNOSTICS`],
    /// and the number of the others. Empty means the script is well-formed.
    pub diagnostics: Diagnostics,
}

/// Parses a whole script.
pub fn parse(source: &str) -> Parsed {
    parser::parse(source)
}
