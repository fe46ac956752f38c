//! cuBLAS, loaded at run time as the NVIDIA library baseline (ICFP 2015,
//! Figure 11): the harness builds and runs without CUDA, and reports the
//! `cublas` rows as skipped where the libraries are missing.
//!
//! Three libraries are opened: the CUDA runtime (`libcudart`: memory,
//! copies, events), `libcublasLt` (a dependency of cuBLAS, opened first
//! so that cuBLAS finds it by its soname when it lives outside the loader's
//! path, as in the NVIDIA pip packages) and `libcublas`. Only the
//! single-precision routines the benchmarks need are bound. cuBLAS is
//! column-major: a row-major `m x n` matrix is its transpose in column-major
//! order, so row-major calls swap the roles (see `sgemv`, `sgemm`).
//!
//! Timing is by CUDA events recorded on the default stream around the calls
//! (device-side elapsed time, like OpenCL profiling events but spanning
//! every kernel the library launches).

use super::{BlasError, Gemm, Gemv, LoadFailure};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::{Path, PathBuf};

type CudaError = c_int;
type CublasStatus = c_int;
type Handle = *mut c_void;
type Event = *mut c_void;

const MEMCPY_HOST_TO_DEVICE: c_int = 1;
const MEMCPY_DEVICE_TO_HOST: c_int = 2;
const MEMCPY_DEVICE_TO_DEVICE: c_int = 3;
const OP_N: c_int = 0;
const OP_T: c_int = 1;
const POINTER_MODE_HOST: c_int = 0;
const POINTER_MODE_DEVICE: c_int = 1;

type CudaMalloc = unsafe extern "C" fn(*mut *mut c_void, usize) -> CudaError;
type CudaFree = unsafe extern "C" fn(*mut c_void) -> CudaError;
type CudaMemcpy = unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> CudaError;
type CudaEventCreate = unsafe extern "C" fn(*mut Event) -> CudaError;
type CudaEventDestroy = unsafe extern "C" fn(Event) -> CudaError;
type CudaEventRecord = unsafe extern "C" fn(Event, *mut c_void) -> CudaError;
type CudaEventSynchronize = unsafe extern "C" fn(Event) -> CudaError;
type CudaEventElapsedTime = unsafe extern "C" fn(*mut f32, Event, Event) -> CudaError;
type CudaDeviceSynchronize = unsafe extern "C" fn() -> CudaError;
type CudaGetErrorString = unsafe extern "C" fn(CudaError) -> *const c_char;

type CublasCreate = unsafe extern "C" fn(*mut Handle) -> CublasStatus;
type CublasDestroy = unsafe extern "C" fn(Handle) -> CublasStatus;
type CublasSetPointerMode = unsafe extern "C" fn(Handle, c_int) -> CublasStatus;
// cublasSscal_v2(handle, n, alpha*, x*, incx)
type CublasSscal = unsafe extern "C" fn(Handle, c_int, *const f32, *mut f32, c_int) -> CublasStatus;
// cublasSasum_v2(handle, n, x*, incx, result*)
type CublasSasum = unsafe extern "C" fn(Handle, c_int, *const f32, c_int, *mut f32) -> CublasStatus;
// cublasSdot_v2(handle, n, x*, incx, y*, incy, result*)
type CublasSdot =
    unsafe extern "C" fn(Handle, c_int, *const f32, c_int, *const f32, c_int, *mut f32) -> CublasStatus;
// cublasSgemv_v2(handle, trans, m, n, alpha*, A*, lda, x*, incx, beta*, y*, incy)
type CublasSgemv = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    *const f32,
    *const f32,
    c_int,
    *const f32,
    c_int,
    *const f32,
    *mut f32,
    c_int,
) -> CublasStatus;
// cublasSgemm_v2(handle, transa, transb, m, n, k, alpha*, A*, lda, B*, ldb, beta*, C*, ldc)
type CublasSgemm = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const f32,
    *const f32,
    c_int,
    *const f32,
    c_int,
    *const f32,
    *mut f32,
    c_int,
) -> CublasStatus;

/// The library file names tried in each directory, newest first.
const CUDART_NAMES: [&str; 4] = ["libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"];
const CUBLASLT_NAMES: [&str; 4] =
    ["libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11", "libcublasLt.so"];
const CUBLAS_NAMES: [&str; 4] = ["libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"];

/// The directories to search: each given one, and for the NVIDIA pip
/// layout (`.../nvidia/cublas/lib`) its sibling `.../nvidia/cuda_runtime/lib`.
pub fn search_dirs(given: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for d in given {
        let mut push = |p: PathBuf| {
            if !out.contains(&p) {
                out.push(p);
            }
        };
        push(d.clone());
        if d.ends_with("cublas/lib") {
            if let Some(nvidia) = d.parent().and_then(Path::parent) {
                push(nvidia.join("cuda_runtime").join("lib"));
            }
        }
    }
    out
}

/// Opens the first of `names` found in `dirs`, else by name through the
/// system loader; the error lists what was tried.
fn open(names: &[&'static str], dirs: &[PathBuf]) -> Result<libloading::Library, LoadFailure> {
    let mut last = None;
    let candidates = dirs
        .iter()
        .flat_map(|d| names.iter().map(move |n| d.join(n)))
        .filter(|p| p.is_file())
        .chain(names.iter().map(PathBuf::from));
    for c in candidates {
        // SAFETY: loading a shared library runs its initialisers; the CUDA
        // libraries only register themselves.
        match unsafe { libloading::Library::new(&c) } {
            Ok(lib) => return Ok(lib),
            Err(error) => last = Some(LoadFailure::Tried { path: c, error }),
        }
    }
    Err(last.unwrap_or(LoadFailure::NoCandidate(names.first().copied().unwrap_or("the library"))))
}

/// A device allocation made by `cudaMalloc`, freed on drop.
pub struct CudaBuffer<'a> {
    ptr: *mut c_void,
    pub bytes: usize,
    lib: &'a CuBlas,
}

impl CudaBuffer<'_> {
    fn f32_ptr(&self) -> *mut f32 {
        self.ptr.cast()
    }
}

impl Drop for CudaBuffer<'_> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from cudaMalloc and is freed once.
        unsafe {
            (self.lib.cuda_free)(self.ptr);
        }
    }
}

/// The loaded libraries and one cuBLAS handle.
pub struct CuBlas {
    cuda_malloc: CudaMalloc,
    cuda_free: CudaFree,
    cuda_memcpy: CudaMemcpy,
    event_create: CudaEventCreate,
    event_destroy: CudaEventDestroy,
    event_record: CudaEventRecord,
    event_synchronize: CudaEventSynchronize,
    event_elapsed: CudaEventElapsedTime,
    device_synchronize: CudaDeviceSynchronize,
    error_string: CudaGetErrorString,
    destroy: CublasDestroy,
    set_pointer_mode: CublasSetPointerMode,
    sscal: CublasSscal,
    sasum: CublasSasum,
    sdot: CublasSdot,
    sgemv: CublasSgemv,
    sgemm: CublasSgemm,
    handle: Handle,
    // Keep the function pointers above valid; dropped after the handle.
    _cublas: libloading::Library,
    _cublas_lt: Option<libloading::Library>,
    _cudart: libloading::Library,
}

fn sym<T: Copy>(lib: &libloading::Library, name: &[u8]) -> Result<T, BlasError> {
    // SAFETY: each call site names a symbol whose C declaration matches `T`.
    unsafe { lib.get::<T>(name).map(|s| *s).map_err(BlasError::Symbol) }
}

fn int(value: usize, what: &'static str) -> Result<c_int, BlasError> {
    c_int::try_from(value).map_err(|_| BlasError::TooLarge { what, value })
}

impl CuBlas {
    /// Loads the CUDA runtime and cuBLAS (from `dirs` first) and creates a
    /// handle; the error says what is missing.
    pub fn load(dirs: &[PathBuf]) -> Result<CuBlas, BlasError> {
        let dirs = search_dirs(dirs);
        let cudart = open(&CUDART_NAMES, &dirs)
            .map_err(|failure| BlasError::Missing { library: "CUDA runtime", failure })?;
        // Optional: older cuBLAS has no Lt library, and the system loader
        // may find it anyway.
        let cublas_lt = open(&CUBLASLT_NAMES, &dirs).ok();
        let cublas = open(&CUBLAS_NAMES, &dirs)
            .map_err(|failure| BlasError::Missing { library: "cuBLAS", failure })?;
        let create: CublasCreate = sym(&cublas, b"cublasCreate_v2\0")?;
        let mut lib = CuBlas {
            cuda_malloc: sym(&cudart, b"cudaMalloc\0")?,
            cuda_free: sym(&cudart, b"cudaFree\0")?,
            cuda_memcpy: sym(&cudart, b"cudaMemcpy\0")?,
            event_create: sym(&cudart, b"cudaEventCreate\0")?,
            event_destroy: sym(&cudart, b"cudaEventDestroy\0")?,
            event_record: sym(&cudart, b"cudaEventRecord\0")?,
            event_synchronize: sym(&cudart, b"cudaEventSynchronize\0")?,
            event_elapsed: sym(&cudart, b"cudaEventElapsedTime\0")?,
            device_synchronize: sym(&cudart, b"cudaDeviceSynchronize\0")?,
            error_string: sym(&cudart, b"cudaGetErrorString\0")?,
            destroy: sym(&cublas, b"cublasDestroy_v2\0")?,
            set_pointer_mode: sym(&cublas, b"cublasSetPointerMode_v2\0")?,
            sscal: sym(&cublas, b"cublasSscal_v2\0")?,
            sasum: sym(&cublas, b"cublasSasum_v2\0")?,
            sdot: sym(&cublas, b"cublasSdot_v2\0")?,
            sgemv: sym(&cublas, b"cublasSgemv_v2\0")?,
            sgemm: sym(&cublas, b"cublasSgemm_v2\0")?,
            handle: std::ptr::null_mut(),
            _cublas: cublas,
            _cublas_lt: cublas_lt,
            _cudart: cudart,
        };
        let mut handle: Handle = std::ptr::null_mut();
        // SAFETY: cublasCreate_v2 writes one handle through the pointer.
        lib.cublas_status(unsafe { create(&mut handle) }, "cublasCreate_v2")?;
        lib.handle = handle;
        Ok(lib)
    }

    fn cuda(&self, code: CudaError, call: &'static str) -> Result<(), BlasError> {
        if code == 0 {
            return Ok(());
        }
        // SAFETY: cudaGetErrorString returns a static NUL-terminated string.
        let text = unsafe {
            let p = (self.error_string)(code);
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        Err(BlasError::Cuda { call, code, text })
    }

    fn cublas_status(&self, status: CublasStatus, call: &'static str) -> Result<(), BlasError> {
        if status == 0 {
            Ok(())
        } else {
            Err(BlasError::CublasStatus { call, status })
        }
    }

    /// A device buffer holding `bytes` copied from the host.
    pub fn upload(&self, bytes: &[u8]) -> Result<CudaBuffer<'_>, BlasError> {
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: cudaMalloc writes one device pointer.
        self.cuda(unsafe { (self.cuda_malloc)(&mut ptr, bytes.len().max(4)) }, "cudaMalloc")?;
        let buf = CudaBuffer { ptr, bytes: bytes.len(), lib: self };
        if !bytes.is_empty() {
            // SAFETY: both regions hold `bytes.len()` bytes.
            self.cuda(
                unsafe { (self.cuda_memcpy)(ptr, bytes.as_ptr().cast(), bytes.len(), MEMCPY_HOST_TO_DEVICE) },
                "cudaMemcpy to the device",
            )?;
        }
        Ok(buf)
    }

    /// Copies a device buffer back to the host.
    pub fn download(&self, buf: &CudaBuffer) -> Result<Vec<u8>, BlasError> {
        let mut out = vec![0u8; buf.bytes];
        if !out.is_empty() {
            // SAFETY: both regions hold `buf.bytes` bytes.
            self.cuda(
                unsafe {
                    (self.cuda_memcpy)(out.as_mut_ptr().cast(), buf.ptr, buf.bytes, MEMCPY_DEVICE_TO_HOST)
                },
                "cudaMemcpy to the host",
            )?;
        }
        Ok(out)
    }

    /// Copies `from` into `to` on the device (the smaller size).
    pub fn copy(&self, from: &CudaBuffer, to: &CudaBuffer) -> Result<(), BlasError> {
        let n = from.bytes.min(to.bytes);
        // SAFETY: both device regions hold at least `n` bytes.
        self.cuda(unsafe { (self.cuda_memcpy)(to.ptr, from.ptr, n, MEMCPY_DEVICE_TO_DEVICE) }, "cudaMemcpy")
    }

    /// Waits for all device work.
    pub fn synchronize(&self) -> Result<(), BlasError> {
        // SAFETY: no arguments.
        self.cuda(unsafe { (self.device_synchronize)() }, "cudaDeviceSynchronize")
    }

    /// Runs `work` between two CUDA events on the default stream; returns
    /// the elapsed device time in milliseconds.
    /// `work`'s own errors pass through as they are.
    pub fn timed<E: From<BlasError>>(&self, work: &mut dyn FnMut() -> Result<(), E>) -> Result<f64, E> {
        let (mut start, mut end): (Event, Event) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: each call writes one event handle.
        self.cuda(unsafe { (self.event_create)(&mut start) }, "cudaEventCreate")?;
        self.cuda(unsafe { (self.event_create)(&mut end) }, "cudaEventCreate")?;
        let result = (|| {
            // SAFETY: live events, default stream (null).
            self.cuda(unsafe { (self.event_record)(start, std::ptr::null_mut()) }, "cudaEventRecord")?;
            work()?;
            self.cuda(unsafe { (self.event_record)(end, std::ptr::null_mut()) }, "cudaEventRecord")?;
            self.cuda(unsafe { (self.event_synchronize)(end) }, "cudaEventSynchronize")?;
            let mut ms = 0.0f32;
            self.cuda(unsafe { (self.event_elapsed)(&mut ms, start, end) }, "cudaEventElapsedTime")?;
            Ok(f64::from(ms))
        })();
        // SAFETY: the events were created above and are destroyed once.
        unsafe {
            (self.event_destroy)(start);
            (self.event_destroy)(end);
        }
        result
    }

    fn pointer_mode(&self, mode: c_int) -> Result<(), BlasError> {
        // SAFETY: a live handle.
        self.cublas_status(unsafe { (self.set_pointer_mode)(self.handle, mode) }, "cublasSetPointerMode_v2")
    }

    /// `x = alpha * x` over `n` elements.
    pub fn sscal(&self, n: usize, alpha: f32, x: &CudaBuffer) -> Result<(), BlasError> {
        self.pointer_mode(POINTER_MODE_HOST)?;
        // SAFETY: `x` holds at least `n` floats (checked by the caller); alpha is a host scalar.
        let s = unsafe { (self.sscal)(self.handle, int(n, "n")?, &alpha, x.f32_ptr(), 1) };
        self.cublas_status(s, "cublasSscal_v2")
    }

    /// `result[0] = sum |x[i]|`, the result left on the device.
    pub fn sasum(&self, n: usize, x: &CudaBuffer, result: &CudaBuffer) -> Result<(), BlasError> {
        self.pointer_mode(POINTER_MODE_DEVICE)?;
        // SAFETY: device pointers of the sizes the caller checked.
        let s = unsafe { (self.sasum)(self.handle, int(n, "n")?, x.f32_ptr(), 1, result.f32_ptr()) };
        self.cublas_status(s, "cublasSasum_v2")
    }

    /// `result[0] = sum x[i] * y[i]`, the result left on the device.
    pub fn sdot(
        &self,
        n: usize,
        x: &CudaBuffer,
        y: &CudaBuffer,
        result: &CudaBuffer,
    ) -> Result<(), BlasError> {
        self.pointer_mode(POINTER_MODE_DEVICE)?;
        // SAFETY: device pointers of the sizes the caller checked.
        let s = unsafe {
            (self.sdot)(self.handle, int(n, "n")?, x.f32_ptr(), 1, y.f32_ptr(), 1, result.f32_ptr())
        };
        self.cublas_status(s, "cublasSdot_v2")
    }

    /// `y = alpha * op(A) x + beta * y` with `A` row-major `m x n`: in
    /// column-major terms `A` is the `n x m` matrix `A^T` (leading
    /// dimension `n`), so the transposition flag flips.
    #[allow(clippy::too_many_arguments)]
    pub fn sgemv(&self, g: Gemv<'_, CudaBuffer>) -> Result<(), BlasError> {
        let Gemv { trans_a, m, n, alpha, a, x, beta, y } = g;
        self.pointer_mode(POINTER_MODE_HOST)?;
        let op = if trans_a { OP_N } else { OP_T };
        let (rows, cols) = (int(n, "n")?, int(m, "m")?);
        // SAFETY: device pointers of the sizes the caller checked; host scalars.
        let s = unsafe {
            (self.sgemv)(
                self.handle,
                op,
                rows,
                cols,
                &alpha,
                a.f32_ptr(),
                rows,
                x.f32_ptr(),
                1,
                &beta,
                y.f32_ptr(),
                1,
            )
        };
        self.cublas_status(s, "cublasSgemv_v2")
    }

    /// `C = alpha * op(A) op(B) + beta * C`, row-major, `C` is `m x n`:
    /// computed as the column-major `C^T = op(B)^T op(A)^T`.
    #[allow(clippy::too_many_arguments)]
    pub fn sgemm(&self, g: Gemm<'_, CudaBuffer>) -> Result<(), BlasError> {
        let Gemm { trans_a, trans_b, m, n, k, alpha, a, b, beta, c } = g;
        self.pointer_mode(POINTER_MODE_HOST)?;
        let lda = if trans_a { m } else { k };
        let ldb = if trans_b { k } else { n };
        let op = |t: bool| if t { OP_T } else { OP_N };
        // SAFETY: device pointers of the sizes the caller checked; host scalars.
        let s = unsafe {
            (self.sgemm)(
                self.handle,
                op(trans_b),
                op(trans_a),
                int(n, "n")?,
                int(m, "m")?,
                int(k, "k")?,
                &alpha,
                b.f32_ptr(),
                int(ldb, "ldb")?,
                a.f32_ptr(),
                int(lda, "lda")?,
                &beta,
                c.f32_ptr(),
                int(n, "n")?,
            )
        };
        self.cublas_status(s, "cublasSgemm_v2")
    }
}

impl Drop for CuBlas {
    fn drop(&mut self) {
        if !self.handle.is_null() {
            // SAFETY: the handle was created by cublasCreate_v2 and is destroyed once.
            unsafe {
                (self.destroy)(self.handle);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pip_layout_adds_the_runtime_folder() {
        let d = PathBuf::from("/venv/lib/python3.11/site-packages/nvidia/cublas/lib");
        let dirs = search_dirs(std::slice::from_ref(&d));
        assert_eq!(
            dirs,
            vec![d, PathBuf::from("/venv/lib/python3.11/site-packages/nvidia/cuda_runtime/lib")]
        );
        assert_eq!(search_dirs(&[PathBuf::from("/opt/cuda/lib64")]), vec![PathBuf::from("/opt/cuda/lib64")]);
    }

    #[test]
    fn missing_libraries_are_an_error_naming_them() {
        // An empty folder and (on machines without CUDA) nothing on the
        // loader's path: the error says which library is missing.
        let dir = std::env::temp_dir().join(format!("lift-no-cuda-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        match CuBlas::load(std::slice::from_ref(&dir)) {
            Ok(_) => println!("skipped: CUDA is installed here"),
            Err(e) => {
                assert!(matches!(e, BlasError::Missing { library: "CUDA runtime" | "cuBLAS", .. }), "{e:?}");
                let shown = e.to_string();
                assert!(
                    shown.starts_with("CUDA runtime not found (") || shown.starts_with("cuBLAS not found (")
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
