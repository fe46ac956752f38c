//! `results.csv` (columns in `docs/CONFIG.md`): rows are appended and
//! flushed one at a time so an interrupted run keeps what it finished.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeSet;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::variant_name::Variant;

/// The contract's columns, in order. Files written before `gelems` was
/// added (the first 26 columns) are still read.
pub const RESULTS_HEADER: [&str; 28] = [
    "benchmark",
    "size",
    "variant",
    "status",
    "median_ms",
    "min_ms",
    "max_ms",
    "ci_low_ms",
    "ci_high_ms",
    "runs",
    "max_rel_error",
    "compile_ms",
    "kernel_lines",
    "kernel_bytes",
    "gbps",
    "gflops",
    "frac_bandwidth",
    "frac_flops",
    "timing",
    "build_options",
    "device",
    "driver",
    "opencl_version",
    "git_commit",
    "date",
    "message",
    "gelems",
    "sizes",
];

/// How a run ended: the `status` column of `results.csv`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Status {
    /// Ran, and the result was right (or there was nothing to check it against).
    Ok,
    /// Ran, but the result was wrong.
    Failed,
    /// Did not build or run. A row not yet filled in is one, never `ok`.
    #[default]
    Error,
    /// Not run: a library or a section it needs is missing.
    Skipped,
}

impl Status {
    /// The spelling used in `results.csv`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "FAILED",
            Status::Error => "error",
            Status::Skipped => "skipped",
        }
    }

    /// Parses the `results.csv` spelling.
    pub fn parse(s: &str) -> Option<Status> {
        Some(match s {
            "ok" => Status::Ok,
            "FAILED" => Status::Failed,
            "error" => Status::Error,
            "skipped" => Status::Skipped,
            _ => return None,
        })
    }

    /// The complaint about a status that is none of the four.
    pub fn unknown(s: &str) -> String {
        format!("unknown status `{s}` (expected ok, FAILED, error or skipped)")
    }
}

impl fmt::Display for Status {
    /// The `results.csv` spelling; widths and alignment apply (`{:<7}`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl Serialize for Status {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Status {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Status, D::Error> {
        let s = String::deserialize(d)?;
        Status::parse(&s).ok_or_else(|| serde::de::Error::custom(Status::unknown(&s)))
    }
}

/// One row: a benchmark at one size in one variant. Empty `Option`s are
/// written as empty cells.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub benchmark: String,
    pub size: String,
    /// Parsed where the file is read, so that the code choosing rows
    /// matches on the variant rather than on its spelling.
    pub variant: Variant,
    pub status: Status,
    pub median_ms: Option<f64>,
    pub min_ms: Option<f64>,
    pub max_ms: Option<f64>,
    pub ci_low_ms: Option<f64>,
    pub ci_high_ms: Option<f64>,
    pub runs: Option<usize>,
    pub max_rel_error: Option<f64>,
    pub compile_ms: Option<f64>,
    pub kernel_lines: Option<usize>,
    pub kernel_bytes: Option<usize>,
    pub gbps: Option<f64>,
    pub gflops: Option<f64>,
    pub frac_bandwidth: Option<f64>,
    pub frac_flops: Option<f64>,
    pub timing: String,
    pub build_options: String,
    pub device: String,
    pub driver: String,
    pub opencl_version: String,
    pub git_commit: String,
    pub date: String,
    pub message: String,
    /// Output elements updated per second, in billions (stencils).
    #[serde(default)]
    pub gelems: Option<f64>,
    /// The preset's size values, `K=1024;M=1024;N=1024` (files written
    /// before this column have none).
    #[serde(default)]
    pub sizes: String,
}

/// A `sizes` cell: `K=1024;M=1024;N=1024` (the generality results use the
/// same spelling).
pub fn sizes_cell(sizes: &crate::types::Sizes) -> String {
    sizes.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(";")
}

impl Row {
    /// A row not yet filled in: `error`, with every measurement and note
    /// empty. There is no default row, since a row always names a variant.
    pub fn new(benchmark: &str, size: &str, variant: Variant) -> Row {
        Row {
            benchmark: benchmark.to_string(),
            size: size.to_string(),
            variant,
            status: Status::Error,
            median_ms: None,
            min_ms: None,
            max_ms: None,
            ci_low_ms: None,
            ci_high_ms: None,
            runs: None,
            max_rel_error: None,
            compile_ms: None,
            kernel_lines: None,
            kernel_bytes: None,
            gbps: None,
            gflops: None,
            frac_bandwidth: None,
            frac_flops: None,
            timing: String::new(),
            build_options: String::new(),
            device: String::new(),
            driver: String::new(),
            opencl_version: String::new(),
            git_commit: String::new(),
            date: String::new(),
            message: String::new(),
            gelems: None,
            sizes: String::new(),
        }
    }

    pub fn key(&self) -> (String, String, Variant) {
        (self.benchmark.clone(), self.size.clone(), self.variant.clone())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// Opening the file through `csv` or serializing a row.
    #[error("{path}: {source}")]
    Csv { path: PathBuf, source: csv::Error },
    #[error("{path}: row {row}: {source}")]
    Parse { path: PathBuf, row: usize, source: csv::Error },
    #[error(transparent)]
    Lock(#[from] crate::outfile::LockError),
    /// `--resume` onto a file of another format: rows of another width
    /// would be appended.
    #[error("{path}: line 1: {problem}")]
    Format { path: PathBuf, problem: HeaderMismatch },
}

/// How a results file's header differs from [`RESULTS_HEADER`].
#[derive(Debug, thiserror::Error)]
pub enum HeaderMismatch {
    #[error(
        "expected the {}-column header of this version, found {found} columns (an older results file?); \
         --resume would append rows of another width: move the file aside or run without --resume",
        RESULTS_HEADER.len()
    )]
    Width { found: usize },
    #[error(
        "expected the header `{}`, found another; move the file aside or run without --resume",
        RESULTS_HEADER.join(",")
    )]
    Names { found: Vec<String> },
}

/// Refuses to resume onto a results file whose header is not the current
/// one (an older file of 26 columns, or no results file at all).
fn check_header(path: &Path) -> Result<(), ResultsError> {
    let io = |source| ResultsError::Io { path: path.into(), source };
    let Some(got) = crate::outfile::csv_header(path).map_err(io)? else {
        return Ok(());
    };
    if got.iter().map(String::as_str).eq(RESULTS_HEADER.iter().copied()) {
        return Ok(());
    }
    let problem = if got.len() != RESULTS_HEADER.len() {
        HeaderMismatch::Width { found: got.len() }
    } else {
        HeaderMismatch::Names { found: got }
    };
    Err(ResultsError::Format { path: path.into(), problem })
}

/// Reads every row of a results file.
pub fn read_rows(path: &Path) -> Result<Vec<Row>, ResultsError> {
    let mut rd =
        csv::Reader::from_path(path).map_err(|source| ResultsError::Csv { path: path.into(), source })?;
    let mut out = Vec::new();
    for (i, r) in rd.deserialize::<Row>().enumerate() {
        out.push(r.map_err(|source| ResultsError::Parse { path: path.into(), row: i + 2, source })?);
    }
    Ok(out)
}

/// Appends rows to a results file, writing the header when the file is new.
/// While it lives it holds an exclusive lock on `results.csv.lock` beside
/// the file, so two runs never interleave rows in one folder; the operating
/// system drops the lock when the process ends, killed or not.
pub struct ResultsWriter {
    path: PathBuf,
    done: BTreeSet<(String, String, Variant)>,
    _lock: std::fs::File,
    /// Set when `--resume` dropped a torn last line (a run killed mid-write).
    pub dropped: Option<String>,
}

impl ResultsWriter {
    /// Opens `path` for appending. With `resume`, the keys already in the
    /// file are remembered (and skipped by the runner); without it an
    /// existing file is moved aside to `results.csv.bak` so old rows are
    /// never mixed with new ones.
    pub fn open(path: &Path, resume: bool) -> Result<ResultsWriter, ResultsError> {
        let io = |source| ResultsError::Io { path: path.into(), source };
        if let Some(dir) = path.parent() {
            crate::outfile::create_dir(dir).map_err(io)?;
        }
        let lock = crate::outfile::lock_beside(path)?;
        crate::outfile::not_a_link(path).map_err(io)?;
        let mut done = BTreeSet::new();
        let mut dropped = None;
        if path.exists() {
            if resume {
                dropped = crate::outfile::drop_torn_record(path).map_err(io)?;
                check_header(path)?;
                done = read_rows(path)?.iter().map(Row::key).collect();
            } else {
                std::fs::rename(path, path.with_extension("csv.bak")).map_err(io)?;
            }
        }
        Ok(ResultsWriter { path: path.to_path_buf(), done, _lock: lock, dropped })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn is_done(&self, benchmark: &str, size: &str, variant: &Variant) -> bool {
        self.done.contains(&(benchmark.to_string(), size.to_string(), variant.clone()))
    }

    /// Appends one row and flushes it to disk.
    pub fn append(&mut self, row: &Row) -> Result<(), ResultsError> {
        let io = |source| ResultsError::Io { path: self.path.clone(), source };
        let new = std::fs::metadata(&self.path).map(|m| m.len() == 0).unwrap_or(true);
        let file = crate::outfile::append(&self.path).map_err(io)?;
        let mut w = csv::WriterBuilder::new().has_headers(new).from_writer(file);
        w.serialize(row).map_err(|source| ResultsError::Csv { path: self.path.clone(), source })?;
        // `into_inner` fails only on the final flush: its io::Error is the cause.
        let mut file = w.into_inner().map_err(|e| io(e.into_error()))?;
        file.flush().map_err(io)?;
        self.done.insert(row.key());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::variant_name::Level;

    #[test]
    fn append_resume_roundtrip() {
        let dir = std::env::temp_dir().join(format!("lift-results-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("results.csv");
        let row = |v: Variant| Row {
            status: Status::Ok,
            median_ms: Some(1.5),
            message: "has, comma".into(),
            ..Row::new("dot", "tiny", v)
        };
        let (reference, none, all) =
            (Variant::Reference, Variant::Level(Level::None), Variant::Level(Level::All));
        let mut w = ResultsWriter::open(&path, false).unwrap();
        w.append(&row(reference.clone())).unwrap();
        w.append(&row(none.clone())).unwrap();
        drop(w);
        let w2 = ResultsWriter::open(&path, true).unwrap();
        assert!(w2.is_done("dot", "tiny", &none) && !w2.is_done("dot", "tiny", &all));
        let rows = read_rows(&path).unwrap();
        assert_eq!(rows, vec![row(reference), row(none)]);
        let header = std::fs::read_to_string(&path).unwrap();
        // The writer's header is the contract the chart reader enforces.
        let expected = format!("{}\n", RESULTS_HEADER.join(","));
        assert!(header.starts_with(&expected), "{header}");
        drop(w2);
        ResultsWriter::open(&path, false).unwrap();
        assert!(dir.join("results.csv.bak").exists() && !path.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn status_is_written_and_read_in_the_csv_spelling() {
        for st in [Status::Ok, Status::Failed, Status::Error, Status::Skipped] {
            assert_eq!(Status::parse(st.as_str()), Some(st));
            assert_eq!(format!("[{st:<7}]"), format!("[{:<7}]", st.as_str()));
        }
        let dir = std::env::temp_dir().join(format!("lift-results-status-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("results.csv");
        let mut w = ResultsWriter::open(&path, false).unwrap();
        let row = Row { status: Status::Failed, ..Row::new("dot", "", Variant::Reference) };
        w.append(&row).unwrap();
        drop(w);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.lines().nth(1).unwrap().starts_with("dot,,reference,FAILED,"), "{text}");
        assert_eq!(read_rows(&path).unwrap(), vec![row]);
        std::fs::write(&path, text.replace(",FAILED,", ",failed,")).unwrap();
        let err = read_rows(&path).unwrap_err().to_string();
        assert!(err.contains("row 2") && err.contains("unknown status `failed`"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn header_width_mismatch_renders_as_before() {
        let e = ResultsError::Format { path: "r.csv".into(), problem: HeaderMismatch::Width { found: 26 } };
        assert_eq!(
            e.to_string(),
            "r.csv: line 1: expected the 28-column header of this version, found 26 columns (an older results \
             file?); --resume would append rows of another width: move the file aside or run without --resume"
        );
    }

    #[test]
    fn header_names_mismatch_renders_as_before() {
        let e =
            ResultsError::Format { path: "r.csv".into(), problem: HeaderMismatch::Names { found: vec![] } };
        let want = format!(
            "r.csv: line 1: expected the header `{}`, found another; move the file aside or run without --resume",
            RESULTS_HEADER.join(",")
        );
        assert_eq!(e.to_string(), want);
    }

    #[test]
    fn second_writer_is_refused_while_the_first_lives() {
        let dir = std::env::temp_dir().join(format!("lift-results-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("results.csv");
        let first = ResultsWriter::open(&path, false).unwrap();
        let err = ResultsWriter::open(&path, true).err().expect("second writer must be refused").to_string();
        assert!(err.contains("another run is writing to this folder"), "{err}");
        drop(first);
        assert!(ResultsWriter::open(&path, true).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn resume_drops_a_torn_last_line() {
        let dir = std::env::temp_dir().join(format!("lift-results-torn-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("results.csv");
        let mut w = ResultsWriter::open(&path, false).unwrap();
        let all = Variant::Level(Level::All);
        let row = Row::new("dot", "tiny", all.clone());
        w.append(&row).unwrap();
        drop(w);
        let whole = std::fs::read_to_string(&path).unwrap();
        // A second row cut off mid-write, as by a kill or a full disk.
        std::fs::write(&path, format!("{whole}dot,tiny,reference,o")).unwrap();
        let w = ResultsWriter::open(&path, true).unwrap();
        assert!(w.dropped.as_deref().is_some_and(|d| d.contains("torn")), "{:?}", w.dropped);
        assert!(w.is_done("dot", "tiny", &all) && !w.is_done("dot", "tiny", &Variant::Reference));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), whole);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
