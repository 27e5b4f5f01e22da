// Local reorder: work-group w decodes its grid digits once into a destination and a source offset, then its
// work-items read the tile in source order into local memory (converted as read) and, after a barrier, write
// it in destination order. Axes with tails or padding stay in the grid: g_ok (padding) stages zero for the
// whole tile, and a group outside the destination (g_wr false) skips both passes but still meets the barrier
// (PoCL's work-group loops corrupt memory when a group returns before it, even all of it together).
// Generated: KERNEL_NAME, SRC_T, DST_T, IDX_T, LOCAL_SIZE, TILE_SLOTS, GRID_COUNT, GRID_DECODE(w), TILE_LOAD,
// TILE_STORE, TILE_SUMS (compensation sums read from the tile; empty without), CONVERT(v), CR_VALUE_TABLES
// (per-index parameters, indexed by padded coordinate).
CR_VALUE_TABLES

// A group's start, for both passes: its index (inside a batch its item's, counted from the item's range; the
// range is exactly GRID_COUNT groups of LOCAL_SIZE, so every group has a tile) decoded into the offsets.
// src_wide / dst_wide: whole words of 8- and 16-bit elements where the bases keep them aligned.
#define CR_LOCAL_BEGIN                                                                                     \
  const IDX_T w = (IDX_T)((CR_WORK_ITEM) / LOCAL_SIZE);                                                    \
  const bool src_wide = (src_base * sizeof(SRC_T)) % 4 == 0;                                               \
  const bool dst_wide = (dst_base * sizeof(DST_T)) % 4 == 0;                                               \
  src += src_base;                                                                                         \
  dst += dst_base;                                                                                         \
  GRID_DECODE(w)
#ifdef CR_BATCH_ITEM
// Inside a batch the two passes are functions and the batch kernel meets the barrier between them, at its top
// level: with the barrier inside a function called from the batch's branches, PoCL 3.1's work-group loops
// (its default `loopvec`; `cbs` was right) left some groups' blocks unwritten (a 144x24 weights item whose
// 16-element tiles leave most of a 256-wide group idle, in one run of eight, only with more than one thread;
// Oclgrind found no race). The tile is the batch kernel's local argument.
void CR_CAT(KERNEL_NAME, _load)(CR_REORDER_ARGS, __local DST_T* cr_tile) {
  CR_LOCAL_BEGIN
  TILE_LOAD
}
void CR_CAT(KERNEL_NAME, _store)(CR_REORDER_ARGS, __local DST_T* cr_tile) {
  CR_LOCAL_BEGIN
  TILE_STORE
  TILE_SUMS
}
#else
// No reqd_work_group_size: PoCL 3.1 then keys the work-group function it compiles for a program's binary
// (CL_PROGRAM_BINARIES, which the kernel cache stores) like a launch's, and a later launch's release found
// that entry and aborted the process (pocl_release_dlhandle_cache: `found->ref_count > 0`). The host always
// launches groups of LOCAL_SIZE.
__kernel void KERNEL_NAME(CR_REORDER_ARGS) {
  __local DST_T cr_tile[TILE_SLOTS];
  CR_LOCAL_BEGIN
  TILE_LOAD
  barrier(CLK_LOCAL_MEM_FENCE);
  TILE_STORE
  TILE_SUMS
}
#endif
#undef CR_LOCAL_BEGIN
