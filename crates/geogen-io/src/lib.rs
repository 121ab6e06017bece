//! geogen's writers: rendered heights in, files out.
//!
//! This crate knows nothing of scripts or rendering. It takes a [`HeightField`] (row-major `f32`
//! heights, nominally in [-1, 1]) or a 1-D [`Profile`] and writes it in one of the [`Format`]s, either
//! into memory ([`encode`]) or into a file ([`write()`], [`StreamWriter`], [`write_profile_csv`]).
//!
//! # Value mappings
//!
//! Before quantising, NaN is read as 0 and heights are clamped to [-1, 1]. `round` rounds halves away
//! from zero and is applied to the exact real product (not an `f32` approximation of it).
//!
//! | Format | File | Content |
//! |---|---|---|
//! | `png16` | `<map>.png` | 16-bit grayscale PNG, `v = round(h × 32767) + 32767`: -1 → 0, 0 → 32767, 1 → 65534 (65535 unused), as the original GeoGen writes |
//! | `png8` | `<map>_8bit.png` | 8-bit grayscale PNG, `v = round((h + 1) / 2 × 255)`: -1 → 0, 0 → 128, 1 → 255 |
//! | `r16` | `<map>.r16` | the `png16` values as raw little-endian `u16`, row-major, no header (Unity/Unreal "RAW 16-bit") |
//! | `tiff` | `<map>.tif` | single-channel 32-bit IEEE float TIFF (SampleFormat = float), uncompressed strips of about 64 KiB, the raw heights (not clamped; NaN → 0); BigTIFF above 4 GiB |
//! | `exr` | `<map>.exr` | OpenEXR, one 32-bit float channel named `Y` (shown as luminance by viewers), the raw heights (not clamped; NaN → 0), RLE-compressed scan lines |
//! | `colored` | `<map>_colored.png` | 8-bit RGB preview, water (h ≤ 0) from (0, 18, 38) at -1 to (108, 205, 255) at 0, land from (31, 152, 69) just above 0 through (238, 170, 70) at 0.5 to white at 1; see [`palette`] |
//! | `hillshade` | `<map>_hillshade.png` | 8-bit grayscale Lambertian hillshade, light from azimuth 315°, altitude 45°, `z_scale` 125 pixels per height unit; see [`hillshade`](mod@hillshade) |
//!
//! Profiles are CSV: a header `x,height`, then one line `start + i,height` per sample, heights in the
//! shortest form that parses back to the same `f32`.
//!
//! # Atomicity
//!
//! Every file is written to a temporary file in the target's directory, flushed, `sync_all`ed and
//! renamed over the target. On any error the temporary file is removed and an existing target is left
//! as it was. The temporary file is named `.<name>.tmp-<pid>-<n>` (hidden on Unix, unique per process
//! and write, easy to recognise if a crash ever leaves one behind). A signal handler can remove every
//! temporary file in flight with [`stop_writes_and_remove_temp_files`]; after a `SIGKILL`, the next
//! writer into the directory removes the strays with [`remove_stale_temp_files`].
//!
//! # Determinism
//!
//! The same field gives the same bytes on every machine and thread count: the quantisers and the
//! hillshade use only exact or IEEE-defined arithmetic (no fused multiply-add, no platform math
//! library), and the EXR writer compresses on the calling thread. PNGs of more than 256 KiB of rows
//! are compressed on every core in pieces whose rows depend on the image's width alone, so their
//! bytes do not depend on the thread count either (see `parpng.rs` and `deflate.rs`).

mod atomic;
pub mod cog;
mod csv;
mod deflate;
pub mod dem;
pub mod derived;
mod encode;
pub mod engine;
mod error;
mod export;
mod format;
mod gltf;
pub mod hillshade;
pub mod labels;
pub mod mesh;
mod outdir;
pub mod palette;
mod parpng;
pub mod quantize;
pub mod read;
mod sink;
mod stream;
mod tiff32;

use std::fs::File;
use std::io::{BufWriter, Cursor, Write};
use std::path::Path;

pub use crate::csv::{profile_csv, write_profile_csv};
pub use crate::derived::{NormalConvention, SplatLayer, Surface, TerrainScale, Window};
pub use crate::error::{FieldError, IoError, StreamError};
pub use crate::export::{encode_surface, encoding_bytes, write_surface, ExportError, ExportOptions};
pub use crate::format::{parse_list, Format, FormatError};
pub use crate::hillshade::HillshadeOptions;
pub use crate::labels::{draw_labels, stage_colored_with_labels, PixelLabel};
pub use crate::mesh::Simplify;
pub use crate::outdir::{
    check_output_names, file_in, is_plain_file_name, plan_maps, remove_held_lock_file, stage_map_files,
    write_map_files, MapPlan, MapPlanError, OutputDir, OutputDirError, WrittenFile, LOCK_FILE,
};
pub use crate::read::{read_heights, InputError, InputHeights, InputLimits};
pub use crate::stream::StreamWriter;

pub use crate::atomic::{
    is_temp_file_name, publish, remove_stale_temp_files, stop_writes_and_remove_temp_files, write_files, StagedFile,
};

use crate::atomic::{AtomicFile, TempFile};
use crate::encode::Failure;

/// A rendered map: `width × height` heights, row-major (row 0 is the top, north edge).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeightField<'a> {
    /// Pixels per row.
    pub width: u32,
    /// Number of rows.
    pub height: u32,
    /// `width × height` heights, nominally in [-1, 1].
    pub data: &'a [f32],
}

impl<'a> HeightField<'a> {
    /// A field, checking that `data` holds exactly `width × height` samples and is not empty.
    pub fn new(width: u32, height: u32, data: &'a [f32]) -> Result<Self, FieldError> {
        let field = HeightField { width, height, data };
        field.check()?;
        Ok(field)
    }

    /// Checks the invariants [`new`](HeightField::new) checks (the fields are public, so a field may
    /// have been built without it). Every writer calls this first.
    pub fn check(&self) -> Result<(), FieldError> {
        let (width, height) = (self.width, self.height);
        if width == 0 || height == 0 {
            return Err(FieldError::Empty { width, height });
        }
        if u64::from(width) * u64::from(height) != self.data.len() as u64 {
            return Err(FieldError::SizeMismatch { width, height, len: self.data.len() });
        }
        Ok(())
    }
}

/// A 1-D height profile: `data[i]` is the height at coordinate `start + i`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Profile<'a> {
    /// Coordinate of the first sample.
    pub start: i64,
    /// The heights.
    pub data: &'a [f32],
}

/// Size of the buffer between the encoders and the file: large enough that the OS sees few, big writes.
pub(crate) const OUTPUT_BUFFER: usize = 1 << 20;

/// Image dimensions each format can represent: PNG, TIFF and EXR store (or internally use) signed 32-bit
/// sizes; R16 has no header and no limit beyond addressable memory.
pub(crate) fn check_dimensions(format: Format, width: u32, height: u32) -> Result<(), FieldError> {
    if width == 0 || height == 0 {
        return Err(FieldError::Empty { width, height });
    }
    let limit = i32::MAX as u32;
    if format != Format::R16 && (width > limit || height > limit) {
        return Err(FieldError::TooLarge { width, height, format });
    }
    Ok(())
}

pub(crate) fn check_field(format: Format, field: &HeightField<'_>) -> Result<(), FieldError> {
    field.check()?;
    check_dimensions(format, field.width, field.height)
}

/// Encodes a field into the bytes of a file in `format`.
pub fn encode(format: Format, field: &HeightField<'_>) -> Result<Vec<u8>, IoError> {
    check_field(format, field).map_err(|source| IoError::Field { path: None, source })?;
    let out =
        encode::encode_into(format, field, Cursor::new(Vec::new())).map_err(|f| failure_to_error(f, format, None))?;
    Ok(out.into_inner())
}

/// Writes a field to `path` in `format`, atomically. The file name is the caller's choice; see
/// [`Format::file_name`] for the conventional one.
pub fn write(format: Format, field: &HeightField<'_>, path: impl AsRef<Path>) -> Result<(), IoError> {
    publish(vec![stage(format, field, path)?]).map(drop)
}

/// Encodes the hillshade preview with non-default lighting or exaggeration ([`encode`] with
/// [`Format::Hillshade`] uses [`HillshadeOptions::default`]).
pub fn encode_hillshade(field: &HeightField<'_>, options: &HillshadeOptions) -> Result<Vec<u8>, IoError> {
    let format = Format::Hillshade;
    check_field(format, field).map_err(|source| IoError::Field { path: None, source })?;
    let gray = hillshade::hillshade(field.width as usize, field.height as usize, field.data, options);
    encode::encode_gray8(field.width, field.height, &gray, Vec::new()).map_err(|f| failure_to_error(f, format, None))
}

/// Writes the hillshade preview with non-default options to `path`, atomically.
pub fn write_hillshade(
    field: &HeightField<'_>,
    options: &HillshadeOptions,
    path: impl AsRef<Path>,
) -> Result<(), IoError> {
    let path = path.as_ref();
    let format = Format::Hillshade;
    check_field(format, field).map_err(|source| IoError::Field { path: Some(path.to_path_buf()), source })?;
    let gray = hillshade::hillshade(field.width as usize, field.height as usize, field.data, options);
    let (guard, file) = AtomicFile::create(path)?;
    let out = BufWriter::with_capacity(OUTPUT_BUFFER, TempFile::new(file));
    let out = encode::encode_gray8(field.width, field.height, &gray, out)
        .map_err(|f| failure_to_error(f, format, Some(path)))?;
    let file = into_file(out, path)?;
    guard.commit(file)
}

/// Writes arbitrary bytes to a new file at `path`, atomically, refusing (`AlreadyExists`) when a
/// file of that name exists or appears meanwhile (the file is linked into place, never renamed
/// over another).
pub fn create_new_bytes(path: &Path, bytes: &[u8]) -> Result<(), IoError> {
    atomic::create_new_bytes(path, bytes)
}

/// Writes arbitrary bytes to `path`, atomically (for hosts' own small files, e.g. run manifests).
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), IoError> {
    publish(vec![stage_bytes(path, bytes)?]).map(drop)
}

/// [`write`], staged: the file is complete and durable under a temporary name, and takes `path`
/// when [`publish`]ed with the rest of its set.
pub fn stage(format: Format, field: &HeightField<'_>, path: impl AsRef<Path>) -> Result<StagedFile, IoError> {
    let path = path.as_ref();
    check_field(format, field).map_err(|source| IoError::Field { path: Some(path.to_path_buf()), source })?;
    let (guard, file) = AtomicFile::create(path)?;
    let out = BufWriter::with_capacity(OUTPUT_BUFFER, TempFile::new(file));
    let out = encode::encode_into(format, field, out).map_err(|f| failure_to_error(f, format, Some(path)))?;
    let file = into_file(out, path)?;
    Ok(StagedFile::new(guard.sync(file)?))
}

/// [`write_bytes`], staged (see [`stage`]).
pub fn stage_bytes(path: &Path, bytes: &[u8]) -> Result<StagedFile, IoError> {
    let (guard, mut file) = AtomicFile::create(path)?;
    file.write_all(bytes).map_err(|source| IoError::Io { path: path.to_path_buf(), operation: "write", source })?;
    Ok(StagedFile::new(guard.sync(file)?))
}

/// Flushes the buffer and returns the file, naming `path` on failure.
fn into_file(out: BufWriter<TempFile>, path: &Path) -> Result<File, IoError> {
    let out = out.into_inner();
    out.map(TempFile::into_file).map_err(|e| IoError::Io {
        path: path.to_path_buf(),
        operation: "write",
        source: e.into_error(),
    })
}

pub(crate) fn failure_to_error(failure: Failure, format: Format, path: Option<&Path>) -> IoError {
    let path = path.map(Path::to_path_buf);
    match failure {
        Failure::Io(source) => match path {
            Some(path) => IoError::Io { path, operation: "write", source },
            // Only in-memory encoding has no path, and writing to memory does not fail; keep the cause anyway.
            None => IoError::Encode { path: None, format, source: Box::new(source) },
        },
        Failure::Encode(source) => IoError::Encode { path, format, source },
        Failure::Stream(source) => IoError::Stream { path, source },
    }
}
