//! The CGO 2018 block: GElements/s of the reference, each Lift variant and
//! Halide per stencil and size (Figure 7), the best Lift variant over Halide
//! (Figure 8), `lift-tuned`'s fraction of the copy bandwidth, and their
//! geometric means.

use std::path::Path;

use super::cgo17::mean_and_lowest;
use super::rows::{self, display, first_seen, last, ordered, Provenance};
use super::table::{self, Table, NONE};
use super::{ReportError, Sources};
use crate::harness::results::{Row, Status};
use crate::harness::variant_name::{Family, Variant, HALIDE};

const REFERENCE: Variant = Variant::Reference;
/// The device's explored stencil program.
const TUNED: Variant = Variant::Explored(Family::LiftTuned);

/// The Lift variants the paper draws, in its order.
fn known_lift_variants() -> [Variant; 4] {
    let named = |n: &str| Variant::Named(n.into());
    [named("naive"), named("tiled"), named("slideseq"), TUNED]
}

/// A validated row's GElements/s.
fn gelems(row: Option<&Row>) -> Option<f64> {
    row.filter(|r| r.status == Status::Ok).and_then(|r| r.gelems).filter(|g| *g > 0.0)
}

fn cell(row: Option<&Row>) -> String {
    match (gelems(row), row) {
        (Some(g), _) => table::gelems(g),
        (None, Some(r)) if r.status != Status::Ok => r.status.to_string(),
        _ => NONE.to_string(),
    }
}

/// Whether a `lift-tuned` row's program tiles (the runner's note ends with
/// `; tiled` or `; not tiled`).
pub(super) fn tiles(row: &Row) -> Option<bool> {
    if row.message.ends_with("; not tiled") {
        Some(false)
    } else if row.message.ends_with("; tiled") {
        Some(true)
    } else {
        None
    }
}

/// The Lift variants of the file, the known ones first.
fn lift_variants(rows: &[Row]) -> Vec<Variant> {
    let present = first_seen(rows.iter().map(|r| &r.variant).filter(|v| v.is_lift_named()));
    ordered(present, &known_lift_variants())
}

/// The best of `lifts` over Halide (GElements/s), each Lift variant on
/// Halide's clock (its host-timed twin where Halide was host-timed); the
/// flag says whether the clocks matched.
fn over_halide(rows: &[Row], lifts: &[Variant], b: &str, s: &str) -> Option<(f64, bool)> {
    let h = last(rows, b, s, &Variant::peer(HALIDE))?;
    let hg = gelems(Some(h))?;
    lifts
        .iter()
        .filter_map(|v| {
            let (r, same) = rows::on_clock_of(rows, b, s, v, h)?;
            Some((gelems(Some(r))? / hg, same))
        })
        .max_by(|x, y| x.0.total_cmp(&y.0))
}

fn ratio_cell(x: Option<(f64, bool)>) -> String {
    x.map_or(NONE.to_string(), |(x, same)| {
        format!("{}{}", table::ratio(x), if same { "" } else { rows::MIXED })
    })
}

/// `cgo18 FILE`: the table and its summary lines.
pub(super) fn stencils(sources: &mut Sources, csv: &Path) -> Result<String, ReportError> {
    let rows = sources.results(csv)?;
    let lifts = lift_variants(&rows);
    let mut header = vec!["benchmark".to_string(), "size".into(), "reference".into()];
    header.extend(lifts.iter().map(Variant::to_string));
    header.extend([
        "Halide".into(),
        "best Lift / Halide".into(),
        "lift-tuned: fraction of copy bandwidth".into(),
        "Halide: fraction of copy bandwidth".into(),
    ]);
    let mut t = Table::new(&header);
    let mut keys: Vec<(String, String)> = Vec::new();
    for r in rows.iter() {
        let k = (r.benchmark.clone(), r.size.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let (mut best_h, mut tuned_h, mut tuned_r) = (Vec::new(), Vec::new(), Vec::new());
    let mut halide_fracs = Vec::new();
    for (b, s) in &keys {
        let g = |v: &Variant| gelems(last(&rows, b, s, v));
        let what = format!("{} {s}", display(b));
        let over = |x: Option<f64>, y: Option<f64>| Some(x? / y?);
        let bh = over_halide(&rows, &lifts, b, s);
        best_h.extend(bh.map(|(x, _)| (x, what.clone())));
        tuned_h.extend(over_halide(&rows, &[TUNED], b, s).map(|(x, _)| (x, what.clone())));
        tuned_r.extend(over(g(&TUNED), g(&REFERENCE)).map(|x| (x, what.clone())));
        let mut line = vec![display(b), s.clone(), cell(last(&rows, b, s, &REFERENCE))];
        line.extend(lifts.iter().map(|v| cell(last(&rows, b, s, v))));
        let frac =
            last(&rows, b, s, &TUNED).filter(|r| r.status == Status::Ok).and_then(|r| r.frac_bandwidth);
        let halide = last(&rows, b, s, &Variant::peer(HALIDE));
        let halide_frac = halide.filter(|r| r.status == Status::Ok).and_then(|r| r.frac_bandwidth);
        halide_fracs.extend(halide_frac);
        line.extend([
            cell(halide),
            ratio_cell(bh),
            table::opt(frac, table::fraction),
            table::opt(halide_frac, table::fraction),
        ]);
        t.push(line);
    }
    let mut prov = Provenance::default();
    rows.iter().for_each(|r| prov.add(r));
    let mut out = format!(
        "From `{}` ({}; {}): GElements/s (output elements over the median kernel time).\n\n",
        csv.display(),
        rows::counted(&rows.iter().collect::<Vec<_>>()),
        prov.describe()
    );
    out.push_str(&t.markdown());
    out.push_str(&format!(
        "\n{}Geometric means: best Lift variant over Halide {}; `lift-tuned` over Halide {}; \
         `lift-tuned` over the reference (where there is one) {}. {}\n{}\n",
        rows::mixed_note(&t.markdown()),
        mean_and_lowest(&best_h),
        mean_and_lowest(&tuned_h),
        mean_and_lowest(&tuned_r),
        tiling_line(&rows),
        ceiling_line(&halide_fracs)
    ));
    let mut variants = vec![REFERENCE];
    variants.extend(lifts);
    variants.push(Variant::peer(HALIDE));
    out.push_str(&format!("Clocks (`timing`): {}.\n", rows::clocks(&rows, &variants)));
    Ok(out)
}

/// Below this fraction of the copy bandwidth a stencil's Halide kernel is
/// taken to be bound by something other than memory traffic (launch
/// latency on srad's small grids), where the bandwidth gives no ceiling.
const BANDWIDTH_BOUND: f64 = 0.5;

/// Issue 21's goal for the best Lift variant over Halide.
const GOAL: f64 = 1.2;

/// The ratio over Halide that a Lift kernel moving the compulsory traffic
/// at the measured copy bandwidth would reach: `1 / f` for Halide's
/// fraction `f`. It bounds what any Lift kernel can show over Halide on
/// the bandwidth-bound rows, so a reader can tell a goal out of reach
/// from one missed.
fn ceiling_line(halide_fracs: &[f64]) -> String {
    let bound: Vec<f64> = halide_fracs.iter().copied().filter(|f| *f >= BANDWIDTH_BOUND).collect();
    let ceilings: Vec<f64> = bound.iter().map(|f| 1.0 / f).collect();
    let Some(mean) = crate::harness::chart::geometric_mean(&ceilings) else {
        return "Halide's fraction of copy bandwidth: not recorded.".to_string();
    };
    let beyond = bound.iter().filter(|f| 1.0 / **f < GOAL).count();
    format!(
        "Halide reaches at least {} of the copy bandwidth on {} of {} rows; on those a Lift kernel \
         at the full copy bandwidth would be {} times as fast as Halide (geometric mean), and {GOAL}x would \
         need more than the copy bandwidth on {} of them.",
        table::fraction(BANDWIDTH_BOUND),
        bound.len(),
        halide_fracs.len(),
        table::ratio(mean),
        beyond
    )
}

/// Of the benchmarks of `rows` (one program's rows), how many programs
/// tile, and how many benchmarks there are.
pub(super) fn tiling_counts(rows: &[&Row]) -> (usize, usize) {
    let ok: Vec<&Row> = rows.iter().copied().filter(|r| r.status == Status::Ok).collect();
    let benches = first_seen(ok.iter().map(|r| r.benchmark.as_str()));
    let tiled =
        benches.iter().filter(|b| ok.iter().any(|r| &r.benchmark == *b && tiles(r) == Some(true))).count();
    (tiled, benches.len())
}

fn tiling_line(rows: &[Row]) -> String {
    let tuned: Vec<&Row> = rows.iter().filter(|r| r.variant == TUNED).collect();
    let (tiled, of) = tiling_counts(&tuned);
    format!("`lift-tuned` tiles in local memory for {tiled} of {of} benchmarks.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_counts_only_bandwidth_bound_rows() {
        // 0.1 is latency-bound (no ceiling); 1.0 leaves no room at all, 0.5 room for 2x.
        let line = ceiling_line(&[1.0, 0.5, 0.1]);
        assert_eq!(
            line,
            "Halide reaches at least 0.50 of the copy bandwidth on 2 of 3 rows; on those a Lift kernel \
             at the full copy bandwidth would be 1.41 times as fast as Halide (geometric mean), and 1.2x \
             would need more than the copy bandwidth on 1 of them."
        );
        assert_eq!(ceiling_line(&[]), "Halide's fraction of copy bandwidth: not recorded.");
    }
}
