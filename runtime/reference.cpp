// Host reference reorder and element conversions. kernels_cl/common.cl mirrors the conversions bit for
// bit; tests/test_device.cpp compares the two.
#include "clreorder/reference.hpp"

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

template <class T>
T float_to_int(double f) {
  if (std::isnan(f)) return 0;
  double r = std::nearbyint(f);
  if (r <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

template <class T>
T int_to_int(Wide v) {
  if (v < static_cast<Wide>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (v > static_cast<Wide>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
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

Value load(DataType t, const void* p) {
  switch (t) {
    case DataType::f32: { float v; std::memcpy(&v, p, 4); return single(v); }
    case DataType::f16: { uint16_t v; std::memcpy(&v, p, 2); return single(f16_to_f32(v)); }
    case DataType::bf16: { uint16_t v; std::memcpy(&v, p, 2); return single(bf16_to_f32(v)); }
    case DataType::f64: { double v; std::memcpy(&v, p, 8); return {Value::dbl, v, 0, false, 0}; }
    case DataType::i8: return load_int<int8_t>(p);
    case DataType::u8: return load_int<uint8_t>(p);
    case DataType::i16: return load_int<int16_t>(p);
    case DataType::u16: return load_int<uint16_t>(p);
    case DataType::i32: return load_int<int32_t>(p);
    case DataType::u32: return load_int<uint32_t>(p);
    case DataType::i64: return load_int<int64_t>(p);
    case DataType::u64: return load_int<uint64_t>(p);
  }
  return {Value::integer, 0, 0, false, 0};
}

// An integer to f32, rounded to nearest even once (from its own 64-bit type, as the device's convert_float_rte).
float int_to_f32(const Value& v) {
  return v.is_unsigned ? static_cast<float>(static_cast<uint64_t>(v.i)) : static_cast<float>(static_cast<int64_t>(v.i));
}

// The value as f32: for the f32 destination (`nearest`) an f64 is rounded to nearest even; for f16 and bf16
// it is rounded to odd (toward zero, then the lowest bit set when inexact), so that rounding that f32 once
// more gives the correctly rounded result (f32 keeps at least two more bits). NaN keeps its sign and top
// payload bits, quiet, either way.
float to_single(const Value& v, bool nearest) {
  if (v.kind == Value::single) return v.sf;
  if (v.kind == Value::integer) return int_to_f32(v);
  if (nearest || std::isnan(v.f)) return f64_to_f32(v.f);
  float t = static_cast<float>(v.f);
  if (std::fabs(static_cast<double>(t)) > std::fabs(v.f)) t = std::nextafter(t, 0.0f);
  if (static_cast<double>(t) != v.f) t = float_of(bits_of(t) | 1u);
  return t;
}

template <class T>
void store_int(const Value& v, void* p) {
  T out = v.kind == Value::integer ? int_to_int<T>(v.i) : float_to_int<T>(v.f);
  std::memcpy(p, &out, sizeof(T));
}

}  // namespace

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

float f64_to_f32(double d) {
  uint64_t x;
  std::memcpy(&x, &d, 8);
  if ((x & 0x7fffffffffffffffull) > 0x7ff0000000000000ull)  // NaN: quiet, sign and top 22 payload bits kept
    return float_of(static_cast<uint32_t>((x >> 32) & 0x80000000u) | 0x7fc00000u |
                    static_cast<uint32_t>((x >> 29) & 0x3fffffu));
  return static_cast<float>(d);  // IEEE round to nearest even
}

void convert_element(DataType from, const void* src, DataType to, void* dst) {
  if (from == to) {
    std::memcpy(dst, src, size_of(to));
    return;
  }
  const Value v = load(from, src);
  switch (to) {
    case DataType::f32: { const float f = to_single(v, true); std::memcpy(dst, &f, 4); return; }
    case DataType::f16: { const uint16_t h = f32_to_f16(to_single(v, false)); std::memcpy(dst, &h, 2); return; }
    case DataType::bf16: { const uint16_t h = f32_to_bf16(to_single(v, false)); std::memcpy(dst, &h, 2); return; }
    case DataType::f64: {
      const double d = v.kind != Value::integer ? v.f
                       : v.is_unsigned ? static_cast<double>(static_cast<uint64_t>(v.i)) : static_cast<double>(static_cast<int64_t>(v.i));
      std::memcpy(dst, &d, 8);
      return;
    }
    case DataType::i8: store_int<int8_t>(v, dst); return;
    case DataType::u8: store_int<uint8_t>(v, dst); return;
    case DataType::i16: store_int<int16_t>(v, dst); return;
    case DataType::u16: store_int<uint16_t>(v, dst); return;
    case DataType::i32: store_int<int32_t>(v, dst); return;
    case DataType::u32: store_int<uint32_t>(v, dst); return;
    case DataType::i64: store_int<int64_t>(v, dst); return;
    case DataType::u64: store_int<uint64_t>(v, dst); return;
  }
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

void reference_reorder(const Layout& src, const void* src_data, const Layout& dst, void* dst_data) {
  check_compatible(src, dst);
  const IndexPlan& sp = src.plan();
  const IndexPlan& dp = dst.plan();
  const size_t ss = size_of(src.data_type()), ds = size_of(dst.data_type());
  const auto* s = static_cast<const uint8_t*>(src_data);
  auto* d = static_cast<uint8_t*>(dst_data);
  int64_t coord[8], scoord[8], off;
  const bool reshape = src.dims() != dst.dims();
  for (int64_t p = 0; p < dp.digit_space; ++p) {
    bool owned = true;
    const bool valid = dp.decode(p, &off, coord, &owned);
    if (!owned) continue;  // another tensor's slot (TPU channels outside this one)
    uint8_t* out = d + off * static_cast<int64_t>(ds);
    if (valid && reshape) {
      // Elements correspond by their canonical row-major index (OpenVINO's reorder between ranks).
      int64_t linear = 0;
      for (int a = 0; a < dst.rank(); ++a) linear = linear * dst.dims()[static_cast<size_t>(a)] + coord[a];
      for (int a = src.rank(); a-- > 0;) {
        scoord[a] = linear % src.dims()[static_cast<size_t>(a)];
        linear /= src.dims()[static_cast<size_t>(a)];
      }
    }
    if (valid) convert_element(src.data_type(), s + sp.offset(reshape ? scoord : coord) * static_cast<int64_t>(ss), dst.data_type(), out);
    else std::memset(out, 0, ds);
  }
}

std::vector<uint8_t> make_pattern(const Layout& layout) {
  std::vector<uint8_t> buf(static_cast<size_t>(layout.bytes()), 0);
  const size_t es = size_of(layout.data_type());
  const int r = layout.rank();
  Dims c(r, 0);
  for (int64_t n = 0, total = layout.logical_elements(); n < total; ++n) {
    uint8_t* p = buf.data() + layout.plan().offset(c.data()) * static_cast<int64_t>(es);
    switch (layout.data_type()) {
      case DataType::f32: { float v = static_cast<float>(n % (int64_t(1) << 24)); std::memcpy(p, &v, 4); break; }
      case DataType::f16: { uint16_t v = f32_to_f16(static_cast<float>(n % 2048)); std::memcpy(p, &v, 2); break; }
      case DataType::bf16: { uint16_t v = f32_to_bf16(static_cast<float>(n % 256)); std::memcpy(p, &v, 2); break; }
      case DataType::f64: { double v = static_cast<double>(n); std::memcpy(p, &v, 8); break; }
      case DataType::i8: case DataType::u8: *p = static_cast<uint8_t>(n & 0xff); break;
      case DataType::i16: case DataType::u16: { uint16_t v = static_cast<uint16_t>(n); std::memcpy(p, &v, 2); break; }
      case DataType::i32: case DataType::u32: { uint32_t v = static_cast<uint32_t>(n); std::memcpy(p, &v, 4); break; }
      case DataType::i64: case DataType::u64: { int64_t v = n; std::memcpy(p, &v, 8); break; }
    }
    for (int a = r - 1; a >= 0; --a) {
      if (++c[a] < layout.dims()[a]) break;
      c[a] = 0;
    }
  }
  return buf;
}

}  // namespace clreorder
