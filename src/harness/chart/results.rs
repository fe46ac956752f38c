//! Typed rows of a `results.csv` file (the contract is `docs/CONFIG.md`).
//!
//! The reader is strict: the header must be exactly the contract's columns in
//! order, and every row must parse. A chart drawn from a half-understood file
//! would be silently wrong, so any deviation is an error naming the file, the
//! line and the column.

use std::fmt;
use std::path::Path;

use super::{ChartError, InputProblem, RowProblem};
use crate::harness::variant_name::{Level, Variant, CLBLAST, CUBLAS, HALIDE};

pub use crate::harness::results::RESULTS_HEADER;

/// Columns of result files written before `gelems`, and before `sizes`.
const LEGACY_COLUMNS: [usize; 2] = [26, 27];

/// A bar of Figure 8: which program a row measured, among those the figure
/// draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bar {
    /// The hand-written OpenCL reference.
    Reference,
    /// Lift, no optimisation.
    None,
    /// Lift with barrier elimination.
    Barrier,
    /// Lift with barrier elimination and control-flow simplification.
    BarrierCf,
    /// Lift with all optimisations (plus array-access simplification).
    All,
    /// The CLBlast library, where a benchmark has one.
    Clblast,
}

impl Bar {
    /// Every bar other than the reference, in chart order.
    pub const COMPARED: [Bar; 5] = [Bar::None, Bar::Barrier, Bar::BarrierCf, Bar::All, Bar::Clblast];

    /// The spelling used in `results.csv`.
    pub fn as_str(self) -> &'static str {
        match self {
            Bar::Reference => "reference",
            Bar::None => Level::None.as_str(),
            Bar::Barrier => Level::Barrier.as_str(),
            Bar::BarrierCf => Level::BarrierCf.as_str(),
            Bar::All => Level::All.as_str(),
            Bar::Clblast => CLBLAST,
        }
    }

    /// The bar of a row's variant, and whether the row is its host-timed
    /// twin; `None` for a variant Figure 8 does not draw.
    pub fn of(variant: &Variant) -> Option<(Bar, bool)> {
        let bar = |v: &Variant| match v {
            Variant::Reference => Some(Bar::Reference),
            Variant::Level(Level::None) => Some(Bar::None),
            Variant::Level(Level::Barrier) => Some(Bar::Barrier),
            Variant::Level(Level::BarrierCf) => Some(Bar::BarrierCf),
            Variant::Level(Level::All) => Some(Bar::All),
            Variant::Peer(p) if p == CLBLAST => Some(Bar::Clblast),
            Variant::Named(_)
            | Variant::Explored(_)
            | Variant::OtherDevice(..)
            | Variant::ExploredOther
            | Variant::Peer(_)
            | Variant::HostTwin(_) => None,
        };
        match variant {
            Variant::HostTwin(inner) => bar(inner).map(|b| (b, true)),
            v => bar(v).map(|b| (b, false)),
        }
    }
}

impl fmt::Display for Bar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

pub use crate::harness::results::{Row, Status};

pub use crate::harness::clock::Timing;

/// Reads and checks one `results.csv`.
pub fn read_results(path: &Path) -> Result<Vec<Row>, ChartError> {
    let file = std::fs::File::open(path)
        .map_err(|e| ChartError::Input { path: path.to_path_buf(), problem: InputProblem::Open(e) })?;
    parse_results(file, path)
}

/// Parses `results.csv` text read from `input`; `path` is only used in errors.
pub fn parse_results<R: std::io::Read>(input: R, path: &Path) -> Result<Vec<Row>, ChartError> {
    // Headers are checked by hand and field counts are checked per row, so
    // that each complaint can name the line and the column.
    let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(input);
    let mut records = reader.records();
    let header = match records.next() {
        None => return Err(ChartError::Input { path: path.to_path_buf(), problem: InputProblem::Empty }),
        Some(r) => r.map_err(|e| csv_error(path, e))?,
    };
    let columns = check_header(&header, path)?;
    let mut rows = Vec::new();
    for record in records {
        let record = record.map_err(|e| csv_error(path, e))?;
        let line = record.position().map_or(0, |p| p.line());
        // A trailing empty line is not a row.
        if record.len() == 1 && record[0].trim().is_empty() {
            continue;
        }
        // Rows of variants Figure 8 does not draw (a config's named
        // variants, `lift-derived`; `explored`; the peers) are left out.
        if record.len() > 2 && Variant::parse(record[2].trim()).is_some_and(|v| is_other_variant(&v)) {
            continue;
        }
        rows.push(parse_row(&record, path, line, columns)?);
    }
    Ok(rows)
}

/// A variant the harness writes that Figure 8 does not draw: a named
/// variant (`lift-<name>`), an explored program, cuBLAS or Halide. Any other
/// peer is an error (`parse_row`): the figure would silently lose it.
fn is_other_variant(v: &Variant) -> bool {
    match v {
        Variant::Named(_) | Variant::Explored(_) | Variant::OtherDevice(..) => true,
        Variant::Peer(p) => p == CUBLAS || p == HALIDE,
        // Of the host-timed twins only the reference's is used (`model`).
        Variant::HostTwin(inner) => **inner != Variant::Reference,
        Variant::Reference | Variant::Level(_) | Variant::ExploredOther => false,
    }
}

fn csv_error(path: &Path, e: csv::Error) -> ChartError {
    let line = e.position().map_or(0, |p| p.line());
    ChartError::Row { path: path.to_path_buf(), line, column: String::new(), problem: e.into() }
}

/// Returns the number of columns: the contract's, or the legacy count.
fn check_header(header: &csv::StringRecord, path: &Path) -> Result<usize, ChartError> {
    let got: Vec<&str> = header.iter().map(str::trim).collect();
    if got == RESULTS_HEADER || LEGACY_COLUMNS.iter().any(|&n| got == RESULTS_HEADER[..n]) {
        return Ok(got.len());
    }
    let first_bad = RESULTS_HEADER
        .iter()
        .zip(got.iter())
        .position(|(want, have)| want != have)
        .unwrap_or(got.len().min(RESULTS_HEADER.len()));
    let problem = match (RESULTS_HEADER.get(first_bad), got.get(first_bad)) {
        (Some(&want), Some(have)) => {
            RowProblem::HeaderColumn { column: first_bad + 1, want, found: have.to_string() }
        }
        (Some(&want), None) => RowProblem::HeaderMissing { columns: got.len(), want },
        (None, Some(have)) => RowProblem::HeaderExtra { found: have.to_string() },
        (None, None) => RowProblem::HeaderMalformed,
    };
    Err(ChartError::Row { path: path.to_path_buf(), line: 1, column: String::new(), problem })
}

/// Field access that knows where it is, for error messages.
struct Fields<'a> {
    record: &'a csv::StringRecord,
    path: &'a Path,
    line: u64,
}

impl Fields<'_> {
    fn err(&self, col: usize, problem: RowProblem) -> ChartError {
        ChartError::Row {
            path: self.path.to_path_buf(),
            line: self.line,
            column: RESULTS_HEADER[col].to_string(),
            problem,
        }
    }

    fn text(&self, col: usize) -> String {
        self.record.get(col).unwrap_or("").to_string()
    }

    fn required(&self, col: usize) -> Result<&str, ChartError> {
        let v = self.record.get(col).unwrap_or("").trim();
        if v.is_empty() {
            return Err(self.err(col, RowProblem::Empty));
        }
        Ok(v)
    }

    fn float(&self, col: usize) -> Result<Option<f64>, ChartError> {
        let v = self.record.get(col).unwrap_or("").trim();
        if v.is_empty() {
            return Ok(None);
        }
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(self.err(col, RowProblem::NotFinite { value: v.to_string() })),
        }
    }

    fn count(&self, col: usize) -> Result<Option<usize>, ChartError> {
        let v = self.record.get(col).unwrap_or("").trim();
        if v.is_empty() {
            return Ok(None);
        }
        v.parse::<usize>().map(Some).map_err(|_| self.err(col, RowProblem::NotCount { value: v.to_string() }))
    }
}

fn parse_row(record: &csv::StringRecord, path: &Path, line: u64, columns: usize) -> Result<Row, ChartError> {
    if record.len() != columns {
        return Err(ChartError::Row {
            path: path.to_path_buf(),
            line,
            column: String::new(),
            problem: RowProblem::Fields { found: record.len(), expected: columns },
        });
    }
    let f = Fields { record, path, line };
    let variant_text = f.required(2)?;
    let variant = Variant::parse(variant_text)
        .filter(|v| Bar::of(v).is_some())
        .ok_or_else(|| f.err(2, RowProblem::Variant { value: variant_text.to_string() }))?;
    let status_text = f.required(3)?;
    let status = Status::parse(status_text)
        .ok_or_else(|| f.err(3, RowProblem::Status { value: status_text.to_string() }))?;
    let median_ms = f.float(4)?;
    // A speedup is a ratio of medians: an `ok` row must carry a usable one.
    if status == Status::Ok && !median_ms.is_some_and(|m| m > 0.0) {
        return Err(f.err(4, RowProblem::NoMedian));
    }
    let timing = f.record.get(18).unwrap_or("").trim();
    if !timing.is_empty() && Timing::parse(timing).is_none() {
        return Err(f.err(18, RowProblem::Timing { value: timing.to_string() }));
    }
    Ok(Row {
        benchmark: f.required(0)?.to_string(),
        size: f.required(1)?.to_string(),
        variant,
        status,
        median_ms,
        min_ms: f.float(5)?,
        max_ms: f.float(6)?,
        ci_low_ms: f.float(7)?,
        ci_high_ms: f.float(8)?,
        runs: f.count(9)?,
        max_rel_error: f.float(10)?,
        compile_ms: f.float(11)?,
        kernel_lines: f.count(12)?,
        kernel_bytes: f.count(13)?,
        gbps: f.float(14)?,
        gflops: f.float(15)?,
        frac_bandwidth: f.float(16)?,
        frac_flops: f.float(17)?,
        timing: timing.to_string(),
        build_options: f.text(19),
        device: f.text(20),
        driver: f.text(21),
        opencl_version: f.text(22),
        git_commit: f.text(23),
        date: f.text(24),
        message: f.text(25),
        gelems: f.float(26)?,
        sizes: f.text(27),
    })
}
