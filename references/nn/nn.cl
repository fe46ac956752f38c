// Nearest neighbour, distance pass: reference kernel in the style of the
// Rodinia benchmark suite's NN kernel (CGO 2017, Table 1: coalescing; 1D
// iteration space).
//
// Techniques: one record per work-item (work-group 256); each record is one
// float2 (latitude, longitude) load, coalesced; the distance is written
// coalesced. The kernel is bandwidth bound: 8 bytes in, 4 bytes out.

// The launched work-group size: the config's `params` set it with -D (the
// default here is theirs), and the attribute below declares it to the compiler.
#ifndef WG
#define WG 256
#endif

__attribute__((reqd_work_group_size(WG, 1, 1)))
__kernel void nn(__global const float2* restrict locations,
                 __global float* restrict distances,
                 const float lat, const float lng, const int N)
{
    const int i = get_global_id(0);
    if (i >= N) return;
    const float2 l = locations[i];
    const float dx = lat - l.x;
    const float dy = lng - l.y;
    distances[i] = sqrt(dx * dx + dy * dy);
}
