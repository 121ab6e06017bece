//! Atomic file replacement: write to a temporary file beside the target, flush and `sync_all` it, then
//! rename it over the target.
//!
//! A reader of the target therefore sees either the old file or the complete new one, never a partial
//! write, even if the process dies mid-way. The temporary file lives in the target's directory so the
//! rename never crosses file systems. Its name, `.<name>.tmp-<pid>-<counter>`, is hidden on Unix, unique
//! among concurrent writers (process id plus a process-wide counter) and makes strays easy to identify.
//! If anything fails, or the guard is dropped before [`AtomicFile::commit`], the temporary file is
//! removed and the target is left untouched.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::IoError;

/// Distinguishes temporary files of concurrent writes to one target within this process.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Guard over a temporary file that becomes `target` on [`commit`](AtomicFile::commit).
#[derive(Debug)]
pub(crate) struct AtomicFile {
    target: PathBuf,
    temp: PathBuf,
    committed: bool,
}

impl AtomicFile {
    /// Creates the temporary file for `target`. Returns the guard and the open file to write into.
    pub(crate) fn create(target: &Path) -> Result<(AtomicFile, File), IoError> {
        let fail = |operation, source| IoError::Io { path: target.to_path_buf(), operation, source };
        let name = target.file_name().ok_or_else(|| {
            fail("resolve file name", io::Error::new(io::ErrorKind::InvalidInput, "the path has no file name"))
        })?;
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let pid = std::process::id();
        // A stale temporary file from a crashed process with a recycled pid could collide; skip past it.
        for _ in 0..64 {
            let mut temp_name = OsString::from(".");
            temp_name.push(name);
            temp_name.push(format!(".tmp-{pid}-{}", COUNTER.fetch_add(1, Ordering::Relaxed)));
            let temp = dir.join(temp_name);
            match OpenOptions::new().write(true).create_new(true).open(&temp) {
                Ok(file) => {
                    let guard = AtomicFile { target: target.to_path_buf(), temp, committed: false };
                    return Ok((guard, file));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(fail("create temporary file", e)),
            }
        }
        Err(fail("create temporary file", io::Error::new(io::ErrorKind::AlreadyExists, "no free temporary name")))
    }

    /// The target path.
    pub(crate) fn target(&self) -> &Path {
        &self.target
    }

    /// Makes the written data durable and moves it over the target. `file` is the handle returned by
    /// [`create`](AtomicFile::create), with all buffered data already written to it.
    pub(crate) fn commit(mut self, file: File) -> Result<(), IoError> {
        let fail = |operation, source| IoError::Io { path: self.target.clone(), operation, source };
        // Data must be on disk before the rename makes it visible, or a crash could expose an empty file.
        file.sync_all().map_err(|e| fail("sync", e))?;
        drop(file);
        fs::rename(&self.temp, &self.target).map_err(|e| fail("rename into place", e))?;
        self.committed = true;
        sync_parent(&self.target);
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            // Best effort: there is no one to report a failure to, and the original error matters more.
            let _ = fs::remove_file(&self.temp);
        }
    }
}

/// Persists the rename itself (the directory entry). Best effort: not every platform or file system
/// supports syncing a directory, and the file's contents are already durable.
fn sync_parent(target: &Path) {
    #[cfg(unix)]
    if let Some(dir) = target.parent() {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = target;
}
