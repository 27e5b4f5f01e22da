// Host reference reorder and element conversions. kernels_cl/convert.cl mirrors the conversions bit for
// bit; tests/test_device.cpp compares the two.
#include "clreorder/reference.hpp"

#include <cmath>
#include <cstring>
#include <limits>

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

template <class T>
T float_to_int(float f) {
  if (std::isnan(f)) return 0;
  double r = std::nearbyint(static_cast<double>(f));
  if (r <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

template <class T>
T int_to_int(int64_t v) {
  if (v < static_cast<int64_t>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (v > static_cast<int64_t>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// An element read into the widest form that keeps it exact.
struct Value {
  bool is_float;
  float f;
  int64_t i;
};

Value load(DataType t, const void* p) {
  switch (t) {
    case DataType::f32: { float v; std::memcpy(&v, p, 4); return {true, v, 0}; }
    case DataType::f16: { uint16_t v; std::memcpy(&v, p, 2); return {true, f16_to_f32(v), 0}; }
    case DataType::bf16: { uint16_t v; std::memcpy(&v, p, 2); return {true, bf16_to_f32(v), 0}; }
    case DataType::i8: return {false, 0, *static_cast<const int8_t*>(p)};
    case DataType::u8: return {false, 0, *static_cast<const uint8_t*>(p)};
    case DataType::i32: { int32_t v; std::memcpy(&v, p, 4); return {false, 0, v}; }
    case DataType::i64: { int64_t v; std::memcpy(&v, p, 8); return {false, 0, v}; }
  }
  return {false, 0, 0};
}

template <class T>
void store_int(const Value& v, void* p) {
  T out = v.is_float ? float_to_int<T>(v.f) : int_to_int<T>(v.i);
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

void convert_element(DataType from, const void* src, DataType to, void* dst) {
  if (from == to) {
    std::memcpy(dst, src, size_of(to));
    return;
  }
  Value v = load(from, src);
  switch (to) {
    case DataType::f32: case DataType::f16: case DataType::bf16: {
      float f = v.is_float ? v.f : static_cast<float>(v.i);
      if (to == DataType::f32) std::memcpy(dst, &f, 4);
      else {
        uint16_t h = to == DataType::f16 ? f32_to_f16(f) : f32_to_bf16(f);
        std::memcpy(dst, &h, 2);
      }
      return;
    }
    case DataType::i8: store_int<int8_t>(v, dst); return;
    case DataType::u8: store_int<uint8_t>(v, dst); return;
    case DataType::i32: store_int<int32_t>(v, dst); return;
    case DataType::i64: store_int<int64_t>(v, dst); return;
  }
}

void check_compatible(const Layout& src, const Layout& dst) {
  auto kinds_ok = [&] {
    FormatKind a = src.format().kind(), b = dst.format().kind();
    if (a == b) return true;
    return (a == FormatKind::data && b == FormatKind::weights) || (a == FormatKind::weights && b == FormatKind::data);
  };
  if (src.rank() != dst.rank() || src.dims() != dst.dims() || !kinds_ok())
    throw Error("cannot reorder " + src.describe() + " (" + to_string(src.format().kind()) + ", axes " +
                src.format().axes() + ") into " + dst.describe() + " (" + to_string(dst.format().kind()) +
                ", axes " + dst.format().axes() + "): ranks, dims and kinds must match (data <-> data or "
                "weights, grouped <-> grouped)");
}

void reference_reorder(const Layout& src, const void* src_data, const Layout& dst, void* dst_data) {
  check_compatible(src, dst);
  const IndexPlan& sp = src.plan();
  const IndexPlan& dp = dst.plan();
  const size_t ss = size_of(src.data_type()), ds = size_of(dst.data_type());
  const auto* s = static_cast<const uint8_t*>(src_data);
  auto* d = static_cast<uint8_t*>(dst_data);
  int64_t coord[8], off;
  for (int64_t p = 0; p < dp.digit_space; ++p) {
    bool valid = dp.decode(p, &off, coord);
    uint8_t* out = d + off * static_cast<int64_t>(ds);
    if (valid) convert_element(src.data_type(), s + sp.offset(coord) * static_cast<int64_t>(ss), dst.data_type(), out);
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
      case DataType::i8: case DataType::u8: *p = static_cast<uint8_t>(n & 0xff); break;
      case DataType::i32: { uint32_t v = static_cast<uint32_t>(n); std::memcpy(p, &v, 4); break; }
      case DataType::i64: { int64_t v = n; std::memcpy(p, &v, 8); break; }
    }
    for (int a = r - 1; a >= 0; --a) {
      if (++c[a] < layout.dims()[a]) break;
      c[a] = 0;
    }
  }
  return buf;
}

}  // namespace clreorder
