//! CLBlast, loaded at run time as a library baseline: the harness builds and
//! runs without it, and reports its bars as skipped when it is missing.
//!
//! Only the routines the benchmarks need are bound (xGEMV, xGEMM, xSCAL,
//! xASUM, xDOT), single precision, row-major. CLBlast may launch several kernels and returns an event for
//! the last one only, so calls are timed on the host around a queue finish.

use super::exec::{DeviceBuffer, Runtime};
use super::{BlasError, Gemm, Gemv};
use opencl3::types::{cl_command_queue, cl_event, cl_mem};
use std::os::raw::c_int;

// Values of CLBlast's C enums (clblast_c.h).
const ROW_MAJOR: c_int = 101;
const TRANSPOSE_NO: c_int = 111;
const TRANSPOSE_YES: c_int = 112;

type Sgemv = unsafe extern "C" fn(
    c_int,
    c_int,
    usize,
    usize,
    f32,
    cl_mem,
    usize,
    usize,
    cl_mem,
    usize,
    usize,
    f32,
    cl_mem,
    usize,
    usize,
    *mut cl_command_queue,
    *mut cl_event,
) -> c_int;

type Sgemm = unsafe extern "C" fn(
    c_int,
    c_int,
    c_int,
    usize,
    usize,
    usize,
    f32,
    cl_mem,
    usize,
    usize,
    cl_mem,
    usize,
    usize,
    f32,
    cl_mem,
    usize,
    usize,
    *mut cl_command_queue,
    *mut cl_event,
) -> c_int;

// CLBlastSscal(n, alpha, x, x_offset, x_inc, queue, event)
type Sscal =
    unsafe extern "C" fn(usize, f32, cl_mem, usize, usize, *mut cl_command_queue, *mut cl_event) -> c_int;

// CLBlastSasum(n, asum, asum_offset, x, x_offset, x_inc, queue, event)
type Sasum = unsafe extern "C" fn(
    usize,
    cl_mem,
    usize,
    cl_mem,
    usize,
    usize,
    *mut cl_command_queue,
    *mut cl_event,
) -> c_int;

// CLBlastSdot(n, dot, dot_offset, x, x_offset, x_inc, y, y_offset, y_inc, queue, event)
type Sdot = unsafe extern "C" fn(
    usize,
    cl_mem,
    usize,
    cl_mem,
    usize,
    usize,
    cl_mem,
    usize,
    usize,
    *mut cl_command_queue,
    *mut cl_event,
) -> c_int;

/// The loaded library.
pub struct ClBlast {
    sgemv: Sgemv,
    sgemm: Sgemm,
    sscal: Sscal,
    sasum: Sasum,
    sdot: Sdot,
    // Keeps the functions above valid.
    _lib: libloading::Library,
}

fn trans(t: bool) -> c_int {
    if t {
        TRANSPOSE_YES
    } else {
        TRANSPOSE_NO
    }
}

impl ClBlast {
    /// Loads `libclblast.so.1` (or `libclblast.so`); the error says why not.
    pub fn load() -> Result<ClBlast, BlasError> {
        // Replaced by the loader's error for each name tried.
        let mut last = libloading::Error::DlOpenUnknown;
        for name in ["libclblast.so.1", "libclblast.so"] {
            // SAFETY: loading a shared library runs its initialisers;
            // CLBlast's only set up static tables.
            match unsafe { libloading::Library::new(name) } {
                Ok(lib) => {
                    // SAFETY: the types match the C declarations in clblast_c.h.
                    let (sgemv, sgemm, sscal, sasum, sdot) = unsafe {
                        let e = BlasError::Symbol;
                        (
                            *lib.get::<Sgemv>(b"CLBlastSgemv\0").map_err(e)?,
                            *lib.get::<Sgemm>(b"CLBlastSgemm\0").map_err(e)?,
                            *lib.get::<Sscal>(b"CLBlastSscal\0").map_err(e)?,
                            *lib.get::<Sasum>(b"CLBlastSasum\0").map_err(e)?,
                            *lib.get::<Sdot>(b"CLBlastSdot\0").map_err(e)?,
                        )
                    };
                    return Ok(ClBlast { sgemv, sgemm, sscal, sasum, sdot, _lib: lib });
                }
                Err(e) => last = e,
            }
        }
        Err(BlasError::ClBlastMissing(last))
    }

    /// `y = alpha * op(A) x + beta * y` with `A` row-major `m x n`.
    #[allow(clippy::too_many_arguments)]
    pub fn sgemv(&self, rt: &Runtime, g: Gemv<'_, DeviceBuffer>) -> Result<(), BlasError> {
        let Gemv { trans_a, m, n, alpha, a, x, beta, y } = g;
        let mut q = rt.raw_queue();
        // SAFETY: the buffers and queue are live for the call; CLBlast only
        // enqueues work on the queue.
        let status = unsafe {
            (self.sgemv)(
                ROW_MAJOR,
                trans(trans_a),
                m,
                n,
                alpha,
                a.raw(),
                0,
                n,
                x.raw(),
                0,
                1,
                beta,
                y.raw(),
                0,
                1,
                &mut q,
                std::ptr::null_mut(),
            )
        };
        check(status, "CLBlastSgemv")
    }

    /// `C = alpha * op(A) op(B) + beta * C`, row-major, `C` is `m x n`.
    #[allow(clippy::too_many_arguments)]
    pub fn sgemm(&self, rt: &Runtime, g: Gemm<'_, DeviceBuffer>) -> Result<(), BlasError> {
        let Gemm { trans_a, trans_b, m, n, k, alpha, a, b, beta, c } = g;
        let lda = if trans_a { m } else { k };
        let ldb = if trans_b { k } else { n };
        let mut q = rt.raw_queue();
        // SAFETY: as in `sgemv`.
        let status = unsafe {
            (self.sgemm)(
                ROW_MAJOR,
                trans(trans_a),
                trans(trans_b),
                m,
                n,
                k,
                alpha,
                a.raw(),
                0,
                lda,
                b.raw(),
                0,
                ldb,
                beta,
                c.raw(),
                0,
                n,
                &mut q,
                std::ptr::null_mut(),
            )
        };
        check(status, "CLBlastSgemm")
    }
}

impl ClBlast {
    /// `x = alpha * x` over `n` elements.
    pub fn sscal(&self, rt: &Runtime, n: usize, alpha: f32, x: &DeviceBuffer) -> Result<(), BlasError> {
        let mut q = rt.raw_queue();
        // SAFETY: as in `sgemv`.
        let status = unsafe { (self.sscal)(n, alpha, x.raw(), 0, 1, &mut q, std::ptr::null_mut()) };
        check(status, "CLBlastSscal")
    }

    /// `result[0] = sum |x[i]|` over `n` elements.
    pub fn sasum(
        &self,
        rt: &Runtime,
        n: usize,
        x: &DeviceBuffer,
        result: &DeviceBuffer,
    ) -> Result<(), BlasError> {
        let mut q = rt.raw_queue();
        // SAFETY: as in `sgemv`.
        let status = unsafe { (self.sasum)(n, result.raw(), 0, x.raw(), 0, 1, &mut q, std::ptr::null_mut()) };
        check(status, "CLBlastSasum")
    }

    /// `result[0] = sum x[i] * y[i]` over `n` elements.
    pub fn sdot(
        &self,
        rt: &Runtime,
        n: usize,
        x: &DeviceBuffer,
        y: &DeviceBuffer,
        result: &DeviceBuffer,
    ) -> Result<(), BlasError> {
        let mut q = rt.raw_queue();
        // SAFETY: as in `sgemv`.
        let status = unsafe {
            (self.sdot)(n, result.raw(), 0, x.raw(), 0, 1, y.raw(), 0, 1, &mut q, std::ptr::null_mut())
        };
        check(status, "CLBlastSdot")
    }
}

fn check(status: c_int, call: &'static str) -> Result<(), BlasError> {
    if status == 0 {
        Ok(())
    } else {
        Err(BlasError::ClBlastStatus { call, status })
    }
}
