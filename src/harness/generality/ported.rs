//! The suite's programs as another device's search found them (its
//! `generality/<name>/best.lift`), measured on this device without a
//! search: the portability question of ICFP 2015 Figure 10 asked of the
//! generality suite (is the CPU's own search worth it against the GPU's
//! program run on the CPU?). Each program is measured as a candidate of
//! this device's own search would be (`explore::replay`).

use super::manifest::Entry;
use super::row::Row;
use crate::explore::replay::{self, Replay};
use crate::ir::Program;
use crate::runtime::DeviceInfo;
use std::path::Path;

/// The results file of a ported run, beside the device's own.
pub const RESULTS: &str = "results-generality-ported.csv";

/// Runs the found program of `e` (whose high-level program is `original`)
/// from `from/<name>/best.lift` into `r`.
pub(super) fn one(mut r: Row, e: &Entry, original: &Program, device: &DeviceInfo, from: &Path) -> Row {
    let sizes = e.sizes(device.is_gpu()).clone();
    let file = from.join(&e.name).join("best.lift");
    let (source, found) = match super::super::variant::load_program_for_row(&file) {
        Ok(p) => p,
        Err(m) => return r.failed(format!("no found program: {m}")),
    };
    let text = source.text;
    let local = super::super::explored::header_local(&text).map(|l| {
        let mut a = [1i64; 3];
        for (i, v) in l.iter().take(3).enumerate() {
            a[i] = *v;
        }
        a
    });
    let job = Replay {
        original,
        def: &e.name,
        found: &found,
        then_order: replay::header_then_order(&text),
        local,
        static_sizes: crate::explore::replay::header_static_sizes(&text),
        sizes: &sizes,
        seed: 1,
        warmup: 1,
        runs: 5,
    };
    r.tried = 1;
    r.params = format!("ported from {}", file.display());
    match replay::replay(&job, device.clone()) {
        Err(err) => r.failed(err.to_string()),
        Ok(out) => match out.median_ms {
            Some(ms) if out.status == crate::explore::measure::Status::Ok => {
                r.valid = 1;
                let params = r.params.clone();
                r.set_best(ms, 0, &params);
                r
            }
            _ => r.failed(format!("{}: {}", out.status.as_str(), out.message)),
        },
    }
}
