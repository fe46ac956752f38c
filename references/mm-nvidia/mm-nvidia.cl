// MM (NVIDIA flavour): C = A B where A is given transposed. At is K x M
// row-major (At[k][m] = A[m][k]), B is K x N row-major, C is M x N row-major.
//
// Follows the optimisations CLBlast's Xgemm applies on NVIDIA GPUs (written
// from the technique, not from its code):
//  * tiling in local memory: a work-group of WX x WY work-items computes a
//    TM x TN tile of C, walking K in steps of TK; the TK x TM and TK x TN
//    slices of At and B are staged in local memory;
//  * register blocking: every work-item computes (TM / WY) x (TN / WX)
//    elements of C, held in registers, as 4-row strips 4 WY rows apart
//    times 4-column strips 4 WX columns apart, so that work-items of a warp
//    touch consecutive float4s of C and of the local tiles;
//  * vectorisation: global loads, local loads and stores, and the stores of
//    C are float4;
//  * prefetching: the next slices of At and B are loaded into registers
//    while the current ones are consumed from local memory.
// Because A is given transposed, slices of both At and B are rows of TM or
// TN consecutive floats, so every global load is coalesced without a
// transposition.
// The defaults are the shape CLBlast's NVIDIA tuning gave: 16 x 16
// work-items, 128 x 128 tiles, TK 16, 8 x 8 elements per work-item (two
// strips 64 rows and 64 columns apart), 64 multiply-adds per 4 float4 local
// loads.
// Requirements: M % TM == 0, N % TN == 0, K % TK == 0 (no edge guards).
//
// Launch: global (N / TN * WX, M / TM * WY), local (WX, WY); by default
// (N / 8, M / 8) and (16, 16).

// Sizes: compile-time constants when the build options define STATIC_<size>
// (the configs do exactly when the Lift program is compiled with its sizes
// known), else the kernel arguments.
#ifndef STATIC_M
#define STATIC_M M_arg
#endif
#ifndef STATIC_N
#define STATIC_N N_arg
#endif
#ifndef STATIC_K
#define STATIC_K K_arg
#endif

// Tuning parameters (references/TUNING.md): the tile of C (TM rows, TN
// columns), the K step TK and the work-group shape (WX along N, WY along M).
#ifndef TM
#define TM 128
#endif
#ifndef TN
#define TN 128
#endif
#ifndef TK
#define TK 16
#endif
#ifndef WX
#define WX 16
#endif
#ifndef WY
#define WY 16
#endif
#define TM4 (TM / 4)      // float4s in a row of At's slice: 32 by default
#define TN4 (TN / 4)      // float4s in a row of B's slice: 32 by default
#define SY (TM4 / WY)     // 4-row strips per work-item, 4 WY rows apart: 2
#define SX (TN4 / WX)     // float4 columns per work-item, WX apart: 2
#define NT (WX * WY)      // work-items
#define RA (NT / TM4)     // rows of At's slice loaded per pass: 8
#define RB (NT / TN4)     // rows of B's slice loaded per pass: 8
#define LA (TK / RA)      // float4 loads of At's slice per work-item: 2
#define LB (TK / RB)      // float4 loads of B's slice per work-item: 2
#if TM4 % WY != 0 || TN4 % WX != 0 || NT % TM4 != 0 || NT % TN4 != 0 || TK % RA != 0 || TK % RB != 0 || SY < 1 || SX < 1 || LA < 1 || LB < 1
#error "mm-nvidia: the tile (TM, TN, TK) does not split over the work-group (WX, WY)"
#endif

__kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void mm_nvidia(__global const float* restrict At, __global const float* restrict B,
               __global float* restrict C, int M_arg, int N_arg, int K_arg) {
    const int M = STATIC_M;
    const int N = STATIC_N;
    const int K = STATIC_K;
    __local float4 As[TK][TM4];
    __local float4 Bs[TK][TN4];

    const int tx = get_local_id(0);
    const int ty = get_local_id(1);
    const int tid = ty * WX + tx;
    const int M4 = M / 4;
    const int N4 = N / 4;
    const int m04 = get_group_id(1) * TM4;  // first float4 row-block of the tile in M
    const int n04 = get_group_id(0) * TN4;  // first float4 column of the tile in N

    // Each work-item loads LA float4s of At's slice (rows lra, lra + RA,
    // ..., float4 column lca) and LB of B's; a warp loads contiguous bytes.
    const int lra = tid / TM4, lca = tid % TM4;
    const int lrb = tid / TN4, lcb = tid % TN4;
    __global const float4* aPtr = (__global const float4*)At + (size_t)lra * M4 + m04 + lca;
    __global const float4* bPtr = (__global const float4*)B + (size_t)lrb * N4 + n04 + lcb;
    const size_t aPass = (size_t)RA * M4, bPass = (size_t)RB * N4;
    const size_t aStep = (size_t)TK * M4, bStep = (size_t)TK * N4;

    float4 ra[LA], rb[LB];
#pragma unroll
    for (int l = 0; l < LA; ++l) ra[l] = aPtr[l * aPass];
#pragma unroll
    for (int l = 0; l < LB; ++l) rb[l] = bPtr[l * bPass];

    // acc[i][j]: row (m04 + ty + (i / 4) * WY) * 4 + i % 4, float4 column
    // n04 + tx + j * WX.
    float4 acc[4 * SY][SX];
#pragma unroll
    for (int i = 0; i < 4 * SY; ++i) {
#pragma unroll
        for (int j = 0; j < SX; ++j) acc[i][j] = (float4)(0.0f);
    }

    for (int k0 = 0; k0 < K; k0 += TK) {
#pragma unroll
        for (int l = 0; l < LA; ++l) As[lra + l * RA][lca] = ra[l];
#pragma unroll
        for (int l = 0; l < LB; ++l) Bs[lrb + l * RB][lcb] = rb[l];
        barrier(CLK_LOCAL_MEM_FENCE);

        if (k0 + TK < K) {  // prefetch the next slices while computing
            aPtr += aStep;
            bPtr += bStep;
#pragma unroll
            for (int l = 0; l < LA; ++l) ra[l] = aPtr[l * aPass];
#pragma unroll
            for (int l = 0; l < LB; ++l) rb[l] = bPtr[l * bPass];
        }

#pragma unroll
        for (int k = 0; k < TK; ++k) {
            float a[4 * SY];
#pragma unroll
            for (int s = 0; s < SY; ++s) {
                const float4 v = As[k][ty + s * WY];
                a[4 * s] = v.x;
                a[4 * s + 1] = v.y;
                a[4 * s + 2] = v.z;
                a[4 * s + 3] = v.w;
            }
            float4 b[SX];
#pragma unroll
            for (int j = 0; j < SX; ++j) b[j] = Bs[k][tx + j * WX];
#pragma unroll
            for (int i = 0; i < 4 * SY; ++i) {
#pragma unroll
                for (int j = 0; j < SX; ++j) acc[i][j] = mad((float4)(a[i]), b[j], acc[i][j]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    __global float4* C4 = (__global float4*)C;
#pragma unroll
    for (int i = 0; i < 4 * SY; ++i) {
        const int m = (m04 + ty + (i / 4) * WY) * 4 + (i % 4);
#pragma unroll
        for (int j = 0; j < SX; ++j) C4[(size_t)m * N4 + n04 + tx + j * WX] = acc[i][j];
    }
}
