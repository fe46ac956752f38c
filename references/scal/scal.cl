// Vector scaling, out = alpha * x (BLAS sscal, out of place): one element
// per work-item, guarded so that any N works with a rounded-up NDRange.

kernel void scal(const global float* restrict x,
                 global float* restrict out,
                 float alpha, int n) {
    const int i = get_global_id(0);
    if (i < n) out[i] = alpha * x[i];
}
