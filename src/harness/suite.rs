//! Suites: each paper's benchmarks (`suite:` in a config) have their own
//! results file and figures in `reports/<device>/`.

use super::chart::{self, ChartError};
use super::config::{Config, DEFAULT_SUITE};
use std::path::{Path, PathBuf};

/// The stencil suite (CGO 2018).
pub const STENCIL_SUITE: &str = "cgo18";

/// The rewrite-rules suite (ICFP 2015).
pub const ICFP15_SUITE: &str = "icfp15";

/// The suites of `configs`, CGO 2017 first, the others in name order.
pub fn suites(configs: &[Config]) -> Vec<String> {
    let mut out: Vec<String> = configs.iter().map(|c| c.suite.clone()).collect();
    out.sort_by_key(|s| (s != DEFAULT_SUITE, s.clone()));
    out.dedup();
    out
}

/// The results file of a suite: CGO 2017 keeps `results.csv`.
pub fn results_file(suite: &str) -> String {
    if suite == DEFAULT_SUITE {
        "results.csv".into()
    } else {
        format!("results-{suite}.csv")
    }
}

/// Draws a suite's figures from its results file; a suite without figures
/// yet draws none.
pub fn render_figures(suite: &str, csv: &Path, out_dir: &Path) -> Result<Vec<PathBuf>, ChartError> {
    match suite {
        DEFAULT_SUITE => chart::render_figure8(&[csv.to_path_buf()], out_dir),
        STENCIL_SUITE => chart::render_stencil_figures(csv, out_dir),
        ICFP15_SUITE => chart::render_icfp15_figures(csv, out_dir),
        _ => Ok(Vec::new()),
    }
}
