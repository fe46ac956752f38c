// Nearest neighbour, distance pass: reference kernel in the style of the
// Rodinia benchmark suite's NN kernel (CGO 2017, Table 1: coalescing; 1D
// iteration space).
//
// Techniques: one record per work-item (work-group 256); each record is one
// float2 (latitude, longitude) load, coalesced; the distance is written
// coalesced. The kernel is bandwidth bound: 8 bytes in, 4 bytes out.

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
