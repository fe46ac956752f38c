//! `reports/paper-claims.yaml`: each claim of the papers (read from their
//! text), the measure of ours that answers it, and the reason for the
//! difference. The file holds words and the papers' numbers only; every
//! number of ours is computed here from the CSV a measure names.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::rows::{self, display, fastest, matches, ok_ms, Provenance};
use super::table::{self, NONE};
use super::{ClaimsProblem, DataProblem, ReportError, Sources, Unmatched};
use crate::harness::chart::geometric_mean;
use crate::harness::results::{Row, Status};
use crate::harness::variant_name::Variant;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ClaimsFile {
    /// The paragraph under the title of `paper-vs-reproduced.md`.
    pub intro: String,
    pub claims: Vec<Claim>,
    /// Table 1's code sizes, the paper's beside ours.
    pub table1: Table1Section,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Claim {
    pub paper: String,
    pub figure: String,
    /// What the paper says, its numbers as it prints them.
    pub claim: String,
    pub ours: Vec<Measure>,
    pub reason: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Table1Section {
    pub csv: PathBuf,
    pub note: String,
}

/// What a measure counts.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub enum Quantity {
    /// The fastest of `over`'s medians over the fastest of `of`'s.
    Speedup,
    /// The fastest of `of`'s GElements/s.
    Gelems,
    /// The generated kernel's size of every validated row of `of`.
    KernelBytes,
    /// How many benchmarks' `of` programs tile in local memory.
    Tiled,
    /// Table 1: OpenCL lines over high-level Lift lines (`csv` is a
    /// `table1.csv`), over the paper's twelve.
    CodeSizeRatio,
}

/// How the values of a measure are summed up.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Stat {
    Geomean,
    Min,
    Max,
    Range,
    #[default]
    Each,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Measure {
    #[serde(default)]
    pub label: Option<String>,
    pub csv: PathBuf,
    pub quantity: Quantity,
    /// Variants measured: names, or prefixes ending in `*`.
    #[serde(default)]
    pub of: Vec<String>,
    /// The baseline's variants (speedups only): the fastest of them.
    #[serde(default)]
    pub over: Vec<String>,
    /// Only these benchmarks (default: every one with rows).
    #[serde(default)]
    pub benchmarks: Vec<String>,
    /// Only these sizes (default: every one).
    #[serde(default)]
    pub sizes: Vec<String>,
    #[serde(default)]
    pub stat: Stat,
}

/// Reads and checks the claims file.
pub(super) fn load(path: &Path) -> Result<ClaimsFile, ReportError> {
    let err = |problem: ClaimsProblem| ReportError::Claims { path: path.into(), problem };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.into()))?;
    let file: ClaimsFile = serde_yaml::from_str(&text).map_err(|e| err(e.into()))?;
    for (i, c) in file.claims.iter().enumerate() {
        let (claim, paper, figure) = (i + 1, c.paper.clone(), c.figure.clone());
        if c.ours.is_empty() {
            return Err(err(ClaimsProblem::NoMeasure { claim, paper, figure }));
        }
        for m in &c.ours {
            let needs = match m.quantity {
                Quantity::Speedup => !m.of.is_empty() && !m.over.is_empty(),
                Quantity::Gelems | Quantity::KernelBytes | Quantity::Tiled => !m.of.is_empty(),
                Quantity::CodeSizeRatio => true,
            };
            if !needs {
                let (paper, figure) = (paper, figure.clone());
                return Err(err(ClaimsProblem::MeasureNeeds { claim, paper, figure, quantity: m.quantity }));
            }
        }
    }
    Ok(file)
}

/// One value behind a measure, with what it is of: a benchmark (`group`)
/// and a size or variant (`detail`, may be empty).
struct Item {
    value: f64,
    group: String,
    detail: String,
}

impl Item {
    fn what(&self) -> String {
        if self.detail.is_empty() {
            self.group.clone()
        } else {
            format!("{} {}", self.group, self.detail)
        }
    }
}

/// A measure's text and the runs behind it.
pub(super) fn evaluate(sources: &mut Sources, m: &Measure) -> Result<(String, Provenance), ReportError> {
    let mut prov = Provenance::default();
    let items = match m.quantity {
        Quantity::Tiled => {
            let rows = sources.results(&m.csv)?;
            let kept: Vec<&Row> = rows.iter().filter(|r| matches(&m.of, &r.variant)).collect();
            kept.iter().filter(|r| r.status == Status::Ok).for_each(|r| prov.add(r));
            let (tiled, of) = super::cgo18::tiling_counts(&kept);
            if of == 0 {
                return Err(no_rows(m));
            }
            return Ok((labelled(m, format!("{tiled} of {of} benchmarks")), prov));
        }
        Quantity::CodeSizeRatio => code_size_items(sources, m)?,
        Quantity::Speedup | Quantity::Gelems | Quantity::KernelBytes => {
            let rows = sources.results(&m.csv)?;
            run_items(&rows, m, &mut prov)
        }
    };
    if items.is_empty() {
        return Err(no_rows(m));
    }
    let mut text = labelled(m, summarise(m, &items));
    let mixed = items.iter().filter(|i| i.detail.ends_with(rows::MIXED)).count();
    if mixed > 0 {
        text.push_str(&format!(
            " ({mixed} of {} compare a host-timed peer with profiling events: no host-timed twin in the file)",
            items.len()
        ));
    }
    Ok((text, prov))
}

fn no_rows(m: &Measure) -> ReportError {
    ReportError::Data {
        what: m.csv.display().to_string(),
        problem: DataProblem::NoValidatedRows(Box::new(Unmatched {
            quantity: m.quantity,
            of: m.of.clone(),
            over: m.over.clone(),
            benchmarks: m.benchmarks.clone(),
            sizes: m.sizes.clone(),
        })),
    }
}

fn labelled(m: &Measure, text: String) -> String {
    match &m.label {
        Some(l) => format!("{l}: {text}"),
        None => text,
    }
}

/// The keys (benchmark, size) of the rows a measure looks at, in file order.
fn keys(rows: &[Row], m: &Measure) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for r in rows {
        let wanted = (m.benchmarks.is_empty() || m.benchmarks.contains(&r.benchmark))
            && (m.sizes.is_empty() || m.sizes.contains(&r.size));
        let k = (r.benchmark.clone(), r.size.clone());
        if wanted && !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

/// Whether `of` names one variant exactly (then the items need not say which).
fn one_variant(m: &Measure) -> bool {
    m.of.len() == 1 && !m.of[0].ends_with('*')
}

fn run_items(rows: &[Row], m: &Measure, prov: &mut Provenance) -> Vec<Item> {
    let mut items = Vec::new();
    for (b, s) in keys(rows, m) {
        let item = |value: f64, variant: &Variant| Item {
            value,
            group: display(&b),
            detail: if one_variant(m) { s.clone() } else { format!("{s}, `{variant}`") },
        };
        if m.quantity == Quantity::KernelBytes {
            for r in rows.iter().filter(|r| r.benchmark == b && r.size == s && matches(&m.of, &r.variant)) {
                if let (Some(bytes), true) = (r.kernel_bytes, rows::last(rows, &b, &s, &r.variant) == Some(r))
                {
                    if r.status == Status::Ok {
                        prov.add(r);
                        items.push(item(bytes as f64, &r.variant));
                    }
                }
            }
            continue;
        }
        let Some(mut of) = fastest(rows, &b, &s, &m.of) else { continue };
        let mut same = true;
        let value = match m.quantity {
            Quantity::Gelems => of.gelems.filter(|g| *g > 0.0),
            _ => fastest(rows, &b, &s, &m.over).and_then(|over| {
                prov.add(over);
                (of, same) = fastest_on_clock(rows, &b, &s, &m.of, over)?;
                Some(ok_ms(Some(over))? / ok_ms(Some(of))?)
            }),
        };
        if let Some(value) = value {
            prov.add(of);
            let mut it = item(value, of.variant.untwinned());
            if !same {
                it.detail.push_str(rows::MIXED);
            }
            items.push(it);
        }
    }
    items
}

/// The fastest validated row of the variants `patterns` names, each on
/// `peer`'s clock (`rows::on_clock_of`); the flag says whether the clocks
/// of the one chosen match.
fn fastest_on_clock<'a>(
    rows: &'a [Row],
    b: &str,
    s: &str,
    patterns: &[String],
    peer: &Row,
) -> Option<(&'a Row, bool)> {
    let variants = rows::first_seen(
        rows.iter()
            .filter(|r| r.benchmark == b && r.size == s && matches(patterns, &r.variant))
            .map(|r| &r.variant),
    );
    variants
        .iter()
        .filter_map(|v| rows::on_clock_of(rows, b, s, v, peer))
        .filter(|(r, _)| ok_ms(Some(r)).is_some())
        .min_by(|x, y| ok_ms(Some(x.0)).unwrap_or(f64::MAX).total_cmp(&ok_ms(Some(y.0)).unwrap_or(f64::MAX)))
}

/// One row of `table1.csv`.
#[derive(Debug, Deserialize)]
pub(super) struct Table1Record {
    pub benchmark: String,
    pub opencl_lines: Option<f64>,
    pub high_level_lines: Option<f64>,
    pub low_level_lines: Option<f64>,
    pub paper_opencl_lines: Option<f64>,
    pub paper_high_level_lines: Option<f64>,
    pub paper_low_level_lines: Option<f64>,
}

fn code_size_items(sources: &mut Sources, m: &Measure) -> Result<Vec<Item>, ReportError> {
    let records: Vec<Table1Record> = sources.records(&m.csv)?;
    Ok(records
        .iter()
        .filter(|r| r.paper_opencl_lines.is_some())
        .filter(|r| m.benchmarks.is_empty() || m.benchmarks.contains(&r.benchmark))
        .filter_map(|r| {
            let (cl, high) = (r.opencl_lines?, r.high_level_lines.filter(|h| *h > 0.0)?);
            let detail = format!("({cl} against {high} lines)");
            Some(Item { value: cl / high, group: display(&r.benchmark), detail })
        })
        .collect())
}

fn format_value(q: Quantity, x: f64) -> String {
    match q {
        Quantity::Speedup | Quantity::CodeSizeRatio | Quantity::Tiled => table::times(x),
        Quantity::Gelems => format!("{} GE/s", table::gelems(x)),
        Quantity::KernelBytes => super::cgo17::kilobytes(x.round() as usize),
    }
}

fn summarise(m: &Measure, items: &[Item]) -> String {
    let f = |x: f64| format_value(m.quantity, x);
    let lowest = items.iter().min_by(|a, b| a.value.total_cmp(&b.value));
    let highest = items.iter().max_by(|a, b| a.value.total_cmp(&b.value));
    let (Some(lo), Some(hi)) = (lowest, highest) else { return NONE.to_string() };
    match m.stat {
        Stat::Geomean => {
            let xs: Vec<f64> = items.iter().map(|i| i.value).collect();
            let g = geometric_mean(&xs).unwrap_or(f64::NAN);
            format!("{} (geometric mean of {}; {} to {})", f(g), items.len(), f(lo.value), f(hi.value))
        }
        Stat::Min => format!("{} ({})", f(lo.value), lo.what()),
        Stat::Max => format!("{} ({})", f(hi.value), hi.what()),
        Stat::Range => format!("{} ({}) to {} ({})", f(lo.value), lo.what(), f(hi.value), hi.what()),
        Stat::Each => each(items, f),
    }
}

/// `Bench: small 1.00x, large 0.99x; Other: ...`, benchmarks in the order
/// their items come.
fn each(items: &[Item], f: impl Fn(f64) -> String) -> String {
    let groups = rows::first_seen(items.iter().map(|i| i.group.as_str()));
    let parts: Vec<String> = groups
        .iter()
        .map(|g| {
            let values: Vec<String> = items
                .iter()
                .filter(|i| &i.group == g)
                .map(
                    |i| if i.detail.is_empty() { f(i.value) } else { format!("{} {}", i.detail, f(i.value)) },
                )
                .collect();
            format!("{g}: {}", values.join(", "))
        })
        .collect();
    parts.join("; ")
}
