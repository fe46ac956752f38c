// GEMV: out = alpha * A x + beta * y, A row-major M x N (row i at A + i * N).
// The result goes to a separate buffer (not in place, as in BLAS) so that the
// harness can run the kernel repeatedly on the same inputs.
//
// Follows the technique of CLBlast's matrix-vector kernel (Xgemv, written
// from the technique, not from its code):
//  * a work-group computes a block of ROWS_PER_WG consecutive rows of y;
//  * x is staged through local memory in chunks of CHUNK floats, loaded once
//    per work-group (coalesced, float4) and then read from local memory by
//    every row of the block;
//  * reads of A are coalesced and vectorised: the WG work-items form
//    GROUPS groups of LANES; a group owns ROWS_PER_GROUP rows and its
//    lanes read consecutive float4s of a row (512 contiguous bytes per warp
//    access); every work-item keeps one partial sum per row in registers;
//  * the LANES partial sums of a row are combined through local memory at
//    the end (OpenCL 1.2 has no warp shuffles).
// Requirements: N % 4 == 0 (float4 rows). M and N are otherwise arbitrary:
// rows past M and float4 columns past N / 4 are guarded.
//
// Launch: global (ceil(M / ROWS_PER_WG) * WG), local (WG); by default
// ceil(M / 16) * 256 and 256.

// Sizes: compile-time constants when the build options define STATIC_<size>
// (the configs do exactly when the Lift program is compiled with its sizes
// known), else the kernel arguments.
#ifndef STATIC_M
#define STATIC_M M_arg
#endif
#ifndef STATIC_N
#define STATIC_N N_arg
#endif

// Tuning parameters (references/TUNING.md): the work-group size WG (a
// multiple of LANES) and the rows ROWS each group of LANES owns (the work
// per work-item: one partial sum per row).
#ifndef WG
#define WG 256
#endif
#ifndef ROWS
#define ROWS 2
#endif
#define LANES 32
#define GROUPS (WG / LANES)          // 8 by default
#define ROWS_PER_GROUP ROWS
#define ROWS_PER_WG (GROUPS * ROWS_PER_GROUP)  // 16 by default
#define CHUNK4 WG                     // float4s of x per chunk (1024 floats by default)
#define PER_LANE (CHUNK4 / LANES)     // float4s of a row a lane reads per chunk

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemv(__global const float* restrict A, __global const float* restrict x,
          __global const float* restrict y,
          __global float* restrict out, float alpha, float beta, int M_arg, int N_arg) {
    const int M = STATIC_M;
    const int N = STATIC_N;
    __local float4 xs[CHUNK4];
    __local float partial[ROWS_PER_WG][LANES + 1];  // +1: no bank conflicts in the final sums

    const int lid = get_local_id(0);
    const int lane = lid % LANES;
    const int group = lid / LANES;
    const int firstRow = get_group_id(0) * ROWS_PER_WG + group * ROWS_PER_GROUP;
    const int N4 = N / 4;
    __global const float4* x4 = (__global const float4*)x;

    // Rows past M read row M - 1 (a valid address) and are never stored:
    // that keeps the inner loop free of row guards.
    __global const float4* arow[ROWS_PER_GROUP];
    float acc[ROWS_PER_GROUP];
#pragma unroll
    for (int r = 0; r < ROWS_PER_GROUP; ++r) {
        arow[r] = (__global const float4*)(A + (size_t)min(firstRow + r, M - 1) * N);
        acc[r] = 0.0f;
    }

    for (int c0 = 0; c0 < N4; c0 += CHUNK4) {
        xs[lid] = (c0 + lid < N4) ? x4[c0 + lid] : (float4)(0.0f);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (c0 + CHUNK4 <= N4) {
            // Full chunk: no column guards.
#pragma unroll
            for (int j = 0; j < PER_LANE; ++j) {
                const int c = j * LANES + lane;
                const float4 xv = xs[c];
#pragma unroll
                for (int r = 0; r < ROWS_PER_GROUP; ++r) {
                    const float4 a = arow[r][c0 + c];
                    acc[r] += a.x * xv.x + a.y * xv.y + a.z * xv.z + a.w * xv.w;
                }
            }
        } else {
            for (int j = 0; j < PER_LANE; ++j) {
                const int c = j * LANES + lane;
                if (c0 + c < N4) {
                    const float4 xv = xs[c];
                    for (int r = 0; r < ROWS_PER_GROUP; ++r) {
                        const float4 a = arow[r][c0 + c];
                        acc[r] += a.x * xv.x + a.y * xv.y + a.z * xv.z + a.w * xv.w;
                    }
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

#pragma unroll
    for (int r = 0; r < ROWS_PER_GROUP; ++r)
        partial[group * ROWS_PER_GROUP + r][lane] = acc[r];
    barrier(CLK_LOCAL_MEM_FENCE);

    if (lid < ROWS_PER_WG) {
        const int row = get_group_id(0) * ROWS_PER_WG + lid;
        float sum = 0.0f;
        for (int l = 0; l < LANES; ++l) sum += partial[lid][l];
        if (row < M) out[row] = alpha * sum + beta * y[row];
    }
}
