//! Diagnostics shared by every stage of the geogen pipeline.
//!
//! Every error a user can cause is a [`Diagnostic`]: a GGE [`ErrorCode`], a message, the [`Span`] of
//! source it concerns, and an optional hint. The codes are listed once, in [`codes`], which is also the
//! source of `docs/error-codes.md`.

// This crate has no unsafe code, and keeps it that way.
#![forbid(unsafe_code)]

pub mod codes;
mod list;
mod render;
mod source;

pub use codes::{ErrorCode, ErrorInfo, Stage};
pub use list::{Diagnostics, MAX_DIAGNOSTICS};
pub use render::{escape_text, render_diagnostic, render_diagnostics, RenderOptions};
pub use source::{LineCol, SourceFile};

/// A half-open byte range `[start, end)` in one source file.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub const fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }

    /// An empty span at `offset`, used for "something is missing here".
    pub const fn at(offset: u32) -> Span {
        Span { start: offset, end: offset }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    pub fn len(self) -> u32 {
        self.end - self.start
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// One problem found in a script, its parameters, or its rendering.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub code: ErrorCode,
    pub message: String,
    /// Where in the script; `None` for problems that are not tied to source text (a bad CLI parameter).
    pub span: Option<Span>,
    /// One line telling the user what to do about it.
    pub hint: Option<String>,
    /// Secondary locations, e.g. "first defined here".
    pub labels: Vec<(Span, String)>,
}

impl Diagnostic {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Diagnostic {
        Diagnostic { code, message: message.into(), span: None, hint: None, labels: Vec::new() }
    }

    pub fn at(code: ErrorCode, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(code, message).with_span(span)
    }

    pub fn with_span(mut self, span: Span) -> Diagnostic {
        self.span = Some(span);
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_label(mut self, span: Span, text: impl Into<String>) -> Diagnostic {
        self.labels.push((span, text.into()));
        self
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Diagnostic {}
