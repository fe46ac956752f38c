//! Code shared by several test files (each test file includes it with
//! `mod support;`).

pub mod fuzz;
