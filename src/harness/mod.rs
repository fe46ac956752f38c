//! The reproduction harness: configs, runs, validation, statistics, results
//! and charts.

pub mod blas_spec;
pub mod buildopts;
pub mod chart;
pub mod clblast;
pub mod clock;
pub mod config;
pub mod confine;
pub mod cublas;
pub mod data;
pub mod env;
pub mod expected;
pub mod explored;
pub mod generality;
pub mod gold;
pub mod halide;
pub mod inputs;
pub mod npy;
pub mod report;
pub mod results;
pub mod roofline;
pub mod runner;
pub mod suite;
pub mod table1;
pub mod userfun_size;
pub mod variant;
