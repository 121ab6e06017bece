//! `geogen info`: what a script declares.

use std::path::Path;
use std::process::ExitCode;

pub fn info(path: &Path, _json: bool) -> Result<ExitCode, String> {
    Err(format!("`geogen info {}` is not available yet", path.display()))
}
