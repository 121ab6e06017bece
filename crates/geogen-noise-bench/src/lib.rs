//! Benchmark only (see `benches/compare.rs`): geogen's coherent noise next to the noise crates
//! users pick today, in one run on one machine. Kept in its own crate so that the library does not
//! depend on those crates.

// This crate has no unsafe code, and keeps it that way.
#![forbid(unsafe_code)]
