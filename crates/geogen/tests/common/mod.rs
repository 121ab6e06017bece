//! Helpers shared by the integration tests (each test file that uses them declares `mod common;`).

#![allow(dead_code)]

pub mod ops;
