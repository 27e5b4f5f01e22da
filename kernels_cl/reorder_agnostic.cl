// Shape-agnostic reorder: both index plans arrive at run time as a table of longs (the last argument), so one
// compiled kernel per type pair serves every shape, padding, stride and format pair the generic kernel
// serves: a new shape needs no compile. The table starts with the work-item count and a mode.
// Mode 2, the strided permutation (permute.hpp) when the pair is one (most are): rows per work-item, rows,
// digit count n, destination base, source base, masked axis count m, the inner digit's whole extent, then n
// digits {extent, dst stride, src stride, masked axis or -1, weight} outer first (the last is the inner
// digit, walked by a loop, cut into pieces of its table extent by the digit before it, so n >= 2), then m axes
// {lower, dim, limit}. A work-item decodes its first row once and then counts rows like an odometer, so it
// divides a few times per hundreds of elements.
// Modes 0 (same shapes) and 1 (a reshape) walk the index plans: chunk (values of the destination's innermost
// digit per work-item), then the destination plan and the source plan, each
//   base, rank, dims[rank], digit count, digits {dim, divisor, extent, stride, needs_mod, log2 of the divisor
//   or -1, extent - 1 for a power-of-two extent or -1}, pdim count,
//   pdims {axis count, owned, axes {axis, padded size, lower pad}}
// (kernel_selector/impl_agnostic.cpp writes it from Permutation and IndexPlan; IndexPlan::decode and offset
// are the host twins).
// Generated: KERNEL_NAME, SRC_T, DST_T, IDX_T (long), SRC_AT(o), CONVERT(v), CR_ZERO_PADDING (0: padding is
// not written), CR_DIVIDES, CR_VALUE_TABLES (per-index parameters, read at dc[axis]), CR_COMP_BEGIN,
// CR_COMP_ADD(v), CR_COMP_END (compensation sums, at dc[axis]), CR_STORE_BEGIN, CR_STORE(o, v), CR_STORE_END
// (modes 0 and 1: a u4 or i4 destination's rows fill whole bytes), CR_AG_MODE (the table's mode: the kernel
// holds that walk alone, since PoCL took 1.4-1.9 s to compile all three in one kernel and 0.6-0.8 s for the
// permutation walk alone; per-index parameters, compensation sums and u4 or i4 destinations take mode 0 or
// 1); nothing about the layouts.
// The helpers once per program, however many type pairs it holds.
#ifndef CR_AG_HELPERS
#define CR_AG_HELPERS
#define CR_AG_AXES 8
#define CR_AG_DIGIT 7  // longs per digit
#define CR_AG_PERM_DIGITS 40  // most digits of a permutation (mode 2); impl_agnostic.cpp checks
#define CR_AG_PERM_DIGIT 5    // longs per permutation digit

// The smallest q >= 0 with base + q * w >= bound (w > 0).
static inline long cr_ag_first(long bound, long base, long w) {
  const long x = bound - base;
  return x <= 0 ? 0 : (w == 1 ? x : (x + w - 1) / w);
}

// What digit d contributes to the offset for its pdim's value v: ((v / divisor) % extent) * stride, with
// shifts and masks where the divisor and extent are powers of two (the table says), since a division by a
// run-time value costs tens of cycles where a compiled-in constant costs a multiply.
static inline long cr_ag_digit(__global const long* d, long v) {
  long q = d[5] >= 0 ? v >> d[5] : v / d[1];
  if (d[4]) q = d[6] >= 0 ? (q & d[6]) : q % d[2];
  return q * d[3];
}

// Longs the plan at t takes in the table.
static inline long cr_ag_plan_length(__global const long* t) {
  const long rank = t[1], nd = t[2 + rank];
  __global const long* pd = t + 3 + rank + CR_AG_DIGIT * nd;
  const long np = pd[0];
  long len = 3 + rank + CR_AG_DIGIT * nd + 1;
  pd += 1;
  for (long d = 0; d < np; ++d) {
    const long na = pd[0];
    len += 2 + 3 * na;
    pd += 2 + 3 * na;
  }
  return len;
}

// The coordinates of the axes of pdim `pd` for its value v (written into coord); whether they are inside the
// tensor (else padding).
static inline bool cr_ag_split(__global const long* pd, __global const long* dims, long v, long* coord) {
  const long na = pd[0];
  __global const long* ax = pd + 2;
  if (na == 1) {  // the common case: no division
    const long c = v - ax[2];
    coord[ax[0]] = c;
    return v < ax[1] && c >= 0 && c < dims[ax[0]];
  }
  long combined = 1;
  for (long a = 0; a < na; ++a) combined *= ax[3 * a + 1];
  bool in = v < combined;
  for (long a = na - 1; a >= 0; --a) {
    const long c = v % ax[3 * a + 1] - ax[3 * a + 2];
    v /= ax[3 * a + 1];
    coord[ax[3 * a]] = c;
    in = in && c >= 0 && c < dims[ax[3 * a]];
  }
  return in;
}

// The value of pdim `pd` at logical coordinate `coord`.
static inline long cr_ag_value(__global const long* pd, const long* coord) {
  __global const long* ax = pd + 2;
  long v = 0;
  for (long a = 0; a < pd[0]; ++a) v = v * ax[3 * a + 1] + coord[ax[3 * a]] + ax[3 * a + 2];
  return v;
}

// The offset the digits of plan t contribute whose pdim is (`in_mask`) or is not in `mask`.
static inline long cr_ag_digit_sum(__global const long* t, const long* values, ulong mask, bool in_mask) {
  const long nd = t[2 + t[1]];
  __global const long* g = t + 3 + t[1];
  long off = 0;
  for (long k = 0; k < nd; ++k) {
    __global const long* d = g + CR_AG_DIGIT * k;
    if ((((mask >> d[0]) & 1) != 0) != in_mask) continue;
    off += cr_ag_digit(d, values[d[0]]);
  }
  return off;
}

// Element offset of logical coordinate `coord` (in range) in the plan at t.
static inline long cr_ag_offset(__global const long* t, const long* coord) {
  __global const long* pd = t + 3 + t[1] + CR_AG_DIGIT * t[2 + t[1]];
  const long np = pd[0];
  long values[CR_AG_AXES];
  pd += 1;
  for (long di = 0; di < np; ++di) {
    values[di] = cr_ag_value(pd, coord);
    pd += 2 + 3 * pd[0];
  }
  return t[0] + cr_ag_digit_sum(t, values, 0, false);  // every digit
}

#endif

CR_VALUE_TABLES

// Work-item w takes `chunk` consecutive values of the destination's innermost digit in one row: the other
// digits are decoded once, and per element only the pdim of that digit is split and only the source digits
// of the pdims holding its axes are recomputed.
__kernel void KERNEL_NAME(CR_REORDER_ARGS, __global const long* restrict plans) {
  CR_REORDER_BEGIN(w, plans[0])
#if CR_AG_MODE == 2  // CONVERT and CR_COMP_ADD read no dc here: the host leaves coordinates to modes 0 and 1
  {
    const long n = plans[4], m = plans[7], inner_total = plans[8];
    __global const long* dg = plans + 9;
    __global const long* ax = dg + CR_AG_PERM_DIGIT * n;
    __global const long* in = dg + CR_AG_PERM_DIGIT * (n - 1);
    const long ie = in[0], ids = in[1], iss = in[2], ia = in[3], iw = in[4];
    const long r0 = w * plans[2], r1 = min(r0 + plans[2], plans[3]);
    long k[CR_AG_PERM_DIGITS];
    long d_off = plans[5], s_off = plans[6], r = r0;
    for (long i = n - 2; i >= 0; --i) {
      __global const long* d = dg + CR_AG_PERM_DIGIT * i;
      const long q = r / d[0];  // no %: clang pairs it with the division through a freeze Oclgrind lacks
      k[i] = r - q * d[0];
      r = q;
      d_off += k[i] * d[1];
      s_off += k[i] * d[2];
    }
    for (long row = r0; row < r1; ++row) {
      long v[CR_AG_AXES];
      for (long a = 0; a < m; ++a) v[a] = 0;
      for (long i = 0; i < n - 1; ++i) {
        __global const long* d = dg + CR_AG_PERM_DIGIT * i;
        if (d[3] >= 0) v[d[3]] += k[i] * d[4];
      }
      bool ok = true, write = true;
      for (long a = 0; a < m; ++a) {
        if (a == ia) continue;
        ok = ok && v[a] >= ax[3 * a] && v[a] < ax[3 * a] + ax[3 * a + 1];
        write = write && v[a] < ax[3 * a + 2];
      }
      // The piece of the inner digit this row holds (the digit before it counts pieces), split into the
      // values to copy, [lo, hi), and padding before and after, up to the end of what the destination holds.
      long end = min(ie, inner_total - k[n - 2] * ie), lo = 0, hi = end;
      if (ia >= 0) {
        __global const long* a = ax + 3 * ia;
        end = min(end, cr_ag_first(a[2], v[ia], iw));
        lo = min(end, cr_ag_first(a[0], v[ia], iw));
        hi = max(lo, min(end, cr_ag_first(a[0] + a[1], v[ia], iw)));
      }
      if (!ok) lo = hi = end;
      if (write) {
        if (CR_ZERO_PADDING)
          for (long q = 0; q < lo; ++q) dst[d_off + q * ids] = (DST_T)0;
        for (long q = lo; q < hi; ++q) dst[d_off + q * ids] = CONVERT(SRC_AT(s_off + q * iss));
        if (CR_ZERO_PADDING)
          for (long q = hi; q < end; ++q) dst[d_off + q * ids] = (DST_T)0;
      }
      for (long i = n - 2; i >= 0; --i) {  // the next row
        __global const long* d = dg + CR_AG_PERM_DIGIT * i;
        d_off += d[1];
        s_off += d[2];
        if (++k[i] < d[0]) break;
        k[i] = 0;
        d_off -= d[0] * d[1];
        s_off -= d[0] * d[2];
      }
    }
  }
#else
  __global const long* dplan = plans + 3;
  __global const long* splan = dplan + cr_ag_plan_length(dplan);
  __global const long* dims = dplan + 2;
  const long nd = dims[dplan[1]];
  __global const long* dg = dims + dplan[1] + 1;
  __global const long* d0 = dg + CR_AG_DIGIT * (nd - 1);  // the innermost digit
  const long chunk = plans[2], ext0 = d0[2], per_row = (ext0 + chunk - 1) / chunk;
  const long row = w / per_row, q0 = (w - row * per_row) * chunk, q1 = min(q0 + chunk, ext0);
  long values[CR_AG_AXES];
  for (long i = 0; i < CR_AG_AXES; ++i) values[i] = 0;
  long off = dplan[0], r = row;
  for (long k = nd - 2; k >= 0; --k) {
    __global const long* d = dg + CR_AG_DIGIT * k;
    const long q = r % d[2];
    r /= d[2];
    values[d[0]] += q * d[1];
    off += q * d[3];
  }
  // Every destination pdim but the innermost digit's, once.
  long dc[CR_AG_AXES];
  for (long i = 0; i < CR_AG_AXES; ++i) dc[i] = 0;
  bool valid_rest = true;
  __global const long* pd = dg + CR_AG_DIGIT * nd;
  const long np = pd[0];
  __global const long* pd0 = pd + 1;
  pd += 1;
  for (long di = 0; di < np; ++di) {
    if (di == d0[0]) {
      pd0 = pd;
    } else {
      const bool in = cr_ag_split(pd, dims, values[di], dc);
      valid_rest = valid_rest && in;
      if (!in && pd[1] == 0) return;  // the whole row is another tensor's
    }
    pd += 2 + 3 * pd[0];
  }
  const bool owned0 = pd0[1] != 0;
  const long v0 = values[d0[0]];
  CR_COMP_BEGIN
  CR_STORE_BEGIN
#if CR_AG_MODE == 1
  {
    // A reshape: the destination coordinate's canonical row-major index, split over the source's dims.
    const long drank = dplan[1], srank = splan[1];
    long sc[CR_AG_AXES];
    for (long q = q0; q < q1; ++q) {
      const bool in0 = cr_ag_split(pd0, dims, v0 + q * d0[1], dc);
      if (!in0 && !owned0) continue;
      if (!CR_ZERO_PADDING && !(valid_rest && in0)) continue;
      DST_T out = (DST_T)0;
      if (valid_rest && in0) {
        long lin = 0;
        for (long a = 0; a < drank; ++a) lin = lin * dims[a] + dc[a];
        for (long a = srank - 1; a >= 0; --a) {
          sc[a] = lin % splan[2 + a];
          lin /= splan[2 + a];
        }
        out = CONVERT(SRC_AT(cr_ag_offset(splan, sc)));
        CR_COMP_ADD(out)
      }
      CR_STORE(off + q * d0[3], out)
    }
  }
#else
  // Source pdims holding an axis of the innermost digit's pdim change along the row; the others are summed once.
  __global const long* sp = splan + 3 + splan[1] + CR_AG_DIGIT * splan[2 + splan[1]];
  const long snp = sp[0];
  ulong changing = 0;
  long svalues[CR_AG_AXES];
  __global const long* spd = sp + 1;
  for (long sd = 0; sd < snp; ++sd) {
    for (long a = 0; a < spd[0]; ++a)
      for (long b = 0; b < pd0[0]; ++b)
        if (spd[2 + 3 * a] == pd0[2 + 3 * b]) changing |= (ulong)1 << sd;
    svalues[sd] = ((changing >> sd) & 1) ? 0 : cr_ag_value(spd, dc);
    spd += 2 + 3 * spd[0];
  }
  const long fixed = splan[0] + cr_ag_digit_sum(splan, svalues, changing, false);
  for (long q = q0; q < q1; ++q) {
    const bool in0 = cr_ag_split(pd0, dims, v0 + q * d0[1], dc);
    if (!in0 && !owned0) continue;
    if (!CR_ZERO_PADDING && !(valid_rest && in0)) continue;
    DST_T out = (DST_T)0;
    if (valid_rest && in0) {
      spd = sp + 1;
      for (long sd = 0; sd < snp; ++sd) {
        if ((changing >> sd) & 1) svalues[sd] = cr_ag_value(spd, dc);
        spd += 2 + 3 * spd[0];
      }
      out = CONVERT(SRC_AT(fixed + cr_ag_digit_sum(splan, svalues, changing, true)));
      CR_COMP_ADD(out)
    }
    CR_STORE(off + q * d0[3], out)
  }
#endif
  CR_STORE_END
  CR_COMP_END
#endif
}
