// A batch: many reorders in one launch. The items' kernels come first, as functions (reorder_batch_begin.cl
// turns CR_KERNEL, CR_ITEM_ARG and CR_WORK_ITEM into a function's, reorder_batch_end.cl turns them back);
// this kernel then hands each work-item to its item. Items own consecutive ranges of the global size, each a
// multiple of the local size, so a work-group never spans two items and each group runs one item's code.
// Generated: KERNEL_NAME, BATCH_ARGS (each distinct buffer the items read or write, once, each followed by a
// comma: items packed into shared buffers cost no more arguments), BATCH_DISPATCH(g) (a binary search over
// the ranges that calls the item's function with its buffers, its element offsets from `bases` and g less
// its range's start).
__kernel void KERNEL_NAME(BATCH_ARGS __global const ulong* restrict bases) {
  const ulong g = get_global_id(0);
  BATCH_DISPATCH(g)
}
