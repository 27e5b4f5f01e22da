// Generic reorder: destination-driven, each destination element written by one work-item, which decodes
// its destination digit tuple into a logical coordinate; padding (blocked tails, alignment, explicit padding)
// gets zero (or, CR_ZERO_PADDING 0, is not written), everything else the converted source element. Every
// destination element is written at most once, so the destination needs no pre-zeroing. Accepts every pair
// of layouts. A work-item takes one tuple, or with compensation sums a piece of one digit that does not move
// the sums' index (DST_FIRST(w) .. DST_END(w) - 1), so that it adds them with one atomic; into a u4 or i4
// destination, the two tuples of one byte.
// Generated: KERNEL_NAME, SRC_T, DST_T, IDX_T, DST_ITEMS, DST_FIRST(w), DST_END(w), DST_TUPLE(w, q) (tuple q of
// work-item w), DST_DECODE(p), SRC_OFFSET, SRC_AT(o), CONVERT(v) (which may read the tables of CR_VALUE_TABLES
// at the coordinate d_c<axis>), CR_ZERO_PADDING, CR_DIVIDES, CR_COMP_BEGIN, CR_COMP_ADD(v), CR_COMP_END
// (compensation sums at d_c<axis>; empty without), CR_STORE_BEGIN, CR_STORE(o, v), CR_STORE_END.
CR_VALUE_TABLES

CR_KERNEL void KERNEL_NAME(CR_REORDER_ARGS) {
  CR_REORDER_BEGIN(w, DST_ITEMS)
  CR_COMP_BEGIN
  CR_STORE_BEGIN
  for (IDX_T q = DST_FIRST(w); q < DST_END(w); ++q) {
    const IDX_T p = DST_TUPLE(w, q);
    DST_DECODE(p)
    if (d_valid || CR_ZERO_PADDING) {
      const DST_T v = d_valid ? CONVERT(SRC_AT(SRC_OFFSET)) : (DST_T)0;
      CR_STORE(d_off, v)
      if (d_valid) { CR_COMP_ADD(v) }
    }
  }
  CR_STORE_END
  CR_COMP_END
}
