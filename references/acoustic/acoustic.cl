// Hand-written reference for acoustic, the room-acoustics FDTD step of
// seed 003 Section 3.5 (after Webb 2014): a 2D grid of work-items, one per
// (x, y) column, marches along z; outside the room the pressure is zero;
// nbrs holds the number of neighbours inside the room, and points next to
// a wall (nbrs < 6) apply the loss factors 0.99 and 1.01. Any 2D
// work-group: its shape (BX x BY, 32 x 4 by default) is a tuning parameter
// of the config's launch (references/TUNING.md).

// The launched work-group size: the config's `params` set it with -D (the
// default here is theirs), and the attribute below declares it to the compiler.
#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 4
#endif

__attribute__((reqd_work_group_size(BX, BY, 1)))
kernel void acoustic(const global float* restrict cur, const global float* restrict prev,
                     const global int* restrict nbrs, global float* restrict out, int W, int H, int D) {
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= W || y >= H) return;
    const int plane = W * H;
    const float l2 = 1.0f / 3.0f;
    for (int z = 0; z < D; z++) {
        const int i = z * plane + y * W + x;
        float sum = 0.0f;
        if (x > 0) sum += cur[i - 1];
        if (x < W - 1) sum += cur[i + 1];
        if (y > 0) sum += cur[i - W];
        if (y < H - 1) sum += cur[i + W];
        if (z > 0) sum += cur[i - plane];
        if (z < D - 1) sum += cur[i + plane];
        const int nn = nbrs[i];
        const float cf1 = nn < 6 ? 0.99f : 1.0f, cf2 = nn < 6 ? 1.01f : 1.0f;
        out[i] = cf1 * ((2.0f - l2 * (float)nn) * cur[i] + l2 * sum - cf2 * prev[i]);
    }
}
