//! Height profiles as CSV.
//!
//! The header is `x,height`; each following line is `start + i,height`. Heights use Rust's shortest
//! round-trip formatting, so parsing a value back as `f32` gives the same bits (NaN is written as 0,
//! like everywhere else in this crate). Lines end with `\n`.

use std::fmt::Write as _;
use std::path::Path;

use crate::{FieldError, IoError, Profile};

/// The CSV text of a profile.
pub fn profile_csv(profile: &Profile<'_>) -> Result<String, FieldError> {
    let len = profile.data.len();
    // The last coordinate must fit in i64; checking it once covers every line.
    let last = i64::try_from(len.saturating_sub(1)).ok().and_then(|n| profile.start.checked_add(n));
    if last.is_none() {
        return Err(FieldError::ProfileOverflow { start: profile.start, len });
    }
    let mut text = String::with_capacity(16 + len * 16);
    text.push_str("x,height\n");
    for (i, &h) in profile.data.iter().enumerate() {
        // Cannot overflow: the last coordinate was checked above. (A `start..` range would overflow
        // computing the coordinate *after* the last one.)
        let x = profile.start + i as i64;
        let h = if h.is_nan() { 0.0 } else { h };
        // Writing into a String cannot fail.
        let _ = writeln!(text, "{x},{h}");
    }
    Ok(text)
}

/// Writes a profile as CSV to `path`, atomically.
pub fn write_profile_csv(profile: &Profile<'_>, path: impl AsRef<Path>) -> Result<(), IoError> {
    let path = path.as_ref();
    let text = profile_csv(profile).map_err(|source| IoError::Field { path: Some(path.to_path_buf()), source })?;
    crate::write_bytes(path, text.as_bytes())
}
