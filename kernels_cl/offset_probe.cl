// Offset probe (tests only): proves the device computes the same offsets as the host index plan.
// Work-item n writes, for logical coordinate n (row-major over the logical dims), the source offset the
// generated SRC_OFFSET gives; and for destination digit tuple n, its offset and the row-major logical index
// of its coordinate, or -1 for padding.
// Generated: KERNEL_NAME, IDX_T, LOGICAL_COUNT, LOGICAL_DECODE(n), SRC_OFFSET, DST_COUNT, DST_DECODE(p),
// DST_LINEAR (row-major logical index of d_c0..).
__kernel void KERNEL_NAME(__global long* src_offsets, __global long* dst_offsets, __global long* dst_coords) {
  const IDX_T n = (IDX_T)get_global_id(0);
  if (n < LOGICAL_COUNT) {
    LOGICAL_DECODE(n)
    src_offsets[n] = (long)(SRC_OFFSET);
  }
  if (n < DST_COUNT) {
    DST_DECODE(n)
    dst_offsets[n] = (long)d_off;
    dst_coords[n] = d_valid ? (long)(DST_LINEAR) : -1L;
  }
}
