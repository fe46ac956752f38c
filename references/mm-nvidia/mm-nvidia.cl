// MM (NVIDIA flavour): C = A B where A is given transposed. At is K x M
// row-major (At[k][m] = A[m][k]), B is K x N row-major, C is M x N row-major.
//
// Follows the optimisations CLBlast's Xgemm applies on NVIDIA GPUs (written
// from the technique, not from its code):
//  * tiling in local memory: a work-group of 16 x 16 work-items computes a
//    128 x 128 tile of C, walking K in steps of 16; the 16 x 128 slices of
//    At and B are staged in local memory;
//  * register blocking: every work-item computes 8 x 8 elements of C, held
//    in registers, as two 4-row strips 64 rows apart times two 4-column
//    strips 64 columns apart, so that work-items of a warp touch consecutive
//    float4s of C and of the local tiles;
//  * vectorisation: global loads, local loads and stores, and the stores of
//    C are float4; per k a work-item reads 4 float4 from local memory and
//    performs 64 multiply-adds;
//  * prefetching: the next slices of At and B are loaded into registers
//    while the current ones are consumed from local memory.
// Because A is given transposed, slices of both At and B are rows of 128
// consecutive floats, so every global load is coalesced without a transposition.
// Requirements: M % 128 == 0, N % 128 == 0, K % 16 == 0 (no edge guards).
//
// Launch: global (N / 8, M / 8), local (16, 16).

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

#define TS 128            // tile of C per work-group, both dimensions
#define TK 16             // K step
#define T4 (TS / 4)       // float4s in a tile row: 32
#define WX 16             // work-items along N
#define WY 16             // work-items along M

__kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void mm_nvidia(__global const float* restrict At, __global const float* restrict B,
               __global float* restrict C, int M_arg, int N_arg, int K_arg) {
    const int M = STATIC_M;
    const int N = STATIC_N;
    const int K = STATIC_K;
    __local float4 As[TK][T4];
    __local float4 Bs[TK][T4];

    const int tx = get_local_id(0);
    const int ty = get_local_id(1);
    const int tid = ty * WX + tx;
    const int M4 = M / 4;
    const int N4 = N / 4;
    const int m04 = get_group_id(1) * T4;   // first float4 row-block of the tile in M
    const int n04 = get_group_id(0) * T4;   // first float4 column of the tile in N

    // Each work-item loads two float4s of each slice: rows lr and lr + 8,
    // float4 column lc; a warp loads 512 contiguous bytes.
    const int lr = tid / T4;
    const int lc = tid % T4;
    __global const float4* aPtr = (__global const float4*)At + (size_t)lr * M4 + m04 + lc;
    __global const float4* bPtr = (__global const float4*)B + (size_t)lr * N4 + n04 + lc;
    const size_t aHalf = (size_t)8 * M4, bHalf = (size_t)8 * N4;
    const size_t aStep = (size_t)TK * M4, bStep = (size_t)TK * N4;

    float4 ra0 = aPtr[0], ra1 = aPtr[aHalf];
    float4 rb0 = bPtr[0], rb1 = bPtr[bHalf];

    // acc[i][j]: row strip i (rows ty*4 + i for i < 4, 64 + ty*4 + i - 4
    // otherwise), column strip j (float4 column tx or tx + 16).
    float4 acc[8][2];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        acc[i][0] = (float4)(0.0f);
        acc[i][1] = (float4)(0.0f);
    }

    for (int k0 = 0; k0 < K; k0 += TK) {
        As[lr][lc] = ra0;
        As[lr + 8][lc] = ra1;
        Bs[lr][lc] = rb0;
        Bs[lr + 8][lc] = rb1;
        barrier(CLK_LOCAL_MEM_FENCE);

        if (k0 + TK < K) {  // prefetch the next slices while computing
            aPtr += aStep;
            bPtr += bStep;
            ra0 = aPtr[0];
            ra1 = aPtr[aHalf];
            rb0 = bPtr[0];
            rb1 = bPtr[bHalf];
        }

#pragma unroll
        for (int k = 0; k < TK; ++k) {
            const float4 a0 = As[k][ty];
            const float4 a1 = As[k][ty + 16];
            const float4 b0 = Bs[k][tx];
            const float4 b1 = Bs[k][tx + 16];
            const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                acc[i][0] = mad((float4)(a[i]), b0, acc[i][0]);
                acc[i][1] = mad((float4)(a[i]), b1, acc[i][1]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    __global float4* C4 = (__global float4*)C;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int m = (m04 + ty + (i / 4) * 16) * 4 + (i % 4);
        C4[(size_t)m * N4 + n04 + tx] = acc[i][0];
        C4[(size_t)m * N4 + n04 + tx + 16] = acc[i][1];
    }
}
