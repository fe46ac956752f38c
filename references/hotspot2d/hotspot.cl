// Hand-written reference for hotspot2d, following Rodinia 3.1 Hotspot
// (OpenCL): BX x BY work-groups (Rodinia's 16 x 16 by default) load their
// temperature tile plus a one-element halo into local memory (Rodinia's
// pyramid with height 1, as one iteration is run), then each work-item
// updates one cell from the tile and its power value. Borders are clamped
// (Rodinia uses the cell itself for a missing neighbour). Fixed
// coefficients as in the Lift program: step/Cap = 0.5, 1/Rx = 0.1,
// 1/Ry = 0.12, 1/Rz = 0.0125, ambient 80.

// Tuning parameters (references/TUNING.md): the work-group shape, which is
// the tile's.
#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 16
#endif

__attribute__((reqd_work_group_size(BX, BY, 1)))
kernel void hotspot(const global float* restrict temp, const global float* restrict power,
                    global float* restrict out, int W, int H) {
    local float t[BY + 2][BX + 2];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int x = get_global_id(0), y = get_global_id(1);
    const int x0 = get_group_id(0) * BX - 1, y0 = get_group_id(1) * BY - 1;
    for (int j = ly; j < BY + 2; j += BY)
        for (int i = lx; i < BX + 2; i += BX)
            t[j][i] = temp[clamp(y0 + j, 0, H - 1) * W + clamp(x0 + i, 0, W - 1)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (x >= W || y >= H) return;
    const float c = t[ly + 1][lx + 1];
    const float n = t[ly][lx + 1], s = t[ly + 2][lx + 1], w = t[ly + 1][lx], e = t[ly + 1][lx + 2];
    out[y * W + x] = c + 0.5f * (power[y * W + x] + (s + n - 2.0f * c) * 0.12f + (e + w - 2.0f * c) * 0.1f
                                 + (80.0f - c) * 0.0125f);
}
