// Hand-written references for srad1 and srad2, following the two SRAD
// kernels of Rodinia 3.1 (Che et al. 2009, speckle-reducing anisotropic
// diffusion): one pixel per work-item, no local memory (as Rodinia's
// OpenCL SRAD), neighbours clamped at the borders (Rodinia's iN/iS/jW/jE
// index arrays). Rodinia's first kernel also stores the four derivatives
// for the second; here the second recomputes them from J, as the Lift
// programs do (benchmarks/cgo18/srad2.lift). Any 2D work-group: its shape
// (BX x BY, Rodinia's 16 x 16 by default) is a tuning parameter of the
// configs' launch (references/TUNING.md).

#define AT(g, y, x) g[clamp(y, 0, H - 1) * W + clamp(x, 0, W - 1)]

// The launched work-group size: the config's `params` set it with -D (the
// default here is theirs), and the attribute below declares it to the compiler.
#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 16
#endif

__attribute__((reqd_work_group_size(BX, BY, 1)))
kernel void srad1(const global float* restrict J, float q0sqr, global float* restrict c, int W, int H) {
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= W || y >= H) return;
    const float jc = J[y * W + x];
    const float dN = AT(J, y - 1, x) - jc, dS = AT(J, y + 1, x) - jc;
    const float dW = AT(J, y, x - 1) - jc, dE = AT(J, y, x + 1) - jc;
    const float g2 = (dN * dN + dS * dS + dW * dW + dE * dE) / (jc * jc);
    const float l = (dN + dS + dW + dE) / jc;
    const float num = 0.5f * g2 - (1.0f / 16.0f) * (l * l);
    float den = 1.0f + 0.25f * l;
    const float qsqr = num / (den * den);
    den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
    const float coeff = 1.0f / (1.0f + den);
    c[y * W + x] = coeff < 0.0f ? 0.0f : (coeff > 1.0f ? 1.0f : coeff);
}

__attribute__((reqd_work_group_size(BX, BY, 1)))
kernel void srad2(const global float* restrict J, const global float* restrict c, global float* restrict out,
                  int W, int H) {
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= W || y >= H) return;
    const float jc = J[y * W + x];
    const float cc = c[y * W + x], cs = AT(c, y + 1, x), ce = AT(c, y, x + 1);
    const float d = cc * (AT(J, y - 1, x) - jc) + cs * (AT(J, y + 1, x) - jc)
                  + cc * (AT(J, y, x - 1) - jc) + ce * (AT(J, y, x + 1) - jc);
    out[y * W + x] = jc + 0.25f * 0.5f * d;
}
