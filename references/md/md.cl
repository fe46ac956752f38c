// Molecular dynamics, Lennard-Jones forces: reference kernel in the style of
// the SHOC benchmark suite's MD kernel (CGO 2017, Table 1: private memory,
// coalescing; 1D iteration space).
//
// Techniques:
//  * one atom per work-item (work-group WG, default 128), no local memory: neighbour
//    positions are gathered through the cache, as SHOC does;
//  * the neighbour list is stored neighbour-major (neighbour j of atom i at
//    j * N + i), so the index loads of a work-group are coalesced;
//  * the force is accumulated in a private float3, the atom's own position
//    kept in registers; float4 loads and stores;
//  * the neighbour loop is unrolled by UNROLL (default 8; M is a multiple of 8 in every
//    preset; a remainder loop keeps other M correct).
// Pairs beyond the cutoff (r^2 >= cutsq) contribute nothing.

// Sizes: compile-time constants when the build options define STATIC_<size>
// (the configs do exactly when the Lift program is compiled with its sizes
// known), else the kernel arguments.
#ifndef STATIC_N
#define STATIC_N N_arg
#endif
#ifndef STATIC_M
#define STATIC_M M_arg
#endif

inline float3 lj(float3 f, const float3 me, const float4 other,
                 const float cutsq, const float lj1, const float lj2)
{
    const float3 d = me - other.xyz;
    const float r2 = d.x * d.x + d.y * d.y + d.z * d.z;
    if (r2 < cutsq) {
        const float r2inv = 1.0f / r2;
        const float r6inv = r2inv * r2inv * r2inv;
        const float force = r2inv * r6inv * (lj1 * r6inv - lj2);
        f += d * force;
    }
    return f;
}

// Tuning parameters (references/TUNING.md): work-group size, unroll of the
// neighbour loop.
#ifndef WG
#define WG 128
#endif
#ifndef UNROLL
#define UNROLL 8
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void md(__global const float4* restrict pos,
        __global const int* restrict neigh,
        __global float4* restrict force,
        const float cutsq, const float lj1, const float lj2,
        const int N_arg, const int M_arg)
{
    const int N = STATIC_N;
    const int M = STATIC_M;
    const int i = get_global_id(0);
    if (i >= N) return;
    const float3 me = pos[i].xyz;
    float3 f = (float3)(0.0f);

    int j = 0;
    for (; j + UNROLL <= M; j += UNROLL) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
            f = lj(f, me, pos[neigh[(j + u) * N + i]], cutsq, lj1, lj2);
    }
    for (; j < M; ++j)
        f = lj(f, me, pos[neigh[j * N + i]], cutsq, lj1, lj2);

    force[i] = (float4)(f, 0.0f);
}
