// Staged reorder: the reorder as a strided permutation, with a small tile unrolled by the generator.
// Work-item w decodes its grid digits once into a destination and a source offset, then walks `it` over a
// few tiles; each tile is vector loads of its source-dense runs (converted as loaded) followed by vector
// stores of its destination-dense runs, whose components are picked from the loaded registers by
// constants. Axes with tails or padding stay in the grid: g_ok (padding) loads zero for the whole tile.
// Generated: KERNEL_NAME, SRC_T, DST_T, IDX_T, GRID_COUNT, GRID_DECODE(w), TILE_BODY, CONVERT(v), CONVERT_V<N>(v),
// CR_VALUE_TABLES (per-index parameters, indexed by padded coordinate: TILE_BODY reads them by name).
CR_VALUE_TABLES

CR_KERNEL void KERNEL_NAME(CR_REORDER_ARGS) {
  CR_REORDER_BEGIN(w, GRID_COUNT)
  GRID_DECODE(w)
  TILE_BODY
}
