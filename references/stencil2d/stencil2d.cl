// Hand-written reference for stencil2d, following SHOC 1.1.5 Stencil2D
// (Danalis et al. 2010): a 9-point weighted stencil over the interior of a
// grid whose outer ring is a halo. As in SHOC, each work-group stages a tile
// of the input plus its one-element halo in local memory, and each
// work-item computes a column strip of ROWS_PER_ITEM outputs of the tile,
// BY rows apart. Work-group (TW, BY); tile TW x TH outputs, TH = BY *
// ROWS_PER_ITEM; by default (32, 8) and 32 x 32 (4 rows per work-item).
// Needs (W - 2) % TW == 0 and (H - 2) % TH == 0.

// Tuning parameters (references/TUNING.md): the tile's width (= work-group
// width), the work-group's height and the outputs per work-item.
#ifndef TW
#define TW 32
#endif
#ifndef BY
#define BY 8
#endif
#ifndef ROWS_PER_ITEM
#define ROWS_PER_ITEM 4
#endif
#define TH (BY * ROWS_PER_ITEM)

__attribute__((reqd_work_group_size(TW, BY, 1)))
kernel void stencil2d(const global float* restrict a, global float* restrict out, int W, int H) {
    local float tile[TH + 2][TW + 2];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int x0 = get_group_id(0) * TW, y0 = get_group_id(1) * TH;
    // Cooperative copy of the (TH + 2) x (TW + 2) input tile.
    for (int y = ly; y < TH + 2; y += BY)
        for (int x = lx; x < TW + 2; x += TW)
            tile[y][x] = a[(y0 + y) * W + x0 + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r = 0; r < ROWS_PER_ITEM; r++) {
        const int y = ly + BY * r + 1, x = lx + 1;
        const float v = 0.25f * tile[y][x]
            + 0.15f * (tile[y - 1][x] + tile[y + 1][x] + tile[y][x - 1] + tile[y][x + 1])
            + 0.05f * (tile[y - 1][x - 1] + tile[y - 1][x + 1] + tile[y + 1][x - 1] + tile[y + 1][x + 1]);
        out[(y0 + y - 1) * (W - 2) + x0 + x - 1] = v;
    }
}
