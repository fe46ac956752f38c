//! LIFT: a functional data-parallel IR and its OpenCL compiler (CGO 2017),
//! with the harness that reproduces the paper's evaluation.
//!
//! The pipeline (see `docs/ARCHITECTURE.md`):
//! `parse` -> `ir` -> `passes` (types, address spaces, memory, ranges,
//! barriers, launch sizes) -> `view` (index expressions, simplified by
//! `arith`) -> `codegen` (OpenCL C). `interp` evaluates the IR directly and
//! is the oracle for tests and validation. `runtime` runs OpenCL; `launch`
//! runs a compiled kernel (buffers bound by name, NDRange, timed runs,
//! statistics) and `validate` checks its output against the interpreter
//! or a benchmark's gold; `explore` searches rewrites for the fastest
//! kernel; `harness` runs benchmarks, validates, measures and charts; `cli`
//! is the `lift` tool. `outfile` writes output files, never through links.

pub mod alloc;
pub mod arith;
pub mod cli;
pub mod codegen;
pub mod compile;
pub mod explore;
pub mod harness;
pub mod interp;
pub mod ir;
pub mod launch;
pub mod outfile;
pub mod parse;
pub mod passes;
pub mod rewrite;
pub mod runtime;
pub mod types;
pub mod validate;
pub mod view;
