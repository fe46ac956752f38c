//! Picking rows out of a results file, and the provenance and clock of the
//! rows a table shows.

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};

use crate::harness::clock;
use crate::harness::results::{Row, Status};
use crate::harness::variant_name::{Variant, HOST_TWIN};

/// The last row of a benchmark, size and variant: rows are appended, so it
/// is the latest run.
pub(super) fn last<'a>(rows: &'a [Row], bench: &str, size: &str, variant: &Variant) -> Option<&'a Row> {
    rows.iter().rev().find(|r| r.benchmark == bench && r.size == size && r.variant == *variant)
}

/// The median of a row that validated.
pub(super) fn ok_ms(row: Option<&Row>) -> Option<f64> {
    row.filter(|r| r.status == Status::Ok).and_then(|r| r.median_ms).filter(|m| *m > 0.0)
}

/// Whether `variant` is one of `patterns`: a name, or a prefix ending in `*`
/// (which leaves out host-timed twins, `<variant>@host`, unless it names them).
/// The patterns are `paper-claims.yaml`'s words, so they are matched against
/// the variant's `results.csv` spelling.
pub(super) fn matches(patterns: &[String], variant: &Variant) -> bool {
    let spelled = variant.to_string();
    patterns.iter().any(|p| match p.strip_suffix('*') {
        Some(_) if variant.is_twin() && !p.trim_end_matches('*').ends_with(HOST_TWIN) => false,
        Some(prefix) => spelled.starts_with(prefix),
        None => *p == spelled,
    })
}

/// The fastest validated row among the variants `patterns` names.
pub(super) fn fastest<'a>(rows: &'a [Row], bench: &str, size: &str, patterns: &[String]) -> Option<&'a Row> {
    // Keyed by spelling: a tie between equally fast variants goes to the
    // alphabetically first, whatever order the enum declares.
    let variants: BTreeMap<String, &Variant> = rows
        .iter()
        .filter(|r| r.benchmark == bench && r.size == size && matches(patterns, &r.variant))
        .map(|r| (r.variant.to_string(), &r.variant))
        .collect();
    variants
        .into_values()
        .filter_map(|v| last(rows, bench, size, v))
        .filter(|r| ok_ms(Some(r)).is_some())
        .min_by(|a, b| ok_ms(Some(a)).unwrap_or(f64::MAX).total_cmp(&ok_ms(Some(b)).unwrap_or(f64::MAX)))
}

/// `variant`'s row on `peer`'s clock (`crate::harness::clock::on_clock_of`).
pub(super) fn on_clock_of<'a>(
    rows: &'a [Row],
    bench: &str,
    size: &str,
    variant: &Variant,
    peer: &Row,
) -> Option<(&'a Row, bool)> {
    clock::on_clock_of(|v| last(rows, bench, size, v), variant, peer)
}

/// `over`'s median over `of`'s, with `over` on `of`'s clock where the file
/// allows: above 1 when `of` is faster. The flag says whether the clocks
/// match.
pub(super) fn speedup_on_clock(
    rows: &[Row],
    bench: &str,
    size: &str,
    over: &Variant,
    of: &Variant,
) -> Option<(f64, bool)> {
    let of_row = last(rows, bench, size, of)?;
    let (over_row, same) = on_clock_of(rows, bench, size, over, of_row)?;
    Some((ok_ms(Some(over_row))? / ok_ms(Some(of_row))?, same))
}

/// `over`'s median over `of`'s: above 1 when `of` is faster.
pub(super) fn speedup(rows: &[Row], bench: &str, size: &str, over: &Variant, of: &Variant) -> Option<f64> {
    speedup_on_clock(rows, bench, size, over, of).map(|(x, _)| x)
}

/// The mark of a ratio whose two sides are on different clocks.
pub(super) const MIXED: &str = "†";

/// The sentence that explains [`MIXED`], where some cell has it.
pub(super) const MIXED_NOTE: &str =
    "† compares a host-timed peer with profiling events: the file has no host-timed twin (`<variant>@host`) of the other side.";

/// [`MIXED_NOTE`] on a line of its own where `text` has a [`MIXED`] cell.
pub(super) fn mixed_note(text: &str) -> String {
    if text.contains(MIXED) {
        format!("{MIXED_NOTE}\n")
    } else {
        String::new()
    }
}

/// The speedup as a cell, or why there is none: the variant's status where
/// it did not validate, `–` where it has no row or the reference none; `†`
/// after a ratio of two clocks.
pub(super) fn speedup_cell(rows: &[Row], bench: &str, size: &str, over: &Variant, of: &Variant) -> String {
    match (speedup_on_clock(rows, bench, size, over, of), last(rows, bench, size, of)) {
        (Some((s, same)), _) => format!("{}{}", super::table::ratio(s), if same { "" } else { MIXED }),
        (None, Some(r)) if r.status != Status::Ok => r.status.to_string(),
        _ => super::table::NONE.to_string(),
    }
}

/// Values in the order they first appear (names, variants).
pub(super) fn first_seen<'a, T>(values: impl IntoIterator<Item = &'a T>) -> Vec<T::Owned>
where
    T: ?Sized + PartialEq + ToOwned + 'a,
    T::Owned: Borrow<T>,
{
    let mut out: Vec<T::Owned> = Vec::new();
    for v in values {
        if !out.iter().any(|o| o.borrow() == v) {
            out.push(v.to_owned());
        }
    }
    out
}

/// `known` in its order, where present, then the rest in first-seen order.
pub(super) fn ordered<T: PartialEq<K> + Clone, K>(present: Vec<T>, known: &[K]) -> Vec<T> {
    let mut out: Vec<T> = known.iter().filter_map(|k| present.iter().find(|p| *p == k).cloned()).collect();
    out.extend(present.into_iter().filter(|p| !known.iter().any(|k| p == k)));
    out
}

/// A benchmark as the papers name it (`mm-amd` -> `MM (AMD version)`, `icfp15-md`
/// -> `MD`).
pub(super) fn display(bench: &str) -> String {
    match bench.strip_prefix("icfp15-") {
        Some("blackscholes") => "BlackScholes".into(),
        Some("md") => "MD".into(),
        Some(other) => other.into(),
        None => crate::harness::chart::display_name(bench),
    }
}

/// The commits and devices of the rows behind a number.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Provenance {
    pub commits: BTreeSet<String>,
    pub devices: BTreeSet<String>,
}

impl Provenance {
    pub fn add(&mut self, row: &Row) {
        self.commits.insert(or_unknown(&row.git_commit));
        self.devices.insert(or_unknown(&row.device));
    }

    /// `commit `abc1234`, NVIDIA H100 80GB HBM3` (several of either joined).
    pub fn describe(&self) -> String {
        let commits: Vec<String> = self.commits.iter().map(|c| format!("`{c}`")).collect();
        let noun = if commits.len() > 1 { "commits" } else { "commit" };
        let devices: Vec<&str> = self.devices.iter().map(String::as_str).collect();
        format!("{noun} {}, {}", commits.join(", "), devices.join(", "))
    }
}

fn or_unknown(s: &str) -> String {
    if s.trim().is_empty() {
        "unknown".into()
    } else {
        s.trim().to_string()
    }
}

/// What the `timing` column of `variants`' rows says, for instance
/// `reference, explored: profiling events; clblast: host`.
pub(super) fn clocks(rows: &[Row], variants: &[Variant]) -> String {
    let mut by_clock: Vec<(String, Vec<String>)> = Vec::new();
    for v in variants {
        let clocks = first_seen(rows.iter().filter(|r| r.variant == *v).map(|r| r.timing.as_str()));
        let clock = match clocks.as_slice() {
            [] => continue,
            [one] => clock_name(one),
            several => several.iter().map(|c| clock_name(c)).collect::<Vec<_>>().join(" or "),
        };
        match by_clock.iter_mut().find(|(c, _)| *c == clock) {
            Some((_, vs)) => vs.push(v.to_string()),
            None => by_clock.push((clock, vec![v.to_string()])),
        }
    }
    let parts: Vec<String> = by_clock.into_iter().map(|(c, vs)| format!("{}: {c}", vs.join(", "))).collect();
    parts.join("; ")
}

fn clock_name(timing: &str) -> String {
    match timing {
        "profiling" => "OpenCL profiling events".into(),
        "host" => "host clock".into(),
        "cuda-events" => "CUDA events".into(),
        "" => "not recorded".into(),
        other => other.into(),
    }
}

/// `N rows, all ok` or `N rows, K ok`.
pub(super) fn counted(rows: &[&Row]) -> String {
    let ok = rows.iter().filter(|r| r.status == Status::Ok).count();
    if ok == rows.len() {
        format!("{} rows, all ok", rows.len())
    } else {
        format!("{} rows, {ok} ok", rows.len())
    }
}
