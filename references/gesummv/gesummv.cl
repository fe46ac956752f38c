// GESUMMV: y = alpha * A x + beta * B x, A and B row-major M x N (row i at
// A + i * N and B + i * N).
//
// Follows the technique of CLBlast's matrix-vector kernel (Xgemv, written
// from the technique, not from its code), applied to both matrices in one
// fused kernel so x is staged once for both products:
//  * a work-group computes a block of ROWS_PER_WG consecutive rows of y;
//  * x is staged through local memory in chunks of 4 WG floats, loaded once
//    per work-group (coalesced, float4) and read from local memory by every
//    row of the block, for both A and B;
//  * reads of A and B are coalesced and vectorised: the WG work-items form
//    GROUPS groups of LANES; a group owns ROWS_PER_GROUP rows and its lanes
//    read consecutive float4s of a row; every work-item keeps two partial
//    sums per row (one for A x, one for B x) in registers;
//  * the partial sums of a row are combined through local memory at the end.
// Requirements: N % 4 == 0. Rows past M and float4 columns past N / 4 are
// guarded.
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
#define GROUPS (WG / LANES)
#define ROWS_PER_GROUP ROWS
#define ROWS_PER_WG (GROUPS * ROWS_PER_GROUP)  // 16 by default
#define CHUNK4 WG
#define PER_LANE (CHUNK4 / LANES)

inline float dot4(float4 a, float4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gesummv(__global const float* restrict A, __global const float* restrict B,
             __global const float* restrict x, __global float* restrict y,
             float alpha, float beta, int M_arg, int N_arg) {
    const int M = STATIC_M;
    const int N = STATIC_N;
    __local float4 xs[CHUNK4];
    __local float partA[ROWS_PER_WG][LANES + 1];  // +1: no bank conflicts in the final sums
    __local float partB[ROWS_PER_WG][LANES + 1];

    const int lid = get_local_id(0);
    const int lane = lid % LANES;
    const int group = lid / LANES;
    const int firstRow = get_group_id(0) * ROWS_PER_WG + group * ROWS_PER_GROUP;
    const int N4 = N / 4;
    __global const float4* x4 = (__global const float4*)x;

    // Rows past M read row M - 1 and are never stored (no guards inside the loop).
    __global const float4* arow[ROWS_PER_GROUP];
    __global const float4* brow[ROWS_PER_GROUP];
    float accA[ROWS_PER_GROUP], accB[ROWS_PER_GROUP];
#pragma unroll
    for (int r = 0; r < ROWS_PER_GROUP; ++r) {
        const size_t off = (size_t)min(firstRow + r, M - 1) * N;
        arow[r] = (__global const float4*)(A + off);
        brow[r] = (__global const float4*)(B + off);
        accA[r] = 0.0f;
        accB[r] = 0.0f;
    }

    for (int c0 = 0; c0 < N4; c0 += CHUNK4) {
        xs[lid] = (c0 + lid < N4) ? x4[c0 + lid] : (float4)(0.0f);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (c0 + CHUNK4 <= N4) {
#pragma unroll
            for (int j = 0; j < PER_LANE; ++j) {
                const int c = j * LANES + lane;
                const float4 xv = xs[c];
#pragma unroll
                for (int r = 0; r < ROWS_PER_GROUP; ++r) {
                    accA[r] += dot4(arow[r][c0 + c], xv);
                    accB[r] += dot4(brow[r][c0 + c], xv);
                }
            }
        } else {
            for (int j = 0; j < PER_LANE; ++j) {
                const int c = j * LANES + lane;
                if (c0 + c < N4) {
                    const float4 xv = xs[c];
                    for (int r = 0; r < ROWS_PER_GROUP; ++r) {
                        accA[r] += dot4(arow[r][c0 + c], xv);
                        accB[r] += dot4(brow[r][c0 + c], xv);
                    }
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

#pragma unroll
    for (int r = 0; r < ROWS_PER_GROUP; ++r) {
        partA[group * ROWS_PER_GROUP + r][lane] = accA[r];
        partB[group * ROWS_PER_GROUP + r][lane] = accB[r];
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    if (lid < ROWS_PER_WG) {
        const int row = get_group_id(0) * ROWS_PER_WG + lid;
        float sa = 0.0f, sb = 0.0f;
        for (int l = 0; l < LANES; ++l) {
            sa += partA[lid][l];
            sb += partB[lid][l];
        }
        if (row < M) y[row] = alpha * sa + beta * sb;
    }
}
