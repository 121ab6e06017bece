//! Writing a map strip by strip.
//!
//! A 100 000 × 100 000 map does not fit in memory as one `f32` buffer, so the renderer produces it in
//! horizontal strips and hands each to a [`StreamWriter`], which converts and compresses them as they
//! come. Only the row formats can be streamed: PNG16, PNG8, R16, TIFF and the colored preview. (The EXR
//! library wants the whole image; the hillshade needs the rows above and below each pixel.) The bytes
//! are exactly those [`write`](crate::write) produces for the same field, whatever the strip sizes.

use std::io::BufWriter;
use std::path::Path;

use crate::atomic::{AtomicFile, TempFile};
use crate::encode::RowEncoder;
use crate::{failure_to_error, Format, IoError, OUTPUT_BUFFER};

/// Writes an image from successive whole rows, then atomically moves it into place on
/// [`finish`](StreamWriter::finish). Dropping it without `finish` discards the temporary file and leaves
/// any existing target untouched.
pub struct StreamWriter {
    // Declaration order is drop order: close the encoder (and its file handle) before the guard deletes
    // the temporary file.
    encoder: RowEncoder<BufWriter<TempFile>>,
    guard: AtomicFile,
    format: Format,
}

impl StreamWriter {
    /// Creates the temporary file for a `width × height` image at `path` and writes the header.
    pub fn new(format: Format, width: u32, height: u32, path: impl AsRef<Path>) -> Result<Self, IoError> {
        let path = path.as_ref();
        if !format.is_streamable() {
            return Err(IoError::NotStreamable { path: Some(path.to_path_buf()), format });
        }
        crate::check_dimensions(format, width, height)
            .map_err(|source| IoError::Field { path: Some(path.to_path_buf()), source })?;
        let (guard, file) = AtomicFile::create(path)?;
        let out = BufWriter::with_capacity(OUTPUT_BUFFER, TempFile::new(file));
        let encoder =
            RowEncoder::new(format, width, height, out).map_err(|f| failure_to_error(f, format, Some(path)))?;
        Ok(StreamWriter { encoder, guard, format })
    }

    /// Appends whole rows (`rows.len()` a multiple of the width), top to bottom. A slice that is not
    /// whole rows, or rows beyond the declared height, is rejected without writing anything, and the
    /// writer stays usable; after an I/O error it is not.
    pub fn write_rows(&mut self, rows: &[f32]) -> Result<(), IoError> {
        self.encoder.write_rows(rows).map_err(|f| failure_to_error(f, self.format, Some(self.guard.target())))
    }

    /// Completes the file and renames it over the target. Fails (removing the temporary file) if not
    /// every row was written.
    pub fn finish(self) -> Result<(), IoError> {
        let StreamWriter { encoder, guard, format } = self;
        let path = guard.target().to_path_buf();
        let out = encoder.finish().map_err(|f| failure_to_error(f, format, Some(&path)))?;
        let file = out.into_inner().map_err(|e| IoError::Io { path, operation: "write", source: e.into_error() })?;
        let file = file.into_file();
        guard.commit(file)
    }
}

impl std::fmt::Debug for StreamWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamWriter").field("format", &self.format).field("target", &self.guard.target()).finish()
    }
}
