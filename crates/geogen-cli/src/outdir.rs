//! The output directory of `render` and `tiles`: created on demand, locked while a run writes into
//! it, swept of temporary files that killed runs left, and the only place files are written to.

use std::ffi::OsStr;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use crate::report::CliError;

/// The lock file of an output directory. It exists while a run holds it (and after a killed run:
/// an unlocked lock file is free to take).
pub const LOCK_FILE: &str = ".geogen.lock";

/// The lock file this process holds, for the signal handler to remove on the way out.
static HELD_LOCK: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Refuses an `-o` that names something other than a directory, before any work is done.
pub fn refuse_non_directory(dir: &Path) -> Result<(), CliError> {
    match std::fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => {
            Err(CliError::Usage(format!("`{}` is a file, not a directory; -o names a directory", dir.display())))
        }
        _ => Ok(()),
    }
}

/// An output directory this process holds the lock of.
#[derive(Debug)]
pub struct OutputDir {
    dir: PathBuf,
    lock_path: PathBuf,
    // Holding the handle holds the lock; it is released when the handle closes.
    _lock: File,
}

impl OutputDir {
    /// Creates `dir` if needed, takes its lock (refusing if another run holds it), and removes the
    /// temporary files of interrupted runs, saying so on stderr.
    pub fn open(dir: &Path) -> Result<OutputDir, CliError> {
        refuse_non_directory(dir)?;
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::Usage(format!("cannot create the output directory `{}`: {e}", dir.display())))?;
        let lock_path = dir.join(LOCK_FILE);
        let lock = take_lock(dir, &lock_path)?;
        if let Ok(mut held) = HELD_LOCK.lock() {
            *held = Some(lock_path.clone());
        }
        let output = OutputDir { dir: dir.to_path_buf(), lock_path, _lock: lock };
        let stale = geogen_io::remove_stale_temp_files(dir)
            .map_err(|e| CliError::Usage(format!("cannot remove stale temporary files in `{}`: {e}", dir.display())))?;
        if !stale.is_empty() {
            let names: Vec<String> =
                stale.iter().filter_map(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()).collect();
            eprintln!(
                "removed {} temporary file{} left by an interrupted run in {}: {}",
                stale.len(),
                if stale.len() == 1 { "" } else { "s" },
                dir.display(),
                names.join(", ")
            );
        }
        Ok(output)
    }

    /// Like [`OutputDir::open`], for one shard of a run that several processes (often on several
    /// machines) write into the same directory at once: the lock is the shard's own
    /// (`.geogen.shard-I-of-N.lock`), so two processes of the same shard are refused but other
    /// shards are not, and the temporary files in the directory are left alone (they may be the
    /// other shards' files in flight; `finish-tiles` reports strays).
    pub fn open_shard(dir: &Path, index: u64, count: u64) -> Result<OutputDir, CliError> {
        refuse_non_directory(dir)?;
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::Usage(format!("cannot create the output directory `{}`: {e}", dir.display())))?;
        let lock_path = dir.join(format!(".geogen.shard-{index}-of-{count}.lock"));
        let lock = take_lock(dir, &lock_path)?;
        if let Ok(mut held) = HELD_LOCK.lock() {
            *held = Some(lock_path.clone());
        }
        Ok(OutputDir { dir: dir.to_path_buf(), lock_path, _lock: lock })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The path of the file `name` in this directory. `name` must be one plain file name: a bug
    /// that produced a path (`../x`, `/x`, `a/b`, `.`, `..`) must not write anywhere else, so it is
    /// refused here whatever checked it before.
    pub fn file(&self, name: &str) -> Result<PathBuf, CliError> {
        file_in(&self.dir, name)
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        // Removed while still locked (the handle closes after this), so a run that opened the old
        // file sees it vanish and retries; see `take_lock`.
        let _ = std::fs::remove_file(&self.lock_path);
        if let Ok(mut held) = HELD_LOCK.lock() {
            *held = None;
        }
    }
}

/// Removes the lock file this process holds, if any (for the signal handler).
pub fn remove_held_lock_file() {
    if let Ok(held) = HELD_LOCK.lock() {
        if let Some(path) = held.as_ref() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// `dir/name`, if `name` is exactly one normal path component.
pub fn file_in(dir: &Path, name: &str) -> Result<PathBuf, CliError> {
    let mut components = Path::new(name).components();
    let plain = match (components.next(), components.next()) {
        (Some(Component::Normal(single)), None) => single == OsStr::new(name),
        _ => false,
    };
    if !plain || name.contains(['/', '\\', '\0']) {
        return Err(CliError::Usage(format!(
            "internal error: refusing to write `{}`, which is not a plain file name, into `{}`",
            name.escape_debug(),
            dir.display()
        )));
    }
    let path = dir.join(name);
    // The invariant everything above exists for.
    if path.parent() != Some(dir) {
        return Err(CliError::Usage(format!(
            "internal error: `{}` would not land in `{}`",
            name.escape_debug(),
            dir.display()
        )));
    }
    Ok(path)
}

fn busy(dir: &Path) -> CliError {
    CliError::Usage(format!(
        "another geogen run is writing into `{}` (it holds {LOCK_FILE}); wait for it to finish or choose another directory",
        dir.display()
    ))
}

/// Takes the lock of `dir`. The lock file is removed when a run ends, so a run may lock a file
/// that was unlinked just before: it then checks that the path still names the file it locked
/// and otherwise tries again.
fn take_lock(dir: &Path, lock_path: &Path) -> Result<File, CliError> {
    let cannot = |e: std::io::Error| CliError::Usage(format!("cannot lock `{}`: {e}", lock_path.display()));
    for _ in 0..100 {
        let file =
            OpenOptions::new().read(true).write(true).create(true).truncate(false).open(lock_path).map_err(cannot)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(busy(dir)),
            Err(TryLockError::Error(e)) => return Err(cannot(e)),
        }
        if still_named(&file, lock_path) {
            return Ok(file);
        }
    }
    Err(busy(dir))
}

#[cfg(unix)]
fn still_named(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(held), Ok(named)) => held.dev() == named.dev() && held.ino() == named.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn still_named(_file: &File, _path: &Path) -> bool {
    // Windows cannot remove a file another process has open, so the race cannot happen there.
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plain_names_land_in_the_directory_and_paths_are_refused() {
        let dir = Path::new("out/dir");
        assert_eq!(file_in(dir, "main.png").ok(), Some(dir.join("main.png")));
        assert_eq!(file_in(dir, ".tile_0_0.done").ok(), Some(dir.join(".tile_0_0.done")));
        for bad in ["", ".", "..", "../x", "/abs", "a/b", "a/", "a\\b", "x\0", "./x"] {
            assert!(file_in(dir, bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_second_lock_on_one_directory_is_refused_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let first = OutputDir::open(dir.path()).unwrap();
        let second = take_lock(dir.path(), &dir.path().join(LOCK_FILE));
        match second {
            Err(CliError::Usage(message)) => assert!(message.contains("another geogen run"), "{message}"),
            other => panic!("expected a refusal, got {other:?}"),
        }
        drop(first);
        assert!(!dir.path().join(LOCK_FILE).exists());
        assert!(OutputDir::open(dir.path()).is_ok());
    }

    #[test]
    fn a_file_is_not_an_output_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x");
        std::fs::write(&file, b"mine").unwrap();
        match OutputDir::open(&file) {
            Err(CliError::Usage(message)) => assert!(message.contains("is a file, not a directory"), "{message}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read(&file).unwrap(), b"mine");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// Whatever the name, a path is only ever returned inside the directory; every valid map
        /// name gives a path for every format.
        #[test]
        fn no_name_leaves_the_directory(name in any::<String>(), pick in 0usize..4) {
            let hostile = ["../", "/", "..", "."];
            let name = if pick < hostile.len() { format!("{}{name}", hostile[pick]) } else { name };
            let dir = Path::new("/o/out");
            if let Ok(path) = file_in(dir, &name) {
                prop_assert_eq!(path.parent(), Some(dir));
            }
            if geogen::check_map_name(&name).is_ok() {
                for format in geogen_io::Format::ALL {
                    let path = file_in(dir, &format.file_name(&name));
                    prop_assert!(path.is_ok());
                }
            }
        }
    }
}
