// ATAX: y = A^T (A x), A row-major M x N (row i at A + i * N), x of length
// N, tmp of length M, y of length N.
//
// Follows CLBlast's use of its matrix-vector kernel (Xgemv) twice, once
// plain and once transposed (written from the technique, not from its code):
//  1. atax_ax: tmp = A x. A work-group computes 16 consecutive rows; x is
//     staged through local memory in chunks of 4 WG floats and read from
//     there by every row; groups of 32 lanes read consecutive float4s of a
//     row (coalesced, vectorised); partial sums are combined through local
//     memory.
//  2. atax_atv: partial[p] = A[slice p]^T tmp[slice p]. The transposed
//     product is computed column-oriented so reads of A stay coalesced: a
//     work-group (TX x TY, 64 x 4 by default) owns 4 TX consecutive columns
//     (TX float4s) and one slice of rows; each of its TY row-threads walks
//     every TY-th row of the slice reading a float4 of A; the slice of tmp
//     is staged through local memory. Splitting the rows into `slices`
//     slices gives enough work-groups to saturate memory at these sizes
//     (N / 4 columns alone would be too few work-items).
//  3. atax_sum: y = sum over the `slices` partial vectors (coalesced float4).
// Requirements: N % 4 == 0. Rows and columns are otherwise guarded.
//
// Launch: atax_ax  global (ceil(M / ROWS_PER_WG) * WG), local (WG)
//         atax_atv global (ceil(N / (4 TX)) * TX, TY * slices), local (TX, TY)
//         atax_sum global (ceil(N / (4 TX)) * TX), local (TX)
// (by default ROWS_PER_WG 16, WG 256, TX 64, TY 4). `slices` is a kernel
// argument (the config's SLICES, 64 by default) and partial holds
// slices * N floats.

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
void atax_ax(__global const float* restrict A, __global const float* restrict x,
             __global float* restrict tmp, int M_arg, int N_arg) {
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

    // Rows past M read row M - 1 and are never stored (no guards inside the loop).
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
#pragma unroll
            for (int j = 0; j < PER_LANE; ++j) {
                const int c = j * LANES + lane;
                const float4 xv = xs[c];
#pragma unroll
                for (int r = 0; r < ROWS_PER_GROUP; ++r) acc[r] += dot4(arow[r][c0 + c], xv);
            }
        } else {
            for (int j = 0; j < PER_LANE; ++j) {
                const int c = j * LANES + lane;
                if (c0 + c < N4) {
                    const float4 xv = xs[c];
                    for (int r = 0; r < ROWS_PER_GROUP; ++r) acc[r] += dot4(arow[r][c0 + c], xv);
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

#pragma unroll
    for (int r = 0; r < ROWS_PER_GROUP; ++r) partial[group * ROWS_PER_GROUP + r][lane] = acc[r];
    barrier(CLK_LOCAL_MEM_FENCE);

    if (lid < ROWS_PER_WG) {
        const int row = get_group_id(0) * ROWS_PER_WG + lid;
        float sum = 0.0f;
        for (int l = 0; l < LANES; ++l) sum += partial[lid][l];
        if (row < M) tmp[row] = sum;
    }
}

// Tuning parameters of the transposed product (references/TUNING.md).
#ifndef TX
#define TX 64        // float4 columns per work-group (256 floats)
#endif
#ifndef TY
#define TY 4         // row-threads per work-group
#endif
#define TMP_CHUNK (TX * TY)  // rows of tmp staged per step (one per work-item)

__kernel __attribute__((reqd_work_group_size(TX, TY, 1)))
void atax_atv(__global const float* restrict A, __global const float* restrict tmp,
              __global float* restrict partial, int M_arg, int N_arg, int slices) {
    const int M = STATIC_M;
    const int N = STATIC_N;
    __local float ts[TMP_CHUNK];
    __local float4 red[TY][TX];

    const int lx = get_local_id(0);
    const int ly = get_local_id(1);
    const int N4 = N / 4;
    const int c = get_group_id(0) * TX + lx;   // float4 column
    const int cc = min(c, N4 - 1);             // columns past N read a valid one, never stored
    const int p = get_group_id(1);             // slice
    const int sliceRows = (M + slices - 1) / slices;
    const int rowBegin = min(p * sliceRows, M);
    const int rowEnd = min(rowBegin + sliceRows, M);
    __global const float4* A4 = (__global const float4*)A;

    float4 acc = (float4)(0.0f);
    for (int r0 = rowBegin; r0 < rowEnd; r0 += TMP_CHUNK) {
        const int count = min(TMP_CHUNK, rowEnd - r0);
        const int l = ly * TX + lx;
        if (l < count) ts[l] = tmp[r0 + l];
        barrier(CLK_LOCAL_MEM_FENCE);
        // Consecutive lx read consecutive float4s of one row: 1 KiB per
        // work-group row, coalesced.
#pragma unroll 8
        for (int i = ly; i < count; i += TY)
            acc += A4[(size_t)(r0 + i) * N4 + cc] * ts[i];
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    red[ly][lx] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (ly == 0 && c < N4) {
        float4 s = red[0][lx];
#pragma unroll
        for (int t = 1; t < TY; ++t) s += red[t][lx];
        ((__global float4*)partial)[(size_t)p * N4 + c] = s;
    }
}

__kernel __attribute__((reqd_work_group_size(TX, 1, 1)))
void atax_sum(__global const float* restrict partial, __global float* restrict y, int N_arg,
              int slices) {
    const int N = STATIC_N;
    const int N4 = N / 4;
    const int c = get_global_id(0);
    if (c >= N4) return;
    __global const float4* P4 = (__global const float4*)partial;
    float4 s = (float4)(0.0f);
    for (int p = 0; p < slices; ++p) s += P4[(size_t)p * N4 + c];
    ((__global float4*)y)[c] = s;
}
