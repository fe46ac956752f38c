// Matrix transposition through local memory. `in` has M rows of N floats,
// `out` N rows of M. A TILE x TILE work-group reads a tile with coalesced row
// accesses, and writes it back transposed, again along rows. The tile has
// one padding column so that reading it column-wise hits distinct banks.

// TILE x TILE work-groups; a tuning parameter (references/TUNING.md).
#ifndef TILE
#define TILE 16
#endif

__attribute__((reqd_work_group_size(TILE, TILE, 1)))
kernel void transpose_tiled(const global float* restrict in,
                            global float* restrict out,
                            int M, int N) {
    local float tile[TILE][TILE + 1];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int col = get_group_id(0) * TILE + lx;   // column of `in`
    const int row = get_group_id(1) * TILE + ly;   // row of `in`
    if (row < M && col < N) tile[ly][lx] = in[row * N + col];
    barrier(CLK_LOCAL_MEM_FENCE);
    // Swap the roles of the group indices for the write.
    const int out_row = get_group_id(0) * TILE + ly;  // a column of `in`
    const int out_col = get_group_id(1) * TILE + lx;  // a row of `in`
    if (out_row < N && out_col < M) out[out_row * M + out_col] = tile[lx][ly];
}
