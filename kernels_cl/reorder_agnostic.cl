// Shape-agnostic reorder: both index plans arrive at run time as a table of longs (the last argument), so one
// compiled kernel per type pair serves every shape, padding, stride and format pair the generic kernel
// serves: a new shape needs no compile. One work-item per destination digit tuple, as in reorder_generic.cl.
// Table: count of destination tuples, reshape flag, then the destination plan and the source plan, each
//   base, rank, dims[rank], digit count, digits {dim, divisor, extent, stride, needs_mod}, pdim count,
//   pdims {axis count, owned, axes {axis, padded size, lower pad}}
// (kernel_selector/impl_agnostic.cpp writes it from IndexPlan; IndexPlan::decode and offset are the host twins).
// Generated: KERNEL_NAME, SRC_T, DST_T, IDX_T (long), CONVERT(v); nothing about the layouts.
// The helpers once per program, however many type pairs it holds.
#ifndef CR_AG_HELPERS
#define CR_AG_HELPERS
#define CR_AG_AXES 8

// Longs the plan at t takes in the table.
inline long cr_ag_plan_length(__global const long* t) {
  const long rank = t[1], nd = t[2 + rank];
  __global const long* pd = t + 3 + rank + 5 * nd;
  const long np = pd[0];
  long len = 3 + rank + 5 * nd + 1;
  pd += 1;
  for (long d = 0; d < np; ++d) {
    const long na = pd[0];
    len += 2 + 3 * na;
    pd += 2 + 3 * na;
  }
  return len;
}

// Digit tuple p of the plan at t: its element offset, the logical coordinate, whether it is an element (else
// padding) and whether the layout owns the slot (else it belongs to another tensor: never written).
inline long cr_ag_decode(__global const long* t, long p, long* coord, bool* valid, bool* owned) {
  const long rank = t[1];
  __global const long* dims = t + 2;
  const long nd = dims[rank];
  __global const long* g = dims + rank + 1;
  long values[CR_AG_AXES];
  for (long i = 0; i < CR_AG_AXES; ++i) values[i] = 0;
  long off = t[0];
  for (long k = nd - 1; k >= 0; --k) {
    __global const long* d = g + 5 * k;
    const long q = p % d[2];
    p /= d[2];
    values[d[0]] += q * d[1];
    off += q * d[3];
  }
  __global const long* pd = g + 5 * nd;
  const long np = pd[0];
  pd += 1;
  *valid = true;
  *owned = true;
  for (long di = 0; di < np; ++di) {
    const long na = pd[0];
    __global const long* ax = pd + 2;
    long v = values[di], combined = 1;
    for (long a = 0; a < na; ++a) combined *= ax[3 * a + 1];
    bool in = v < combined;
    for (long a = na - 1; a >= 0; --a) {
      const long size = ax[3 * a + 1];
      const long c = v % size - ax[3 * a + 2];
      v /= size;
      coord[ax[3 * a]] = c;
      if (c < 0 || c >= dims[ax[3 * a]]) in = false;
    }
    *valid = *valid && in;
    if (!in && pd[1] == 0) *owned = false;
    pd = ax + 3 * na;
  }
  return off;
}

// Element offset of logical coordinate `coord` (in range) in the plan at t.
inline long cr_ag_offset(__global const long* t, const long* coord) {
  const long rank = t[1];
  const long nd = t[2 + rank];
  __global const long* g = t + 3 + rank;
  __global const long* pd = g + 5 * nd;
  const long np = pd[0];
  pd += 1;
  long values[CR_AG_AXES];
  for (long di = 0; di < np; ++di) {
    const long na = pd[0];
    __global const long* ax = pd + 2;
    long v = 0;
    for (long a = 0; a < na; ++a) v = v * ax[3 * a + 1] + coord[ax[3 * a]] + ax[3 * a + 2];
    values[di] = v;
    pd = ax + 3 * na;
  }
  long off = t[0];
  for (long k = 0; k < nd; ++k) {
    __global const long* d = g + 5 * k;
    long q = values[d[0]] / d[1];
    if (d[4]) q %= d[2];
    off += q * d[3];
  }
  return off;
}

#endif

__kernel void KERNEL_NAME(CR_REORDER_ARGS, __global const long* restrict plans) {
  CR_REORDER_BEGIN(p, plans[0])
  __global const long* dplan = plans + 2;
  __global const long* splan = dplan + cr_ag_plan_length(dplan);
  long dc[CR_AG_AXES], sc[CR_AG_AXES];
  bool valid, owned;
  const long d_off = cr_ag_decode(dplan, p, dc, &valid, &owned);
  if (!owned) return;
  DST_T out = (DST_T)0;
  if (valid) {
    if (plans[1]) {
      // A reshape: the destination coordinate's canonical row-major index, split over the source's dims.
      const long drank = dplan[1], srank = splan[1];
      long lin = 0;
      for (long a = 0; a < drank; ++a) lin = lin * dplan[2 + a] + dc[a];
      for (long a = srank - 1; a >= 0; --a) {
        sc[a] = lin % splan[2 + a];
        lin /= splan[2 + a];
      }
      out = CONVERT(src[cr_ag_offset(splan, sc)]);
    } else {
      out = CONVERT(src[cr_ag_offset(splan, dc)]);
    }
  }
  dst[d_off] = out;
}
