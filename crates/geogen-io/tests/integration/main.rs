//! geogen-io's tests, gathered in one test binary (each module was a binary of its own, and every
//! link of one is a cost on a two-core machine). The interrupt test keeps a process of its own:
//! it signals itself.

#[path = "../common/mod.rs"]
mod common;

mod atomic;
mod csv;
mod engines;
mod pieced;
mod props;
mod roundtrip;
mod stream;
