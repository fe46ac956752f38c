// Hand-written reference for hotspot3d, following Rodinia 3.1 Hotspot3D
// (OpenCL): a 2D grid of work-items, one per (x, y) column, marches along z
// keeping the planes below, at and above in registers, so each input is read
// once from global memory per column. Borders are clamped (Rodinia uses the
// cell itself for a missing neighbour). Coefficients as in the Lift program.
// Any 2D work-group: its shape (BX x BY, 32 x 4 by default) is a tuning
// parameter of the config's launch (references/TUNING.md).

// The launched work-group size: the config's `params` set it with -D (the
// default here is theirs), and the attribute below declares it to the compiler.
#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 4
#endif

__attribute__((reqd_work_group_size(BX, BY, 1)))
kernel void hotspot3d(const global float* restrict temp, const global float* restrict power,
                      global float* restrict out, int W, int H, int D) {
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= W || y >= H) return;
    const int plane = W * H;
    const int w = x == 0 ? 0 : -1, e = x == W - 1 ? 0 : 1;
    const int n = y == 0 ? 0 : -W, s = y == H - 1 ? 0 : W;
    int c = y * W + x;
    float below = temp[c], centre = temp[c];
    float above = D > 1 ? temp[c + plane] : centre;
    for (int z = 0; z < D; z++) {
        out[c] = 0.41f * centre + 0.1f * temp[c + w] + 0.1f * temp[c + e] + 0.12f * temp[c + s]
               + 0.12f * temp[c + n] + 0.05f * below + 0.05f * above + 0.5f * power[c] + 0.05f * 80.0f;
        below = centre;
        centre = above;
        c += plane;
        above = z + 2 < D ? temp[c + plane] : centre;
    }
}
