use geogen_diag::{codes, ErrorCode};

/// An error raised while running a script. The VM adds the location of the failing instruction
/// and the call stack when it turns it into a [`geogen_diag::Diagnostic`].
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeError {
    pub code: ErrorCode,
    pub message: String,
    pub hint: Option<String>,
    /// The argument (0-based) of the failing call the error is about, so the diagnostic points
    /// at that argument's text instead of the whole call.
    pub argument: Option<usize>,
}

impl RuntimeError {
    pub fn new(code: ErrorCode, message: String) -> RuntimeError {
        RuntimeError { code, message, hint: None, argument: None }
    }

    /// The error is about argument `i` (0-based) of the call that raised it.
    pub fn at_argument(mut self, i: usize) -> RuntimeError {
        self.argument = Some(i);
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> RuntimeError {
        self.hint = Some(hint.into());
        self
    }

    pub fn undefined_variable(name: &str) -> RuntimeError {
        RuntimeError::new(codes::GGE2202, format!("undefined variable `{name}`"))
            .with_hint("declare it first with `var` (local) or `global`")
    }

    pub fn read_only(name: &str) -> RuntimeError {
        RuntimeError::new(codes::GGE2108, format!("`{name}` is read-only"))
    }

    /// A refusal of the rendering sequence: too many steps (GGE2504) or, for anything else, an
    /// internal error (the bindings only record valid steps).
    pub fn from_render(error: geogen_render::RenderError) -> RuntimeError {
        match error {
            geogen_render::RenderError::SequenceTooLong { limit } => {
                RuntimeError::new(codes::GGE2504, format!("the script recorded more than {limit} rendering steps"))
                    .with_hint(
                    "each map operation is a step (noise adds one per layer); use fewer, or raise the limit with --max-steps N",
                )
            }
            other => RuntimeError::internal(other.to_string()),
        }
    }

    pub fn internal(message: impl Into<String>) -> RuntimeError {
        RuntimeError::new(codes::GGE5000, message.into())
    }
}

impl std::fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for RuntimeError {}
