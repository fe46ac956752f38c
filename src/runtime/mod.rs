//! The OpenCL runtime: device discovery and selection, buffers, program
//! builds with their logs, and kernel launches timed by profiling events.

mod blas_args;
mod blas_error;
mod clblast;
mod cublas;
mod device;
mod driver_stderr;
mod exec;

use opencl3::error_codes::ClError;

pub use blas_args::{Gemm, Gemv};
pub use blas_error::{BlasError, LoadFailure};
pub use clblast::ClBlast;
pub use cublas::{CuBlas, CudaBuffer};
pub use device::{list_devices, select_device, slugify, DeviceInfo};
pub use exec::{DeviceBuffer, ElemKind, KernelArg, Launch, RunTimes, Runtime, RuntimeProgram};

/// What went wrong talking to OpenCL.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error(
        "no OpenCL platform found: install an OpenCL driver (PoCL for CPUs) or run ./run.sh, which does"
    )]
    NoPlatform,
    #[error("no OpenCL device matches `{selector}`; available devices:\n{available}")]
    NoMatch { selector: String, available: String },
    #[error("OpenCL error while {what}: {code}")]
    Cl { what: String, code: String },
    /// One line: the log's first error, its position moved from the
    /// driver's temporary file to `file` (lines of the source built), and
    /// where the whole log and source were kept.
    #[error("building {file} failed: {}{}", first_error(log, file), kept.as_ref().map(|p| format!(" (full build log and source: {p})")).unwrap_or_default())]
    Build { file: String, log: String, kept: Option<String> },
    #[error("allocating device buffer `{name}` of {bytes} bytes failed: {code}")]
    Alloc { name: String, bytes: usize, code: String },
    #[error("kernel `{kernel}`: {problem}")]
    Kernel { kernel: String, problem: KernelProblem },
    #[error("writing the build dump {path}: {source}")]
    Dump { path: String, source: std::io::Error },
}

/// What went wrong setting up or enqueueing one kernel, with the OpenCL
/// code and the sizes involved, so that callers can tell the cases apart.
#[derive(Debug, thiserror::Error)]
pub enum KernelProblem {
    #[error("not found in {program} ({code})")]
    NotFound { program: String, code: ClError },
    #[error("setting argument {index}: {code}")]
    Arg { index: u32, code: ClError },
    #[error("bad NDRange: global {global:?}, local {local:?}")]
    NdRange { global: Vec<usize>, local: Option<Vec<usize>> },
    #[error("launch with global {global:?} local {local:?} failed: {code}")]
    Launch { global: Vec<usize>, local: Option<Vec<usize>>, code: ClError },
}

/// The first line of a build log that reports an error (else its first
/// line), with a driver's temporary file name (`/…/tempfile_Ab12.cl:4:27`)
/// replaced by `label`.
pub fn first_error(log: &str, label: &str) -> String {
    let line = log
        .lines()
        .find(|l| l.contains("error"))
        .or_else(|| log.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("(empty log)")
        .trim();
    let line = line.strip_prefix("error: ").unwrap_or(line);
    // A path ending in `.cl:` followed by a position.
    match line.find(".cl:") {
        Some(i) if line[..i].contains('/') || line[..i].contains("tempfile") => {
            let start = line[..i].rfind(|c: char| c.is_whitespace()).map_or(0, |s| s + 1);
            format!("{}{label}{}", &line[..start], &line[i + 3..])
        }
        _ => line.to_string(),
    }
}

pub(crate) fn cl_err(what: impl Into<String>) -> impl FnOnce(ClError) -> RuntimeError {
    let what = what.into();
    move |e| RuntimeError::Cl { what, code: format!("{e} ({})", e.0) }
}

#[cfg(test)]
mod build_error_tests {
    use super::*;

    #[test]
    fn build_errors_are_one_line() {
        let log = "error: /root/.cache/pocl/kcache/tempfile_GeDoYJ.cl:4:27: subscripted value is not an array\nDevice x failed";
        assert_eq!(
            first_error(log, "k.lift (generated)"),
            "k.lift (generated):4:27: subscripted value is not an array"
        );
        assert_eq!(first_error("<kernel>:3:1: error: x\nmore", "f.cl"), "<kernel>:3:1: error: x");
        assert_eq!(first_error("", "f.cl"), "(empty log)");
        let e = RuntimeError::Build { file: "f.cl".into(), log: "a\nb".into(), kept: Some("/tmp/l".into()) };
        assert_eq!(e.to_string(), "building f.cl failed: a (full build log and source: /tmp/l)");
    }
}

/// The kernel and dump errors render as they did when they carried text.
#[cfg(test)]
mod kernel_error_tests {
    use super::*;

    fn kernel(problem: KernelProblem) -> String {
        RuntimeError::Kernel { kernel: "k".into(), problem }.to_string()
    }

    #[test]
    fn kernel_not_found() {
        let e = kernel(KernelProblem::NotFound { program: "p.cl".into(), code: ClError(-46) });
        assert_eq!(e, "kernel `k`: not found in p.cl (CL_INVALID_KERNEL_NAME)");
    }

    #[test]
    fn kernel_argument() {
        let e = kernel(KernelProblem::Arg { index: 2, code: ClError(-51) });
        assert_eq!(e, "kernel `k`: setting argument 2: CL_INVALID_ARG_SIZE");
    }

    #[test]
    fn kernel_ndrange() {
        let e = kernel(KernelProblem::NdRange { global: vec![], local: Some(vec![4]) });
        assert_eq!(e, "kernel `k`: bad NDRange: global [], local Some([4])");
    }

    #[test]
    fn kernel_launch() {
        let e = kernel(KernelProblem::Launch { global: vec![8], local: None, code: ClError(-54) });
        assert_eq!(e, "kernel `k`: launch with global [8] local None failed: CL_INVALID_WORK_GROUP_SIZE");
    }

    #[test]
    fn dump_write() {
        let source = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let e = RuntimeError::Dump { path: "/d/000-k.cl".into(), source };
        assert_eq!(e.to_string(), "writing the build dump /d/000-k.cl: permission denied");
    }
}
