//! Atomic file replacement: write to a temporary file beside the target, flush and `sync_all` it, then
//! rename it over the target.
//!
//! A reader of the target therefore sees either the old file or the complete new one, never a partial
//! write, even if the process dies mid-way. The temporary file lives in the target's directory so the
//! rename never crosses file systems. Its name, `.<name>.tmp-<pid>-<counter>`, is hidden on Unix, unique
//! among concurrent writers (process id plus a process-wide counter) and makes strays easy to identify.
//! If anything fails, or the guard is dropped before [`AtomicFile::commit`], the temporary file is
//! removed and the target is left untouched.
//!
//! # Interruptions
//!
//! Destructors do not run when a signal ends the process, so every temporary file in flight is also
//! listed in a process-wide registry: a signal handler calls [`stop_writes_and_remove_temp_files`],
//! which removes them and refuses any new temporary file from then on (a write racing with the handler
//! either is listed, and removed, or fails to start). After a `SIGKILL` nothing can run; the next
//! writer into the directory removes the strays with [`remove_stale_temp_files`].

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::IoError;

/// Distinguishes temporary files of concurrent writes to one target within this process.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The temporary files this process has created and not yet renamed or removed.
struct InFlight {
    temps: BTreeMap<u64, PathBuf>,
    /// Set once by [`stop_writes_and_remove_temp_files`]: no new temporary file may appear.
    stopped: bool,
}

static IN_FLIGHT: Mutex<InFlight> = Mutex::new(InFlight { temps: BTreeMap::new(), stopped: false });

fn in_flight() -> std::sync::MutexGuard<'static, InFlight> {
    // A panic elsewhere must not stop the cleanup: the map is consistent after every operation.
    IN_FLIGHT.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Removes every temporary file this process is writing and makes every later attempt to start an
/// atomic write fail. For a signal handler that is about to end the process: afterwards no
/// temporary file of this process exists or can appear. Returns the number of files removed.
pub fn stop_writes_and_remove_temp_files() -> usize {
    let mut state = in_flight();
    state.stopped = true;
    let mut removed = 0;
    for temp in std::mem::take(&mut state.temps).into_values() {
        if fs::remove_file(&temp).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Whether `file_name` has the exact form of an atomic writer's temporary file:
/// `.<name>.tmp-<pid>-<counter>` with a non-empty name and decimal pid and counter.
pub fn is_temp_file_name(file_name: &str) -> bool {
    let Some(rest) = file_name.strip_prefix('.') else { return false };
    let Some((name, numbers)) = rest.rsplit_once(".tmp-") else { return false };
    let Some((pid, counter)) = numbers.split_once('-') else { return false };
    let decimal = |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
    !name.is_empty() && decimal(pid) && decimal(counter)
}

/// Removes the temporary files that interrupted writers left in `dir` (names matching
/// [`is_temp_file_name`], regular files only), except those this process is writing now. Call it
/// only while no other process writes into `dir` (the CLI holds the directory's lock). Returns the
/// paths removed, sorted.
pub fn remove_stale_temp_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !is_temp_file_name(name) || !entry.file_type()?.is_file() {
            continue;
        }
        let path = entry.path();
        if in_flight().temps.values().any(|p| p == &path) {
            continue;
        }
        fs::remove_file(&path)?;
        removed.push(path);
    }
    removed.sort();
    Ok(removed)
}

/// Guard over a temporary file that becomes `target` on [`commit`](AtomicFile::commit).
#[derive(Debug)]
pub(crate) struct AtomicFile {
    target: PathBuf,
    temp: PathBuf,
    /// The key of `temp` in the in-flight registry.
    id: u64,
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
            let id = COUNTER.fetch_add(1, Ordering::Relaxed);
            let mut temp_name = OsString::from(".");
            temp_name.push(name);
            temp_name.push(format!(".tmp-{pid}-{id}"));
            let temp = dir.join(temp_name);
            // Created and listed under one lock, so a signal handler sees every temporary file.
            let mut state = in_flight();
            if state.stopped {
                return Err(fail(
                    "create temporary file",
                    io::Error::new(io::ErrorKind::Interrupted, "the process is being interrupted"),
                ));
            }
            match OpenOptions::new().write(true).create_new(true).open(&temp) {
                Ok(file) => {
                    state.temps.insert(id, temp.clone());
                    let guard = AtomicFile { target: target.to_path_buf(), temp, id, committed: false };
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
    pub(crate) fn commit(self, file: File) -> Result<(), IoError> {
        let target = self.target.clone();
        self.sync(file)?.move_into_place()?;
        sync_parent(&target);
        Ok(())
    }

    /// Makes the written data durable; [`Synced::move_into_place`] then publishes it.
    pub(crate) fn sync(self, file: File) -> Result<Synced, IoError> {
        // Data must be on disk before the rename makes it visible, or a crash could expose an empty file.
        file.sync_all().map_err(|source| IoError::Io { path: self.target.clone(), operation: "sync", source })?;
        Ok(Synced(self))
    }
}

/// A temporary file whose data is durable, not yet renamed over its target.
pub(crate) struct Synced(AtomicFile);

impl Synced {
    /// Renames the temporary file over the target. The directory entry is durable only once the
    /// directory is synced ([`sync_parent`]).
    fn move_into_place(mut self) -> Result<(), IoError> {
        let file = &mut self.0;
        fs::rename(&file.temp, &file.target).map_err(|source| IoError::Io {
            path: file.target.clone(),
            operation: "rename into place",
            source,
        })?;
        file.committed = true;
        in_flight().temps.remove(&file.id);
        Ok(())
    }
}

/// Writes `bytes` to a new file at `path`, atomically, and only if no file is there: the complete
/// file is linked into place under its name, which fails (`AlreadyExists`) when that name is taken,
/// even by a file that appeared while this one was written. Nothing is ever replaced.
pub fn create_new_bytes(path: &Path, bytes: &[u8]) -> Result<(), IoError> {
    use std::io::Write;
    let (guard, mut file) = AtomicFile::create(path)?;
    file.write_all(bytes).map_err(|source| IoError::Io { path: path.to_path_buf(), operation: "write", source })?;
    let synced = guard.sync(file)?;
    // A hard link, unlike a rename, refuses an existing target; the temporary name then goes with
    // the guard.
    fs::hard_link(&synced.0.temp, path).map_err(|source| IoError::Io {
        path: path.to_path_buf(),
        operation: "create",
        source,
    })?;
    sync_parent(path);
    Ok(())
}

/// A file written and made durable under its temporary name, not yet visible under its own:
/// several are published together by [`publish`], so a run that fails half-way through writing a
/// set of files (a map in several formats, several maps) leaves the old set whole. Dropped
/// unpublished, its temporary file is removed.
pub struct StagedFile(Synced);

impl StagedFile {
    pub(crate) fn new(synced: Synced) -> StagedFile {
        StagedFile(synced)
    }

    /// The path the file takes when published.
    pub fn target(&self) -> &Path {
        &self.0 .0.target
    }

    /// The file's size in bytes (0 if it cannot be read).
    pub fn size(&self) -> u64 {
        fs::metadata(&self.0 .0.temp).map_or(0, |m| m.len())
    }
}

/// Moves staged files into place, in order, then syncs each directory once; returns their paths.
/// Renames within a directory do not fail for want of space, so once every file is staged the set
/// is all but certain to land whole.
pub fn publish(files: Vec<StagedFile>) -> Result<Vec<PathBuf>, IoError> {
    let mut paths = Vec::with_capacity(files.len());
    for file in files {
        let target = file.target().to_path_buf();
        file.0.move_into_place()?;
        paths.push(target);
    }
    let mut dirs: Vec<&Path> = Vec::new();
    for path in &paths {
        let dir = path.parent().unwrap_or(Path::new("."));
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    for dir in dirs {
        sync_dir(dir);
    }
    Ok(paths)
}

/// Files [`write_files`] writes and syncs at once.
const SYNCS_IN_FLIGHT: usize = 16;

/// Writes several files, each atomically as [`write_bytes`](crate::write_bytes) does, paying for
/// their durability together: all are written to temporary files and synced concurrently, then
/// moved into place, then each directory is synced once. A run of small files (the tiles of a
/// block and their markers) then waits for the disk a few times instead of twice per file.
///
/// Each file is whole or absent, as with `write_bytes`. On failure, the error names the index of
/// the first file (in `files`' order) that failed and its cause; files renamed before the failure
/// stay (each complete), no temporary file is left behind.
pub fn write_files(files: &[(&Path, &[u8])]) -> Result<(), (usize, IoError)> {
    use std::io::Write;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let write_and_sync = |&(path, bytes): &(&Path, &[u8])| {
        let (guard, mut file) = AtomicFile::create(path)?;
        file.write_all(bytes).map_err(|source| IoError::Io { path: path.to_path_buf(), operation: "write", source })?;
        guard.sync(file)
    };
    // Waiting for the disk, not computing: more syncs in flight than there are cores let the file
    // system commit them together (one journal commit for many files) instead of a few at a time.
    // Each thread takes the next file and keeps its results by index.
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(file) = files.get(i) else { break };
            done.push((i, write_and_sync(file)));
        }
        done
    };
    let mut synced: Vec<(usize, Result<Synced, IoError>)> = std::thread::scope(|scope| {
        let others: Vec<_> = (1..files.len().min(SYNCS_IN_FLIGHT)).map(|_| scope.spawn(work)).collect();
        let mut all = work();
        for other in others {
            all.extend(other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        }
        all
    });
    synced.sort_unstable_by_key(|(i, _)| *i);
    // All or nothing before anything is renamed: a failed sync leaves every target untouched.
    let mut ready = Vec::with_capacity(files.len());
    for (i, result) in synced {
        ready.push(result.map_err(|e| (i, e))?);
    }
    let mut dirs: Vec<&Path> = Vec::new();
    for (i, file) in ready.into_iter().enumerate() {
        file.move_into_place().map_err(|e| (i, e))?;
        let target = files[i].0;
        if !dirs.iter().any(|d| Some(*d) == target.parent()) {
            dirs.push(target.parent().unwrap_or(Path::new(".")));
        }
    }
    for dir in dirs {
        sync_dir(dir);
    }
    Ok(())
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            // Best effort: there is no one to report a failure to, and the original error matters more.
            let _ = fs::remove_file(&self.temp);
            in_flight().temps.remove(&self.id);
        }
    }
}

/// Persists the rename itself (the directory entry). Best effort: not every platform or file system
/// supports syncing a directory, and the file's contents are already durable.
fn sync_parent(target: &Path) {
    if let Some(dir) = target.parent() {
        sync_dir(dir);
    }
}

/// Persists the directory entries of `dir` (best effort, as [`sync_parent`]).
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Bytes written between two requests to start writing the file to disk.
const WRITEBACK_BYTES: u64 = 2 << 20;

/// The temporary file as the encoders write it. Every [`WRITEBACK_BYTES`], it asks the kernel to start
/// writing the file's dirty pages to disk (Linux `sync_file_range` with `SYNC_FILE_RANGE_WRITE`: a
/// request that does not wait for the disk). The disk then works while the encoder compresses the
/// rest, and the `fsync` of [`AtomicFile::commit`] waits for the last few MiB only, not for the whole
/// file's transfer after the encoder is done. Durability is unchanged: `commit` still syncs the whole
/// file before the rename. Elsewhere (and for files under the threshold) it is the plain file.
pub(crate) struct TempFile {
    file: File,
    /// Bytes written since the last request.
    unsynced: u64,
}

impl TempFile {
    pub(crate) fn new(file: File) -> TempFile {
        TempFile { file, unsynced: 0 }
    }

    /// The file, for [`AtomicFile::commit`].
    pub(crate) fn into_file(self) -> File {
        self.file
    }

    /// Asks for the file's dirty pages, all of them, to be written out now (best effort: a failure to
    /// start them early only leaves more for the final sync, which reports errors).
    fn start_writeback(&mut self) {
        self.unsynced = 0;
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: the descriptor is open for as long as `self.file` lives; offset 0 with length 0
            // means the whole file, and the call neither reads nor writes memory of this process.
            let _ = unsafe { libc::sync_file_range(self.file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
        }
    }
}

impl io::Write for TempFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.unsynced += n as u64;
        if self.unsynced >= WRITEBACK_BYTES {
            self.start_writeback();
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl io::Seek for TempFile {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        self.file.seek(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_written_with_early_writeback_has_every_byte() {
        use std::io::{Seek, Write};
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("big.bin");
        let (guard, file) = AtomicFile::create(&target).expect("create");
        let mut out = TempFile::new(file);
        // Past the writeback threshold several times, in writes of uneven sizes, and a patch written
        // after a seek back (as the EXR encoder does).
        let data: Vec<u8> = (0..(5 * WRITEBACK_BYTES as usize + 12_345)).map(|i| (i * 7 + i / 4099) as u8).collect();
        for chunk in data.chunks(1_000_003) {
            out.write_all(chunk).expect("write");
        }
        out.seek(io::SeekFrom::Start(10)).expect("seek");
        out.write_all(b"patch").expect("patch");
        guard.commit(out.into_file()).expect("commit");
        let mut expected = data;
        expected[10..15].copy_from_slice(b"patch");
        assert!(fs::read(&target).expect("read") == expected);
    }

    #[test]
    fn create_new_bytes_creates_a_file_and_never_replaces_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("new.ggs");
        create_new_bytes(&target, b"first").expect("created");
        assert_eq!(fs::read(&target).expect("read"), b"first");
        let refused = create_new_bytes(&target, b"second").expect_err("the name is taken");
        assert!(
            matches!(&refused, IoError::Io { source, .. } if source.kind() == io::ErrorKind::AlreadyExists),
            "{refused}"
        );
        assert_eq!(fs::read(&target).expect("read"), b"first");
        let names: Vec<_> = fs::read_dir(dir.path()).expect("list").map(|e| e.expect("entry").file_name()).collect();
        assert_eq!(names, ["new.ggs"], "no temporary file left");
    }

    #[test]
    fn write_files_writes_every_file_or_names_the_first_failure_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
        fs::write(&b, b"old").unwrap();
        write_files(&[(&a, b"first"), (&b, b"second")]).expect("both written");
        assert_eq!(fs::read(&a).unwrap(), b"first");
        assert_eq!(fs::read(&b).unwrap(), b"second", "an existing file is replaced whole");
        // The second target's directory is missing: its temporary file cannot be created, so
        // nothing is renamed, the first target keeps its old bytes, and no temporary file stays.
        let missing = dir.path().join("nowhere").join("c.bin");
        let (index, _) = write_files(&[(&a, b"changed"), (&missing, b"x")]).expect_err("no directory");
        assert_eq!(index, 1);
        assert_eq!(fs::read(&a).unwrap(), b"first", "nothing renamed before every file was synced");
        let names: Vec<String> =
            fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert!(names.iter().all(|n| !is_temp_file_name(n)), "{names:?}");
        write_files(&[]).expect("nothing to write");
    }

    #[test]
    fn temp_file_names_match_exactly() {
        for name in [".main.png.tmp-123-0", ".tile_0_-5_a.r16.tmp-1-99", ".x.tmp-1-2.tmp-3-4"] {
            assert!(is_temp_file_name(name), "{name}");
        }
        for name in [
            "main.png.tmp-1-2",
            ".main.png",
            ".main.png.tmp-1",
            ".main.png.tmp--2",
            ".main.png.tmp-1-",
            ".main.png.tmp-a-2",
            ".main.png.tmp-1-2x",
            ".tmp-1-2",
            "..tmp-1-2",
            ".tile_0_0.done.tmp-77",
        ] {
            assert!(!is_temp_file_name(name), "{name}");
        }
    }

    #[test]
    fn the_sweep_removes_strays_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        for name in [".main.png.tmp-4242-0", ".a.r16.tmp-1-7", "main.png", ".hidden", "x.tmp-1-2"] {
            fs::write(dir.path().join(name), b"x").expect("write");
        }
        fs::create_dir(dir.path().join(".d.tmp-1-1")).expect("mkdir");
        // A write of this process in progress is not a stray.
        let (guard, _file) = AtomicFile::create(&dir.path().join("live.png")).expect("create");
        let removed = remove_stale_temp_files(dir.path()).expect("sweep");
        let names: Vec<String> =
            removed.iter().map(|p| p.file_name().unwrap_or_default().to_string_lossy().into_owned()).collect();
        assert_eq!(names, [".a.r16.tmp-1-7", ".main.png.tmp-4242-0"]);
        assert!(guard.temp.exists());
        for kept in ["main.png", ".hidden", "x.tmp-1-2", ".d.tmp-1-1"] {
            assert!(dir.path().join(kept).exists(), "{kept}");
        }
    }
}
