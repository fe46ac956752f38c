//! What each optimisation level leaves for the driver's compiler: per
//! benchmark, the PTX integer-arithmetic instructions of the reference and
//! of the levels below `all`, over those of level `all` (all of a
//! benchmark's kernels summed), from `lift builds`' rows. Drawn as
//! `levels-ptx.svg/.pdf` beside the table; docs/LEVELS.md reads it.

use std::path::{Path, PathBuf};

use super::pdf::FontSource;
use super::stencil_figures::{bar_chart, Group};
use super::{ChartError, InputProblem};
use crate::harness::builds::BuildRow;
use crate::harness::variant_name::{Level, Variant};

/// The bars, each over level `all` (the line at 1).
const BARS: [Variant; 4] = [
    Variant::Reference,
    Variant::Level(Level::None),
    Variant::Level(Level::Barrier),
    Variant::Level(Level::BarrierCf),
];

/// Integer-arithmetic instructions of one benchmark, size and variant, its
/// programs summed; `None` when a build of it is not PTX or is missing.
fn int_arith(rows: &[BuildRow], bench: &str, size: &str, variant: &Variant) -> Option<usize> {
    // A build's label names its variant (`builds::parse_label`), empty where
    // it names none.
    let of: Vec<&BuildRow> = rows
        .iter()
        .filter(|r| r.benchmark == bench && r.size == size)
        .filter(|r| Variant::parse(&r.variant).as_ref() == Some(variant))
        .collect();
    if of.is_empty() {
        return None;
    }
    of.iter().map(|r| r.ptx.map(|p| p.int_arith)).sum()
}

/// One group per benchmark at `size`, in first-seen order.
fn groups(rows: &[BuildRow], size: &str) -> Vec<Group> {
    let mut benches: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| r.size == size && !r.benchmark.is_empty()) {
        if !benches.contains(&r.benchmark.as_str()) {
            benches.push(&r.benchmark);
        }
    }
    benches
        .into_iter()
        .map(|b| {
            let all = int_arith(rows, b, size, &Variant::Level(Level::All)).filter(|&n| n > 0);
            let values = BARS
                .iter()
                .map(|v| Some(int_arith(rows, b, size, v)? as f64 / all? as f64).filter(|x| *x > 0.0))
                .collect();
            Group { label: b.to_string(), values }
        })
        .collect()
}

/// The chart's SVG for the builds of `size`.
pub fn levels_svg(rows: &[BuildRow], size: &str) -> Result<String, ChartError> {
    let labels: Vec<String> = BARS.iter().map(Variant::to_string).collect();
    bar_chart(
        &format!("PTX integer instructions over level `all`'s ({size} size)"),
        "integer arithmetic / level all",
        &labels,
        &groups(rows, size),
        true,
    )
}

/// Writes `levels-ptx.svg` and `.pdf` into `out_dir`.
pub fn render_levels_figure(
    rows: &[BuildRow],
    size: &str,
    out_dir: &Path,
    fonts: &FontSource,
) -> Result<Vec<PathBuf>, ChartError> {
    if !rows.iter().any(|r| r.size == size && r.ptx.is_some()) {
        return Err(ChartError::Input {
            path: out_dir.to_path_buf(),
            problem: InputProblem::NoPtxBuilds { size: size.to_string() },
        });
    }
    super::write_figures(&[("levels-ptx", levels_svg(rows, size)?)], out_dir, fonts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::builds::ptx::PtxStats;

    fn build(bench: &str, variant: &str, program: &str, ints: usize) -> BuildRow {
        BuildRow {
            build: 0,
            benchmark: bench.into(),
            size: "large".into(),
            variant: variant.into(),
            program: program.into(),
            cl_bytes: 1,
            binary_bytes: 1,
            ptx: Some(PtxStats { int_arith: ints, ..PtxStats::default() }),
            median_ms: None,
        }
    }

    #[test]
    fn bars_are_kernel_sums_over_level_all() {
        let rows = vec![
            build("mm", "reference", "mm-cl", 30),
            build("mm", "none", "mm", 200),
            build("mm", "all", "mm", 20),
            build("conv", "none", "rows", 10),
            build("conv", "none", "cols", 30),
            build("conv", "all", "rows", 5),
            build("conv", "all", "cols", 15),
        ];
        let g = groups(&rows, "large");
        assert_eq!(g.iter().map(|g| g.label.as_str()).collect::<Vec<_>>(), ["mm", "conv"]);
        assert_eq!(g[0].values, vec![Some(1.5), Some(10.0), None, None]);
        assert_eq!(g[1].values, vec![None, Some(2.0), None, None]);
        assert!(groups(&rows, "small").is_empty());
        assert!(levels_svg(&rows, "large").unwrap().contains("conv"));
    }
}
