//! Each program's search in a process of its own (`lift generality`'s
//! default). A kernel fault on a GPU (a misaligned or out-of-bounds
//! access of a candidate) is sticky to the process's OpenCL context:
//! every later build and run in that process fails. Searched in the
//! runner's own process, the programs after such a fault could only be
//! marked not run; in a child each starts with a fresh context, and a
//! child that dies (a driver crash) costs its own row only.
//!
//! The child is `lift generality --child-result FILE --only NAME` with the
//! parent's device, suite, budget and folder: it searches that one
//! program and writes what the search left ([`Searched`], one CSV row) to
//! `FILE`; the parent adds the PyTorch time and the device's limits and
//! appends the row.

use super::row::{Outcome, Row};
use super::{manifest::Entry, Options};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

/// How a child is started: the `lift` executable and the `--device`
/// selector the parent was given.
#[derive(Clone, Debug)]
pub struct Isolation {
    pub exe: PathBuf,
    pub device: Option<String>,
}

/// What one program's search left: the search's columns of its row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Searched {
    pub status: Outcome,
    pub message: String,
    pub tried: usize,
    pub valid: usize,
    pub naive_ms: Option<f64>,
    pub lift_ms: Option<f64>,
    pub candidate: Option<usize>,
    pub params: String,
}

impl Searched {
    /// The search's columns of `r`.
    pub fn of(r: &Row) -> Searched {
        Searched {
            status: r.status,
            message: r.message.clone(),
            tried: r.tried,
            valid: r.valid,
            naive_ms: r.naive_ms,
            lift_ms: r.lift_ms,
            candidate: r.candidate,
            params: r.params.clone(),
        }
    }

    /// `r` with the search's columns set from `self`, as the search in this
    /// process sets them (`Row::set_best`: the speedup over the row's peer;
    /// `Row::failed`: the search's reason before the row's own).
    pub fn into_row(self, mut r: Row) -> Row {
        r.tried = self.tried;
        r.valid = self.valid;
        r.naive_ms = self.naive_ms;
        match (self.status, self.lift_ms, self.candidate) {
            (Outcome::Ok, Some(ms), Some(c)) => {
                r.set_best(ms, c, &self.params);
                r
            }
            (Outcome::Ok, _, _) => r.failed("internal: the child reported a best without its time".into()),
            (Outcome::Failed, _, _) => r.failed(self.message),
        }
    }

    /// Writes `self` as a one-row CSV at `path`.
    pub fn write(&self, path: &Path) -> Result<(), ChildError> {
        let csv_err = |source| ChildError::Csv { path: path.to_path_buf(), source };
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(self).map_err(csv_err)?;
        let bytes = w
            .into_inner()
            .map_err(|e| ChildError::Io { path: path.to_path_buf(), source: e.into_error() })?;
        crate::outfile::replace(path, &bytes)
            .map_err(|source| ChildError::Io { path: path.to_path_buf(), source })
    }

    /// Reads what [`Searched::write`] wrote.
    pub fn read(path: &Path) -> Result<Searched, ChildError> {
        let csv_err = |source| ChildError::Csv { path: path.to_path_buf(), source };
        let mut r = csv::Reader::from_path(path).map_err(csv_err)?;
        match r.deserialize().next() {
            Some(row) => row.map_err(csv_err),
            None => Err(ChildError::NoRow { path: path.to_path_buf() }),
        }
    }
}

/// Why a child's result file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    #[error("{}: {source}", .path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: {source}", .path.display())]
    Csv { path: PathBuf, source: csv::Error },
    #[error("{}: no row", .path.display())]
    NoRow { path: PathBuf },
}

/// Where the child of program `name` writes its result.
fn result_path(opts: &Options, name: &str) -> PathBuf {
    opts.out_dir.join("generality").join(format!("{name}.child.csv"))
}

/// The arguments of the child that searches `e` as `opts` says.
fn child_args(iso: &Isolation, opts: &Options, e: &Entry, result: &Path) -> Vec<String> {
    let out = opts.out_dir.parent().unwrap_or(Path::new("."));
    let mut a: Vec<String> = vec![
        "generality".into(),
        "--child-result".into(),
        result.display().to_string(),
        "--child-dir".into(),
        opts.out_dir.display().to_string(),
        "--only".into(),
        e.name.clone(),
        "--budget".into(),
        format!("{}s", opts.budget.as_secs().max(1)),
        "--suite".into(),
        opts.suite.display().to_string(),
        "--root".into(),
        opts.root.display().to_string(),
        "--out".into(),
        out.display().to_string(),
        "--no-peer".into(),
    ];
    if let Some(d) = &iso.device {
        a.extend(["--device".to_string(), d.clone()]);
    }
    a
}

/// Searches `e` in a child process; a child that could not start or
/// ended without its result is the search's failure, with its exit
/// status and the end of what it printed.
pub fn search_in_child(iso: &Isolation, opts: &Options, e: &Entry) -> Searched {
    let result = result_path(opts, &e.name);
    let failed = |message: String| Searched {
        status: Outcome::Failed,
        message,
        tried: 0,
        valid: 0,
        naive_ms: None,
        lift_ms: None,
        candidate: None,
        params: String::new(),
    };
    if let Err(err) = crate::outfile::create_dir(&opts.out_dir.join("generality")) {
        return failed(format!("{}: {err}", opts.out_dir.display()));
    }
    let _ = std::fs::remove_file(&result);
    let output = Command::new(&iso.exe).args(child_args(iso, opts, e, &result)).output();
    let searched = match output {
        Err(err) => failed(format!("the search process did not start ({}): {err}", iso.exe.display())),
        Ok(o) => Searched::read(&result).unwrap_or_else(|why| {
            let stderr = String::from_utf8_lossy(&o.stderr);
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
            failed(format!("the search process ended without a result ({}; {why}): {last}", o.status))
        }),
    };
    let _ = std::fs::remove_file(&result);
    searched
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_survives_its_file_and_fills_a_row() {
        let dir = std::env::temp_dir().join(format!("lift-isolate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.csv");
        let s = Searched {
            status: Outcome::Ok,
            message: String::new(),
            tried: 12,
            valid: 9,
            naive_ms: Some(1.5),
            lift_ms: Some(0.25),
            candidate: Some(7),
            params: "c=16, l=256".into(),
        };
        s.write(&path).unwrap();
        assert_eq!(Searched::read(&path).unwrap(), s);
        std::fs::write(&path, "status,message\n").unwrap();
        assert!(Searched::read(&path).unwrap_err().to_string().ends_with("r.csv: no row"));
        // A row that is not a result; a folder that does not exist.
        std::fs::write(&path, "status,message\nmaybe,x\n").unwrap();
        let e = Searched::read(&path).unwrap_err().to_string();
        assert!(e.contains("r.csv: ") && e.contains("unknown status `maybe`"), "{e}");
        let e = s.write(&dir.join("none/r.csv")).unwrap_err().to_string();
        assert!(e.contains("none/r.csv: "), "{e}");
        // Into a row with a peer time: the speedup as in this process.
        let committed = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("reports/nvidia-h100-80gb-hbm3")
            .join(super::super::RESULTS);
        let mut row = super::super::row::read(&committed).unwrap().remove(0);
        let peer = row.peer_ms.unwrap();
        (row.lift_ms, row.speedup, row.candidate) = (None, None, None);
        let filled = s.clone().into_row(row.clone());
        assert_eq!(filled.speedup, Some(peer / 0.25));
        assert_eq!((filled.lift_ms, filled.candidate, filled.tried), (Some(0.25), Some(7), 12));
        let failed = Searched { status: Outcome::Failed, message: "none validated".into(), ..s };
        let r = failed.into_row(row);
        assert_eq!((r.status, r.message.as_str(), r.speedup), (Outcome::Failed, "none validated", None));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
