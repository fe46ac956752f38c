// Partial dot product, the first stage of a two-stage tree reduction.
// Each work-group of 64 work-items reduces 128 consecutive products
// x[i] * y[i] into one partial sum, as Listing 1 of the CGO 2017 paper does.
// The second stage (dot_final) sums the partial results in one work-group;
// the harness validates the first stage's buffer, which is what the Lift
// program computes.

#define WG 64

__attribute__((reqd_work_group_size(WG, 1, 1)))
kernel void dot_partial(const global float* restrict x,
                        const global float* restrict y,
                        global float* restrict partial,
                        int n) {
    local float scratch[WG];
    const int lid = get_local_id(0);
    const int base = get_group_id(0) * (2 * WG);
    // Each work-item multiplies two elements before the tree starts.
    float acc = 0.0f;
    if (base + lid < n) acc += x[base + lid] * y[base + lid];
    if (base + WG + lid < n) acc += x[base + WG + lid] * y[base + WG + lid];
    scratch[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int stride = WG / 2; stride > 0; stride >>= 1) {
        if (lid < stride) scratch[lid] += scratch[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) partial[get_group_id(0)] = scratch[0];
}

// Second stage: one work-group folds `count` partial sums into result[0].
__attribute__((reqd_work_group_size(WG, 1, 1)))
kernel void dot_final(const global float* restrict partial,
                      global float* restrict result,
                      int count) {
    local float scratch[WG];
    const int lid = get_local_id(0);
    float acc = 0.0f;
    for (int i = lid; i < count; i += WG) acc += partial[i];
    scratch[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int stride = WG / 2; stride > 0; stride >>= 1) {
        if (lid < stride) scratch[lid] += scratch[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) result[0] = scratch[0];
}
