//! The reproduction harness: configs, runs, validation, statistics, results
//! and charts.

pub mod data;
pub mod gold;
pub mod chart;
pub mod table1;
pub mod config;
pub mod inputs;
pub mod stats;
pub mod validate;
pub mod results;
pub mod basic_gold;
pub mod variant;
pub mod expected;
pub mod env;
pub mod roofline;
pub mod runner;
