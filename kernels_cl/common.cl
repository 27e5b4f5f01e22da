// clreorder common OpenCL C: element conversions shared by every reorder kernel. They mirror
// runtime/reference.cpp bit for bit (f16/bf16 travel as ushort: PoCL has no cl_khr_fp16).
// Included once at the top of every program the cache builds.

// f32 -> f16 bits, round to nearest even; overflow -> inf; NaN stays NaN (quiet, top payload bits kept).
inline ushort cr_f32_to_f16(float f) {
  const uint x = as_uint(f);
  const uint sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (ushort)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return (ushort)(sign | 0x7c00u);
  if (ax >= 0x38800000u) {
    uint m = ax - 0x38000000u;
    m += 0xfffu + ((m >> 13) & 1u);
    return (ushort)(sign | (m >> 13));
  }
  if (ax <= 0x33000000u) return (ushort)sign;
  const uint e = ax >> 23, mant = (ax & 0x7fffffu) | 0x800000u, shift = 126u - e;
  uint r = mant >> shift;
  const uint rem = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
  if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
  return (ushort)(sign | r);
}

// f16 bits -> f32, exact (subnormals normalised, NaN payload kept).
inline float cr_f16_to_f32(ushort h) {
  const uint sign = ((uint)h & 0x8000u) << 16;
  uint e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1fu) return as_float(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    if (m == 0) return as_float(sign);
    const uint shift = clz(m) - 21u;  // brings the leading one to bit 10
    m <<= shift;
    e = 113u - shift;
    return as_float(sign | (e << 23) | ((m & 0x3ffu) << 13));
  }
  return as_float(sign | ((e + 112u) << 23) | (m << 13));
}

// f32 -> bf16 bits, round to nearest even; NaN stays NaN (quiet).
inline ushort cr_f32_to_bf16(float f) {
  const uint x = as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (ushort)((x >> 16) | 0x40u);
  return (ushort)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float cr_bf16_to_f32(ushort h) { return as_float((uint)h << 16); }

// float -> integer: NaN -> 0, else round to nearest even and saturate.
inline char cr_float_to_char(float f) { return isnan(f) ? (char)0 : convert_char_sat_rte(f); }
inline uchar cr_float_to_uchar(float f) { return isnan(f) ? (uchar)0 : convert_uchar_sat_rte(f); }
inline int cr_float_to_int(float f) { return isnan(f) ? 0 : convert_int_sat_rte(f); }
inline long cr_float_to_long(float f) { return isnan(f) ? 0L : convert_long_sat_rte(f); }
