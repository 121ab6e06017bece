//! The `geogen` binary's tests, gathered in one test binary (each module was a binary of its own,
//! and every link of one is a cost on a two-core machine). Each test runs the built `geogen` as
//! a user would, in a directory of its own.

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod drainage;
mod engines;
mod names;
mod slang;
mod studio_export;
mod tiles;
