// Vector scaling, out = alpha * x (BLAS sscal, out of place), written as a
// bandwidth kernel: float4 loads and stores, VEC float4s per work-item per
// step of a grid-stride loop (the NDRange is sized to fill the device, not
// to N), and a scalar tail for N not a multiple of 4. VEC and the
// work-group size are tuning parameters (references/TUNING.md).

#ifndef VEC
#define VEC 2
#endif
#define PRAGMA_STR(x) _Pragma(#x)
#define PRAGMA(x) PRAGMA_STR(x)

// The launched work-group size: the config's `params` set it with -D (the
// default here is theirs), and the attribute below declares it to the compiler.
#ifndef WG
#define WG 256
#endif

__attribute__((reqd_work_group_size(WG, 1, 1)))
kernel void scal(const global float* restrict x,
                 global float* restrict out,
                 float alpha, int n) {
    const int n4 = n / 4;
    const int stride = get_global_size(0);
    const global float4* x4 = (const global float4*)x;
    global float4* out4 = (global float4*)out;
    // Each step, work-item i handles float4s i, i + stride, ...: the loads
    // of a work-group stay contiguous.
    for (int base = get_global_id(0); base < n4; base += VEC * stride) {
        PRAGMA(unroll VEC)
        for (int v = 0; v < VEC; ++v) {
            const int j = base + v * stride;
            if (j < n4) out4[j] = alpha * x4[j];
        }
    }
    const int tail = 4 * n4 + get_global_id(0);
    if (tail < n) out[tail] = alpha * x[tail];
}
