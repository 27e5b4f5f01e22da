// Tiled reorder: the reorder as a strided permutation. Work-item w decodes its grid digits once into a
// destination and a source offset, then loops over a tile: ia along A (a run of digits dense in the
// destination), ib along B (dense in the source). Masks (padding, blocked tails) are generated only for
// the axes that need them; padding gets zero, so the destination needs no pre-zeroing.
// Generated: KERNEL_NAME, SRC_T, DST_T, IDX_T, GRID_COUNT, GRID_DECODE(w), TILE_LOOPS, CR_GRID_SPLIT (1: the tile
// is written twice, for g_ok known true and known false), CONVERT(v), CONVERT_V(v),
// CR_VALUE_TABLES (per-index parameters, indexed by padded coordinate: TILE_LOOPS reads them by name).
CR_VALUE_TABLES

CR_KERNEL void KERNEL_NAME(CR_REORDER_ARGS) {
  CR_REORDER_BEGIN(w, GRID_COUNT)
  GRID_DECODE(w)
#if CR_GRID_SPLIT
  // g_ok guards every row's load, and LLVM does not take a test out of a loop this big: the tile where the
  // grid's coordinates are inside the tensor runs without it, and the one in its padding folds to its stores
  // of zero.
  if (g_ok) {
    const bool g_ok = true;
    TILE_LOOPS
  } else {
    const bool g_ok = false;
    TILE_LOOPS
  }
#else
  TILE_LOOPS
#endif
}
