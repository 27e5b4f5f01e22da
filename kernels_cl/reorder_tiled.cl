// Tiled reorder: the reorder as a strided permutation. Work-item w decodes its grid digits once into a
// destination and a source offset, then loops over a tile: ia along A (a run of digits dense in the
// destination), ib along B (dense in the source). Masks (padding, blocked tails) are generated only for
// the axes that need them; padding gets zero, so the destination needs no pre-zeroing.
// Generated: KERNEL_NAME, SRC_T, DST_T, IDX_T, GRID_COUNT, GRID_DECODE(w), TILE_LOOPS, CONVERT(v), CONVERT_V(v),
// CR_VALUE_TABLES (per-index parameters, indexed by padded coordinate: TILE_LOOPS reads them by name).
CR_VALUE_TABLES

CR_KERNEL void KERNEL_NAME(CR_REORDER_ARGS) {
  CR_REORDER_BEGIN(w, GRID_COUNT)
  GRID_DECODE(w)
  TILE_LOOPS
}
