//! The command line's error: the class (exit code) and what went wrong,
//! as data. `Display` is the one rendering (`main` prints `error: ` and it);
//! the lower layers' errors are kept whole and render as they do there.

use super::arg_error::ExecError;
use super::bad_input::BadInput;
use crate::explore::ExploreError;
use crate::harness::chart::ChartError;
use crate::harness::generality::GeneralityError;
use crate::harness::npy::NpyError;
use crate::harness::report::{Drift, ReportError};
use crate::harness::results::ResultsError;
use crate::harness::roofline::RooflineError;
use crate::harness::table1::Table1Error;
use crate::interp::InterpError;
use crate::ir::SourceFile;
use crate::parse::ParseError;
use crate::runtime::RuntimeError;
use std::path::PathBuf;

/// Exit codes: 0 success, 1 something ran and failed (a FAILED or error
/// row, a --check that failed), 2 bad input. Boxed: every command's
/// `Result` carries it, and some payloads are large.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Failed(Box<Failure>),
    #[error(transparent)]
    BadInput(Box<BadInput>),
}

impl CliError {
    pub(super) fn code(&self) -> i32 {
        match self {
            CliError::Failed(_) => 1,
            CliError::BadInput(_) => 2,
        }
    }
}

/// A bad-input error (exit 2) from anything that says what is wrong.
pub(crate) fn bad(e: impl Into<BadInput>) -> CliError {
    CliError::BadInput(Box::new(e.into()))
}

/// A failure (exit 1) from anything that says what failed.
pub(crate) fn failed(e: impl Into<Failure>) -> CliError {
    CliError::Failed(Box::new(e.into()))
}

/// Something ran and failed (exit 1).
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// `lift run`/`all`: rows that failed, configs that did not load, and
    /// the results files to look in.
    #[error("{failures} row(s) FAILED or errored, {broken} config(s) broken; see {}", .csvs.join(", "))]
    Rows { failures: usize, broken: usize, csvs: Vec<String> },
    #[error("the charts were not written; the results are in {}", .csvs.join(", "))]
    Charts { csvs: Vec<String> },
    #[error("{0} config(s) broken")]
    BrokenConfigs(usize),
    #[error(transparent)]
    Roofline(#[from] RooflineError),
    #[error(transparent)]
    Chart(#[from] ChartError),
    #[error(transparent)]
    Table1(#[from] Table1Error),
    /// A file that could not be written (`lift builds -o`).
    #[error("{}: {source}", .path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Exec(#[from] ExecError),
    #[error(transparent)]
    Npy(#[from] NpyError),
    /// `lift exec --check`: an input the interpreter cannot take.
    #[error("--check: {0}")]
    CheckInput(InterpError),
    #[error("--check: interpreter: {0}")]
    CheckInterp(InterpError),
    /// The validation's account of the difference (`validate::Check`'s
    /// message, built there from the data it compared).
    #[error("--check failed: {0}")]
    CheckFailed(String),
    /// With the log's most common failure message, how often it occurs
    /// and of how many candidates, where the log has one.
    #[error("no candidate validated{}", .most.as_ref().map_or(String::new(), |(m, k, n)| format!("; {k} of {n}: {m}")))]
    NoneValidated { most: Option<(String, usize, usize)> },
    #[error(transparent)]
    Explore(#[from] ExploreError),
    #[error(transparent)]
    Generality(#[from] GeneralityError),
    #[error("{failed} of {total} programs found no validated kernel")]
    GeneralityRows { failed: usize, total: usize },
    #[error(transparent)]
    Report(#[from] ReportError),
    /// `lift report --check`: a committed table that differs.
    #[error(transparent)]
    Drift(#[from] Drift),
    /// `lift rewrite -o`: the written program does not parse again.
    #[error("written program: {}", .source.render(.file))]
    Reparse { file: SourceFile, source: ParseError },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::{ArithExpr, EvalError};
    use crate::cli::arg_error::ExploreCheckError;
    use crate::cli::{Buffer, InSource};
    use crate::ir::Span;
    use crate::passes::sizes_fit::{Misfit, SizeFitError};
    use crate::rewrite::derivation::{DerivationError, StepFault};
    use crate::rewrite::RewriteError;

    fn gone() -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::NotFound, "gone")
    }

    /// The texts of the bad-input errors that no command-line test
    /// reaches, as they were when each was a formatted string.
    #[test]
    fn bad_input_renders_as_before() {
        let s = |x: &str| x.to_string();
        let cases: Vec<(BadInput, &str)> = vec![
            (
                BadInput::Variant(s("fast")),
                "--variants: `fast` is not reference, none, barrier, barrier+cf, all, clblast, halide, explored, explored-other, cublas or lift-<name>",
            ),
            (
                BadInput::Suite { suite: s("cgo99"), known: vec![s("cgo17"), s("cgo18")] },
                "--suite: no benchmark of suite `cgo99`; known: cgo17, cgo18",
            ),
            (
                BadInput::DimCount { flag: "local", text: s("1,2,3,4") },
                "--local `1,2,3,4`: expected 1 to 3 comma-separated sizes",
            ),
            (
                BadInput::Dim { flag: "global", text: s("4,x"), part: s("x") },
                "--global `4,x`: `x` is not a positive integer",
            ),
            (BadInput::SizeSyntax(s("N")), "--size `N`: expected NAME=VALUE"),
            (BadInput::SizeValue(s("N=0")), "--size `N=0`: value must be a positive integer"),
            (BadInput::InputSyntax(s("x")), "--input `x`: expected NAME=FILE.npy or NAME=NUMBER"),
            (BadInput::MissingInput(s("x")), "missing --input x=..."),
            (BadInput::UnknownInput { name: s("y"), def: s("f") }, "--input `y`: `f` has no such parameter"),
            (BadInput::Out(gone()), "--out: gone"),
            (BadInput::WriteOut { path: "k.cl".into(), source: gone() }, "-o k.cl: gone"),
            (BadInput::Write { path: "d.lift".into(), source: gone() }, "d.lift: gone"),
            (BadInput::Stdout(gone()), "standard output: gone"),
            (BadInput::NoSuchFile("r.csv".into()), "r.csv: no such file"),
            (BadInput::BrokenConfigs(2), "2 config(s) broken"),
            (BadInput::NoDef { file: "a.lift".into(), def: s("f") }, "a.lift: no `def f`"),
            (BadInput::NoDefNamed(s("f")), "no def `f`"),
            (BadInput::Untyped { param: s("x"), def: s("f") }, "parameter `x` of `f` has no type"),
            (BadInput::UntypedParameter, "untyped parameter"),
            (
                BadInput::Rewrite { def: s("f"), source: RewriteError::NoDef(s("f")) },
                "def f: no def `f` in the program",
            ),
            (
                BadInput::Prepare { file: "a.lift".into(), source: RewriteError::NoDef(s("f")) },
                "a.lift: no def `f` in the program",
            ),
            (
                BadInput::Derivation {
                    file: s("d.txt"),
                    source: DerivationError { line: 2, col: 1, fault: StepFault::NotAStep { found: s("x") } },
                },
                "d.txt:2:1: error: expected `RULE @ POSITION [name=value ...]`, found `x`",
            ),
            (
                BadInput::InputsFit { file: s("a.lift"), source: ExploreCheckError::NoDevice },
                "a.lift: --size: device not found",
            ),
            (BadInput::FloatForInt(s("x")), "input `x`: float data for an int array"),
            (
                BadInput::Unsized { expr: ArithExpr::size("N"), source: EvalError::Unbound(s("N")) },
                "`N`: unbound variable `N`",
            ),
            (
                BadInput::NegativeBytes { what: Buffer::Temporary(s("t")), bytes: -4 },
                "temporary `t` would have -4 bytes",
            ),
            (
                BadInput::OverAlloc { what: Buffer::Input(s("x")), bytes: 8, max_alloc: 4 },
                "input `x` needs 8 bytes, more than the device allocates at once (4 bytes, CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
            ),
            (
                BadInput::OverGlobal { total: 8, global_mem: 4 },
                "the buffers need 8 bytes together, more than the device's global memory (4 bytes)",
            ),
            (
                BadInput::OverLocal { name: s("loc_0"), bytes: 65536, local_mem: 49152 },
                "local array `loc_0` needs 65536 bytes at these sizes, more than the device's local memory (49152 bytes)",
            ),
            (
                BadInput::CheckBudget { what: Buffer::Output, elems: 9, limit: 8 },
                "--check: the output has 9 elements, more than the interpreter's budget of 8; check at smaller sizes",
            ),
            (
                BadInput::GlobalSize { size: 0, dim: 1 },
                "global size 0 in dimension 1: expected 1 to 2147483647",
            ),
            (BadInput::LocalSize { size: 0, dim: 0 }, "local size 0 in dimension 0: expected a positive size"),
            (
                BadInput::WorkGroup { local: vec![32, 64], count: 2048, max: 1024 },
                "local size [32, 64] has 2048 work-items, more than the device's 1024 (CL_DEVICE_MAX_WORK_GROUP_SIZE)",
            ),
            (BadInput::ChartWithoutOut, "lift builds: --chart writes beside the CSV: give -o FILE"),
            (BadInput::ExploreUsage, "expected a .lift file and --def, or --from CONFIG"),
            (BadInput::MergeNoDevice, "--merge: no device selected"),
            (BadInput::RewriteUsage, "lift rewrite: expected a .lift file (or --rules)"),
        ];
        for (e, text) in cases {
            let e = bad(e);
            assert_eq!((e.code(), e.to_string()), (2, text.to_string()));
        }
    }

    #[test]
    fn sizes_that_do_not_fit_are_placed_in_the_file() {
        let file = SourceFile::new("a.lift", "def f(x: [float]N) = x\n");
        let at = |span| InSource::SizesFit {
            file: file.clone(),
            source: SizeFitError { span, misfit: Misfit::TooSmall { name: "N".into(), value: 0 } },
        };
        assert_eq!(
            bad(at(Some(Span::new(4, 5)))).to_string(),
            "a.lift:1:5: error: size N = 0 must be at least 1"
        );
        assert_eq!(bad(at(None)).to_string(), "a.lift: size N = 0 must be at least 1");
    }

    /// The texts of the failures (exit 1) that no command-line test
    /// reaches on a machine without a GPU.
    #[test]
    fn failures_render_as_before() {
        let s = |x: &str| x.to_string();
        let no_def = || InterpError::NoSuchDef(s("f"));
        let cases: Vec<(Failure, &str)> = vec![
            (
                Failure::Rows { failures: 1, broken: 2, csvs: vec![s("a.csv"), s("b.csv")] },
                "1 row(s) FAILED or errored, 2 config(s) broken; see a.csv, b.csv",
            ),
            (
                Failure::Charts { csvs: vec![s("a.csv")] },
                "the charts were not written; the results are in a.csv",
            ),
            (Failure::BrokenConfigs(2), "2 config(s) broken"),
            (Failure::Write { path: "b.csv".into(), source: gone() }, "b.csv: gone"),
            (Failure::CheckInput(no_def()), "--check: no `def f` in the program"),
            (Failure::CheckInterp(no_def()), "--check: interpreter: no `def f` in the program"),
            (Failure::CheckFailed(s("element 3 differs")), "--check failed: element 3 differs"),
            (Failure::NoneValidated { most: None }, "no candidate validated"),
            (
                Failure::NoneValidated { most: Some((s("cannot compile: x"), 3, 4)) },
                "no candidate validated; 3 of 4: cannot compile: x",
            ),
            (
                Failure::Drift(Drift { path: "README.md".into(), name: s("cgo17 a.csv"), more: 2 }),
                "README.md: the table `cgo17 a.csv` differs from what `lift report` generates from the CSVs (and 2 more); run `lift report`",
            ),
            (
                Failure::Drift(Drift { path: "p.md".into(), name: s("p.md"), more: 0 }),
                "p.md differs from what `lift report` generates from the CSVs; run `lift report`",
            ),
            (Failure::GeneralityRows { failed: 2, total: 5 }, "2 of 5 programs found no validated kernel"),
            (
                Failure::Reparse {
                    file: SourceFile::new("out.lift", "def def"),
                    source: ParseError::new(Span::new(4, 7), "def", "a name"),
                },
                "written program: out.lift:1:5: error: expected a name, found `def`",
            ),
        ];
        for (e, text) in cases {
            let e = failed(e);
            assert_eq!((e.code(), e.to_string()), (1, text.to_string()));
        }
    }
}
