//! Why a report could not be generated: each case with its data (the
//! file, the line, the block or claim, the underlying error), rendered
//! into the one-line messages `lift report` prints.

use std::path::PathBuf;

use super::claims::Quantity;

/// Why the report could not be generated.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{path}: {problem}")]
    Read {
        path: PathBuf,
        #[source]
        problem: ReadProblem,
    },
    #[error("{path}:{line}: {problem}")]
    Marker {
        path: PathBuf,
        line: usize,
        #[source]
        problem: MarkerProblem,
    },
    #[error("{path}: {problem}")]
    Claims {
        path: PathBuf,
        #[source]
        problem: ClaimsProblem,
    },
    /// A block or claim whose rows are not in its CSV (a renamed benchmark
    /// or variant): the table would silently lose its numbers.
    #[error("{what}: {problem}")]
    Data {
        what: String,
        #[source]
        problem: DataProblem,
    },
    #[error("writing {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
}

/// Why a source file or folder could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadProblem {
    #[error("no such file")]
    NoFile,
    #[error("no such folder")]
    NoFolder,
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Csv(#[from] csv::Error),
    /// A record of a CSV that does not deserialize; `row` counts the header.
    #[error("row {row}: {source}")]
    Row { row: usize, source: csv::Error },
    /// Boxed, as the next: their paths and causes would make every
    /// report result large.
    #[error(transparent)]
    Results(Box<crate::harness::results::ResultsError>),
    #[error(transparent)]
    Generality(Box<crate::harness::generality::row::RowsError>),
}

/// What is wrong with the README's block markers, or with the block
/// between them.
#[derive(Debug, thiserror::Error)]
pub enum MarkerProblem {
    #[error("block `{name}` begins inside block `{outer}` (line {outer_line})")]
    Nested { name: String, outer: String, outer_line: usize },
    #[error("end of `{name}` closes block `{open}` (line {open_line})")]
    Mismatched { name: String, open: String, open_line: usize },
    #[error("end of `{name}` without its begin")]
    NoBegin { name: String },
    #[error("block `{name}` has no end marker")]
    NoEnd { name: String },
    /// The block's renderer found no data: a [`ReportError::Data`] placed
    /// at the block's begin marker.
    #[error("{what}: {problem}")]
    Block { what: String, problem: DataProblem },
}

/// Why `reports/paper-claims.yaml` could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ClaimsProblem {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Yaml(#[from] serde_yaml::Error),
    /// `claim` counts from 1.
    #[error("claim {claim} ({paper}, {figure}): `ours` lists no measure")]
    NoMeasure { claim: usize, paper: String, figure: String },
    #[error(
        "claim {claim} ({paper}, {figure}): a {quantity:?} measure needs `of` (and `over` for a speedup)"
    )]
    MeasureNeeds { claim: usize, paper: String, figure: String, quantity: Quantity },
}

/// A measure that no validated row matches: what it asked for.
#[derive(Debug, thiserror::Error)]
#[error("no validated rows for the {quantity:?} of {of:?} over {over:?} (benchmarks {benchmarks:?}, sizes {sizes:?})")]
pub struct Unmatched {
    pub quantity: Quantity,
    pub of: Vec<String>,
    pub over: Vec<String>,
    pub benchmarks: Vec<String>,
    pub sizes: Vec<String>,
}

/// A block or a claim's measure without the rows it needs.
#[derive(Debug, thiserror::Error)]
pub enum DataProblem {
    #[error("expected one path after the kind")]
    OnePath,
    #[error("unknown kind (known: {})", super::blocks::KINDS.map(|(k, _)| k).join(", "))]
    UnknownKind,
    #[error("no rows")]
    NoRows,
    #[error("no results*.csv files")]
    NoResultsFiles,
    #[error("no `lift-derived` rows")]
    NoDerivedRows,
    /// Boxed: its lists would make every report result large.
    #[error(transparent)]
    NoValidatedRows(Box<Unmatched>),
    /// A claim's measure that could not be evaluated.
    #[error(transparent)]
    Measure(Box<ReportError>),
}

/// Each message renders as it did when the variants carried text.
#[cfg(test)]
mod tests {
    use super::*;

    fn data(problem: DataProblem) -> String {
        ReportError::Data { what: "r.csv".into(), problem }.to_string()
    }

    fn claims(problem: ClaimsProblem) -> String {
        ReportError::Claims { path: "c.yaml".into(), problem }.to_string()
    }

    fn marker(problem: MarkerProblem) -> String {
        ReportError::Marker { path: "R.md".into(), line: 3, problem }.to_string()
    }

    #[test]
    fn nested_block() {
        let e = marker(MarkerProblem::Nested { name: "u y".into(), outer: "t x".into(), outer_line: 1 });
        assert_eq!(e, "R.md:3: block `u y` begins inside block `t x` (line 1)");
    }

    #[test]
    fn block_without_data() {
        let e = marker(MarkerProblem::Block { what: "block `runs r`".into(), problem: DataProblem::NoRows });
        assert_eq!(e, "R.md:3: block `runs r`: no rows");
    }

    #[test]
    fn one_path() {
        assert_eq!(data(DataProblem::OnePath), "r.csv: expected one path after the kind");
    }

    #[test]
    fn unknown_kind() {
        assert_eq!(
            data(DataProblem::UnknownKind),
            "r.csv: unknown kind (known: cgo17, cgo17-derived, cgo18, icfp15, portability, runs, times, \
             generality, generality-ported)"
        );
    }

    #[test]
    fn no_results_files() {
        assert_eq!(data(DataProblem::NoResultsFiles), "r.csv: no results*.csv files");
    }

    #[test]
    fn no_derived_rows() {
        assert_eq!(data(DataProblem::NoDerivedRows), "r.csv: no `lift-derived` rows");
    }

    #[test]
    fn no_validated_rows() {
        let e = data(DataProblem::NoValidatedRows(Box::new(Unmatched {
            quantity: Quantity::Speedup,
            of: vec!["all".into()],
            over: vec!["reference".into()],
            benchmarks: vec![],
            sizes: vec!["tiny".into()],
        })));
        assert_eq!(
            e,
            "r.csv: no validated rows for the Speedup of [\"all\"] over [\"reference\"] (benchmarks [], sizes [\"tiny\"])"
        );
    }

    #[test]
    fn measure_of_a_claim() {
        let inner = ReportError::Data { what: "x.csv".into(), problem: DataProblem::NoRows };
        assert_eq!(data(DataProblem::Measure(Box::new(inner))), "r.csv: x.csv: no rows");
    }

    #[test]
    fn claim_without_measure() {
        let e = claims(ClaimsProblem::NoMeasure {
            claim: 2,
            paper: "CGO 2017".into(),
            figure: "Figure 8".into(),
        });
        assert_eq!(e, "c.yaml: claim 2 (CGO 2017, Figure 8): `ours` lists no measure");
    }

    #[test]
    fn measure_needs_of() {
        let (paper, figure) = ("CGO 2017".into(), "Figure 8".into());
        let e = claims(ClaimsProblem::MeasureNeeds { claim: 1, paper, figure, quantity: Quantity::Gelems });
        assert_eq!(
            e,
            "c.yaml: claim 1 (CGO 2017, Figure 8): a Gelems measure needs `of` (and `over` for a speedup)"
        );
    }

    #[test]
    fn no_such_file() {
        let e = ReportError::Read { path: "a/r.csv".into(), problem: ReadProblem::NoFile };
        assert_eq!(e.to_string(), "a/r.csv: no such file");
    }

    #[test]
    fn no_such_folder() {
        let e = ReportError::Read { path: "a/d".into(), problem: ReadProblem::NoFolder };
        assert_eq!(e.to_string(), "a/d: no such folder");
    }

    #[test]
    fn bad_row() {
        let source = csv::ReaderBuilder::new()
            .from_reader("a\nx\n".as_bytes())
            .deserialize::<(u32,)>()
            .next()
            .unwrap()
            .unwrap_err();
        let want = format!("t.csv: row 2: {source}");
        let e = ReportError::Read { path: "t.csv".into(), problem: ReadProblem::Row { row: 2, source } };
        assert_eq!(e.to_string(), want);
    }
}
