// MRI-Q: reference kernels in the style of the Parboil benchmark suite's
// MRI-Q (CGO 2017, Table 1: private memory, coalescing; 1D iteration space).
// Two kernels, both timed:
//
// mriq_phimag: phiMag[k] = phiR[k]^2 + phiI[k]^2, one sample per work-item.
//   It also packs the sample as (kx, ky, kz, phiMag) into one float4, the
//   record layout Parboil's host code builds before the Q kernel; doing it
//   here keeps the whole computation on the device.
//
// mriq_q: Q(x) = sum_k phiMag[k] * (cos, sin)(2*pi*(k . x)) for every voxel.
//   * one voxel per work-item (work-group 256), its coordinates and the two
//     accumulators in private registers;
//   * the k-space samples live in __constant memory (K * 16 bytes, 48 KiB
//     for K = 3072, within the 64 KiB limit): every work-item reads the same
//     sample at the same time, which the constant cache broadcasts;
//   * the sample loop is unrolled by 4 (K is a multiple of 4 in every
//     preset; a remainder loop keeps other K correct);
//   * full-precision sin and cos, as Parboil's OpenCL version uses;
//   * the result is written as one float2 (Qr, Qi) per voxel, coalesced.

#define TWO_PI 6.2831853071795864769f

// The launched work-group size: the config's `params` set it with -D (the
// default here is theirs), and the attribute below declares it to the compiler.
#ifndef WG
#define WG 256
#endif

__attribute__((reqd_work_group_size(WG, 1, 1)))
__kernel void mriq_phimag(__global const float* restrict kx,
                          __global const float* restrict ky,
                          __global const float* restrict kz,
                          __global const float* restrict phiR,
                          __global const float* restrict phiI,
                          __global float4* restrict kVals,
                          const int K)
{
    const int k = get_global_id(0);
    if (k >= K) return;
    const float r = phiR[k];
    const float i = phiI[k];
    kVals[k] = (float4)(kx[k], ky[k], kz[k], r * r + i * i);
}

inline float2 qstep(float2 q, const float3 x, const float4 s)
{
    const float arg = TWO_PI * (s.x * x.x + s.y * x.y + s.z * x.z);
    const float c = cos(arg);
    const float sn = sin(arg);
    return q + s.w * (float2)(c, sn);
}

__attribute__((reqd_work_group_size(WG, 1, 1)))
__kernel void mriq_q(__global const float* restrict x,
                     __global const float* restrict y,
                     __global const float* restrict z,
                     __constant float4* kVals,
                     __global float2* restrict Q,
                     const int X, const int K)
{
    const int v = get_global_id(0);
    if (v >= X) return;
    const float3 p = (float3)(x[v], y[v], z[v]);
    float2 q = (float2)(0.0f);
    int k = 0;
    for (; k + 4 <= K; k += 4) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
            q = qstep(q, p, kVals[k + u]);
    }
    for (; k < K; ++k)
        q = qstep(q, p, kVals[k]);
    Q[v] = q;
}
