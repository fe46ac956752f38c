//! The ICFP 2015 blocks: the explored programs and the libraries over the
//! reference (Figures 10 and 11), and the performance-portability table of
//! a run with `explored-other`.

use std::path::Path;

use super::cgo17::mean_and_lowest;
use super::rows::{self, display, first_seen, ordered, speedup_cell, Provenance};
use super::table::{self, Table};
use super::{ReportError, Sources};
use crate::harness::results::{Row, Status};
use crate::harness::variant_name::{Family, Variant, CLBLAST, CUBLAS};

const ORDER: [&str; 6] =
    ["icfp15-scal", "icfp15-asum", "icfp15-dot", "icfp15-gemv", "icfp15-blackscholes", "icfp15-md"];
const REFERENCE: Variant = Variant::Reference;
/// The device's own explored program.
const EXPLORED: Variant = Variant::Explored(Family::Explored);

/// The variants compared with the reference, each with its column label.
fn compared() -> [(Variant, &'static str); 3] {
    [(EXPLORED, "explored"), (Variant::peer(CLBLAST), "CLBlast"), (Variant::peer(CUBLAS), "cuBLAS")]
}

/// Whether a row is this device's program on its own clock: neither a
/// host-timed twin nor another device's program (the portability table's).
fn is_own(v: &Variant) -> bool {
    !v.is_twin() && !v.is_other_device()
}

/// `icfp15 FILE`: speedups over the reference per size, and the explored
/// program over the fastest of the reference and the libraries.
pub(super) fn speedups(sources: &mut Sources, csv: &Path) -> Result<String, ReportError> {
    let rows = sources.results(csv)?;
    let benches = ordered(first_seen(rows.iter().map(|r| r.benchmark.as_str())), &ORDER);
    let sizes = first_seen(rows.iter().map(|r| r.size.as_str()));
    let mut header = vec!["benchmark".to_string()];
    for (_, label) in compared() {
        header.extend(sizes.iter().map(|s| format!("{label}: {s}")));
    }
    header.extend(sizes.iter().map(|s| format!("explored / fastest other: {s}")));
    let mut t = Table::new(&header);
    let others = [REFERENCE, Variant::peer(CLBLAST), Variant::peer(CUBLAS)];
    let mut over_best = Vec::new();
    let mut prov = Provenance::default();
    for b in benches.iter().filter(|b| rows.iter().any(|r| &r.benchmark == *b && r.variant == EXPLORED)) {
        let mut line = vec![display(b)];
        for (v, _) in compared() {
            line.extend(sizes.iter().map(|s| speedup_cell(&rows, b, s, &REFERENCE, &v)));
        }
        for s in &sizes {
            let x = over_fastest(&rows, b, s, &others);
            over_best.extend(x.map(|(x, _)| (x, format!("{} {s}", display(b)))));
            line.push(x.map_or(table::NONE.to_string(), |(x, same)| {
                format!("{}{}", table::ratio(x), if same { "" } else { rows::MIXED })
            }));
        }
        t.push(line);
        rows.iter().filter(|r| &r.benchmark == b && is_own(&r.variant)).for_each(|r| prov.add(r));
    }
    t.drop_empty_columns(1);
    let shown: Vec<&Row> = rows.iter().filter(|r| is_own(&r.variant)).collect();
    let mut out = format!(
        "From `{}` ({}; {}): the reference's median time over the explored program's and the \
         libraries'.\n\n",
        csv.display(),
        rows::counted(&shown),
        prov.describe()
    );
    out.push_str(&t.markdown());
    out.push_str(&rows::mixed_note(&t.markdown()));
    let variants = [REFERENCE, EXPLORED, Variant::peer(CLBLAST), Variant::peer(CUBLAS)];
    out.push_str(&format!(
        "\nThe explored program over the fastest of the reference and the libraries: geometric mean {}. \
         Clocks (`timing`): {}.\n",
        mean_and_lowest(&over_best),
        rows::clocks(&rows, &variants)
    ));
    Ok(out)
}

/// The explored program's speedup over the strongest of `others`, each
/// compared on its own clock (the explored program's host-timed twin
/// against host-timed CLBlast); the flag says whether the clocks matched.
fn over_fastest(rows: &[Row], b: &str, s: &str, others: &[Variant]) -> Option<(f64, bool)> {
    others
        .iter()
        .filter_map(|o| rows::speedup_on_clock(rows, b, s, &EXPLORED, o).map(|(x, same)| (1.0 / x, same)))
        .min_by(|x, y| x.0.total_cmp(&y.0))
}

/// One row of `portability.csv`.
#[derive(Debug, serde::Deserialize)]
struct Portability {
    benchmark: String,
    size: String,
    device: String,
    own_ms: Option<f64>,
    other_device: String,
    other_ms: Option<f64>,
    own_speedup: Option<f64>,
    same_derivation: String,
    own_status: Status,
    other_status: Status,
}

/// `portability FILE`: each device's own program against the other
/// devices' programs on it. The commit is that of the results file the
/// table was computed from, beside it.
pub(super) fn portability(sources: &mut Sources, csv: &Path) -> Result<String, ReportError> {
    let mut records: Vec<Portability> = sources.records(csv)?;
    let order = |b: &str| ORDER.iter().position(|o| *o == b).unwrap_or(ORDER.len());
    records.sort_by_key(|r| order(&r.benchmark));
    let mut t = Table::new(&[
        "benchmark",
        "size",
        "own program ms",
        "other device",
        "its program ms",
        "own speedup",
        "same derivation",
    ]);
    let ms = |v: Option<f64>, status: Status| {
        if status == Status::Ok {
            table::opt(v, table::ms)
        } else {
            status.to_string()
        }
    };
    for r in &records {
        let same = match r.same_derivation.as_str() {
            "true" => "yes",
            "false" => "no",
            _ => table::NONE,
        };
        t.push(vec![
            display(&r.benchmark),
            r.size.clone(),
            ms(r.own_ms, r.own_status),
            r.other_device.clone(),
            ms(r.other_ms, r.other_status),
            table::opt(r.own_speedup, table::times),
            same.to_string(),
        ]);
    }
    let beside = csv.with_file_name("results-icfp15-portability.csv");
    let mut prov = Provenance::default();
    if sources.root.join(&beside).is_file() {
        sources
            .results(&beside)?
            .iter()
            .filter(|r| {
                matches!(
                    r.variant.untwinned(),
                    Variant::Explored(Family::Explored) | Variant::OtherDevice(Family::Explored, _)
                )
            })
            .for_each(|r| prov.add(r));
    }
    let from = if prov.commits.is_empty() {
        let devices = first_seen(records.iter().map(|r| r.device.as_str()));
        format!("device {} (no results file beside it gives the commit)", devices.join(", "))
    } else {
        format!("rows of `{}`: {}", beside.display(), prov.describe())
    };
    Ok(format!(
        "From `{}` ({from}); own speedup = the other program's median over the own program's.\n\n{}\n{}\n",
        csv.display(),
        t.markdown(),
        goal_line(&records)
    ))
}

/// The own program's speedup the portability goal asks for.
const PORTABILITY_GOAL: f64 = 1.5;

/// How many own programs are at least [`PORTABILITY_GOAL`] times faster
/// than the other device's, and which are not.
fn goal_line(records: &[Portability]) -> String {
    let below: Vec<String> = records
        .iter()
        .filter(|r| r.own_speedup.is_none_or(|x| x < PORTABILITY_GOAL))
        .map(|r| display(&r.benchmark))
        .collect();
    let met = records.len() - below.len();
    let rest = if below.is_empty() { String::new() } else { format!(" (not: {})", below.join(", ")) };
    format!(
        "Own program at least {PORTABILITY_GOAL}x faster than the other device's: {met} of {}{rest}.",
        records.len()
    )
}
