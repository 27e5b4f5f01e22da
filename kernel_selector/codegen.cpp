// Printing the index plan as OpenCL C.
#include "codegen.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

#include "clreorder/error.hpp"
#include "clreorder/reference.hpp"
#include "permute.hpp"

namespace clreorder {

Jit& Jit::def(const std::string& name, const std::string& value) {
  defs_.emplace_back(name, value);
  return *this;
}

Jit& Jit::set(const std::string& name, const std::string& value) {
  for (auto& d : defs_)
    if (d.first == name) {
      d.second = value;
      return *this;
    }
  throw Error("internal: no #define " + name + " to set");
}

std::string Jit::wrap(const std::string& body) const {
  std::string out;
  for (const auto& [name, value] : defs_) out += "#define " + name + " " + value + "\n";
  out += body;
  if (!body.empty() && body.back() != '\n') out += "\n";
  for (const auto& d : defs_) {
    size_t paren = d.first.find('(');
    out += "#undef " + d.first.substr(0, paren) + "\n";
  }
  return out;
}

std::string macro_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) out += (i ? " \\\n  " : "") + lines[i];
  return out;
}

std::string swizzle_run(const std::string& var, int64_t first, int64_t count) {
  if (count != 2 && count != 4 && count != 8) throw Error("internal: a swizzle run of " + std::to_string(count));
  // Through CR_SW<n> (kernels_cl/common.cl): `var.s0123` normally, `var.s0, var.s1, ..` for Oclgrind's
  // uninitialized-value checks, whose 21.10 plugin crashes on the shuffles clang -O0 builds from the former.
  std::string out = "CR_SW" + std::to_string(count) + "(" + var;
  for (int64_t i = first; i < first + count; ++i) out += std::string(", ") + "0123456789abcdef"[i];
  return out + ")";
}

std::string swizzle(const std::string& var, int64_t width, int64_t first, int64_t count) {
  if (count == width) return var;
  if (count == 1) return var + ".s" + "0123456789abcdef"[first];
  return swizzle_run(var, first, count);
}

std::string component(const std::string& var, int64_t width, int64_t i) { return swizzle(var, width, i, 1); }

namespace {

// Bytes of an OpenCL C scalar type as cl_type() names them.
int64_t cl_type_bytes(const std::string& type) {
  if (type == "char" || type == "uchar") return 1;
  if (type == "short" || type == "ushort") return 2;
  if (type == "int" || type == "uint" || type == "float") return 4;
  if (type == "long" || type == "ulong" || type == "double") return 8;
  throw Error("internal: transpose_network of type " + type);
}

}  // namespace

TransposeNet transpose_network(const std::string& type, int width, const std::vector<std::string>& rows,
                               const std::string& prefix) {
  const auto v = static_cast<size_t>(width);
  if ((width != 4 && width != 8 && width != 16) || rows.size() != v)
    throw Error("internal: transpose_network of width " + std::to_string(width));
  // Elements of one 128-bit lane (x86's unpacks and NEON's zips work within one; a smaller register is one).
  const size_t lane = std::min(v, static_cast<size_t>(16 / cl_type_bytes(type)));
  // Each register as the (row, column) it holds at each position, to name the columns at the end.
  std::vector<std::vector<std::pair<size_t, size_t>>> held(v);
  for (size_t i = 0; i < v; ++i)
    for (size_t j = 0; j < v; ++j) held[i].emplace_back(i, j);
  TransposeNet net;
  std::vector<std::string> names = rows;
  // Stage g pairs registers i and i + g and moves runs of g elements. Runs shorter than a lane interleave
  // the lower (upper) halves of each lane of the two (punpcklwd, punpckldq, unpcklps, unpcklpd: one
  // instruction); longer runs exchange whole lanes (vperm2f128, register halves). Each stage swaps one bit of
  // the row index with one of the column index, so after all of them every register holds one column, rows
  // in order.
  for (size_t g = 1, stage = 0; g < v; g *= 2, ++stage) {
    std::vector<std::string> next(v);
    std::vector<std::vector<std::pair<size_t, size_t>>> next_held(v);
    for (size_t i = 0; i < v; ++i) {
      if (i & g) continue;
      for (size_t half = 0; half < 2; ++half) {
        const size_t out = i + half * g;
        // (start, group): runs of g from each of the two registers in turn, at start + k * group.
        std::vector<size_t> firsts;
        if (g < lane)
          for (size_t l = 0; l < v; l += lane)
            for (size_t k = 0; k < lane / 2; k += g) firsts.push_back(l + half * lane / 2 + k);
        else
          for (size_t c = 0; c < v; c += 2 * g) firsts.push_back(c + half * g);
        std::string value;
        for (size_t first : firsts)
          for (size_t reg : {i, i + g}) {
            value += std::string(value.empty() ? "" : ", ") + swizzle(names[reg], width, static_cast<int64_t>(first), static_cast<int64_t>(g));
            for (size_t e = 0; e < g; ++e) next_held[out].push_back(held[reg][first + e]);
          }
        next[out] = prefix + std::to_string(stage) + "_" + std::to_string(out);
        net.lines.push_back("const " + type + std::to_string(width) + " " + next[out] + " = (" + type + std::to_string(width) + ")(" + value + ");");
      }
    }
    names = next;
    held = next_held;
  }
  net.columns.assign(v, "");
  for (size_t i = 0; i < v; ++i) {
    const size_t column = held[i][0].second;
    for (size_t r = 0; r < v; ++r)
      if (held[i][r] != std::make_pair(r, column)) throw Error("internal: transpose_network does not transpose");
    net.columns[column] = names[i];
  }
  return net;
}

std::string join_and(const std::vector<std::string>& conditions) {
  std::string out;
  for (const std::string& c : conditions) out += (out.empty() ? "" : " && ") + c;
  return out;
}

std::string cl_type(DataType t) {
  switch (t) {
    case DataType::f32: return "float";
    case DataType::f16: case DataType::bf16: return "ushort";
    case DataType::i8: return "char";
    case DataType::u8: case DataType::f8e4m3: case DataType::f8e5m2: return "uchar";
    case DataType::i32: return "int";
    case DataType::i64: return "long";
    case DataType::i16: return "short";
    case DataType::u16: return "ushort";
    case DataType::u32: return "uint";
    case DataType::u64: return "ulong";
    case DataType::f64: return "double";
    case DataType::u4: return "uchar";
    case DataType::i4: return "char";
  }
  return "?";
}

std::string shared_bytes(const Layout& dst, bool pairs) {
  const IndexPlan& plan = dst.plan();
  if (!is_nibble(dst.data_type()) || (pairs && plan.dense())) return "";
  bool whole = plan.base % 2 == 0 && !plan.digits.empty() && plan.digits.back().stride == 1 && plan.digits.back().extent % 2 == 0;
  for (size_t k = 0; k + 1 < plan.digits.size(); ++k) whole = whole && plan.digits[k].stride % 2 == 0;
  if (whole) return "";
  return "the " + std::string(to_string(dst.data_type())) + " destination " + dst.describe() +
         (pairs ? " is not dense, and its" : "'s") +
         " rows do not fill whole bytes (an innermost stride of 1 with an even extent, even strides and an even "
         "base offset), so two work-items would write one byte";
}

int log2_exact(int64_t v) {
  if (v <= 0 || (v & (v - 1)) != 0) return -1;
  int k = 0;
  while ((int64_t(1) << k) < v) ++k;
  return k;
}

int64_t pack_of(DataType t) { return is_nibble(t) || size_of(t) >= 4 ? 1 : 4 / static_cast<int64_t>(size_of(t)); }

bool unaligned_vectors(const DeviceInfo& dev) { return tuning_of(dev) == Tuning::cpu; }

std::string vstore_stmt(DataType t, int width, const std::string& value, const std::string& ptr, StoreAlign align) {
  const std::string w = std::to_string(width), type = cl_type(t) + (width > 1 ? w : "");
  const int64_t pack = pack_of(t), bytes = width * size_of(t);
  const bool in_words = pack > 1 && width % pack == 0;  // 8- or 16-bit elements filling whole 4-byte words
  const bool unaligned = align.unaligned && in_words;
  const bool wide = unaligned || (align.packable && in_words);
  const bool stream = align.streams && bytes >= 16 && bytes <= 64 && (bytes & (bytes - 1)) == 0 && (pack == 1 || wide);
  if (!wide && !stream) return width > 1 ? "vstore" + w + "(" + value + ", 0, " + ptr + ");" : "*(" + ptr + ") = " + value + ";";
  const std::string words = std::to_string(width / pack);
  const std::string as_words = pack > 1 ? "as_uint" + words + "(v_)" : "v_";
  std::string out = "{ const " + type + " v_ = " + value + "; ";
  if (stream) out += "if (dst_a64) CR_STREAM_STORE(" + (pack > 1 ? "uint" + words : type) + ", " + as_words + ", " + ptr + "); else ";
  if (unaligned) return out + "CR_STOREU(" + type + ", " + ptr + ", v_); }";
  if (wide) {
    out += "if (dst_wide) ";
    out += width / pack > 1 ? "vstore" + words + "(" + as_words + ", 0, (__global uint*)(" + ptr + "));"
                            : "*(__global uint*)(" + ptr + ") = as_uint(v_);";
    out += " else ";
  }
  out += width > 1 ? "vstore" + w + "(v_, 0, " + ptr + ");" : "*(" + ptr + ") = v_;";
  return out + " }";
}

std::string vload_expr(DataType t, int width, const std::string& ptr, bool packable, bool unaligned) {
  const std::string w = std::to_string(width), plain = width > 1 ? "vload" + w + "(0, " + ptr + ")" : "*(" + ptr + ")";
  const int64_t pack = pack_of(t);
  if (pack == 1 || width % pack != 0) return plain;
  if (unaligned) return "CR_LOADU(" + cl_type(t) + w + ", " + ptr + ")";
  if (!packable) return plain;
  const int64_t words = width / pack;
  const std::string as_type = "as_" + cl_type(t) + w;
  const std::string uints = words > 1 ? "vload" + std::to_string(words) + "(0, (__global const uint*)(" + ptr + "))"
                                      : "*(__global const uint*)(" + ptr + ")";
  return "(src_wide ? " + as_type + "(" + uints + ") : " + plain + ")";
}

std::string src_vector(DataType t, int vec, const std::string& off, bool packable, bool unaligned, const std::string& bytes) {
  if (!is_nibble(t)) return vload_expr(t, vec, "src + " + off, packable, unaligned);
  return std::string(t == DataType::i4 ? "cr_nib_unpack_i" : "cr_nib_unpack_u") + std::to_string(vec) + "(" +
         vload_expr(DataType::u8, vec / 2, "(__global const uchar*)src + (" + (bytes.empty() ? "(" + off + ") >> 1" : bytes) + ")", packable,
                    unaligned) +
         ")";
}

uint64_t stream_threshold(const DeviceInfo& device) {
  if (device.type != "cpu" || device.cache_bytes == 0) return std::numeric_limits<uint64_t>::max();
  const uint64_t quarter = device.cache_bytes / 4;
  return device.compute_units > 0 ? std::min(quarter, kStreamBytesPerComputeUnit * device.compute_units) : quarter;
}

bool stream_pays(uint64_t bytes, const DeviceInfo& device) {
  return bytes > stream_threshold(device);
}

bool stream_pays(const Layout& src, const Layout& dst, const DeviceInfo& device) {
  return stream_pays(static_cast<uint64_t>(src.bytes() + dst.bytes()), device);
}

bool prefetches_rows(const ReorderParams& p, int64_t row_elems) {
  return tuning_of(p.device) == Tuning::cpu && !is_nibble(p.src.data_type()) &&
         row_elems * static_cast<int64_t>(unit_bytes(p.src.data_type())) >= kPrefetchRowBytes;
}

std::string once_per_line(const ReorderParams& p, const std::string& var, int64_t step) {
  const int64_t line_elems = 64 / static_cast<int64_t>(unit_bytes(p.src.data_type()));
  // Streamed (the hints then go to the second level: prefetch_stmt()), every step hints: a step's repeat of its
  // line's hint took 0.91x the time cold in two runs, 0.96x warm, over the 54 streamed hinted plans among 199
  // pairs (perf/clreorder_ab --env, a temporary switch, 21 interleaved runs, PoCL on AMD EPYC Zen 4; NOTES,
  // "Streamed hints every step"; 8-bit sources 0.89x, 16-bit 0.93x): likely hints dropped while a step's 32-64
  // misses fill the queues, and asked again. 256 bytes ahead instead of 128 took 1.01x (98 plans).
  if (stream_pays(p.src, p.dst, p.device)) return "";
  return line_elems > step ? "(" + var + " & " + num(line_elems - 1) + ") == 0" : "";
}

std::string prefetch_stmt(const ReorderParams& p, const std::string& off, const std::vector<std::string>& when) {
  // Where the reorder streams, a tile's rows (32-64 lines in flight a step) come from memory: hinted into the
  // first-level cache too (locality 3, prefetcht0) they take its fill buffers and evict each other there before
  // their loads; into the second level (2, prefetcht1) the loads find them one level down. Measured
  // (perf/clreorder_ab --options, a temporary switch in common.cl, 31 interleaved runs, caches evicted, PoCL on
  // AMD EPYC Zen 4; NOTES, "Hints into L2 where the data streams"): the suite's hinted cases that stream
  // 0.64-1.05x the time (bfyx -> byxf f32 8x256x56x56 0.62-0.66x, bfyx -> bs_fs_yx_bsv16_fsv16 0.67-0.70x).
  // Not where the data may be cached: warm, the small ones took 1.03-1.18x (oiyx -> os_iyx_osv32__ai32 f16).
  const int locality = stream_pays(p.src, p.dst, p.device) ? 2 : 3;
  const std::string hint = "CR_PREFETCH(src + " + off + " + " + num(kPrefetchAhead / static_cast<int64_t>(unit_bytes(p.src.data_type()))) +
                           ", " + std::to_string(locality) + ");";
  return when.empty() ? hint : "if (" + join_and(when) + ") " + hint;
}

namespace {

// What a conversion does with a NaN in its value: keeps it as the types allow (a plain conversion), makes it
// 0x7fc00000's bits in the destination (the fused arithmetic's result, whose NaNs differ between devices), or
// has none to handle (may_give_nan() proved it: saturating float -> 8- or 16-bit integers skip the test).
enum class NanIn { kept, canonical, none };

// The narrow floats whose conversion from f32 has a _canonical twin (one NaN test for both jobs) and a
// _finite one (no NaN test).
bool has_canonical_twin(DataType t) { return t == DataType::f16 || t == DataType::bf16 || t == DataType::f8e5m2; }

// `v` (of cl_type(from), or a vector of `width`) converted to `to` by the modes of `conv`, NaNs as `nan` says
// (NanIn::canonical only from f32); `normal`: normal_range() proved every value +-0 or normal in `to`;
// `payload_unread`: the caller makes every NaN of the result canonical or 0 (fused arithmetic after it), so a
// NaN's payload in `v` need not be kept.
std::string convert_types(DataType from, DataType to, const Conversion& conv, std::string v, int width,
                          NanIn nan = NanIn::kept, bool normal = false, bool payload_unread = false) {
  const std::string w = width > 1 ? std::to_string(width) : "", suf = width > 1 ? "_" + w : "";
  if (nan == NanIn::canonical && is_floating(to) && !has_canonical_twin(to)) {
    v = "cr_f32_nan_canonical" + suf + "(" + v + ")";
    nan = NanIn::kept;
  }
  if (from == to) return "(" + v + ")";
  if (is_nibble(from) || is_nibble(to)) {
    // u4 and i4 values travel in u8 and i8, which hold them exactly; a 4-bit destination takes the 8-bit
    // result clamped to its range or reduced to its low 4 bits (sign-extended), as the host's store_nibble().
    // Vectors of them are 8-bit lanes (tiled unpacks loads before and packs stores after the conversion).
    auto carrier = [](DataType t) { return t == DataType::u4 ? DataType::u8 : t == DataType::i4 ? DataType::i8 : t; };
    const std::string x = convert_types(carrier(from), carrier(to), conv, v, width, nan, normal);
    if (!is_nibble(to)) return x;
    const bool wrap = conv.overflow == Overflow::wrap;
    if (width > 1) {
      const std::string u = "uchar" + w, c = "char" + w;
      if (to == DataType::u4) return wrap ? "((" + x + ") & (" + u + ")15)" : "min(" + x + ", (" + u + ")15)";
      return wrap ? "(as_" + c + "(as_" + u + "(" + x + ") << 4) >> 4)" : "clamp(" + x + ", (" + c + ")-8, (" + c + ")7)";
    }
    if (to == DataType::u4) return wrap ? "((uchar)((" + x + ") & 15))" : "min((uchar)(" + x + "), (uchar)15)";
    return wrap ? "((char)(as_char((uchar)((uint)(uchar)(" + x + ") << 4)) >> 4))" : "clamp((char)(" + x + "), (char)-8, (char)7)";
  }
  const std::string t = cl_type(to);
  const bool rtz = conv.rounding == Rounding::toward_zero;
  // kernels_cl/common.cl's names: _rtz rounds toward zero, _wrap keeps integers modulo 2^bits.
  const std::string r = rtz ? "_rtz" : "", to_int = r + (conv.overflow == Overflow::wrap ? "_wrap" : "") + suf;
  // A narrow float's conversion in the form the values need: without a NaN test where none can arrive (an
  // integer source is never NaN), only the normal path where normal_range() proved it.
  const bool finite = (nan == NanIn::none || !is_floating(from)) && has_canonical_twin(to);
  const std::string form = normal                        ? "_normal"
                           : finite                      ? "_finite"
                           : nan == NanIn::canonical && has_canonical_twin(to) ? "_canonical"
                                                         : "";
  const std::string narrow = is_floating(to) && size_of(to) <= 2 ? "cr_f32_to_" + std::string(to_string(to)) + r + form + suf : "";
  // f64 sources convert from double directly (to the narrow floats through f32 rounded to odd when rounding to
  // nearest, so the last rounding is exact; toward zero, truncating twice is truncating once).
  if (from == DataType::f64) {
    const std::string f32 = "cr_f64_to_f32" + r + suf + "(" + v + ")";
    if (to == DataType::f32) return f32;
    if (!narrow.empty()) return narrow + "(" + (rtz ? f32 : "cr_f64_to_f32_odd" + suf + "(" + v + ")") + ")";
    return "cr_double_to_" + t + to_int + "(" + v + ")";
  }
  // f32 and the narrow floats widen to float exactly; integers stay integer until they meet a float. An
  // integer of 32 or 64 bits bound for a narrow float goes through f32 rounded to odd (or truncated) for the
  // same reason. f16 bound for an integer type widens with its NaNs as 0 (common.cl's cr_f16_to_f32_nan0),
  // which the integer conversion gives them anyway, so that conversion needs no NaN test (never under
  // fused arithmetic, where convert_expr() widens to f32 first: NaN - zero point must stay NaN, not 0 - it).
  // Where no payload is read otherwise, f16 widens without rebuilding it (cr_f16_to_f32_quiet).
  const bool f16_nan0 = from == DataType::f16 && !is_floating(to);
  const std::string f16_form = f16_nan0 ? "_nan0" : payload_unread ? "_quiet" : "";
  std::string as_float;
  switch (from) {
    case DataType::f32: as_float = "(" + v + ")"; break;
    case DataType::f16: case DataType::bf16: case DataType::f8e4m3: case DataType::f8e5m2:
      as_float = "cr_" + std::string(to_string(from)) + "_to_f32" + (from == DataType::f16 ? f16_form : "") + suf + "(" + v + ")";
      break;
    default:
      as_float = !narrow.empty() && !rtz && size_of(from) >= 4 ? "cr_" + cl_type(from) + "_to_f32_odd" + suf + "(" + v + ")"
                                                               : "convert_float" + w + (rtz ? "_rtz(" : "_rte(") + v + ")";
      break;
  }
  if (to == DataType::f32) return as_float;
  if (!narrow.empty()) return narrow + "(" + as_float + ")";
  if (to == DataType::f64)
    return is_floating(from) ? "convert_double" + w + "(" + as_float + ")" : "convert_double" + w + (rtz ? "_rtz(" : "_rte(") + v + ")";
  if (is_floating(from)) {
    const bool small_sat = (nan == NanIn::none || f16_nan0) && conv.overflow == Overflow::saturate && size_of(to) <= 2;
    return "cr_float_to_" + t + (small_sat ? r + "_finite" + suf : to_int) + "(" + as_float + ")";
  }
  // Between integers: saturate, or keep the low bits through the unsigned type (C99's modular conversion).
  if (conv.overflow == Overflow::saturate) return "convert_" + t + w + "_sat(" + v + ")";
  const std::string ut = is_unsigned(to) ? t : "u" + t;
  return "as_" + t + w + "(convert_" + ut + w + "(" + v + "))";
}

// Whether the arithmetic can give a NaN from a source of type `from`: a float source may be NaN or infinite;
// from an integer (finite, bounded) every step's bound is followed, and a NaN needs an infinity first
// (inf - inf, inf * 0; the divisors are finite and not zero), which needs a bound past FLT_MAX. Where none
// can arise the kernels skip making NaN canonical (a fifth of a u8 -> f16 normalisation's time on PoCL).
bool may_give_nan(const Conversion& conv, DataType from) {
  if (is_floating(from)) return true;
  double bound = std::ldexp(1.0, bits_of(from) - (is_unsigned(from) ? 0 : 1));
  for (Param q : all_params()) {
    const ParamValues& pv = conv.param(q);
    if (!pv.present()) continue;
    if (pv.from_buffer) return true;  // values unknown until run time
    double hi = 0, lo = INFINITY;
    for (float f : pv.values) {
      hi = std::max(hi, std::fabs(static_cast<double>(f)));
      lo = std::min(lo, std::fabs(static_cast<double>(f)));
    }
    const char op = operation_of(q);
    bound = op == '*' ? bound * hi : op == '/' ? bound / lo : bound + hi;
    bound *= 1.0 + 0x1p-20;  // each f32 rounding may add half an ulp
    if (!(bound < 0x1p127)) return true;  // an infinity here may meet a zero or another infinity later
  }
  return false;
}

// Whether every f32 value a conversion from `from` hands f16 or f8e5m2 is +-0 or of an exponent in
// their normal range, 2^-14 <= |f| < 2^16: the test of common.cl's _normal conversions, which skip the
// subnormal, overflow and NaN paths (the normal path's rounding carries values from the largest finite
// value's tie on into inf; truncating leaves them at the largest finite value). Proven on the host for
// integer sources of up to 16 bits: without arithmetic from the type's limits (every other value is an
// integer between them, 0 or at least 1 in magnitude); with it, by running every source value through the
// steps in their f32 order (apply_operation()), keeping each step's distinct results over all of that
// parameter's values: a superset of the reachable values where parameters vary on different axes.
// Parameters from buffers (unknown until run time) and more than kMaxValues values at a step prove nothing;
// other types never get here (normal_range()).
bool prove_normal_range(const Conversion& conv, DataType from) {
  auto bits = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  };
  auto in_range = [&](float f) {
    const uint32_t ax = bits(f) & 0x7fffffffu;
    return ax == 0 || (ax >= 0x38800000u && ax < 0x47800000u);
  };
  const int64_t lo = is_unsigned(from) ? 0 : -(int64_t(1) << (bits_of(from) - 1));
  const int64_t hi = (int64_t(1) << (bits_of(from) - (is_unsigned(from) ? 0 : 1))) - 1;
  if (!conv.has_arithmetic()) return in_range(static_cast<float>(lo)) && in_range(static_cast<float>(hi));
  constexpr size_t kMaxValues = size_t(1) << 18;
  std::vector<float> values;
  for (int64_t v = lo; v <= hi; ++v) values.push_back(static_cast<float>(v));
  for (Param q : all_params()) {
    const ParamValues& pv = conv.param(q);
    if (!pv.present()) continue;
    if (pv.from_buffer || pv.values.size() > kMaxValues) return false;
    std::vector<float> operands;
    for (float a : pv.values) operands.push_back(operand_of(q, a));
    std::sort(operands.begin(), operands.end());
    operands.erase(std::unique(operands.begin(), operands.end()), operands.end());
    if (values.size() * operands.size() > kMaxValues) return false;
    std::vector<uint32_t> next;
    for (float x : values)
      for (float a : operands) {
        const float y = apply_operation(q, x, a);
        if (std::isnan(y)) return false;
        next.push_back(bits(y));
      }
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    values.clear();
    for (uint32_t u : next) {
      float f;
      std::memcpy(&f, &u, 4);
      values.push_back(f);
    }
  }
  return std::all_of(values.begin(), values.end(), in_range);
}

// prove_normal_range() where the types allow one (f16 or f8e5m2 from an integer of up to 16 bits; others
// answer before any copy of the conversion is kept), remembered: a kernel asks for each conversion it
// writes (dozens of times, and each implementation the selector weighs again), and a proof with per-index
// values takes milliseconds. The last few answers per thread, matched by the whole conversion.
bool normal_range(const Conversion& conv, DataType from, DataType to) {
  if ((to != DataType::f16 && to != DataType::f8e5m2) || is_floating(from) || bits_of(from) > 16) return false;
  if (!conv.has_arithmetic()) return prove_normal_range(conv, from);
  struct Known {
    Conversion conv;
    DataType from, to;
    bool normal;
  };
  thread_local std::vector<Known> known;
  for (const Known& k : known)
    if (k.from == from && k.to == to && k.conv == conv) return k.normal;
  const bool normal = prove_normal_range(conv, from);
  if (known.size() >= 8) known.erase(known.begin());
  known.push_back(Known{conv, from, to, normal});
  return normal;
}

// The text of a table index.
std::string index_text(const TableIndex& t) { return t.offset ? "(" + t.base + " + " + num(t.offset) + ")" : t.base; }

// The name of the __constant table of an indexed parameter (value_tables()), unique per kernel.
std::string table_name(Param q) { return "CR_CAT(KERNEL_NAME, _p" + std::to_string(static_cast<int>(q)) + ")"; }

// The name of the kernel argument of a parameter from a device buffer (value_args()).
std::string arg_name(Param q) { return "cr_values" + std::to_string(static_cast<int>(q)); }

// The logical coordinate on `axis` of a lane whose table index is `t` (padded coordinates may lie outside
// [0, dim)).
std::string logical_coord(const TableIndex& t) {
  const int64_t shift = t.offset - t.lower;
  return shift ? "(" + t.base + (shift > 0 ? " + " : " - ") + num(shift > 0 ? shift : -shift) + ")" : t.base;
}

// The same, clamped into [0, dim) where the kernel's padded coordinates reach past it (padding lanes: their
// results are never stored, but their reads must stay inside the values).
std::string clamped_coord(const TableIndex& t, int64_t dim) {
  const std::string c = logical_coord(t);
  const int64_t lo = t.span ? -t.lower : 0, hi = t.span ? t.span - t.lower : dim;
  return lo < 0 || hi > dim ? "clamp((IDX_T)" + c + ", (IDX_T)0, (IDX_T)" + num(dim - 1) + ")" : c;
}

// The group of coordinate text `c` (never negative: clamped_coord()) for groups of `g`: a shift where `g` is a
// power of two, as the signed division's rounding toward zero needs a sign fix-up a compiler cannot drop (3 of
// the 30 instructions per 16 lanes of a dequantization with groups of 128).
std::string group_index(const std::string& c, int64_t g) {
  const int k = log2_exact(g);
  return k < 0 ? "(" + c + ") / " + num(g) : "(" + c + ") >> " + std::to_string(k);
}

// Lane values read at per-lane indices: one read where the lanes agree, else a gather.
std::string lane_values(const std::vector<std::string>& reads) {
  if (std::all_of(reads.begin(), reads.end(), [&](const std::string& r) { return r == reads.front(); })) return reads.front();
  std::string out = "(float" + std::to_string(reads.size()) + ")(";
  for (size_t k = 0; k < reads.size(); ++k) out += (k ? ", " : "") + reads[k];
  return out + ")";
}

// The value operand of parameter `q` for `width` lanes.
std::string param_operand(const ReorderParams& p, Param q, int width, const CoordExpr& coord) {
  const ParamValues& pv = p.conversion.param(q);
  if (pv.axis < 0 && !pv.from_buffer) return hex_float(operand_of(q, pv.values[0])) + "f";
  if (pv.axis >= 0 && !coord) throw Error("internal: an indexed " + std::string(to_string(q)) + " in a kernel without coordinates");
  std::vector<TableIndex> at;
  for (int k = 0; pv.axis >= 0 && k < width; ++k) at.push_back(coord(pv.axis, k));
  if (pv.one_per_index()) {
    // Padded tables (TableShape): one entry where the lanes agree; consecutive ones as one vector load (a
    // gather of 16 scalar reads took half a u8 -> f16 reorder's time); else each lane's.
    bool consecutive = width > 1;
    for (size_t k = 1; k < at.size(); ++k)
      consecutive = consecutive && at[k].base == at[0].base && at[k].offset == at[0].offset + static_cast<int64_t>(k);
    if (consecutive) return "vload" + std::to_string(width) + "(0, " + table_name(q) + " + " + index_text(at.front()) + ")";
    std::vector<std::string> reads;
    for (const TableIndex& t : at) reads.push_back(table_name(q) + "[" + index_text(t) + "]");
    return lane_values(reads);
  }
  // Groups, rows, or run-time values: the index from each lane's logical coordinates (ParamValues::index()).
  const Dims& dims = p.dst.dims();
  const std::string from = pv.from_buffer ? arg_name(q) : table_name(q);
  auto read = [&](int k) {
    std::string i = "0";
    if (pv.axis >= 0) {
      i = clamped_coord(at[static_cast<size_t>(k)], dims[static_cast<size_t>(pv.axis)]);
      if (pv.group > 1) i = "(" + group_index(i, pv.group) + ")";
      if (pv.outer_axis >= 0) {
        const int64_t groups = (dims[static_cast<size_t>(pv.axis)] + pv.group - 1) / pv.group;
        i = clamped_coord(coord(pv.outer_axis, k), dims[static_cast<size_t>(pv.outer_axis)]) + " * " + num(groups) + " + " + i;
      }
    }
    const std::string r = from + "[" + i + "]";
    // Tables hold operand_of() already; a buffer's divisor becomes its reciprocal here (CR_DIVIDES).
    return !pv.from_buffer            ? r
           : is_zero_point(q)         ? "convert_float(" + r + ")"
           : operation_of(q) == '/'   ? "(1.0f / " + r + ")"
                                      : r;
  };
  // Lanes at consecutive indices of the axis in one row, no more of them than a group holds, span at most
  // two groups: two reads (the first lane's group and the last's) and a select, instead of a gather of a
  // read and a division per lane (a 16-lane gather cost tiled 0.9 of an int8 reorder with groups of 32).
  // Lanes from the first at or past the last lane's group start take its value; lanes outside the tensor
  // are padding, whose results are never stored.
  bool in_row = pv.axis >= 0 && width > 1;
  const TableIndex row = in_row && pv.outer_axis >= 0 ? coord(pv.outer_axis, 0) : TableIndex{};
  for (int k = 1; in_row && k < width; ++k) {
    in_row = at[static_cast<size_t>(k)].base == at[0].base && at[static_cast<size_t>(k)].offset == at[0].offset + k;
    if (pv.outer_axis >= 0) {
      const TableIndex rk = coord(pv.outer_axis, k);
      in_row = in_row && rk.base == row.base && rk.offset == row.offset;
    }
  }
  // Lanes from a multiple of the width on (TableIndex::align), with groups of a multiple of the width or
  // dividing it, start a group every min(group, width) lanes: one read each (one read in all for int8 and
  // int4 weights' groups of 32 under 4 to 16 lanes), no select. A real lane's group starts at a real lane.
  if (in_row && at[0].align % width == 0 && (pv.group % width == 0 || width % pv.group == 0)) {
    const int64_t step = std::min<int64_t>(pv.group, width);
    std::vector<std::string> reads;
    for (int k = 0; k < width; ++k) reads.push_back(read(static_cast<int>(k - k % step)));
    return lane_values(reads);
  }
  const bool two_groups = in_row && width <= pv.group;
  if (two_groups) {
    const std::string w = std::to_string(width), g = num(pv.group);
    const std::string last_start = "(" + group_index(clamped_coord(at.back(), dims[static_cast<size_t>(pv.axis)]), pv.group) + ") * " + g;
    std::string iota;
    for (int k = 0; k < width; ++k) iota += (k ? ", " : "") + std::to_string(k);
    return "select((float" + w + ")(" + read(0) + "), (float" + w + ")(" + read(width - 1) + "), (int" + w + ")(" + iota +
           ") >= (int" + w + ")((int)clamp((IDX_T)(" + last_start + " - " + logical_coord(at.front()) + "), (IDX_T)0, (IDX_T)" + w + ")))";
  }
  std::vector<std::string> reads;
  for (int k = 0; k < (pv.axis >= 0 ? width : 1); ++k) reads.push_back(read(k));
  return lane_values(reads);
}

}  // namespace

std::string convert_expr(const ReorderParams& p, const std::string& v, int width, const CoordExpr& coord) {
  const DataType from = p.src.data_type(), to = p.dst.data_type();
  const Conversion& conv = p.conversion;
  const bool normal = normal_range(conv, from, to);
  if (!conv.has_arithmetic()) return convert_types(from, to, conv, v, width, NanIn::kept, normal);
  // The documented order (Conversion::params), one parenthesised operation each: OpenCL C rounds every
  // operation to f32, and common.cl turns FP_CONTRACT off, so none fuses into a multiply-add. The result's NaNs
  // are made canonical (floats) or 0 (integers) below, so the source's NaN payload is never seen.
  std::string x = convert_types(from, DataType::f32, Conversion{}, v, width, NanIn::kept, false, /*payload_unread=*/true);
  for (Param q : all_params())
    if (conv.param(q).present()) x = "(" + x + " " + applied_operation(q) + " " + param_operand(p, q, width, coord) + ")";
  // Integer destinations make every NaN 0 anyway.
  return convert_types(DataType::f32, to, conv, x, width, may_give_nan(conv, from) ? NanIn::canonical : NanIn::none, normal);
}

std::string value_tables(const Conversion& conv, const TableShapes& shape) {
  std::vector<std::string> lines;
  for (Param q : all_params()) {
    const ParamValues& pv = conv.param(q);
    if (!pv.present() || pv.axis < 0 || pv.from_buffer) continue;
    const int64_t count = static_cast<int64_t>(pv.values.size());
    const TableShape t = shape && pv.one_per_index() ? shape(pv.axis) : TableShape{0, count};
    if (t.lower < 0 || t.lower + count > t.size) throw Error("internal: a table of " + num(count) + " values in " + num(t.size) + " entries");
    // Entries outside the values serve padding lanes, whose results are never stored: reciprocals of 1 there
    // keep them finite.
    const std::string outside = operation_of(q) == '/' ? "1" : "0";
    std::string values;
    for (int64_t i = 0; i < t.size; ++i) {
      const int64_t c = i - t.lower;
      values += (i ? ", " : "") + (c >= 0 && c < count ? hex_float(operand_of(q, pv.values[static_cast<size_t>(c)])) + "f" : outside);
    }
    lines.push_back("__constant float " + table_name(q) + "[" + num(t.size) + "] = {" + values + "};");
  }
  return macro_lines(lines);
}

ByteTable byte_table(const ReorderParams& p, int lane_axis) {
  const DataType from = p.src.data_type(), to = p.dst.data_type();
  const Conversion& conv = p.conversion;
  if ((from != DataType::u8 && from != DataType::i8) || is_nibble(to) || size_of(to) > 4) return {};
  if (!conv.has_arithmetic() && !(is_floating(to) && size_of(to) <= 2)) return {};
  ByteTable t;
  for (Param q : all_params()) {
    const ParamValues& pv = conv.param(q);
    if (!pv.present()) continue;
    if (pv.from_buffer || (pv.axis >= 0 && (!pv.one_per_index() || pv.axis != lane_axis))) return {};
    if (pv.axis >= 0) {
      t.axis = lane_axis;
      t.rows = p.dst.dims()[static_cast<size_t>(lane_axis)];
    }
  }
  t.usable = t.rows * 256 <= 4096;
  return t;
}

namespace {

// The unsigned integer type of a destination element's size: the table holds the results' bits.
std::string bits_type(DataType t) {
  switch (size_of(t)) {
    case 1: return "uchar";
    case 2: return "ushort";
    default: return "uint";
  }
}

}  // namespace

std::string byte_table_text(const ReorderParams& p, const ByteTable& t) {
  const DataType from = p.src.data_type(), to = p.dst.data_type();
  const Dims& dims = p.dst.dims();
  std::vector<int64_t> coord(dims.size(), 0);
  std::string values;
  for (int64_t r = 0; r < t.rows; ++r) {
    if (t.axis >= 0) coord[static_cast<size_t>(t.axis)] = r;
    for (int b = 0; b < 256; ++b) {
      const uint8_t in = static_cast<uint8_t>(b);
      uint32_t out = 0;  // little-endian: the result's bytes are the low ones
      convert_value(from, &in, to, &out, p.conversion, coord.data(), dims);
      values += (r || b ? ", " : "") + num(out);
    }
  }
  return "__constant " + bits_type(to) + " CR_CAT(KERNEL_NAME, _bytes)[" + num(t.rows * 256) + "] = {" + values + "};";
}

std::string byte_table_read(const ReorderParams& p, const ByteTable& t, const std::string& byte, const TableIndex& at) {
  const std::string row = t.axis >= 0 ? "(" + logical_coord(at) + ") * 256 + " : "";
  const std::string read = "CR_CAT(KERNEL_NAME, _bytes)[" + row + "(uchar)(" + byte + ")]";
  const std::string type = cl_type(p.dst.data_type());
  return type == bits_type(p.dst.data_type()) ? read : "as_" + type + "(" + read + ")";
}

std::string value_args(const Conversion& conv) {
  std::string out;
  for (Param q : all_params())
    if (conv.param(q).from_buffer)
      out += std::string(", __global const ") + (is_zero_point(q) ? "int" : "float") + "* restrict " + arg_name(q);
  if (conv.compensation.present()) out += ", __global uint* restrict cr_comp";
  return out;
}

CompensateMacros compensate_macros(const Conversion& conv, const std::function<std::string(int axis)>& coord,
                                   const std::function<std::string(int axis)>& dim) {
  const Compensation& c = conv.compensation;
  if (!c.present()) return {};
  const std::string index = c.outer_axis < 0 ? coord(c.axis)
                                             : "(" + coord(c.outer_axis) + ") * " + dim(c.axis) + " + (" + coord(c.axis) + ")";
  // A run of values with one index is summed in a register and added with one atomic: a work-item's
  // elements usually share it (the generic kernel walks a digit that does not move it). Unsigned, so the
  // sums wrap modulo 2^32 as the host's; every destination type converts to int exactly or modulo 2^32.
  return {"uint cr_sum = 0; long cr_at = -1;",
          "{ const long cr_i = " + index + "; if (cr_i != cr_at) { if (cr_at >= 0) atomic_add(cr_comp + cr_at, cr_sum); "
          "cr_at = cr_i; cr_sum = 0; } cr_sum += (uint)(int)(v); }",
          "if (cr_at >= 0) atomic_add(cr_comp + cr_at, cr_sum);"};
}

void def_compensate(Jit& jit, const CompensateMacros& m, bool replace) {
  for (const auto& [name, value] : {std::pair<const char*, const std::string&>{"CR_COMP_BEGIN", m.begin},
                                    {"CR_COMP_ADD(v)", m.add}, {"CR_COMP_END", m.end}})
    replace ? jit.set(name, value) : jit.def(name, value);
}

bool divides(const Conversion& conv) {
  return std::any_of(all_params().begin(), all_params().end(),
                     [&](Param q) { return conv.param(q).from_buffer && operation_of(q) == '/'; });
}

std::string build_options(const std::string& code, const DeviceInfo& device) {
  std::string options = "-cl-std=CL1.2";
  // OpenCL lets a single-precision division be 2.5 ulp off unless asked for the correctly rounded one, which
  // the host reference computes; devices that cannot do it keep their own (Conversion::params says so).
  if (device.exact_divide && code.find("\n#define CR_DIVIDES 1\n") != std::string::npos)
    options += " -cl-fp32-correctly-rounded-divide-sqrt";
  // CLREORDER_BUILD_OPTIONS: macro definitions for every kernel, so kernels_cl/common.cl's other forms
  // (-DCR_HALF_BUILTINS, -DCR_SOFTWARE_F16, -DCR_SOFTWARE_ROUNDING) can be checked and timed through the whole
  // library on a device (the suite, `clreorder bench`, the tests). Definitions only: other options would change
  // what the kernels mean. The options are part of every cache key, so such kernels never meet the default ones.
  const char* extra = std::getenv("CLREORDER_BUILD_OPTIONS");
  std::istringstream words(extra ? extra : "");
  for (std::string w; words >> w;) {
    const size_t end = std::min(w.find('='), w.size());
    bool name = end > 2 && w.compare(0, 2, "-D") == 0 && !std::isdigit(static_cast<unsigned char>(w[2]));
    for (size_t i = 2; name && i < end; ++i) name = std::isalnum(static_cast<unsigned char>(w[i])) || w[i] == '_';
    if (!name)
      throw Error(std::string("CLREORDER_BUILD_OPTIONS='") + extra + "': '" + w +
                  "' is not a macro definition (-DNAME or -DNAME=VALUE, e.g. -DCR_HALF_BUILTINS)");
    options += " " + w;
  }
  // CLREORDER_BUILD_LOG=1 has each program built from source print its build log (runtime.cpp); NVIDIA's
  // driver reports registers, spills and local frames there only when asked, which is what a GPU's batch
  // kernel costs beside its items (NOTES). Part of the key like the other options: a logged build is
  // never one loaded from the cache, which would print nothing.
  if (build_log_wanted() && device.platform.find("NVIDIA") != std::string::npos) options += " -cl-nv-verbose";
  return options;
}

bool build_log_wanted() {
  const char* v = std::getenv("CLREORDER_BUILD_LOG");
  if (!v || !*v) return false;
  if (std::string(v) == "1") return true;
  throw Error(std::string("CLREORDER_BUILD_LOG='") + v + "': expected 1 (print each program's build log) or unset");
}

Tuning tuning_of(const DeviceInfo& dev) {
  const char* forced = std::getenv("CLREORDER_TUNING");
  if (forced && *forced) {
    if (std::string(forced) == "cpu") return Tuning::cpu;
    if (std::string(forced) == "gpu") return Tuning::gpu;
    throw Error(std::string("CLREORDER_TUNING='") + forced + "': expected cpu or gpu, or unset");
  }
  return dev.type == "cpu" ? Tuning::cpu : Tuning::gpu;
}

int64_t index_bound(const Layout& src, const Layout& dst) {
  int64_t bound = 0;
  for (const Layout* l : {&src, &dst}) bound = std::max({bound, l->plan().base + l->plan().size, l->plan().digit_space});
  // The specialised kernels walk the permutation, whose tuples past a destination tail or into padding the
  // source lacks reach offsets beyond either layout (never accessed, but computed).
  const Permutation perm = make_permutation(src, dst);
  if (!perm.reject.empty()) return bound;
  int64_t s = std::abs(perm.src_base), d = std::abs(perm.dst_base), count = 1;
  for (const PermDigit& g : perm.digits) {
    s += (g.extent - 1) * std::abs(g.src_stride);
    d += (g.extent - 1) * std::abs(g.dst_stride);
    count *= g.extent;
  }
  for (const PermAxis& ax : perm.axes) bound = std::max({bound, ax.span, ax.read_hi});
  return std::max({bound, s, d, count});
}

bool needs_64bit(const Layout& a, const Layout& b) {
  // CLREORDER_INDEX_BITS=64 forces the 64-bit path, so tests can run it on tensors that fit in memory.
  const char* bits = std::getenv("CLREORDER_INDEX_BITS");
  if (bits && *bits) {
    if (std::string(bits) == "64") return true;
    throw Error(std::string("CLREORDER_INDEX_BITS='") + bits + "': expected 64 (force 64-bit index arithmetic) or unset");
  }
  // Half of INT_MAX: sums of two in-range terms (an offset plus a run position) still fit.
  return index_bound(a, b) >= INT_MAX / 2;
}

std::string num(int64_t v) { return std::to_string(v); }

namespace {

// Value of a plan dim from coordinate expressions: padded coordinates combined row-major.
std::string dim_value(const PlanDim& d, const std::vector<std::string>& coord) {
  std::string v;
  for (size_t k = 0; k < d.axes.size(); ++k) {
    std::string c = coord[d.axes[k]];
    if (d.lower[k]) c = "(" + c + " + " + num(d.lower[k]) + ")";
    v = k == 0 ? c : "(" + v + " * " + num(d.sizes[k]) + " + " + c + ")";
  }
  return v;
}

}  // namespace

std::string offset_expr(const IndexPlan& plan, const std::vector<std::string>& coord) {
  std::string out;
  for (const PlanDigit& g : plan.digits) {
    std::string t = dim_value(plan.pdims[g.dim], coord);
    if (g.divisor != 1) t += " / " + num(g.divisor);
    if (g.needs_mod) t = "(" + t + ") % " + num(g.extent);
    if (g.stride != 1) t = "(" + t + ") * " + num(g.stride);
    out += (out.empty() ? "" : " + ") + t;
  }
  if (plan.base) out += " + " + num(plan.base);
  return out.empty() ? "0" : out;
}

std::vector<std::string> coord_names(int rank, const std::string& pre) {
  std::vector<std::string> out;
  for (int a = 0; a < rank; ++a) out.push_back(pre + "c" + std::to_string(a));
  return out;
}

std::string row_major_index(const Dims& dims, const std::vector<std::string>& coord) {
  std::string linear;
  for (size_t a = 0; a < dims.size(); ++a) linear = a == 0 ? coord[0] : "(" + linear + ") * " + num(dims[a]) + " + " + coord[a];
  return linear;
}

std::vector<std::string> split_row_major(const Dims& dims, const std::string& var, const std::vector<std::string>& coord) {
  std::vector<std::string> lines;
  for (size_t a = dims.size(); a-- > 1;)
    lines.push_back("const IDX_T " + coord[a] + " = " + var + " % " + num(dims[a]) + "; " + var + " /= " + num(dims[a]) + ";");
  lines.push_back("const IDX_T " + coord[0] + " = " + var + ";");
  return lines;
}

std::string decode_stmts(const IndexPlan& plan, const std::string& p, const std::string& pre) {
  std::vector<std::string> lines;
  const size_t n = plan.digits.size();
  std::vector<std::string> g(n);
  for (size_t k = 0; k < n; ++k) g[k] = pre + "g" + std::to_string(k);
  lines.push_back("IDX_T " + pre + "r = " + p + ";");
  for (size_t k = n; k-- > 1;) {
    lines.push_back("const IDX_T " + g[k] + " = " + pre + "r % " + num(plan.digits[k].extent) + "; " + pre + "r /= " +
                    num(plan.digits[k].extent) + ";");
  }
  if (n) lines.push_back("const IDX_T " + g[0] + " = " + pre + "r;");

  std::vector<std::string> valid, owned;
  std::vector<std::string> coord = coord_names(static_cast<int>(plan.dims.size()), pre);
  for (size_t d = 0; d < plan.pdims.size(); ++d) {
    const PlanDim& pd = plan.pdims[d];
    std::string v;
    for (size_t k = 0; k < n; ++k) {
      if (plan.digits[k].dim != static_cast<int>(d)) continue;
      std::string t = plan.digits[k].divisor == 1 ? g[k] : g[k] + " * " + num(plan.digits[k].divisor);
      v += (v.empty() ? "" : " + ") + t;
    }
    std::string vd = pre + "v" + std::to_string(d);
    lines.push_back("const IDX_T " + vd + " = " + (v.empty() ? "0" : v) + ";");
    // Split the dim value into its axes, innermost first; each axis' range decides which checks are needed.
    std::string rest = vd;
    int64_t rest_extent = pd.extent;
    for (size_t k = pd.axes.size(); k-- > 0;) {
      const int a = pd.axes[k];
      const int64_t lo = pd.lower[k], dim = plan.dims[a];
      std::string raw;
      int64_t range;
      if (k == 0) {
        raw = rest;
        range = rest_extent;
      } else {
        raw = "(" + rest + " % " + num(pd.sizes[k]) + ")";
        range = pd.sizes[k];
        rest = "(" + rest + " / " + num(pd.sizes[k]) + ")";
        rest_extent = (rest_extent + pd.sizes[k] - 1) / pd.sizes[k];
      }
      lines.push_back("const IDX_T " + coord[a] + " = " + raw + (lo ? " - " + num(lo) : "") + ";");
      std::vector<std::string>& checks = pd.owned ? valid : owned;
      if (lo) checks.push_back(coord[a] + " >= 0");
      if (range - lo > dim) checks.push_back(coord[a] + " < " + num(dim));
    }
  }
  // Slots of a dim that owns no padding (a TPU layout's channels before the first and after the last) are
  // another tensor's: the work-item leaves them alone.
  if (!owned.empty()) lines.push_back("if (!(" + join_and(owned) + ")) return;");
  std::string off;
  if (plan.dense()) {
    off = p;
  } else {
    for (size_t k = 0; k < n; ++k)
      off += (off.empty() ? "" : " + ") + (plan.digits[k].stride == 1 ? g[k] : g[k] + " * " + num(plan.digits[k].stride));
  }
  lines.push_back("const IDX_T " + pre + "off = " + off + (plan.base ? " + " + num(plan.base) : "") + ";");
  lines.push_back("const bool " + pre + "valid = " + (valid.empty() ? "true" : join_and(valid)) + ";");
  return macro_lines(lines);
}

}  // namespace clreorder
