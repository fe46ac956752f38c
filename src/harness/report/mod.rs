//! `lift report`: the README's result tables and
//! `reports/paper-vs-reproduced.md`, generated from the committed CSVs so
//! that no number in them can drift from the file it came from.
//!
//! The README stays hand-written but for the blocks between marker
//! comments, `<!-- lift report: KIND ARG begin -->` ... `end -->`; each
//! block's kind names its renderer and its argument the CSV or folder it
//! reads (`blocks`). `paper-vs-reproduced.md` is generated whole: the
//! papers' claims and the reasons for each difference come from
//! `reports/paper-claims.yaml`, our numbers from the CSVs that file names
//! (`claims`, `paper`).

mod blocks;
mod cgo17;
mod cgo18;
mod claims;
mod error;
mod generality;
mod icfp15;
mod markers;
mod paper;
mod rows;
pub mod table;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::harness::results::Row;
pub use error::{ClaimsProblem, DataProblem, MarkerProblem, ReadProblem, ReportError, Unmatched};

/// The hand-written file whose marked blocks are generated.
pub const README: &str = "README.md";
/// The papers' claims and the reasons for the differences.
pub const CLAIMS: &str = "reports/paper-claims.yaml";
/// The generated paper-versus-reproduced table.
pub const PAPER_VS_REPRODUCED: &str = "reports/paper-vs-reproduced.md";

/// One generated file: its path under the root, the committed text and
/// what `lift report` makes of it.
#[derive(Clone, Debug)]
pub struct Output {
    pub path: PathBuf,
    pub committed: String,
    pub generated: String,
    /// The names of the generated parts whose text differs (`KIND ARG` of a
    /// README block; the file's path for a file generated whole).
    pub drifted: Vec<String>,
}

/// Generates the README's blocks and `paper-vs-reproduced.md` from the
/// CSVs under `root`, beside the committed texts.
pub fn generate(root: &Path) -> Result<Vec<Output>, ReportError> {
    let mut sources = Sources::new(root);
    let readme_path = root.join(README);
    let readme = read_text(&readme_path)?;
    let (generated, drifted) = markers::regenerate(&readme_path, &readme, &mut |name, args, line| {
        blocks::render(&mut sources, name, args).map_err(|e| match e {
            ReportError::Data { what, problem } => ReportError::Marker {
                path: readme_path.clone(),
                line,
                problem: MarkerProblem::Block { what, problem },
            },
            other => other,
        })
    })?;
    let readme_out = Output { path: README.into(), committed: readme, generated, drifted };
    let claims = claims::load(&root.join(CLAIMS))?;
    let paper_text = paper::render(&claims, &mut sources)?;
    let paper_path = root.join(PAPER_VS_REPRODUCED);
    let committed = if paper_path.exists() { read_text(&paper_path)? } else { String::new() };
    let drifted = if committed == paper_text { Vec::new() } else { vec![PAPER_VS_REPRODUCED.to_string()] };
    let paper_out = Output { path: PAPER_VS_REPRODUCED.into(), committed, generated: paper_text, drifted };
    Ok(vec![readme_out, paper_out])
}

/// What `lift report --check` finds when a committed table differs from
/// what would be generated: the first part that differs (`name` in the
/// file at `path`, as [`Output::drifted`] names it) and how many more do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} differs from what `lift report` generates from the CSVs{}; run `lift report`", drifted_part(.path, .name), more_parts(*.more))]
pub struct Drift {
    pub path: PathBuf,
    pub name: String,
    pub more: usize,
}

/// A README table by its file and name; a file generated whole by its name.
fn drifted_part(path: &Path, name: &str) -> String {
    if path == Path::new(README) {
        format!("{}: the table `{name}`", path.display())
    } else {
        name.to_string()
    }
}

fn more_parts(more: usize) -> String {
    match more {
        0 => String::new(),
        n => format!(" (and {n} more)"),
    }
}

/// The first drift of `outputs`; `None` when everything matches.
pub fn drift_message(outputs: &[Output]) -> Option<Drift> {
    let drifted: Vec<(&Output, &String)> =
        outputs.iter().flat_map(|o| o.drifted.iter().map(move |d| (o, d))).collect();
    let (first, name) = drifted.first()?;
    Some(Drift { path: first.path.clone(), name: name.to_string(), more: drifted.len() - 1 })
}

/// Writes every generated file whose text changed; returns their paths.
pub fn write(root: &Path, outputs: &[Output]) -> Result<Vec<PathBuf>, ReportError> {
    let mut written = Vec::new();
    for o in outputs.iter().filter(|o| o.committed != o.generated) {
        let path = root.join(&o.path);
        crate::outfile::replace(&path, o.generated.as_bytes())
            .map_err(|source| ReportError::Write { path: path.clone(), source })?;
        written.push(path);
    }
    Ok(written)
}

fn read_text(path: &Path) -> Result<String, ReportError> {
    std::fs::read_to_string(path).map_err(|e| ReportError::Read { path: path.into(), problem: e.into() })
}

/// The CSVs a report reads, each read once.
pub(crate) struct Sources {
    root: PathBuf,
    results: BTreeMap<PathBuf, Rc<Vec<Row>>>,
}

impl Sources {
    fn new(root: &Path) -> Sources {
        Sources { root: root.to_path_buf(), results: BTreeMap::new() }
    }

    /// The rows of a results file (`results*.csv`), `rel` to the root.
    fn results(&mut self, rel: &Path) -> Result<Rc<Vec<Row>>, ReportError> {
        if let Some(rows) = self.results.get(rel) {
            return Ok(rows.clone());
        }
        let path = self.root.join(rel);
        if !path.is_file() {
            return Err(ReportError::Read { path, problem: ReadProblem::NoFile });
        }
        let rows = crate::harness::results::read_rows(&path).map_err(|e| ReportError::Read {
            path: path.clone(),
            problem: ReadProblem::Results(Box::new(e)),
        })?;
        let rows = Rc::new(rows);
        self.results.insert(rel.to_path_buf(), rows.clone());
        Ok(rows)
    }

    /// The records of another CSV (`portability.csv`, `table1.csv`).
    fn records<T: serde::de::DeserializeOwned>(&self, rel: &Path) -> Result<Vec<T>, ReportError> {
        let path = self.root.join(rel);
        let err = |problem| ReportError::Read { path: path.clone(), problem };
        let mut rd = csv::Reader::from_path(&path).map_err(|e| err(ReadProblem::Csv(e)))?;
        rd.deserialize()
            .enumerate()
            .map(|(i, r)| r.map_err(|source| err(ReadProblem::Row { row: i + 2, source })))
            .collect()
    }

    /// Whether `rel` names a folder under the root.
    fn is_dir(&self, rel: &Path) -> bool {
        self.root.join(rel).is_dir()
    }

    /// The `results*.csv` files directly in the folder `rel`, sorted.
    fn results_files(&self, rel: &Path) -> Result<Vec<PathBuf>, ReportError> {
        let dir = self.root.join(rel);
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| ReportError::Read { path: dir.clone(), problem: e.into() })?;
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                // The generality suite's file has its own columns (its own
                // block kind).
                let own = name == crate::harness::generality::RESULTS
                    || name == crate::harness::generality::ported::RESULTS;
                (name.starts_with("results") && name.ends_with(".csv") && !own).then(|| rel.join(name))
            })
            .collect();
        files.sort();
        Ok(files)
    }
}
