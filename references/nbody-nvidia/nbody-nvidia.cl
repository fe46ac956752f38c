// N-Body, one integration step: reference kernel in the style of the NVIDIA
// GPU Computing SDK's OpenCL N-Body sample (CGO 2017, Table 1: local memory,
// private memory, vectorisation, coalescing; 1D iteration space).
//
// Techniques:
//  * one body per work-item; the work-group stages a tile of TILE bodies
//    (TILE = the work-group size) in local memory, so every body position is
//    read from global memory once per work-group instead of once per
//    work-item;
//  * the acceleration is accumulated in a private float3, the body's own
//    position and velocity are kept in private registers;
//  * float4 loads and stores (xyz + mass in w) for coalesced 16-byte accesses;
//  * the inner loop over the tile is unrolled by 8;
//  * rsqrt for the inverse distance, as the SDK does.
// The last tile is padded with zero-mass bodies at the origin, which add
// nothing to the acceleration (the softening keeps the distance positive), so
// any N works with the global size rounded up to a multiple of TILE.
//
// Output: out[2*i] = new position (w: mass, unchanged), out[2*i+1] = new
// velocity (w unchanged); the layout of an array of (float4, float4) tuples,
// the Lift program's output.

// Sizes: compile-time constants when the build options define STATIC_<size>
// (the configs do exactly when the Lift program is compiled with its sizes
// known), else the kernel arguments.
#ifndef STATIC_N
#define STATIC_N N_arg
#endif

#ifndef TILE
#define TILE 256
#endif
#ifndef UNROLL
#define UNROLL 8
#endif
#define PRAGMA_STR(x) _Pragma(#x)
#define PRAGMA(x) PRAGMA_STR(x)

__kernel __attribute__((reqd_work_group_size(TILE, 1, 1)))
void nbody_nvidia(__global const float4* restrict pos,
                  __global const float4* restrict vel,
                  __global float4* restrict out,
                  const float espSqr, const float deltaT, const int N_arg)
{
    const int N = STATIC_N;
    __local float4 tile[TILE];
    const int gid = get_global_id(0);
    const int lid = get_local_id(0);
    // Work-items past the end still load tiles and meet the barriers.
    const float4 myPos = gid < N ? pos[gid] : (float4)(0.0f);
    float3 acc = (float3)(0.0f);

    for (int base = 0; base < N; base += TILE) {
        const int j = base + lid;
        tile[lid] = j < N ? pos[j] : (float4)(0.0f);
        barrier(CLK_LOCAL_MEM_FENCE);
PRAGMA(unroll UNROLL)
        for (int k = 0; k < TILE; ++k) {
            const float4 other = tile[k];
            const float3 r = other.xyz - myPos.xyz;
            const float distSqr = r.x * r.x + r.y * r.y + r.z * r.z + espSqr;
            const float invDist = rsqrt(distSqr);
            const float s = other.w * (invDist * invDist * invDist);
            acc += r * s;
        }
        // The next iteration overwrites the tile: everybody must be done.
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    if (gid < N) {
        const float4 v = vel[gid];
        const float3 newPos = myPos.xyz + v.xyz * deltaT + 0.5f * acc * deltaT * deltaT;
        const float3 newVel = v.xyz + acc * deltaT;
        out[2 * gid] = (float4)(newPos, myPos.w);
        out[2 * gid + 1] = (float4)(newVel, v.w);
    }
}
