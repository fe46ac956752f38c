// MM (AMD flavour): C = A B where A is given transposed. At is K x M
// row-major (At[k][m] = A[m][k]), B is K x N row-major, C is M x N row-major.
//
// Follows the optimisations CLBlast's Xgemm applies on AMD GPUs (written
// from the technique, not from its code): no local memory at all;
//  * register blocking: every work-item computes an 8 x 8 block of C held in
//    registers (16 float4 accumulators);
//  * vectorisation: per k a work-item loads 8 consecutive floats of At (two
//    float4) and 8 consecutive floats of B (two float4) straight from global
//    memory and performs 64 multiply-adds; C is stored as float4;
//  * coalescing: work-items adjacent in dimension 0 own adjacent 8-column
//    blocks, so a row of B is read as one contiguous stream per warp and the
//    At values are shared (broadcast) by the work-items of a row; reuse
//    between work-items comes from the caches instead of local memory.
// Requirements: M % 128 == 0 and N % 128 == 0 (8 x 8 blocks, 16 x 16
// work-groups; no edge guards). K is arbitrary.
//
// Launch: global (N / 8, M / 8), local (16, 16).

#ifndef UNROLL_K
#define UNROLL_K 4
#endif
#define PRAGMA_STR(x) _Pragma(#x)
#define PRAGMA(x) PRAGMA_STR(x)

__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void mm_amd(__global const float* restrict At, __global const float* restrict B,
            __global float* restrict C, int M, int N, int K) {
    const int M4 = M / 4;
    const int N4 = N / 4;
    const int n4 = get_global_id(0) * 2;  // first of this work-item's two float4 columns
    const int m4 = get_global_id(1) * 2;  // first of its two float4 row groups

    __global const float4* a = (__global const float4*)At + m4;
    __global const float4* b = (__global const float4*)B + n4;

    float4 acc[8][2];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        acc[i][0] = (float4)(0.0f);
        acc[i][1] = (float4)(0.0f);
    }

    // Unrolled by UNROLL_K (a tuning parameter, default 4, as CLBlast's
    // AMD kernels do); any K stays correct, the compiler peels the rest.
    PRAGMA(unroll UNROLL_K)
    for (int k = 0; k < K; ++k) {
        const float4 a0 = a[0], a1 = a[1];
        const float4 b0 = b[0], b1 = b[1];
        const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            acc[i][0] = mad((float4)(av[i]), b0, acc[i][0]);
            acc[i][1] = mad((float4)(av[i]), b1, acc[i][1]);
        }
        a += M4;
        b += N4;
    }

    __global float4* C4 = (__global float4*)C;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const size_t row = (size_t)(m4 * 4 + i) * N4;
        C4[row + n4] = acc[i][0];
        C4[row + n4 + 1] = acc[i][1];
    }
}
