// A batch: many reorders in one launch. The items' kernels come first, as functions (reorder_batch_begin.cl
// turns CR_KERNEL, CR_ITEM_ARG and CR_WORK_ITEM into a function's and defines CR_BATCH_ITEM, which splits an
// item that stages through a local tile into its two passes; reorder_batch_end.cl turns them back); this
// kernel then hands each work-item to its item. Items own consecutive ranges of the global size, each a
// multiple of the local size, so a work-group never spans two items and each group runs one item's code.
// Generated: KERNEL_NAME, BATCH_BASES (the items' source and destination offsets in elements, item k's at
// 2k and 2k + 1 of the ulong16 vectors cr_bases0, cr_bases1, .., each followed by a comma: by value, so that a
// launch needs no buffer made for it, and in vectors, so that a launch sets few arguments; first, where their
// alignment costs no padding), BATCH_ARGS (each distinct buffer the items read or write, once: items packed
// into shared buffers cost no more arguments), BATCH_TILE (nothing, or the local-memory argument the host
// sizes to the largest tile of the items that stage through one: KernelData::local_bytes), BATCH_DISPATCH(g)
// (a binary search over the ranges, on the group index w, that calls the item's function, or the first pass
// of one that stages through a tile, with its buffers, its offsets, g less its range's start and the tile),
// BATCH_AFTER_BARRIER(g) (nothing, or the barrier every group meets and the same search calling those items'
// second passes).
__kernel void KERNEL_NAME(BATCH_BASES BATCH_ARGS BATCH_TILE) {
  const ulong g = get_global_id(0), w = get_group_id(0);
  BATCH_DISPATCH(g)
  BATCH_AFTER_BARRIER(g)
}
