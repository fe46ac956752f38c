//! The ICFP 2015 suite's figures, per device, from its results file
//! (`results-icfp15.csv`), as `icfp15-figure10.svg/.pdf` and
//! `icfp15-figure11.svg/.pdf`:
//!
//! * Figure 10: the speedup of the device's explored program over the
//!   portable OpenCL reference, for every benchmark and size, with the
//!   geometric mean (the paper's "relative to a portable implementation").
//! * Figure 11: for the BLAS routines, the speedups of the explored
//!   program and of the libraries (CLBlast, cuBLAS) over the same
//!   reference, side by side (the paper's comparison with tuned libraries).
//!
//! Only `ok` rows are drawn; a missing bar is marked with an `x`.

use std::path::{Path, PathBuf};

use super::model::geometric_mean;
use super::pdf::FontSource;
use super::stencil_figures::{bar_chart, Group};
use super::ChartError;
use crate::harness::results::{Row, Status};
use crate::harness::variant_name::{Family, Variant, CLBLAST, CUBLAS};

/// The device's own explored program.
const EXPLORED: Variant = Variant::Explored(Family::Explored);

/// The suite's benchmark names carry this prefix; the figures drop it.
const PREFIX: &str = "icfp15-";

/// The BLAS routines of Figure 11.
const BLAS: [&str; 4] = ["scal", "asum", "dot", "gemv"];

fn short(benchmark: &str) -> &str {
    benchmark.strip_prefix(PREFIX).unwrap_or(benchmark)
}

/// (benchmark, size) pairs in first-seen order, filtered.
fn keys(rows: &[Row], keep: &dyn Fn(&str) -> bool) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for r in rows {
        let k = (r.benchmark.clone(), r.size.clone());
        if keep(short(&r.benchmark)) && !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

fn ok_row<'a>(rows: &'a [Row], bench: &str, size: &str, variant: &Variant) -> Option<&'a Row> {
    rows.iter()
        .rev()
        .find(|r| r.benchmark == bench && r.size == size && r.variant == *variant && r.status == Status::Ok)
}

/// Reference median over the variant's median, the reference on the
/// variant's clock where the file allows (its host-timed twin beside
/// host-timed CLBlast); the flag says whether the clocks match.
fn speedup_on_clock(rows: &[Row], bench: &str, size: &str, variant: &Variant) -> Option<(f64, bool)> {
    let of = ok_row(rows, bench, size, variant)?;
    let (reference, same) =
        crate::harness::clock::on_clock_of(|v| ok_row(rows, bench, size, v), &Variant::Reference, of)?;
    let (r, v) = (reference.median_ms?, of.median_ms?);
    (r > 0.0 && v > 0.0).then_some((r / v, same))
}

/// Reference median over the variant's median (see [`speedup_on_clock`]).
fn speedup(rows: &[Row], bench: &str, size: &str, variant: &Variant) -> Option<f64> {
    speedup_on_clock(rows, bench, size, variant).map(|(x, _)| x)
}

/// Whether some bar of `bars` compares two clocks.
fn mixed_clocks(rows: &[Row], bars: &[Variant]) -> bool {
    rows.iter().any(|r| {
        bars.contains(&r.variant)
            && speedup_on_clock(rows, &r.benchmark, &r.size, &r.variant).is_some_and(|(_, same)| !same)
    })
}

fn groups(rows: &[Row], bars: &[Variant], keep: &dyn Fn(&str) -> bool) -> Vec<Group> {
    let mut gs: Vec<Group> = keys(rows, keep)
        .into_iter()
        .map(|(b, s)| Group {
            label: format!("{} {s}", short(&b)),
            values: bars.iter().map(|v| speedup(rows, &b, &s, v)).collect(),
        })
        .collect();
    let means = (0..bars.len())
        .map(|i| geometric_mean(&gs.iter().filter_map(|g| g.values[i]).collect::<Vec<_>>()))
        .collect();
    gs.push(Group { label: "geo. mean".into(), values: means });
    gs
}

fn device(rows: &[Row]) -> &str {
    rows.first().map(|r| r.device.as_str()).unwrap_or("")
}

/// Figure 10's SVG.
pub fn figure10_svg(rows: &[Row]) -> Result<String, ChartError> {
    let bars = [EXPLORED];
    let gs = groups(rows, &bars, &|_| true);
    let labels: Vec<String> = bars.iter().map(Variant::to_string).collect();
    bar_chart(
        &format!("ICFP 2015 Figure 10: explored program over the OpenCL reference ({})", device(rows)),
        "speedup over the reference",
        &labels,
        &gs,
        true,
    )
}

/// Figure 11's SVG.
pub fn figure11_svg(rows: &[Row]) -> Result<String, ChartError> {
    let bars = [EXPLORED, Variant::peer(CLBLAST), Variant::peer(CUBLAS)];
    let gs = groups(rows, &bars, &|b| BLAS.contains(&b));
    let labels: Vec<String> = bars.iter().map(Variant::to_string).collect();
    let clocks = if mixed_clocks(rows, &bars) {
        "; CLBlast host-timed, the reference by profiling events"
    } else {
        ""
    };
    bar_chart(
        &format!(
            "ICFP 2015 Figure 11: explored program and BLAS libraries over the reference ({}{clocks})",
            device(rows)
        ),
        "speedup over the reference",
        &labels,
        &gs,
        true,
    )
}

/// Writes both figures as SVG and PDF into `out_dir` from one results file
/// of the suite; returns the files written.
pub fn render_icfp15_figures(csv: &Path, out_dir: &Path) -> Result<Vec<PathBuf>, ChartError> {
    render_icfp15_figures_with_fonts(csv, out_dir, &FontSource::System)
}

/// [`render_icfp15_figures`] with the fonts taken from `fonts`.
pub fn render_icfp15_figures_with_fonts(
    csv: &Path,
    out_dir: &Path,
    fonts: &FontSource,
) -> Result<Vec<PathBuf>, ChartError> {
    let rows = super::suite_rows(csv)?;
    super::write_figures(
        &[("icfp15-figure10", figure10_svg(&rows)?), ("icfp15-figure11", figure11_svg(&rows)?)],
        out_dir,
        fonts,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(b: &str, size: &str, v: &str, status: Status, ms: f64) -> Row {
        Row {
            status,
            median_ms: Some(ms),
            device: "Test GPU".into(),
            ..Row::new(b, size, Variant::parse(v).unwrap())
        }
    }

    #[test]
    fn speedups_use_ok_rows_only_and_the_latest() {
        let rows = vec![
            row("icfp15-dot", "small", "reference", Status::Ok, 2.0),
            row("icfp15-dot", "small", "explored", Status::Ok, 4.0),
            row("icfp15-dot", "small", "explored", Status::Ok, 1.0),
            row("icfp15-dot", "small", "clblast", Status::Failed, 0.5),
            row("icfp15-md", "small", "reference", Status::Ok, 3.0),
            row("icfp15-md", "small", "explored", Status::Skipped, 1.0),
        ];
        let clblast = Variant::peer(CLBLAST);
        assert_eq!(speedup(&rows, "icfp15-dot", "small", &EXPLORED), Some(2.0));
        assert_eq!(speedup(&rows, "icfp15-dot", "small", &clblast), None);
        assert_eq!(speedup(&rows, "icfp15-md", "small", &EXPLORED), None);
        let g = groups(&rows, &[EXPLORED], &|_| true);
        assert_eq!(
            g.iter().map(|g| g.label.as_str()).collect::<Vec<_>>(),
            ["dot small", "md small", "geo. mean"]
        );
        assert_eq!(g[2].values, vec![Some(2.0)]);
        // Figure 11 keeps the BLAS routines only.
        let g = groups(&rows, &[EXPLORED, clblast, Variant::peer(CUBLAS)], &|b| BLAS.contains(&b));
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].values, vec![Some(2.0), None, None]);
        let svg = figure11_svg(&rows).unwrap();
        assert!(svg.contains("dot small") && svg.contains("Test GPU") && !svg.contains("md small"));
    }
}
