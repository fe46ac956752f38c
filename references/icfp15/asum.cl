// ICFP 2015 asum reference: out[0] = sum of |x[i]|, in two kernels (the
// timed kernel time is the sum of both).
//
// Written in the style of clBLAS's reduction kernels (from the technique,
// not from its code):
//  1. asum_partial: a fixed grid of work-groups of 256 work-items; each
//     work-item strides over x by the grid size in float4 steps (coalesced
//     on GPUs), accumulating |x| privately; the work-group then reduces its
//     256 sums in local memory (a halving tree) and writes one partial sum.
//  2. asum_final: one work-group of 256 reduces the partial sums the same way.
// Any N works: the last N % 4 elements are added by the first work-items.
//
// Launch: asum_partial global (G * WG), local (WG) with G partial sums;
//         asum_final global (WG), local (WG).

// Tuning parameters (references/TUNING.md): the work-group size WG (a power
// of two, for the halving tree) and, in the config's launch expression, the
// number of partial sums G (the grid's work-groups), which sets how many
// float4s each work-item's grid-stride loop handles.
#ifndef WG
#define WG 256
#endif

static float wg_sum(local float* scratch, float v) {
    const int l = get_local_id(0);
    scratch[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s /= 2) {
        if (l < s) scratch[l] += scratch[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return scratch[0];
}

kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void asum_partial(const global float* restrict x, global float* restrict partial, int n) {
    local float scratch[WG];
    const int gid = get_global_id(0);
    const int stride = get_global_size(0);
    const int n4 = n / 4;
    float4 acc = (float4)(0.0f);
    for (int i = gid; i < n4; i += stride) {
        acc += fabs(vload4(i, x));
    }
    float s = (acc.x + acc.y) + (acc.z + acc.w);
    const int tail = n4 * 4 + gid;
    if (tail < n) s += fabs(x[tail]);
    const float total = wg_sum(scratch, s);
    if (get_local_id(0) == 0) partial[get_group_id(0)] = total;
}

kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void asum_final(const global float* restrict partial, global float* restrict out, int g) {
    local float scratch[WG];
    float s = 0.0f;
    for (int i = get_local_id(0); i < g; i += WG) s += partial[i];
    const float total = wg_sum(scratch, s);
    if (get_local_id(0) == 0) out[0] = total;
}
