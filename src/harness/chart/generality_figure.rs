//! The generality suite's figure (`generality.svg/.pdf`, from
//! `results-generality.csv`): for every program, the explored program's
//! speedup over PyTorch on the same device (PyTorch's time over Lift's;
//! above 1, Lift is faster), with the best's fraction of the device limit
//! that binds it in the label, and the geometric mean.

use super::model::geometric_mean;
use super::pdf::FontSource;
use super::stencil_figures::{bar_chart, Group};
use super::{ChartError, InputProblem};
use crate::harness::generality::{Outcome, Row};
use std::path::{Path, PathBuf};

/// The figure's SVG: one bar per program with a PyTorch time.
pub fn generality_svg(rows: &[Row]) -> Result<String, ChartError> {
    let mut groups: Vec<Group> = rows
        .iter()
        .filter(|r| r.status == Outcome::Ok)
        .map(|r| {
            let limit = r.pct_of_limit().map_or(String::new(), |p| format!(" ({p:.0}%)"));
            Group { label: format!("{}{limit}", r.program), values: vec![r.speedup] }
        })
        .collect();
    let mean = geometric_mean(&groups.iter().filter_map(|g| g.values[0]).collect::<Vec<_>>());
    groups.push(Group { label: "geo. mean".into(), values: vec![mean] });
    let device = rows.first().map_or("", |r| r.device.as_str());
    bar_chart(
        &format!("Generality suite: explored with no hints, over PyTorch ({device}); in brackets: % of the binding limit"),
        "PyTorch time / Lift time",
        &["explored over PyTorch".to_string()],
        &groups,
        true,
    )
}

/// Writes `generality.svg` and `generality.pdf` into `out_dir`.
pub fn render_generality_figure(
    csv: &Path,
    out_dir: &Path,
    fonts: &FontSource,
) -> Result<Vec<PathBuf>, ChartError> {
    let rows = crate::harness::generality::row::read(csv)
        .map_err(|e| ChartError::Input { path: csv.to_path_buf(), problem: InputProblem::Generality(e) })?;
    if rows.is_empty() {
        return Err(ChartError::Input { path: csv.to_path_buf(), problem: InputProblem::NoRows });
    }
    super::write_figures(&[("generality", generality_svg(&rows)?)], out_dir, fonts)
}
