//! Speedups computed from result rows: what Figure 8 and the end-of-run
//! summary show.

use std::collections::HashMap;

use super::results::{Bar, Row, Status, Timing};

/// What one bar position holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell {
    /// Reference median over this variant's median (> 1 is faster).
    Speedup(f64),
    /// The variant's row exists but is not `ok`.
    NotOk(Status),
    /// The variant is `ok` but the reference is missing or not `ok`, so
    /// there is nothing to compare with.
    NoReference,
    /// No row for this variant.
    Missing,
}

impl Cell {
    pub fn speedup(self) -> Option<f64> {
        match self {
            Cell::Speedup(s) => Some(s),
            _ => None,
        }
    }

    /// A short marker for a cell without a bar.
    pub fn marker(self) -> &'static str {
        match self {
            Cell::Speedup(_) => "",
            Cell::NotOk(status) => status.as_str(),
            Cell::NoReference => "no ref",
            Cell::Missing => "missing",
        }
    }
}

/// One benchmark at one size on one device.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub benchmark: String,
    pub size: String,
    /// The reference's median, where it is `ok`.
    pub reference_ms: Option<f64>,
    /// One cell per compared variant, in [`Bar::COMPARED`] order. CLBlast
    /// only appears for groups that have a CLBlast row, since most benchmarks
    /// have no library counterpart and a "missing" mark there would be noise.
    pub cells: Vec<(Bar, Cell)>,
    /// The CLBlast bar divides the reference's profiling time by CLBlast's
    /// host time: the file has no host-timed reference (`reference@host`).
    pub clblast_mixed_clocks: bool,
}

/// All groups of one device, plus their geometric means.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    pub device: String,
    pub groups: Vec<Group>,
    /// Geometric mean of each variant's speedups over the groups where it
    /// has one; `Cell::Missing` where it has none.
    pub geo_mean: Vec<(Bar, Cell)>,
}

impl Panel {
    /// Whether any group of this panel has a CLBlast cell.
    pub fn has_clblast(&self) -> bool {
        self.groups.iter().any(|g| g.cells.iter().any(|(v, _)| *v == Bar::Clblast))
    }

    /// Whether some CLBlast bar compares two clocks.
    pub fn clblast_mixed_clocks(&self) -> bool {
        self.groups.iter().any(|g| g.clblast_mixed_clocks)
    }
}

/// The device name of a panel whose rows have an empty `device` column.
pub const UNKNOWN_DEVICE: &str = "unknown device";

/// Groups rows into one panel per device, in the order devices, benchmarks
/// and sizes first appear. Where a (device, benchmark, size, variant) occurs
/// more than once, the last row wins: results are appended, so it is the
/// latest run.
pub fn build_panels(rows: &[Row]) -> Vec<Panel> {
    let mut devices: Vec<String> = Vec::new();
    // Per device: benchmarks in first-seen order, each with its sizes.
    let mut order: HashMap<String, Vec<(String, Vec<String>)>> = HashMap::new();
    let mut latest: HashMap<(&str, &str, &str, Bar, bool), &Row> = HashMap::new();
    for row in rows {
        let device = device_name(row);
        if !devices.iter().any(|d| d == device) {
            devices.push(device.to_string());
        }
        let benches = order.entry(device.to_string()).or_default();
        let idx = match benches.iter().position(|(b, _)| *b == row.benchmark) {
            Some(i) => i,
            None => {
                benches.push((row.benchmark.clone(), Vec::new()));
                benches.len() - 1
            }
        };
        if !benches[idx].1.contains(&row.size) {
            benches[idx].1.push(row.size.clone());
        }
        // The reader keeps only rows of Figure 8's bars.
        let Some((bar, twin)) = Bar::of(&row.variant) else { continue };
        latest.insert((device, &row.benchmark, &row.size, bar, twin), row);
    }
    devices
        .into_iter()
        .map(|device| {
            let mut groups = Vec::new();
            for (bench, sizes) in order.remove(&device).unwrap_or_default() {
                for size in sizes {
                    let get = |v: Bar, twin: bool| {
                        latest.get(&(device.as_str(), bench.as_str(), size.as_str(), v, twin))
                    };
                    groups.push(build_group(&bench, &size, get));
                }
            }
            let geo_mean = geo_means(&groups);
            Panel { device, groups, geo_mean }
        })
        .collect()
}

fn device_name(row: &Row) -> &str {
    let d = row.device.trim();
    if d.is_empty() {
        UNKNOWN_DEVICE
    } else {
        d
    }
}

/// `get(variant, twin)`: the latest row of a variant, or of its host-timed
/// twin. Each bar divides the reference's time by the variant's, both on
/// the variant's clock: a host-timed CLBlast bar uses `reference@host`
/// where there is one.
fn build_group<'a>(bench: &str, size: &str, get: impl Fn(Bar, bool) -> Option<&'a &'a Row>) -> Group {
    let ok_ms = |r: Option<&&Row>| r.filter(|r| r.status == Status::Ok).and_then(|r| r.median_ms);
    let reference_ms = ok_ms(get(Bar::Reference, false));
    let host_reference_ms = ok_ms(get(Bar::Reference, true));
    let mut cells = Vec::new();
    let mut clblast_mixed_clocks = false;
    for v in Bar::COMPARED {
        let row = get(v, false);
        if v == Bar::Clblast && row.is_none() {
            continue;
        }
        let host_timed = row.is_some_and(|r| Timing::parse(&r.timing) == Some(Timing::Host));
        let baseline =
            if host_timed && host_reference_ms.is_some() { host_reference_ms } else { reference_ms };
        let cell = match row {
            None => Cell::Missing,
            Some(r) if r.status != Status::Ok => Cell::NotOk(r.status),
            Some(r) => match (baseline, r.median_ms) {
                (Some(reference), Some(median)) if median > 0.0 => {
                    clblast_mixed_clocks |= host_timed && host_reference_ms.is_none();
                    Cell::Speedup(reference / median)
                }
                _ => Cell::NoReference,
            },
        };
        cells.push((v, cell));
    }
    Group { benchmark: bench.to_string(), size: size.to_string(), reference_ms, cells, clblast_mixed_clocks }
}

fn geo_means(groups: &[Group]) -> Vec<(Bar, Cell)> {
    let has_clblast = groups.iter().any(|g| g.cells.iter().any(|(v, _)| *v == Bar::Clblast));
    Bar::COMPARED
        .into_iter()
        .filter(|v| *v != Bar::Clblast || has_clblast)
        .map(|v| {
            let speedups: Vec<f64> = groups
                .iter()
                .flat_map(|g| g.cells.iter())
                .filter(|(cv, _)| *cv == v)
                .filter_map(|(_, c)| c.speedup())
                .collect();
            (v, geometric_mean(&speedups).map_or(Cell::Missing, Cell::Speedup))
        })
        .collect()
}

/// The geometric mean of positive values; `None` for an empty slice.
pub fn geometric_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    // Mean of logs, so that a long list of large values cannot overflow.
    let sum: f64 = values.iter().map(|v| v.ln()).sum();
    Some((sum / values.len() as f64).exp())
}

/// Formats a cell for text output: `1.23x`, or its marker.
pub fn format_cell(cell: Cell) -> String {
    match cell {
        Cell::Speedup(s) => format!("{}x", format_speedup(s)),
        Cell::Missing => "-".to_string(),
        other => other.marker().to_string(),
    }
}

/// Three significant digits or two decimals, whichever says more, so that
/// 0.05x and 12.3x are both readable.
pub fn format_speedup(s: f64) -> String {
    if s >= 10.0 {
        format!("{s:.1}")
    } else if s >= 0.1 {
        format!("{s:.2}")
    } else {
        format!("{s:.3}")
    }
}

/// A plain-text table of every panel's speedups, for the end of a run:
/// benchmark, size, the reference's median, each variant's speedup (or why
/// it has none), and a final geometric-mean row.
pub fn speedup_table(rows: &[Row]) -> String {
    let mut out = String::new();
    for (i, panel) in build_panels(rows).iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("Speedup over reference on {}\n", panel.device));
        let variants: Vec<Bar> = panel.geo_mean.iter().map(|(v, _)| *v).collect();
        let mut table: Vec<Vec<String>> = Vec::new();
        let mut header = vec!["benchmark".to_string(), "size".to_string(), "reference ms".to_string()];
        header.extend(variants.iter().map(|v| v.to_string()));
        table.push(header);
        for g in &panel.groups {
            let reference =
                g.reference_ms.map_or_else(|| reference_marker(rows, panel, g), |m| format!("{m:.3}"));
            let mut line = vec![g.benchmark.clone(), g.size.clone(), reference];
            for v in &variants {
                let cell = g.cells.iter().find(|(cv, _)| cv == v).map_or(Cell::Missing, |(_, c)| *c);
                line.push(format_cell(cell));
            }
            table.push(line);
        }
        let mut line = vec!["geo. mean".to_string(), String::new(), String::new()];
        line.extend(panel.geo_mean.iter().map(|(_, c)| format_cell(*c)));
        table.push(line);
        out.push_str(&align(&table));
    }
    out
}

/// Why a group has no reference time: the reference row's status, or `-`.
fn reference_marker(rows: &[Row], panel: &Panel, g: &Group) -> String {
    rows.iter()
        .rev()
        .find(|r| {
            Bar::of(&r.variant) == Some((Bar::Reference, false))
                && r.benchmark == g.benchmark
                && r.size == g.size
                && device_name(r) == panel.device
        })
        .map_or_else(|| "-".to_string(), |r| r.status.to_string())
}

/// Left-aligns text columns, right-aligns the rest, two spaces apart.
fn align(table: &[Vec<String>]) -> String {
    let cols = table.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| table.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in table {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            if c < 2 {
                line.push_str(&format!("{cell:<w$}", w = widths[c]));
            } else {
                line.push_str(&format!("{cell:>w$}", w = widths[c]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
