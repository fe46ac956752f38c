// K-Means membership step: reference kernel in the style of the Rodinia
// benchmark suite's OpenCL K-Means kernel (CGO 2017, Table 1: coalescing;
// 1D iteration space).
//
// Techniques:
//  * one point per work-item (work-group 256);
//  * the features are transposed, feature-major (feature f of point p at
//    f * P + p), so consecutive work-items read consecutive addresses;
//  * the cluster centres (C * F floats, cluster-major) are read by all
//    work-items at the same address at the same time: they live in
//    __constant memory, whose cache broadcasts them;
//  * the distance is a private accumulator; the feature loop is unrolled by 2
//    (F = 34 in every preset) with a remainder step.
// Ties keep the lower cluster index (strict <), as Rodinia does.

// The launched work-group size: the config's `params` set it with -D (the
// default here is theirs), and the attribute below declares it to the compiler.
#ifndef WG
#define WG 256
#endif

__attribute__((reqd_work_group_size(WG, 1, 1)))
__kernel void kmeans(__global const float* restrict features,
                     __constant float* clusters,
                     __global int* restrict membership,
                     const int P, const int C, const int F)
{
    const int p = get_global_id(0);
    if (p >= P) return;
    int best = 0;
    float bestDist = 3.402823466e38f;
    for (int c = 0; c < C; ++c) {
        __constant const float* centre = clusters + c * F;
        float d0 = 0.0f, d1 = 0.0f;
        int f = 0;
        // Two independent accumulators shorten the dependence chain.
        for (; f + 2 <= F; f += 2) {
            const float a = features[f * P + p] - centre[f];
            const float b = features[(f + 1) * P + p] - centre[f + 1];
            d0 += a * a;
            d1 += b * b;
        }
        if (f < F) {
            const float a = features[f * P + p] - centre[f];
            d0 += a * a;
        }
        const float dist = d0 + d1;
        if (dist < bestDist) {
            bestDist = dist;
            best = c;
        }
    }
    membership[p] = best;
}
