//! Typed errors. Every error that concerns a file names it.

use std::path::{Path, PathBuf};

use crate::Format;

/// A failure to encode or write an output. Variants carry the target path when there is one (the
/// in-memory [`encode`](crate::encode) has none).
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The operating system refused a file operation. `path` is the target file (not the temporary one),
    /// `operation` says which step failed.
    #[error("cannot write {}: {operation}: {source}", path.display())]
    Io {
        /// The file that was being written.
        path: PathBuf,
        /// The step that failed, e.g. "create temporary file" or "rename into place".
        operation: &'static str,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The image library rejected the data or failed while encoding.
    #[error("cannot encode {format}{}: {source}", in_path(.path))]
    Encode {
        /// The file that was being written, if any.
        path: Option<PathBuf>,
        /// The format being encoded.
        format: Format,
        /// The encoder's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The height field (or profile) itself is unusable.
    #[error("cannot write{}: {source}", in_path(.path))]
    Field {
        /// The file that was to be written, if any.
        path: Option<PathBuf>,
        /// What is wrong with the input.
        #[source]
        source: FieldError,
    },
    /// The format cannot be written strip by strip.
    #[error("cannot stream {format}{}: only {} can be written in strips", in_path(.path), Format::streamable_names())]
    NotStreamable {
        /// The file that was to be written.
        path: Option<PathBuf>,
        /// The requested format.
        format: Format,
    },
    /// A [`StreamWriter`](crate::StreamWriter) was fed rows that do not fit the declared image.
    #[error("cannot write{}: {source}", in_path(.path))]
    Stream {
        /// The file being written.
        path: Option<PathBuf>,
        /// The misuse.
        #[source]
        source: StreamError,
    },
}

impl IoError {
    /// The target file the error concerns, if any.
    pub fn path(&self) -> Option<&Path> {
        match self {
            IoError::Io { path, .. } => Some(path),
            IoError::Encode { path, .. }
            | IoError::Field { path, .. }
            | IoError::NotStreamable { path, .. }
            | IoError::Stream { path, .. } => path.as_deref(),
        }
    }
}

/// What is wrong with a [`HeightField`](crate::HeightField) or [`Profile`](crate::Profile).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    /// A zero width or height: no image format can hold it.
    #[error("the height field is empty ({width}×{height})")]
    Empty {
        /// Declared width.
        width: u32,
        /// Declared height.
        height: u32,
    },
    /// `data.len()` is not `width × height`.
    #[error("the height field is {width}×{height} but has {len} samples")]
    SizeMismatch {
        /// Declared width.
        width: u32,
        /// Declared height.
        height: u32,
        /// Actual number of samples.
        len: usize,
    },
    /// Larger than the format can represent (PNG and TIFF dimensions are limited to 2³¹ - 1, and the
    /// sample count must fit in memory addressing).
    #[error("the height field ({width}×{height}) is too large for {format}")]
    TooLarge {
        /// Declared width.
        width: u32,
        /// Declared height.
        height: u32,
        /// The format whose limit is exceeded.
        format: Format,
    },
    /// A profile whose coordinates `start + i` would overflow `i64`.
    #[error("the profile's coordinates overflow (start {start}, {len} samples)")]
    ProfileOverflow {
        /// The first coordinate.
        start: i64,
        /// Number of samples.
        len: usize,
    },
}

/// Misuse of a [`StreamWriter`](crate::StreamWriter).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    /// `write_rows` was given a slice that is not a whole number of rows.
    #[error("{len} samples is not a whole number of {width}-pixel rows")]
    PartialRow {
        /// Samples given.
        len: usize,
        /// Row width.
        width: u32,
    },
    /// More rows than the declared height.
    #[error("{given} rows given but the image is only {height} rows tall")]
    TooManyRows {
        /// Rows written so far, including the rejected call.
        given: u64,
        /// Declared height.
        height: u32,
    },
    /// `finish` before every row was written.
    #[error("only {written} of {height} rows were written")]
    MissingRows {
        /// Rows written.
        written: u64,
        /// Declared height.
        height: u32,
    },
    /// A previous call failed; the writer cannot continue.
    #[error("an earlier write failed; the stream is abandoned")]
    Poisoned,
}

fn in_path(path: &Option<PathBuf>) -> String {
    match path {
        Some(p) => format!(" for {}", p.display()),
        None => String::new(),
    }
}
