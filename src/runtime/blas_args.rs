//! The arguments of the two BLAS level-2/3 calls, one struct each, shared
//! by CLBlast (OpenCL buffers) and cuBLAS (CUDA buffers): ten positional
//! parameters of the same types were easy to pass in the wrong order.

/// `y = alpha op(A) x + beta y`, `A` row-major `m x n`, `op` the transpose
/// where `trans_a`.
pub struct Gemv<'a, B> {
    pub trans_a: bool,
    pub m: usize,
    pub n: usize,
    pub alpha: f32,
    pub a: &'a B,
    pub x: &'a B,
    pub beta: f32,
    pub y: &'a B,
}

/// `C = alpha op(A) op(B) + beta C`, all row-major, `C` `m x n`, the
/// products' inner length `k`.
pub struct Gemm<'a, B> {
    pub trans_a: bool,
    pub trans_b: bool,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub alpha: f32,
    pub a: &'a B,
    pub b: &'a B,
    pub beta: f32,
    pub c: &'a B,
}
