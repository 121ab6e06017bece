//! Front end of GeoGen Script: source text to syntax tree.
//!
//! [`parse`] never fails and never panics: it returns the tree it could build together with every
//! syntax error of the file (GGE1101 to GGE1105 from the lexer, GGE1201 from the parser).

pub mod ast;
pub mod lexer;
mod parser;

use geogen_diag::Diagnostic;

/// The result of parsing one file.
#[derive(Clone, Debug)]
pub struct Parsed {
    pub script: ast::Script,
    /// All lexical and syntax errors, in source order. Empty means the script is well-formed.
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses a whole script.
pub fn parse(source: &str) -> Parsed {
    parser::parse(source)
}
