//! The reproduction harness: configs, runs, validation, statistics, results
//! and charts.

pub mod data;
pub mod gold;
pub mod chart;
pub mod table1;
