//! Figure 8 charts from `results.csv` files (see `docs/CONFIG.md`).
//!
//! `results` reads the CSV into typed rows, `model` turns rows into
//! speedups per device, benchmark and size, `figure` draws them as SVG and
//! `pdf` converts that SVG into a PDF with real text.

mod figure;
mod generality_figure;
mod icfp15_figures;
mod levels_figure;
mod model;
mod names;
mod pdf;
mod results;
mod stencil_figures;
mod stencil_table;

use std::path::{Path, PathBuf};

pub use figure::{figure8_svg, legend_label, variant_color};
pub use generality_figure::{generality_svg, render_generality_figure};
pub use icfp15_figures::{
    figure10_svg as icfp15_figure10_svg, figure11_svg as icfp15_figure11_svg, render_icfp15_figures,
    render_icfp15_figures_with_fonts,
};
pub use levels_figure::{levels_svg, render_levels_figure};
pub use model::{
    build_panels, format_speedup, geometric_mean, speedup_table, Cell, Group, Panel, UNKNOWN_DEVICE,
};
pub use names::display_name;
pub use pdf::{svg_to_pdf, FontSource};
pub use results::{parse_results, read_results, Bar, Row, Status, Timing, RESULTS_HEADER};
pub use stencil_figures::{
    figure7_svg as stencil_figure7_svg, figure8_svg as stencil_figure8_svg, render_stencil_figures,
    render_stencil_figures_with_fonts,
};

/// Why a chart has no input to draw from.
#[derive(Debug, thiserror::Error)]
pub enum InputProblem {
    #[error("cannot open: {0}")]
    Open(std::io::Error),
    #[error("empty file: expected the results.csv header")]
    Empty,
    /// A results file its reader refused (the message names the file and
    /// the row).
    #[error("{0}")]
    Results(crate::harness::results::ResultsError),
    #[error("{0}")]
    Generality(crate::harness::generality::row::RowsError),
    #[error("no result rows to chart")]
    NoRows,
    #[error("no PTX builds of size `{size}` to chart (run with --results, on an NVIDIA device)")]
    NoPtxBuilds { size: String },
}

/// What is wrong with a row (or the header) of a results file: the value
/// found and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum RowProblem {
    #[error(transparent)]
    Csv(#[from] csv::Error),
    /// `column` counts from 1.
    #[error("header column {column}: expected `{want}`, found `{found}`")]
    HeaderColumn { column: usize, want: &'static str, found: String },
    #[error("header has {columns} columns; column `{want}` is missing")]
    HeaderMissing { columns: usize, want: &'static str },
    #[error("header has an extra column `{found}`")]
    HeaderExtra { found: String },
    #[error("malformed header")]
    HeaderMalformed,
    #[error("{found} fields, expected {expected}")]
    Fields { found: usize, expected: usize },
    #[error("must not be empty")]
    Empty,
    #[error("`{value}` is not a finite number")]
    NotFinite { value: String },
    #[error("`{value}` is not a non-negative integer")]
    NotCount { value: String },
    #[error("unknown variant `{value}` (expected reference, none, barrier, barrier+cf, all or clblast)")]
    Variant { value: String },
    #[error("{}", crate::harness::results::Status::unknown(value))]
    Status { value: String },
    #[error("an `ok` row needs a positive median")]
    NoMedian,
    #[error("unknown timing `{value}` (expected profiling, cuda-events or host)")]
    Timing { value: String },
}

/// Why a chart could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("{path}: {problem}")]
    Input { path: PathBuf, problem: InputProblem },
    /// A bad row (or header, line 1) of a results file.
    #[error("{}:{line}{}: {problem}", path.display(), if column.is_empty() { String::new() } else { format!(": column `{column}`") })]
    Row {
        path: PathBuf,
        line: u64,
        column: String,
        #[source]
        problem: RowProblem,
    },
    #[error("writing {path}: {source}")]
    Output { path: PathBuf, source: std::io::Error },
    #[error("drawing the chart: {0}")]
    Draw(String),
    #[error("fonts: {0}")]
    Font(String),
    #[error("making the PDF: {0}")]
    Pdf(String),
}

/// Renders `figure8.svg` and `figure8.pdf` into `out_dir` from one or more
/// result CSVs (one panel per device); returns the files written.
pub fn render_figure8(csvs: &[PathBuf], out_dir: &Path) -> Result<Vec<PathBuf>, ChartError> {
    render_figure8_with_fonts(csvs, out_dir, &FontSource::System)
}

/// [`render_figure8`] with the fonts taken from `fonts`.
pub fn render_figure8_with_fonts(
    csvs: &[PathBuf],
    out_dir: &Path,
    fonts: &FontSource,
) -> Result<Vec<PathBuf>, ChartError> {
    let mut rows = Vec::new();
    for csv in csvs {
        rows.extend(read_results(csv)?);
    }
    let panels = build_panels(&rows);
    if panels.is_empty() {
        let path = csvs.first().cloned().unwrap_or_default();
        return Err(ChartError::Input { path, problem: InputProblem::NoRows });
    }
    write_figures(&[("figure8", figure8_svg(&panels)?)], out_dir, fonts)
}

/// The rows of one suite's results file, refusing an empty one.
fn suite_rows(csv: &Path) -> Result<Vec<crate::harness::results::Row>, ChartError> {
    let rows = crate::harness::results::read_rows(csv)
        .map_err(|e| ChartError::Input { path: csv.to_path_buf(), problem: InputProblem::Results(e) })?;
    if rows.is_empty() {
        return Err(ChartError::Input { path: csv.to_path_buf(), problem: InputProblem::NoRows });
    }
    Ok(rows)
}

/// Writes each `(name, svg)` as `name.svg` and `name.pdf` into `out_dir`;
/// returns the files written. Every PDF is made before anything is written,
/// so that a missing font does not leave fresh SVGs beside stale PDFs.
fn write_figures(
    figures: &[(&str, String)],
    out_dir: &Path,
    fonts: &FontSource,
) -> Result<Vec<PathBuf>, ChartError> {
    let pdfs = figures.iter().map(|(_, svg)| svg_to_pdf(svg, fonts)).collect::<Result<Vec<_>, _>>()?;
    crate::outfile::create_dir(out_dir)
        .map_err(|source| ChartError::Output { path: out_dir.to_path_buf(), source })?;
    let mut written = Vec::new();
    for ((name, svg), pdf) in figures.iter().zip(&pdfs) {
        for (ext, bytes) in [("svg", svg.as_bytes()), ("pdf", pdf.as_slice())] {
            let path = out_dir.join(format!("{name}.{ext}"));
            write(&path, bytes)?;
            written.push(path);
        }
    }
    Ok(written)
}

/// Writes through a fresh temporary file renamed into place, so a failed
/// write (a full disk) never leaves a truncated chart under the real name
/// and a symbolic link there is replaced, not followed.
fn write(path: &Path, bytes: &[u8]) -> Result<(), ChartError> {
    crate::outfile::replace(path, bytes)
        .map_err(|source| ChartError::Output { path: path.to_path_buf(), source })
}

/// Each row message renders as it did when the variant carried text.
#[cfg(test)]
mod row_problem_tests {
    use super::*;

    fn row(column: &str, problem: RowProblem) -> String {
        ChartError::Row { path: "r.csv".into(), line: 3, column: column.into(), problem }.to_string()
    }

    #[test]
    fn header_column() {
        let p = RowProblem::HeaderColumn { column: 5, want: "median_ms", found: "median".into() };
        assert_eq!(row("", p), "r.csv:3: header column 5: expected `median_ms`, found `median`");
    }

    #[test]
    fn header_missing() {
        let p = RowProblem::HeaderMissing { columns: 4, want: "median_ms" };
        assert_eq!(row("", p), "r.csv:3: header has 4 columns; column `median_ms` is missing");
    }

    #[test]
    fn header_extra() {
        let p = RowProblem::HeaderExtra { found: "x".into() };
        assert_eq!(row("", p), "r.csv:3: header has an extra column `x`");
    }

    #[test]
    fn header_malformed() {
        assert_eq!(row("", RowProblem::HeaderMalformed), "r.csv:3: malformed header");
    }

    #[test]
    fn fields() {
        assert_eq!(row("", RowProblem::Fields { found: 3, expected: 28 }), "r.csv:3: 3 fields, expected 28");
    }

    #[test]
    fn empty() {
        assert_eq!(row("size", RowProblem::Empty), "r.csv:3: column `size`: must not be empty");
    }

    #[test]
    fn not_finite() {
        let p = RowProblem::NotFinite { value: "abc".into() };
        assert_eq!(row("median_ms", p), "r.csv:3: column `median_ms`: `abc` is not a finite number");
    }

    #[test]
    fn not_count() {
        let p = RowProblem::NotCount { value: "-1".into() };
        assert_eq!(row("runs", p), "r.csv:3: column `runs`: `-1` is not a non-negative integer");
    }

    #[test]
    fn variant() {
        let p = RowProblem::Variant { value: "v".into() };
        assert_eq!(
            row("variant", p),
            "r.csv:3: column `variant`: unknown variant `v` (expected reference, none, barrier, barrier+cf, all or clblast)"
        );
    }

    #[test]
    fn status() {
        let p = RowProblem::Status { value: "passed".into() };
        assert_eq!(
            row("status", p),
            "r.csv:3: column `status`: unknown status `passed` (expected ok, FAILED, error or skipped)"
        );
    }

    #[test]
    fn no_median() {
        assert_eq!(
            row("median_ms", RowProblem::NoMedian),
            "r.csv:3: column `median_ms`: an `ok` row needs a positive median"
        );
    }

    #[test]
    fn timing() {
        let p = RowProblem::Timing { value: "wall".into() };
        assert_eq!(
            row("timing", p),
            "r.csv:3: column `timing`: unknown timing `wall` (expected profiling, cuda-events or host)"
        );
    }
}
