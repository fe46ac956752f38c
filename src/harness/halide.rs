//! The automatic peer of the stencil suite (CGO 2018 compares with PPCG;
//! here Halide): a pipeline compiled ahead of time into an executable that
//! the harness runs on the benchmark's inputs.
//!
//! Contract (docs/CONFIG.md): `EXE in_1.npy .. in_k.npy out.npy REPS` reads
//! the inputs (float32 or int32 in the config's shapes, a scalar as a 0-d
//! array, in the order of `halide.inputs`),
//! runs the pipeline REPS times synchronised with the device, writes the
//! output of one run to `out.npy` and prints `median_ms=<x>` on a line of its
//! own. The executable is `halide.executable` when the config names one, else
//! `peers/halide/bin/<benchmark>` under the repository root, else (only with
//! `--allow-config-executables`) `lift-halide-<benchmark>` on the PATH.
//! Without one the row is `skipped`. Unless the user passes
//! `--allow-config-executables`, a config runs no program outside the
//! repository's `peers/` (links resolved): a config is code.

use super::clock::Timing;
use super::config::Config;
use super::data::{HostArray, Sizes};
pub use super::halide_spec::HalideSpec;
use super::npy::{read_npy, write_npy, NpyArray};
use super::run_error::RunError;
use super::variant::Workload;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Which build of the peer runs: a GPU build (OpenCL, or CUDA where the
/// peer's own `LIFT_HALIDE_GPU=cuda` says so) on a GPU, its native build for
/// the host when the device under test is a CPU (a fairer peer than
/// Halide's OpenCL code on PoCL). The executables of `peers/halide` read
/// this choice from `LIFT_HALIDE_TARGET`.
/// Halide's OpenCL runtime takes the first platform it finds unless told
/// otherwise (PoCL, on a machine with both): it is pointed at the platform
/// and device type that the Lift rows use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PeerTarget {
    /// `icd_filenames`: the OpenCL loader's `OCL_ICD_FILENAMES` as the user
    /// started lift (`None`: unset), which the peer gets back unchanged.
    Gpu {
        platform: String,
        icd_filenames: Option<String>,
    },
    Cpu,
}

impl PeerTarget {
    /// Variables to set (`Some`) or remove (`None`) for the peer.
    fn env(&self) -> Vec<(&'static str, Option<String>)> {
        match self {
            PeerTarget::Gpu { platform, icd_filenames } => vec![
                ("LIFT_HALIDE_TARGET", Some("gpu".into())),
                ("HL_OCL_DEVICE_TYPE", Some("gpu".into())),
                ("HL_OCL_PLATFORM_NAME", Some(platform.clone())),
                ("OCL_ICD_FILENAMES", icd_filenames.clone()),
            ],
            PeerTarget::Cpu => vec![("LIFT_HALIDE_TARGET", Some("cpu".into()))],
        }
    }
}

/// What the peer produced.
#[derive(Debug)]
pub struct PeerRun {
    /// The median host time of one call (the call and its device sync).
    pub median_ms: f64,
    /// The median device time of one call and its clock (the `timing` of
    /// the row), where the executable printed one (`device_ms=<x>
    /// clock=<c>` on its median line): its kernels' durations summed.
    pub device: Option<(f64, Timing)>,
    pub output: HostArray,
    pub executable: PathBuf,
    /// The schedule the peer picked, when it says (`schedule=<name>` on its
    /// median line).
    pub schedule: Option<String>,
}

fn shape_of(cfg: &Config, name: &str, sizes: &Sizes) -> Result<Vec<usize>, RunError> {
    let spec = cfg.array(name).ok_or_else(|| RunError::NoArray(name.into()))?;
    let mut shape = Vec::new();
    for e in &spec.shape {
        let v =
            super::config::eval(e, sizes).map_err(|source| RunError::Shape { name: name.into(), source })?;
        shape.push(usize::try_from(v).map_err(|_| RunError::NegativeDim { name: name.into(), value: v })?);
    }
    if spec.ty.components() > 1 {
        shape.push(spec.ty.components());
    }
    Ok(shape)
}

/// Parses the `median_ms=<x>` line of the executable's output.
pub fn parse_median(stdout: &str) -> Result<f64, RunError> {
    let v = stdout
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("median_ms="))
        .map(|v| v.split_whitespace().next().unwrap_or(""))
        .ok_or(RunError::NoMedian)?;
    match v.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(RunError::BadMedian(v.to_string())),
    }
}

/// The `KEY=<value>` word of the executable's median line, if any.
fn median_word<'a>(stdout: &'a str, key: &str) -> Option<&'a str> {
    let line = stdout.lines().rev().find(|l| l.trim().starts_with("median_ms="))?;
    line.split_whitespace().find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
}

/// The `schedule=<name>` word of the executable's median line, if any.
pub fn parse_schedule(stdout: &str) -> Option<String> {
    median_word(stdout, "schedule").map(str::to_string)
}

/// The clocks a device figure may come from: OpenCL profiling events (the
/// Lift rows' own `timing`) or CUDA events around each kernel.
const DEVICE_CLOCKS: [Timing; 2] = [Timing::Profiling, Timing::CudaEvents];

/// The `device_ms=<x> clock=<c>` words of the median line: `None` where the
/// executable timed on the host only (an older build, the CPU build);
/// an error where they are there but malformed.
pub fn parse_device(stdout: &str) -> Result<Option<(f64, Timing)>, RunError> {
    let (Some(v), clock) = (median_word(stdout, "device_ms"), median_word(stdout, "clock")) else {
        return Ok(None);
    };
    let ms = match v.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => x,
        _ => return Err(RunError::BadDeviceTime(v.to_string())),
    };
    match clock {
        Some(c) => match Timing::parse(c).filter(|t| DEVICE_CLOCKS.contains(t)) {
            Some(t) => Ok(Some((ms, t))),
            None => Err(RunError::UnknownClock(c.to_string())),
        },
        None => Err(RunError::NoClock),
    }
}

/// A fresh folder in the system temp folder for one peer run, named by
/// lift (never by a config) and private to the user (mode 0700); removed,
/// with nothing outside it, when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new() -> std::io::Result<Scratch> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        for _ in 0..100 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let p = std::env::temp_dir().join(format!("lift-halide-{}-{n}-{nanos:08x}", std::process::id()));
            let mut b = std::fs::DirBuilder::new();
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
            // Not recursive: fails on anything already there, a link included.
            match b.create(&p) {
                Ok(()) => return Ok(Scratch(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::other("no fresh scratch folder in the temp folder after 100 tries"))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the peer `reps` times through its executable; its files go to
/// `scratch` (a [`Scratch`]).
pub fn run_halide(
    spec: &HalideSpec,
    exe: &Path,
    target: &PeerTarget,
    w: Workload,
    reps: usize,
    scratch: &Path,
) -> Result<PeerRun, RunError> {
    let Workload { cfg, sizes, inputs, buffers } = w;
    let mut args = Vec::new();
    for name in &spec.inputs {
        let data =
            inputs.get(name).or_else(|| buffers.get(name)).ok_or_else(|| RunError::NoArray(name.clone()))?;
        let path = scratch.join(format!("{name}.npy"));
        write_npy(&path, &NpyArray { shape: shape_of(cfg, name, sizes)?, data: data.clone(), note: None })?;
        args.push(path);
    }
    let out_path = scratch.join("halide_out.npy");
    let _ = std::fs::remove_file(&out_path);
    let mut cmd = Command::new(exe);
    for (k, v) in target.env() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let out = cmd
        .args(&args)
        .arg(&out_path)
        .arg(reps.max(1).to_string())
        .output()
        .map_err(|source| RunError::Io { path: exe.into(), source })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        // Halide's runtime prints its errors on stdout.
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = [&*stderr, &*stdout]
            .iter()
            .find_map(|s| s.lines().rev().find(|l| !l.trim().is_empty()))
            .unwrap_or("");
        return Err(RunError::Exited { exe: exe.into(), status: out.status, last: last.into() });
    }
    let median_ms = parse_median(&stdout)?;
    let got = read_npy(&out_path)?;
    let want = shape_of(cfg, &spec.output, sizes)?;
    if got.shape.iter().product::<usize>() != want.iter().product::<usize>() {
        return Err(RunError::OutputShape { got: got.shape, want });
    }
    let schedule = parse_schedule(&stdout);
    let device = parse_device(&stdout)?;
    Ok(PeerRun { median_ms, device, output: got.data, executable: exe.to_path_buf(), schedule })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_folders_are_fresh_and_removed_alone() {
        let a = Scratch::new().unwrap();
        let b = Scratch::new().unwrap();
        assert_ne!(a.path(), b.path());
        assert!(a.path().starts_with(std::env::temp_dir()) && a.path().is_dir());
        let pa = a.path().to_path_buf();
        std::fs::write(pa.join("x.npy"), b"x").unwrap();
        drop(a);
        assert!(!pa.exists() && b.path().is_dir());
    }

    #[test]
    fn median_line() {
        assert_eq!(parse_median("warming up\nmedian_ms=0.294\n").unwrap(), 0.294);
        assert!(parse_median("median=1").unwrap_err().to_string().contains("no `median_ms"));
        assert!(parse_median("median_ms=-1").unwrap_err().to_string().contains("not a positive"));
        let out = "schedule=a median_ms=2.0\nmedian_ms=1.5 schedule=tile32x8_k2\n";
        assert_eq!(parse_median(out).unwrap(), 1.5);
        assert_eq!(parse_schedule(out).as_deref(), Some("tile32x8_k2"));
        assert_eq!(parse_schedule("median_ms=1.5\n"), None);
        assert_eq!(parse_device(out).unwrap(), None);
    }

    #[test]
    fn device_figure_and_clock() {
        let out = "schedule=a median_ms=0.03 device_ms=0.01\nmedian_ms=0.03 schedule=a device_ms=0.012 clock=profiling\n";
        assert_eq!(parse_device(out).unwrap(), Some((0.012, Timing::Profiling)));
        assert_eq!(parse_median(out).unwrap(), 0.03);
        assert_eq!(parse_schedule(out).as_deref(), Some("a"));
        let cuda = "median_ms=0.03 schedule=a device_ms=0.02 clock=cuda-events\n";
        assert_eq!(parse_device(cuda).unwrap(), Some((0.02, Timing::CudaEvents)));
        let bad = "median_ms=0.03 device_ms=0.02 clock=wall\n";
        assert!(parse_device(bad).unwrap_err().to_string().contains("unknown clock `wall`"));
        assert!(parse_device("median_ms=0.03 device_ms=0.02\n")
            .unwrap_err()
            .to_string()
            .contains("without `clock"));
        assert!(parse_device("median_ms=0.03 device_ms=0 clock=profiling\n")
            .unwrap_err()
            .to_string()
            .contains("positive"));
    }
}
