// Generic reorder: one work-item per destination element, destination-driven. Each work-item decodes its
// destination digit tuple into a logical coordinate; padding (blocked tails, alignment, explicit padding)
// gets zero, everything else the converted source element. Every destination element is written exactly
// once, so the destination needs no pre-zeroing. Accepts every pair of layouts.
// Generated: KERNEL_NAME, SRC_T, DST_T, IDX_T, DST_COUNT, DST_DECODE(p), SRC_OFFSET, CONVERT(v).
CR_KERNEL void KERNEL_NAME(CR_REORDER_ARGS) {
  CR_REORDER_BEGIN(p, DST_COUNT)
  DST_DECODE(p)
  DST_T out = (DST_T)0;
  if (d_valid) out = CONVERT(src[SRC_OFFSET]);
  dst[d_off] = out;
}
