//! The `lift` command-line tool. It is the only place that reads the
//! process environment and arguments; everything below takes parameters.

mod arg_error;
mod bad_input;
mod bench;
mod compile_cmd;
mod error;
mod exec_check;
mod explore_cmd;
mod generality_cmd;
mod report_cmd;
mod rewrite_cmd;

pub use bad_input::{BadInput, Buffer, InSource};
pub(crate) use error::{bad, failed};
pub use error::{CliError, Failure};

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(name = "lift", version, about = "LIFT IR compiler to OpenCL and the CGO 2017 evaluation harness")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Measure device limits, run every benchmark, write results.csv and the charts.
    All(RunArgs),
    /// Run the named benchmarks (config names from configs/).
    Run {
        #[arg(required = true)]
        benchmarks: Vec<String>,
        #[command(flatten)]
        args: RunArgs,
    },
    /// List the benchmarks of configs/ with their sizes and variants.
    List(ConfigArgs),
    /// List every OpenCL platform and device.
    Devices,
    /// Measure memory bandwidth and FP32 rate of the device.
    Roofline {
        #[arg(long)]
        device: Option<String>,
        /// Reports directory; the result goes to DIR/<device>/roofline.csv.
        #[arg(long, default_value = "reports")]
        out: PathBuf,
    },
    /// Render Figure 8 from result CSVs (a results-cgo18.csv: the stencil figures 7 and 8;
    /// a results-generality.csv: its figure, beside it).
    Plot {
        #[arg(required = true)]
        csvs: Vec<PathBuf>,
        #[arg(long, default_value = "reports")]
        out: PathBuf,
    },
    /// Write Table 1 (code sizes) from the configs.
    Table1 {
        #[command(flatten)]
        cfg: ConfigArgs,
        #[arg(long, default_value = "reports")]
        out: PathBuf,
    },
    /// Measure the programs of a `lift run --dump-builds` folder (source bytes,
    /// PTX instructions by class) beside the run's kernel times, as CSV.
    Builds {
        /// The folder `--dump-builds` wrote.
        dir: PathBuf,
        /// The results.csv of the same run: sizes and kernel times.
        #[arg(long)]
        results: Option<PathBuf>,
        /// Output CSV (default: standard output).
        #[arg(short = 'o')]
        out: Option<PathBuf>,
        /// Also chart the builds of this size (PTX integer instructions per
        /// level) as levels-ptx.svg/.pdf beside the CSV; needs -o.
        #[arg(long)]
        chart: Option<String>,
        #[command(flatten)]
        cfg: ConfigArgs,
    },
    /// Regenerate the README's result tables and reports/paper-vs-reproduced.md
    /// from the committed CSVs (--check: only compare).
    Report(report_cmd::ReportArgs),
    /// Compile a Lift program to an OpenCL kernel.
    Compile(compile_cmd::CompileArgs),
    /// Compile, run on an OpenCL device, and write the result as .npy.
    Exec(compile_cmd::ExecArgs),
    /// List the rewrite rules that apply to a def, or replay a derivation.
    Rewrite(rewrite_cmd::RewriteArgs),
    /// Search rewrites and parameters of a high-level def for the fastest
    /// validated kernel on each device.
    Explore(explore_cmd::ExploreArgs),
    /// Explore the generality suite (benchmarks/generality/) with no hints, beside
    /// PyTorch; write results-generality.csv and its figure.
    Generality(generality_cmd::GeneralityArgs),
}

#[derive(Args, Debug, Clone)]
pub(crate) struct ConfigArgs {
    /// Directory of benchmark configs.
    #[arg(long, default_value = "configs")]
    configs: PathBuf,
    /// Repository root that config paths are relative to.
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Let configs run programs outside the repository's peers/ folder
    /// (`halide.executable` anywhere, `lift-halide-<name>` on the PATH). A
    /// config is code: pass this only for configs you trust.
    #[arg(long)]
    allow_config_executables: bool,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct RunArgs {
    /// Device: substring of platform, vendor or device name, `gpu`, `cpu`, or P:D.
    #[arg(long)]
    device: Option<String>,
    /// Size preset: tiny, small, large, paper (= small and large) or any preset a config defines.
    /// Default: paper on a GPU, tiny otherwise.
    #[arg(long)]
    size: Option<String>,
    /// Timed runs per variant (1 to 10000).
    #[arg(long, default_value_t = 10, value_parser = positive)]
    runs: usize,
    /// Untimed warm-up runs per variant (0 to 10000).
    #[arg(long, default_value_t = 1, value_parser = warmups)]
    warmup: usize,
    /// Comma-separated variants: reference, none, barrier, barrier+cf, all, clblast,
    /// halide, explored, explored-other (other devices' explored programs: `explored@<slug>`
    /// rows and portability.csv), cublas, or a named Lift variant (lift-naive, lift-tiled).
    #[arg(long, value_delimiter = ',')]
    variants: Option<Vec<String>>,
    /// Reports directory; results go to DIR/<device-slug>/.
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    /// Where this device has no committed explored program, explore one for
    /// at most this long per benchmark (`30s`, `5m`; cached in
    /// DIR/<device-slug>/explored/<benchmark>/ and reused by later runs);
    /// `0` or `off`: search nothing (a program an earlier run found is still
    /// used), run another device's program instead, marked so.
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    explore_budget: String,
    /// Only the benchmarks of this suite (cgo17, cgo18); default: every suite,
    /// each with its own results file and figures.
    #[arg(long)]
    suite: Option<String>,
    /// Keep the rows of results.csv and run only what is missing.
    #[arg(long)]
    resume: bool,
    /// Skip the roofline measurement at the start of `all`.
    #[arg(long)]
    no_roofline: bool,
    /// Write every built program's source, device binary (PTX on NVIDIA) and
    /// build log to DIR, for comparing what the driver made of two kernels.
    #[arg(long, value_name = "DIR")]
    dump_builds: Option<PathBuf>,
    /// Folder holding libcublas (and libcudart, or the NVIDIA pip layout's
    /// nvidia/cublas/lib) for the cublas variant; else $LIFT_CUBLAS_DIR,
    /// else the system loader's path.
    #[arg(long, value_name = "DIR")]
    cublas_lib: Option<PathBuf>,
    #[command(flatten)]
    cfg: ConfigArgs,
}

/// Stack of the thread the CLI runs on. The parser bounds expression trees
/// (nesting, chains, inlined size), and the recursive passes after it need
/// up to this much for the deepest tree it accepts; only the pages touched
/// are ever committed.
const STACK_BYTES: usize = 1 << 30;

/// The most timed or warm-up runs of one variant or candidate: each run's
/// time is kept, and a count typed with a few digits too many would
/// otherwise allocate gigabytes or outlast any budget.
pub(crate) const MAX_RUNS: usize = 10_000;

/// A count of runs from 1 to [`MAX_RUNS`] (`--runs 0` would time nothing).
pub(crate) fn positive(s: &str) -> Result<usize, arg_error::ArgError> {
    match s.trim().parse::<u64>() {
        Ok(n) if (1..=MAX_RUNS as u64).contains(&n) => Ok(n as usize),
        _ => Err(arg_error::ArgError::RunCount(s.into())),
    }
}

/// A count of warm-up runs from 0 to [`MAX_RUNS`].
pub(crate) fn warmups(s: &str) -> Result<usize, arg_error::ArgError> {
    match s.trim().parse::<u64>() {
        Ok(n) if n <= MAX_RUNS as u64 => Ok(n as usize),
        _ => Err(arg_error::ArgError::WarmupCount(s.into())),
    }
}

/// Runs the CLI; returns the process exit code.
pub fn main() -> i32 {
    match std::thread::Builder::new().stack_size(STACK_BYTES).spawn(run) {
        Ok(t) => t.join().unwrap_or(101),
        Err(e) => {
            eprintln!("error: cannot start the main thread: {e}");
            1
        }
    }
}

/// A command-line error as one line (bad input is one line and a non-zero
/// exit): clap's message up to its first blank line, the indented lines of
/// a list (the missing arguments) joined onto it, without its usage and
/// `--help` hint.
fn one_line_usage_error(text: &str) -> String {
    text.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect::<Vec<_>>().join(" ")
}

fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            eprintln!("{}", one_line_usage_error(&e.render().to_string()));
            return 2;
        }
        Err(e) => {
            // --help and --version print their text and succeed.
            let _ = e.print();
            return 0;
        }
    };
    let result = match cli.cmd {
        Cmd::All(a) => bench::run_cmd(&a, None),
        Cmd::Run { benchmarks, args } => bench::run_cmd(&args, Some(&benchmarks)),
        Cmd::List(c) => bench::list_cmd(&c),
        Cmd::Devices => bench::devices_cmd(),
        Cmd::Roofline { device, out } => bench::roofline_cmd(device.as_deref(), &out),
        Cmd::Plot { csvs, out } => bench::plot_cmd(&csvs, &out),
        Cmd::Table1 { cfg, out } => bench::table1_cmd(&cfg, &out),
        Cmd::Builds { dir, results, out, chart, cfg } => {
            bench::builds_cmd(&dir, results.as_deref(), out.as_deref(), chart.as_deref(), &cfg)
        }
        Cmd::Report(a) => report_cmd::report_cmd(&a),
        Cmd::Compile(a) => compile_cmd::compile_cmd(&a),
        Cmd::Exec(a) => compile_cmd::exec_cmd(&a),
        Cmd::Rewrite(a) => rewrite_cmd::rewrite_cmd(&a),
        Cmd::Explore(a) => explore_cmd::explore_cmd(&a),
        Cmd::Generality(a) => generality_cmd::generality_cmd(&a),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            e.code()
        }
    }
}
