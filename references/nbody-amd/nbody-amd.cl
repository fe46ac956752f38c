// N-Body, one integration step: reference kernel in the style of the AMD APP
// SDK's OpenCL N-Body sample (CGO 2017, Table 1: private memory,
// vectorisation, coalescing, no local memory; 1D iteration space).
//
// Techniques:
//  * one body per work-item, no local memory: every work-item of a
//    work-group reads the same body position at the same time, a broadcast
//    the caches serve;
//  * float4 vector arithmetic throughout (the difference vector, the
//    accumulation), float4 loads and stores;
//  * the loop over all bodies is unrolled by UNROLL (default 8), with a remainder loop so
//    any N works;
//  * rsqrt for the inverse distance.
// The w component of the accumulator collects junk (mass differences times
// s); the update only uses xyz, as the vector form of the SDK does.
//
// Output: out[2*i] = new position (w: mass, unchanged), out[2*i+1] = new
// velocity (w unchanged); the layout of an array of (float4, float4) tuples.

// Tuning parameter (references/TUNING.md); the work-group size is WG in
// the config.
#ifndef UNROLL
#define UNROLL 8
#endif

inline float4 interact(float4 acc, const float4 me, const float4 other, const float espSqr)
{
    const float4 r = other - me;
    const float distSqr = r.x * r.x + r.y * r.y + r.z * r.z + espSqr;
    const float invDist = rsqrt(distSqr);
    const float s = other.w * (invDist * invDist * invDist);
    return acc + s * r;
}

// The launched work-group size: the config's `params` set it with -D (the
// default here is theirs), and the attribute below declares it to the compiler.
#ifndef WG
#define WG 256
#endif

__attribute__((reqd_work_group_size(WG, 1, 1)))
__kernel void nbody_amd(__global const float4* restrict pos,
                        __global const float4* restrict vel,
                        __global float4* restrict out,
                        const float espSqr, const float deltaT, const int N)
{
    const int gid = get_global_id(0);
    if (gid >= N) return;
    const float4 me = pos[gid];
    float4 acc = (float4)(0.0f);

    int j = 0;
    for (; j + UNROLL <= N; j += UNROLL) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
            acc = interact(acc, me, pos[j + u], espSqr);
    }
    for (; j < N; ++j)
        acc = interact(acc, me, pos[j], espSqr);

    const float4 v = vel[gid];
    float4 newPos = me + v * deltaT + 0.5f * acc * deltaT * deltaT;
    float4 newVel = v + acc * deltaT;
    newPos.w = me.w;
    newVel.w = v.w;
    out[2 * gid] = newPos;
    out[2 * gid + 1] = newVel;
}
