// clreorder common OpenCL C: element conversions shared by every reorder kernel, for scalars and for
// vectors of 2, 4, 8 and 16 (cr_f32_to_f16, cr_f32_to_f16_8, ...). They mirror runtime/reference.cpp bit
// for bit (f16/bf16 travel as ushort: PoCL has no cl_khr_fp16; f8e4m3/f8e5m2 as uchar) and are
// branch-free, so loops over them vectorise. Included once at the top of every program the cache builds.

// PoCL's clang warns, for every function below that takes or returns a 512-bit vector (long8, double8,
// uint16), that the ABI differs without AVX-512: these are inline helpers of one program, never an ABI.
// Asked first whether the compiler knows the warning: NVIDIA's (an older clang) warns of an unknown group
// instead, and its driver prints "1 warning generated." on the caller's stderr for every program.
#ifdef __has_warning
#if __has_warning("-Wpsabi")
#pragma clang diagnostic ignored "-Wpsabi"
#endif
#endif

// The fused arithmetic (Conversion::params) rounds every operation to f32 on its own, as the host reference
// does: no contraction of a multiply and an add into one rounding.
#pragma OPENCL FP_CONTRACT OFF

// Token pasting after expansion: CR_CAT(KERNEL_NAME, _p2) names a kernel's own table of per-index values.
#define CR_CAT2(a, b) a##b
#define CR_CAT(a, b) CR_CAT2(a, b)

// Naming: cr_<from>_to_<to>[_rtz][_wrap]<SUF>: without _rtz a conversion rounds to nearest even, with it
// toward zero; without _wrap an integer destination saturates, with it keeps the value modulo 2^bits (two's
// complement). NaN becomes 0 in every integer destination. SUF is the vector width (_2 .. _16, none for
// scalars).

// Float F (double) to integer type T, saturating: NaN -> 0, else the library's conversion with rounding R.
#define CR_FLOAT_TO_INT(F, T, N, SUF, R, RSUF)                                                             \
  static inline T##N cr_##F##_to_##T##RSUF##SUF(F##N f) {                                                  \
    return select(convert_##T##N##_sat_##R(f), (T##N)0, convert_##T##N(isnan(f)));                         \
  }
// ... wrapping: the rounded value modulo 2^64 (cr_f64_mod64), then its low bits (an unsigned conversion
// between integers keeps the value modulo 2^bits, by C99's rules, which OpenCL C's conversions follow).
#define CR_DOUBLE_TO_INT_WRAP(T, UT, N, SUF)                                                               \
  static inline T##N cr_double_to_##T##_wrap##SUF(double##N f) {                                           \
    return as_##T##N(convert_##UT##N(cr_f64_mod64##SUF(rint(f))));                                         \
  }                                                                                                        \
  static inline T##N cr_double_to_##T##_rtz_wrap##SUF(double##N f) {                                       \
    return as_##T##N(convert_##UT##N(cr_f64_mod64##SUF(trunc(f))));                                        \
  }
#define CR_DOUBLE_TO_INT(T, UT, N, SUF)                                                                    \
  CR_FLOAT_TO_INT(double, T, N, SUF, rte, )                                                                \
  CR_FLOAT_TO_INT(double, T, N, SUF, rtz, _rtz)                                                            \
  CR_DOUBLE_TO_INT_WRAP(T, UT, N, SUF)
// ... to every integer type.
#define CR_DOUBLE_TO_INTS(N, SUF)                                                                          \
  CR_DOUBLE_TO_INT(char, uchar, N, SUF)                                                                    \
  CR_DOUBLE_TO_INT(uchar, uchar, N, SUF)                                                                   \
  CR_DOUBLE_TO_INT(short, ushort, N, SUF)                                                                  \
  CR_DOUBLE_TO_INT(ushort, ushort, N, SUF)                                                                 \
  CR_DOUBLE_TO_INT(int, uint, N, SUF)                                                                      \
  CR_DOUBLE_TO_INT(uint, uint, N, SUF)                                                                     \
  CR_DOUBLE_TO_INT(long, ulong, N, SUF)                                                                    \
  CR_DOUBLE_TO_INT(ulong, ulong, N, SUF)

// f32 rounded to an integral value without a library call (PoCL's rint() emulates it in about 15 vector
// operations): to nearest even by adding and subtracting 2^23 with f's sign below 2^23 (from 2^23 on every
// float is an integer), toward zero by an int conversion there. NaN and infinities pass through. Where the
// compiler targets x86 with AVX (PoCL on the host CPU) vroundps does either in one instruction (immediate 8:
// to nearest even, 11: toward zero, neither consulting MXCSR nor raising inexact); it differs only in the
// sign of a zero result and in quieting a NaN, which no caller tells apart (each converts to an integer and
// makes NaN 0). Built with -D CR_SOFTWARE_ROUNDING the adds run there too.
#if defined(__clang__) && defined(__AVX__) && !defined(CR_SOFTWARE_ROUNDING)
#define CR_ROUNDPS_WIDTHS(NAME, IMM)                                                                       \
  static inline float8 NAME##_8(float8 f) { return __builtin_ia32_roundps256(f, IMM); }                    \
  static inline float4 NAME##_4(float4 f) { return __builtin_ia32_roundps(f, IMM); }                       \
  static inline float2 NAME##_2(float2 f) { return NAME##_4((float4)(f, f)).lo; }                          \
  static inline float NAME(float f) { return NAME##_4((float4)(f)).x; }                                    \
  static inline float16 NAME##_16(float16 f) { return (float16)(NAME##_8(f.lo), NAME##_8(f.hi)); }
CR_ROUNDPS_WIDTHS(cr_f32_rint, 8)
CR_ROUNDPS_WIDTHS(cr_f32_trunc, 11)
#undef CR_ROUNDPS_WIDTHS
#define CR_F32_RINT(N, SUF)
#else
#define CR_F32_RINT(N, SUF)                                                                                \
  static inline float##N cr_f32_rint##SUF(float##N f) {                                                    \
    const uint##N bits = as_uint##N(f);                                                                    \
    const float##N big = as_float##N((bits & 0x80000000u) | 0x4b000000u);                                  \
    return select(f, (f + big) - big, as_int##N(bits & 0x7fffffffu) < 0x4b000000);                         \
  }                                                                                                        \
  static inline float##N cr_f32_trunc##SUF(float##N f) {                                                   \
    return select(f, convert_float##N(convert_int##N(f)), as_int##N(as_uint##N(f) & 0x7fffffffu) < 0x4b000000); \
  }
#endif
#define CR_F32_ROUNDING(N, SUF)                                                                            \
  CR_F32_RINT(N, SUF)                                                                                      \
  /* An integral f modulo 2^32, two's complement for negatives: from 2^31 on, f = m * 2^e with e >= 8, */  \
  /* so the low 32 bits are m shifted (none from e = 32 on: NaN and infinities give 0). In float */        \
  /* arithmetic (f - 2^32 * rint(f / 2^32), exact) an f32 -> i16 reorder took 1.3x as long as this. */     \
  static inline uint##N cr_f32_mod32##SUF(float##N f) {                                                    \
    const uint##N x = as_uint##N(f);                                                                       \
    const int##N small = as_int##N(x & 0x7fffffffu) < 0x4f000000;                                          \
    const int##N e = as_int##N((x >> 23) & 0xffu) - 150;                                                   \
    const uint##N m = (x & 0x7fffffu) | 0x800000u;                                                         \
    uint##N high = select(m << as_uint##N(e & 31), (uint##N)0, as_uint##N(e >= 32));                       \
    high = select(high, (uint##N)0 - high, as_uint##N(as_int##N(x) < 0));                                  \
    return select(high, as_uint##N(convert_int##N(select((float##N)0.0f, f, small))), as_uint##N(small));  \
  }                                                                                                        \
  /* The same modulo 2^8 (as the low bits of a uint): from 2^31 on every float is a multiple of 2^8. */    \
  static inline uint##N cr_f32_mod8##SUF(float##N f) {                                                     \
    const int##N small = as_int##N(as_uint##N(f) & 0x7fffffffu) < 0x4f000000;                              \
    return as_uint##N(convert_int##N(select((float##N)0.0f, f, small)));                                   \
  }                                                                                                        \
  /* The same modulo 2^64: from 2^63 on, f = m * 2^e with e >= 40. */                                      \
  static inline ulong##N cr_f32_mod64##SUF(float##N f) {                                                   \
    const uint##N x = as_uint##N(f);                                                                       \
    const long##N small = convert_long##N(as_int##N(x & 0x7fffffffu) < 0x5f000000);                        \
    const long##N e = convert_long##N((x >> 23) & 0xffu) - 150;                                            \
    const ulong##N m = convert_ulong##N((x & 0x7fffffu) | 0x800000u);                                      \
    ulong##N high = select(m << as_ulong##N(e & 63), (ulong##N)0, convert_long##N(e >= 64));               \
    high = select(high, (ulong##N)0 - high, convert_long##N(as_int##N(x) < 0));                            \
    return select(high, as_ulong##N(convert_long##N(select((float##N)0.0f, f, convert_int##N(small)))), small); \
  }

// f32 to an integer type of 8 or 16 bits (LO..HI), saturating, without a library call: clamped first (NaN
// compares false and stays), every value is below 2^22 in magnitude, so adding 1.5 * 2^23 puts it, rounded
// to nearest even by the addition itself, in the float's low mantissa bits, which an integer subtraction
// reads; toward zero, an int conversion truncates it. PoCL's convert_char8_sat_rte made an f32 -> i8 reorder
// take 3.4x this form's time (perf/clreorder_ab, bfyx -> b_fs_yx_fsv4 8x64x112x112: 2.13 against 0.63 ms, a
// plain convert 0.54).
// Where the value cannot be NaN no select makes NaN 0: an i32 -> i8 requantization (bfyx -> b_fs_yx_fsv4
// 8x64x56x56, two scales and a zero point) took 1.82x the plain conversion's time with warm caches against
// 2.53x with the NaN test (perf/clreorder_ab --warm; 1.18x against 1.31x cold).
// The clamp is two selects each on the value the other left (x86: one minps, one maxps, NaN passing through
// both), and NaN becomes 0 as a float, before the integer steps: a clamp testing f twice cost a compare and
// a blend for the lower bound, fmin/fmax (NaN-ignoring) three instructions each, and a NaN mask applied after
// the narrowing was narrowed itself (an extract and two packs per 8 lanes). 1513 instructions against 1819 in
// bfyx -> b_fs_yx_fsv16 f32 -> i8's kernel; the former form took 1.07-1.19x this one's time with warm caches
// on f32 -> i8, u8 and u16 and f16 -> u8 transposes (b_fs_yx_fsv16, b_fs_yx_fsv4, byxf, os_is_yx_osv16_isv4),
// 1.33x with a fused scale and zero point, 1.01x on the requantization (perf/clreorder_ab --warm, PoCL on
// AMD Zen 5), 0.95-1.07x cold (memory-bound there).
#define CR_F32_TO_SMALL_INT(T, N, SUF, LO, HI)                                                             \
  static inline float##N cr_clamp_##T##SUF(float##N f) {                                                   \
    const float##N c = select(f, (float##N)(HI), f > (HI));                                                \
    return select(c, (float##N)(LO), c < (LO));                                                            \
  }                                                                                                        \
  static inline T##N cr_float_to_##T##SUF(float##N f) {                                                    \
    const float##N c = select((float##N)0.0f, cr_clamp_##T##SUF(f), f == f);                               \
    return convert_##T##N(as_int##N(c + 12582912.0f) - 0x4b400000);                                        \
  }                                                                                                        \
  static inline T##N cr_float_to_##T##_rtz##SUF(float##N f) {                                              \
    return convert_##T##N(convert_int##N(select((float##N)0.0f, cr_clamp_##T##SUF(f), f == f)));           \
  }                                                                                                        \
  /* _finite: f is never NaN (the generator proved it, may_give_nan()): no NaN test. */                    \
  static inline T##N cr_float_to_##T##_finite##SUF(float##N f) {                                           \
    return convert_##T##N(as_int##N(cr_clamp_##T##SUF(f) + 12582912.0f) - 0x4b400000);                    \
  }                                                                                                        \
  static inline T##N cr_float_to_##T##_rtz_finite##SUF(float##N f) {                                       \
    return convert_##T##N(convert_int##N(cr_clamp_##T##SUF(f)));                                          \
  }
// f32 to a 32- or 64-bit integer type, saturating: rounded (cr_f32_rint or cr_f32_trunc), NaN becomes 0 and
// the rest is clamped to LO..HI (HI: the largest float below the type's limit) before the conversion, which
// then truncates an integer in range, and values from LIMIT on give MAXV. convert_int8_sat_rte took 2.6x a
// plain conversion's time in an f32 -> i32 reorder (bfyx -> byxf 8x64x56x56). Each bound's select tests the
// value the other left (a maxps and a minps; both testing r cost a compare and a blend): 1.00-1.07x faster
// warm on f32 -> i32, u32, i64 and f16 -> i32 transposes (perf/clreorder_ab --warm, PoCL on Zen 5).
#define CR_F32_TO_WIDE_INT_R(T, N, SUF, LO, HI, LIMIT, MAXV, ROUND, RSUF)                                  \
  static inline T##N cr_float_to_##T##RSUF##SUF(float##N f) {                                              \
    float##N r = ROUND##SUF(f);                                                                            \
    r = select(r, (float##N)0.0f, r != r);                                                                 \
    r = select(r, (float##N)(LO), r < (LO));                                                               \
    r = select(r, (float##N)(HI), r > (HI));                                                               \
    return select(convert_##T##N(r), (T##N)(MAXV), convert_##T##N(f >= (LIMIT)));                          \
  }
#define CR_F32_TO_WIDE_INT(T, N, SUF, LO, HI, LIMIT, MAXV)                                                 \
  CR_F32_TO_WIDE_INT_R(T, N, SUF, LO, HI, LIMIT, MAXV, cr_f32_rint, )                                      \
  CR_F32_TO_WIDE_INT_R(T, N, SUF, LO, HI, LIMIT, MAXV, cr_f32_trunc, _rtz)
// f32 to an integer type, wrapping: rounded, then the low bits of the value modulo 2^BITS (cr_f32_mod8,
// cr_f32_mod32 or cr_f32_mod64). Branch-free: a branch per vector to a general path for large values made an
// f32 -> i8 reorder take 1.7x the time of the saturating one; these took 1.06-1.09x (i8), 1.10x (i32) and
// 1.47x (i16) of it (perf/clreorder_ab, bfyx -> b_fs_yx_fsv4 8x64x112x112).
#define CR_F32_TO_INT_WRAP(T, UT, N, SUF, BITS)                                                            \
  static inline T##N cr_float_to_##T##_wrap##SUF(float##N f) {                                             \
    return as_##T##N(convert_##UT##N(cr_f32_mod##BITS##SUF(cr_f32_rint##SUF(f))));                         \
  }                                                                                                        \
  static inline T##N cr_float_to_##T##_rtz_wrap##SUF(float##N f) {                                         \
    return as_##T##N(convert_##UT##N(cr_f32_mod##BITS##SUF(cr_f32_trunc##SUF(f))));                        \
  }
#define CR_F32_TO_INTS(N, SUF)                                                                             \
  CR_F32_TO_SMALL_INT(char, N, SUF, -128.0f, 127.0f)                                                       \
  CR_F32_TO_SMALL_INT(uchar, N, SUF, 0.0f, 255.0f)                                                         \
  CR_F32_TO_SMALL_INT(short, N, SUF, -32768.0f, 32767.0f)                                                  \
  CR_F32_TO_SMALL_INT(ushort, N, SUF, 0.0f, 65535.0f)                                                      \
  CR_F32_TO_WIDE_INT(int, N, SUF, -2147483648.0f, 2147483520.0f, 2147483648.0f, 0x7fffffff)                \
  CR_F32_TO_WIDE_INT(uint, N, SUF, 0.0f, 4294967040.0f, 4294967296.0f, 0xffffffffu)                        \
  CR_F32_TO_WIDE_INT(long, N, SUF, -9223372036854775808.0f, 9223371487098961920.0f, 9223372036854775808.0f, \
                     0x7fffffffffffffffl)                                                                  \
  CR_F32_TO_WIDE_INT(ulong, N, SUF, 0.0f, 18446742974197923840.0f, 18446744073709551616.0f,                \
                     0xfffffffffffffffful)                                                                 \
  CR_F32_TO_INT_WRAP(char, uchar, N, SUF, 8)                                                               \
  CR_F32_TO_INT_WRAP(uchar, uchar, N, SUF, 8)                                                              \
  CR_F32_TO_INT_WRAP(short, ushort, N, SUF, 32)                                                            \
  CR_F32_TO_INT_WRAP(ushort, ushort, N, SUF, 32)                                                           \
  CR_F32_TO_INT_WRAP(int, uint, N, SUF, 32)                                                                \
  CR_F32_TO_INT_WRAP(uint, uint, N, SUF, 32)                                                               \
  CR_F32_TO_INT_WRAP(long, ulong, N, SUF, 64)                                                              \
  CR_F32_TO_INT_WRAP(ulong, ulong, N, SUF, 64)

// A 32- or 64-bit integer to f32 rounded to odd (toward zero, the lowest bit set when inexact): rounding that
// once more to f16 or bf16 gives the correctly rounded result, where rounding to nearest twice can miss it
// (i32 2^24 + 2^16 + 1 to bf16). 8- and 16-bit integers are exact in f32.
#define CR_INT_TO_F32_ODD(T, N, SUF)                                                                       \
  static inline float##N cr_##T##_to_f32_odd##SUF(T##N v) {                                                \
    const float##N t = convert_float##N##_rtz(v);                                                          \
    return as_float##N(as_uint##N(t) | (convert_uint##N(convert_##T##N(t) != v) & 1u));                    \
  }

// f32 to a float of f16's exponent range (5 bits, bias 15) with 23 - SHIFT mantissa bits, in T: f16 and
// f8e5m2 (its top byte). cr_f32_to_NAME rounds to nearest even: overflow -> inf, NaN stays NaN (quiet, sign
// and top payload bits kept); below 2^-14 adding 2^23 * QUANTUM (the subnormal step) rounds |f| to a
// multiple of it in hardware. cr_f32_to_NAME_rtz truncates: finite values beyond the largest finite value
// give it, infinities stay. cr_e5_NAME_bits (and _rtz) are the same without the NaN test: the result's bits
// in a uint, sign included.
#define CR_E5_NORMAL(SHIFT, m) (((m) + ((1u << ((SHIFT) - 1)) - 1u) + (((m) >> (SHIFT)) & 1u)) >> (SHIFT))
#define CR_F32_TO_E5_BITS(NAME, N, SUF, SHIFT, QUANTUM)                                                    \
  static inline uint##N cr_e5_##NAME##_bits##SUF(float##N f) {                                             \
    const uint##N x = as_uint##N(f);                                                                       \
    const uint##N ax = x & 0x7fffffffu, m = ax - 0x38000000u; /* exponent rebased 127 -> 15 */             \
    const uint##N subnormal =                                                                              \
        as_uint##N(as_float##N(ax) + QUANTUM * 0x1.0p23f) - as_uint(QUANTUM * 0x1.0p23f);                  \
    uint##N r = select(subnormal, CR_E5_NORMAL(SHIFT, m), as_uint##N(ax >= 0x38800000u));                  \
    r = select(r, (uint##N)CR_E5_INF(SHIFT), as_uint##N(ax >= 0x47800000u - (1u << (SHIFT - 1))));         \
    return CR_E5_SIGN(SHIFT, x) | r;                                                                       \
  }                                                                                                        \
  static inline uint##N cr_e5_##NAME##_rtz_bits##SUF(float##N f) {                                         \
    const uint##N x = as_uint##N(f), ax = x & 0x7fffffffu;                                                 \
    uint##N r = select(convert_uint##N(as_float##N(ax) * (1.0f / QUANTUM)), (ax - 0x38000000u) >> SHIFT,   \
                       as_uint##N(ax >= 0x38800000u));                                                     \
    r = select(r, (uint##N)(CR_E5_INF(SHIFT) - 1u), as_uint##N(ax >= 0x47800000u));                        \
    r = select(r, (uint##N)CR_E5_INF(SHIFT), as_uint##N(ax >= 0x7f800000u));                               \
    return CR_E5_SIGN(SHIFT, x) | r;                                                                       \
  }
#define CR_F32_TO_E5_NAN(NAME, T, N, SUF, SHIFT, CANON, NANV)                                              \
  static inline T##N cr_f32_to_##NAME##CANON##SUF(float##N f) {                                            \
    const uint##N x = as_uint##N(f), ax = x & 0x7fffffffu;                                                 \
    return convert_##T##N(select(cr_e5_##NAME##_bits##SUF(f), (uint##N)(NANV), as_uint##N(ax > 0x7f800000u))); \
  }                                                                                                        \
  static inline T##N cr_f32_to_##NAME##_rtz##CANON##SUF(float##N f) {                                      \
    const uint##N x = as_uint##N(f), ax = x & 0x7fffffffu;                                                 \
    return convert_##T##N(select(cr_e5_##NAME##_rtz_bits##SUF(f), (uint##N)(NANV), as_uint##N(ax > 0x7f800000u))); \
  }
// Where the generator proved more of the values (codegen.cpp): _finite, no NaN reaches the conversion (an
// integer source, or arithmetic that may_give_nan() cleared), so it makes no NaN test; _normal, every value
// is +-0 or of an exponent in f16's normal range, 2^-14 <= |f| < 2^16 (normal_range()), so only the normal
// path and a select for zero remain (the normal path's rounding carries into inf where it must, and
// truncating stops at the largest finite value). A u8 -> f16 reorder took 0.90x the full conversion's time
// with it, a u8 -> f16 normalisation 0.83x (perf/clreorder_ab, byxf -> b_fs_yx_fsv16 8x3x224x224).
#define CR_F32_TO_E5_PROVEN(NAME, T, N, SUF, SHIFT)                                                        \
  static inline T##N cr_f32_to_##NAME##_finite##SUF(float##N f) {                                          \
    return convert_##T##N(cr_e5_##NAME##_bits##SUF(f));                                                    \
  }                                                                                                        \
  static inline T##N cr_f32_to_##NAME##_rtz_finite##SUF(float##N f) {                                      \
    return convert_##T##N(cr_e5_##NAME##_rtz_bits##SUF(f));                                                \
  }                                                                                                        \
  static inline T##N cr_f32_to_##NAME##_normal##SUF(float##N f) {                                          \
    const uint##N x = as_uint##N(f), ax = x & 0x7fffffffu;                                                 \
    const uint##N r = select((uint##N)0, CR_E5_NORMAL(SHIFT, ax - 0x38000000u), as_uint##N(ax >= 0x38800000u)); \
    return convert_##T##N(CR_E5_SIGN(SHIFT, x) | r);                                                       \
  }                                                                                                        \
  static inline T##N cr_f32_to_##NAME##_rtz_normal##SUF(float##N f) {                                      \
    const uint##N x = as_uint##N(f), ax = x & 0x7fffffffu;                                                 \
    const uint##N r = select((uint##N)0, (ax - 0x38000000u) >> SHIFT, as_uint##N(ax >= 0x38800000u));      \
    return convert_##T##N(CR_E5_SIGN(SHIFT, x) | r);                                                       \
  }
// The _canonical twins give every NaN the bits of 0x7fc00000 converted (the fused arithmetic's canonical NaN,
// cr_f32_nan_canonical) in the one test the conversion makes anyway: canonicalising first and converting
// after tested twice, a seventh of an f16 -> bf16 reorder's time with a multiplication fused in (PoCL,
// perf/clreorder_ab).
#define CR_F32_TO_E5(NAME, T, N, SUF, SHIFT, QUANTUM)                                                      \
  CR_F32_TO_E5_BITS(NAME, N, SUF, SHIFT, QUANTUM)                                                          \
  CR_F32_TO_E5_NAN(NAME, T, N, SUF, SHIFT, , CR_E5_SIGN(SHIFT, x) | CR_E5_NAN(SHIFT, ax))                  \
  CR_F32_TO_E5_NAN(NAME, T, N, SUF, SHIFT, _canonical, CR_E5_NAN(SHIFT, 0x7fc00000u))                      \
  CR_F32_TO_E5_PROVEN(NAME, T, N, SUF, SHIFT)
// Their infinity (exponent all ones), NaN (quiet, the top payload bits of |f| = ax) and the sign of f = x.
#define CR_E5_INF(SHIFT) (0x1fu << (23 - (SHIFT)))
#define CR_E5_NAN(SHIFT, ax) (CR_E5_INF(SHIFT) | (1u << (22 - (SHIFT))) | (((ax) >> (SHIFT)) & ((1u << (23 - (SHIFT))) - 1u)))
#define CR_E5_SIGN(SHIFT, x) (((x) >> ((SHIFT) + 3)) & (1u << (28 - (SHIFT))))

// A family of conversion functions M(N, SUF) for scalars and for the vectors of 2, 4, 8 and 16 elements that a
// program calls: the host defines CR_WIDTH_2 .. CR_WIDTH_16 for each width whose functions (cr_..._N) its
// kernels name (ProgramCache), since every width of these families cost PoCL's front end about 15 ms a program.
#ifdef CR_WIDTH_2
#define CR_AT_WIDTH_2(M) M(2, _2)
#else
#define CR_AT_WIDTH_2(M)
#endif
#ifdef CR_WIDTH_4
#define CR_AT_WIDTH_4(M) M(4, _4)
#else
#define CR_AT_WIDTH_4(M)
#endif
#ifdef CR_WIDTH_8
#define CR_AT_WIDTH_8(M) M(8, _8)
#else
#define CR_AT_WIDTH_8(M)
#endif
#ifdef CR_WIDTH_16
#define CR_AT_WIDTH_16(M) M(16, _16)
#else
#define CR_AT_WIDTH_16(M)
#endif
#define CR_EACH_WIDTH(M) M(, ) CR_AT_WIDTH_2(M) CR_AT_WIDTH_4(M) CR_AT_WIDTH_8(M) CR_AT_WIDTH_16(M)

// f32 -> f16 in hardware where the compiler targets x86's F16C (PoCL on the host CPU): vcvtps2ph converts 8
// lanes in one instruction where the bit operations above take 15 to 25, and gives the same bits (IEEE
// rounding in the immediate's mode, 0 to nearest even, 3 toward zero, whatever MXCSR says; overflow to inf or,
// truncating, to the largest finite value; subnormals exact; NaN quiet with its sign and top payload bits,
// as CR_E5_NAN), so every _canonical, _finite and _normal form is the one instruction, the first with one
// select on the result. Every other device (GPUs, Oclgrind, other CPUs) gets OpenCL's own
// vstore_half/vload_half (core since 1.0, no cl_khr_fp16 needed), which a GPU runs as its conversion
// instruction: on an H200 0.87-0.96x the time of the bit operations on three f16 conversions and 1.27x the
// speed on an i8 -> f16 conversion (NVIDIA reports no cl_khr_fp16; `clreorder_ab --options`), on PoCL here
// 0.82x the bit operations' time, where F16C's instruction, the default there, is faster still.
// -D CR_HALF_BUILTINS picks them on x86 too. Rounding,
// overflow and subnormals are IEEE's in both directions; a NaN's result bits are the spec's choice, so they
// are rebuilt from the input as the bit operations give them (sign, quiet bit, top payload bits; widening
// keeps every payload bit). -D CR_SOFTWARE_F16 builds the bit operations anywhere. The device tests compare
// all three against the same host reference.
// The forms a conversion instruction RAW gives alike: _finite and _normal are the instruction, _canonical one
// select on its result.
#define CR_F16_HW_FORMS(N, SUF, R, RAW)                                                                    \
  static inline ushort##N cr_f32_to_f16##R##_finite##SUF(float##N f) { return RAW##SUF(f); }              \
  static inline ushort##N cr_f32_to_f16##R##_normal##SUF(float##N f) { return RAW##SUF(f); }              \
  static inline ushort##N cr_f32_to_f16##R##_canonical##SUF(float##N f) {                                  \
    const ushort##N h = RAW##SUF(f);                                                                       \
    return select(h, (ushort##N)0x7e00u, convert_ushort##N((h & (ushort)0x7fffu) > (ushort)0x7c00u));       \
  }
// f16 bits -> f32 with every NaN as +0 (cr_f16_to_f32_nan0), for an integer destination without fused
// arithmetic, where each NaN becomes 0 anyway: the NaN payload cr_f16_to_f32 rebuilds (vcvtph2ps quiets
// signalling NaNs: five operations per vector to undo it) is never read, and the integer conversion after it
// takes its _finite form, without a NaN test. WIDEN: the exact widening of `h`, NaNs in any form. The old
// kernels took 1.12-1.33x the time cold and 1.06-1.26x warm over ten f16 -> i8, u8, i16, u16 and u4 reorders
// (tiled, staged, lanes), 1.03x and 1.08x into i32 (perf/clreorder_ab, PoCL on the Xeon host; NOTES, "f16 into
// integers without NaN payloads"); vcvtph2ps alone, its result into the NaN-testing conversion, made a lanes
// kernel 5x slower (scalarised).
// cr_f16_to_f32_quiet: the widening alone, NaNs in any form (vcvtph2ps quiets them), for fused arithmetic,
// whose NaN results are made canonical (floats) or 0 (integers), so no payload is ever seen: the old kernels
// took 1.06-1.20x the time cold and 1.08-1.29x warm over eight f16 reorders with a fused parameter into i4, i8,
// u8, i16, f16, f32 and bf16 (tiled, staged, lanes; NOTES, the same entry).
#define CR_F16_TO_F32_NAN0(N, SUF, WIDEN)                                                                  \
  static inline float##N cr_f16_to_f32_nan0##SUF(ushort##N h) {                                            \
    return select(WIDEN, (float##N)0.0f, as_int##N(convert_uint##N(h & (ushort)0x7fffu) > 0x7c00u));       \
  }                                                                                                        \
  static inline float##N cr_f16_to_f32_quiet##SUF(ushort##N h) { return WIDEN; }
#if !defined(CR_SOFTWARE_F16) && (defined(CR_HALF_BUILTINS) || !(defined(__clang__) && defined(__F16C__)))
#define CR_HB_FORMS(N, SUF, R, MODE)                                                                       \
  static inline ushort##N cr_hb_##MODE##SUF(float##N f) {                                                  \
    ushort##N h;                                                                                           \
    vstore_half##N##_##MODE(f, 0, (__private half*)&h);                                                    \
    return h;                                                                                              \
  }                                                                                                        \
  static inline ushort##N cr_f32_to_f16##R##SUF(float##N f) {                                              \
    const uint##N x = as_uint##N(f), ax = x & 0x7fffffffu;                                                 \
    const ushort##N h = cr_hb_##MODE##SUF(f);                                                              \
    const ushort##N nan = convert_ushort##N(CR_E5_SIGN(13, x) | CR_E5_NAN(13, ax));                        \
    return select(h, nan, convert_ushort##N((h & (ushort)0x7fffu) > (ushort)0x7c00u));                      \
  }                                                                                                        \
  CR_F16_HW_FORMS(N, SUF, R, cr_hb_##MODE)
#define CR_F32_TO_F16(N, SUF) CR_HB_FORMS(N, SUF, , rte) CR_HB_FORMS(N, SUF, _rtz, rtz)
#define CR_F16_TO_F32(N, SUF)                                                                              \
  static inline float##N cr_f16_to_f32##SUF(ushort##N h16) {                                               \
    const float##N w = vload_half##N(0, (const __private half*)&h16);                                      \
    const uint##N h = convert_uint##N(h16);                                                                \
    const uint##N special = ((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13);                    \
    return as_float##N(select(as_uint##N(w), special, as_uint##N((h & 0x7fffu) > 0x7c00u)));               \
  }                                                                                                        \
  CR_F16_TO_F32_NAN0(N, SUF, vload_half##N(0, (const __private half*)&h))
#elif defined(__clang__) && defined(__F16C__) && !defined(CR_SOFTWARE_F16)
#define CR_F16C_WIDTHS(NAME, IMM)                                                                          \
  static inline ushort8 cr_##NAME##_8(float8 f) { return as_ushort8(__builtin_ia32_vcvtps2ph256(f, IMM)); } \
  static inline ushort4 cr_##NAME##_4(float4 f) { return as_ushort8(__builtin_ia32_vcvtps2ph(f, IMM)).lo; } \
  static inline ushort2 cr_##NAME##_2(float2 f) { return cr_##NAME##_4((float4)(f, f)).lo; }              \
  static inline ushort cr_##NAME(float f) { return cr_##NAME##_4((float4)(f)).x; }                       \
  CR_F16C_16(NAME, IMM)
// 16 lanes in one zmm instruction where the device has AVX-512: LLVM does not merge the two ymm halves, whose
// split and join cost two more instructions per 16 (the fused i8 -> f16 loop's 19 -> 16). 123 f32 -> f16 and
// f16 -> f32 reorders (perf/clreorder_ab --options '-D CR_NO_AVX512', the Xeon host): narrowing 0.96x the time
// cold and 0.93x warm in geometric mean (bfyx -> b_fs_yx_fsv32 8x256x56x56 0.80-0.83x); widening the same
// way (vcvtph2ps) 0.99-1.00x at 0.4 MB and more and 1.2-1.6x on 3-6 us kernels: not there. -D CR_NO_AVX512
// builds the halves (the device tests run both).
#if defined(__AVX512F__) && !defined(CR_NO_AVX512)
#define CR_F16C_16(NAME, IMM)                                                                              \
  static inline ushort16 cr_##NAME##_16(float16 f) {                                                       \
    return as_ushort16(__builtin_ia32_vcvtps2ph512_mask(f, IMM, (short16)0, (ushort)0xffff));               \
  }
#else
#define CR_F16C_16(NAME, IMM)                                                                              \
  static inline ushort16 cr_##NAME##_16(float16 f) { return (ushort16)(cr_##NAME##_8(f.lo), cr_##NAME##_8(f.hi)); }
#endif
CR_F16C_WIDTHS(f16c_rte, 0)
CR_F16C_WIDTHS(f16c_rtz, 3)
#undef CR_F16C_WIDTHS
#undef CR_F16C_16
#define CR_F16C_FORMS(N, SUF, R, RSUF)                                                                     \
  static inline ushort##N cr_f32_to_f16##R##SUF(float##N f) { return cr_f16c_##RSUF##SUF(f); }            \
  CR_F16_HW_FORMS(N, SUF, R, cr_f16c_##RSUF)
#define CR_F32_TO_F16(N, SUF) CR_F16C_FORMS(N, SUF, , rte) CR_F16C_FORMS(N, SUF, _rtz, rtz)
// And back, vcvtph2ps: exact, but it quiets a signalling NaN (sets f32's bit 22), where the conversion keeps
// every payload bit (the host's f16_to_f32), so that bit is cleared again for f16's signalling NaNs, the
// magnitudes 0x7c01 to 0x7dff: 8 lanes in the instruction and 5 more, where the bit operations take about 12.
static inline float8 cr_f16c_widen_8(ushort8 h) { return __builtin_ia32_vcvtph2ps256(as_short8(h)); }
static inline float4 cr_f16c_widen_4(ushort4 h) { return __builtin_ia32_vcvtph2ps(as_short8((ushort8)(h, h))); }
static inline float2 cr_f16c_widen_2(ushort2 h) { return cr_f16c_widen_4((ushort4)(h, h)).lo; }
static inline float cr_f16c_widen(ushort h) { return cr_f16c_widen_4((ushort4)(h)).x; }
static inline float16 cr_f16c_widen_16(ushort16 h) { return (float16)(cr_f16c_widen_8(h.lo), cr_f16c_widen_8(h.hi)); }
#define CR_F16_TO_F32(N, SUF)                                                                              \
  static inline float##N cr_f16_to_f32##SUF(ushort##N h) {                                                 \
    const ushort##N m = (h & (ushort)0x7fffu) - (ushort)0x7c01u;                                           \
    const uint##N quieted = select((uint##N)0, (uint##N)0x400000u, convert_uint##N(m < (ushort)0x1ffu));    \
    return as_float##N(as_uint##N(cr_f16c_widen##SUF(h)) & ~quieted);                                     \
  }                                                                                                        \
  CR_F16_TO_F32_NAN0(N, SUF, cr_f16c_widen##SUF(h))
#else
#define CR_F32_TO_F16(N, SUF) CR_F32_TO_E5(f16, ushort, N, SUF, 13, 0x1.0p-24f)
#define CR_F16_TO_F32(N, SUF)                                                                              \
  static inline float##N cr_f16_to_f32##SUF(ushort##N h16) {                                               \
    const uint##N h = convert_uint##N(h16);                                                                \
    const uint##N sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;                       \
    const uint##N normal = sign | ((e + 112u) << 23) | (m << 13);                                          \
    const uint##N special = sign | 0x7f800000u | (m << 13);                                                \
    const uint##N tiny = sign | as_uint##N(convert_float##N(m) * 0x1.0p-24f);                              \
    uint##N r = select(normal, special, as_uint##N(e == 0x1fu));                                           \
    return as_float##N(select(r, tiny, as_uint##N(e == 0u)));                                              \
  }                                                                                                        \
  CR_F16_TO_F32_NAN0(N, SUF, cr_f16_to_f32##SUF(h))
#endif

#define CR_CONVERSIONS(N, SUF)                                                                             \
  /* f32 -> f16 bits: 13 mantissa bits dropped, subnormal step 2^-24 (or an instruction, above). */      \
  CR_F32_TO_F16(N, SUF)                                                                                    \
  /* f16 bits -> f32, exact (subnormals normalised, NaN payload kept). */                                  \
  CR_F16_TO_F32(N, SUF)                                                                                    \
  /* f32 -> bf16 bits, round to nearest even; NaN stays NaN (quiet), or _canonical: 0x7fc0. */            \
  static inline ushort##N cr_f32_to_bf16##SUF(float##N f) {                                                \
    const uint##N x = as_uint##N(f);                                                                       \
    const uint##N rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;                                        \
    const uint##N quiet = (x >> 16) | 0x40u;                                                               \
    return convert_ushort##N(select(rounded, quiet, as_uint##N((x & 0x7fffffffu) > 0x7f800000u)));         \
  }                                                                                                        \
  static inline ushort##N cr_f32_to_bf16_canonical##SUF(float##N f) {                                      \
    const uint##N x = as_uint##N(f);                                                                       \
    const uint##N rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;                                        \
    return convert_ushort##N(select(rounded, (uint##N)0x7fc0u, as_uint##N((x & 0x7fffffffu) > 0x7f800000u))); \
  }                                                                                                        \
  /* _finite: no NaN reaches it (CR_F32_TO_E5_PROVEN), so no NaN test. */                                 \
  static inline ushort##N cr_f32_to_bf16_finite##SUF(float##N f) {                                         \
    const uint##N x = as_uint##N(f);                                                                       \
    return convert_ushort##N((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);                                      \
  }                                                                                                        \
  static inline float##N cr_bf16_to_f32##SUF(ushort##N h) {                                                \
    return as_float##N(convert_uint##N(h) << 16);                                                          \
  }                                                                                                        \
  /* f32 -> bf16 bits toward zero (the exponent range is f32's: nothing overflows). */                     \
  static inline ushort##N cr_f32_to_bf16_rtz##SUF(float##N f) {                                            \
    const uint##N x = as_uint##N(f);                                                                       \
    return convert_ushort##N(select(x >> 16, (x >> 16) | 0x40u, as_uint##N((x & 0x7fffffffu) > 0x7f800000u))); \
  }                                                                                                        \
  static inline ushort##N cr_f32_to_bf16_rtz_finite##SUF(float##N f) {                                     \
    return convert_ushort##N(as_uint##N(f) >> 16);                                                         \
  }                                                                                                        \
  static inline ushort##N cr_f32_to_bf16_rtz_canonical##SUF(float##N f) {                                  \
    const uint##N x = as_uint##N(f);                                                                       \
    return convert_ushort##N(select(x >> 16, (uint##N)0x7fc0u, as_uint##N((x & 0x7fffffffu) > 0x7f800000u))); \
  }                                                                                                        \
  /* f32 -> f8e4m3 bits (OCP E4M3: no infinities, NaN S.1111.111), to nearest even; as OpenVINO's, NaN,  */ \
  /* infinities and values that round beyond 448 give NaN. Below 2^-6 adding 2^14 rounds |f| to a        */ \
  /* multiple of 2^-9, the subnormal step, in hardware (8 * 2^-9 carries into the smallest normal).     */ \
  static inline uchar##N cr_f32_to_f8e4m3##SUF(float##N f) {                                               \
    const uint##N x = as_uint##N(f);                                                                       \
    const uint##N sign = (x >> 24) & 0x80u, ax = x & 0x7fffffffu;                                          \
    const uint##N m = ax - 0x3c000000u; /* exponent rebased 127 -> 7 */                                    \
    const uint##N normal = (m + 0x7ffffu + ((m >> 20) & 1u)) >> 20;                                        \
    const uint##N subnormal = as_uint##N(as_float##N(ax) + 0x1.0p14f) - 0x46800000u;                       \
    uint##N r = select(subnormal, normal, as_uint##N(ax >= 0x3c800000u));                                  \
    r = select(r, (uint##N)0x7fu, as_uint##N(ax > 0x43e80000u)); /* beyond 464, the tie to 448 */          \
    return convert_uchar##N(sign | r);                                                                     \
  }                                                                                                        \
  /* ... toward zero: finite values beyond 448 give it; NaN and infinities NaN. */                         \
  static inline uchar##N cr_f32_to_f8e4m3_rtz##SUF(float##N f) {                                           \
    const uint##N x = as_uint##N(f);                                                                       \
    const uint##N sign = (x >> 24) & 0x80u, ax = x & 0x7fffffffu;                                          \
    uint##N r = select(convert_uint##N(as_float##N(ax) * 0x1.0p9f), (ax - 0x3c000000u) >> 20,              \
                       as_uint##N(ax >= 0x3c800000u));                                                     \
    r = select(r, (uint##N)0x7eu, as_uint##N(ax >= 0x43f00000u));                                          \
    r = select(r, (uint##N)0x7fu, as_uint##N(ax >= 0x7f800000u));                                          \
    return convert_uchar##N(sign | r);                                                                     \
  }                                                                                                        \
  /* f8e4m3 bits -> f32, exact; NaN gives a quiet NaN of the same sign. */                                 \
  static inline float##N cr_f8e4m3_to_f32##SUF(uchar##N b8) {                                              \
    const uint##N b = convert_uint##N(b8);                                                                 \
    const uint##N sign = (b & 0x80u) << 24, mag = b & 0x7fu;                                               \
    const uint##N tiny = sign | as_uint##N(convert_float##N(b & 7u) * 0x1.0p-9f);                          \
    uint##N r = select(sign | ((mag << 20) + 0x3c000000u), tiny, as_uint##N(mag < 8u));                    \
    return as_float##N(select(r, sign | 0x7fc00000u, as_uint##N(mag == 0x7fu)));                           \
  }                                                                                                        \
  /* f32 -> f8e5m2 bits: f16's top byte, rounded once (OpenVINO rounds to f16 first, twice). */            \
  CR_F32_TO_E5(f8e5m2, uchar, N, SUF, 21, 0x1.0p-16f)                                                      \
  /* f8e5m2 bits -> f32, exact: they are an f16's top byte. */                                             \
  static inline float##N cr_f8e5m2_to_f32##SUF(uchar##N b) {                                               \
    return cr_f16_to_f32##SUF(convert_ushort##N(b) << (ushort)8);                                          \
  }                                                                                                        \
  /* The fused arithmetic's result with every NaN made 0x7fc00000: devices differ in the payload and sign */ \
  /* an operation gives a NaN operand, the host reference does not. */                                     \
  /* (Bit tests: PoCL's isnan() is a call per element, which took a fifth of a u8 -> f16 reorder's time.) */ \
  static inline float##N cr_f32_nan_canonical##SUF(float##N f) {                                          \
    const uint##N u = as_uint##N(f);                                                                       \
    return as_float##N(select(u, (uint##N)0x7fc00000u, as_uint##N(convert_int##N((u & 0x7fffffffu) > 0x7f800000u)))); \
  }                                                                                                        \
  CR_F32_ROUNDING(N, SUF)                                                                                  \
  CR_F32_TO_INTS(N, SUF)                                                                                   \
  CR_INT_TO_F32_ODD(int, N, SUF)                                                                           \
  CR_INT_TO_F32_ODD(uint, N, SUF)                                                                          \
  CR_INT_TO_F32_ODD(long, N, SUF)                                                                          \
  CR_INT_TO_F32_ODD(ulong, N, SUF)

CR_EACH_WIDTH(CR_CONVERSIONS)
#undef CR_CONVERSIONS

// f64 conversions, where the device has doubles (the selector refuses f64 layouts elsewhere).
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define CR_CONVERSIONS_F64(N, SUF)                                                                         \
  /* f64 -> f32, round to nearest even; NaN written out (quiet, sign and top 22 payload bits), since */    \
  /* hardware conversions differ in NaN payloads. */                                                       \
  static inline float##N cr_f64_to_f32##SUF(double##N d) {                                                 \
    const ulong##N x = as_ulong##N(d);                                                                     \
    const uint##N nan = convert_uint##N((x >> 32) & 0x80000000ul) | 0x7fc00000u |                          \
                        convert_uint##N((x >> 29) & 0x3ffffful);                                           \
    return as_float##N(select(as_uint##N(convert_float##N##_rte(d)), nan, convert_uint##N(isnan(d))));     \
  }                                                                                                        \
  /* f64 -> f32 rounded to odd (toward zero, lowest bit set when inexact): rounding that once more to */   \
  /* f16 or bf16 gives the correctly rounded result. NaN as cr_f64_to_f32. */                              \
  static inline float##N cr_f64_to_f32_odd##SUF(double##N d) {                                             \
    const float##N t = convert_float##N##_rtz(d);                                                          \
    const uint##N inexact = convert_uint##N(convert_double##N(t) != d) & 1u;                               \
    return as_float##N(select(as_uint##N(t) | inexact, as_uint##N(cr_f64_to_f32##SUF(d)),                  \
                              convert_uint##N(isnan(d))));                                                 \
  }                                                                                                        \
  /* f64 -> f32 toward zero (finite values beyond f32's range give its largest); NaN as cr_f64_to_f32. */  \
  static inline float##N cr_f64_to_f32_rtz##SUF(double##N d) {                                             \
    return as_float##N(select(as_uint##N(convert_float##N##_rtz(d)), as_uint##N(cr_f64_to_f32##SUF(d)),    \
                              convert_uint##N(isnan(d))));                                                 \
  }                                                                                                        \
  /* An integral d modulo 2^64, as cr_f32_mod64: from 2^63 on, d = m * 2^e with e >= 11. */                \
  static inline ulong##N cr_f64_mod64##SUF(double##N d) {                                                  \
    const ulong##N x = as_ulong##N(d);                                                                     \
    const long##N small = convert_long##N(as_long##N(x & 0x7ffffffffffffffful) < 0x43e0000000000000l);     \
    const long##N e = as_long##N((x >> 52) & 0x7fful) - 1075;                                              \
    const ulong##N m = (x & 0xffffffffffffful) | 0x10000000000000ul;                                       \
    ulong##N high = select(m << as_ulong##N(e & 63), (ulong##N)0, convert_long##N(e >= 64));               \
    high = select(high, (ulong##N)0 - high, convert_long##N(as_long##N(x) < 0));                           \
    return select(high, as_ulong##N(convert_long##N(select((double##N)0.0, d, small))), small);            \
  }                                                                                                        \
  CR_DOUBLE_TO_INTS(N, SUF)

CR_EACH_WIDTH(CR_CONVERSIONS_F64)
#undef CR_CONVERSIONS_F64
#endif
#undef CR_EACH_WIDTH
#undef CR_AT_WIDTH_2
#undef CR_AT_WIDTH_4
#undef CR_AT_WIDTH_8
#undef CR_AT_WIDTH_16
#undef CR_WIDTH_2
#undef CR_WIDTH_4
#undef CR_WIDTH_8
#undef CR_WIDTH_16
#undef CR_DOUBLE_TO_INTS
#undef CR_DOUBLE_TO_INT
#undef CR_DOUBLE_TO_INT_WRAP
#undef CR_F32_ROUNDING
#undef CR_F32_RINT
#undef CR_F32_TO_INTS
#undef CR_F32_TO_SMALL_INT
#undef CR_F32_TO_WIDE_INT
#undef CR_F32_TO_WIDE_INT_R
#undef CR_F32_TO_INT_WRAP
#undef CR_INT_TO_F32_ODD
#undef CR_F32_TO_E5
#undef CR_F32_TO_F16
#undef CR_F16_TO_F32
#undef CR_F16_TO_F32_NAN0
#undef CR_F16C_FORMS
#undef CR_HB_FORMS
#undef CR_F16_HW_FORMS
#undef CR_F32_TO_E5_NAN
#undef CR_F32_TO_E5_BITS
#undef CR_F32_TO_E5_PROVEN
#undef CR_E5_NORMAL
#undef CR_E5_INF
#undef CR_E5_NAN
#undef CR_E5_SIGN
#undef CR_FLOAT_TO_INT

// A run of components of a vector, as the transpose network writes it: CR_SW4(v, 8, 9, a, b) is v.s89ab, one
// swizzle, which keeps LLVM from folding the network's stages back into per-column picks. Built with
// -D CR_ELEMENTWISE_SWIZZLES it lists the same components one by one (v.s8, v.s9, v.sa, v.sb): Oclgrind 21.10's
// uninitialized-value plugin crashes on the shuffles with undefined mask elements that clang -O0 emits for a
// vector literal made of sub-vector swizzles, and that run needs -O0 (-cl-opt-disable).
#ifdef CR_ELEMENTWISE_SWIZZLES
#define CR_SW2(v, a, b) v.s##a, v.s##b
#define CR_SW4(v, a, b, c, d) v.s##a, v.s##b, v.s##c, v.s##d
#define CR_SW8(v, a, b, c, d, e, f, g, h) v.s##a, v.s##b, v.s##c, v.s##d, v.s##e, v.s##f, v.s##g, v.s##h
#else
#define CR_SW2(v, a, b) v.s##a##b
#define CR_SW4(v, a, b, c, d) v.s##a##b##c##d
#define CR_SW8(v, a, b, c, d, e, f, g, h) v.s##a##b##c##d##e##f##g##h
#endif

// The sum of a vector's lanes, halves added first: tiled adds a tile column whose lanes share one
// compensation sum (Conversion::compensation) to it this way. Lane by lane under CR_ELEMENTWISE_SWIZZLES
// (as CR_SW2 above): Oclgrind's uninitialized-value check at -O0 takes the halves' shuffles for uninitialized values.
static inline uint cr_hsum2(uint2 x) { return x.s0 + x.s1; }
#ifdef CR_ELEMENTWISE_SWIZZLES
static inline uint cr_hsum4(uint4 x) { return x.s0 + x.s1 + x.s2 + x.s3; }
static inline uint cr_hsum8(uint8 x) { return cr_hsum4((uint4)(x.s0, x.s1, x.s2, x.s3)) + cr_hsum4((uint4)(x.s4, x.s5, x.s6, x.s7)); }
static inline uint cr_hsum16(uint16 x) {
  return cr_hsum8((uint8)(x.s0, x.s1, x.s2, x.s3, x.s4, x.s5, x.s6, x.s7)) + cr_hsum8((uint8)(x.s8, x.s9, x.sa, x.sb, x.sc, x.sd, x.se, x.sf));
}
#else
static inline uint cr_hsum4(uint4 x) { return cr_hsum2(x.lo + x.hi); }
static inline uint cr_hsum8(uint8 x) { return cr_hsum4(x.lo + x.hi); }
static inline uint cr_hsum16(uint16 x) { return cr_hsum8(x.lo + x.hi); }
#endif

// Lanes packed two to a byte, lane 2k in the low nibble of byte k (u4 and i4 destinations of tiled's
// transposes, whose lanes hold 4-bit values in 8 bits). Lane by lane under CR_ELEMENTWISE_SWIZZLES, as CR_SW2
// above: Oclgrind's uninitialized-value check at -O0 takes .even and .odd for uninitialized values.
#ifdef CR_ELEMENTWISE_SWIZZLES
static inline uchar cr_nib_byte(uchar lo, uchar hi) { return (uchar)((lo & 15u) | ((uint)hi << 4)); }
static inline uchar2 cr_nib_pack4(uchar4 n) { return (uchar2)(cr_nib_byte(n.s0, n.s1), cr_nib_byte(n.s2, n.s3)); }
static inline uchar4 cr_nib_pack8(uchar8 n) { return (uchar4)(cr_nib_byte(n.s0, n.s1), cr_nib_byte(n.s2, n.s3), cr_nib_byte(n.s4, n.s5), cr_nib_byte(n.s6, n.s7)); }
static inline uchar8 cr_nib_pack16(uchar16 n) {
  return (uchar8)(cr_nib_byte(n.s0, n.s1), cr_nib_byte(n.s2, n.s3), cr_nib_byte(n.s4, n.s5), cr_nib_byte(n.s6, n.s7), cr_nib_byte(n.s8, n.s9), cr_nib_byte(n.sa, n.sb), cr_nib_byte(n.sc, n.sd), cr_nib_byte(n.se, n.sf));
}
#else
static inline uchar2 cr_nib_pack4(uchar4 n) { return (n.even & (uchar)15) | (n.odd << 4); }
static inline uchar4 cr_nib_pack8(uchar8 n) { return (n.even & (uchar)15) | (n.odd << 4); }
static inline uchar8 cr_nib_pack16(uchar16 n) { return (n.even & (uchar)15) | (n.odd << 4); }
#endif

// The mirror image: V / 2 bytes unpacked to V lanes, the low nibble first (u4 0..15; i4 sign-extended,
// -8..7), the sources of tiled's vector forms. Each 32-bit word of 8 nibbles goes to 8 int lanes, shifted
// left so that lane k's nibble (bits 4k..4k+3) tops the lane, then right by 28, arithmetic for i4: one
// broadcast and two shifts per 8 lanes (vpsllvd and vpsrad on x86), and a conversion from the lanes'
// narrowed form back to 32 bits folds away (LLVM sees the 28 sign bits). Splitting the nibbles with byte
// operations took 1.09x (cold caches) to 1.3x (warm) this form's time in i4 -> f16 (b_fs_yx_fsv16 -> bfyx
// 8x64x56x56, perf/clreorder_ab): x86 has no byte shifts.
// (16 lanes: each word's 8 copies listed one by one: a vector literal of two 8-lane vectors crashes
// Oclgrind's uninitialized-value plugin at -O0, see CR_ELEMENTWISE_SWIZZLES below.)
#define CR_NIB_SHIFTS (int8)(28, 24, 20, 16, 12, 8, 4, 0)
#define CR_NIB_SHIFTS16 (int16)(28, 24, 20, 16, 12, 8, 4, 0, 28, 24, 20, 16, 12, 8, 4, 0)
#define CR_NIB_WORDS16(w) (int16)(w.s0, w.s0, w.s0, w.s0, w.s0, w.s0, w.s0, w.s0, w.s1, w.s1, w.s1, w.s1, w.s1, w.s1, w.s1, w.s1)
static inline uchar4 cr_nib_unpack_u4(uchar2 b) {
  return convert_uchar4(as_uint4((int4)((int)as_ushort(b)) << (int4)(28, 24, 20, 16)) >> 28u);
}
static inline uchar8 cr_nib_unpack_u8(uchar4 b) {
  return convert_uchar8(as_uint8((int8)(as_int(b)) << CR_NIB_SHIFTS) >> 28u);
}
static inline uchar16 cr_nib_unpack_u16(uchar8 b) {
  return convert_uchar16(as_uint16(CR_NIB_WORDS16(as_int2(b)) << CR_NIB_SHIFTS16) >> 28u);
}
static inline char4 cr_nib_unpack_i4(uchar2 b) {
  return convert_char4(((int4)((int)as_ushort(b)) << (int4)(28, 24, 20, 16)) >> 28);
}
static inline char8 cr_nib_unpack_i8(uchar4 b) {
  return convert_char8(((int8)(as_int(b)) << CR_NIB_SHIFTS) >> 28);
}
static inline char16 cr_nib_unpack_i16(uchar8 b) {
  return convert_char16((CR_NIB_WORDS16(as_int2(b)) << CR_NIB_SHIFTS16) >> 28);
}
#undef CR_NIB_SHIFTS
#undef CR_NIB_SHIFTS16
#undef CR_NIB_WORDS16

// The argument list every reorder kernel takes (the selector's contract, see KernelData): source and
// destination buffers and their element offsets, then the buffers of run-time parameter values. SRC_T,
// DST_T, IDX_T and CR_VALUE_ARGS come from each kernel's #defines.
// CR_KERNEL, CR_ITEM_ARG and CR_WORK_ITEM make a reorder kernel a kernel of its own; a batch (reorder_batch.cl)
// redefines them around its items, which become functions that take their work-item index as an argument.
#define CR_KERNEL __kernel
#define CR_ITEM_ARG
#define CR_WORK_ITEM get_global_id(0)
#define CR_REORDER_ARGS __global const SRC_T* restrict src, __global DST_T* restrict dst, ulong src_base, ulong dst_base CR_VALUE_ARGS CR_ITEM_ARG
// Work-item `i` of `count` (the global size is rounded up, so the tail returns), buffers moved to their offsets.
// src_wide / dst_wide: the source / destination base is 4-byte aligned, so loads / stores of 8- and 16-bit
// elements may go as uints.
// dst_a64: the destination is 64-byte aligned, so vector stores of up to 64 bytes at aligned offsets may stream.
#define CR_REORDER_BEGIN(i, count)                                                                         \
  const IDX_T i = (IDX_T)(CR_WORK_ITEM);                                                                   \
  if (i >= (count)) return;                                                                                \
  const bool src_wide = (src_base * sizeof(SRC_T)) % 4 == 0;                                               \
  const bool dst_wide = (dst_base * sizeof(DST_T)) % 4 == 0;                                               \
  src += src_base;                                                                                         \
  dst += dst_base;                                                                                         \
  const bool dst_a64 = ((ulong)dst & 63) == 0;

// u4 and i4: two elements to a byte, the one at the lower offset in the low nibble. CR_U4_AT / CR_I4_AT read
// element o of byte pointer b as its value (i4 sign-extended). A work-item writes the nibbles of a byte it
// alone owns (the generic and agnostic kernels take only destinations where it does: shared_bytes()) through
// CR_NIB_BEGIN, CR_NIB_STORE(o, v) for each of its elements in order and CR_NIB_END: the nibbles of one byte
// are gathered and written once, and a byte it fills only half of (padding left alone, a dense layout's
// ends) is read and merged.
#define CR_U4_AT(b, o) ((uchar)(((b)[(o) >> 1] >> (((o) & 1) * 4)) & 15))
#define CR_I4_AT(b, o) ((char)(as_char((uchar)((uint)(uchar)(b)[(o) >> 1] << (4 - ((o) & 1) * 4))) >> 4))
#define CR_NIB_BEGIN uint cr_nib = 0, cr_set = 0; long cr_byte = -1;
#define CR_NIB_FLUSH                                                                                       \
  if (cr_byte >= 0)                                                                                        \
    dst[cr_byte] = cr_set == 255u ? (DST_T)cr_nib : (DST_T)((((uint)(uchar)dst[cr_byte]) & ~cr_set) | cr_nib);
#define CR_NIB_STORE(o, v)                                                                                 \
  {                                                                                                        \
    const long cr_b = (long)(o) >> 1;                                                                      \
    const uint cr_shift = (uint)((o) & 1) * 4u;                                                            \
    if (cr_b != cr_byte) {                                                                                 \
      CR_NIB_FLUSH                                                                                         \
      cr_byte = cr_b;                                                                                      \
      cr_nib = cr_set = 0;                                                                                 \
    }                                                                                                      \
    cr_nib |= ((uint)(uchar)(v) & 15u) << cr_shift;                                                        \
    cr_set |= 15u << cr_shift;                                                                             \
  }
#define CR_NIB_END CR_NIB_FLUSH
// The byte of elements o (even) and o + 1 of a u4 or i4 destination from one work-item (tiled's tiles hold
// whole bytes): lo and hi its nibbles, w0 and w1 whether each is written; a nibble not written (kept
// padding, past the destination's end) keeps its old value.
#define CR_NIB_PAIR(o, lo, hi, w0, w1)                                                                     \
  {                                                                                                        \
    const bool cr_w0 = (w0), cr_w1 = (w1);                                                                 \
    if (cr_w0 || cr_w1) {                                                                                  \
      __global DST_T* cr_p = dst + ((o) >> 1);                                                             \
      const uint cr_v = ((uint)(uchar)(lo) & 15u) | (((uint)(uchar)(hi) & 15u) << 4);                      \
      const uint cr_m = (cr_w0 ? 15u : 0u) | (cr_w1 ? 240u : 0u);                                          \
      *cr_p = (DST_T)(cr_m == 255u ? cr_v : ((((uint)(uchar)*cr_p) & ~cr_m) | (cr_v & cr_m)));             \
    }                                                                                                      \
  }

// 8- and 16-bit vectors at any address, in one access (CPU tiles of tiled and staged: unaligned_vectors() in
// codegen.cpp). PoCL's vloadN and vstoreN of chars and shorts go element by element (LLVM reassembles the loads
// from 2- to 8-byte pieces, the stores stay scalar); a packed struct's member has alignment 1, so its access
// is defined at any address and a CPU makes it one unaligned instruction. The aligned form GPU tunings take
// (uints behind the base's run-time test, src_wide / dst_wide) leaves that test in every access of the tile,
// which LLVM does not hoist out of a loop this big: the unaligned form took 0.76-0.84x its time on 8-bit
// transposes (PoCL, warm). The element's own vector type: LLVM 14's optimizer (Oclgrind's) splits a store of
// a uint vector built lane by lane into uint stores claiming 4-byte alignment, wrong for 16-bit elements at an
// odd offset (through a bitcast too: local's stores, built so, keep the aligned form; lanes' or theirs with a
// zero LLVM cannot prove, impl_lanes.cpp).
#define CR_UNALIGNED_VECTORS(T)                                                                            \
  typedef struct __attribute__((packed)) { T##2 v; } cr_u_##T##2;                                         \
  typedef struct __attribute__((packed)) { T##4 v; } cr_u_##T##4;                                         \
  typedef struct __attribute__((packed)) { T##8 v; } cr_u_##T##8;                                         \
  typedef struct __attribute__((packed)) { T##16 v; } cr_u_##T##16;
CR_UNALIGNED_VECTORS(char)
CR_UNALIGNED_VECTORS(uchar)
CR_UNALIGNED_VECTORS(short)
CR_UNALIGNED_VECTORS(ushort)
#undef CR_UNALIGNED_VECTORS
// The vector of type VT (char16, ushort8 ...) at `p`, and a store of `x` there.
#define CR_LOADU(VT, p) (((__global const cr_u_##VT*)(p))->v)
#define CR_STOREU(VT, p, x) (((__global cr_u_##VT*)(p))->v = (x))

// A hint that the cache line holding `p` is read soon (CPU tiles of tiled, staged and lanes whose source rows lie
// 2 KiB or more apart: prefetches_rows() in codegen.cpp): such a tile reads as many rows as it has, each in
// another page, more streams than a core's hardware prefetcher follows, so its loads would wait on memory row
// by row. `locality` is Clang's (a constant: 3 into every level, x86's prefetcht0; 2 not into the first,
// prefetcht1), the generator's choice by where the data comes from (prefetch_stmt() in codegen.cpp).
// Compiling for a CPU target (PoCL: the host's triple), Clang's builtin becomes the instruction, where
// OpenCL's prefetch() does nothing; other targets get prefetch(): Oclgrind (SPIR) has no llvm.prefetch
// ("Undefined external function") but takes prefetch(). A hint never faults and changes no byte.
#if defined(__has_builtin) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__) || \
                               defined(__riscv) || defined(__powerpc64__))
#if __has_builtin(__builtin_prefetch)
#define CR_PREFETCH(p, locality) __builtin_prefetch((p), 0, locality)
#endif
#endif
#ifndef CR_PREFETCH
#define CR_PREFETCH(p, locality) prefetch((p), 1)
#endif

// Streaming (non-temporal) store of `v`, of vector type T, at `p` aligned to sizeof(T): the selector asks for
// it when a reorder's working set is bigger than the device's cache, so the destination would not stay cached
// anyway and a normal store would first read every line it writes. Clang-based compilers (PoCL) offer the
// builtin; elsewhere it is a plain aligned store. NVIDIA's compiler (driver 580) has the builtin but aborts on
// it inside these kernels ("Ranges are only for loads, calls and invokes!"), so it gets the plain store.
#if defined(__has_builtin) && !defined(__NV_CL_C_VERSION)
#if __has_builtin(__builtin_nontemporal_store)
#define CR_STREAM_STORE(T, v, p) __builtin_nontemporal_store((v), (__global T*)(p))
#endif
#endif
#ifndef CR_STREAM_STORE
#define CR_STREAM_STORE(T, v, p) (*(__global T*)(p) = (v))
#endif
