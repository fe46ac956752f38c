//! The stencil suite's summary table (`cgo18-summary.md`, written with the
//! figures): per benchmark and size the GElements/s of the reference, the
//! best Lift variant and Halide, their ratios, and for `lift-tuned` the
//! fraction of the measured copy bandwidth it reaches counting compulsory
//! traffic (each input grid read once, the output written once: the
//! config's `metrics.bytes`, the CSV's `frac_bandwidth`) and whether it
//! tiles (its row's note).

use super::model::geometric_mean;
use crate::harness::results::{Row, Status};
use crate::harness::variant_name::{Family, Variant, HALIDE};

fn latest<'a>(rows: &'a [Row], bench: &str, size: &str, variant: &Variant) -> Option<&'a Row> {
    rows.iter()
        .rev()
        .find(|r| r.benchmark == bench && r.size == size && r.variant == *variant && r.status == Status::Ok)
}

fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

/// The best of `lifts` over Halide in GElements/s, each on Halide's clock
/// (`clock::on_clock_of`); the flag says whether the clocks matched.
fn over_halide(rows: &[Row], lifts: &[Variant], b: &str, s: &str) -> Option<(f64, bool)> {
    let h = latest(rows, b, s, &Variant::peer(HALIDE))?;
    let hg = h.gelems.filter(|g| *g > 0.0)?;
    lifts
        .iter()
        .filter_map(|v| {
            let (r, same) = crate::harness::clock::on_clock_of(|v| latest(rows, b, s, v), v, h)?;
            Some((r.gelems? / hg, same))
        })
        .max_by(|x, y| x.0.total_cmp(&y.0))
}

/// The table as Markdown; the last line gives the geometric means of the
/// ratios.
pub fn summary_markdown(rows: &[Row]) -> String {
    let mut keys: Vec<(String, String)> = Vec::new();
    let mut lifts: Vec<Variant> = Vec::new();
    for r in rows {
        let k = (r.benchmark.clone(), r.size.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
        if r.variant.is_lift_named() && !lifts.contains(&r.variant) {
            lifts.push(r.variant.clone());
        }
    }
    let mut out = String::from(
        "| benchmark | size | reference GE/s | best Lift GE/s (variant) | Halide GE/s | Lift / Halide | Lift / reference | lift-tuned: fraction of copy bandwidth (compulsory traffic) | lift-tuned tiles |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    let (mut over_h, mut over_ref, mut mixed) = (Vec::new(), Vec::new(), false);
    for (b, s) in &keys {
        let ge = |v: &Variant| latest(rows, b, s, v).and_then(|r| r.gelems);
        let best = lifts.iter().filter_map(|v| ge(v).map(|g| (g, v))).max_by(|x, y| x.0.total_cmp(&y.0));
        let (reference, halide) = (ge(&Variant::Reference), ge(&Variant::peer(HALIDE)));
        let ratio = |other: Option<f64>| match (best, other) {
            (Some((l, _)), Some(o)) if o > 0.0 => Some(l / o),
            _ => None,
        };
        // Against Halide, the best Lift variant on Halide's clock.
        let (rh, same) = over_halide(rows, &lifts, b, s).map_or((None, true), |(x, same)| (Some(x), same));
        mixed |= !same;
        let rr = ratio(reference);
        over_h.extend(rh);
        over_ref.extend(rr);
        let rh_cell = format!("{}{}", num(rh, 2), if same { "" } else { "†" });
        let tuned = latest(rows, b, s, &Variant::Explored(Family::LiftTuned));
        let tiles = tuned.map_or("-", |r| {
            if r.message.ends_with("; tiled") {
                "yes"
            } else if r.message.ends_with("; not tiled") {
                "no"
            } else {
                "?"
            }
        });
        out.push_str(&format!(
            "| {b} | {s} | {} | {} | {} | {rh_cell} | {} | {} | {tiles} |\n",
            num(reference, 1),
            best.map_or("-".into(), |(g, v)| format!("{g:.1} ({v})")),
            num(halide, 1),
            num(rr, 2),
            num(tuned.and_then(|r| r.frac_bandwidth), 2),
        ));
    }
    if mixed {
        out.push_str(
            "\n† Halide host-timed against Lift's profiling events (no host-timed Lift rows in the file).\n",
        );
    }
    out.push_str(&format!(
        "\nGeometric means: best Lift / Halide {}, best Lift / reference {}.\n",
        num(geometric_mean(&over_h), 2),
        num(geometric_mean(&over_ref), 2)
    ));
    out
}
