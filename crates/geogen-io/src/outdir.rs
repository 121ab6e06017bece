//! Output directories: the one place a run writes its files.
//!
//! `geogen render`, `geogen tiles` and the studio's export all write through an [`OutputDir`]:
//! created on demand, locked while a run writes into it (a second writer is refused, not
//! interleaved), swept of the temporary files that killed runs left, and handing out only paths
//! of plain file names inside it ([`file_in`]), whatever a map name or a bug produced. The files
//! of one map are planned by [`check_output_names`] (no two outputs share a name) and written by
//! [`write_map_files`], atomically, by the same writers whoever asks.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use crate::{ExportOptions, Format, HeightField, IoError, Surface};

/// The lock file of an output directory. It exists while a run holds it (and after a killed run:
/// an unlocked lock file is free to take).
pub const LOCK_FILE: &str = ".geogen.lock";

/// The lock file this process holds, for a signal handler to remove on the way out.
static HELD_LOCK: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Why an output directory cannot be used or a file cannot be written into it.
#[derive(Debug, thiserror::Error)]
pub enum OutputDirError {
    #[error("`{0}` is a file, not a directory")]
    NotADirectory(PathBuf),
    #[error(
        "another geogen run is writing into `{0}` (it holds {LOCK_FILE}); wait for it to finish or choose another directory"
    )]
    Busy(PathBuf),
    #[error(
        "`{0}` is a symbolic link or not a plain file; geogen takes its lock only on a file of its own (remove it and run again)"
    )]
    ForeignLock(PathBuf),
    #[error("cannot {operation} `{path}`: {source}")]
    Io { path: PathBuf, operation: &'static str, source: std::io::Error },
    #[error("internal error: refusing to write `{name}`, which is not a plain file name, into `{dir}`")]
    NotAPlainName { dir: PathBuf, name: String },
    #[error(transparent)]
    Write(#[from] IoError),
}

/// An output directory this process holds the lock of.
#[derive(Debug)]
pub struct OutputDir {
    dir: PathBuf,
    lock_path: PathBuf,
    stale: Vec<PathBuf>,
    // Holding the handle holds the lock; it is released when the handle closes.
    _lock: File,
}

fn refuse_file(dir: &Path) -> Result<(), OutputDirError> {
    match std::fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => Err(OutputDirError::NotADirectory(dir.to_path_buf())),
        _ => Ok(()),
    }
}

fn create(dir: &Path) -> Result<(), OutputDirError> {
    refuse_file(dir)?;
    std::fs::create_dir_all(dir).map_err(|source| OutputDirError::Io {
        path: dir.to_path_buf(),
        operation: "create the output directory",
        source,
    })
}

impl OutputDir {
    /// Creates `dir` if needed, takes its lock (refusing if another run holds it), and removes the
    /// temporary files of interrupted runs (listed by [`OutputDir::stale`], for the caller to say
    /// so).
    pub fn open(dir: &Path) -> Result<OutputDir, OutputDirError> {
        create(dir)?;
        let lock_path = dir.join(LOCK_FILE);
        let lock = take_lock(dir, &lock_path)?;
        hold(&lock_path);
        let mut output = OutputDir { dir: dir.to_path_buf(), lock_path, stale: Vec::new(), _lock: lock };
        output.stale = crate::remove_stale_temp_files(dir).map_err(|source| OutputDirError::Io {
            path: dir.to_path_buf(),
            operation: "remove stale temporary files in",
            source,
        })?;
        Ok(output)
    }

    /// Like [`OutputDir::open`], for one shard of a run that several processes (often on several
    /// machines) write into the same directory at once: the lock is the shard's own
    /// (`.geogen.shard-I-of-N.lock`), so two processes of the same shard are refused but other
    /// shards are not, and the temporary files in the directory are left alone (they may be the
    /// other shards' files in flight).
    pub fn open_shard(dir: &Path, index: u64, count: u64) -> Result<OutputDir, OutputDirError> {
        create(dir)?;
        let lock_path = dir.join(format!(".geogen.shard-{index}-of-{count}.lock"));
        let lock = take_lock(dir, &lock_path)?;
        hold(&lock_path);
        Ok(OutputDir { dir: dir.to_path_buf(), lock_path, stale: Vec::new(), _lock: lock })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The temporary files of interrupted runs that opening the directory removed.
    pub fn stale(&self) -> &[PathBuf] {
        &self.stale
    }

    /// The path of the file `name` in this directory. `name` must be one plain file name: a bug
    /// that produced a path (`../x`, `/x`, `a/b`, `.`, `..`) must not write anywhere else, so it is
    /// refused here whatever checked it before.
    pub fn file(&self, name: &str) -> Result<PathBuf, OutputDirError> {
        file_in(&self.dir, name)
    }
}

fn hold(lock_path: &Path) {
    if let Ok(mut held) = HELD_LOCK.lock() {
        *held = Some(lock_path.to_path_buf());
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        // Removed while still locked (the handle closes after this), so a run that opened the old
        // file sees it vanish and retries; see `take_lock`.
        let _ = std::fs::remove_file(&self.lock_path);
        if let Ok(mut held) = HELD_LOCK.lock() {
            if held.as_deref() == Some(self.lock_path.as_path()) {
                *held = None;
            }
        }
    }
}

/// Removes the lock file this process holds, if any (for a signal handler).
pub fn remove_held_lock_file() {
    if let Ok(held) = HELD_LOCK.lock() {
        if let Some(path) = held.as_ref() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Whether `name` is exactly one normal path component (no separator, not `.` or `..`, not
/// empty, no NUL).
pub fn is_plain_file_name(name: &str) -> bool {
    let mut components = Path::new(name).components();
    let plain = match (components.next(), components.next()) {
        (Some(Component::Normal(single)), None) => single == OsStr::new(name),
        _ => false,
    };
    plain && !name.contains(['/', '\\', '\0'])
}

/// `dir/name`, if `name` is a plain file name ([`is_plain_file_name`]).
pub fn file_in(dir: &Path, name: &str) -> Result<PathBuf, OutputDirError> {
    let refused = || OutputDirError::NotAPlainName { dir: dir.to_path_buf(), name: name.escape_debug().to_string() };
    if !is_plain_file_name(name) {
        return Err(refused());
    }
    let path = dir.join(name);
    // The invariant everything above exists for.
    if path.parent() != Some(dir) {
        return Err(refused());
    }
    Ok(path)
}

/// Refuses a run in which two outputs would share a file name (a map `main_8bit` in png16 and a
/// map `main` in png8 both give `main_8bit.png`), or in which a map's file would not be a plain
/// file name, before anything is rendered; the message names both outputs.
pub fn check_output_names(maps: &[String], formats: &[Format]) -> Result<(), String> {
    let mut seen: HashMap<String, (&str, Format)> = HashMap::new();
    for map in maps {
        for &format in formats {
            let file = format.file_name(map);
            if !is_plain_file_name(&file) {
                return Err(format!("the map name \"{}\" cannot be a file name", map.escape_debug()));
            }
            if let Some((other_map, other_format)) = seen.insert(file.clone(), (map, format)) {
                return Err(format!(
                    "the map \"{other_map}\" in {other_format} and the map \"{map}\" in {format} would both be written to `{file}`; \
                     drop one of the formats, pick maps with --maps, or rename a map in the script"
                ));
            }
        }
    }
    Ok(())
}

/// The maps a run writes and those it renders (the written ones, then the splat masks they read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapPlan {
    pub written: Vec<String>,
    pub rendered: Vec<String>,
}

/// Why a run's maps cannot be planned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapPlanError {
    /// A map asked for, or read by a splat layer (`mask`), that the script does not yield.
    Unknown { name: String, known: Vec<String>, mask: bool },
    /// A yielded name unfit for a file (the message says why).
    BadName(String),
    /// Two outputs would share a file (the message names both), or a file name is not plain.
    Files(String),
}

/// Plans the maps of a run, as `geogen render`, `geogen tiles` and the studio's export all do
/// before rendering anything: the maps `wanted` (each one the script yields, in `known`; all of
/// `known` when `None`, duplicates dropped), each name checked by `check_name` (the compiler's
/// rule) and no two outputs sharing a file; with `splat` among the formats, the `masks` its
/// layers read are rendered too (written only if wanted).
pub fn plan_maps(
    known: &[String],
    wanted: Option<&[String]>,
    formats: &[Format],
    masks: &[String],
    check_name: impl Fn(&str) -> Result<(), String>,
) -> Result<MapPlan, MapPlanError> {
    let select = |names: &[String], mask: bool| -> Result<Vec<String>, MapPlanError> {
        let mut selected: Vec<String> = Vec::new();
        for name in names {
            if !known.contains(name) {
                return Err(MapPlanError::Unknown { name: name.clone(), known: known.to_vec(), mask });
            }
            if !selected.contains(name) {
                selected.push(name.clone());
            }
        }
        Ok(selected)
    };
    let written = match wanted {
        Some(wanted) => select(wanted, false)?,
        None => known.to_vec(),
    };
    for map in &written {
        // Defence in depth: the compiler checked every yielded name.
        check_name(map).map_err(|why| {
            MapPlanError::BadName(format!("the map name \"{}\" cannot be a file name: {why}", map.escape_debug()))
        })?;
    }
    check_output_names(&written, formats).map_err(MapPlanError::Files)?;
    let mut rendered = written.clone();
    if formats.contains(&Format::Splat) {
        for mask in select(masks, true)? {
            if !rendered.contains(&mask) {
                rendered.push(mask);
            }
        }
    }
    Ok(MapPlan { written, rendered })
}

/// A file written into an output directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenFile {
    pub path: PathBuf,
    pub bytes: u64,
}

/// Writes one map in each format into `dir` as `<stem><suffix>`, as a set: every file is written
/// first ([`stage_map_files`]), then all are moved into place, so a failure leaves the old files
/// whole.
pub fn write_map_files(
    dir: &OutputDir,
    stem: &str,
    surface: &Surface<'_>,
    formats: &[Format],
    options: &ExportOptions,
    masks: &[HeightField<'_>],
) -> Result<Vec<WrittenFile>, OutputDirError> {
    let staged = stage_map_files(dir, stem, surface, formats, options, masks)?;
    let sizes: Vec<u64> = staged.iter().map(|(_, bytes)| *bytes).collect();
    let paths = crate::publish(staged.into_iter().map(|(file, _)| file).collect())?;
    Ok(paths.into_iter().zip(sizes).map(|(path, bytes)| WrittenFile { path, bytes }).collect())
}

/// Writes one map in each format into `dir` as `<stem><suffix>` under temporary names, with each
/// file's size, for the caller to [`publish`](crate::publish) with the rest of its set. A surface
/// without margin is streamed straight from its heights; one with a margin (derived maps and
/// meshes were asked for) is encoded by [`encode_surface`](crate::encode_surface), which writes
/// the core and reads the margin. `masks` are the splat masks, of the field's size.
pub fn stage_map_files(
    dir: &OutputDir,
    stem: &str,
    surface: &Surface<'_>,
    formats: &[Format],
    options: &ExportOptions,
    masks: &[HeightField<'_>],
) -> Result<Vec<(crate::StagedFile, u64)>, OutputDirError> {
    let whole = surface.core.x == 0
        && surface.core.y == 0
        && surface.core.width == surface.field.width
        && surface.core.height == surface.field.height;
    let mut staged = Vec::new();
    for &format in formats {
        let path = dir.file(&format.file_name(stem))?;
        if whole && !format.reads_export_options() {
            let file = crate::stage(format, &surface.field, &path)?;
            let temp_size = file.size();
            staged.push((file, temp_size));
        } else {
            let bytes = crate::encode_surface(format, surface, options, masks, stem)?;
            staged.push((crate::stage_bytes(&path, &bytes)?, bytes.len() as u64));
        }
    }
    Ok(staged)
}

/// Takes the lock of `dir`. The lock file is removed when a run ends, so a run may lock a file
/// that was unlinked just before: it then checks that the path still names the file it locked
/// and otherwise tries again.
fn take_lock(dir: &Path, lock_path: &Path) -> Result<File, OutputDirError> {
    let cannot =
        |source: std::io::Error| OutputDirError::Io { path: lock_path.to_path_buf(), operation: "lock", source };
    for _ in 0..100 {
        // A link planted in the lock's place would make the run create or lock the file it points
        // to, wherever that is: refused, and on Linux not followed even if it appears between the
        // check and the open.
        if std::fs::symlink_metadata(lock_path).is_ok_and(|meta| !meta.is_file()) {
            return Err(OutputDirError::ForeignLock(lock_path.to_path_buf()));
        }
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NOFOLLOW);
        }
        let file = match options.open(lock_path) {
            Ok(file) => file,
            #[cfg(target_os = "linux")]
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(OutputDirError::ForeignLock(lock_path.to_path_buf()))
            }
            Err(e) => return Err(cannot(e)),
        };
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(OutputDirError::Busy(dir.to_path_buf())),
            Err(TryLockError::Error(e)) => return Err(cannot(e)),
        }
        if still_named(&file, lock_path) {
            return Ok(file);
        }
    }
    Err(OutputDirError::Busy(dir.to_path_buf()))
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

    fn names(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    fn plan(maps: &[&str], formats: &[Format]) -> Result<MapPlan, MapPlanError> {
        plan_maps(&names(maps), None, formats, &[], |_| Ok(()))
    }

    #[test]
    fn outputs_sharing_a_file_name_are_refused_naming_both() {
        match plan(&["main", "main_8bit"], &[Format::Png16, Format::Png8]) {
            Err(MapPlanError::Files(message)) => {
                assert!(
                    message.contains("\"main\" in png8") && message.contains("\"main_8bit\" in png16"),
                    "{message}"
                );
                assert!(message.contains("`main_8bit.png`"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(plan(&["main", "main_8bit"], &[Format::Png16, Format::R16]).is_ok());
        assert!(plan(&["a", "a_colored"], &[Format::Colored, Format::Png16]).is_err());
        assert!(plan(&["../x"], &[Format::Png16]).is_err());
    }

    #[test]
    fn the_plan_checks_wanted_maps_and_names_and_renders_the_splat_masks() {
        let known = names(&["main", "dry", "wet"]);
        let ok = |_: &str| Ok(());
        let wanted = names(&["wet", "main", "wet"]);
        let plan = plan_maps(&known, Some(&wanted), &[Format::Splat], &names(&["dry", "main"]), ok).unwrap();
        assert_eq!(plan.written, names(&["wet", "main"]));
        assert_eq!(plan.rendered, names(&["wet", "main", "dry"]));
        // Masks are read only when splat maps are written.
        let plan = plan_maps(&known, None, &[Format::Png16], &names(&["nope"]), ok).unwrap();
        assert_eq!((plan.written.clone(), plan.rendered), (known.clone(), known.clone()));
        let unknown = plan_maps(&known, Some(&names(&["nope"])), &[Format::Png16], &[], ok);
        assert!(matches!(unknown, Err(MapPlanError::Unknown { mask: false, .. })));
        let mask = plan_maps(&known, None, &[Format::Splat], &names(&["nope"]), ok);
        assert!(matches!(mask, Err(MapPlanError::Unknown { mask: true, .. })));
        let refused =
            plan_maps(&known, None, &[Format::Png16], &[], |n| if n == "dry" { Err("no".into()) } else { Ok(()) });
        assert!(matches!(refused, Err(MapPlanError::BadName(m)) if m.contains("\"dry\" cannot be a file name: no")));
    }

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
        match OutputDir::open(dir.path()) {
            Err(e @ OutputDirError::Busy(_)) => assert!(e.to_string().contains("another geogen run"), "{e}"),
            other => panic!("expected a refusal, got {other:?}"),
        }
        drop(first);
        assert!(!dir.path().join(LOCK_FILE).exists());
        assert!(OutputDir::open(dir.path()).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_the_lock_s_place_is_refused_and_its_target_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let target = elsewhere.path().join("x");
        std::os::unix::fs::symlink(&target, dir.path().join(LOCK_FILE)).unwrap();
        match OutputDir::open(dir.path()) {
            Err(e @ OutputDirError::ForeignLock(_)) => assert!(e.to_string().contains("symbolic link"), "{e}"),
            other => panic!("expected a refusal, got {other:?}"),
        }
        assert!(!target.exists(), "the link's target was created");
        // A link to an existing file: refused too, the file untouched and not locked.
        std::fs::write(&target, b"theirs").unwrap();
        assert!(matches!(OutputDir::open(dir.path()), Err(OutputDirError::ForeignLock(_))));
        assert!(OutputDir::open_shard(dir.path(), 0, 1).is_ok(), "a shard's own lock is another file");
        assert_eq!(std::fs::read(&target).unwrap(), b"theirs");
        assert!(std::fs::symlink_metadata(dir.path().join(LOCK_FILE)).unwrap().file_type().is_symlink());
    }

    #[test]
    fn a_file_is_not_an_output_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x");
        std::fs::write(&file, b"mine").unwrap();
        match OutputDir::open(&file) {
            Err(e @ OutputDirError::NotADirectory(_)) => assert!(e.to_string().contains("is a file"), "{e}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read(&file).unwrap(), b"mine");
    }

    #[test]
    fn colliding_and_unwritable_outputs_are_refused_naming_both() {
        let maps = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let message = check_output_names(&maps(&["main", "main_8bit"]), &[Format::Png16, Format::Png8]).unwrap_err();
        assert!(message.contains("\"main\" in png8") && message.contains("\"main_8bit\" in png16"), "{message}");
        assert!(message.contains("`main_8bit.png`"), "{message}");
        assert!(check_output_names(&maps(&["main", "main_8bit"]), &[Format::Png16, Format::R16]).is_ok());
        assert!(check_output_names(&maps(&["a", "a_colored"]), &[Format::Colored, Format::Png16]).is_err());
        assert!(check_output_names(&maps(&["../x"]), &[Format::Png16]).is_err());
        assert!(check_output_names(&maps(&["a/b"]), &[Format::Png16]).is_err());
    }

    #[test]
    fn a_map_is_written_in_every_format_by_the_same_writers_as_encode() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutputDir::open(&dir.path().join("new")).unwrap();
        let data: Vec<f32> = (0..12).map(|i| i as f32 / 12.0 - 0.5).collect();
        let field = HeightField::new(4, 3, &data).unwrap();
        let formats = [Format::Png16, Format::Colored, Format::Normal, Format::Obj];
        let written =
            write_map_files(&out, "m", &Surface::whole(field), &formats, &ExportOptions::default(), &[]).unwrap();
        let names: Vec<_> = written.iter().map(|w| w.path.file_name().unwrap().to_str().unwrap()).collect();
        assert_eq!(names, ["m.png", "m_colored.png", "m_normal.png", "m.obj"]);
        for w in &written {
            assert_eq!(std::fs::metadata(&w.path).unwrap().len(), w.bytes);
        }
        assert_eq!(std::fs::read(&written[0].path).unwrap(), crate::encode(Format::Png16, &field).unwrap());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

        /// Whatever the name, a path is only ever returned inside the directory.
        #[test]
        fn no_name_leaves_the_directory(name in any::<String>(), pick in 0usize..4) {
            let hostile = ["../", "/", "..", "."];
            let name = if pick < hostile.len() { format!("{}{name}", hostile[pick]) } else { name };
            let dir = Path::new("/o/out");
            if let Ok(path) = file_in(dir, &name) {
                prop_assert_eq!(path.parent(), Some(dir));
            }
        }
    }
}
