// Lanes reorder: 8- and 16-bit elements packed into 4-byte destination words whose elements are strided in
// the source. Work-item w decodes its grid digits once, then walks `it` over a few tiles; in each, every
// row's words are gathered in destination order by one shuffle of at most two vector loads, and the rows'
// words, as uint lanes, are transposed by two-source shuffles into 16-byte stores. Axes with tails or
// padding stay in the grid: g_ok (padding) loads zero for the whole tile.
// Generated: KERNEL_NAME, SRC_T, DST_T, IDX_T, GRID_COUNT, GRID_DECODE(w), TILE_BODY, CONVERT(v), CONVERT_V<N>(v),
// CR_ALIGNMENT_SPLIT (1: TILE_BODY tests src_wide or dst_wide), CR_VALUE_TABLES (per-index parameters,
// indexed by padded coordinate: TILE_BODY reads them by name).
CR_VALUE_TABLES

CR_KERNEL void KERNEL_NAME(CR_REORDER_ARGS) {
  CR_REORDER_BEGIN(w, GRID_COUNT)
  GRID_DECODE(w)
#if CR_ALIGNMENT_SPLIT
  // The tile is too big for LLVM to unswitch its loop on the alignment tests, and with them left inside,
  // PoCL's kernel took 2x as long: so the body is written twice, once with both known true.
  if (src_wide && dst_wide) {
    const bool src_wide = true, dst_wide = true;
    TILE_BODY
  } else {
    TILE_BODY
  }
#else
  TILE_BODY
#endif
}
