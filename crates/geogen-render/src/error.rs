//! Renderer errors. Every error converts into a [`geogen_diag::Diagnostic`] with its GGE code, so
//! the CLI prints them like any script error.

use geogen_diag::{codes, Diagnostic};

/// A script location (line, column), 1-based, carried by steps for messages.
pub type Location = Option<(u32, u32)>;

/// Bytes in KiB, MiB, GiB or TiB with one decimal, for people.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// "N bytes (H)", or "more than N bytes (H)" for `u64::MAX`, which is where counts saturate.
fn needed_bytes(bytes: u64) -> String {
    let more = if bytes == u64::MAX { "more than " } else { "" };
    format!("{more}{bytes} bytes ({})", human_bytes(bytes))
}

/// Formats " (line L, column C)" or nothing.
pub(crate) fn location_suffix(location: Location) -> String {
    match location {
        Some((line, column)) => format!(" (line {line}, column {column})"),
        None => String::new(),
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RenderError {
    /// GGE2504: the sequence would grow past its configured maximum length.
    #[error("the rendering sequence is longer than the limit of {limit} steps")]
    SequenceTooLong { limit: usize },

    /// A step was rejected by `push` (bad slot, wrong kind, bad yield): a bug in the caller (VM
    /// binding), reported as an internal error.
    #[error("invalid rendering step #{index} `{name}`{}: {reason}", location_suffix(*.location))]
    InvalidStep { index: usize, name: String, location: Location, reason: String },

    /// The render scale must be finite and positive.
    #[error("invalid render scale {0}")]
    InvalidScale(f64),

    /// GGE3001: the memory plan needs more than the limit.
    #[error(
        "rendering needs {} but the memory limit is {limit} bytes ({}); the peak is at step #{step} `{name}`{}",
        needed_bytes(*.need),
        human_bytes(*.limit),
        location_suffix(*.location)
    )]
    MemoryLimit { need: u64, limit: u64, step: usize, name: String, location: Location },

    /// GGE3002: a whole-map solve (`solve.rs`) on a grid of more cells than the limit.
    #[error(
        "step #{step} `{name}`{} solves the whole map on a grid of {cells} cells, more than the limit of {limit}",
        location_suffix(*.location)
    )]
    SolveGridTooLarge { cells: u64, limit: u64, step: usize, name: String, location: Location },

    /// GGE3003: whole-map solves nested more deeply than the limit (`solve.rs`).
    #[error(
        "step #{step} `{name}`{} would solve inside {limit} nested whole-map solves, more than geogen allows",
        location_suffix(*.location)
    )]
    SolveNesting { limit: usize, step: usize, name: String, location: Location },

    /// The operating system refused an allocation the plan allowed.
    #[error("could not allocate {bytes} bytes for rendering")]
    Allocation { bytes: u64 },

    /// A broken invariant inside the renderer (a bug).
    #[error("internal renderer error: {0}")]
    Internal(String),

    /// A kernel met an error of its operation's own (a Height-Slang program's recursion limit at
    /// some pixel): the diagnostic says what; the renderer adds the step's script location.
    #[error("{}{}", .diagnostic.message, location_suffix(*.location))]
    Kernel { diagnostic: Box<Diagnostic>, location: Location },
}

impl RenderError {
    pub fn code(&self) -> geogen_diag::ErrorCode {
        match self {
            RenderError::SequenceTooLong { .. } => codes::GGE2504,
            RenderError::MemoryLimit { .. } | RenderError::Allocation { .. } => codes::GGE3001,
            RenderError::SolveGridTooLarge { .. } => codes::GGE3002,
            RenderError::SolveNesting { .. } => codes::GGE3003,
            RenderError::InvalidScale(_) => codes::GGE4003,
            RenderError::InvalidStep { .. } | RenderError::Internal(_) => codes::GGE5000,
            RenderError::Kernel { diagnostic, .. } => diagnostic.code,
        }
    }

    /// This error with the script location of the step that raised it (kernel errors only).
    pub fn at_step(self, step_location: Location) -> RenderError {
        match self {
            RenderError::Kernel { diagnostic, location: None } => {
                RenderError::Kernel { diagnostic, location: step_location }
            }
            other => other,
        }
    }

    pub fn to_diagnostic(&self) -> Diagnostic {
        if let RenderError::Kernel { diagnostic, .. } = self {
            return (**diagnostic).clone();
        }
        let d = Diagnostic::new(self.code(), self.to_string());
        match self {
            RenderError::MemoryLimit { .. } => {
                d.with_hint("raise the memory limit, or render a smaller area (tiles) or at a smaller scale")
            }
            RenderError::SolveGridTooLarge { .. } => {
                d.with_hint("lower the operation's resolution (cells along the map's longer side)")
            }
            RenderError::SolveNesting { .. } => {
                d.with_hint("solve once: feed the drainage of one stage to the next as an input map instead")
            }
            RenderError::SequenceTooLong { .. } => {
                d.with_hint("the script records too many map operations; is a loop running too long?")
            }
            _ => d,
        }
    }
}

impl From<RenderError> for Diagnostic {
    fn from(e: RenderError) -> Diagnostic {
        e.to_diagnostic()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn memory_errors_give_bytes_in_human_units_too() {
        let e = super::RenderError::MemoryLimit {
            need: 3 << 30,
            limit: 512 << 20,
            step: 2,
            name: "Blur".into(),
            location: Some((4, 1)),
        };
        let text = e.to_string();
        assert!(text.contains("3221225472 bytes (3.0 GiB)"), "{text}");
        assert!(text.contains("(512.0 MiB)"), "{text}");
        assert!(text.contains("line 4, column 1"), "{text}");
        assert_eq!(super::human_bytes(10), "10 bytes");
    }
}
