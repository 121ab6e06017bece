//! The output directory of `render` and `tiles`: `geogen_io::OutputDir` (created on demand,
//! locked while a run writes into it, swept of temporary files that killed runs left, the only
//! place files are written to), with its refusals as usage errors and its sweep said on stderr.

use std::path::{Path, PathBuf};

use crate::report::CliError;

pub use geogen_io::{remove_held_lock_file, OutputDir, LOCK_FILE};

impl From<geogen_io::OutputDirError> for CliError {
    fn from(e: geogen_io::OutputDirError) -> CliError {
        use geogen::diag::codes;
        let code = match e {
            geogen_io::OutputDirError::Busy(_) => codes::GGE4022,
            geogen_io::OutputDirError::NotAPlainName { .. } => codes::GGE5000,
            _ => codes::GGE4023,
        };
        CliError::Usage(format!("{code}: {e}"))
    }
}

/// Refuses an `-o` that names something other than a directory, before any work is done.
pub fn refuse_non_directory(dir: &Path) -> Result<(), CliError> {
    match std::fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => {
            Err(CliError::Usage(format!("`{}` is a file, not a directory; -o names a directory", dir.display())))
        }
        _ => Ok(()),
    }
}

/// Opens (creating and locking) an output directory, saying on stderr which temporary files of
/// interrupted runs it removed.
pub fn open(dir: &Path) -> Result<OutputDir, CliError> {
    refuse_non_directory(dir)?;
    let output = OutputDir::open(dir)?;
    let stale = output.stale();
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

/// Opens one shard's view of a shared output directory (see `OutputDir::open_shard`).
pub fn open_shard(dir: &Path, index: u64, count: u64) -> Result<OutputDir, CliError> {
    refuse_non_directory(dir)?;
    Ok(OutputDir::open_shard(dir, index, count)?)
}

/// `dir/name`, if `name` is exactly one normal path component.
pub fn file_in(dir: &Path, name: &str) -> Result<PathBuf, CliError> {
    Ok(geogen_io::file_in(dir, name)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_not_an_output_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x");
        std::fs::write(&file, b"mine").unwrap();
        match open(&file) {
            Err(CliError::Usage(message)) => assert!(message.contains("-o names a directory"), "{message}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read(&file).unwrap(), b"mine");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]

        /// Every name the compiler accepts as a map name gives a plain file name in every format.
        #[test]
        fn every_valid_map_name_gives_a_path_for_every_format(name in proptest::prelude::any::<String>()) {
            if geogen::check_map_name(&name).is_ok() {
                for format in geogen_io::Format::ALL {
                    let path = file_in(Path::new("/o/out"), &format.file_name(&name));
                    proptest::prop_assert!(path.is_ok());
                }
            }
        }
    }
}
