//! `explore.csv`: one row per candidate, appended (and flushed) as each
//! finishes, so a killed run leaves at most one torn last record, which
//! `--resume` drops (also one cut just after a newline inside quotes). Its rows are also the measurement cache: keyed by
//! (program hash, device, sizes), a program is measured once.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

pub const HEADER: [&str; 11] = [
    "candidate",
    "device",
    "hash",
    "shape",
    "status",
    "median_ms",
    "params",
    "derivation",
    "sizes",
    "valid_sizes",
    "message",
];

/// One row of `explore.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub candidate: usize,
    pub device: String,
    /// FNV-1a of the program's canonical form and local size, as hex.
    pub hash: String,
    pub shape: usize,
    pub status: String,
    pub median_ms: Option<f64>,
    /// `slot=value` joined by spaces.
    pub params: String,
    /// Derivation lines joined by ` ; `.
    pub derivation: String,
    pub sizes: String,
    pub valid_sizes: String,
    pub message: String,
}

impl Row {
    fn fields(&self) -> Vec<String> {
        vec![
            self.candidate.to_string(),
            self.device.clone(),
            self.hash.clone(),
            self.shape.to_string(),
            self.status.clone(),
            self.median_ms.map_or(String::new(), |m| format!("{m:.6}")),
            self.params.clone(),
            self.derivation.clone(),
            self.sizes.clone(),
            self.valid_sizes.clone(),
            self.message.replace('\n', " "),
        ]
    }

    fn from_record(r: &csv::StringRecord) -> Option<Row> {
        let g = |i: usize| r.get(i).unwrap_or("").to_string();
        Some(Row {
            candidate: r.get(0)?.parse().ok()?,
            device: g(1),
            hash: g(2),
            shape: r.get(3)?.parse().ok()?,
            status: g(4),
            median_ms: r.get(5).and_then(|s| s.parse().ok()),
            params: g(6),
            derivation: g(7),
            sizes: g(8),
            valid_sizes: g(9),
            message: g(10),
        })
    }

    /// What identifies the candidate regardless of its outcome.
    pub fn identity(&self) -> (String, String, String) {
        (self.device.clone(), self.derivation.clone(), self.params.clone())
    }
}

/// A stable 64-bit FNV-1a hash (stable across runs and builds, unlike
/// `DefaultHasher`), as 16 hex digits.
pub fn fnv_hex(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[derive(Debug, thiserror::Error)]
#[error("{path}: {problem}")]
pub struct LogError {
    pub path: String,
    #[source]
    pub problem: LogProblem,
}

impl LogError {
    /// The file is a log of another format (`--resume` onto it is bad
    /// input, as for `results.csv`), not a failed read or write.
    pub fn is_format(&self) -> bool {
        matches!(self.problem, LogProblem::Header { .. })
    }
}

/// What failed reading or writing the log.
#[derive(Debug, thiserror::Error)]
pub enum LogProblem {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Csv(#[from] csv::Error),
    /// A header other than [`HEADER`]: `found` columns.
    #[error(
        "line 1: expected the header `{}` ({} columns), found {found} columns; \
         move the file aside or run without --resume",
        HEADER.join(","),
        HEADER.len()
    )]
    Header { found: usize },
}

/// The open log, the rows kept from an earlier run, and the cache.
pub struct Log {
    path: PathBuf,
    file: File,
    /// Rows of the earlier run (with `--resume`).
    pub previous: Vec<Row>,
    /// What resuming dropped or refused (a torn last record, rows whose
    /// time cannot be a measurement), for the user.
    pub notes: Vec<String>,
    /// Candidate number of each candidate an earlier run logged.
    previous_ids: HashMap<(String, String, String), usize>,
    cache: HashMap<(String, String, String), Row>,
    /// The first candidate number of this run: rows below it came from the
    /// file, not from a measurement of this process.
    first_new: usize,
    next: usize,
}

fn err(path: &Path, e: impl Into<LogProblem>) -> LogError {
    LogError { path: path.display().to_string(), problem: e.into() }
}

/// Why a row read back cannot stand for a measurement.
#[derive(Debug, thiserror::Error)]
enum Implausible {
    #[error("median_ms {0} is not a positive finite time")]
    Median(f64),
    #[error("an ok row without median_ms")]
    NoMedian,
}

/// Whether a row read back may stand for a measurement: an `ok` row needs
/// a finite, positive median (a hand-edited or forged log could otherwise
/// make any candidate the best).
fn plausible(r: &Row) -> Result<(), Implausible> {
    if r.status != "ok" {
        return Ok(());
    }
    match r.median_ms {
        Some(m) if m.is_finite() && m > 0.0 => Ok(()),
        Some(m) => Err(Implausible::Median(m)),
        None => Err(Implausible::NoMedian),
    }
}

/// The complete rows of an earlier log (a torn last record is cut off the
/// file), leaving out, with a note, rows that cannot be measurements.
fn read_previous(path: &Path, notes: &mut Vec<String>) -> Result<Vec<Row>, LogError> {
    if let Some(d) = crate::outfile::drop_torn_record(path).map_err(|e| err(path, e))? {
        notes.push(d);
    }
    Ok(read_rows(path, notes)?.into_iter().map(|(_, r)| r).collect())
}

/// The rows of a log with their line numbers, without changing the file
/// (another machine's shard log): a row of another column count (a torn
/// last record) or one that cannot be a measurement is left out with a
/// note; a file of another header is an error.
pub fn read_rows(path: &Path, notes: &mut Vec<String>) -> Result<Vec<(u64, Row)>, LogError> {
    match crate::outfile::csv_header(path).map_err(|e| err(path, e))? {
        Some(h) if !h.iter().map(String::as_str).eq(HEADER) => {
            return Err(err(path, LogProblem::Header { found: h.len() }));
        }
        _ => {}
    }
    let mut rows = Vec::new();
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_path(path)
        .map_err(|e| err(path, e))?;
    for rec in rd.records() {
        let rec = rec.map_err(|e| err(path, e))?;
        let line = rec.position().map_or(0, |p| p.line());
        let row = Some(&rec).filter(|r| r.len() == HEADER.len()).and_then(Row::from_record);
        let Some(row) = row else {
            notes.push(format!("{}:{line}: skipped a row that is not a candidate", path.display()));
            continue;
        };
        match plausible(&row) {
            Ok(()) => rows.push((line, row)),
            Err(why) => notes.push(format!(
                "{}:{line}: skipped candidate {}: {why}; it is measured again",
                path.display(),
                row.candidate
            )),
        }
    }
    Ok(rows)
}

impl Log {
    /// Opens `path`: with `resume` its complete, plausible rows kept (a
    /// torn last record is cut off the file) and new rows appended;
    /// without, an existing log is moved aside to `explore.csv.bak` and a
    /// new one started. Never writes through a symbolic link. The caller
    /// holds the folder's lock (`outfile::lock_beside`).
    pub fn open(path: &Path, resume: bool) -> Result<Log, LogError> {
        crate::outfile::not_a_link(path).map_err(|e| err(path, e))?;
        let mut notes = Vec::new();
        let mut previous = Vec::new();
        if resume && path.exists() {
            previous = read_previous(path, &mut notes)?;
        } else if path.exists() {
            std::fs::rename(path, path.with_extension("csv.bak")).map_err(|e| err(path, e))?;
        }
        let mut file = crate::outfile::append(path).map_err(|e| err(path, e))?;
        if file.metadata().map(|m| m.len()).unwrap_or(0) == 0 {
            writeln!(file, "{}", HEADER.join(",")).map_err(|e| err(path, e))?;
        }
        let next = previous.iter().map(|r| r.candidate + 1).max().unwrap_or(0);
        let previous_ids = previous.iter().map(|r| (r.identity(), r.candidate)).collect();
        let mut cache = HashMap::new();
        for r in &previous {
            cache.entry((r.hash.clone(), r.device.clone(), r.sizes.clone())).or_insert_with(|| r.clone());
        }
        Ok(Log {
            path: path.to_path_buf(),
            file,
            previous,
            notes,
            previous_ids,
            cache,
            first_new: next,
            next,
        })
    }

    /// The number an earlier run gave this candidate, if it logged it.
    pub fn previous_candidate(&self, id: &(String, String, String)) -> Option<usize> {
        self.previous_ids.get(id).copied()
    }

    /// Whether a row was measured by this process (not read from the file).
    pub fn measured_now(&self, r: &Row) -> bool {
        r.candidate >= self.first_new
    }

    /// Whether an earlier run already logged this candidate.
    pub fn logged_before(&self, id: &(String, String, String)) -> bool {
        self.previous_ids.contains_key(id)
    }

    /// The measurement of a program on a device at sizes, if any.
    pub fn cached(&self, hash: &str, device: &str, sizes: &str) -> Option<&Row> {
        self.cache.get(&(hash.to_string(), device.to_string(), sizes.to_string()))
    }

    /// The shapes of which `device` has a logged candidate (this run's
    /// or, resumed, an earlier run's: the cache holds both).
    pub fn shapes_logged(&self, device: &str) -> std::collections::BTreeSet<usize> {
        self.cache.values().filter(|r| r.device == device).map(|r| r.shape).collect()
    }

    /// Appends a row (numbered here) and flushes it; it also enters the cache.
    pub fn append(&mut self, mut row: Row) -> Result<Row, LogError> {
        row.candidate = self.next;
        self.next += 1;
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        w.write_record(row.fields()).map_err(|e| err(&self.path, e))?;
        // `into_inner` fails only on the final flush: its io::Error is the cause.
        let bytes = w.into_inner().map_err(|e| err(&self.path, e.into_error()))?;
        self.file.write_all(&bytes).map_err(|e| err(&self.path, e))?;
        self.file.flush().map_err(|e| err(&self.path, e))?;
        self.cache
            .entry((row.hash.clone(), row.device.clone(), row.sizes.clone()))
            .or_insert_with(|| row.clone());
        Ok(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;

    fn row(hash: &str, t: Option<f64>) -> Row {
        Row {
            candidate: 0,
            device: "dev".into(),
            hash: hash.into(),
            shape: 1,
            status: if t.is_some() { "ok" } else { "refused" }.into(),
            median_ms: t,
            params: "split-join@root:n=4".into(),
            derivation: "split-join @ root n=4 ; map-glb @ root d=0".into(),
            sizes: "N=1024".into(),
            valid_sizes: "N=1024".into(),
            message: "a, \"quoted\"\nmessage".into(),
        }
    }

    #[test]
    fn resume_keeps_rows_drops_a_torn_line_and_fills_the_cache() {
        let dir = std::env::temp_dir().join(format!("lift-explore-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("explore.csv");
        let mut log = Log::open(&p, false).unwrap();
        log.append(row("aa", Some(1.5))).unwrap();
        log.append(row("bb", None)).unwrap();
        drop(log);
        // A torn line, as a killed run leaves it.
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"2,dev,cc,3,ok,0.1").unwrap();
        drop(f);
        let mut log = Log::open(&p, true).unwrap();
        assert_eq!(log.previous.len(), 2);
        assert_eq!(log.previous[0].message, "a, \"quoted\" message");
        assert_eq!(log.cached("aa", "dev", "N=1024").and_then(|r| r.median_ms), Some(1.5));
        assert!(log.cached("cc", "dev", "N=1024").is_none());
        assert!(log.logged_before(&row("zz", None).identity()));
        let r = log.append(row("cc", Some(0.5))).unwrap();
        assert_eq!(r.candidate, 2);
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 4, "{text}");
        assert!(text.ends_with('\n'));
        // Without --resume the file starts over.
        let log = Log::open(&p, false).unwrap();
        assert!(log.previous.is_empty());
        assert_eq!(std::fs::read_to_string(&p).unwrap().lines().count(), 1);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn hashes_are_stable() {
        assert_eq!(fnv_hex(""), "cbf29ce484222325");
        assert_ne!(fnv_hex("a"), fnv_hex("b"));
    }

    #[test]
    fn another_header_is_a_format_error_with_its_message() {
        let e = err(Path::new("e.csv"), LogProblem::Header { found: 3 });
        assert!(e.is_format());
        let want = format!(
            "e.csv: line 1: expected the header `{}` (11 columns), found 3 columns; \
             move the file aside or run without --resume",
            HEADER.join(",")
        );
        assert_eq!(e.to_string(), want);
    }
}
