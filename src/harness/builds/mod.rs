//! The programs a `lift run --dump-builds DIR` built, measured: OpenCL
//! source bytes and the driver's binary (PTX on NVIDIA: instruction counts
//! by class), per benchmark, variant and kernel, beside the kernel time of
//! the same run's results. This is how the optimisation levels' bars of
//! CGO 2017's Figure 8 are explained (docs/LEVELS.md).
//!
//! A dump names each build `NNN-<slug of its label>.{cl,bin,log}`: Lift
//! kernels `benchmarks-<file>-lift-def-<def>-generated-at-level-<level>`,
//! references `references-<benchmark>-<file>-cl`. Builds run in the order of
//! the results' rows, so the k-th build of one benchmark, variant and
//! program belongs to the k-th row of that benchmark and variant.

pub mod ptx;

use crate::harness::config::LIFT_LEVELS;
use crate::harness::results::Row;
use crate::harness::variant_name::Variant;
use crate::runtime::slugify;
use ptx::{is_ptx, ptx_stats, PtxStats};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Why a dump folder could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum BuildsError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: no `NNN-<label>.cl` files (expected the folder of `lift run --dump-builds`)")]
    Empty { path: PathBuf },
}

/// One built program, measured.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildRow {
    /// The dump's counter: the order of the builds.
    pub build: usize,
    /// Empty where no known benchmark name starts the label.
    pub benchmark: String,
    /// Empty without results, or where they have no matching row.
    pub size: String,
    /// `reference` or a Lift level (`none`, `barrier`, `barrier+cf`, `all`).
    pub variant: String,
    /// The rest of the label: the Lift def or the reference file.
    pub program: String,
    pub cl_bytes: u64,
    pub binary_bytes: u64,
    /// Counts of the binary when it is PTX; empty otherwise.
    pub ptx: Option<PtxStats>,
    /// The row's median kernel time (all of the variant's kernels together).
    pub median_ms: Option<f64>,
}

/// What a label says: variant, benchmark and program.
fn parse_label(slug: &str, known: &[String]) -> (String, String, String) {
    let (origin, rest, variant) = if let Some(rest) = slug.strip_prefix("references-") {
        ("references", rest, "reference".to_string())
    } else {
        let level =
            LIFT_LEVELS.iter().find(|l| slug.ends_with(&format!("-generated-at-level-{}", slugify(l))));
        let rest = slug.strip_prefix("benchmarks-").unwrap_or(slug);
        (
            "benchmarks",
            rest.split("-generated-at-level-").next().unwrap_or(rest),
            level.map_or(String::new(), |l| l.to_string()),
        )
    };
    // The longest known name that the label continues with a `-`: `mm-amd`
    // before `mm`.
    let bench = known
        .iter()
        .filter(|b| rest.strip_prefix(slugify(b).as_str()).is_some_and(|r| r.starts_with('-')))
        .max_by_key(|b| b.len());
    let program = match bench {
        Some(b) => rest[slugify(b).len() + 1..].to_string(),
        None => rest.to_string(),
    };
    let program = if origin == "benchmarks" {
        program.split("lift-def-").last().unwrap_or(&program).to_string()
    } else {
        program
    };
    (bench.cloned().unwrap_or_default(), variant, program)
}

/// The `NNN-<slug>` stems of the `.cl` files of `dir`, in build order.
fn stems(dir: &Path) -> Result<Vec<(usize, String)>, BuildsError> {
    let io = |source| BuildsError::Io { path: dir.into(), source };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let name = entry.map_err(io)?.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".cl") else { continue };
        let Some((n, slug)) = stem.split_once('-') else { continue };
        if let Ok(n) = n.parse::<usize>() {
            out.push((n, slug.to_string()));
        }
    }
    if out.is_empty() {
        return Err(BuildsError::Empty { path: dir.into() });
    }
    out.sort();
    Ok(out)
}

/// Measures every build of dump folder `dir`. `known` are the benchmark
/// names labels are matched against; `results`, the rows of the same run,
/// give each build its size and time.
pub fn measure_builds(dir: &Path, known: &[String], results: &[Row]) -> Result<Vec<BuildRow>, BuildsError> {
    let mut rows = Vec::new();
    for (n, slug) in stems(dir)? {
        let stem = dir.join(format!("{n:03}-{slug}"));
        let len = |ext: &str| std::fs::metadata(stem.with_extension(ext)).map(|m| m.len());
        let cl_bytes =
            len("cl").map_err(|source| BuildsError::Io { path: stem.with_extension("cl"), source })?;
        // A build that failed has a log but no binary.
        let binary = std::fs::read(stem.with_extension("bin")).unwrap_or_default();
        let text = String::from_utf8_lossy(&binary);
        let (benchmark, variant, program) = parse_label(&slug, known);
        rows.push(BuildRow {
            build: n,
            benchmark,
            size: String::new(),
            variant,
            program,
            cl_bytes,
            binary_bytes: binary.len() as u64,
            ptx: is_ptx(&text).then(|| ptx_stats(&text)),
            median_ms: None,
        });
    }
    attach_results(&mut rows, results);
    Ok(rows)
}

/// Gives the k-th build of each (benchmark, variant, program) the size and
/// time of the k-th results row of that benchmark and variant.
fn attach_results(rows: &mut [BuildRow], results: &[Row]) {
    let mut seen: HashMap<(String, String, String), usize> = HashMap::new();
    for r in rows.iter_mut().filter(|r| !r.benchmark.is_empty()) {
        let k = seen.entry((r.benchmark.clone(), r.variant.clone(), r.program.clone())).or_insert(0);
        let variant = Variant::parse(&r.variant);
        let row = results
            .iter()
            .filter(|x| x.benchmark == r.benchmark && Some(&x.variant) == variant.as_ref())
            .nth(*k);
        *k += 1;
        if let Some(x) = row {
            r.size = x.size.clone();
            r.median_ms = x.median_ms;
        }
    }
}

/// The columns of [`builds_csv`].
pub const BUILDS_HEADER: [&str; 17] = [
    "build",
    "benchmark",
    "size",
    "variant",
    "program",
    "cl_bytes",
    "binary_bytes",
    "ptx_instructions",
    "int_arith",
    "div_rem",
    "global_loads",
    "global_stores",
    "shared_loads",
    "shared_stores",
    "branches",
    "barriers",
    "median_ms",
];

/// The rows as CSV text, with a header; counts of a binary that is not PTX
/// and missing times are empty cells.
pub fn builds_csv(rows: &[BuildRow]) -> String {
    let mut out = BUILDS_HEADER.join(",") + "\n";
    for r in rows {
        let p = r.ptx.map(|p| {
            [
                p.instructions,
                p.int_arith,
                p.div_rem,
                p.global_loads,
                p.global_stores,
                p.shared_loads,
                p.shared_stores,
                p.branches,
                p.barriers,
            ]
        });
        let counts: Vec<String> = match p {
            Some(c) => c.iter().map(|x| x.to_string()).collect(),
            None => vec![String::new(); 9],
        };
        let median = r.median_ms.map_or(String::new(), |m| m.to_string());
        // Labels are slugs and sizes, levels preset names: no commas or quotes.
        let head =
            [r.build.to_string(), r.benchmark.clone(), r.size.clone(), r.variant.clone(), r.program.clone()];
        let bytes = [r.cl_bytes.to_string(), r.binary_bytes.to_string()];
        let cells: Vec<String> = head.into_iter().chain(bytes).chain(counts).chain([median]).collect();
        out += &(cells.join(",") + "\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Vec<String> {
        ["mm", "mm-nvidia", "nbody-amd"].iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn labels_name_benchmark_variant_and_program() {
        let k = known();
        let lift = parse_label("benchmarks-mm-nvidia-lift-def-mmnvidia-generated-at-level-barrier-cf", &k);
        assert_eq!(lift, ("mm-nvidia".into(), "barrier+cf".into(), "mmnvidia".into()));
        let reference = parse_label("references-nbody-amd-nbody-amd-cl", &k);
        assert_eq!(reference, ("nbody-amd".into(), "reference".into(), "nbody-amd-cl".into()));
        let unknown = parse_label("references-foo-foo-cl", &k);
        assert_eq!(unknown, (String::new(), "reference".into(), "foo-foo-cl".into()));
    }
}
