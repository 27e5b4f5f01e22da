// Tiled reorder: the reorder as a strided permutation. Work-item w decodes its grid digits once into a
// destination and a source offset, then loops over a tile: ia along the destination-contiguous digit,
// ib along the source-contiguous digit. Masks (padding, blocked tails) are generated only for the axes
// that need them; padding gets zero, so the destination needs no pre-zeroing.
// Generated: KERNEL_NAME, SRC_T, DST_T, IDX_T, GRID_COUNT, GRID_DECODE(w), TILE_LOOPS, CONVERT(v).
__kernel void KERNEL_NAME(__global const SRC_T* restrict src, __global DST_T* restrict dst, ulong src_base,
                          ulong dst_base) {
  const IDX_T w = (IDX_T)get_global_id(0);
  if (w >= GRID_COUNT) return;
  src += src_base;
  dst += dst_base;
  GRID_DECODE(w)
  TILE_LOOPS
}
