//! The kinds of README block and what each reads: `KIND PATH`, the path
//! relative to the repository root.

use std::path::Path;

use super::rows::{first_seen, Provenance};
use super::table::{Table, NONE};
use super::{cgo17, cgo18, icfp15, DataProblem, ReadProblem, ReportError, Sources};
use crate::harness::results::Status;

/// Every block kind, with what its path names.
pub const KINDS: [(&str, &str); 9] = [
    ("cgo17", "a CGO 2017 results.csv: Figure 8's speedups"),
    ("cgo17-derived", "a results.csv with lift-derived rows"),
    ("cgo18", "a results-cgo18.csv: the stencils' GElements/s and ratios"),
    ("icfp15", "an ICFP 2015 results file: explored and libraries over the reference"),
    ("portability", "a portability.csv"),
    ("runs", "a device's report folder: one line per results file"),
    ("times", "any results file: each variant's median beside the reference's"),
    ("generality", "a results-generality.csv: explored over PyTorch per program"),
    (
        "generality-ported",
        "a results-generality-ported.csv: the device's explored programs over another device's, per program",
    ),
];

/// Renders the block `kind` of the one path `args` holds.
pub(super) fn render(sources: &mut Sources, kind: &str, args: &[&str]) -> Result<String, ReportError> {
    let what = format!("block `{kind} {}`", args.join(" "));
    let [arg] = args else {
        return Err(ReportError::Data { what, problem: DataProblem::OnePath });
    };
    let path = Path::new(arg);
    match kind {
        "cgo17" => cgo17::speedups(sources, path),
        "cgo17-derived" => cgo17::derived(sources, path),
        "cgo18" => cgo18::stencils(sources, path),
        "icfp15" => icfp15::speedups(sources, path),
        "portability" => icfp15::portability(sources, path),
        "runs" => runs(sources, path),
        "times" => cgo17::times(sources, path),
        "generality" => super::generality::table(&sources.root, path),
        "generality-ported" => super::generality::ported(&sources.root, path),
        _ => Err(ReportError::Data { what, problem: DataProblem::UnknownKind }),
    }
}

/// `runs DIR`: per results file of the folder, its rows, how many
/// validated, and the commits, devices, drivers and times they carry.
fn runs(sources: &mut Sources, dir: &Path) -> Result<String, ReportError> {
    if !sources.is_dir(dir) {
        return Err(ReportError::Read { path: sources.root.join(dir), problem: ReadProblem::NoFolder });
    }
    let mut t = Table::new(&["file", "rows", "ok", "commit", "device", "driver", "run (UTC)"]);
    for file in sources.results_files(dir)? {
        let rows = sources.results(&file)?;
        let mut prov = Provenance::default();
        rows.iter().for_each(|r| prov.add(r));
        let commits: Vec<String> = prov.commits.iter().map(|c| format!("`{c}`")).collect();
        let drivers = first_seen(rows.iter().map(|r| r.driver.as_str()));
        let mut dates: Vec<&str> = rows.iter().map(|r| r.date.as_str()).filter(|d| !d.is_empty()).collect();
        dates.sort();
        let minute = |d: &str| d.get(..16).unwrap_or(d).replace('T', " ");
        let when = match (dates.first().map(|d| minute(d)), dates.last().map(|d| minute(d))) {
            (Some(a), Some(b)) if a == b => a,
            // The same day is not repeated: `2026-11-23 06:46 to 06:48`.
            (Some(a), Some(b)) if a.get(..11) == b.get(..11) => format!("{a} to {}", &b[11..]),
            (Some(a), Some(b)) => format!("{a} to {b}"),
            _ => NONE.to_string(),
        };
        let name = file.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned());
        t.push(vec![
            format!("`{name}`"),
            rows.len().to_string(),
            rows.iter().filter(|r| r.status == Status::Ok).count().to_string(),
            commits.join(", "),
            prov.devices.iter().cloned().collect::<Vec<_>>().join(", "),
            drivers.join(", "),
            when,
        ]);
    }
    if t.is_empty() {
        return Err(ReportError::Data {
            what: dir.display().to_string(),
            problem: DataProblem::NoResultsFiles,
        });
    }
    Ok(format!("The results files of `{}`:\n\n{}", dir.display(), t.markdown()))
}
