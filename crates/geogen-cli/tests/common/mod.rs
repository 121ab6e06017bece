//! What every end-to-end test of the binary needs: running it and reading what it printed.
//! (Each test file uses a part of it.)
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `geogen` with `args` in `dir` (the test's working directory when `None`), without colour.
pub fn geogen_in(dir: Option<&Path>, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_geogen"));
    command.args(args).env("NO_COLOR", "1");
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    command.output().expect("the binary runs")
}

pub fn geogen(args: &[&str]) -> Output {
    geogen_in(None, args)
}

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("temp file");
    path
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
