//! The OpenCL runtime: device discovery and selection, buffers, program
//! builds with their logs, and kernel launches timed by profiling events.

mod clblast;
mod cublas;
mod device;
mod exec;

pub use clblast::ClBlast;
pub use cublas::{CuBlas, CudaBuffer};
pub use device::{list_devices, select_device, slugify, DeviceInfo};
pub use exec::{DeviceBuffer, ElemKind, KernelArg, Launch, Runtime, RuntimeProgram};

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
    #[error("building {file} failed; OpenCL build log:\n{log}")]
    Build { file: String, log: String },
    #[error("allocating device buffer `{name}` of {bytes} bytes failed: {code}")]
    Alloc { name: String, bytes: usize, code: String },
    #[error("kernel `{kernel}`: {msg}")]
    Kernel { kernel: String, msg: String },
    #[error("writing the build dump {path}: {msg}")]
    Dump { path: String, msg: String },
}

pub(crate) fn cl_err(what: impl Into<String>) -> impl FnOnce(opencl3::error_codes::ClError) -> RuntimeError {
    let what = what.into();
    move |e| RuntimeError::Cl { what, code: format!("{e} ({})", e.0) }
}
