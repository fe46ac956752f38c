//! `generality PATH`: a `results-generality.csv` (`lift generality`) as
//! the README's table against PyTorch: per program the explored time,
//! PyTorch's, the speedup, the fraction of the limit that binds it, and a
//! summary line (geometric mean, programs below 0.8x, the run).

use super::rows::first_seen;
use super::table::{ms, opt, times, Table, NONE};
use super::ReportError;
use crate::harness::chart::geometric_mean;
use crate::harness::generality::{row, Outcome, Row};
use std::path::Path;

pub(super) fn table(root: &Path, rel: &Path) -> Result<String, ReportError> {
    let path = root.join(rel);
    let rows = row::read(&path).map_err(|msg| ReportError::Read { path: path.clone(), msg })?;
    if rows.is_empty() {
        return Err(ReportError::Data { what: rel.display().to_string(), msg: "no rows".into() });
    }
    let mut t = Table::new(&[
        "program",
        "class",
        "sizes",
        "explored (ms)",
        "candidates valid / tried",
        "PyTorch (ms)",
        "PyTorch call",
        "explored over PyTorch",
        "of the limit",
    ]);
    for r in &rows {
        let limit = match (r.pct_copy, r.pct_fp32) {
            (_, Some(f)) if r.pct_of_limit() == Some(f) => format!("{f:.0}% FP32"),
            (Some(c), _) => format!("{c:.0}% copy"),
            _ => NONE.to_string(),
        };
        let explored =
            if r.status == Outcome::Ok { opt(r.lift_ms, ms) } else { format!("failed: {}", r.message) };
        t.push(vec![
            format!("`{}`", r.program),
            r.class.clone(),
            r.sizes.replace(';', ", "),
            explored,
            format!("{} / {}", r.valid, r.tried),
            opt(r.peer_ms, ms),
            if r.peer.is_empty() { NONE.to_string() } else { format!("`{}`", r.peer) },
            opt(r.speedup, times),
            limit,
        ]);
    }
    Ok(format!("{}\n\n{}", summary(&rows), t.markdown()))
}

fn summary(rows: &[Row]) -> String {
    let s: Vec<f64> = rows.iter().filter_map(|r| r.speedup).collect();
    let mean = geometric_mean(&s).map_or(NONE.to_string(), times);
    let below: Vec<String> = rows
        .iter()
        .filter(|r| r.speedup.is_none_or(|x| x < 0.8))
        .map(|r| format!("`{}`", r.program))
        .collect();
    let commits = first_seen(rows.iter().map(|r| r.commit.as_str()));
    let devices = first_seen(rows.iter().map(|r| r.device.as_str()));
    let ok = rows.iter().filter(|r| r.status == Outcome::Ok).count();
    format!(
        "{} programs ({ok} validated) on {} at commit {}; Lift timed by {}, PyTorch by {}. \
         Geometric mean of explored over PyTorch: {mean}; below 0.8x: {}.",
        rows.len(),
        devices.join(", "),
        commits.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", "),
        rows[0].lift_timing,
        rows.iter().find(|r| !r.peer_timing.is_empty()).map_or(NONE, |r| r.peer_timing.as_str()),
        if below.is_empty() { "none".to_string() } else { format!("{} ({})", below.len(), below.join(", ")) },
    )
}
