//! What goes wrong loading or calling a vendor BLAS library (CLBlast,
//! cuBLAS and the CUDA runtime): the call, the status code, the library
//! and the loader's own error, rendered only when shown.

use std::path::PathBuf;

/// The last attempt to open a shared library, for the message.
#[derive(Debug)]
pub enum LoadFailure {
    /// The loader refused this candidate (the last one tried).
    Tried { path: PathBuf, error: libloading::Error },
    /// No candidate name was given.
    NoCandidate(&'static str),
}

impl std::fmt::Display for LoadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadFailure::Tried { path, error } => write!(f, "{}: {error}", path.display()),
            LoadFailure::NoCandidate(name) => write!(f, "{name} not found"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BlasError {
    #[error("CLBlast not found ({0}); install libclblast1")]
    ClBlastMissing(#[source] libloading::Error),
    /// `library` names it for people: "CUDA runtime", "cuBLAS".
    #[error("{library} not found ({failure})")]
    Missing { library: &'static str, failure: LoadFailure },
    /// A library loaded but lacks a routine this binding needs.
    #[error("{0}")]
    Symbol(#[source] libloading::Error),
    #[error("{call} returned status {status} (see CLBlastStatusCode in clblast_c.h)")]
    ClBlastStatus { call: &'static str, status: i32 },
    #[error("{call} returned status {status} (see cublasStatus_t in cublas_api.h)")]
    CublasStatus { call: &'static str, status: i32 },
    /// `text` is cudaGetErrorString's description of `code`.
    #[error("{call} failed: CUDA error {code} ({text})")]
    Cuda { call: &'static str, code: i32, text: String },
    #[error("cuBLAS: {what} = {value} does not fit a 32-bit int")]
    TooLarge { what: &'static str, value: usize },
}

/// The harness still reports a peer's failure as a message (its rows
/// carry text); this keeps `?` working there until it has its own type.
impl From<BlasError> for String {
    fn from(e: BlasError) -> String {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_render_the_data() {
        let e = BlasError::ClBlastStatus { call: "CLBlastSgemv", status: -1024 };
        assert_eq!(
            e.to_string(),
            "CLBlastSgemv returned status -1024 (see CLBlastStatusCode in clblast_c.h)"
        );
        let e = BlasError::CublasStatus { call: "cublasSgemm_v2", status: 7 };
        assert_eq!(e.to_string(), "cublasSgemm_v2 returned status 7 (see cublasStatus_t in cublas_api.h)");
        let e = BlasError::Cuda { call: "cudaMalloc", code: 2, text: "out of memory".into() };
        assert_eq!(e.to_string(), "cudaMalloc failed: CUDA error 2 (out of memory)");
        let e = BlasError::TooLarge { what: "n", value: 1 << 40 };
        assert_eq!(e.to_string(), "cuBLAS: n = 1099511627776 does not fit a 32-bit int");
        let e = BlasError::Missing { library: "cuBLAS", failure: LoadFailure::NoCandidate("libcublas.so") };
        assert_eq!(e.to_string(), "cuBLAS not found (libcublas.so not found)");
        assert_eq!(String::from(e), "cuBLAS not found (libcublas.so not found)");
    }

    #[test]
    fn a_missing_clblast_names_the_package() {
        let e = BlasError::ClBlastMissing(libloading::Error::DlOpenUnknown);
        assert_eq!(
            e.to_string(),
            "CLBlast not found (dlopen failed, but system did not report the error); install libclblast1"
        );
    }
}
