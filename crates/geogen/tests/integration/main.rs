//! geogen's library tests that need no process of their own, gathered in one test binary: each
//! module was a binary that linked the whole stack, and on a two-core machine those links were a
//! good part of a test run. The golden renders, the tile contract (run once per instruction set)
//! and the tests that count the process's allocations (memory plan, page reuse) keep binaries of
//! their own.

#[path = "../common/mod.rs"]
mod common;

mod doc_snippets;
mod drainage;
mod erosion;
mod examples;
mod height_slang;
mod names;
mod no_panic;
mod original_facts;
mod run;
mod shared_parts;
