//! The CGO 2017 blocks: Figure 8's speedups (level `all` and CLBlast over
//! the reference), the geometric means of each half of Table 1 and of each
//! optimisation level, and the `lift-derived` rows beside the hand-written
//! programs.

use std::path::Path;

use super::rows::{self, display, first_seen, last, ok_ms, ordered, speedup, speedup_cell, Provenance};
use super::table::{self, Table, NONE};
use super::{DataProblem, ReportError, Sources};
use crate::harness::chart::geometric_mean;
use crate::harness::results::{Row, Status};
use crate::harness::variant_name::{Level, Variant, CLBLAST};

/// Table 1's benchmarks in the paper's order, in its two halves.
pub(super) const TABLE1_HALVES: [&[&str]; 2] = [
    &["nbody-nvidia", "nbody-amd", "md", "kmeans", "nn", "mri-q"],
    &["convolution", "atax", "gemv", "gesummv", "mm-amd", "mm-nvidia"],
];

const REFERENCE: Variant = Variant::Reference;
/// Figure 8's Lift bar: every optimisation.
const ALL: Variant = Variant::Level(Level::All);

/// The config's named program derived by the committed rewrites
/// (`lift-derived`).
fn lift_derived() -> Variant {
    Variant::Named("derived".into())
}

fn table1_benchmarks() -> Vec<&'static str> {
    TABLE1_HALVES.concat()
}

/// Sizes in first-seen order.
fn sizes(rows: &[Row]) -> Vec<String> {
    first_seen(rows.iter().map(|r| r.size.as_str()))
}

/// `cgo17 FILE`: the speedup table and its summary lines.
pub(super) fn speedups(sources: &mut Sources, csv: &Path) -> Result<String, ReportError> {
    let rows = sources.results(csv)?;
    let known = table1_benchmarks();
    let benches = ordered(first_seen(rows.iter().map(|r| r.benchmark.as_str())), &known);
    let sizes = sizes(&rows);
    let mut header = vec!["benchmark".to_string()];
    header.extend(sizes.iter().map(|s| format!("all: {s}")));
    header.extend(sizes.iter().map(|s| format!("CLBlast: {s}")));
    let mut t = Table::new(&header);
    let mut shown: Vec<&Row> = Vec::new();
    for b in benches.iter().filter(|b| rows.iter().any(|r| &r.benchmark == *b && r.variant == ALL)) {
        let name =
            if known.contains(&b.as_str()) { display(b) } else { format!("{} (not in Table 1)", display(b)) };
        let mut line = vec![name];
        for v in [ALL, Variant::peer(CLBLAST)] {
            line.extend(sizes.iter().map(|s| speedup_cell(&rows, b, s, &REFERENCE, &v)));
        }
        t.push(line);
        shown.extend(rows.iter().filter(|r| &r.benchmark == b));
    }
    t.drop_empty_columns(1);
    let mut prov = Provenance::default();
    shown.iter().for_each(|r| prov.add(r));
    let mut out = format!(
        "From `{}` ({}; {}): the reference's median time over the Lift kernel's with every \
         optimisation (`all`) and over CLBlast's, per size (Figure 8).\n\n",
        csv.display(),
        rows::counted(&rows.iter().collect::<Vec<_>>()),
        prov.describe()
    );
    out.push_str(&t.markdown());
    out.push('\n');
    out.push_str(&rows::mixed_note(&t.markdown()));
    out.push_str(&halves_line(&rows, &sizes));
    out.push('\n');
    out.push_str(&levels_line(&rows, &sizes));
    let variants: Vec<Variant> = [REFERENCE]
        .into_iter()
        .chain(Level::ALL.map(Variant::Level))
        .chain([Variant::peer(CLBLAST)])
        .collect();
    out.push_str(&format!("\nClocks (`timing`): {}.\n", rows::clocks(&rows, &variants)));
    Ok(out)
}

/// The speedups of `variant` over the reference for `benches` at every size,
/// each with its benchmark and size.
fn speedups_of<'a>(
    rows: &[Row],
    benches: &[&'a str],
    sizes: &'a [String],
    variant: &Variant,
) -> Vec<(f64, String)> {
    let mut out = Vec::new();
    for b in benches {
        for s in sizes {
            if let Some(x) = speedup(rows, b, s, &REFERENCE, variant) {
                out.push((x, format!("{} {s}", display(b))));
            }
        }
    }
    out
}

/// `G (lowest L, what)` for a list of speedups; `–` when empty.
pub(super) fn mean_and_lowest(values: &[(f64, String)]) -> String {
    let xs: Vec<f64> = values.iter().map(|(x, _)| *x).collect();
    let lowest = values.iter().min_by(|a, b| a.0.total_cmp(&b.0));
    match (geometric_mean(&xs), lowest) {
        (Some(g), Some((l, what))) => format!("{} (lowest {}, {what})", table::ratio(g), table::ratio(*l)),
        _ => NONE.to_string(),
    }
}

fn halves_line(rows: &[Row], sizes: &[String]) -> String {
    let parts: Vec<String> = TABLE1_HALVES
        .iter()
        .map(|half| {
            let first = display(half[0]);
            let last = display(half[half.len() - 1]);
            format!("{} for {first} to {last}", mean_and_lowest(&speedups_of(rows, half, sizes, &ALL)))
        })
        .collect();
    format!("Geometric means of `all` over the reference, every size: {}.", parts.join("; "))
}

/// The geometric mean of each level over the twelve, and the largest
/// kernel built without array-access simplification (section 7.4).
fn levels_line(rows: &[Row], sizes: &[String]) -> String {
    let twelve = table1_benchmarks();
    let means: Vec<String> = Level::ALL
        .into_iter()
        .map(|l| {
            let xs: Vec<f64> =
                speedups_of(rows, &twelve, sizes, &Variant::Level(l)).into_iter().map(|(x, _)| x).collect();
            format!("`{}` {}", l.as_str(), table::opt(geometric_mean(&xs), table::ratio))
        })
        .collect();
    // Array-access simplification is what `all` adds to the levels below it.
    let largest = rows
        .iter()
        .filter(|r| r.status == Status::Ok && matches!(r.variant, Variant::Level(l) if l != Level::All))
        .filter_map(|r| r.kernel_bytes.map(|b| (b, r)))
        .max_by_key(|(b, _)| *b);
    let largest = largest.map_or(NONE.to_string(), |(b, r)| {
        format!("{} ({} {}, `{}`)", kilobytes(b), display(&r.benchmark), r.size, r.variant)
    });
    format!(
        "Each level over the reference, geometric mean over the twelve of Table 1 and every size: {}. \
         Largest kernel without array-access simplification: {largest}.",
        means.join(", ")
    )
}

/// A kernel's size in KB (1000 bytes), as the paper's "7MB" counts.
pub(super) fn kilobytes(bytes: usize) -> String {
    format!("{} KB", table::significant(bytes as f64 / 1000.0, 3))
}

/// `cgo17-derived FILE`: the programs derived by the committed rewrite
/// derivations beside the hand-written Lift programs and the reference.
pub(super) fn derived(sources: &mut Sources, csv: &Path) -> Result<String, ReportError> {
    let rows = sources.results(csv)?;
    let mut t = Table::new(&["benchmark", "size", "lift-derived ms", "all ms", "reference ms"]);
    let mut prov = Provenance::default();
    let derived = lift_derived();
    for r in rows.iter().filter(|r| r.variant == derived) {
        if last(&rows, &r.benchmark, &r.size, &derived) != Some(r) {
            continue;
        }
        let mut cell = |v: &Variant| {
            let row = last(&rows, &r.benchmark, &r.size, v);
            row.iter().for_each(|x| prov.add(x));
            match (ok_ms(row), row) {
                (Some(m), _) => table::ms(m),
                (None, Some(x)) => x.status.to_string(),
                (None, None) => NONE.to_string(),
            }
        };
        let line = vec![display(&r.benchmark), r.size.clone(), cell(&derived), cell(&ALL), cell(&REFERENCE)];
        t.push(line);
    }
    if t.is_empty() {
        return Err(ReportError::Data {
            what: csv.display().to_string(),
            problem: DataProblem::NoDerivedRows,
        });
    }
    Ok(format!("From `{}` ({}): median kernel times.\n\n{}", csv.display(), prov.describe(), t.markdown()))
}

/// `times FILE`: every validated variant's median beside the reference's,
/// per benchmark and size (a file of one-off variants, such as the
/// derived tile sizes of `mm-tiled/results.csv`).
pub(super) fn times(sources: &mut Sources, csv: &Path) -> Result<String, ReportError> {
    let rows = sources.results(csv)?;
    let mut t =
        Table::new(&["benchmark", "size", "variant", "median ms", "reference / variant", "all / variant"]);
    let mut prov = Provenance::default();
    for r in rows.iter().filter(|r| last(&rows, &r.benchmark, &r.size, &r.variant) == Some(*r)) {
        prov.add(r);
        let ms = match ok_ms(Some(r)) {
            Some(m) => table::ms(m),
            None => r.status.to_string(),
        };
        let over = |base: &Variant| speedup_cell(&rows, &r.benchmark, &r.size, base, &r.variant);
        t.push(vec![
            display(&r.benchmark),
            r.size.clone(),
            format!("`{}`", r.variant),
            ms,
            over(&REFERENCE),
            over(&ALL),
        ]);
    }
    t.drop_empty_columns(4);
    if t.is_empty() {
        return Err(ReportError::Data { what: csv.display().to_string(), problem: DataProblem::NoRows });
    }
    Ok(format!(
        "From `{}` ({}; {}): median kernel times.\n\n{}",
        csv.display(),
        rows::counted(&rows.iter().collect::<Vec<_>>()),
        prov.describe(),
        t.markdown()
    ))
}
