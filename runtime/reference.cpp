// Host reference reorder and element conversions. kernels_cl/common.cl mirrors the conversions bit for
// bit; tests/test_device.cpp compares the two.
#include "clreorder/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "clreorder/error.hpp"

namespace clreorder {

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

__extension__ typedef __int128 Wide;  // holds every i64 and u64 value, so saturation is one comparison

// The low bits of an integer, as a C cast between integers (two's complement).
template <class T>
T wrap_to(uint64_t v) {
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(v));
}

template <class T>
T float_to_int(double f, const Conversion& conv) {
  if (std::isnan(f)) return 0;
  const double r = conv.rounding == Rounding::toward_zero ? std::trunc(f) : std::nearbyint(f);
  if (conv.overflow == Overflow::wrap) {
    // The integral r modulo 2^64 (fmod is exact), negated modulo 2^64 when negative; infinities give 0.
    if (std::isinf(r)) return 0;
    const uint64_t low = static_cast<uint64_t>(std::fmod(std::fabs(r), 18446744073709551616.0));
    return wrap_to<T>(r < 0 ? uint64_t{0} - low : low);
  }
  if (r <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

template <class T>
T int_to_int(Wide v, const Conversion& conv) {
  if (conv.overflow == Overflow::wrap) return wrap_to<T>(static_cast<uint64_t>(v));
  if (v < static_cast<Wide>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (v > static_cast<Wide>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// `t`, the nearest-even rounding of the exact value `x`, moved toward zero when it rounded away from it: `x`
// rounded toward zero (a finite value that overflowed to infinity becomes the largest finite one).
template <class F>
F toward_zero(F t, long double x) {
  if (std::fabs(static_cast<long double>(t)) > std::fabs(x)) t = std::nextafter(t, F(0));
  return t;
}

// An element read into the form that keeps it exact: f32, f16 and bf16 as float; f64 as double; integers
// as a 128-bit integer.
struct Value {
  enum Kind { single, dbl, integer } kind;
  double f;   // dbl
  Wide i;
  bool is_unsigned;  // integer: from an unsigned type (its f32 rounding starts from the unsigned value)
  float sf;   // single, kept as float: a float -> double -> float round trip would quiet a signaling NaN
};

template <class T>
Value load_int(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return {Value::integer, 0, static_cast<Wide>(v), std::is_unsigned<T>::value, 0};
}

Value single(float f) { return {Value::single, static_cast<double>(f), 0, false, f}; }

// The value of the low 4 bits of `bits` as a u4 (0..15) or an i4 (-8..7, sign-extended).
int nibble_value(DataType t, unsigned bits) {
  const int n = static_cast<int>(bits & 15u);
  return t == DataType::i4 && n >= 8 ? n - 16 : n;
}

Value load(DataType t, const void* p) {
  switch (t) {
    case DataType::f32: { float v; std::memcpy(&v, p, 4); return single(v); }
    case DataType::f16: { uint16_t v; std::memcpy(&v, p, 2); return single(f16_to_f32(v)); }
    case DataType::bf16: { uint16_t v; std::memcpy(&v, p, 2); return single(bf16_to_f32(v)); }
    case DataType::f64: { double v; std::memcpy(&v, p, 8); return {Value::dbl, v, 0, false, 0}; }
    case DataType::f8e4m3: return single(f8e4m3_to_f32(*static_cast<const uint8_t*>(p)));
    case DataType::f8e5m2: return single(f8e5m2_to_f32(*static_cast<const uint8_t*>(p)));
    case DataType::i8: return load_int<int8_t>(p);
    case DataType::u8: return load_int<uint8_t>(p);
    case DataType::i16: return load_int<int16_t>(p);
    case DataType::u16: return load_int<uint16_t>(p);
    case DataType::i32: return load_int<int32_t>(p);
    case DataType::u32: return load_int<uint32_t>(p);
    case DataType::i64: return load_int<int64_t>(p);
    case DataType::u64: return load_int<uint64_t>(p);
    case DataType::u4: case DataType::i4:
      return {Value::integer, 0, nibble_value(t, *static_cast<const uint8_t*>(p)), t == DataType::u4, 0};
  }
  return {Value::integer, 0, 0, false, 0};
}

// An integer or an f64 as an exact long double (its 64-bit mantissa holds every i64 and u64, and every f64).
long double exact(const Value& v) {
  if (v.kind == Value::integer)
    return v.is_unsigned ? static_cast<long double>(static_cast<uint64_t>(v.i)) : static_cast<long double>(static_cast<int64_t>(v.i));
  return v.kind == Value::dbl ? static_cast<long double>(v.f) : static_cast<long double>(v.sf);
}

// The value as f32, rounded once. Where it is final (`final`: the f32 destination) it rounds by `r`; where f16
// or bf16 round it once more, to nearest even it is rounded to odd (toward zero, then the lowest bit set when
// inexact), so that the second rounding gives the correctly rounded result (f32 keeps at least two more
// bits), and toward zero it is truncated (truncating twice is truncating once). NaN keeps its sign and top
// payload bits, quiet, either way.
float to_single(const Value& v, bool final, Rounding r) {
  if (v.kind == Value::single) return v.sf;
  if (v.kind == Value::dbl && std::isnan(v.f)) return f64_to_f32(v.f);
  const long double x = exact(v);
  const float nearest = static_cast<float>(x);  // IEEE round to nearest even from the exact value
  if (final && r == Rounding::nearest_even) return nearest;
  const float t = toward_zero(nearest, x);
  if (r == Rounding::toward_zero || static_cast<long double>(t) == x) return t;
  return float_of(bits_of(t) | 1u);
}

template <class T>
void store_int(const Value& v, void* p, const Conversion& conv) {
  T out = v.kind == Value::integer ? int_to_int<T>(v.i, conv) : float_to_int<T>(v.f, conv);
  std::memcpy(p, &out, sizeof(T));
}

// A 4-bit integer (T: int8_t for i4, uint8_t for u4) as one byte holding its value: the 8-bit result of the
// same conversion clamped (saturating the 8-bit value first changes nothing: the range is inside it) or
// reduced to its low 4 bits, sign-extended for i4 (wrapping: the low 4 bits of the low 8 bits).
template <class T>
void store_nibble(const Value& v, void* p, const Conversion& conv) {
  T out;
  store_int<T>(v, &out, conv);
  const int lo = std::is_signed<T>::value ? -8 : 0, hi = lo + 15;
  const int n = conv.overflow == Overflow::wrap ? nibble_value(std::is_signed<T>::value ? DataType::i4 : DataType::u4, static_cast<uint8_t>(out))
                                                : std::min(std::max(static_cast<int>(out), lo), hi);
  *static_cast<uint8_t*>(p) = static_cast<uint8_t>(n);
}

// An OCP 8-bit float: `mbits` mantissa bits, smallest normal exponent `emin`, largest finite code `max_code`.
// The host encodes by scaling to an integer and rounding it with the C library (the device code works on
// bit patterns instead, so the two are independent derivations of one rounding).
struct Small {
  int mbits, emin;
  uint8_t max_code;
};
constexpr Small e4m3{3, -6, 0x7e}, e5m2{2, -14, 0x7b};

// |f| (finite) as a code of `t`, rounded by `rtz`; codes past max_code mean overflow. Scaling by powers of two
// is exact in double, so the one rounding is nearbyint's (to nearest even) or trunc's.
uint32_t small_code(double a, const Small& t, bool rtz) {
  const int e = a < std::ldexp(1.0, t.emin) ? t.emin : std::ilogb(a);  // subnormals share emin's scale
  const double q = std::ldexp(a, t.mbits - e), r = rtz ? std::trunc(q) : std::nearbyint(q);
  const uint32_t rounded = static_cast<uint32_t>(r);  // < 2^(mbits + 1); 2^mbits * 2 carries into e + 1
  return a < std::ldexp(1.0, t.emin) ? rounded : (static_cast<uint32_t>(e - t.emin + 1) << t.mbits) + rounded - (1u << t.mbits);
}

float small_value(uint8_t b, const Small& t) {
  const int field = (b & 0x7f) >> t.mbits, m = b & ((1 << t.mbits) - 1);
  const double v = field == 0 ? std::ldexp(m, t.emin - t.mbits) : std::ldexp((1 << t.mbits) + m, field - 1 + t.emin - t.mbits);
  return static_cast<float>(b & 0x80 ? -v : v);
}

// Calls f(coordinate, n) for every logical coordinate of `dims`, n counting them row-major.
template <typename F>
void for_each_logical(const Dims& dims, F f) {
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  Dims c(dims.size(), 0);
  for (int64_t n = 0; n < total; ++n) {
    f(c.data(), n);
    for (size_t a = dims.size(); a-- > 0;) {
      if (++c[a] < dims[a]) break;
      c[a] = 0;
    }
  }
}

}  // namespace

uint8_t f32_to_f8e4m3(float f, bool toward_zero) {
  const uint8_t sign = static_cast<uint8_t>((bits_of(f) >> 24) & 0x80u);
  if (!std::isfinite(f)) return sign | 0x7f;
  const uint32_t code = small_code(std::fabs(static_cast<double>(f)), e4m3, toward_zero);
  return static_cast<uint8_t>(sign | (code <= e4m3.max_code ? code : toward_zero ? e4m3.max_code : 0x7fu));
}

float f8e4m3_to_f32(uint8_t b) {
  if ((b & 0x7f) == 0x7f) return float_of((b & 0x80u) << 24 | 0x7fc00000u);
  return small_value(b, e4m3);
}

uint8_t f32_to_f8e5m2(float f, bool toward_zero) {
  const uint32_t x = bits_of(f);
  const uint8_t sign = static_cast<uint8_t>((x >> 24) & 0x80u);
  if (std::isnan(f)) return static_cast<uint8_t>(sign | 0x7e | ((x >> 21) & 1u));
  if (std::isinf(f)) return sign | 0x7c;
  const uint32_t code = small_code(std::fabs(static_cast<double>(f)), e5m2, toward_zero);
  return static_cast<uint8_t>(sign | (code <= e5m2.max_code ? code : toward_zero ? e5m2.max_code : 0x7cu));
}

float f8e5m2_to_f32(uint8_t b) {
  if ((b & 0x7c) == 0x7c)  // infinities and NaN: f16's, payload kept
    return float_of((b & 0x80u) << 24 | 0x7f800000u | (b & 0x3u) << 21);
  return small_value(b, e5m2);
}

uint16_t f32_to_f16(float f) {
  uint32_t x = bits_of(f);
  uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (ax >= 0x38800000u) {                                              // normal half
    uint32_t m = ax - 0x38000000u;                                      // rebias exponent 127 -> 15
    m += 0xfffu + ((m >> 13) & 1u);
    return static_cast<uint16_t>(sign | (m >> 13));
  }
  if (ax <= 0x33000000u) return static_cast<uint16_t>(sign);  // <= 2^-25 rounds to zero (tie to even)
  uint32_t e = ax >> 23, mant = (ax & 0x7fffffu) | 0x800000u, shift = 126u - e;
  uint32_t r = mant >> shift, rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (r & 1u))) ++r;
  return static_cast<uint16_t>(sign | r);
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1fu) return float_of(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    if (m == 0) return float_of(sign);
    e = 113;
    while (!(m & 0x400u)) {
      m <<= 1;
      --e;
    }
    return float_of(sign | (e << 23) | ((m & 0x3ffu) << 13));
  }
  return float_of(sign | ((e + 112u) << 23) | (m << 13));
}

uint16_t f32_to_bf16(float f) {
  uint32_t x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

float bf16_to_f32(uint16_t h) { return float_of(static_cast<uint32_t>(h) << 16); }

uint16_t f32_to_f16_rtz(float f) {
  const uint32_t x = bits_of(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return f32_to_f16(f);                                 // NaN as to nearest
  if (ax == 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u);        // infinities stay
  if (ax >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7bffu);        // from 2^16: the largest half
  if (ax >= 0x38800000u) return static_cast<uint16_t>(sign | ((ax - 0x38000000u) >> 13));
  return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::ldexp(std::fabs(f), 24)));  // subnormal: truncated
}

uint16_t f32_to_bf16_rtz(float f) {
  const uint32_t x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return f32_to_bf16(f);
  return static_cast<uint16_t>(x >> 16);
}

float f64_to_f32(double d) {
  uint64_t x;
  std::memcpy(&x, &d, 8);
  if ((x & 0x7fffffffffffffffull) > 0x7ff0000000000000ull)  // NaN: quiet, sign and top 22 payload bits kept
    return float_of(static_cast<uint32_t>((x >> 32) & 0x80000000u) | 0x7fc00000u |
                    static_cast<uint32_t>((x >> 29) & 0x3fffffu));
  return static_cast<float>(d);  // IEEE round to nearest even
}

void convert_element(DataType from, const void* src, DataType to, void* dst, const Conversion& conv) {
  if (from == to) {
    std::memcpy(dst, src, unit_bytes(to));
    return;
  }
  const Value v = load(from, src);
  const Rounding r = conv.rounding;
  const bool rtz = r == Rounding::toward_zero;
  switch (to) {
    case DataType::f32: { const float f = to_single(v, true, r); std::memcpy(dst, &f, 4); return; }
    case DataType::f16: {
      const float f = to_single(v, false, r);
      const uint16_t h = rtz ? f32_to_f16_rtz(f) : f32_to_f16(f);
      std::memcpy(dst, &h, 2);
      return;
    }
    case DataType::bf16: {
      const float f = to_single(v, false, r);
      const uint16_t h = rtz ? f32_to_bf16_rtz(f) : f32_to_bf16(f);
      std::memcpy(dst, &h, 2);
      return;
    }
    case DataType::f8e4m3: *static_cast<uint8_t*>(dst) = f32_to_f8e4m3(to_single(v, false, r), rtz); return;
    case DataType::f8e5m2: *static_cast<uint8_t*>(dst) = f32_to_f8e5m2(to_single(v, false, r), rtz); return;
    case DataType::f64: {
      double d = v.kind == Value::dbl ? v.f : v.kind == Value::single ? static_cast<double>(v.sf) : static_cast<double>(exact(v));
      if (rtz && v.kind == Value::integer) d = toward_zero(d, exact(v));
      std::memcpy(dst, &d, 8);
      return;
    }
    case DataType::i8: store_int<int8_t>(v, dst, conv); return;
    case DataType::u8: store_int<uint8_t>(v, dst, conv); return;
    case DataType::i16: store_int<int16_t>(v, dst, conv); return;
    case DataType::u16: store_int<uint16_t>(v, dst, conv); return;
    case DataType::i32: store_int<int32_t>(v, dst, conv); return;
    case DataType::u32: store_int<uint32_t>(v, dst, conv); return;
    case DataType::i64: store_int<int64_t>(v, dst, conv); return;
    case DataType::u64: store_int<uint64_t>(v, dst, conv); return;
    case DataType::u4: store_nibble<uint8_t>(v, dst, conv); return;
    case DataType::i4: store_nibble<int8_t>(v, dst, conv); return;
  }
}

void read_element(DataType t, const void* data, int64_t offset, void* out) {
  const auto* b = static_cast<const uint8_t*>(data);
  if (!is_nibble(t)) {
    std::memcpy(out, b + offset * static_cast<int64_t>(size_of(t)), size_of(t));
    return;
  }
  *static_cast<uint8_t*>(out) = static_cast<uint8_t>(nibble_value(t, b[offset >> 1] >> (4 * (offset & 1))));
}

void write_element(DataType t, void* data, int64_t offset, const void* in) {
  auto* b = static_cast<uint8_t*>(data);
  if (!is_nibble(t)) {
    std::memcpy(b + offset * static_cast<int64_t>(size_of(t)), in, size_of(t));
    return;
  }
  const int shift = 4 * static_cast<int>(offset & 1);
  uint8_t& byte = b[offset >> 1];
  byte = static_cast<uint8_t>((byte & ~(15 << shift)) | ((*static_cast<const uint8_t*>(in) & 15) << shift));
}

float apply_operation(Param p, float x, float a) {
  // One statement per operation: each result is rounded to f32 before the next (no contraction), as the
  // kernels evaluate it (kernels_cl/common.cl turns FP_CONTRACT off).
  switch (applied_operation(p)) {
    case '-': return x - a;
    case '*': return x * a;
    default: return x + a;
  }
}

float apply_params(const Conversion& conv, float x, const int64_t* coord, const Dims& dims) {
  for (Param p : all_params()) {
    const ParamValues& v = conv.param(p);
    if (v.present()) x = apply_operation(p, x, operand_of(p, v.values[static_cast<size_t>(v.index(coord, dims))]));
  }
  return std::isnan(x) ? float_of(0x7fc00000u) : x;
}

void convert_value(DataType from, const void* in, DataType to, void* out, const Conversion& conv, const int64_t* coord,
                   const Dims& dims) {
  if (!conv.has_arithmetic()) return convert_element(from, in, to, out, conv);
  float x;
  convert_element(from, in, DataType::f32, &x, Conversion{});
  x = apply_params(conv, x, coord, dims);
  convert_element(DataType::f32, &x, to, out, conv);
}

void check_compatible(const Layout& src, const Layout& dst) {
  auto kinds_ok = [&] {
    FormatKind a = src.format().kind(), b = dst.format().kind();
    if (a == b) return true;
    return (a == FormatKind::data && b == FormatKind::weights) || (a == FormatKind::weights && b == FormatKind::data);
  };
  if (!kinds_ok())
    throw Error("cannot reorder " + src.describe() + " (" + to_string(src.format().kind()) + ", axes " +
                src.format().axes() + ") into " + dst.describe() + " (" + to_string(dst.format().kind()) +
                ", axes " + dst.format().axes() + "): kinds must match (data <-> data or weights, grouped <-> grouped)");
  if (src.logical_elements() != dst.logical_elements())
    throw Error("cannot reorder " + src.describe() + " into " + dst.describe() + ": shapes " +
                dims_to_string(src.dims(), ",") + " and " + dims_to_string(dst.dims(), ",") + " hold " +
                std::to_string(src.logical_elements()) + " and " + std::to_string(dst.logical_elements()) +
                " elements (a reshape keeps the count)");
  if (!dst.overlap().empty())
    throw Error("cannot reorder into " + dst.describe() + ": its " + dst.overlap() +
                ", so the result would depend on the order of writes");
}

void reference_reorder(const Layout& src, const void* src_data, const Layout& dst, void* dst_data, const Conversion& conv) {
  check_compatible(src, dst);
  const IndexPlan& sp = src.plan();
  const IndexPlan& dp = dst.plan();
  const DataType st = src.data_type(), dt = dst.data_type();
  int64_t coord[8], scoord[8], off;
  const bool reshape = src.dims() != dst.dims();
  check_params(conv, dst);
  for (Param q : all_params())
    if (conv.param(q).from_buffer && conv.param(q).values.empty())
      throw Error(std::string("the host reference needs the values of ") + to_string(q) + ", which a device buffer holds");
  uint8_t in[8], out[8];
  for (int64_t p = 0; p < dp.digit_space; ++p) {
    bool owned = true;
    const bool valid = dp.decode(p, &off, coord, &owned);
    if (!owned) continue;  // another tensor's slot (TPU channels outside this one)
    if (valid && reshape) {
      // Elements correspond by their canonical row-major index (OpenVINO's reorder between ranks).
      int64_t linear = 0;
      for (int a = 0; a < dst.rank(); ++a) linear = linear * dst.dims()[static_cast<size_t>(a)] + coord[a];
      for (int a = src.rank(); a-- > 0;) {
        scoord[a] = linear % src.dims()[static_cast<size_t>(a)];
        linear /= src.dims()[static_cast<size_t>(a)];
      }
    }
    if (valid) {
      read_element(st, src_data, sp.offset(reshape ? scoord : coord), in);
      convert_value(st, in, dt, out, conv, coord, dst.dims());
    } else if (conv.padding == Padding::zero) {
      std::memset(out, 0, sizeof out);
    } else {
      continue;
    }
    write_element(dt, dst_data, off, out);
  }
}

std::vector<int32_t> reference_compensation(const Layout& dst, const void* dst_data, const Compensation& comp) {
  Conversion conv;
  conv.compensation = comp;
  check_params(conv, dst);
  std::vector<uint32_t> sums(static_cast<size_t>(comp.count(dst.dims())), 0);
  for_each_logical(dst.dims(), [&](const int64_t* c, int64_t) {
    uint8_t element[4];
    int64_t v;  // exact: check_params() allows integer types of at most 32 bits
    read_element(dst.data_type(), dst_data, dst.plan().offset(c), element);
    convert_element(dst.data_type(), element, DataType::i64, &v);
    sums[static_cast<size_t>(comp.index(c, dst.dims()))] += static_cast<uint32_t>(v);  // modulo 2^32
  });
  return std::vector<int32_t>(sums.begin(), sums.end());
}

std::vector<uint8_t> make_pattern(const Layout& layout) {
  std::vector<uint8_t> buf(static_cast<size_t>(layout.bytes()), 0);
  for_each_logical(layout.dims(), [&](const int64_t* c, int64_t n) {
    uint8_t p[8];
    switch (layout.data_type()) {
      case DataType::f32: { float v = static_cast<float>(n % (int64_t(1) << 24)); std::memcpy(p, &v, 4); break; }
      case DataType::f16: { uint16_t v = f32_to_f16(static_cast<float>(n % 2048)); std::memcpy(p, &v, 2); break; }
      case DataType::bf16: { uint16_t v = f32_to_bf16(static_cast<float>(n % 256)); std::memcpy(p, &v, 2); break; }
      case DataType::f64: { double v = static_cast<double>(n); std::memcpy(p, &v, 8); break; }
      case DataType::f8e4m3: *p = f32_to_f8e4m3(static_cast<float>(n % 16)); break;
      case DataType::f8e5m2: *p = f32_to_f8e5m2(static_cast<float>(n % 8)); break;
      case DataType::i8: case DataType::u8: case DataType::i4: case DataType::u4: *p = static_cast<uint8_t>(n & 0xff); break;
      case DataType::i16: case DataType::u16: { uint16_t v = static_cast<uint16_t>(n); std::memcpy(p, &v, 2); break; }
      case DataType::i32: case DataType::u32: { uint32_t v = static_cast<uint32_t>(n); std::memcpy(p, &v, 4); break; }
      case DataType::i64: case DataType::u64: { int64_t v = n; std::memcpy(p, &v, 8); break; }
    }
    write_element(layout.data_type(), buf.data(), layout.plan().offset(c), p);
  });
  return buf;
}

}  // namespace clreorder
