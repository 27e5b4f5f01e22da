// Layouts and their index plans.
#include "clreorder/layout.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>

#include "clreorder/error.hpp"

namespace clreorder {

namespace {

constexpr int64_t kMaxElements = int64_t(1) << 50;  // far above any device, far below int64 overflow

int64_t checked_mul(int64_t a, int64_t b, const std::string& what) {
  if (a != 0 && b > kMaxElements / a) throw Error(what + " is too large (over 2^50 elements)");
  return a * b;
}

// v rounded up to a multiple of m, both at most kMaxElements (so v + m cannot overflow).
int64_t round_up(int64_t v, int64_t m, const std::string& what) {
  if (m > kMaxElements) throw Error(what + ": its blocks and alignment need a multiple of " + std::to_string(m) +
                                    ", over 2^50 elements");
  const int64_t r = (v + m - 1) / m * m;
  if (r > kMaxElements) throw Error(what + " is too large (over 2^50 elements)");
  return r;
}

// Why two digit tuples of `p` may share an offset ("" when none do). Sufficient test first: ordered by
// stride, each digit steps past everything the finer ones span. Otherwise (interleaved strides such as
// (3 x 2) and (2 x 3)) the offsets are compared exactly when there are few enough.
std::string overlap_of(const IndexPlan& p, const std::string& given) {
  std::vector<PlanDigit> ds;
  for (const PlanDigit& g : p.digits)
    if (g.extent > 1) ds.push_back(g);
  std::sort(ds.begin(), ds.end(), [](const PlanDigit& x, const PlanDigit& y) { return x.stride < y.stride; });
  int64_t span = 1;  // offsets covered by the finer digits: [0, span)
  bool nested = true;
  for (const PlanDigit& g : ds) {
    if (g.stride == 0) return given + " repeat elements (stride 0 on an axis of more than one element)";
    if (g.stride < span) nested = false;
    span = std::max(span, (g.extent - 1) * g.stride + span);
  }
  if (nested) return "";
  constexpr int64_t kExactLimit = int64_t(1) << 22;
  if (p.digit_space > kExactLimit)
    return given + " interleave, and " + std::to_string(p.digit_space) +
           " elements are too many to prove that none share memory";
  std::vector<int64_t> offsets(static_cast<size_t>(p.digit_space), 0);
  int64_t coord[8];
  for (int64_t t = 0; t < p.digit_space; ++t) p.decode(t, &offsets[static_cast<size_t>(t)], coord);
  std::sort(offsets.begin(), offsets.end());
  const auto dup = std::adjacent_find(offsets.begin(), offsets.end());
  if (dup != offsets.end()) return given + " put two elements at offset " + std::to_string(*dup);
  return "";
}

}  // namespace

const char* to_string(DataType t) {
  switch (t) {
    case DataType::f32: return "f32";
    case DataType::f16: return "f16";
    case DataType::bf16: return "bf16";
    case DataType::i8: return "i8";
    case DataType::u8: return "u8";
    case DataType::i32: return "i32";
    case DataType::i64: return "i64";
    case DataType::i16: return "i16";
    case DataType::u16: return "u16";
    case DataType::u32: return "u32";
    case DataType::u64: return "u64";
    case DataType::f64: return "f64";
    case DataType::f8e4m3: return "f8e4m3";
    case DataType::f8e5m2: return "f8e5m2";
    case DataType::u4: return "u4";
    case DataType::i4: return "i4";
  }
  return "?";
}

const std::vector<DataType>& all_data_types() {
  static const std::vector<DataType> all = {DataType::f32, DataType::f16, DataType::bf16, DataType::f64,
                                            DataType::f8e4m3, DataType::f8e5m2,
                                            DataType::i8,  DataType::u8,  DataType::i16,  DataType::u16,
                                            DataType::i32, DataType::u32, DataType::i64,  DataType::u64,
                                            DataType::u4,  DataType::i4};
  return all;
}

std::string data_type_names() {
  std::string out;
  for (DataType t : all_data_types()) out += (out.empty() ? "" : ", ") + std::string(to_string(t));
  return out;
}

DataType parse_data_type(const std::string& name) {
  for (DataType t : all_data_types())
    if (name == to_string(t)) return t;
  // oneDNN's and PyTorch's spellings of the types whose names differ from OpenVINO's.
  static const std::pair<const char*, DataType> aliases[] = {
      {"s8", DataType::i8},           {"s16", DataType::i16},          {"s32", DataType::i32},
      {"s64", DataType::i64},         {"f8_e4m3", DataType::f8e4m3},   {"f8_e5m2", DataType::f8e5m2},
      {"float32", DataType::f32},     {"float16", DataType::f16},      {"bfloat16", DataType::bf16},
      {"float64", DataType::f64},     {"int8", DataType::i8},          {"uint8", DataType::u8},
      {"int16", DataType::i16},       {"uint16", DataType::u16},       {"int32", DataType::i32},
      {"uint32", DataType::u32},      {"int64", DataType::i64},        {"uint64", DataType::u64},
      {"float8_e4m3fn", DataType::f8e4m3}, {"float8_e5m2", DataType::f8e5m2}, {"s4", DataType::i4},
      {"int4", DataType::i4},         {"uint4", DataType::u4}};
  for (const auto& [alias, t] : aliases)
    if (name == alias) return t;
  throw Error("unknown data type '" + name + "' (expected one of " + data_type_names() + ")");
}

size_t size_of(DataType t) {
  switch (t) {
    case DataType::f32: case DataType::i32: case DataType::u32: return 4;
    case DataType::f16: case DataType::bf16: case DataType::i16: case DataType::u16: return 2;
    case DataType::i8: case DataType::u8: case DataType::f8e4m3: case DataType::f8e5m2: return 1;
    case DataType::i64: case DataType::u64: case DataType::f64: return 8;
    case DataType::u4: case DataType::i4:
      throw Error(std::string("internal: size_of(") + to_string(t) + "): two elements share a byte");
  }
  return 0;
}

bool is_nibble(DataType t) { return t == DataType::u4 || t == DataType::i4; }

int bits_of(DataType t) { return is_nibble(t) ? 4 : 8 * static_cast<int>(size_of(t)); }

size_t unit_bytes(DataType t) { return is_nibble(t) ? 1 : size_of(t); }

int64_t bytes_of(DataType t, int64_t elements) {
  return is_nibble(t) ? elements / 2 + elements % 2 : elements * static_cast<int64_t>(size_of(t));
}

bool is_floating(DataType t) {
  return t == DataType::f32 || t == DataType::f16 || t == DataType::bf16 || t == DataType::f64 ||
         t == DataType::f8e4m3 || t == DataType::f8e5m2;
}

bool is_unsigned(DataType t) {
  return t == DataType::u4 || t == DataType::u8 || t == DataType::u16 || t == DataType::u32 || t == DataType::u64;
}

const char* to_string(Rounding r) { return r == Rounding::toward_zero ? "toward-zero" : "nearest-even"; }

const char* to_string(Overflow o) { return o == Overflow::wrap ? "wrap" : "saturate"; }

const char* to_string(Padding p) { return p == Padding::keep ? "keep" : "zero"; }

namespace {

// The choice of a two-valued setting `name` spells, the default first; else an error naming the value.
template <class E>
E parse_choice(const std::string& name, E first, E second, const char* what) {
  for (E e : {first, second})
    if (name == to_string(e)) return e;
  throw Error("unknown " + std::string(what) + " '" + name + "' (expected " + to_string(first) + " or " + to_string(second) + ")");
}

}  // namespace

Rounding parse_rounding(const std::string& name) {
  return parse_choice(name, Rounding::nearest_even, Rounding::toward_zero, "rounding");
}

Overflow parse_overflow(const std::string& name) { return parse_choice(name, Overflow::saturate, Overflow::wrap, "overflow mode"); }

Padding parse_padding(const std::string& name) { return parse_choice(name, Padding::zero, Padding::keep, "padding policy"); }

const std::vector<Param>& all_params() {
  static const std::vector<Param> all = {Param::src_zero_point, Param::sub,       Param::src_scale,     Param::mul,
                                         Param::div,            Param::dst_scale, Param::dst_zero_point};
  return all;
}

const char* to_string(Param p) {
  switch (p) {
    case Param::src_zero_point: return "src-zero-point";
    case Param::sub: return "sub";
    case Param::src_scale: return "src-scale";
    case Param::mul: return "mul";
    case Param::div: return "div";
    case Param::dst_scale: return "dst-scale";
    case Param::dst_zero_point: return "dst-zero-point";
  }
  return "?";
}

char operation_of(Param p) {
  switch (p) {
    case Param::src_zero_point: case Param::sub: return '-';
    case Param::src_scale: case Param::mul: return '*';
    case Param::div: case Param::dst_scale: return '/';
    case Param::dst_zero_point: return '+';
  }
  return '?';
}

char applied_operation(Param p) { return operation_of(p) == '/' ? '*' : operation_of(p); }

float operand_of(Param p, float a) {
  // A division per element is the slowest step of a compute-bound kernel (correctly rounded vdivps on PoCL).
  return operation_of(p) == '/' ? 1.0f / a : a;
}

bool is_zero_point(Param p) { return p == Param::src_zero_point || p == Param::dst_zero_point; }

Param parse_param(const std::string& name) {
  std::string known;
  for (Param p : all_params()) {
    if (name == to_string(p)) return p;
    known += (known.empty() ? "" : ", ") + std::string(to_string(p));
  }
  throw Error("unknown parameter '" + name + "' (expected one of " + known + ")");
}

int64_t ParamValues::count(const Dims& dims) const {
  if (axis < 0) return 1;
  const int64_t groups = (dims[static_cast<size_t>(axis)] + group - 1) / group;
  return outer_axis < 0 ? groups : groups * dims[static_cast<size_t>(outer_axis)];
}

int64_t ParamValues::index(const int64_t* coord, const Dims& dims) const {
  if (axis < 0) return 0;
  const int64_t g = coord[axis] / group;
  return outer_axis < 0 ? g : coord[outer_axis] * ((dims[static_cast<size_t>(axis)] + group - 1) / group) + g;
}

int64_t Compensation::count(const Dims& dims) const {
  if (axis < 0) return 0;
  return dims[static_cast<size_t>(axis)] * (outer_axis < 0 ? 1 : dims[static_cast<size_t>(outer_axis)]);
}

int64_t Compensation::index(const int64_t* coord, const Dims& dims) const {
  return outer_axis < 0 ? coord[axis] : coord[outer_axis] * dims[static_cast<size_t>(axis)] + coord[axis];
}

bool ParamValues::operator==(const ParamValues& o) const {
  return axis == o.axis && group == o.group && outer_axis == o.outer_axis && from_buffer == o.from_buffer &&
         values.size() == o.values.size() &&
         (values.empty() || std::memcmp(values.data(), o.values.data(), values.size() * sizeof(float)) == 0);
}

bool Conversion::has_arithmetic() const {
  return std::any_of(params.begin(), params.end(), [](const ParamValues& v) { return v.present(); });
}

bool Conversion::per_index() const {
  return std::any_of(params.begin(), params.end(), [](const ParamValues& v) { return v.present() && v.axis >= 0; });
}

bool Conversion::from_buffers() const {
  return std::any_of(params.begin(), params.end(), [](const ParamValues& v) { return v.from_buffer; });
}

std::string hex_float(float v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%a", static_cast<double>(v));
  return buf;
}

std::string Conversion::key() const { return summary(std::numeric_limits<size_t>::max()); }

std::string Conversion::summary(size_t max_values) const {
  std::string out;
  auto add = [&out](const std::string& field, const std::string& value) { out += (out.empty() ? "" : ",") + field + "=" + value; };
  if (rounding != Rounding::nearest_even) add("round", to_string(rounding));
  if (overflow != Overflow::saturate) add("overflow", to_string(overflow));
  if (padding != Padding::zero) add("padding", to_string(padding));
  for (Param p : all_params()) {
    const ParamValues& v = param(p);
    if (!v.present()) continue;
    std::string text;
    if (v.from_buffer) text = "buffer";
    const size_t shown = std::min(v.values.size(), max_values);
    for (size_t i = 0; !v.from_buffer && i < shown; ++i) text += (i ? "/" : "") + hex_float(v.values[i]);
    if (!v.from_buffer && shown < v.values.size()) text += (shown ? "/...(" : "(") + std::to_string(v.values.size()) + " values)";
    std::string where;
    if (v.outer_axis >= 0) where += std::to_string(v.outer_axis) + "/";
    if (v.axis >= 0) where += std::to_string(v.axis) + (v.group > 1 ? "g" + std::to_string(v.group) : "");
    add(std::string(to_string(p)) + (where.empty() ? "" : "@" + where), text);
  }
  if (compensation.present())
    add("compensation", (compensation.outer_axis >= 0 ? std::to_string(compensation.outer_axis) + "/" : "") +
                            std::to_string(compensation.axis));
  return out;
}

namespace {

// Whether every value is finite, integral if kInteger (a zero point) and of a finite reciprocal if kDivisor
// (1.0f / f is operand_of() written out, so the test holds in whatever floating-point mode the caller runs),
// without a branch or a library call per value: with std::isfinite and std::nearbyint per value and an early
// exit, a cached reorder() with 4096 group scales spent 5 of its 9 us here. |f| below 2^23 is integral when
// adding and subtracting 2^23 (rounding to nearest) gives it back; from 2^23 on every float is; NaN and
// infinities fail the finite test first. An exhaustive run over all 2^32 patterns agreed with the per-value
// test in each of the three uses.
template <bool kInteger, bool kDivisor>
bool all_usable(const std::vector<float>& values) {
  auto special = [](float f) {  // NaN or an infinity
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return static_cast<uint32_t>((b & 0x7f800000u) == 0x7f800000u);
  };
  uint32_t bad = 0;
  for (const float f : values) {
    bad |= special(f);
    if constexpr (kInteger) {
      const float a = std::fabs(f);
      bad |= static_cast<uint32_t>((a < 8388608.0f) & (((a + 8388608.0f) - 8388608.0f) != a));
    }
    if constexpr (kDivisor) bad |= special(1.0f / f);
  }
  return bad == 0;
}

bool all_usable(const std::vector<float>& values, bool integer, bool divisor) {
  if (integer) return divisor ? all_usable<true, true>(values) : all_usable<true, false>(values);
  return divisor ? all_usable<false, true>(values) : all_usable<false, false>(values);
}

// check_params(), with or without the per-value tests.
void check_conversion(const Conversion& conv, const Layout& dst, bool values) {
  size_t indexed = 0;
  const std::string& axes = dst.format().axes();
  auto axis_name = [&](int a) { return std::string(1, axes[static_cast<size_t>(a)]); };
  // Messages name the layout (describe() formats it): made only when one is thrown, since every reorder
  // call with arithmetic passes here.
  auto check_axes = [&](const auto& what, std::initializer_list<int> list, const char* none) {
    for (int a : list)
      if (a < -1 || a >= dst.rank())
        throw Error(what() + ": axis " + std::to_string(a) + " is not one of its " + std::to_string(dst.rank()) + " axes (" + axes + none + ")");
  };
  for (Param p : all_params()) {
    const ParamValues& v = conv.param(p);
    if (!v.present()) continue;
    auto what = [&] { return std::string(to_string(p)) + " of " + dst.describe(); };
    check_axes(what, {v.axis, v.outer_axis}, "; -1 for one value per tensor");
    if (v.outer_axis >= 0 && (v.axis < 0 || v.outer_axis == v.axis))
      throw Error(what() + ": rows on axis " + axis_name(v.outer_axis) + " need groups along another axis (axis " +
                  std::to_string(v.axis) + ")");
    if (v.group < 1 || (v.axis < 0 && v.group != 1))
      throw Error(what() + ": group of " + std::to_string(v.group) + (v.axis < 0 ? " without an axis" : " (at least 1)"));
    const int64_t count = v.count(dst.dims());
    if (!(v.from_buffer && v.values.empty()) && static_cast<int64_t>(v.values.size()) != count) {
      std::string shape = v.axis < 0 ? "for the whole tensor (one, or one per index of an axis)"
                                     : "on axis " + axis_name(v.axis) + " of extent " + std::to_string(dst.dims()[static_cast<size_t>(v.axis)]);
      if (v.group > 1) shape += " in groups of " + std::to_string(v.group);
      if (v.outer_axis >= 0)
        shape += " for each of the " + std::to_string(dst.dims()[static_cast<size_t>(v.outer_axis)]) + " indices of " + axis_name(v.outer_axis);
      throw Error(what() + ": " + std::to_string(v.values.size()) + " values " + shape + " (needs " + std::to_string(count) + ")");
    }
    if (v.axis >= 0 && !v.from_buffer) indexed += v.values.size();
    // Checked wherever a kernel is planned and by the reference (thousands of values for int4 groups): a
    // branch-free pass the compiler vectorises, and the message made only where one fails.
    const bool integer = is_zero_point(p), divisor = operation_of(p) == '/';
    if (!values || all_usable(v.values, integer, divisor)) continue;
    for (size_t i = 0; i < v.values.size(); ++i) {
      const float f = v.values[i];
      if (std::isfinite(f) && (!integer || std::nearbyint(f) == f) && (!divisor || std::isfinite(1.0f / f))) continue;
      const char* why = !std::isfinite(f)                   ? "is not finite"
                        : integer && std::nearbyint(f) != f ? "is not an integer (zero points are)"
                        : f == 0                            ? "divides by zero"
                                                            : "has no finite f32 reciprocal (a division multiplies by it)";
      throw Error(what() + ": value " + hex_float(f) + " (" + std::to_string(f) + ", index " + std::to_string(i) + ") " + why);
    }
  }
  const Compensation& c = conv.compensation;
  if (c.present() || c.outer_axis != -1) {
    auto what = [&] { return "compensation of " + dst.describe(); };
    check_axes(what, {c.axis, c.outer_axis}, "");
    if (c.axis < 0 || c.outer_axis == c.axis)
      throw Error(what() + ": axes " + std::to_string(c.outer_axis) + " and " + std::to_string(c.axis) +
                  " (one axis, and optionally another for the rows)");
    const DataType t = dst.data_type();
    if (is_floating(t) || bits_of(t) > 32)
      throw Error(what() + ": the sums are of integer values, and " + to_string(t) +
                  " is not an integer type of at most 32 bits (i4, u4, i8, u8, i16, u16, i32, u32)");
  }
  if (indexed > kMaxIndexedValues)
    throw Error("the conversion into " + dst.describe() + " has " + std::to_string(indexed) + " per-index values, more than the " +
                std::to_string(kMaxIndexedValues) + " a kernel holds in constant memory (pass them in a device buffer)");
}

}  // namespace

void check_params(const Conversion& conv, const Layout& dst) { check_conversion(conv, dst, true); }

void check_param_shapes(const Conversion& conv, const Layout& dst) { check_conversion(conv, dst, false); }

Dims parse_dims(const std::string& text) {
  Dims out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (part.empty() || part.size() > 15 || part.find_first_not_of("0123456789") != std::string::npos)
      throw Error("bad list '" + text + "': part '" + part + "' is not a non-negative integer");
    out.push_back(std::stoll(part));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::string dims_to_string(const Dims& d, const char* sep) {
  std::string out;
  for (size_t i = 0; i < d.size(); ++i) out += (i ? sep : "") + std::to_string(d[i]);
  return out;
}

Layout::Layout(Format format, DataType type, Dims dims, Dims pad_lower, Dims pad_upper, Dims strides,
               int64_t base_offset)
    : format_(std::move(format)), type_(type), dims_(std::move(dims)), pad_lower_(std::move(pad_lower)),
      pad_upper_(std::move(pad_upper)), strides_(std::move(strides)) {
  const int r = format_.rank();
  const std::string where = "layout " + format_.name() + " shape " + dims_to_string(dims_, ",");
  if (static_cast<int>(dims_.size()) != r)
    throw Error("shape " + dims_to_string(dims_, ",") + " has " + std::to_string(dims_.size()) +
                " dims but format " + format_.name() + " has rank " + std::to_string(r) + " (" + format_.axes() + ")");
  if (pad_lower_.empty()) pad_lower_.assign(r, 0);
  if (pad_upper_.empty()) pad_upper_.assign(r, 0);
  if (static_cast<int>(pad_lower_.size()) != r || static_cast<int>(pad_upper_.size()) != r)
    throw Error(where + ": padding " + dims_to_string(pad_lower_, ",") + " / " + dims_to_string(pad_upper_, ",") +
                " must have " + std::to_string(r) + " values (" + format_.axes() + ")");
  for (int a = 0; a < r; ++a) {
    const std::string axis(1, format_.axes()[a]);
    if (dims_[a] < 1)
      throw Error(where + ": dim " + std::to_string(a) + " (" + axis + ") is " + std::to_string(dims_[a]) +
                  ", must be at least 1");
    if (dims_[a] > kMaxElements)
      throw Error(where + ": dim " + std::to_string(a) + " (" + axis + ") is " + std::to_string(dims_[a]) +
                  ", over 2^50");
    const std::string pads = "padding of axis " + axis + " (lower " + std::to_string(pad_lower_[a]) + ", upper " +
                             std::to_string(pad_upper_[a]) + ")";
    if (pad_lower_[a] < 0 || pad_upper_[a] < 0) throw Error(where + ": " + pads + " is negative");
    if (pad_lower_[a] > kMaxElements - dims_[a] || pad_upper_[a] > kMaxElements - dims_[a] - pad_lower_[a])
      throw Error(where + ": " + pads + " is too large: dim " + std::to_string(dims_[a]) + " plus padding is over 2^50");
  }

  IndexPlan& p = plan_;
  p.dims = dims_;
  for (const Dim& d : format_.dims()) {
    PlanDim pd;
    int64_t combined = 1;
    for (char c : d.axes) {
      int a = static_cast<int>(format_.axes().find(c));
      int64_t sz = dims_[a] + pad_lower_[a] + pad_upper_[a];
      pd.axes.push_back(a);
      pd.sizes.push_back(sz);
      pd.lower.push_back(pad_lower_[a]);
      combined = checked_mul(combined, sz, where + " with padding lower " + dims_to_string(pad_lower_, ",") +
                                               " upper " + dims_to_string(pad_upper_, ","));
    }
    pd.extent = combined;
    p.pdims.push_back(pd);
  }
  // Round each dim up to a multiple of its blocks' product and its alignment.
  std::vector<int64_t> tile(p.pdims.size(), 1);
  for (const Level& l : format_.levels())
    if (l.block) tile[l.dim] *= l.block;
  for (size_t d = 0; d < p.pdims.size(); ++d)
    p.pdims[d].extent = round_up(p.pdims[d].extent, std::lcm(tile[d], format_.dims()[d].align), where);
  if (const TpuPlacement* t = format_.tpu()) {
    // The channel dim (f; o for 2ic) starts Q NPUs in: a shift of Q channels (Q * w matrix columns) that is
    // not the tensor's, like its last slots after the last channel.
    for (int a = 0; a < r; ++a)
      if (pad_lower_[a] || pad_upper_[a] || !strides_.empty())
        throw Error(where + ": " + format_.name() + " takes no padding or strides (its rule fixes them)");
    if (t->rule == "matrix" && (dims_[1] < t->w))
      throw Error(where + ": w=" + std::to_string(t->w) + " is wider than the matrix's " + std::to_string(dims_[1]) + " columns");
    const size_t cdim = static_cast<size_t>(format_.dim_of_axis(t->channel_axis()));
    PlanDim& c = p.pdims[cdim];
    const int64_t q = t->addr / t->npu_bytes, unit = t->rule == "matrix" ? t->w : 1;
    c.lower = {q * unit};
    c.extent = round_up(q * unit + c.sizes[0], tile[cdim], where);
    c.sizes = {c.extent};
    c.owned = false;
  }

  for (const Digit& g : format_.digits()) {
    PlanDigit pg;
    pg.dim = g.dim;
    pg.divisor = g.divisor;
    pg.extent = g.extent ? g.extent : p.pdims[g.dim].extent / g.divisor;
    pg.needs_mod = g.extent != 0;  // blocks wrap; the outer part (slice) of a dim never does
    p.digits.push_back(pg);
  }
  bool padded = false;
  for (int a = 0; a < r; ++a) padded |= pad_lower_[a] || pad_upper_[a];
  const std::string padded_where = where + " with padding lower " + dims_to_string(pad_lower_, ",") + " upper " +
                                   dims_to_string(pad_upper_, ",");
  int64_t stride = 1;
  for (size_t k = p.digits.size(); k-- > 0;) {
    p.digits[k].stride = stride;
    stride = checked_mul(stride, p.digits[k].extent, padded ? padded_where : where);
  }
  p.size = stride;
  p.digit_space = stride;
  p.base = 0;
  if (!strides_.empty()) apply_strides(padded ? padded_where : where);
  if (format_.tpu()) {
    if (base_offset) throw Error(where + ": " + format_.name() + " takes its offset from addr, not a base offset");
    apply_tpu(where);
    base_offset = p.base;
  }
  if (base_offset < 0 || base_offset > kMaxElements - p.size)
    throw Error(where + ": base offset " + std::to_string(base_offset) + " is " +
                (base_offset < 0 ? "negative" : "too large (offset plus extent over 2^50 elements)"));
  p.base = base_offset;
  key_ = format_.name() + "/" + to_string(type_) + "/" + dims_to_string(dims_, ",") + "/" +
         dims_to_string(pad_lower_, ",") + "/" + dims_to_string(pad_upper_, ",") + "/" + dims_to_string(strides_, ",") +
         "/" + std::to_string(p.base);
}

void Layout::apply_strides(const std::string& where) {
  IndexPlan& p = plan_;
  const int r = format_.rank();
  const std::string given = "strides " + dims_to_string(strides_, ",");
  if (static_cast<int>(strides_.size()) != r)
    throw Error(where + ": " + given + " must have " + std::to_string(r) + " values (" + format_.axes() + ")");
  for (int a = 0; a < r; ++a) {
    if (strides_[a] < 0)
      throw Error(where + ": " + given + ": stride of axis " + format_.axes()[a] + " is negative");
    if (strides_[a] > kMaxElements) throw Error(where + ": " + given + ": stride of axis " + format_.axes()[a] + " is over 2^50");
  }
  for (const PlanDim& d : p.pdims)
    if (d.axes.size() != 1)
      throw Error(where + ": format " + format_.name() + " fuses axes into one dim, which explicit " + given +
                  " (one per axis) cannot describe");
  // Blocks stay dense inside their tile, in the format's order; the outer part of each dim takes its axis'
  // stride.
  int64_t tile = 1;
  for (size_t k = p.digits.size(); k-- > 0;) {
    PlanDigit& g = p.digits[k];
    if (!g.needs_mod) continue;
    g.stride = tile;
    tile *= g.extent;  // the dense plan above bounded every product of extents
  }
  for (PlanDigit& g : p.digits)
    if (!g.needs_mod) g.stride = strides_[p.pdims[g.dim].axes[0]];
  int64_t span = 0;
  for (const PlanDigit& g : p.digits) {
    span += checked_mul(g.extent - 1, g.stride, where + " with " + given);
    if (span > kMaxElements) throw Error(where + " with " + given + " spans over 2^50 elements");
  }
  p.size = span + 1;
  // Memory order, outer first: a strided layout equal to a named format gets that format's very plan (and
  // so its kernels), and decode() walks memory forward.
  std::stable_sort(p.digits.begin(), p.digits.end(), [](const PlanDigit& x, const PlanDigit& y) { return x.stride > y.stride; });
  overlap_ = overlap_of(p, given);
}

int64_t Layout::logical_elements() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;  // at most the digit space, which the constructor bounded by 2^50
  return n;
}

int64_t Layout::offset(const Dims& coord) const {
  if (static_cast<int>(coord.size()) != rank())
    throw Error("coordinate " + dims_to_string(coord, ",") + " has " + std::to_string(coord.size()) +
                " values, " + format_.name() + " has rank " + std::to_string(rank()));
  for (int a = 0; a < rank(); ++a)
    if (coord[a] < 0 || coord[a] >= dims_[a])
      throw Error("coordinate " + dims_to_string(coord, ",") + " is outside shape " + dims_to_string(dims_, ","));
  return plan_.offset(coord.data());
}

std::string Layout::describe() const {
  std::string s = format_.name() + " " + to_string(type_) + " " + dims_to_string(dims_);
  bool padded = false;
  for (int a = 0; a < rank(); ++a) padded |= pad_lower_[a] || pad_upper_[a];
  if (padded) s += " pad_lower " + dims_to_string(pad_lower_, ",") + " pad_upper " + dims_to_string(pad_upper_, ",");
  if (!strides_.empty()) s += " strides " + dims_to_string(strides_, ",");
  if (plan_.base) s += " offset " + std::to_string(plan_.base);
  return s;
}

void Layout::apply_tpu(const std::string& where) {
  const TpuPlacement& t = *format_.tpu();
  IndexPlan& p = plan_;
  if (is_nibble(type_)) throw Error(where + ": the TPU's local memory holds no " + std::string(to_string(type_)) + " tensors (a 4-bit type)");
  const int64_t elem = static_cast<int64_t>(size_of(type_)), m = t.pack(), storage = elem * m;
  const std::string name = format_.name();
  if (t.mode == "4n" && type_ != DataType::i8 && type_ != DataType::u8)
    throw Error(where + ": mode=4n packs int8 or uint8, not " + to_string(type_));
  if (t.mode == "2n" && type_ != DataType::i16 && type_ != DataType::u16)
    throw Error(where + ": mode=2n packs int16 or uint16, not " + to_string(type_));
  if (t.mode == "2ic" && type_ != DataType::f32) throw Error(where + ": mode=2ic packs fp32 weights, not " + to_string(type_));
  const int64_t q = t.addr / t.npu_bytes, rem = t.addr % t.npu_bytes;
  if (t.npu_bytes % elem) throw Error(where + ": npu_bytes=" + std::to_string(t.npu_bytes) + " is not a multiple of the " + std::to_string(elem) + "-byte element");
  if (rem % storage)
    throw Error(where + ": addr=" + std::to_string(t.addr) + " (NPU " + std::to_string(q) + ", offset " + std::to_string(rem) +
                ") is not aligned to the " + std::to_string(storage) + "-byte storage element");
  if ((t.rule == "aligned" || t.rule == "matrix") && t.addr % 128)
    throw Error(where + ": addr=" + std::to_string(t.addr) + " is not divisible by 128 (" + t.rule + " layout)");
  if (t.rule == "compact" && t.addr % 4) throw Error(where + ": addr=" + std::to_string(t.addr) + " is not divisible by 4 (compact layout)");
  // The (N, C, H, W) of the TPU's view, in storage elements along N.
  const int caxis = t.channel_axis(), naxis = 1 - caxis;
  int64_t n = dims_[naxis], c = dims_[caxis], h = 1, w = 1;
  if (t.rule == "matrix") {
    w = t.w;
    c = (dims_[1] + w - 1) / w;
  } else if (dims_.size() == 4) {
    h = dims_[2];
    w = dims_[3];
  } else {
    throw Error(where + ": " + name + " lays out 4-D tensors (N, C, H, W)");
  }
  n = (n + m - 1) / m;
  const int64_t cpn = tpu_channels_per_npu(q, c, t.npus);
  int64_t ns, cs, hs = w, ws = 1;
  if (t.rule == "local") {
    ns = t.strides[0], cs = t.strides[1], hs = t.strides[2], ws = t.strides[3];
  } else {
    const int64_t round = t.rule == "compact" ? 1 : std::max<int64_t>(1, 128 / storage);
    cs = checked_mul((h * w + round - 1) / round, round, where);
    ns = checked_mul(cs, cpn, where);
  }
  // Digits: the N dim (outer; the mode's block innermost, stride 1), the channel dim (outer = slot, the
  // npus-block = NPU, matrix: the w-block = column), y, x.
  const int cdim = format_.dim_of_axis(caxis), ndim = format_.dim_of_axis(naxis);
  for (PlanDigit& g : p.digits) {
    if (g.dim == ndim) g.stride = g.needs_mod ? 1 : checked_mul(ns, m, where);
    else if (g.dim == cdim && !g.needs_mod) g.stride = checked_mul(cs, m, where);
    else if (g.dim == cdim && g.extent == t.npus && g.divisor == (t.rule == "matrix" ? t.w : 1)) g.stride = t.npu_bytes / elem;
    else if (g.dim == cdim) g.stride = ws;  // matrix columns
    else if (format_.axes()[static_cast<size_t>(p.pdims[g.dim].axes[0])] == 'y') g.stride = checked_mul(hs, m, where);
    else g.stride = checked_mul(ws, m, where);
  }
  // Each NPU holds the same local pattern from offset R: it must fit.
  int64_t span = 1;
  for (const PlanDigit& g : p.digits)
    if (g.stride != t.npu_bytes / elem || g.dim != cdim) span += checked_mul(g.extent - 1, g.stride, where);
  if (rem / elem + span > t.npu_bytes / elem)
    throw Error(where + ": " + name + " needs " + std::to_string(span * elem) + " bytes on each NPU from offset " +
                std::to_string(rem) + ", but an NPU has " + std::to_string(t.npu_bytes));
  std::stable_sort(p.digits.begin(), p.digits.end(), [](const PlanDigit& x, const PlanDigit& y) { return x.stride > y.stride; });
  p.base = rem / elem;
  p.size = t.npus * t.npu_bytes / elem - p.base;  // the buffer is the whole local memory
  overlap_ = overlap_of(p, "the strides of " + name);
}

bool same_elements(const Layout& a, const Layout& b) {
  const IndexPlan &pa = a.plan(), &pb = b.plan();
  if (pa.dims != pb.dims || pa.base != pb.base || pa.size != pb.size || pa.digit_space != pb.digit_space) return false;
  // Per axis: the same padded range (fused dims compare as the whole list of their axes).
  auto dim_of = [](const IndexPlan& p, int axis) -> const PlanDim& {
    for (const PlanDim& d : p.pdims)
      for (int x : d.axes)
        if (x == axis) return d;
    return p.pdims.front();  // unreachable: every axis has a dim
  };
  for (int axis = 0; axis < static_cast<int>(pa.dims.size()); ++axis) {
    const PlanDim &da = dim_of(pa, axis), &db = dim_of(pb, axis);
    if (da.axes != db.axes || da.sizes != db.sizes || da.lower != db.lower || da.extent != db.extent || da.owned != db.owned)
      return false;
  }
  // The digits that count (extent > 1), in order: same axes, divisor, extent and stride.
  std::vector<const PlanDigit*> ga, gb;
  for (const PlanDigit& g : pa.digits)
    if (g.extent > 1) ga.push_back(&g);
  for (const PlanDigit& g : pb.digits)
    if (g.extent > 1) gb.push_back(&g);
  if (ga.size() != gb.size()) return false;
  for (size_t k = 0; k < ga.size(); ++k)
    if (pa.pdims[ga[k]->dim].axes != pb.pdims[gb[k]->dim].axes || ga[k]->divisor != gb[k]->divisor ||
        ga[k]->extent != gb[k]->extent || ga[k]->stride != gb[k]->stride)
      return false;
  return true;
}

std::string named_equivalent(const Layout& l) {
  for (const auto& [name, f] : registered_formats()) {
    if (f.kind() != l.format().kind() || f.rank() != l.rank()) continue;
    if (!same_elements(l, Layout(f, l.data_type(), l.dims(), l.pad_lower(), l.pad_upper(), {}, l.base_offset()))) continue;
    std::string out = name;
    const std::vector<std::string> aliases = aliases_of(f);
    for (size_t k = 0; k < aliases.size(); ++k) out += (k ? ", " : " (") + aliases[k] + (k + 1 == aliases.size() ? ")" : "");
    return out;
  }
  return "";
}

Layout preserve_format(const Layout& in, DataType type) {
  if (in.overlap().empty() && in.plan().size == in.plan().digit_space)
    return Layout(in.format(), type, in.dims(), in.pad_lower(), in.pad_upper(), in.strides());
  return Layout(Format::parse(in.format().axes()), type, in.dims());
}

int64_t IndexPlan::offset(const int64_t* coord) const {
  int64_t values[8];
  for (size_t d = 0; d < pdims.size(); ++d) {
    const PlanDim& pd = pdims[d];
    int64_t v = 0;
    for (size_t k = 0; k < pd.axes.size(); ++k) v = v * pd.sizes[k] + coord[pd.axes[k]] + pd.lower[k];
    values[d] = v;
  }
  int64_t off = base;
  for (const PlanDigit& g : digits) {
    int64_t q = values[g.dim] / g.divisor;
    if (g.needs_mod) q %= g.extent;
    off += q * g.stride;
  }
  return off;
}

bool IndexPlan::decode(int64_t p, int64_t* offset, int64_t* coord, bool* owned) const {
  int64_t values[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t off = base;
  for (size_t k = digits.size(); k-- > 0;) {
    const PlanDigit& g = digits[k];
    int64_t q = p % g.extent;
    p /= g.extent;
    values[g.dim] += q * g.divisor;
    off += q * g.stride;
  }
  *offset = off;
  bool valid = true;
  if (owned) *owned = true;
  for (size_t d = 0; d < pdims.size(); ++d) {
    const PlanDim& pd = pdims[d];
    int64_t v = values[d];
    int64_t combined = 1;
    for (int64_t s : pd.sizes) combined *= s;
    bool in = v < combined;  // else alignment or blocked tail
    for (size_t k = pd.axes.size(); k-- > 0;) {
      int64_t c = v % pd.sizes[k] - pd.lower[k];
      v /= pd.sizes[k];
      coord[pd.axes[k]] = c;
      if (c < 0 || c >= dims[pd.axes[k]]) in = false;
    }
    valid = valid && in;
    if (owned && !in && !pd.owned) *owned = false;
  }
  return valid;
}

bool IndexPlan::dense() const {
  int64_t stride = 1;
  for (size_t k = digits.size(); k-- > 0;) {
    if (digits[k].stride != stride) return false;
    stride *= digits[k].extent;
  }
  return true;
}

}  // namespace clreorder
