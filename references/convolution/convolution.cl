// Separable 2D convolution of a W x H float image with a 17-tap filter
// (radius 8), clamp-to-edge at the borders. Both passes are correlations:
//   tmp[y][x] = sum_k filter[k] * in[y][clamp(x + k - 8, 0, W - 1)]
//   out[y][x] = sum_k filter[k] * tmp[clamp(y + k - 8, 0, H - 1)][x]
//
// Follows the scheme of the NVIDIA OpenCL SDK "convolutionSeparable" sample
// (written from the technique, not from its code):
//  * 2D work-groups (BX x BY, 32 x 8 by default); each work-group computes
//    a tile of the output and each work-item several outputs (STEPS) spaced
//    one work-group width (rows) or height (columns) apart, so the halo is
//    amortised;
//  * the tile plus its halo is staged through local memory once and read 17
//    times from there;
//  * loads and stores are coalesced: consecutive work-items touch
//    consecutive addresses of a row (32 floats = 128 bytes per warp).
// Differences from the SDK sample: the halo is loaded by a flat cooperative
// loop of exactly 2 * RADIUS elements (no whole halo steps), borders are
// clamped instead of zero-padded, and edges are guarded, so W and H are
// arbitrary (no divisibility needed).
//
// Launch: conv_rows    global (ceil(W / ROW_TILE) * BX, ceil(H / BY) * BY), local (BX, BY)
//         conv_columns global (ceil(W / BX) * BX, ceil(H / COL_TILE) * BY), local (BX, BY)
// By default ROW_TILE 256 and COL_TILE 64: (ceil(W / 256) * 32,
// ceil(H / 8) * 8) and (ceil(W / 32) * 32, ceil(H / 64) * 8), local (32, 8).

#define RADIUS 8
#define TAPS (2 * RADIUS + 1)

// Tuning parameters (references/TUNING.md): the work-group shape and the
// outputs per work-item of each pass; the local tiles follow from them.
#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 8
#endif
#ifndef ROW_STEPS
#define ROW_STEPS 8
#endif
#ifndef COL_STEPS
#define COL_STEPS 8
#endif

#define ROW_TILE (ROW_STEPS * BX)        // outputs per work-group row: 256 by default
#define ROW_TILE_H (ROW_TILE + 2 * RADIUS) // with halo: 272
#define COL_TILE (COL_STEPS * BY)        // outputs per work-group column: 64 by default
#define COL_TILE_H (COL_TILE + 2 * RADIUS) // with halo: 80

__kernel __attribute__((reqd_work_group_size(BX, BY, 1)))
void conv_rows(__global const float* restrict in, __constant float* filter,
               __global float* restrict out, int W, int H) {
    __local float tile[BY][ROW_TILE_H];
    const int lx = get_local_id(0);
    const int ly = get_local_id(1);
    const int xBase = get_group_id(0) * ROW_TILE;
    const int y = get_group_id(1) * BY + ly;
    // Rows past the bottom edge still load (a clamped row) so that every
    // work-item reaches the barrier; they just do not store.
    const int yc = min(y, H - 1);
    __global const float* row = in + (size_t)yc * W;

    // Tile element i holds column xBase - RADIUS + i, clamped to the image.
    for (int i = lx; i < ROW_TILE_H; i += BX) {
        const int x = clamp(xBase - RADIUS + i, 0, W - 1);
        tile[ly][i] = row[x];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (y >= H) return;

    __global float* orow = out + (size_t)y * W;
#pragma unroll
    for (int s = 0; s < ROW_STEPS; ++s) {
        const int i = s * BX + lx;  // output column xBase + i
        float sum = 0.0f;
#pragma unroll
        for (int k = 0; k < TAPS; ++k)
            sum += filter[k] * tile[ly][i + k];
        if (xBase + i < W) orow[xBase + i] = sum;
    }
}

__kernel __attribute__((reqd_work_group_size(BX, BY, 1)))
void conv_columns(__global const float* restrict in, __constant float* filter,
                  __global float* restrict out, int W, int H) {
    // Row-major tile: a warp (fixed ly, 32 consecutive lx) reads one tile row,
    // so local reads and writes are free of bank conflicts.
    __local float tile[COL_TILE_H][BX];
    const int lx = get_local_id(0);
    const int ly = get_local_id(1);
    const int x = get_group_id(0) * BX + lx;
    const int xc = min(x, W - 1);
    const int yBase = get_group_id(1) * COL_TILE;

    // Tile row r holds image row yBase - RADIUS + r, clamped to the image.
    for (int r = ly; r < COL_TILE_H; r += BY) {
        const int y = clamp(yBase - RADIUS + r, 0, H - 1);
        tile[r][lx] = in[(size_t)y * W + xc];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (x >= W) return;

#pragma unroll
    for (int s = 0; s < COL_STEPS; ++s) {
        const int r = s * BY + ly;  // output row yBase + r
        float sum = 0.0f;
#pragma unroll
        for (int k = 0; k < TAPS; ++k)
            sum += filter[k] * tile[r + k][lx];
        if (yBase + r < H) out[(size_t)(yBase + r) * W + x] = sum;
    }
}
