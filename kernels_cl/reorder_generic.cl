// Generic reorder: one work-item per destination element, destination-driven. Each work-item decodes its
// destination digit tuple into a logical coordinate; padding (blocked tails, alignment, explicit padding)
// gets zero (or, CR_ZERO_PADDING 0, is not written), everything else the converted source element. Every
// destination element is written at most once, so the destination needs no pre-zeroing. Accepts every pair
// of layouts.
// Generated: KERNEL_NAME, SRC_T, DST_T, IDX_T, DST_COUNT, DST_DECODE(p), SRC_OFFSET, CONVERT(v) (which may read
// the tables of CR_VALUE_TABLES at the coordinate d_c<axis>), CR_ZERO_PADDING, CR_DIVIDES, CR_COMPENSATE(v)
// (adds a value to its compensation sum at d_c<axis>; empty without).
CR_VALUE_TABLES

CR_KERNEL void KERNEL_NAME(CR_REORDER_ARGS) {
  CR_REORDER_BEGIN(p, DST_COUNT)
  DST_DECODE(p)
  if (d_valid || CR_ZERO_PADDING) {
    const DST_T v = d_valid ? CONVERT(src[SRC_OFFSET]) : (DST_T)0;
    dst[d_off] = v;
    if (d_valid) { CR_COMPENSATE(v) }
  }
}
