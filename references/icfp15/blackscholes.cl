// ICFP 2015 BlackScholes reference: for every stock price s[i], the call
// and put prices of a European option (strike x, t years, riskless rate r,
// volatility v), written interleaved to out[2i], out[2i + 1].
//
// Follows the structure of the NVIDIA SDK BlackScholes sample (written from
// its technique, not from its code): a fixed grid of work-items strides
// over the options (grid-stride loop), each option priced by a
// straight-line body with the Abramowitz-Stegun polynomial for the
// cumulative normal distribution (26.2.17) and one exp for the discount.
//
// Launch: global (G * WG), local (WG) for any G; any N.
//
// Tuning parameters (references/TUNING.md): the work-group size WG (the
// SDK's 128 by default) and, in the config's launch expression, the number
// of work-groups G (the SDK's fixed 240, or one option per work-item).
#ifndef WG
#define WG 128
#endif

static float cnd(float d) {
    const float k = 1.0f / (1.0f + 0.2316419f * fabs(d));
    const float poly = k * (0.31938153f + k * (-0.356563782f + k * (1.781477937f + k * (-1.821255978f + k * 1.330274429f))));
    float c = 0.39894228040143267794f * exp(-0.5f * d * d) * poly;
    return d > 0.0f ? 1.0f - c : c;
}

kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void blackscholes(const global float* restrict s, global float2* restrict out,
                  float x, float t, float r, float v, int n) {
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
        // Per option, as in the SDK (where t varies); the compiler may hoist.
        const float sqrtT = sqrt(t);
        const float discounted = x * exp(-r * t);
        const float si = s[i];
        const float d1 = (log(si / x) + (r + 0.5f * v * v) * t) / (v * sqrtT);
        const float d2 = d1 - v * sqrtT;
        const float cndD1 = cnd(d1);
        const float cndD2 = cnd(d2);
        out[i] = (float2)(si * cndD1 - discounted * cndD2, discounted * (1.0f - cndD2) - si * (1.0f - cndD1));
    }
}
