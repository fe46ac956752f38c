//! One row of `results-generality.csv` per program and device, and the
//! file that holds them (written through `outfile`, never through a
//! symbolic link; each row flushed as soon as its program is done).

use super::manifest::Entry;
use super::peer::PeerTime;
use super::{GeneralityError, Options};
use crate::runtime::DeviceInfo;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// The clock of Lift's times: the kernels' OpenCL profiling events.
pub const LIFT_TIMING: &str = "opencl-events";

/// A program's outcome: the `status` column of `results-generality.csv`.
/// Spelled `ok` and `failed` (the harness's `results.csv` says `FAILED`
/// and tells errors apart: [`crate::harness::results::Status`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// A validated best.
    Ok,
    /// No validated kernel; the row's `message` says why.
    Failed,
}

impl Outcome {
    /// The spelling used in `results-generality.csv`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Failed => "failed",
        }
    }

    /// Parses the `results-generality.csv` spelling.
    pub fn parse(s: &str) -> Option<Outcome> {
        match s {
            "ok" => Some(Outcome::Ok),
            "failed" => Some(Outcome::Failed),
            _ => None,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl Serialize for Outcome {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Outcome {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Outcome, D::Error> {
        let s = String::deserialize(d)?;
        Outcome::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown status `{s}` (expected ok or failed)")))
    }
}

/// A program's outcome on one device.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub program: String,
    pub class: String,
    /// `N=33554432;M=...`
    pub sizes: String,
    pub device: String,
    pub commit: String,
    pub date: String,
    /// `ok` (a validated best) or `failed` (see `message`).
    pub status: Outcome,
    /// Median of the best candidate's kernels (its derived second stage
    /// included), on [`LIFT_TIMING`].
    pub lift_ms: Option<f64>,
    pub lift_timing: String,
    pub naive_ms: Option<f64>,
    pub tried: usize,
    pub valid: usize,
    pub candidate: Option<usize>,
    pub params: String,
    /// Bytes the program must move at least, their rate at `lift_ms`, the
    /// copy bandwidth measured in the same run and the fraction.
    pub min_bytes: Option<u64>,
    pub gbps: Option<f64>,
    pub copy_gbps: Option<f64>,
    pub pct_copy: Option<f64>,
    /// The rate of a copy of the program's own bytes (half read, half
    /// written), measured after its search, and `gbps`'s fraction of it: a
    /// copy of fewer bytes than the large one takes longer per byte (its
    /// start and its last wave). Absent from files written before 2026-11.
    #[serde(default)]
    pub own_copy_gbps: Option<f64>,
    #[serde(default)]
    pub pct_own_copy: Option<f64>,
    /// The same against the FP32 rate, where the manifest gives flops.
    pub min_flops: Option<f64>,
    pub gflops: Option<f64>,
    pub peak_gflops: Option<f64>,
    pub pct_fp32: Option<f64>,
    pub peer: String,
    pub peer_ms: Option<f64>,
    pub peer_timing: String,
    /// `peer_ms / lift_ms`: above 1, Lift is faster.
    pub speedup: Option<f64>,
    pub message: String,
}

impl Row {
    pub(super) fn new(
        e: &Entry,
        d: &DeviceInfo,
        sizes: &BTreeMap<String, i64>,
        o: &Options,
        p: PeerTime,
    ) -> Row {
        let (peer, peer_ms, peer_timing, message) = match p {
            PeerTime::Timed { ms, timing, expr } => (expr, Some(ms), timing, String::new()),
            PeerTime::Missing(why) => (String::new(), None, String::new(), format!("no PyTorch time: {why}")),
        };
        Row {
            program: e.name.clone(),
            class: e.class.clone(),
            sizes: crate::harness::results::sizes_cell(sizes),
            device: d.name.clone(),
            commit: o.commit.clone(),
            date: o.date.clone(),
            status: Outcome::Failed,
            lift_ms: None,
            lift_timing: LIFT_TIMING.into(),
            naive_ms: None,
            tried: 0,
            valid: 0,
            candidate: None,
            params: String::new(),
            min_bytes: None,
            gbps: None,
            copy_gbps: None,
            pct_copy: None,
            own_copy_gbps: None,
            pct_own_copy: None,
            min_flops: None,
            gflops: None,
            peak_gflops: None,
            pct_fp32: None,
            peer,
            peer_ms,
            peer_timing,
            speedup: None,
            message,
        }
    }

    pub(super) fn failed(mut self, why: String) -> Row {
        self.status = Outcome::Failed;
        self.message = join(&why, &self.message);
        self
    }

    pub(super) fn set_best(&mut self, ms: f64, candidate: usize, params: &str) {
        self.status = Outcome::Ok;
        self.lift_ms = Some(ms);
        self.candidate = Some(candidate);
        self.params = params.to_string();
        self.speedup = self.peer_ms.map(|p| p / ms);
    }

    pub(super) fn set_bytes(&mut self, bytes: u64, copy_gbps: f64) {
        self.min_bytes = Some(bytes);
        self.copy_gbps = Some(copy_gbps);
        if let Some(ms) = self.lift_ms {
            let gbps = bytes as f64 / (ms * 1e6);
            self.gbps = Some(gbps);
            self.pct_copy = Some(100.0 * gbps / copy_gbps);
        }
    }

    /// `own_gbps`: the rate of a copy of this program's own bytes.
    pub(super) fn set_own_copy(&mut self, own_gbps: f64) {
        self.own_copy_gbps = Some(own_gbps);
        self.pct_own_copy = self.gbps.map(|g| 100.0 * g / own_gbps);
    }

    pub(super) fn set_flops(&mut self, flops: f64, peak: f64) {
        self.min_flops = Some(flops);
        self.peak_gflops = Some(peak);
        if let Some(ms) = self.lift_ms {
            let g = flops / (ms * 1e6);
            self.gflops = Some(g);
            self.pct_fp32 = Some(100.0 * g / peak);
        }
    }

    /// The larger of the two fractions: how close the best is to the limit
    /// that binds it.
    pub fn pct_of_limit(&self) -> Option<f64> {
        match (self.pct_copy, self.pct_fp32) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// Where the copy bandwidth is the limit that binds: the fraction of a
    /// copy of the program's own bytes.
    pub fn pct_own_copy_if_bound(&self) -> Option<f64> {
        let copy_binds = self.pct_copy.is_some() && self.pct_of_limit() == self.pct_copy;
        self.pct_own_copy.filter(|_| copy_binds)
    }
}

/// `a` then `b`, joined by `; ` where both say something.
pub(super) fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (_, true) => a.to_string(),
        (true, false) => b.to_string(),
        (false, false) => format!("{a}; {b}"),
    }
}

/// Why the results file could not be read, kept or written.
#[derive(Debug, thiserror::Error)]
pub enum RowsError {
    #[error("{}: {source}", path.display())]
    Open { path: PathBuf, source: csv::Error },
    /// `line`: 1-based, the header being line 1.
    #[error("{}:{line}: {source}", path.display())]
    Row { path: PathBuf, line: usize, source: csv::Error },
    #[error("{}: {source}", dir.display())]
    Dir { dir: PathBuf, source: std::io::Error },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Csv(#[from] csv::Error),
    #[error(
        "--resume: its rows come from commit {theirs}, this run is {ours} (a report comes from one commit)"
    )]
    OtherCommit { theirs: String, ours: String },
}

/// Reads the rows of a results file.
pub fn read(path: &Path) -> Result<Vec<Row>, RowsError> {
    let mut rd =
        csv::Reader::from_path(path).map_err(|source| RowsError::Open { path: path.into(), source })?;
    let mut out = Vec::new();
    for (i, r) in rd.deserialize::<Row>().enumerate() {
        // Line 1 is the header.
        out.push(r.map_err(|source| RowsError::Row { path: path.into(), line: i + 2, source })?);
    }
    Ok(out)
}

/// The results file of a run.
pub(super) struct Writer {
    path: PathBuf,
    kept: Vec<Row>,
    /// One run per folder, as for `results.csv` (`outfile::lock_beside`).
    _lock: std::fs::File,
}

impl Writer {
    /// Starts the file afresh, or with `resume` keeps its `ok` rows (a
    /// failed program runs again); rows of another commit are refused,
    /// since a report comes from one run at one commit.
    pub(super) fn open(path: &Path, resume: bool, commit: &str) -> Result<Writer, GeneralityError> {
        let err = |problem: RowsError| GeneralityError::Results { path: path.into(), problem };
        if let Some(dir) = path.parent() {
            crate::outfile::create_dir(dir)
                .map_err(|source| err(RowsError::Dir { dir: dir.into(), source }))?;
        }
        let lock = crate::outfile::lock_beside(path)?;
        crate::outfile::not_a_link(path).map_err(|e| err(e.into()))?;
        let kept: Vec<Row> = if resume && path.exists() {
            read(path).map_err(err)?.into_iter().filter(|r| r.status == Outcome::Ok).collect()
        } else {
            Vec::new()
        };
        let w = Writer { path: path.to_path_buf(), kept, _lock: lock };
        w.check_commit(commit)?;
        w.rewrite().map_err(err)?;
        Ok(w)
    }

    fn check_commit(&self, commit: &str) -> Result<(), GeneralityError> {
        match self.kept.iter().find(|r| r.commit != commit) {
            Some(r) => Err(GeneralityError::Results {
                path: self.path.clone(),
                problem: RowsError::OtherCommit { theirs: r.commit.clone(), ours: commit.into() },
            }),
            None => Ok(()),
        }
    }

    pub(super) fn has(&self, program: &str, device: &str) -> bool {
        self.kept.iter().any(|r| r.program == program && r.device == device)
    }

    pub(super) fn append(&mut self, r: &Row) -> Result<(), GeneralityError> {
        self.kept.push(r.clone());
        self.rewrite().map_err(|problem| GeneralityError::Results { path: self.path.clone(), problem })
    }

    /// The whole file written to a fresh file renamed into place: a kill
    /// leaves the old file or the new one, never half a row.
    fn rewrite(&self) -> Result<(), RowsError> {
        let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
        w.write_record(HEADER)?;
        for r in &self.kept {
            w.serialize(r)?;
        }
        // Flushing into a Vec fails only as its io::Error (the same message).
        let bytes = w.into_inner().map_err(|e| e.into_error())?;
        if let Some(dir) = self.path.parent() {
            crate::outfile::create_dir(dir).map_err(|source| RowsError::Dir { dir: dir.into(), source })?;
        }
        Ok(crate::outfile::replace(&self.path, &bytes)?)
    }
}

/// The column names, in the order of [`Row`]'s fields (written even when
/// there is no row yet).
const HEADER: [&str; 29] = [
    "program",
    "class",
    "sizes",
    "device",
    "commit",
    "date",
    "status",
    "lift_ms",
    "lift_timing",
    "naive_ms",
    "tried",
    "valid",
    "candidate",
    "params",
    "min_bytes",
    "gbps",
    "copy_gbps",
    "pct_copy",
    "own_copy_gbps",
    "pct_own_copy",
    "min_flops",
    "gflops",
    "peak_gflops",
    "pct_fp32",
    "peer",
    "peer_ms",
    "peer_timing",
    "speedup",
    "message",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_names_the_fields_in_order() {
        let mut w = csv::Writer::from_writer(Vec::new());
        let row = Row {
            program: "p".into(),
            class: "c".into(),
            sizes: "N=1".into(),
            device: "d".into(),
            commit: "x".into(),
            date: "t".into(),
            status: Outcome::Ok,
            lift_ms: Some(1.0),
            lift_timing: LIFT_TIMING.into(),
            naive_ms: None,
            tried: 1,
            valid: 1,
            candidate: Some(0),
            params: String::new(),
            min_bytes: None,
            gbps: None,
            copy_gbps: None,
            pct_copy: Some(50.0),
            own_copy_gbps: None,
            pct_own_copy: None,
            min_flops: None,
            gflops: None,
            peak_gflops: None,
            pct_fp32: Some(70.0),
            peer: String::new(),
            peer_ms: None,
            peer_timing: String::new(),
            speedup: None,
            message: String::new(),
        };
        w.serialize(&row).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(text.lines().next().unwrap(), HEADER.join(","));
        assert_eq!(row.pct_of_limit(), Some(70.0));
    }
}
