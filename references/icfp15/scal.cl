// ICFP 2015 scal reference: out = alpha * x (BLAS sscal, out of place so
// that repeated timed runs see the same input).
//
// Written in the style of clBLAS's generated level-1 kernels (from the
// technique, not from its code): each work-item handles one float4 of x
// with a vector load and store; the last N % 4 elements are done one at a
// time by the first work-items. Any N works (the NDRange is rounded up and
// guarded).
//
// Launch: global (ceil(ceil(N / 4) / WG) * WG), local (WG).

// Tuning parameter (references/TUNING.md): the work-group size. One float4
// per work-item, as clBLAS: the kernel has no loop to give more work to.
#ifndef WG
#define WG 256
#endif

kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void scal(const global float* restrict x, global float* restrict out, float alpha, int n) {
    const int i = get_global_id(0);
    const int n4 = n / 4;
    if (i < n4) {
        vstore4(alpha * vload4(i, x), i, out);
    }
    const int tail = n4 * 4 + i;
    if (tail < n) {
        out[tail] = alpha * x[tail];
    }
}
