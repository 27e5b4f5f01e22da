// Device tests on the default OpenCL device (PoCL in CI): every data format to and from plain and every
// pair inside each rank on shapes that are not block multiples, data type pairs on random bit patterns,
// padding, byte offsets, the offset probe against the host plan, the program cache and error messages.
// The destination is always pre-filled with a non-zero pattern, so the zeros must be written.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <tuple>
#include <unistd.h>
#include <memory>

#include "bad_inputs.hpp"
#include "clreorder/format.hpp"
#include "clreorder/reference.hpp"
#include "clreorder/reorder.hpp"
#include "code_checks.hpp"
#include "codegen.hpp"
#include "probe.hpp"
#include "device_cases.hpp"
#include "plan_checks.hpp"
#include "test_support.hpp"

using namespace clreorder;
using namespace clreorder_test;


TEST(Device, EveryDataFormatToAndFromPlain) {
  REQUIRE_DEVICE(e);
  std::vector<Case> cases;
  for (int rank = 2; rank <= 8; ++rank) {
    Format plain = Format::parse(plain_order(rank));
    for (const Format& f : supported_data_formats(rank)) {
      for (int64_t b : {3, 17}) {
        cases.push_back(make_case(plain, f, odd_shape(rank, b)));
        cases.push_back(make_case(f, plain, odd_shape(rank, b)));
      }
    }
  }
  EXPECT_GT(cases.size(), 200u);
  run_batch(*e, cases);
}

class EveryPairInsideRank : public ::testing::TestWithParam<int> {};

TEST_P(EveryPairInsideRank, AllOrderedPairs) {
  REQUIRE_DEVICE(e);
  const int rank = GetParam();
  std::vector<Format> formats = supported_data_formats(rank);
  std::vector<Case> cases;
  for (const Format& a : formats)
    for (const Format& b : formats) cases.push_back(make_case(a, b, odd_shape(rank, 3)));
  ASSERT_FALSE(cases.empty());
  run_batch(*e, cases);
}

INSTANTIATE_TEST_SUITE_P(Data, EveryPairInsideRank, ::testing::Values(2, 4, 5),
                         [](const ::testing::TestParamInfo<int>& i) { return "rank" + std::to_string(i.param); });

// f32, f16 and bf16: the types every conversion test pairs with all others on every format pair.
static bool is_narrow_float_or_f32(DataType t) { return t == DataType::f32 || t == DataType::f16 || t == DataType::bf16; }

// Whether some value of `from` converts to `to` inexactly (so the rounding mode matters), and whether some
// value lies outside `to`'s range (so the overflow mode matters).
static bool can_round(DataType from, DataType to) {
  if (from == to) return false;
  if (!is_floating(to)) return is_floating(from);
  if (is_floating(from)) return bits_of(to) < bits_of(from) || (bits_of(to) == bits_of(from) && bits_of(to) <= 16);
  return bits_of(from) > significand_bits(to);
}
static bool can_overflow(DataType from, DataType to) {
  if (from == to || is_floating(to)) return false;
  if (is_floating(from)) return true;
  return bits_of(from) > bits_of(to) || is_unsigned(from) != is_unsigned(to);
}

// The conversions other than the default, and whether each changes what `from` -> `to` computes.
static const std::vector<Conversion>& other_conversions() {
  static const std::vector<Conversion> all = {modes(Rounding::toward_zero, Overflow::saturate),
                                              modes(Rounding::nearest_even, Overflow::wrap),
                                              modes(Rounding::toward_zero, Overflow::wrap)};
  return all;
}
static bool matters(const Conversion& c, DataType from, DataType to) {
  return (c.rounding != Rounding::nearest_even && can_round(from, to)) || (c.overflow != Overflow::saturate && can_overflow(from, to));
}

// Random bit patterns exercise NaN payloads, infinities, subnormals, ties and saturation on every pair.
TEST(Device, EveryDataTypePairOnRandomBits) {
  REQUIRE_DEVICE(e);
  std::vector<Case> cases;
  const std::pair<const char*, const char*> formats[] = {{"bfyx", "b_fs_yx_fsv16"}, {"b_fs_yx_fsv16", "byxf"}, {"byxf", "byxf"}};
  // All 256 pairs on the first format pair; on the others each type to and from f32, f16, bf16 and itself (the
  // conversions are one family of functions per pair, the formats change the vector paths around them).
  for (const auto& [s, d] : formats)
    for (DataType st : all_data_types())
      for (DataType dt : all_data_types())
        if (s == formats[0].first || st == dt || is_narrow_float_or_f32(st) || is_narrow_float_or_f32(dt))
          cases.push_back(make_case(Format::parse(s), Format::parse(d), {2, 19, 5, 7}, st, dt));
  run_batch(*e, cases, true);
}

// Every f16, bf16, f8e4m3 and f8e5m2 pattern, f32 and f64 edge values and every integer type's limits,
// converted to every type on the device, against the host.
TEST(Device, ConversionsMatchTheHostBitForBit) {
  REQUIRE_DEVICE(e);
  Format plain = Format::parse("bfyx");
  std::vector<uint8_t> all16(65536 * 2);
  for (uint32_t h = 0; h < 65536; ++h) std::memcpy(&all16[h * 2], &h, 2);
  std::vector<uint8_t> all8(256);
  for (int b = 0; b < 256; ++b) all8[static_cast<size_t>(b)] = static_cast<uint8_t>(b);
  std::vector<float> edges = {0.0f, -0.0f, 0.5f, 1.5f, 2.5f, -2.5f, 127.5f, 128.0f, -128.5f, 255.5f, 256.0f, 65504.0f,
                              -3.5f, 300.7f, -300.7f, 70000.5f, 1e30f, -1e20f, 3.4028235e38f, std::ldexp(3.0f, 62),
                              -std::ldexp(3.0f, 62), std::ldexp(1.0f, 63), std::ldexp(1.0f, 64), std::ldexp(1.5f, 40),
                              65519.99f, 65520.0f, 1e10f, -1e10f, 2147483520.0f, 2147483648.0f, -2147483904.0f,
                              9.2233715e18f, 9.223372e18f, std::ldexp(1.0f, -24), std::ldexp(1.0f, -25),
                              std::ldexp(1.5f, -25), std::ldexp(1.0f, -14), std::ldexp(1.0f, -149), 1.0f + std::ldexp(1.0f, -11),
                              1.0f + std::ldexp(3.0f, -11), 1.0f + std::ldexp(1.0f, -8), INFINITY, -INFINITY, NAN,
                              std::nanf("0x12345"), -std::nanf("0x400001"), -0.5f, -1.5f, 0.49999997f, -0.49999997f,
                              32767.5f, -32768.5f, 65535.5f, 4194303.5f, -4194304.5f, 8388607.0f, 16777216.0f,
                              8388607.5f, -8388607.5f, 4194304.5f, -2147483648.0f, 4294967040.0f, 4294967296.0f,
                              -9.223372e18f, -9.2233731e18f, 1.8446743e19f, 1.8446744e19f, 6.5f, 7.5f, -7.5f,
                              -8.5f, 14.5f, 15.5f, 16.0f, -9.0f};
  // f64: the integer types' limits and their rounding ties, values whose rounding through f32 to nearest
  // even would round twice (1 + 2^-11 + 2^-40 to f16), f32's and f16's overflow and subnormal boundaries,
  // NaN payloads.
  const double p = 1.0 / 1099511627776.0;  // 2^-40
  std::vector<double> dedges = {0.0, -0.0, 0.5, 1.5, 2.5, -2.5, 127.5, -128.5, 255.5, 32767.5, -32768.5, 65535.5,
                                65536.0, 65504.0, 65519.99, 65520.0, 2147483647.5, -2147483648.5, 4294967295.5,
                                4294967296.0, 9.2233720368547758e18, 9.223372036854775e18, -9.2233720368547758e18,
                                1.8446744073709552e19, 1.844674407370955e19, 1e300, -1e300, 3.4028234663852886e38,
                                3.4028235677973366e38, 3.4028235677973362e38, std::ldexp(1.0, -149), std::ldexp(1.5, -149),
                                std::ldexp(1.0, -150), std::ldexp(1.0, -150) * (1 + p), std::ldexp(1.0, -1074),
                                std::ldexp(1.0, -25) * (1 + p), 1.0 + std::ldexp(1.0, -11) + p, 1.0 + std::ldexp(1.0, -11),
                                1.0 + std::ldexp(1.0, -8) + p, -(1.0 + std::ldexp(1.0, -8) + p), 1.0 + std::ldexp(1.0, -24) + p,
                                INFINITY, -INFINITY, NAN, std::nan("0x123456789"), -std::nan("0x8000000000001")};
  std::vector<uint8_t> f64(dedges.size() * 8);
  std::memcpy(f64.data(), dedges.data(), f64.size());
  // Integers: each type's limits, and values that f32 (2^24 + 1), f16 (2049) or f64 (2^53 + 1) round.
  auto ints = [](const std::vector<int64_t>& v, size_t bytes) {
    std::vector<uint8_t> out(v.size() * bytes);
    for (size_t k = 0; k < v.size(); ++k) std::memcpy(&out[k * bytes], &v[k], bytes);  // little-endian
    return out;
  };
  const int64_t big = int64_t(1) << 53;
  const std::vector<std::pair<DataType, std::vector<uint8_t>>> sources = {
      {DataType::f16, all16}, {DataType::bf16, all16}, {DataType::f32, {}}, {DataType::f64, f64},
      {DataType::f8e4m3, all8}, {DataType::f8e5m2, all8},
      {DataType::u4, all8}, {DataType::i4, all8},  // every 4-bit value, twice in each nibble
      {DataType::i16, ints({0, 1, -1, 7, 8, -8, -9, 15, 16, 127, 128, -129, 255, 256, 2049, 2051, INT16_MAX, INT16_MIN}, 2)},
      {DataType::u16, ints({0, 1, 255, 256, 2049, 2051, 32767, 32768, 65535}, 2)},
      {DataType::u32, ints({0, 1, 65535, 65536, 16777217, 16777219, INT32_MAX, int64_t(1) << 31, UINT32_MAX}, 4)},
      {DataType::i64, ints({0, -1, INT32_MAX, INT32_MIN, int64_t(UINT32_MAX), 16777217, big + 1, -(big + 1), big + 3,
                            INT64_MAX, INT64_MIN}, 8)},
      {DataType::u64, ints({0, 1, INT64_MAX, INT64_MIN, -1, big + 1, -(big + 1), int64_t(UINT32_MAX) + 1}, 8)}};
  // Both ways for the 8-bit floats: every pattern (above), and back from f32 every value, each midpoint
  // between neighbours (ties to even) and the floats just beside it.
  for (float (*decode)(uint8_t) : {f8e4m3_to_f32, f8e5m2_to_f32})
    for (int b = 0; b < 255; ++b) {
      const float v = decode(static_cast<uint8_t>(b)), next = decode(static_cast<uint8_t>(b + 1));
      edges.push_back(v);
      if (b == 0x7f || !std::isfinite(v) || !std::isfinite(next)) continue;  // no neighbour above
      const float mid = (v + next) / 2;  // exact: the 8-bit floats are far narrower than f32
      edges.insert(edges.end(), {mid, std::nextafter(mid, v), std::nextafter(mid, next)});
    }
  // Their overflow boundaries (f8e4m3: the tie between 448 and 480, beyond which NaN; f8e5m2: 61440, the tie
  // to 2^16 = inf) and the ties below their smallest subnormals.
  for (float v : {464.0f, 480.0f, 61440.0f, std::ldexp(1.0f, -10), std::ldexp(1.0f, -17)})
    edges.insert(edges.end(), {v, -v, std::nextafter(v, 0.0f), std::nextafter(v, INFINITY)});
  std::vector<uint8_t> f32(edges.size() * 4);
  std::memcpy(f32.data(), edges.data(), f32.size());
  // Every pair under the default conversion; under each other one (issue 16's modes) the pairs it changes.
  std::vector<Conversion> conversions = {Conversion{}};
  conversions.insert(conversions.end(), other_conversions().begin(), other_conversions().end());
  for (const Conversion& conv : conversions) {
    std::vector<std::pair<Case, const std::vector<uint8_t>*>> cases;
    for (DataType to : all_data_types())
      for (const auto& [from, bytes] : sources) {
        if (conv != Conversion{} && !matters(conv, from, to)) continue;
        const std::vector<uint8_t>& src = from == DataType::f32 ? f32 : bytes;
        Dims shape = {1, 1, 1, static_cast<int64_t>(src.size() * 8 / static_cast<size_t>(bits_of(from)))};
        cases.push_back({Case{Layout(plain, from, shape), Layout(plain, to, shape),
                              std::string("bfyx ") + to_string(from) + " -> " + to_string(to) + " " + conv.key(), conv},
                         &src});
      }
    std::vector<std::pair<Layout, Layout>> pairs;
    for (const auto& c : cases) pairs.emplace_back(c.first.src, c.first.dst);
    prepare(*e, pairs, "", conv);  // one program for each conversion
    for (const auto& [c, src] : cases) {
      std::string err = run_case(*e, c, *src);
      if (!err.empty()) ADD_FAILURE() << err;
    }
  }
}

// The modes on the vector paths (tiled's transposes convert whole registers) with random bits, and forced on
// every implementation. Each destination type's vector functions are reached from f32 (f16 and bf16 widen to
// it first), f64 and an integer type (ConversionsMatchTheHostBitForBit compares every pair element by
// element; each pair here is another kernel to compile).
TEST(Device, ConversionModesOnEveryPath) {
  REQUIRE_DEVICE(e);
  std::vector<Case> cases;
  const std::vector<DataType>& types = all_data_types();  // the float types, then the 8 integer types
  const size_t ints = static_cast<size_t>(std::find_if(types.begin(), types.end(), [](DataType t) { return !is_floating(t); }) - types.begin());
  for (size_t m = 0; m < other_conversions().size(); ++m)
    for (size_t j = 0; j < types.size(); ++j)
      for (DataType st : types) {
        const Conversion& conv = other_conversions()[m];
        const DataType dt = types[j];
        // And one integer source: another one for each destination and mode.
        const bool chosen = st == DataType::f32 || st == DataType::f64 || st == types[ints + (j + 3 + m) % 8];
        if (chosen && matters(conv, st, dt)) {
          cases.push_back(converting(make_case(Format::parse("bfyx"), Format::parse("b_fs_yx_fsv16"), {2, 19, 5, 7}, st, dt), conv));
        }
      }
  run_batch(*e, cases, true);
  const Conversion truncate = modes(Rounding::toward_zero, Overflow::wrap);
  std::vector<const ReorderImpl*> impls = {&KernelSelector::instance().agnostic()};
  for (const auto& impl : KernelSelector::instance().impls()) impls.push_back(impl.get());
  for (const ReorderImpl* impl : impls) {
    // Each type pair on the first format pair the implementation accepts.
    std::vector<Case> forced;
    for (const auto& [st, dt] : {std::make_pair(DataType::f32, DataType::i8), std::make_pair(DataType::f16, DataType::u8),
                                 std::make_pair(DataType::i32, DataType::bf16), std::make_pair(DataType::u64, DataType::i16)})
      for (const auto& [s, d, shape] : {std::make_tuple("bfyx", "byxf", Dims{2, 24, 3, 5}),
                                        std::make_tuple("oiyx", "os_is_yx_osv16_isv4", Dims{32, 20, 3, 3}),
                                        std::make_tuple("b_fs_yx_fsv16", "bfyx", Dims{2, 32, 7, 7})}) {
        const Case c = converting(make_case(Format::parse(s), Format::parse(d), shape, st, dt), truncate);
        if (impl->reject(ReorderParams{c.src, c.dst, e->info(), c.conversion}).empty()) {
          forced.push_back(c);
          break;
        }
      }
    EXPECT_FALSE(forced.empty()) << impl->name();
    run_batch(*e, forced, true, impl->name());
  }
}

// The conversions common.cl computes in x86 instructions where the compiler targets them (PoCL on the host
// CPU: F16C's vcvtps2ph and vcvtph2ps for f16 both ways, vroundps for f32's rounding to an integer) and in
// the bit operations every other device runs (built here with -D CR_SOFTWARE_F16 -D CR_SOFTWARE_ROUNDING),
// each byte-exact against the host: every f16 and f8e5m2 pattern widened; f32s of each sign, exponent
// (below f16's smallest subnormal to past 2^33, around 2^63, f32's extremes) and top 7 mantissa bits with
// low halves at and beside the rounding ties (f16 drops 13 bits from normals, more from subnormals) narrowed
// to f16 to nearest even, toward zero and through the fused arithmetic (its canonical NaN), and converted to
// i32, u32, i64 and, wrapping, to i8 and u16 in both roundings; an i32 source to f16 (no NaN test) and a u8
// one (the normal path alone); every f16 pattern into i8, u8, i32, u4, wrapping into u16 toward zero (widened
// with NaNs as 0, cr_f16_to_f32_nan0, the conversions after it without a NaN test), and through fused
// arithmetic (widened with NaNs in any form, cr_f16_to_f32_quiet) into i8 (a NaN must stay NaN through the
// subtraction: 0, not 0 - 2.5 rounded), f16 and f32 (the canonical NaN). The selector's kernel (vectors of 4 to 16) and generic's (scalars), in each of
// the four builds: the device's default, the bit operations, f16 through OpenCL's vstore_half/vload_half
// (-D CR_HALF_BUILTINS: every device but x86 CPUs gets them by default), and F16C without AVX-512's 16-lane
// forms (-D CR_NO_AVX512: what x86 CPUs without AVX-512 run; the default where the device has it).
TEST(Device, ConversionsInInstructionsAndInBitOperations) {
  REQUIRE_DEVICE(e);
  using T = DataType;
  const Format plain = Format::parse("bfyx"), blocked = Format::parse("b_fs_yx_fsv16");
  std::vector<uint8_t> halves(65536 * 2), bytes(256), singles;
  for (uint32_t h = 0; h < 65536; ++h) std::memcpy(&halves[h * 2], &h, 2);
  for (int b = 0; b < 256; ++b) bytes[static_cast<size_t>(b)] = static_cast<uint8_t>(b);
  std::vector<uint32_t> exponents = {0, 1, 2, 200, 253, 254, 255};
  for (uint32_t x = 98; x <= 160; ++x) exponents.push_back(x);
  for (uint32_t x = 186; x <= 192; ++x) exponents.push_back(x);
  for (uint32_t sign : {0u, 1u})
    for (uint32_t x : exponents)
      for (uint32_t top = 0; top < 128; ++top)
        for (uint32_t low : {0x0000u, 0x0fffu, 0x1000u, 0x1001u, 0x2000u, 0x3000u, 0x6000u, 0x8000u, 0xffffu}) {
          const uint32_t bits = sign << 31 | x << 23 | top << 16 | low;
          singles.insert(singles.end(), reinterpret_cast<const uint8_t*>(&bits), reinterpret_cast<const uint8_t*>(&bits) + 4);
        }
  const std::vector<uint8_t> ints = random_bytes(4096 * 4, 41);
  const int64_t rows = static_cast<int64_t>(singles.size() / 4 / 16 / 16);  // 2 x 77 exponents x 128 x 9 / 256
  const Dims s16 = {1, 16, 64, 64}, s32 = {1, 16, rows, 16};
  const Conversion rtz = modes(Rounding::toward_zero, Overflow::saturate), fused = with_params({}, {{Param::mul, {{1.0f}, -1}}});
  struct Run {
    Case c;
    const std::vector<uint8_t>* src;
  };
  const std::vector<Run> runs = {
      {make_case(plain, plain, s16, T::f16, T::f32), &halves},
      {make_case(blocked, plain, s16, T::f16, T::f32), &halves},
      {make_case(plain, blocked, {1, 1, 1, 256}, T::f8e5m2, T::f32), &bytes},
      {make_case(plain, plain, s32, T::f32, T::f16), &singles},
      {make_case(plain, blocked, s32, T::f32, T::f16), &singles},
      {converting(make_case(plain, blocked, s32, T::f32, T::f16), rtz), &singles},
      {converting(make_case(plain, plain, s32, T::f32, T::f16), fused), &singles},
      {converting(make_case(plain, blocked, s32, T::f32, T::f16), with_params(rtz, {{Param::mul, {{1.0f}, -1}}})), &singles},
      {make_case(plain, blocked, {1, 16, 16, 16}, T::i32, T::f16), &ints},
      {make_case(plain, blocked, {1, 1, 1, 256}, T::u8, T::f16), &bytes},
      {make_case(plain, blocked, s16, T::f16, T::i8), &halves},
      {make_case(blocked, plain, s16, T::f16, T::u8), &halves},
      {make_case(plain, plain, s16, T::f16, T::i32), &halves},
      {make_case(plain, blocked, s16, T::f16, T::u4), &halves},
      {converting(make_case(plain, plain, s16, T::f16, T::u16), modes(Rounding::toward_zero, Overflow::wrap)), &halves},
      {converting(make_case(plain, blocked, s16, T::f16, T::i8), with_params({}, {{Param::sub, {{2.5f}, -1}}})), &halves},
      {converting(make_case(plain, blocked, s16, T::f16, T::f16), fused), &halves},
      {converting(make_case(blocked, plain, s16, T::f16, T::f32), with_params({}, {{Param::sub, {{2.5f}, -1}}})), &halves},
      {make_case(plain, blocked, s32, T::f32, T::i32), &singles},
      {converting(make_case(plain, plain, s32, T::f32, T::u32), rtz), &singles},
      {make_case(plain, plain, s32, T::f32, T::i64), &singles},
      {converting(make_case(plain, blocked, s32, T::f32, T::i8), modes(Rounding::nearest_even, Overflow::wrap)), &singles},
      {converting(make_case(plain, plain, s32, T::f32, T::u16), modes(Rounding::toward_zero, Overflow::wrap)), &singles}};
  for (const char* options : {"", " -D CR_SOFTWARE_F16 -D CR_SOFTWARE_ROUNDING", " -D CR_HALF_BUILTINS", " -D CR_NO_AVX512"}) {
    std::vector<std::pair<const Run*, KernelData>> kernels;
    std::vector<KernelSource> sources;
    for (const Run& r : runs)
      for (const std::string force : {"", "generic"}) {
        kernels.emplace_back(&r, plan_reorder(e->info(), r.c.src, r.c.dst, force, r.c.conversion));
        kernels.back().second.source.options += options;
        sources.push_back(kernels.back().second.source);
      }
    ProgramCache::instance().build(e->context(), e->device(), sources);  // one program
    for (const auto& entry : kernels) {
      const Run* run = entry.first;
      const KernelData& kd = entry.second;
      const std::string err = check_planned(*e, run->c, kd, *run->src);
      if (!err.empty()) ADD_FAILURE() << err << " [" << kd.impl << options << "]";
    }
  }
}

// The shorter conversions to narrow floats where the host proved the values allow them (codegen.cpp's
// normal_range(): _normal, only the normal path; _finite, no NaN test) and the full ones where it could not:
// every value of each integer source up to 16 bits in each of 4 channels, through the selector's kernel and
// generic, byte-exact against the host. The cases just outside a proof (a scale giving f16 subnormals, one
// overflowing) fail here if the proof ever says yes to them; u16's 65535, just inside, rounds to inf.
TEST(Device, ProvenValueRangesPickTheShortConversions) {
  REQUIRE_DEVICE(e);
  using T = DataType;
  const std::vector<float> sub4 = {123.7f, 116.3f, 103.5f, -7.25f}, div4 = {58.4f, 57.1f, 57.4f, 0.3f};
  const ParamValues from_buffer{{0.02f}, -1, 1, -1, true};
  struct Proof {
    T from, to;
    Conversion conv;
    const char* form;  // the conversion the kernel must call
  };
  const std::vector<Proof> proofs = {
      {T::u8, T::f16, {}, "cr_f32_to_f16_normal"},
      {T::i4, T::f16, {}, "cr_f32_to_f16_normal"},
      {T::i16, T::f8e5m2, {}, "cr_f32_to_f8e5m2_normal"},
      {T::u16, T::f16, {}, "cr_f32_to_f16_normal"},  // 65535 rounds to inf by the normal path's carry
      {T::u16, T::f16, modes(Rounding::toward_zero, Overflow::saturate), "cr_f32_to_f16_rtz_normal"},  // 65535 -> 65504
      {T::i32, T::f16, {}, "cr_f32_to_f16_finite"},
      {T::u8, T::bf16, {}, "cr_f32_to_bf16_finite"},
      {T::u8, T::f16, with_params({}, {{Param::sub, {sub4, 1}}, {Param::div, {div4, 1}}}), "cr_f32_to_f16_normal"},
      {T::i8, T::f16, with_params(modes(Rounding::toward_zero, Overflow::saturate),
                                  {{Param::src_zero_point, {{3}, -1}}, {Param::src_scale, {{0x1p-10f}, -1}}}),
       "cr_f32_to_f16_rtz_normal"},
      {T::u8, T::f16, with_params({}, {{Param::mul, {{0x1p-20f}, -1}}}), "cr_f32_to_f16_finite"},  // subnormals
      {T::u8, T::f16, with_params({}, {{Param::mul, {{1, 2, 300, 4}, 1}}}), "cr_f32_to_f16_finite"},  // 255 * 300
      {T::u8, T::f16, with_params({}, {{Param::src_scale, from_buffer}}), "cr_f32_to_f16_canonical"},
      {T::f32, T::f16, {}, "cr_f32_to_f16("}};
  for (const Proof& p : proofs) {
    const int64_t count = bits_of(p.from) >= 32 ? 4096 : int64_t(1) << bits_of(p.from);
    const Dims shape = {1, 4, count / 64 + (count < 64), std::min<int64_t>(count, 64)};
    const Case c = converting(make_case(Format::parse("bfyx"), Format::parse("byxf"), shape, p.from, p.to), p.conv);
    // Channel by channel every value of the type from its lowest (f32: a ramp through the f16 range's edges).
    std::vector<uint8_t> src(static_cast<size_t>(c.src.bytes()));
    for_each_coord(c.src.dims(), [&](const Dims& at, int64_t n) {
      uint8_t element[8];
      if (p.from == T::f32) {
        const double v = std::ldexp(1.0 + static_cast<double>(n % 97), static_cast<int>(n % 48) - 30);
        convert_element(T::f64, &v, T::f32, element);
      } else {
        const int64_t v = n % count + (is_unsigned(p.from) ? 0 : -count / 2);
        convert_element(T::i64, &v, p.from, element);
      }
      write_element(p.from, src.data(), c.src.plan().offset(at.data()), element);
    });
    const std::string code = plan_reorder(e->info(), c.src, c.dst, "", c.conversion).source.code;
    EXPECT_NE(code.find(p.form), std::string::npos) << c.label << ": no " << p.form << " in\n" << code;
    for (const std::string force : {"", "generic"}) {
      const std::string err = run_case(*e, c, src, force);
      if (!err.empty()) ADD_FAILURE() << err << (force.empty() ? "" : " [generic]");
    }
  }
}

// Tiled's rows whose last vector crosses a blocked tail (an image's channels into blocks) look an 8-bit
// source's tail lanes up in a table of every result (codegen.cpp's byte_table()): one row or one per
// channel, destinations of 1, 2 and 4 bytes (bit patterns read as chars, shorts and floats), tails of 1 to 3
// lanes, with and without arithmetic; and where the table does not apply (19 channels of per-channel values
// would take 4864 entries, a plain u8 -> f32 conversion is cheaper than a read), none. Forced on tiled, on
// random bytes as well, against the host.
TEST(Device, ByteTablesForTheTailLanes) {
  REQUIRE_DEVICE(e);
  using T = DataType;
  auto F = [](const char* name) { return Format::parse(name); };
  struct Tail {
    Case c;
    bool table;
  };
  const Conversion norm = with_params({}, {{Param::sub, {{123.7f, 116.3f, 103.5f}, 1}}, {Param::div, {{58.4f, 57.1f, 57.4f}, 1}}});
  const std::vector<Tail> tails = {
      {converting(make_case(F("byxf"), F("b_fs_yx_fsv16"), {2, 3, 8, 16}, T::u8, T::f16), norm), true},
      {make_case(F("byxf"), F("b_fs_yx_fsv16"), {2, 19, 8, 16}, T::i8, T::bf16), true},
      {make_case(F("byxf"), F("b_fs_yx_fsv4"), {2, 5, 8, 16}, T::u8, T::f8e4m3), true},
      {converting(make_case(F("byxf"), F("b_fs_yx_fsv16"), {2, 3, 8, 16}, T::u8, T::f32),
                  with_params(modes(Rounding::toward_zero, Overflow::saturate),
                              {{Param::sub, {{100.5f}, -1}}, {Param::mul, {{0.25f, -3, 1e-3f}, 1}}})),
       true},
      {converting(make_case(F("byxf"), F("b_fs_yx_fsv4"), {2, 6, 8, 16}, T::i8, T::i8),
                  with_params(modes(Rounding::nearest_even, Overflow::wrap),
                              {{Param::src_zero_point, {{-3}, -1}}, {Param::dst_scale, {{0.5f, 0.3f, 2, 0.1f, 7, 0.05f}, 1}}})),
       true},
      {converting(make_case(F("byxf"), F("b_fs_yx_fsv16"), {2, 3, 8, 16}, T::u8, T::i16), with_params({}, {{Param::mul, {{300}, -1}}})), true},
      {converting(make_case(F("byxf"), F("b_fs_yx_fsv16"), {2, 19, 8, 16}, T::u8, T::f16),
                  with_params({}, {{Param::sub, {ramp(19, 1, 7), 1}}})),
       false},
      {make_case(F("byxf"), F("b_fs_yx_fsv16"), {2, 3, 8, 16}, T::u8, T::f32), false}};
  std::vector<Case> cases;
  for (const Tail& t : tails) {
    const std::string code = plan_reorder(e->info(), t.c.src, t.c.dst, "tiled", t.c.conversion).source.code;
    EXPECT_EQ(code.find("_bytes)[") != std::string::npos, t.table) << t.c.label << "\n" << code;
    cases.push_back(t.c);
  }
  run_batch(*e, cases, true, "tiled");
}

// Each case forced on every implementation that accepts it (the agnostic one too), on random bits as well; an
// implementation that accepts none of them fails.
static void run_on_every_impl(const Engine& e, const std::vector<Case>& cases) {
  std::vector<const ReorderImpl*> impls = {&KernelSelector::instance().agnostic()};
  for (const auto& impl : KernelSelector::instance().impls()) impls.push_back(impl.get());
  for (const ReorderImpl* impl : impls) {
    std::vector<Case> forced;
    for (const Case& c : cases)
      if (impl->reject(ReorderParams{c.src, c.dst, e.info(), c.conversion}).empty()) forced.push_back(c);
    EXPECT_FALSE(forced.empty()) << impl->name() << " ran none";
    run_batch(e, forced, true, impl->name());
  }
}

// Fused dims (yxs) beside axes kept apart: every implementation forced where it accepts, both ways, with
// the combined coordinate's blocked tails (yxsv2 over 3x3 and 1x5, yxsv4 over 3x3), padding on y on either
// side, conversions, kept padding and 8- and 16-bit types.
TEST(Device, FusedDimsOnEveryImplementation) {
  REQUIRE_DEVICE(e);
  auto F = [](const char* name) { return Format::parse(name); };
  using T = DataType;
  const std::vector<Case> cases = {
      make_case(F("oiyx"), F("i_yxs_os_yxsv2_osv16"), {33, 17, 3, 3}),
      make_case(F("i_yxs_os_yxsv2_osv16"), F("oiyx"), {33, 17, 1, 5}, T::f16, T::f32),
      make_case(F("os_is_yx_isv16_osv16"), F("i_yxs_os_yxsv2_osv16"), {32, 16, 3, 3}, T::i8, T::i8, {0, 0, 1, 0}, {}, {0, 0, 1, 0}, {0, 0, 2, 0}),
      make_case(F("goiyx"), F("gs_oi_yxs_gsv16_yxsv4"), {35, 1, 1, 3, 3}, T::f32, T::f16),
      make_case(F("gs_oi_yxs_gsv4_yxsv4"), F("goiyx"), {6, 3, 2, 3, 3}, T::u8, T::u8, {}, {}, {0, 0, 0, 1, 0}),
      make_case(F("goiyx"), F("gi_yxs_os_yxsv2_osv16"), {2, 20, 5, 3, 3}, T::f16, T::f16),
      converting(make_case(F("oiyx"), F("i_yxs_os_yxsv2_osv16"), {20, 3, 3, 3}, T::f32, T::f32, {}, {}, {0, 0, 1, 0}),
                 modes(Rounding::nearest_even, Overflow::saturate, Padding::keep))};
  run_on_every_impl(*e, cases);
}

// Issue 16's padding policy: with Padding::keep no kernel writes the destination's padding. The harness fills
// the destination with random bytes and the reference leaves them in the padding, so a zero written there
// fails; every family with padding (blocked tails, explicit padding on either side, weights tails on both
// block axes, grouped tails, TPU 4N dummies, a strided view), every implementation forced where it accepts.
TEST(Device, KeptPaddingIsNeverWritten) {
  REQUIRE_DEVICE(e);
  const Conversion keep = modes(Rounding::nearest_even, Overflow::saturate, Padding::keep);
  auto F = [](const char* name) { return Format::parse(name); };
  const std::vector<Case> cases = {
      make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 5, 8}),                  // a tail inside the vector rows
      make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 32, 7, 8}, DataType::f32, DataType::f16, {}, {}, {0, 0, 0, 2}, {0, 0, 1, 1}),
      make_case(F("byxf"), F("bfyx"), {2, 19, 5, 8}, DataType::f32, DataType::f16, {}, {}, {0, 1, 0, 2}, {0, 0, 1, 0}),
      make_case(F("bfyx"), F("byxf"), {3, 24, 7, 7}, DataType::u8, DataType::u8, {}, {}, {0, 0, 2, 0}, {1, 0, 0, 0}),
      make_case(F("bfyx"), F("bfyx"), {2, 3, 4, 16}, DataType::f32, DataType::f32, {}, {}, {0, 0, 1, 0}, {0, 1, 0, 0}),
      make_case(F("bfyx"), F("b_fs_yx_fsv4"), {2, 19, 5, 8}, DataType::i8, DataType::i8, {}, {}, {0, 0, 1, 0}),
      make_case(F("bfyx"), F("byxf"), {3, 24, 3, 3}, DataType::i8, DataType::i8, {}, {}, {0, 0, 0, 0}, {2, 0, 0, 0}),
      make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}),
      make_case(F("oiyx"), F("os_is_yx_osa4_isa8_osv8_isv4"), {33, 20, 3, 3}, DataType::i8, DataType::i8),
      make_case(F("goiyx"), F("gs_oiyx_gsv16"), {17, 2, 3, 3, 3}, DataType::f32, DataType::bf16),
      case_of(Layout(F("bfyx"), DataType::i8, {6, 5, 4, 5}),
              Layout(F("tpu_aligned(npus=4,npu_bytes=1024,addr=1024,mode=4n)"), DataType::i8, {6, 5, 4, 5})),
      case_of(Layout(F("b_fs_yx_fsv16"), DataType::f32, {2, 19, 5, 7}),
              Layout(F("bfyx"), DataType::f32, {2, 19, 5, 7}, {}, {}, {7 * 11 * 24, 1, 11 * 24, 24}, 313))};
  std::vector<Case> kept;
  for (const Case& c : cases) kept.push_back(converting(c, keep));
  run_on_every_impl(*e, kept);
}

// Issue 16's u4 and i4 (two to a byte, low nibble first) on every family, through the selector (tiled where
// its tiles hold whole bytes, else the generic kernel), tiled and the agnostic kernel forced where they take
// the case, random bits among the sources (the
// type pairs and modes are EveryDataTypePairOnRandomBits', ConversionsMatchTheHostBitForBit's and
// ConversionModesOnEveryPath's): blocked tails, dense layouts that end or start inside a byte, kept padding
// beside written nibbles, explicit padding, weights with per-channel scales and compensation sums, int4
// weights with scales per group, grouped weights, strided views with gaps, a reshape, byte offsets inside the
// buffers. A destination whose bytes the work-items would share is refused by name, staged and lanes
// decline the types, and local takes 4-bit sources (forced: its load pass reads nibbles, bytes work-items
// may share) but not 4-bit destinations.
TEST(Device, FourBitTypes) {
  REQUIRE_DEVICE(e);
  using T = DataType;
  auto F = [](const char* name) { return Format::parse(name); };
  auto V = [&](const char* f, const Dims& d, const Dims& st, int64_t o, T t) { return Layout(F(f), t, d, {}, {}, st, o); };
  const Conversion keep = modes(Rounding::nearest_even, Overflow::saturate, Padding::keep);
  const std::vector<Case> cases = {
      make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 5}, T::f32, T::u4, {}, {}, {0, 1, 0, 0}),
      make_case(F("b_fs_yx_fsv16"), F("bfyx"), {2, 19, 3, 5}, T::i4, T::f16, {0, 0, 1, 0}),
      make_case(F("bfyx"), F("byxf"), {1, 3, 3, 3}, T::f32, T::i4),  // 27 elements: ends in a half byte
      case_of(Layout(F("byxf"), T::i8, {2, 3, 3, 3}), Layout(F("bfyx"), T::u4, {2, 3, 3, 3}, {}, {}, {}, 1)),  // starts in one
      converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 2}, T::f16, T::i4, {}, {}, {0, 0, 1, 0}), keep),
      converting(make_case(F("byxf"), F("bfyx"), {2, 3, 3, 5}, T::u4, T::i4, {}, {}, {0, 0, 1, 1}, {0, 0, 0, 1}), keep),
      make_case(F("bfyx"), F("bfyx"), {2, 3, 3, 5}, T::u8, T::u4, {}, {}, {0, 0, 1, 1}, {0, 0, 0, 1}),
      converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}, T::f32, T::i4),
                 with_compensation(with_params({}, {{Param::dst_scale, {ramp(33, 0.3f, 0.01f), 0}}}), 0)),
      converting(make_case(F("goiyx"), F("gs_oiyx_gsv16"), {19, 2, 3, 3, 3}, T::i8, T::i4), modes(Rounding::toward_zero, Overflow::wrap)),
      make_case(F("os_is_yx_isv16_osv16"), F("oiyx"), {33, 17, 3, 3}, T::u4, T::u4),
      // LLM int4 weights: scales per group of 8 input channels for every output channel, a zero point of 8.
      converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 1, 3}, T::f16, T::u4),
                 with_params({}, {{Param::dst_scale, ParamValues{ramp(33 * 3, 0.02f, 0.01f), 1, 8, 0}},
                                  {Param::dst_zero_point, {{8}, -1}}})),
      case_of(V("bfyx", {2, 3, 3, 5}, {60, 20, 6, 1}, 3, T::i4), Layout(F("byxf"), T::f32, {2, 3, 3, 5})),
      case_of(Layout(F("b_fs_yx_fsv16"), T::f32, {2, 3, 2, 4}), V("bfyx", {2, 3, 2, 4}, {40, 12, 6, 1}, 2, T::u4)),
      case_of(Layout(F("bfzyx"), T::u4, {2, 3, 2, 3, 2}), Layout(F("b_fs_yx_fsv16"), T::i4, {2, 3, 6, 2})),
  };
  run_batch(*e, cases, true);
  std::vector<Case> agnostic, tiled, local;
  for (const Case& c : cases) {
    for (const char* impl : {"staged", "lanes"})  // (the reshape: for that first)
      EXPECT_NE(reason_of(*e, c, impl).find(c.src.dims() == c.dst.dims() ? "elements share bytes" : "reshape"), std::string::npos)
          << impl << ": " << c.label;
    const std::string local_why = reason_of(*e, c, "local");
    if (is_nibble(c.dst.data_type()))
      EXPECT_NE(local_why.find(c.src.dims() == c.dst.dims() ? "elements share bytes: the tiled, generic and agnostic kernels write them"
                                                            : "reshape"),
                std::string::npos)
          << c.label << ": " << local_why;
    else if (local_why.empty())
      local.push_back(c);
    else
      ADD_FAILURE() << "local declines " << c.label << ": " << local_why;
    const bool by_tiled = reason_of(*e, c, "tiled").empty();
    EXPECT_EQ(plan_reorder(e->info(), c.src, c.dst, "", c.conversion).impl, by_tiled ? "tiled" : "generic") << c.label;
    if (by_tiled) tiled.push_back(c);
    if (reason_of(*e, c, "agnostic").empty()) agnostic.push_back(c);
  }
  EXPECT_GE(agnostic.size(), 6u);
  run_batch(*e, agnostic, true, "agnostic");
  EXPECT_GE(tiled.size(), 8u);
  run_batch(*e, tiled, true, "tiled");
  EXPECT_GE(local.size(), 2u);
  run_batch(*e, local, true, "local");
  for (size_t off : {size_t{1}, size_t{3}})
    EXPECT_EQ(run_case_all(*e, cases[0], true, "", 4 * off, off, 5), "") << "destination byte offset " << off;
  // Rows of 3 nibbles 4 apart (a view): each starts a byte, so tiled writes them, each row's last byte keeping
  // its gap nibble; the generic kernel, a byte per pair of tuples, could not.
  const Case odd_rows = case_of(Layout(F("bfyx"), T::f32, {1, 2, 2, 3}), V("bfyx", {1, 2, 2, 3}, {16, 8, 4, 1}, 2, T::u4));
  EXPECT_NE(reason_of(*e, odd_rows, "generic").find("rows do not fill whole bytes"), std::string::npos);
  EXPECT_EQ(plan_reorder(e->info(), odd_rows.src, odd_rows.dst).impl, "tiled");
  EXPECT_EQ(run_case_all(*e, odd_rows, true), "");
  // 5 apart, rows start inside bytes: two work-items would write one byte. Nothing takes it, nothing is written.
  const Layout odd_stride = V("bfyx", {1, 2, 2, 3}, {20, 10, 5, 1}, 0, T::u4);
  const std::string why = error_of([&] { reorder(*e, std::vector<uint8_t>(48), Layout(F("bfyx"), T::f32, {1, 2, 2, 3}), odd_stride); });
  EXPECT_NE(why.find("rows do not fill whole bytes"), std::string::npos) << why;
  const std::string tiled_why = reason_of(*e, case_of(Layout(F("bfyx"), T::f32, {1, 2, 2, 3}), odd_stride), "tiled");
  EXPECT_NE(tiled_why.find("runs of 3 along it would not start on whole bytes"), std::string::npos) << tiled_why;
  // The agnostic kernel needs whole bytes per row too; the generic one takes a dense plan whatever its rows.
  const Case dense_odd = make_case(F("bfyx"), F("byxf"), {1, 3, 3, 5}, T::f32, T::i4);
  EXPECT_NE(reason_of(*e, dense_odd, "agnostic").find("rows do not fill whole bytes"), std::string::npos);
  EXPECT_NE(reason_of(*e, dense_odd, "tiled").find("runs of 3 along it would not start on whole bytes"), std::string::npos)
      << reason_of(*e, dense_odd, "tiled");
  // So the library's default policy, which runs the agnostic kernel while the selector's compiles, waits for
  // the generic one there, alone and in a batch; the policy that never compiles says why it cannot.
  const std::vector<uint8_t> in = visible_sources(dense_odd.src, dense_odd.dst.data_type(), 1).front();
  std::vector<uint8_t> want(static_cast<size_t>(dense_odd.dst.bytes()), 0);
  reference_reorder(dense_odd.src, in.data(), dense_odd.dst, want.data());
  ReorderOptions background, never;
  background.policy = CompilePolicy::background;
  never.policy = CompilePolicy::agnostic;
  EXPECT_EQ(reorder(*e, in, dense_odd.src, dense_odd.dst, background), want);
  const std::string declined = error_of([&] {
    reorder(*e, std::vector<uint8_t>(4 * 63), Layout(F("bfyx"), T::f32, {1, 3, 3, 7}), Layout(F("byxf"), T::i4, {1, 3, 3, 7}), never);
  });
  EXPECT_NE(declined.find("rows do not fill whole bytes"), std::string::npos) << declined;
  const Case row = make_case(F("bfyx"), F("byxf"), {1, 3, 1, 5}, T::f32, T::i4);  // 15 nibbles: 8 bytes
  const std::vector<uint8_t> row_in = visible_sources(row.src, row.dst.data_type(), 2).front();
  std::vector<uint8_t> row_want(8, 0), got(16, 0xaa);
  reference_reorder(row.src, row_in.data(), row.dst, row_want.data());
  row_want[7] |= 0xa0;  // the half byte no element owns keeps what was there
  cl::Buffer s(e->context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, row_in.size(), const_cast<uint8_t*>(row_in.data()));
  cl::Buffer d(e->context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, got.size(), got.data());
  const std::vector<BatchItem> items = {{s, 0, row.src, d, 0, row.dst}, {s, 0, row.src, d, 8, row.dst}};
  reorder_batch(*e, items, background);
  e->queue().enqueueReadBuffer(d, CL_TRUE, 0, got.size(), got.data());
  EXPECT_EQ(std::vector<uint8_t>(got.begin(), got.begin() + 8), row_want);
  EXPECT_EQ(std::vector<uint8_t>(got.begin() + 8, got.end()), row_want);
}

// Tiled's register transposes and vector rows into u4 and i4: 8-bit lanes packed two to a byte per column or
// row (the lower offset in the low nibble), 16, 8 and 4 wide, with blocked tails (rows of zeros), destination padding on either run,
// both overflow modes, groups of scales, and destinations at byte offsets that are not whole words (the
// packed bytes then go byte-wise instead of as uints). Kept padding and compensation sums stay in the scalar
// loops (a packed store writes whole bytes): their source says so. The forms are those of the CPU tuning
// (a GPU's tiles are shorter: 6 of an 18-wide row pack no vector), planned so and run on this device beside
// the device's own tiled kernels.
TEST(Device, FourBitTransposes) {
  REQUIRE_DEVICE(e);
  DeviceInfo cpu = e->info();
  cpu.type = "cpu";
  using T = DataType;
  auto F = [](const char* name) { return Format::parse(name); };
  const std::vector<Case> packed = {
      make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 8}, T::f32, T::u4, {}, {}, {0, 0, 1, 0}),
      converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {20, 32, 1, 1}, T::f16, T::i4),
                 with_params({}, {{Param::dst_scale, ParamValues{ramp(20 * 4, 0.02f, 0.011f), 1, 8, 0}}})),
      converting(make_case(F("bfyx"), F("byxf"), {2, 24, 2, 8}, T::f32, T::i4), modes(Rounding::toward_zero, Overflow::wrap)),
      make_case(F("bfyx"), F("byxf"), {2, 4, 3, 4}, T::u8, T::u4),
      converting(make_case(F("b_fs_yx_fsv16"), F("bfyx"), {2, 16, 2, 16}, T::i8, T::i4, {}, {}, {}, {0, 0, 0, 2}),
                 modes(Rounding::nearest_even, Overflow::wrap)),
      make_case(F("bfyx"), F("b_fs_yx_fsv16"), {1, 16, 2, 6}, T::f16, T::u4, {}, {}, {0, 0, 0, 1}, {0, 0, 0, 1}),
      // Rows (the layout kept, the type compressed): an LLM's weights with scales per group of 32 inputs, a
      // padded destination whose padding rows are zero, rows of 4 and 8.
      converting(make_case(F("oiyx"), F("oiyx"), {24, 96, 1, 1}, T::f16, T::u4),
                 with_params({}, {{Param::dst_scale, ParamValues{ramp(24 * 3, 0.01f, 0.003f), 1, 32, 0}},
                                  {Param::dst_zero_point, {{8}, -1}}})),
      make_case(F("bfyx"), F("bfyx"), {2, 3, 5, 16}, T::f32, T::i4, {}, {}, {0, 0, 1, 0}, {0, 1, 0, 0}),
      converting(make_case(F("bfyx"), F("bfyx"), {2, 4, 3, 4}, T::i32, T::i4, {}, {}, {0, 0, 1, 0}), modes(Rounding::toward_zero, Overflow::wrap)),
      make_case(F("bfyx"), F("bfyx"), {1, 2, 3, 24}, T::u16, T::u4, {}, {}, {}, {0, 0, 1, 0}),
  };
  std::map<std::string, int> widths;
  std::vector<KernelData> packed_kd;
  for (const Case& c : packed) {
    packed_kd.push_back(plan_reorder(cpu, c.src, c.dst, "tiled", c.conversion));
    const std::string& code = packed_kd.back().source.code;
    int found = 0;
    const std::string form = code.find("const bool ok = ") != std::string::npos ? "rows" : "transpose";
    for (const char* v : {"16", "8", "4"})
      if (code.find(std::string("cr_nib_pack") + v + "(as_uchar" + v + "(") != std::string::npos) ++widths[form + v], ++found;
    EXPECT_EQ(found, 1) << c.label;
  }
  for (const char* form : {"transpose16", "transpose8", "transpose4", "rows16", "rows8", "rows4"})
    EXPECT_GT(widths[form], 0) << "no case packs nibbles in the form " << form;
  run_batch(*e, packed, true, "tiled");
  run_batch(*e, packed, true);
  for (size_t k = 0; k < packed.size(); ++k) EXPECT_EQ(run_planned(*e, packed[k], packed_kd[k]), "") << packed[k].label;
  for (size_t off : {size_t{1}, size_t{2}, size_t{3}})
    for (size_t k : {size_t{0}, size_t{1}})
      EXPECT_EQ(run_planned(*e, packed[k], packed_kd[k], off), "") << packed[k].label << ", destination byte offset " << off;
  // u4 and i4 sources: V / 2 bytes loaded and unpacked to 8-bit lanes (i4 sign-extended) in the same forms,
  // where every vector starts on a byte; columns of destination padding that the source lacks read lane by
  // lane; both sides packed at once; a weights dequantization with groups; odd strides stay scalar.
  const std::vector<Case> unpacked = {
      make_case(F("b_fs_yx_fsv16"), F("bfyx"), {2, 32, 4, 16}, T::i4, T::f16),
      make_case(F("bfyx"), F("byxf"), {2, 24, 2, 8}, T::u4, T::f32),
      make_case(F("bfyx"), F("byxf"), {1, 16, 2, 14}, T::u4, T::f16, {}, {}, {0, 0, 0, 2}),
      converting(make_case(F("bfyx"), F("byxf"), {2, 16, 4, 16}, T::u4, T::i4), modes(Rounding::nearest_even, Overflow::wrap)),
      converting(make_case(F("oiyx"), F("oiyx"), {24, 96, 1, 1}, T::i4, T::f16),
                 with_params({}, {{Param::src_scale, ParamValues{ramp(24 * 3, 0.01f, 0.003f), 1, 32, 0}},
                                  {Param::src_zero_point, {{-1}, -1}}})),
      make_case(F("bfyx"), F("bfyx"), {2, 3, 4, 8}, T::i4, T::i8, {}, {}, {}, {0, 1, 0, 0}),
  };
  // Calls of common.cl's unpacking functions in the generated loops (their definitions take a uchar vector).
  auto unpack_calls = [](const std::string& code) {
    int calls = 0;
    for (size_t at = code.find("cr_nib_unpack_"); at != std::string::npos; at = code.find("cr_nib_unpack_", at + 1))
      if (code.compare(code.find('(', at) + 1, 5, "uchar") != 0) ++calls;
    return calls;
  };
  std::map<std::string, int> unpacks;
  for (const Case& c : unpacked) {
    const KernelData kd = plan_reorder(cpu, c.src, c.dst, "tiled", c.conversion);
    const std::string form = kd.source.code.find("const bool ok = ") != std::string::npos ? "rows" : "transpose";
    EXPECT_GT(unpack_calls(kd.source.code), 0) << c.label;
    if (unpack_calls(kd.source.code) > 0) ++unpacks[form];
    EXPECT_EQ(run_planned(*e, c, kd), "") << c.label;
  }
  for (const char* form : {"transpose", "rows"}) EXPECT_GT(unpacks[form], 0) << "no case unpacks nibbles in the form " << form;
  run_batch(*e, unpacked, true, "tiled");
  run_batch(*e, unpacked, true);
  const Case odd = make_case(F("bfyx"), F("byxf"), {2, 16, 2, 16}, T::u4, T::f32, {0, 0, 0, 0}, {0, 0, 0, 1});
  const KernelData odd_kd = plan_reorder(cpu, odd.src, odd.dst, "tiled");
  EXPECT_EQ(unpack_calls(odd_kd.source.code), 0);
  EXPECT_EQ(run_planned(*e, odd, odd_kd), "") << odd.label;
  EXPECT_EQ(run_case_all(*e, odd, true, "tiled"), "") << odd.label;
  const Case kept = converting(packed[0], modes(Rounding::nearest_even, Overflow::saturate, Padding::keep));
  const Case summed = converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {32, 32, 1, 1}, T::f32, T::i4),
                                 with_compensation(with_params({}, {{Param::dst_scale, {{0.05f}, -1}}}), 0));
  for (const Case& c : {kept, summed}) {
    const KernelData kd = plan_reorder(cpu, c.src, c.dst, "tiled", c.conversion);
    for (const char* v : {"16", "8", "4"})
      EXPECT_EQ(kd.source.code.find(std::string("cr_nib_pack") + v + "(as_uchar"), std::string::npos) << c.label;
    EXPECT_EQ(run_planned(*e, c, kd), "") << c.label;
    EXPECT_EQ(run_case_all(*e, c, true, "tiled"), "") << c.label;
  }
}

// Issue 16's fused arithmetic: oneDNN's quantization and OpenVINO's mean modes, per tensor on every
// implementation (each forced where it accepts: it converts whole vectors by one expression), per index on
// every implementation too (tiled in its three forms, staged in its tiles, lanes on its picked words, and the
// selector's choice), on every family, against
// the host reference bit for bit, random bit patterns (NaN, infinities, saturation) included.
TEST(Device, FusedArithmeticOnEveryImplementation) {
  REQUIRE_DEVICE(e);
  using T = DataType;
  auto F = [](const char* name) { return Format::parse(name); };
  // Two conversions (each a program per implementation, the suite's time): quantization truncating and
  // wrapping, normalisation keeping the padding.
  const Conversion quant = with_params(modes(Rounding::toward_zero, Overflow::wrap),
                                {{Param::src_zero_point, {{3}, -1}}, {Param::src_scale, {{0.37f}, -1}},
                                 {Param::dst_scale, {{0.21f}, -1}}, {Param::dst_zero_point, {{-7}, -1}}});
  const Conversion norm = with_params(modes(Rounding::nearest_even, Overflow::saturate, Padding::keep),
                               {{Param::sub, {{1.7f}, -1}}, {Param::mul, {{0.3f}, -1}}, {Param::div, {{1.9f}, -1}}});
  const std::vector<Case> per_tensor = {
      converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 5, 8}, T::f32, T::i8), quant),
      converting(make_case(F("byxf"), F("b_fs_yx_fsv16"), {2, 3, 5, 8}, T::u8, T::f16), norm),
      converting(make_case(F("b_fs_yx_fsv16"), F("bfyx"), {2, 19, 4, 5}, T::i8, T::f32), quant),
      converting(make_case(F("bfyx"), F("byxf"), {2, 24, 4, 4}, T::f16, T::u8), quant),
      converting(make_case(F("bfyx"), F("b_fs_yx_fsv4"), {2, 19, 5, 8}, T::i32, T::f8e4m3), norm),
      converting(make_case(F("bfyx"), F("bfyx"), {2, 3, 4, 16}, T::f32, T::f32, {}, {}, {0, 0, 1, 0}, {0, 1, 0, 0}), norm),
      converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}, T::f32, T::f16), quant),
      converting(make_case(F("oiyx"), F("os_is_yx_osv16_isv4"), {32, 20, 3, 3}, T::i8, T::u8), quant),
      converting(make_case(F("bfyx"), F("byxf"), {2, 4, 1, 17}, T::f16, T::bf16), norm),
      converting(make_case(F("goiyx"), F("gs_oiyx_gsv16"), {17, 2, 3, 3, 3}, T::bf16, T::f32), quant),
      converting(case_of(Layout(F("bfyx"), T::i8, {6, 5, 4, 5}),
                         Layout(F("tpu_aligned(npus=4,npu_bytes=1024,addr=1024,mode=4n)"), T::i8, {6, 5, 4, 5})), quant),
      converting(case_of(Layout(F("b_fs_yx_fsv16"), T::f32, {2, 19, 5, 7}),
                         Layout(F("bfyx"), T::f16, {2, 19, 5, 7}, {}, {}, {7 * 11 * 24, 1, 11 * 24, 24}, 313)), norm),
      // NaNs of either sign made canonical in the narrow floats' own NaN test (the _canonical conversions),
      // truncating; f16 and bf16 to nearest above.
      converting(make_case(F("bfyx"), F("byxf"), {2, 16, 4, 4}, T::f16, T::f8e5m2), quant),
      converting(make_case(F("byxf"), F("bfyx"), {2, 16, 4, 4}, T::f32, T::bf16), quant),
      // From integers no NaN can arise here: the _finite conversions (fmin/fmax clamp, no NaN test), random
      // i32 bits far past i16's range both ways, truncated.
      converting(make_case(F("bfyx"), F("byxf"), {2, 16, 4, 4}, T::i32, T::i16),
                 with_params(modes(Rounding::toward_zero, Overflow::saturate),
                             {{Param::src_scale, {{0.37f}, -1}}, {Param::dst_zero_point, {{5}, -1}}})),
      // From integers a NaN needs an infinity first (here 3e38 * x, then * 0): made canonical as from floats.
      converting(make_case(F("bfyx"), F("byxf"), {2, 16, 4, 4}, T::u8, T::f32),
                 with_params({}, {{Param::src_scale, {{3e38f}, -1}}, {Param::mul, {{0}, -1}}}))};
  run_on_every_impl(*e, per_tensor);
  // The NaN test goes only where a NaN can arrive: kept from a float source, dropped from an integer one.
  const Case& finite = per_tensor[per_tensor.size() - 2];
  EXPECT_NE(plan_reorder(e->info(), finite.src, finite.dst, "", finite.conversion).source.code.find("cr_float_to_short_rtz_finite"),
            std::string::npos);
  const Case from_float = converting(make_case(F("bfyx"), F("byxf"), {2, 16, 4, 4}, T::f32, T::i16), finite.conversion);
  const std::string float_code = plan_reorder(e->info(), from_float.src, from_float.dst, "", from_float.conversion).source.code;
  EXPECT_EQ(float_code.find("_finite"), std::string::npos);
  EXPECT_NE(float_code.find("cr_float_to_short_rtz"), std::string::npos);

  // Per index: channels (f) and the batch axis (b) of data, output channels of weights (o), the destination's
  // axis of a reshape.
  const std::vector<float> sub19 = {123.7f, 116.3f, 103.5f, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, -16};
  std::vector<float> scale33(33);
  for (size_t k = 0; k < scale33.size(); ++k) scale33[k] = 0.01f * static_cast<float>(k + 1);
  const Conversion channels = with_params({}, {{Param::sub, {sub19, 1}}, {Param::mul, {{-1, 0.5f, 3}, 0}}, {Param::div, {{58.4f}, -1}}});
  const std::vector<Case> per_index = {
      converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {3, 19, 3, 5}, T::u8, T::f16), channels),
      converting(make_case(F("b_fs_yx_fsv16"), F("byxf"), {3, 19, 2, 3}, T::i8, T::f32, {}, {}, {0, 1, 0, 0}), channels),
      converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}, T::f32, T::i8),
                 with_params({}, {{Param::dst_scale, {scale33, 0}}, {Param::dst_zero_point, {{1}, -1}}})),
      converting(case_of(Layout(F("bfyx"), T::f32, {2, 6, 4, 5}), Layout(F("bfzyx"), T::f16, {2, 6, 2, 2, 5})),
                 with_params({}, {{Param::mul, {{1, 2, 3, 4, 5}, 4}}})),
      // tiled's three forms: register transposes (lanes along f), vector rows (one value per y, and along x one
      // vector load of consecutive values), scalars.
      converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {3, 19, 8, 8}, T::u8, T::f16), channels),
      converting(make_case(F("bfyx"), F("bfyx"), {2, 3, 4, 16}, T::f32, T::i8, {}, {}, {0, 0, 1, 0}, {0, 1, 0, 0}),
                 with_params({}, {{Param::src_scale, {{0.5f, 2, -3, 0.25f}, 2}}, {Param::mul, {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, -16}, 3}}})),
      converting(make_case(F("byxf"), F("bfyx"), {3, 19, 3, 5}, T::i8, T::bf16), channels),
      // staged: lanes along x (7 x 7 planes), and the tracked axis in its loop.
      converting(make_case(F("bfyx"), F("b_fs_yx_fsv4"), {3, 8, 7, 7}, T::i8, T::i8),
                 with_params({}, {{Param::src_scale, {{0.5f, 2, 3, 4, 5, 6, 7}, 3}}, {Param::sub, {{1, 2, 3, 4, 5, 6, 7, 8}, 1}}})),
      // lanes: int8 weights per output channel (o in the rows and the word), f16 pairs of channels.
      converting(make_case(F("oiyx"), F("os_is_yx_osv16_isv4"), {32, 20, 3, 3}, T::i8, T::u8),
                 with_params({}, {{Param::dst_scale, {{scale33.begin(), scale33.end() - 1}, 0}}, {Param::src_zero_point, {{-2}, -1}}})),
      converting(make_case(F("bfyx"), F("byxf"), {3, 4, 1, 17}, T::f16, T::f16),
                 with_params({}, {{Param::mul, {{1.5f, -2, 0.25f, 3}, 1}}}))};
  run_on_every_impl(*e, per_index);
  run_batch(*e, per_index, true);
}

// Issue 16's groups and run-time values: int4-style weight scales per group of G along i for every o, zero
// points per o, requantization's and dequantization's grouped scales and zero points, mean values from a buffer beside constant
// ones, groups along x for every f on data, and groups on padded destinations and a reshape (padding lanes
// clamp their coordinates into the values: Oclgrind's sweep checks the reads). Every implementation forced
// where it accepts, random bit patterns, bit for bit against the host reference; buffer values are
// arguments, so cases of one structure share a kernel.
TEST(Device, GroupedAndRunTimeParameters) {
  REQUIRE_DEVICE(e);
  using T = DataType;
  auto F = [](const char* name) { return Format::parse(name); };
  // Ramps that repeat (values(), zero points integral), so that neighbouring groups differ.
  auto values = [](size_t n, float lo, float step, bool integral = false) {
    std::vector<float> v = ramp(n, 0, 1);
    for (float& x : v) x = integral ? lo + step * std::fmod(x, 7.0f) : lo + step * std::fmod(x, 11.0f);
    return v;
  };
  auto grouped = [](std::vector<float> v, int axis, int64_t group, int outer, bool buffer) {
    ParamValues p{std::move(v), axis, group, outer, buffer};
    return p;
  };
  const std::vector<Case> cases = {
      converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}, T::f32, T::i8),
                 with_params({}, {{Param::dst_scale, grouped(values(33 * 3, 0.02f, 0.013f), 1, 8, 0, true)},
                                  {Param::dst_zero_point, grouped(values(33, -3, 1, true), 0, 1, -1, true)}})),
      converting(make_case(F("oiyx"), F("os_is_yx_osv16_isv4"), {32, 20, 3, 3}, T::i8, T::u8),
                 with_params({}, {{Param::src_zero_point, grouped(values(32 * 5, -2, 1, true), 1, 4, 0, true)},
                                  {Param::src_scale, grouped(values(32 * 5, 0.8f, 0.03f), 1, 4, 0, true)},
                                  {Param::dst_zero_point, grouped({128}, -1, 1, -1, false)}})),
      converting(make_case(F("os_is_yx_osv16_isv4"), F("oiyx"), {32, 20, 3, 3}, T::i8, T::f16),
                 with_params({}, {{Param::src_zero_point, grouped(values(32 * 5, -2, 1, true), 1, 4, 0, true)},
                                  {Param::src_scale, grouped(values(32 * 5, 0.01f, 0.003f), 1, 4, 0, true)}})),
      converting(make_case(F("byxf"), F("b_fs_yx_fsv16"), {2, 19, 3, 5}, T::u8, T::f16),
                 with_params({}, {{Param::sub, grouped(values(19, 100, 3.3f), 1, 1, -1, true)},
                                  {Param::mul, grouped({0.75f}, -1, 1, -1, true)},
                                  {Param::div, grouped(values(19, 50, 1.7f), 1, 1, -1, false)}})),
      converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 5, 8}, T::f32, T::f16),
                 with_params({}, {{Param::mul, grouped(values(19 * 3, -2, 0.37f), 3, 3, 1, false)}})),
      converting(make_case(F("bfyx"), F("bfyx"), {2, 3, 4, 16}, T::f32, T::i8, {}, {}, {1, 0, 1, 0}, {1, 1, 0, 0}),
                 with_params({}, {{Param::src_scale, grouped(values(2 * 2, 0.5f, 0.25f), 2, 2, 0, false)},
                                  {Param::dst_zero_point, grouped(values(2, 4, -3, true), 0, 1, -1, true)}})),
      converting(case_of(Layout(F("bfyx"), T::f32, {2, 6, 4, 5}), Layout(F("bfzyx"), T::f16, {2, 6, 2, 2, 5})),
                 with_params({}, {{Param::div, grouped(values(6 * 2, 1.5f, 0.5f), 4, 3, 1, true)}})),
      // Per tensor from buffers only: the vector conversions without coordinates.
      converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 5, 8}, T::f32, T::i8),
                 with_params(modes(Rounding::toward_zero, Overflow::wrap), {{Param::src_scale, grouped({0.37f}, -1, 1, -1, true)},
                                                                            {Param::dst_zero_point, grouped({-7}, -1, 1, -1, true)}}))};
  run_on_every_impl(*e, cases);

  // The buffers are checked before anything runs, each named.
  const Case& c = cases[0];
  cl::Buffer s(e->context(), CL_MEM_READ_WRITE, static_cast<size_t>(c.src.bytes()));
  cl::Buffer d(e->context(), CL_MEM_READ_WRITE, static_cast<size_t>(c.dst.bytes()));
  ReorderOptions opt;
  opt.conversion = c.conversion;
  opt.policy = CompilePolicy::wait;
  auto fails = [&](const ReorderOptions& o) { return error_of([&] { reorder(*e, s, 0, c.src, d, 0, c.dst, o); }); };
  EXPECT_NE(fails(opt).find("dst-scale buffer is null"), std::string::npos) << fails(opt);
  opt.param_buffers = upload_param_values(e->context(), opt.conversion);
  opt.param_buffers[static_cast<size_t>(Param::dst_scale)] = cl::Buffer(e->context(), CL_MEM_READ_ONLY, 98 * 4);
  EXPECT_NE(fails(opt).find("dst-scale buffer holds 392 bytes but 99 f32 values need 396"), std::string::npos) << fails(opt);
  opt.param_buffers[static_cast<size_t>(Param::dst_scale)] = d;
  EXPECT_NE(fails(opt).find("dst-scale buffer overlaps the destination"), std::string::npos) << fails(opt);
  opt.param_buffers = upload_param_values(e->context(), opt.conversion);
  opt.param_buffers[static_cast<size_t>(Param::sub)] = s;
  EXPECT_NE(fails(opt).find("sub buffer is set, but the conversion does not take sub from a buffer"), std::string::npos) << fails(opt);
  opt.param_buffers[static_cast<size_t>(Param::sub)] = cl::Buffer();
  EXPECT_EQ(fails(opt), "");
  const std::string batch = error_of([&] { reorder_batch(*e, {BatchItem{s, 0, c.src, d, 0, c.dst}}, opt); });
  EXPECT_NE(batch.find("a batch takes no parameter from a device buffer (dst-scale)"), std::string::npos) << batch;
}

// Groups along the axis a vector's lanes step through: where the lanes start at a multiple of the width and a
// group holds a multiple of it (int4/int8 weights' groups of 32 along i under isv4 vectors), the lanes share
// the first lane's group and tiled and staged read one value (TableIndex::align); groups that divide the
// width, one read per group; else two reads and a select. Each form in the source, and the results against the host on
// random bits, tiled forced and as the selector chooses.
TEST(Device, GroupsAlignedToTheVectorReadOnce) {
  REQUIRE_DEVICE(e);
  using T = DataType;
  auto F = [](const char* name) { return Format::parse(name); };
  auto groups = [](int64_t o, int64_t i, int64_t g) {
    return with_params({}, {{Param::dst_scale, ParamValues{ramp(static_cast<size_t>(o * ((i + g - 1) / g)), 0.02f, 0.013f), 1, g, 0}}});
  };
  const Case aligned = converting(make_case(F("oiyx"), F("os_is_yx_osv16_isv4"), {32, 64, 1, 1}, T::f32, T::i8), groups(32, 64, 32));
  const Case across = converting(make_case(F("oiyx"), F("os_is_yx_osv16_isv4"), {32, 64, 1, 1}, T::f32, T::i8), groups(32, 64, 6));
  // 16 lanes of a transpose along x, groups of 8: lanes 0-7 read the first lane's value, 8-15 the ninth's.
  const Case halves = converting(make_case(F("bfyx"), F("byxf"), {2, 16, 4, 64}, T::f32, T::i8),
                                 with_params({}, {{Param::src_scale, ParamValues{ramp(16 * 8, 0.5f, 0.25f), 3, 8, 1}}}));
  // The same transpose with the destination's x padded by 2 before: lanes from a multiple of 4 in v sit 2 off
  // in x, so two reads and a select.
  const Case shifted = converting(make_case(F("bfyx"), F("byxf"), {2, 16, 2, 64}, T::f32, T::i8, {}, {}, {0, 0, 0, 2}, {0, 0, 0, 2}),
                                  with_params({}, {{Param::src_scale, ParamValues{ramp(16 * 16, 0.5f, 0.25f), 3, 4, 1}}}));
  // Staged's registers of 8 along i from the grid's and the loop's multiples of 8 (o's tail clamps the row).
  const Case staged = converting(make_case(F("oiyx"), F("os_is_yx_osv16_isv4"), {20, 24, 1, 1}, T::f32, T::i8), groups(20, 24, 8));
  run_batch(*e, {aligned, across, halves, shifted}, true, "tiled");
  // ... and from the loop's steps of 12 along i (36 = 3 x 12): a register of 8 at i = 12 spans two groups (into
  // f16: into 8-bit types staged's CPU runs hold 16 elements, config_for(), and take i's 36 whole).
  const Case staged_steps = converting(make_case(F("oiyx"), F("os_is_yx_osv16_isv4"), {20, 36, 1, 1}, T::f32, T::f16), groups(20, 36, 8));
  run_batch(*e, {staged, converting(staged, groups(20, 24, 6)), staged_steps}, true, "staged");
  run_batch(*e, {aligned, across, halves, staged}, true);
  if (!cpu_tiles_apply()) return;
  auto code = [&](const Case& c) { return cpu_source(*e, c, "tiled"); };
  const std::string one = code(aligned), two = code(across), both = code(halves), off = code(shifted);
  EXPECT_NE(off.find("select((float4)"), std::string::npos) << off;
  EXPECT_EQ(one.find("select((float"), std::string::npos) << one;
  EXPECT_NE(one.find("vload"), std::string::npos) << one;
  EXPECT_NE(two.find("select((float"), std::string::npos) << two;
  // Groups of a power of two: their index is a shift of the (never negative) coordinate.
  EXPECT_NE(both.find(") + 8)) >> 3)]"), std::string::npos) << both;
  EXPECT_EQ(both.find(") + 1)) >> 3)]"), std::string::npos) << both;
  EXPECT_EQ(both.find(") / 8"), std::string::npos) << both;
  EXPECT_NE(two.find(") / 6"), std::string::npos) << two;
  const std::string st = cpu_source(*e, staged, "staged");
  EXPECT_NE(st.find("vload8"), std::string::npos) << st;
  EXPECT_EQ(st.find("select((float"), std::string::npos) << st;
  const std::string steps = cpu_source(*e, staged_steps, "staged");
  EXPECT_NE(steps.find("it * 12"), std::string::npos) << steps;
  EXPECT_NE(steps.find("select((float8)"), std::string::npos) << steps;
}

// Destination rows a multiple of 4 KiB apart share a cache set: tiled runs several steps along A and writes
// each row's cache line in one go. 8-bit rows of 16 (four steps), a source tail along the rows' axis (two
// steps of f32, the tail's rows stored as zero), a per-channel conversion into f16 (four steps of 8); a shape
// without the stride keeps one step. Forced tiled and as the selector chooses, on random bits, and the form
// in the source.
TEST(Device, RowsSharingACacheSetWriteWholeLines) {
  REQUIRE_DEVICE(e);
  using T = DataType;
  auto F = [](const char* name) { return Format::parse(name); };
  const Case bytes = make_case(F("byxf"), F("bfyx"), {1, 16, 64, 64}, T::u8, T::u8);
  const Case tail = make_case(F("b_fs_yx_fsv16"), F("bfyx"), {1, 19, 32, 32}, T::f32, T::f32);
  const Case scaled = converting(make_case(F("byxf"), F("bfyx"), {1, 8, 32, 64}, T::i8, T::f16),
                                 with_params({}, {{Param::src_scale, ParamValues{ramp(8, 0.5f, 0.25f), 1}}}));
  const Case apart = make_case(F("byxf"), F("bfyx"), {1, 16, 63, 64}, T::u8, T::u8);
  run_batch(*e, {bytes, tail, scaled, apart}, true, "tiled");
  run_batch(*e, {bytes, tail, scaled, apart}, true);
  if (!cpu_tiles_apply()) return;
  for (const auto& [c, steps] : std::vector<std::pair<Case, int>>{{bytes, 4}, {tail, 2}, {scaled, 4}, {apart, 1}}) {
    const std::string code = cpu_source(*e, c, "tiled");
    const std::string last = "const IDX_T ia" + std::to_string(steps - 1) + " = ia + ";
    if (steps > 1) {
      EXPECT_NE(code.find(last), std::string::npos) << c.label << "\n" << code;
      EXPECT_EQ(code.find("const IDX_T ia" + std::to_string(steps) + " = "), std::string::npos) << c.label << "\n" << code;
    } else {
      EXPECT_EQ(code.find("const IDX_T ia0"), std::string::npos) << c.label << "\n" << code;
    }
  }
}

// CPU-tuned transposes whose source rows lie 2 KiB or more apart prefetch them (prefetches_rows()): tiled's 8-bit
// rows hinted once per line, 64-bit every step, a tail of channels whose rows of padding get no hint, a
// conversion, a padded source; row copies from 8 planes into a padded destination; staged's and lanes'
// weights. The hints are Clang's builtin on a CPU target and OpenCL's prefetch() elsewhere (common.cl): either
// way the bytes must be the host's. CPU tiles on every device, on random bits, each implementation forced and
// as chosen.
TEST(Device, PrefetchingTransposesMatchTheHost) {
  REQUIRE_DEVICE(e);
  const ScopedEnv cpu_tiles("CLREORDER_TUNING", "cpu");
  using T = DataType;
  auto F = [](const char* name) { return Format::parse(name); };
  const std::vector<Case> cases = {make_case(F("bfyx"), F("byxf"), {1, 32, 4, 512}, T::i8, T::i8),
                                   make_case(F("bfyx"), F("fs_b_yx_fsv32"), {2, 40, 2, 512}, T::f16, T::f16),
                                   make_case(F("bfyx"), F("byxf"), {1, 16, 2, 128}, T::i64, T::i64),
                                   make_case(F("bfyx"), F("b_fs_yx_fsv16"), {1, 20, 16, 128}, T::u8, T::f32, {0, 0, 1, 0}, {0, 0, 0, 1}),
                                   make_case(F("b_fs_yx_fsv16"), F("byxf"), {2, 128, 8, 8}, T::f16, T::f16, {}, {}, {0, 0, 1, 0})};
  const Case staged = make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {32, 64, 3, 3}, T::f32, T::f16);
  const Case lanes = make_case(F("oiyx"), F("os_is_yx_osv32_isv4_swizzled_by_2"), {64, 512, 1, 4}, T::i8, T::i8);
  for (const auto& [impl, group] : {std::pair<const char*, std::vector<Case>>{"tiled", cases}, {"staged", {staged}}, {"lanes", {lanes}}}) {
    for (const Case& c : group) {
      const std::string code = plan_reorder(e->info(), c.src, c.dst, impl).source.code;
      EXPECT_NE(code.find("CR_PREFETCH(src + "), std::string::npos) << c.label << ", " << impl << "\n" << code;
    }
    run_batch(*e, group, true, impl);
  }
  std::vector<Case> chosen = cases;
  chosen.insert(chosen.end(), {staged, lanes});
  run_batch(*e, chosen, true);
}

// Per-index parameters keep their axes apart, so a dense tensor's rows stay rows: where a row is longer than
// tiled's tile and is cut into chunks, a work-item takes one chunk of one row (a tile of rows a row apart ran
// at a quarter of the speed). Chunks that end inside a group, vectors that span two groups, a
// source padded where the destination is not, 4-bit destinations and compensation sums; forced tiled and as
// the selector chooses, on random bits, and the plan's form in the source.
TEST(Device, RowsLongerThanATileWithPerIndexParameters) {
  REQUIRE_DEVICE(e);
  using T = DataType;
  auto F = [](const char* name) { return Format::parse(name); };
  auto per_group = [](Param q, int64_t o, int64_t i, int64_t g) {
    return with_params({}, {{q, ParamValues{ramp(static_cast<size_t>(o * ((i + g - 1) / g)), 0.5f, 0.013f), 1, g, 0}}});
  };
  // 600 = 3 chunks of 200: groups of 128 end inside chunks and vectors (200 = 12.5 vectors of 16).
  const Case groups = converting(make_case(F("oiyx"), F("oiyx"), {6, 600, 1, 1}, T::i8, T::f16), per_group(Param::src_scale, 6, 600, 128));
  const Case rows = converting(make_case(F("oiyx"), F("oiyx"), {5, 1000, 1, 1}, T::f32, T::i8),
                               with_compensation(with_params({}, {{Param::dst_scale, ParamValues{ramp(5, 0.05f, 0.01f), 0}}}), 0));
  const Case padded = converting(make_case(F("bfyx"), F("bfyx"), {1, 3, 2, 700}, T::f16, T::f32, {0, 0, 1, 1}, {0, 0, 0, 3}),
                                 with_params({}, {{Param::mul, ParamValues{{0.5f, 2.0f, -1.0f}, 1}}}));
  const Case nibbles = converting(make_case(F("oiyx"), F("oiyx"), {4, 1024, 1, 1}, T::f16, T::u4), per_group(Param::dst_scale, 4, 1024, 128));
  run_batch(*e, {groups, rows, padded, nibbles}, true, "tiled");
  run_batch(*e, {groups, rows, padded, nibbles}, true);
  if (!cpu_tiles_apply()) return;
  for (const Case& c : {groups, rows, padded, nibbles}) {
    const std::string code = cpu_source(*e, c, "tiled");
    EXPECT_NE(code.find("for (IDX_T ib = 0; ib < 1; ++ib)"), std::string::npos) << c.label << "\n" << code;
  }
}

// Issue 16's zero-point compensation: the sums of the quantized values per output channel (and group) beside
// the destination, in the same reorder; every family (blocked weights with tails on both block axes, int8
// multi-level blocks, grouped weights, padded data, a reshape, a strided view, a TPU layout, kept padding),
// integer destinations of 8 to 32 bits, wrapping sums; each implementation that writes sums forced, on random
// bits too, the buffer holding junk before. The specialised ones decline, naming why.
TEST(Device, CompensationSums) {
  REQUIRE_DEVICE(e);
  using T = DataType;
  auto F = [](const char* name) { return Format::parse(name); };
  const Conversion quantize = with_params({}, {{Param::dst_scale, ParamValues{ramp(33, 0.05f, 0.01f), 0}},
                                               {Param::dst_zero_point, ParamValues{{-3}}}});
  const std::vector<Case> cases = {
      converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}, T::f32, T::i8), with_compensation(quantize, 0)),
      converting(make_case(F("oiyx"), F("os_is_yx_osa4_isa8_osv8_isv4"), {33, 20, 3, 3}, T::i8, T::u8),
                 with_compensation(with_params(modes(Rounding::nearest_even, Overflow::wrap), {{Param::src_zero_point, ParamValues{{-3}}}}), 0)),
      converting(make_case(F("goiyx"), F("gs_oiyx_gsv16"), {17, 2, 3, 3, 3}, T::f32, T::i8), with_compensation({}, 1, 0)),
      converting(make_case(F("bfyx"), F("bfyx"), {2, 3, 4, 16}, T::f32, T::i16, {}, {}, {0, 1, 1, 0}, {1, 0, 0, 2}), with_compensation({}, 1)),
      converting(case_of(Layout(F("bfyx"), T::f32, {2, 6, 4, 5}), Layout(F("bfzyx"), T::i32, {2, 6, 2, 2, 5})), with_compensation({}, 1, 0)),
      converting(case_of(Layout(F("b_fs_yx_fsv16"), T::u32, {2, 19, 5, 7}),
                         Layout(F("bfyx"), T::u32, {2, 19, 5, 7}, {}, {}, {7 * 11 * 24, 1, 11 * 24, 24}, 313)),
                 with_compensation({}, 3)),
      converting(case_of(Layout(F("bfyx"), T::i8, {6, 5, 4, 5}),
                         Layout(F("tpu_aligned(npus=4,npu_bytes=1024,addr=1024,mode=4n)"), T::i8, {6, 5, 4, 5})),
                 with_compensation({}, 1)),
      converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}, T::u16, T::u16),
                 with_compensation(modes(Rounding::nearest_even, Overflow::saturate, Padding::keep), 0))};
  for (const Case& c : cases) EXPECT_NE(reason_of(*e, c, "lanes"), "") << c.label;
  EXPECT_EQ(reason_of(*e, cases[0], "lanes"), "compensation sums are written by the tiled, staged, local, generic and agnostic kernels only");
  for (const char* impl : {"generic", "agnostic"}) run_batch(*e, cases, true, impl);
  run_batch(*e, cases, true);  // the selector's choice
  // local reads its tile's sums back from local memory: on the weights (sums along a tile digit: osv16, osv8
  // inside osa4, gsv16 with o in the grid; kept padding), in this device's tuning and the GPU's (256
  // work-items, several sharing a sum). The data cases leave it no tile (tails and padding on every digit).
  const std::vector<Case> local_cases = {cases[0], cases[1], cases[2], cases[7]};
  for (const Case& c : local_cases) EXPECT_EQ(reason_of(*e, c, "local"), "") << c.label;
  run_batch(*e, local_cases, true, "local");
  DeviceInfo gpu = e->info();
  gpu.type = "gpu";
  for (const Case& c : local_cases) EXPECT_EQ(run_planned(*e, c, plan_reorder(gpu, c.src, c.dst, "local", c.conversion)), "") << c.label;

  // tiled keeps a sum per position of the run that moves the sums' index (A, B, or none: the grid's alone)
  // in each of its loop forms; each case below is one of them (on CPU tuning: the mark is checked in its
  // source), run forced.
  struct Tiled {
    Case c;
    const char* form;   // the loops: a register transpose, vector rows, scalar loops
    const char* marks;  // a statement only that way of summing emits
  };
  const Conversion plain;
  const Conversion scaled = with_params({}, {{Param::dst_scale, ParamValues{{0.5f}}}, {Param::dst_zero_point, ParamValues{{-3}}}});
  const Conversion keep = modes(Rounding::nearest_even, Overflow::saturate, Padding::keep);
  const std::vector<Tiled> tiled = {
      {converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}, T::f32, T::i8), with_compensation(quantize, 0)),
       "t0_0", "vstore16(vload16(0, cr_s + ia) + convert_uint16((convert_short16("},
      {converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}, T::u16, T::u16), with_compensation(keep, 0)),
       "t0_0", "convert_uint16((convert_int16("},
      {converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}, T::f32, T::i8), with_compensation(quantize, 1)),
       "t0_0", "cr_s[ib + 15] += cr_hsum16("},
      {converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}, T::f32, T::i8), with_compensation(keep, 1)),
       "t0_0", "cr_s[ib + 15] += cr_hsum16("},
      {converting(make_case(F("bfyx"), F("byxf"), {2, 16, 5, 16}, T::f32, T::i8), with_compensation(scaled, 0)), "t0_0",
       "cr_acc += convert_uint"},
      {converting(make_case(F("bfyx"), F("bfyx"), {2, 3, 4, 16}, T::f32, T::i16), with_compensation(plain, 3)), "ia += ",
       "(0, cr_s + ia) + convert_uint"},
      {converting(make_case(F("bfyx"), F("bfyx"), {2, 3, 4, 16}, T::f32, T::i16), with_compensation(scaled, 1)), "ia += ",
       "cr_s[ib] += cr_hsum"},
      {converting(make_case(F("bfyx"), F("bfyx"), {2, 3, 4, 16}, T::f32, T::i16, {}, {}, {0, 1, 1, 0}, {1, 0, 0, 0}),
                  with_compensation(keep, 1)),
       "ia += ", "cr_acc += convert_uint"},
      {converting(make_case(F("bfyx"), F("bfyx"), {2, 3, 4, 16}, T::f32, T::i16, {}, {}, {0, 1, 1, 0}, {1, 0, 0, 2}),
                  with_compensation(keep, 1)),
       "const DST_T c = ", "cr_acc += (uint)(c);"},
      {converting(make_case(F("oiyx"), F("os_is_yx_osa4_isa8_osv8_isv4"), {33, 20, 3, 3}, T::i8, T::u8),
                  with_compensation(with_params(modes(Rounding::nearest_even, Overflow::wrap), {{Param::src_zero_point, ParamValues{{-3}}}}), 0)),
       "const DST_T c = ", "cr_s[ia] += (uint)(c);"},
      // The index would move along both runs if B took o's digits while A holds g's: they stay in the grid.
      {converting(make_case(F("goiyx"), F("gs_oiyx_gsv16"), {17, 2, 3, 3, 3}, T::f32, T::i8), with_compensation(scaled, 1, 0)),
       "const DST_T c = ", "cr_s[ia] += (uint)(c);"},
      {converting(make_case(F("b_fs_yx_fsv16"), F("bfyx"), {2, 19, 5, 7}, T::i32, T::i32), with_compensation(plain, 1)),
       "const DST_T c = ", "cr_s[ib] += (uint)(c);"},
      {converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 5, 7}, T::u32, T::u32), with_compensation(keep, 0)),
       "const DST_T c = ", "cr_acc += (uint)(c);"}};
  std::vector<Case> tiled_cases;
  for (const Tiled& t : tiled) {
    tiled_cases.push_back(t.c);
    EXPECT_EQ(reason_of(*e, t.c, "tiled"), "") << t.c.label;
    if (!cpu_tiles_apply()) continue;
    const std::string code = cpu_source(*e, t.c, "tiled");
    EXPECT_NE(code.find(t.form), std::string::npos) << t.c.label << " (" << t.c.conversion.key() << ")";
    EXPECT_NE(code.find(t.marks), std::string::npos) << t.c.label << " (" << t.c.conversion.key() << ")";
  }
  run_batch(*e, tiled_cases, true, "tiled");

  // staged keeps an accumulator per tile part of the sums' index and register width, added lane by lane and
  // summed across its lanes once a work-item (or a tile, where its loop moves the index); a register whose
  // lanes belong to different sums adds each lane. Run forced; the selector takes it where the destination's
  // inner run is another axis than the sums' (os_is_yx_osv16_isv4: staged; os_is_yx_isv16_osv16: tiled).
  struct Staged {
    Case c;
    const char* mark;  // a statement only that way of summing emits (CPU tuning)
  };
  const Conversion quantize32 = with_params({}, {{Param::dst_scale, ParamValues{ramp(32, 0.05f, 0.01f), 0}},
                                                 {Param::dst_zero_point, ParamValues{{-3}}}});
  const std::vector<Staged> staged = {
      {converting(make_case(F("oiyx"), F("os_is_yx_osv16_isv4"), {32, 64, 1, 1}, T::f32, T::i8), with_compensation(quantize32, 0)),
       "cr_s0_16 += as_uint16(convert_int16(l0_0));"},
      // o's tail: tiles of padding (zeros) whose index lies past the 20 sums.
      {converting(make_case(F("oiyx"), F("os_is_yx_osv16_isv4"), {20, 36, 1, 1}, T::f32, T::i8), with_compensation(scaled, 0)),
       "< 20)"},
      // The loop steps along i, the sums' axis: each tile's sums go out at its end.
      {converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {32, 32, 3, 3}, T::f32, T::i8), with_compensation(quantize32, 1)),
       "const IDX_T do_ = d_off + it * 16; \\\n    uint cr_s0_1 = 0;"},
      // Sums per o along the destination's inner run (osv16): a sum per row; tiled is the selector's there.
      {converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {32, 32, 3, 3}, T::f32, T::i8), with_compensation(quantize32, 0)),
       "cr_s15_8 += as_uint8(convert_int8(l15_0));"},
      {converting(make_case(F("goiyx"), F("g_os_is_yx_osv16_isv4"), {4, 32, 32, 3, 3}, T::f32, T::i8), with_compensation(scaled, 1, 0)),
       "cr_s0_16 += "},
      {converting(make_case(F("oiyx"), F("os_is_yx_osa4_isa8_osv8_isv4"), {32, 32, 3, 3}, T::i8, T::u8),
                  with_compensation(with_params(modes(Rounding::nearest_even, Overflow::wrap), {{Param::src_zero_point, ParamValues{{-3}}}}), 0)),
       "as_uint16(convert_int16("},
      // Sums per x: a register's lanes are four sums.
      {converting(make_case(F("bfyx"), F("b_fs_yx_fsv4"), {2, 8, 5, 8}, T::f32, T::i16), with_compensation(scaled, 3)),
       "cr_s1_1 += as_uint(convert_int(l0_0.s1));"},
      {converting(make_case(F("bfyx"), F("b_fs_yx_fsv4"), {2, 8, 5, 8}, T::u32, T::u32), with_compensation(keep, 1)), "cr_s0_8 += l0_0;"}};
  std::vector<Case> staged_cases;
  for (const Staged& t : staged) {
    staged_cases.push_back(t.c);
    EXPECT_EQ(reason_of(*e, t.c, "staged"), "") << t.c.label;
    if (!cpu_tiles_apply()) continue;
    const std::string code = cpu_source(*e, t.c, "staged");
    EXPECT_NE(code.find(t.mark), std::string::npos) << t.c.label << " (" << t.c.conversion.key() << ")\n" << code;
  }
  run_batch(*e, staged_cases, true, "staged");
  EXPECT_EQ(plan_reorder(e->info(), staged[0].c.src, staged[0].c.dst, "", staged[0].c.conversion).impl, "staged");
  EXPECT_EQ(plan_reorder(e->info(), staged[3].c.src, staged[3].c.dst, "", staged[3].c.conversion).impl, "tiled");

  // The buffer is checked before anything runs (the destination keeps its bytes), each problem named.
  const Case& c = cases[0];
  const std::vector<uint8_t> junk = random_bytes(static_cast<size_t>(c.dst.bytes()), 3);
  cl::Buffer s(e->context(), CL_MEM_READ_WRITE, static_cast<size_t>(c.src.bytes()));
  cl::Buffer d(e->context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, junk.size(), const_cast<uint8_t*>(junk.data()));
  ReorderOptions opt;
  opt.conversion = c.conversion;
  opt.policy = CompilePolicy::wait;
  auto fails = [&](const ReorderOptions& o) { return error_of([&] { reorder(*e, s, 0, c.src, d, 0, c.dst, o); }); };
  EXPECT_NE(fails(opt).find("compensation buffer is null"), std::string::npos) << fails(opt);
  opt.compensation = cl::Buffer(e->context(), CL_MEM_READ_WRITE, 32 * 4);
  EXPECT_NE(fails(opt).find("compensation buffer holds 128 bytes but 33 i32 sums need 132"), std::string::npos) << fails(opt);
  opt.compensation = cl::Buffer(e->context(), CL_MEM_READ_ONLY, 33 * 4);
  EXPECT_NE(fails(opt).find("compensation buffer was created CL_MEM_READ_ONLY"), std::string::npos) << fails(opt);
  for (const auto& [buffer, what] : {std::pair<cl::Buffer, const char*>{d, "the destination"}, {s, "the source"}}) {
    opt.compensation = buffer;
    EXPECT_NE(fails(opt).find(std::string("compensation buffer (bytes [0, 132)) overlaps ") + what), std::string::npos) << fails(opt);
  }
  opt.compensation = cl::Buffer(e->context(), CL_MEM_READ_WRITE, 33 * 4);
  opt.conversion.compensation = Compensation{4};
  EXPECT_NE(fails(opt).find("compensation of os_is_yx_isv16_osv16 i8 33x17x3x3"), std::string::npos) << fails(opt);
  EXPECT_NE(fails(opt).find("axis 4 is not one of its 4 axes (oiyx)"), std::string::npos) << fails(opt);
  opt.conversion.compensation = Compensation{};
  EXPECT_NE(fails(opt).find("compensation buffer is set, but the conversion writes no compensation sums"), std::string::npos)
      << fails(opt);
  std::vector<uint8_t> after(junk.size());
  e->queue().enqueueReadBuffer(d, CL_TRUE, 0, after.size(), after.data());
  EXPECT_EQ(after, junk) << "a refused reorder wrote the destination";
  opt.conversion = c.conversion;
  const std::string batch = error_of([&] { reorder_batch(*e, {BatchItem{s, 0, c.src, d, 0, c.dst}}, opt); });
  EXPECT_NE(batch.find("a batch writes no compensation sums"), std::string::npos) << batch;
}

TEST(Device, PaddedSourcesAndDestinations) {
  REQUIRE_DEVICE(e);
  std::vector<Case> cases;
  const Dims shape = {3, 19, 5, 7};
  const Dims lo1 = {0, 3, 1, 2}, up1 = {1, 2, 0, 1}, lo2 = {1, 0, 2, 0}, up2 = {0, 5, 1, 3};
  const char* names[] = {"bfyx", "byxf", "b_fs_yx_fsv16", "b_fs_yx_fsv4", "bs_fs_yx_bsv16_fsv16", "fs_b_yx_fsv32", "yxfb"};
  for (const char* s : names)
    for (const char* d : names) {
      cases.push_back(make_case(Format::parse(s), Format::parse(d), shape, DataType::f32, DataType::f32, lo1, up1, {}, {}));
      cases.push_back(make_case(Format::parse(s), Format::parse(d), shape, DataType::f32, DataType::f16, {}, {}, lo2, up2));
      cases.push_back(make_case(Format::parse(s), Format::parse(d), shape, DataType::u8, DataType::f32, lo2, up1, lo1, up2));
    }
  cases.push_back(make_case(Format::parse("bfzyx"), Format::parse("b_fs_zyx_fsv16"), {2, 19, 3, 5, 7}, DataType::f32,
                            DataType::f32, {0, 1, 1, 0, 2}, {1, 0, 2, 1, 0}, {0, 2, 0, 1, 1}, {0, 1, 1, 0, 1}));
  cases.push_back(make_case(Format::parse("bfwzyx"), Format::parse("fbwzyx"), {2, 3, 2, 3, 4, 5}, DataType::i32,
                            DataType::i64, {1, 0, 1, 0, 1, 0}, {0, 1, 0, 1, 0, 1}, {0, 0, 1, 1, 0, 0}, {1, 1, 0, 0, 1, 1}));
  run_batch(*e, cases);
}

TEST(Device, DataIntoWeightsOfTheSameRank) {
  REQUIRE_DEVICE(e);
  std::vector<Case> cases;
  for (const char* w : {"oiyx", "os_iyx_osv16", "os_is_yx_isv16_osv16", "os_is_yx_osa4_isa8_osv8_isv4"}) {
    cases.push_back(make_case(Format::parse("bfyx"), Format::parse(w), {33, 17, 3, 3}));
    cases.push_back(make_case(Format::parse(w), Format::parse("b_fs_yx_fsv16"), {33, 17, 3, 3}));
  }
  run_batch(*e, cases);
}

// Tensors over 2^30 elements switch the generated code to 64-bit indices; CLREORDER_INDEX_BITS=64 runs that
// path on shapes that fit in a test.
TEST(Device, SixtyFourBitIndexPath) {
  REQUIRE_DEVICE(e);
  Layout big(Format::parse("bfyx"), DataType::u8, {1, 1, 1 << 16, 1 << 15});
  EXPECT_NE(plan_reorder(e->info(), big, big.with_type(DataType::i8)).source.code.find("#define IDX_T long"),
            std::string::npos);
  Layout small(Format::parse("bfyx"), DataType::f32, {3, 19, 5, 7});
  EXPECT_NE(plan_reorder(e->info(), small, small).source.code.find("#define IDX_T int"), std::string::npos);
  const ScopedEnv wide("CLREORDER_INDEX_BITS", "64");
  std::vector<Case> cases;
  for (const char* d : {"b_fs_yx_fsv16", "bs_fs_yx_bsv16_fsv16", "yxfb"})
    cases.push_back(make_case(Format::parse("byxf"), Format::parse(d), {17, 19, 5, 7}, DataType::f32, DataType::f16,
                              {0, 1, 0, 2}, {1, 0, 1, 0}, {0, 2, 1, 0}, {0, 0, 0, 1}));
  EXPECT_NE(plan_reorder(e->info(), cases[0].src, cases[0].dst).source.code.find("#define IDX_T long"), std::string::npos);
  run_batch(*e, cases);
}

// CLREORDER_BUILD_OPTIONS gives every kernel more macro definitions (common.cl's other conversion forms, so a
// device can time them through the whole library): a reorder under it is another kernel, compiled with them
// and byte-exact (f16 through the vstore_half builtins here, as the conversions test's third build), and the
// one without them is found again afterwards; anything but definitions is an error naming it, before a compile.
TEST(Device, BuildOptionsFromTheEnvironment) {
  REQUIRE_DEVICE(e);
  const Case c = make_case(Format::parse("bfyx"), Format::parse("b_fs_yx_fsv16"), {2, 19, 5, 7}, DataType::f32, DataType::f16);
  const std::vector<uint8_t> src = visible_sources(c.src, c.dst.data_type(), 1).front();
  EXPECT_EQ(run_case(*e, c, src), "");
  EXPECT_EQ(plan_reorder(e->info(), c.src, c.dst).source.options.find("-D"), std::string::npos);
  {
    const ScopedEnv half("CLREORDER_BUILD_OPTIONS", " -DCR_HALF_BUILTINS  -DCR_UNUSED_VALUE=3 ");
    EXPECT_NE(plan_reorder(e->info(), c.src, c.dst).source.options.find(" -DCR_HALF_BUILTINS -DCR_UNUSED_VALUE=3"), std::string::npos);
    const CacheStats before = ProgramCache::instance().stats();
    EXPECT_EQ(run_case(*e, c, src), "");
    const CacheStats after = ProgramCache::instance().stats();
    EXPECT_EQ(after.dispatch_hits, before.dispatch_hits);  // another problem key
    // another kernel: compiled, or loaded from the persistent cache a former run of this test filled
    EXPECT_GT(after.kernels_built + after.programs_loaded, before.kernels_built + before.programs_loaded);
  }
  const CacheStats before = ProgramCache::instance().stats();
  EXPECT_EQ(run_case(*e, c, src), "");
  EXPECT_EQ(ProgramCache::instance().stats().dispatch_hits, before.dispatch_hits + 1);
  for (const char* bad : {"-O3", "-cl-fast-relaxed-math", "-D", "-D3X", "-DA-B", "-DCR_HALF_BUILTINS -w"}) {
    const ScopedEnv env("CLREORDER_BUILD_OPTIONS", bad);
    const std::string err = error_of([&] { plan_reorder(e->info(), c.src, c.dst); });
    EXPECT_NE(err.find("CLREORDER_BUILD_OPTIONS='" + std::string(bad) + "'"), std::string::npos) << err;
  }
}

// The 64-bit path where it is chosen, not forced: the largest u8 bfyx -> byxf tensor one allocation of this
// device holds (1 GiB on PoCL here: 2^30 elements, past the 32-bit threshold). Every destination byte is
// compared with the source byte it must hold, found by plain nested loops (the host reference would take
// minutes at this size); the source is random, so misplaced bytes show.
TEST(Device, SixtyFourBitIndicesOnTheLargestTensorTheDeviceAllows) {
  REQUIRE_DEVICE(e);
  const int64_t F = 64, X = 4096;
  const int64_t Y = std::min<int64_t>(4096, static_cast<int64_t>(e->info().max_alloc / static_cast<uint64_t>(F * X)));
  ASSERT_GT(Y, 0);
  const Layout src(Format::parse("bfyx"), DataType::u8, {1, F, Y, X}), dst(Format::parse("byxf"), DataType::u8, {1, F, Y, X});
  const KernelData kd = plan_reorder(e->info(), src, dst);
  const bool wide = kd.source.code.find("#define IDX_T long") != std::string::npos;
  EXPECT_EQ(wide, src.elements() >= INT32_MAX / 2) << kd.impl << " on " << src.describe();
  std::printf("largest tensor: %s, %lld bytes, %s, %s indices\n", src.describe().c_str(),
              static_cast<long long>(src.bytes()), kd.impl.c_str(), wide ? "64-bit" : "32-bit");
  const size_t n = static_cast<size_t>(src.bytes());
  std::vector<uint8_t> in(n);
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < n; i += 8) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    std::memcpy(in.data() + i, &s, std::min<size_t>(8, n - i));
  }
  std::vector<uint8_t> out;
  {
    cl::Buffer sb(e->context(), CL_MEM_READ_ONLY, n), db(e->context(), CL_MEM_WRITE_ONLY, n);
    e->queue().enqueueWriteBuffer(sb, CL_TRUE, 0, n, in.data());
    ReorderOptions selected;  // the kernel planned above, not the shape-agnostic one meanwhile
    selected.policy = CompilePolicy::wait;
    reorder(*e, sb, 0, src, db, 0, dst, selected);
    out.resize(n);
    e->queue().enqueueReadBuffer(db, CL_TRUE, 0, n, out.data());
  }
  size_t bad = 0, first = 0;
  for (int64_t f = 0; f < F; ++f)
    for (int64_t y = 0; y < Y; ++y)
      for (int64_t x = 0; x < X; ++x) {
        const size_t at = static_cast<size_t>((y * X + x) * F + f);
        if (out[at] != in[static_cast<size_t>((f * Y + y) * X + x)] && bad++ == 0) first = at;
      }
  EXPECT_EQ(bad, 0u) << "first wrong destination byte " << first;
}

TEST(Device, ByteOffsetsInsideBuffers) {
  REQUIRE_DEVICE(e);
  Case c = make_case(Format::parse("bfyx"), Format::parse("b_fs_yx_fsv16"), {3, 19, 5, 7});
  EXPECT_EQ(run_case_all(*e, c, false, "", 12, 40), "");
  Case h = make_case(Format::parse("byxf"), Format::parse("bfyx"), {2, 5, 3, 3}, DataType::f16, DataType::f16);
  EXPECT_EQ(run_case_all(*e, h, false, "", 2, 6), "");
}

// Each case's 8- or 16-bit vector accesses on one side (`source`: loads, else stores), in the form each tuning
// gives them: in CPU tiles tiled's, staged's and lanes' go as one unaligned access at any offset (`unaligned`,
// unaligned_vectors()), elsewhere as uints behind the base's run-time test (`guarded`); then the reorder at
// every offset of that side inside a 4-byte word, where the test takes one branch or the other.
static void run_at_every_word_offset(const Engine& e, const std::vector<std::pair<Case, const char*>>& cases, bool source,
                                     const char* unaligned_form, const char* guarded_form) {
  for (const char* tuning : {"cpu", "gpu"}) {
    const ScopedEnv tiles("CLREORDER_TUNING", tuning);
    for (const auto& [c, impl] : cases) {
      const std::string code = plan_reorder(e.info(), c.src, c.dst, impl).source.code;
      const bool unaligned = std::string(tuning) == "cpu" && std::string(impl) != "local";
      EXPECT_NE(code.find(unaligned ? unaligned_form : guarded_form), std::string::npos) << tuning << " " << c.label;
      EXPECT_EQ(code.find(unaligned ? guarded_form : unaligned_form), std::string::npos) << tuning << " " << c.label;
      const size_t esize = static_cast<size_t>(size_of((source ? c.src : c.dst).data_type()));
      for (size_t k = 0; k < 4 / esize; ++k)
        EXPECT_EQ(run_case_all(e, c, true, impl, source ? k * esize : 0, source ? 0 : k * esize, k), "")
            << tuning << " " << impl << " offset " << k * esize;
    }
  }
}

// Stores of 8- and 16-bit elements on each path that packs them, at every destination offset.
TEST(Device, PackedStoresAtEveryDestinationAlignment) {
  REQUIRE_DEVICE(e);
  run_at_every_word_offset(
      *e,
      {{make_case(Format::parse("bfyx"), Format::parse("b_fs_yx_fsv16"), {2, 32, 4, 4}, DataType::f32, DataType::f16), "tiled"},
       {make_case(Format::parse("bfyx"), Format::parse("bfyx"), {2, 3, 4, 16}, DataType::f32, DataType::bf16), "tiled"},
       {make_case(Format::parse("bfyx"), Format::parse("byxf"), {2, 64, 2, 8}, DataType::f32, DataType::u8), "tiled"},
       {make_case(Format::parse("bfyx"), Format::parse("b_fs_yx_fsv16"), {2, 32, 7, 7}, DataType::f32, DataType::f16), "staged"},
       {make_case(Format::parse("oiyx"), Format::parse("os_is_yx_osa4_isa8_osv8_isv4"), {64, 64, 3, 3}, DataType::i8, DataType::i8), "lanes"},
       {make_case(Format::parse("bfyx"), Format::parse("b_fs_yx_fsv16"), {2, 32, 3, 3}, DataType::f16, DataType::f16), "lanes"},
       {make_case(Format::parse("bfyx"), Format::parse("byxf"), {2, 64, 4, 8}, DataType::f32, DataType::i8), "local"},
       {make_case(Format::parse("b_fs_yx_fsv16"), Format::parse("bfyx"), {2, 32, 4, 8}, DataType::f16, DataType::f16), "local"}},
      false, "CR_STOREU(", "if (dst_wide)");
}

// Loads of 8- and 16-bit elements: lanes' and staged's tiles, tiled's transposes (with and without a
// conversion) and its row copies, local's words, at every source offset.
TEST(Device, PackedLoadsAtEverySourceAlignment) {
  REQUIRE_DEVICE(e);
  run_at_every_word_offset(
      *e,
      {{make_case(Format::parse("oiyx"), Format::parse("os_is_yx_osa4_isa8_osv8_isv4"), {64, 64, 3, 3}, DataType::i8, DataType::i8), "lanes"},
       {make_case(Format::parse("bfyx"), Format::parse("b_fs_yx_fsv16"), {2, 32, 3, 3}, DataType::bf16, DataType::bf16), "lanes"},
       {make_case(Format::parse("b_fs_yx_fsv16"), Format::parse("bfyx"), {2, 32, 7, 7}, DataType::i8, DataType::i8), "staged"},
       {make_case(Format::parse("bfyx"), Format::parse("byxf"), {2, 16, 4, 8}, DataType::i8, DataType::i8), "tiled"},
       {make_case(Format::parse("bfyx"), Format::parse("b_fs_yx_fsv16"), {2, 32, 4, 4}, DataType::f16, DataType::f32), "tiled"},
       {make_case(Format::parse("b_fs_yx_fsv16"), Format::parse("b_fs_yx_fsv16"), {2, 32, 4, 4}, DataType::u8, DataType::f32), "tiled"},
       {make_case(Format::parse("byxf"), Format::parse("bfyx"), {2, 64, 4, 8}, DataType::u8, DataType::f32), "local"},
       {make_case(Format::parse("bfyx"), Format::parse("b_fs_yx_fsv16"), {2, 32, 4, 8}, DataType::bf16, DataType::bf16), "local"}},
      true, "CR_LOADU(", "(src_wide ? ");
}

// The device evaluates the generated offset code; the host evaluates the plan. They must agree everywhere.
TEST(Device, DeviceComputesTheSameOffsetsAsTheHostPlan) {
  REQUIRE_DEVICE(e);
  std::vector<std::pair<Layout, Layout>> pairs;
  std::vector<std::string> names;
  for (const FormatEntry& r : registry())
    if (r.unsupported.empty()) names.push_back(r.name);
  for (const std::string& n : names) {
    Format f = Format::parse(n);
    Dims shape = f.kind() == FormatKind::data ? odd_shape(f.rank(), 17) : Dims{};
    if (f.kind() != FormatKind::data) {
      shape = f.kind() == FormatKind::grouped_weights ? Dims{3, 33, 17} : Dims{33, 17};
      for (int a = static_cast<int>(shape.size()); a < f.rank(); ++a) shape.push_back(a % 2 ? 3 : 2);
    }
    Dims lo(f.rank(), 0), up(f.rank(), 0);
    lo[1] = 2;
    up[f.rank() - 1] = 1;
    Layout padded(f, DataType::f32, shape, lo, up);
    Layout plain(Format::parse(f.axes()), DataType::f32, shape);
    pairs.emplace_back(padded, plain);
    pairs.emplace_back(plain, padded);
  }
  std::vector<KernelSource> sources;
  for (const auto& [s, d] : pairs) sources.push_back(offset_probe_source(s, d));
  ProgramCache::instance().build(e->context(), e->device(), sources);
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Layout& s = pairs[i].first;
    const Layout& d = pairs[i].second;
    const size_t ns = static_cast<size_t>(s.logical_elements()), nd = static_cast<size_t>(d.plan().digit_space);
    cl::Buffer so(e->context(), CL_MEM_WRITE_ONLY, ns * 8), doff(e->context(), CL_MEM_WRITE_ONLY, nd * 8),
        dco(e->context(), CL_MEM_WRITE_ONLY, nd * 8);
    LockedKernel k = ProgramCache::instance().kernel(e->context(), e->device(), sources[i]);
    k.kernel.setArg(0, so);
    k.kernel.setArg(1, doff);
    k.kernel.setArg(2, dco);
    e->queue().enqueueNDRangeKernel(k.kernel, cl::NullRange, cl::NDRange((std::max(ns, nd) + 63) / 64 * 64), cl::NDRange(64));
    std::vector<int64_t> src_off(ns), dst_off(nd), dst_coord(nd);
    e->queue().enqueueReadBuffer(so, CL_FALSE, 0, ns * 8, src_off.data());
    e->queue().enqueueReadBuffer(doff, CL_FALSE, 0, nd * 8, dst_off.data());
    e->queue().enqueueReadBuffer(dco, CL_TRUE, 0, nd * 8, dst_coord.data());
    Dims c(s.rank(), 0);
    for (size_t n = 0; n < ns; ++n) {
      ASSERT_EQ(src_off[n], s.plan().offset(c.data())) << s.describe() << " coord " << dims_to_string(c, ",");
      for (int a = s.rank() - 1; a >= 0 && ++c[a] == s.dims()[a]; --a) c[a] = 0;
    }
    int64_t hc[8], ho;
    for (size_t p = 0; p < nd; ++p) {
      bool valid = d.plan().decode(static_cast<int64_t>(p), &ho, hc);
      int64_t linear = 0;
      for (int a = 0; a < d.rank(); ++a) linear = linear * d.dims()[a] + hc[a];
      ASSERT_EQ(dst_off[p], ho) << d.describe() << " tuple " << p;
      ASSERT_EQ(dst_coord[p], valid ? linear : -1) << d.describe() << " tuple " << p;
    }
  }
}

TEST(Device, RepeatedReorderCompilesNothing) {
  REQUIRE_DEVICE(e);
  Case c = make_case(Format::parse("bfyx"), Format::parse("bs_fs_yx_bsv16_fsv16"), {5, 21, 3, 2}, DataType::f32, DataType::bf16);
  const std::vector<uint8_t> src = visible_sources(c.src, c.dst.data_type(), 1).front();
  EXPECT_EQ(run_case(*e, c, src), "");
  CacheStats before = ProgramCache::instance().stats();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(run_case(*e, c, src), "");
  CacheStats after = ProgramCache::instance().stats();
  EXPECT_EQ(after.programs_built, before.programs_built);
  EXPECT_EQ(after.kernels_built, before.kernels_built);
  EXPECT_EQ(after.dispatch_hits, before.dispatch_hits + 3);  // found by problem key: no source generated

  // Thousands of compiled-in values: the key holds their hash, a hit compares them. Another value set (one
  // value changed) is another kernel with its own results; host values beside buffers change no kernel.
  Case q = converting(make_case(Format::parse("oiyx"), Format::parse("os_is_yx_osv16_isv4"), {64, 256, 1, 1}, DataType::f32, DataType::i8),
                      with_params({}, {{Param::dst_scale, ParamValues{ramp(64 * 8, 0.02f, 0.001f), 1, 32, 0}}}));
  const std::vector<uint8_t> qsrc = visible_sources(q.src, q.dst.data_type(), 1).front();
  EXPECT_EQ(run_case(*e, q, qsrc), "");
  before = ProgramCache::instance().stats();
  EXPECT_EQ(run_case(*e, q, qsrc), "");
  EXPECT_EQ(ProgramCache::instance().stats().dispatch_hits, before.dispatch_hits + 1);
  Case other = q;
  other.conversion.param(Param::dst_scale).values[300] *= 2;
  before = ProgramCache::instance().stats();
  EXPECT_EQ(run_case(*e, other, qsrc), "");  // checked against the host with the changed value
  EXPECT_EQ(ProgramCache::instance().stats().dispatch_hits, before.dispatch_hits);
  Case buffered = q;
  buffered.conversion.param(Param::dst_scale).from_buffer = true;
  EXPECT_EQ(run_case(*e, buffered, qsrc), "");
  buffered.conversion.param(Param::dst_scale).values[300] *= 2;  // uploaded by run_case: new values, one kernel
  before = ProgramCache::instance().stats();
  EXPECT_EQ(run_case(*e, buffered, qsrc), "");
  EXPECT_EQ(ProgramCache::instance().stats().dispatch_hits, before.dispatch_hits + 1);
}

TEST(Device, PrepareBuildsManyKernelsInOneProgram) {
  REQUIRE_DEVICE(e);
  std::vector<std::pair<Layout, Layout>> pairs;
  for (int64_t f = 1; f <= 20; ++f)
    pairs.emplace_back(Layout(Format::parse("bfyx"), DataType::f32, {2, f, 3, 3}),
                       Layout(Format::parse("b_fs_yx_fsv8"), DataType::f32, {2, f, 3, 3}));
  CacheStats before = ProgramCache::instance().stats();
  prepare(*e, pairs);
  CacheStats mid = ProgramCache::instance().stats();
  // One program, compiled or (when an earlier run stored it) loaded from the persistent cache.
  EXPECT_EQ(mid.programs_built + mid.programs_loaded, before.programs_built + before.programs_loaded + 1);
  EXPECT_EQ(mid.kernels_built, before.kernels_built + 20);
  prepare(*e, pairs);  // all cached: nothing to build
  EXPECT_EQ(ProgramCache::instance().stats().programs_built, mid.programs_built);
  for (const auto& [s, d] : pairs) EXPECT_EQ(run_case_all(*e, Case{s, d, s.describe()}, false), "");
  EXPECT_EQ(ProgramCache::instance().stats().programs_built, mid.programs_built);
}

TEST(Device, CallersContextAndQueue) {
  REQUIRE_DEVICE(e);
  cl::Context ctx(e->device());
  cl::CommandQueue q(ctx, e->device());
  Engine mine(ctx(), q());
  EXPECT_EQ(mine.info().name, e->info().name);
  Case c = make_case(Format::parse("byxf"), Format::parse("b_fs_yx_fsv32"), {2, 33, 3, 4});
  EXPECT_EQ(run_case_all(mine, c, false), "");
  ReorderResult r;
  reorder(mine, make_pattern(c.src), c.src, c.dst, {}, &r);
  EXPECT_EQ(r.kernel_ms, -1);  // the caller's queue has no profiling
}

// What only the C++ API can be given (host vectors, a forced implementation by option); the buffer, layout
// and device errors both APIs share are the rows of BadBuffersAreRefusedAndTheDestinationIsUntouched,
// UnknownDeviceChoiceThroughBothApis and Model.LayoutErrorsNameTheValue.
TEST(Device, BadInputGetsClearErrors) {
  REQUIRE_DEVICE(e);
  const auto msg = error_of;
  Layout src(Format::parse("bfyx"), DataType::f32, {2, 3, 4, 5});
  Layout dst(Format::parse("b_fs_yx_fsv16"), DataType::f32, {2, 3, 4, 5});
  cl::Buffer big(e->context(), CL_MEM_READ_WRITE, 1 << 16);
  EXPECT_NE(msg([&] { reorder(*e, std::vector<uint8_t>(7), src, dst); }).find("source holds 7 bytes"), std::string::npos);
  ReorderOptions force;
  force.force_impl = "no_such_impl";
  EXPECT_NE(msg([&] { reorder(*e, big, 0, src, big, 4096, dst, force); }).find("unknown reorder implementation 'no_such_impl'"),
            std::string::npos);
  EXPECT_NE(msg([] { choose_device("no-such-device-xyz"); }).find(e->info().name), std::string::npos);  // lists the devices
  // OpenCL failures name the call and the code by name; a build failure carries the build log.
  KernelSource broken{"broken_kernel", "__kernel void broken_kernel(__global float* p) { p[0] = undefined_name; }", "-cl-std=CL1.2"};
  std::string build = msg([&] { ProgramCache::instance().kernel(e->context(), e->device(), broken); });
  EXPECT_NE(build.find("clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE (-11)"), std::string::npos) << build;
  EXPECT_NE(build.find("undefined_name"), std::string::npos) << build;
  EXPECT_STREQ(cl_error_name(-54), "CL_INVALID_WORK_GROUP_SIZE");
  EXPECT_STREQ(cl_error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
}

// reorder() checks a conversion's values where a kernel is planned for them: a cached kernel's values passed
// then, bit for bit. So values that cannot apply are refused even right after good ones of the same shape ran
// (their kernel cached), under every compile policy, naming the value, the destination untouched; the good
// ones still run, exact.
TEST(Device, BadValuesAreRefusedAfterGoodOnesOfTheSameShapeRan) {
  REQUIRE_DEVICE(e);
  const Layout src(Format::parse("bfyx"), DataType::f32, {2, 3, 4, 5});
  const Layout dst(Format::parse("b_fs_yx_fsv16"), DataType::i8, {2, 3, 4, 5});
  const std::vector<uint8_t> in = make_pattern(src);
  std::vector<uint8_t> sentinel(static_cast<size_t>(dst.bytes()), 0xa5);
  cl::Buffer s_buf(e->context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, in.size(), const_cast<uint8_t*>(in.data()));
  cl::Buffer d_buf(e->context(), CL_MEM_READ_WRITE, sentinel.size());
  struct Bad {
    Param param;
    std::vector<float> values;
    std::string says;
  };
  const Bad bad[] = {{Param::dst_scale, {0.5f, 0.0f, 2.0f}, "index 1) divides by zero"},
                     {Param::dst_scale, {0.5f, 0.25f, NAN}, "index 2) is not finite"},
                     {Param::dst_scale, {0x1p-130f, 0.25f, 2.0f}, "has no finite f32 reciprocal"},
                     {Param::dst_zero_point, {1.0f, 1.5f, -3.0f}, "index 1) is not an integer"}};
  for (const CompilePolicy policy : {CompilePolicy::wait, CompilePolicy::background, CompilePolicy::agnostic})
    for (const Bad& b : bad) {
      ReorderOptions good;
      good.policy = policy;
      good.wait = true;
      good.conversion.param(b.param) = {b.param == Param::dst_zero_point ? std::vector<float>{1, -2, 3} : std::vector<float>{0.5f, 0.25f, 2.0f}, 1};
      std::vector<uint8_t> want(sentinel.size());
      reference_reorder(src, in.data(), dst, want.data(), good.conversion);
      for (int k = 0; k < 2; ++k) {  // the second call finds its kernel cached
        e->queue().enqueueWriteBuffer(d_buf, CL_TRUE, 0, sentinel.size(), sentinel.data());
        reorder(*e, s_buf, 0, src, d_buf, 0, dst, good);
        std::vector<uint8_t> got(sentinel.size());
        e->queue().enqueueReadBuffer(d_buf, CL_TRUE, 0, got.size(), got.data());
        EXPECT_EQ(compare_bytes(got, want), "") << "good values, call " << k;
      }
      ReorderOptions worse = good;
      worse.conversion.param(b.param).values = b.values;
      e->queue().enqueueWriteBuffer(d_buf, CL_TRUE, 0, sentinel.size(), sentinel.data());
      const std::string err = error_of([&] { reorder(*e, s_buf, 0, src, d_buf, 0, dst, worse); });
      EXPECT_NE(err.find(b.says), std::string::npos) << "expected '" << b.says << "' in: " << err;
      EXPECT_NE(err.find("b_fs_yx_fsv16 i8 2x3x4x5"), std::string::npos) << err;
      e->queue().finish();
      std::vector<uint8_t> after(sentinel.size());
      e->queue().enqueueReadBuffer(d_buf, CL_TRUE, 0, after.size(), after.data());
      EXPECT_EQ(compare_bytes(after, sentinel), "") << "the destination changed after: " << err;
    }
}

// Every bad argument of reorder() on buffers is refused before anything is enqueued, naming the value, and the
// destination keeps every byte it had (a sentinel); the same call with good arguments then works. Each row is
// data and goes through the C++ API and the C API (clreorder.h) alike: the same words, a status, no event.
TEST(Device, BadBuffersAreRefusedAndTheDestinationIsUntouched) {
  REQUIRE_DEVICE(e);
  const Layout src(Format::parse("bfyx"), DataType::f32, {2, 3, 4, 5});
  const Layout dst(Format::parse("b_fs_yx_fsv16"), DataType::f32, {2, 3, 4, 5});
  const size_t sb = static_cast<size_t>(src.bytes()), db = static_cast<size_t>(dst.bytes());
  const cl::Context& ctx = e->context();
  const std::vector<uint8_t> sentinel = random_bytes(4 * db, 21);
  cl::Buffer parent(ctx, CL_MEM_READ_WRITE, sentinel.size());
  cl::Buffer src_buf(ctx, CL_MEM_READ_WRITE, sb), ro(ctx, CL_MEM_READ_ONLY, db), wo(ctx, CL_MEM_WRITE_ONLY, sb);
  cl::Buffer small_buf(ctx, CL_MEM_READ_WRITE, 100);
  e->queue().enqueueWriteBuffer(src_buf, CL_TRUE, 0, sb, visible_sources(src, DataType::f32, 1).front().data());
  cl::Context other(e->device());
  cl::Buffer foreign(other, CL_MEM_READ_WRITE, sb);
  const size_t align = guard_bytes(*e);  // a valid sub-buffer origin
  cl_buffer_region lo{0, 2 * align}, hi{align, 2 * align};
  cl::Buffer sub_lo = parent.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &lo);
  cl::Buffer sub_hi = parent.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &hi);
  const size_t huge = std::numeric_limits<size_t>::max();
  const std::map<std::string, cl::Buffer> buffers = {{"src", src_buf}, {"parent", parent}, {"ro", ro}, {"wo", wo},
                                                     {"small", small_buf}, {"foreign", foreign}, {"sub_lo", sub_lo},
                                                     {"sub_hi", sub_hi}, {"null", cl::Buffer()}};
  const LayoutSpec plain{"bfyx", {2, 3, 4, 5}}, blocked{"b_fs_yx_fsv16", {2, 3, 4, 5}};
  const LayoutSpec tiny{"bfyx", {1, 1, 2, 4}};  // 32 bytes: fits in either half
  const LayoutSpec longer{"bfyx", {2, 3, 4, 6}}, shared{"bfyx", {2, 3, 4, 5}, {}, {}, {20, 0, 5, 1}};
  struct Bad {
    std::string src;
    size_t src_offset;
    LayoutSpec src_layout;
    std::string dst;
    size_t dst_offset;
    LayoutSpec dst_layout;
    std::string says;
    const char* env = nullptr;  // VAR=VALUE set for the call
  };
  const Bad bad[] = {
      {"src", 0, plain, "parent", huge - 3, blocked, "at byte offset 18446744073709551612 needs"},
      {"src", huge - 3, plain, "parent", 0, blocked, "source buffer holds"},
      {"src", 0, plain, "parent", huge - db + 1, blocked, "destination buffer holds"},
      {"src", 4, plain, "parent", 0, blocked, "source buffer holds 480 bytes"},
      {"src", 2, plain, "parent", 0, blocked, "source byte offset 2"},
      {"small", 0, plain, "parent", 0, blocked, "source buffer holds 100 bytes"},
      {"src", 0, plain, "small", 0, blocked, "destination buffer holds 100 bytes"},
      {"parent", 0, plain, "parent", 4, blocked, "source and destination overlap"},
      {"sub_lo", align, tiny, "sub_hi", 0, tiny,
       "overlap: bytes [" + std::to_string(align) + ", " + std::to_string(align + 32) + ") and [" + std::to_string(align)},
      {"sub_lo", align - 16, tiny, "sub_hi", 0, tiny, "source and destination overlap"},
      {"foreign", 0, plain, "parent", 0, blocked, "source buffer belongs to another OpenCL context"},
      {"src", 0, plain, "ro", 0, blocked, "destination buffer was created CL_MEM_READ_ONLY"},
      {"wo", 0, plain, "parent", 0, blocked, "source buffer was created CL_MEM_WRITE_ONLY"},
      {"null", 0, plain, "parent", 0, blocked, "source buffer is null"},
      {"src", 0, plain, "null", 0, blocked, "destination buffer is null"},
      {"src", 0, plain, "parent", 0, longer, "cannot reorder"},
      {"src", 0, plain, "parent", 0, shared, "strides 20,0,5,1"},
      {"src", 0, plain, "parent", 0, blocked, "implementation 'lanes' declines", "CLREORDER_FORCE_IMPL=lanes"},
      {"src", 0, plain, "parent", 0, blocked, "unknown reorder implementation 'no_such_impl'", "CLREORDER_FORCE_IMPL=no_such_impl"},
      // The environment is read as a value too: a wrong one is named, not ignored.
      {"src", 0, plain, "parent", 0, blocked, "'13'", "CLREORDER_INDEX_BITS=13"},
      {"src", 0, plain, "parent", 0, blocked, "'13'", "CLREORDER_TUNING=13"},
      {"src", 0, plain, "parent", 0, blocked, "'13'", "CLREORDER_FORCE_IMPL=13"},
      {"src", 0, plain, "parent", 0, blocked, "'-O3'", "CLREORDER_BUILD_OPTIONS=-O3"},
  };
  clreorder_context c_ctx = nullptr;
  ASSERT_EQ(clreorder_context_create(e->context()(), e->device()(), e->queue()(), &c_ctx), CLREORDER_SUCCESS);
  auto untouched = [&](const std::string& why) {
    e->queue().finish();
    std::vector<uint8_t> after(sentinel.size());
    e->queue().enqueueReadBuffer(parent, CL_TRUE, 0, after.size(), after.data());
    EXPECT_EQ(compare_bytes(after, sentinel), "") << "the destination changed after: " << why;
  };
  for (const Bad& b : bad) {
    const std::string env = b.env ? b.env : "", var = env.substr(0, env.find('='));
    std::unique_ptr<ScopedEnv> scoped;
    if (b.env) scoped = std::make_unique<ScopedEnv>(var.c_str(), env.substr(env.find('=') + 1).c_str());
    const cl::Buffer &s_buf = buffers.at(b.src), &d_buf = buffers.at(b.dst);
    e->queue().enqueueWriteBuffer(parent, CL_TRUE, 0, sentinel.size(), sentinel.data());
    const std::string cpp = error_of([&] {
      reorder(*e, s_buf, b.src_offset, b.src_layout.cpp(), d_buf, b.dst_offset, b.dst_layout.cpp());
    });
    EXPECT_NE(cpp.find(b.says), std::string::npos) << "expected '" << b.says << "' in: " << cpp;
    untouched(cpp);
    clreorder_status made_src = CLREORDER_SUCCESS, made_dst = CLREORDER_SUCCESS;
    clreorder_layout c_src = b.src_layout.c(&made_src), c_dst = b.dst_layout.c(&made_dst);
    ASSERT_TRUE(made_src == CLREORDER_SUCCESS && made_dst == CLREORDER_SUCCESS) << clreorder_last_error();
    cl_event event = nullptr;
    const clreorder_status status =
        clreorder_reorder(c_ctx, s_buf(), b.src_offset, c_src, d_buf(), b.dst_offset, c_dst, 0, nullptr, &event);
    const std::string c = clreorder_last_error();
    EXPECT_EQ(status, CLREORDER_INVALID_VALUE) << c;
    EXPECT_EQ(event, nullptr);
    EXPECT_NE(c.find(cpp), std::string::npos) << "C: " << c << "\nC++: " << cpp;
    untouched(c);
    clreorder_layout_release(c_src);
    clreorder_layout_release(c_dst);
  }
  clreorder_context_release(c_ctx);
  e->queue().enqueueWriteBuffer(parent, CL_TRUE, 0, sentinel.size(), sentinel.data());
  EXPECT_EQ(error_of([&] { reorder(*e, src_buf, 0, src, parent, 2 * db, dst); }), "");
  EXPECT_EQ(error_of([&] { reorder(*e, sub_lo, 0, tiny.cpp(), sub_hi, 0, tiny.cpp()); }), "");  // disjoint parts of one parent
}

// A device choice that matches nothing, through both APIs.
TEST(Device, UnknownDeviceChoiceThroughBothApis) {
  REQUIRE_DEVICE(e);
  for (const char* spec : {"no-such-device-xyz", "999"}) {
    const std::string cpp = error_of([&] { choose_device(spec); });
    EXPECT_NE(cpp.find(std::string("'") + spec + "' matches no OpenCL device"), std::string::npos) << cpp;
    clreorder_context ctx = nullptr;
    EXPECT_EQ(clreorder_context_create_default(spec, &ctx), CLREORDER_INVALID_VALUE);
    EXPECT_EQ(ctx, nullptr);
    EXPECT_NE(std::string(clreorder_last_error()).find(cpp), std::string::npos) << clreorder_last_error();
  }
}

TEST(Device, ForcedGenericIsTheFallbackForEveryPair) {
  REQUIRE_DEVICE(e);
  const KernelSelector& ks = KernelSelector::instance();
  ASSERT_FALSE(ks.impls().empty());
  EXPECT_STREQ(ks.impls().back()->name(), "generic");
  Case c = make_case(Format::parse("yxfb"), Format::parse("bs_fs_yx_bsv32_fsv16"), {17, 19, 2, 3}, DataType::i8, DataType::f32);
  EXPECT_EQ(run_case_all(*e, c, true, "generic"), "");
  EXPECT_EQ(reason_of(*e, c, "generic"), "");
}

// The tiled implementation has a register-transpose path (V = 16, 8, 4), a vector row-copy path and scalar
// loops; shapes below reach each of them, with blocked tails, padding and every type pair (vector
// conversions), and the generated source proves which path ran.
TEST(Device, TiledPathsOnVectorFriendlyShapes) {
  REQUIRE_DEVICE(e);
  // The CPU tiles on every device: the GPU tuning's 8-wide tiles have no 16-wide transposes.
  const ScopedEnv cpu_tiles("CLREORDER_TUNING", "cpu");
  std::vector<Case> cases;
  const std::pair<const char*, const char*> pairs[] = {
      {"bfyx", "b_fs_yx_fsv16"}, {"b_fs_yx_fsv16", "bfyx"}, {"bfyx", "byxf"}, {"byxf", "bfyx"},
      {"byxf", "b_fs_yx_fsv16"}, {"b_fs_yx_fsv16", "byxf"}, {"bfyx", "bs_fs_yx_bsv16_fsv16"},
      {"fs_b_yx_fsv32", "bfyx"}, {"bfyx", "b_fs_yx_fsv4"}, {"b_fs_yx_fsv8", "b_fs_yx_fsv16"}, {"bfyx", "bfyx"}};
  const Dims shapes[] = {{2, 32, 4, 4}, {3, 19, 4, 8}, {17, 48, 2, 8}, {2, 64, 1, 12}, {2, 24, 2, 4}};
  for (const auto& [s, d] : pairs)
    for (const Dims& shape : shapes) {
      cases.push_back(make_case(Format::parse(s), Format::parse(d), shape));
      cases.push_back(make_case(Format::parse(s), Format::parse(d), shape, DataType::f32, DataType::f32, {0, 0, 1, 0},
                                {0, 0, 0, 1}, {0, 0, 0, 2}, {0, 0, 1, 0}));
    }
  // Each type to and from f32, f16, bf16 and itself (EveryDataTypePairOnRandomBits runs all 256 pairs), from
  // bfyx and byxf in turn (each pair is one kernel to compile: the suite's time is mostly PoCL's compiles).
  // u4 and i4 have tests of their own (Device.FourBitTypes, Device.FourBitTransposes).
  int turn = 0;
  for (DataType st : all_data_types())
    for (DataType dt : all_data_types())
      if ((st == dt || is_narrow_float_or_f32(st) || is_narrow_float_or_f32(dt)) && !is_nibble(st) && !is_nibble(dt))
        cases.push_back(make_case(Format::parse(turn++ % 2 ? "byxf" : "bfyx"), Format::parse("b_fs_yx_fsv16"), {2, 32, 4, 4}, st, dt));
  // Rows whose channels end inside a block: an image's 3 (converted 4 lanes wide), 35 of 48 in blocks of 16
  // and 32, 70 in a row of 64 chunks, and past the tail a whole block of upper padding.
  for (const auto& [s, d, shape, dt] : {std::tuple<const char*, const char*, Dims, DataType>{"byxf", "b_fs_yx_fsv16", {2, 3, 4, 4}, DataType::f16},
                                        {"byxf", "b_fs_yx_fsv16", {2, 35, 2, 3}, DataType::i8},
                                        {"byxf", "b_fs_yx_fsv32", {2, 35, 2, 3}, DataType::u16},
                                        {"byxf", "b_fs_yx_fsv16", {1, 70, 1, 3}, DataType::f64}})
    cases.push_back(make_case(Format::parse(s), Format::parse(d), shape, DataType::u8, dt));
  cases.push_back(make_case(Format::parse("byxf"), Format::parse("b_fs_yx_fsv16"), {2, 16, 3, 3}, DataType::f32, DataType::f32, {}, {},
                            {}, {0, 20, 0, 0}));
  // Steps holding input channels past the source's (17 of 32, 3 of 16): their loads loop into a private tile,
  // where the channels sit outside yx and where they are B's inner digit (1 x 1).
  cases.push_back(make_case(Format::parse("oiyx"), Format::parse("os_is_yx_isv16_osv16"), {33, 17, 3, 3}, DataType::f16, DataType::f16));
  cases.push_back(make_case(Format::parse("goiyx"), Format::parse("g_os_is_yx_isv16_osv16"), {2, 18, 3, 3, 3}, DataType::i8, DataType::i8));
  cases.push_back(make_case(Format::parse("oiyx"), Format::parse("os_is_yx_isv16_osv16"), {20, 3, 1, 1}));
  // Blocked back to channels last where a block's plane is over 2 KiB: a work-item takes whole destination
  // rows of many pixels (B: fs, then x), rows of y's lower padding between them.
  cases.push_back(make_case(Format::parse("b_fs_yx_fsv16"), Format::parse("byxf"), {2, 48, 6, 7}, DataType::f32, DataType::f32, {}, {},
                            {0, 0, 1, 0}, {}));
  std::map<std::string, int> paths;
  for (const Case& c : cases) {
    KernelData kd = plan_reorder(e->info(), c.src, c.dst, "tiled");
    const std::string& code = kd.source.code;
    for (const char* v : {"16", "8", "4"})
      if (code.find(std::string("vload") + v + "(0, src + s_off + ib + ") != std::string::npos)
        ++paths[std::string("transpose") + v];
    if (code.find("const bool ok = ") != std::string::npos) ++paths["rows"];
    if (code.find("? CONVERT(SRC_AT(") != std::string::npos) ++paths["scalar"];
    if (code.find("const IDX_T n_ok = ") != std::string::npos) ++paths["rows with a tail"];
    if (code.find("cr_t = select(") != std::string::npos) ++paths["rows with a narrow tail"];
    if (const std::string where = edge_step_checks(code); !where.empty()) ++paths["edge steps, the checked digit " + where];
    if (const std::string form = two_digit_rows(code); !form.empty()) ++paths["rows, B's continuing digit " + form];
  }
  for (const char* path : {"transpose16", "transpose8", "transpose4", "rows", "scalar", "rows with a tail", "rows with a narrow tail",
                           "edge steps, the checked digit inside", "edge steps, the checked digit outside", "rows, B's continuing digit inside",
                           "rows, B's continuing digit outside"})
    EXPECT_GT(paths[path], 0) << "no case reached the " << path << " path";
  run_batch(*e, cases, true, "tiled");
}

// The staged implementation takes the permutations whose dense runs are odd (7 x 7 planes, 3 x 3 kernels,
// isv4 against y*x = 9): every case below must be accepted by it and match the reference, including every
// data type, tails and padding on the axes it leaves to the grid, and strided work-item loops.
TEST(Device, StagedOnOddRuns) {
  REQUIRE_DEVICE(e);
  // The CPU tiles on every device: the GPU tuning's 64-element tiles leave no room for a second run of these
  // (byxf with 19 or 24 channels), so staged declines them there and tiled or generic takes them.
  const ScopedEnv cpu_tiles("CLREORDER_TUNING", "cpu");
  std::vector<Case> cases;
  const std::pair<const char*, const char*> pairs[] = {{"bfyx", "byxf"}, {"byxf", "bfyx"}, {"bfyx", "yxfb"},
                                                        {"b_fs_yx_fsv16", "bfyx"}, {"bfyx", "b_fs_yx_fsv32"}};
  for (const auto& [s, d] : pairs)
    for (const Dims& shape : {Dims{2, 32, 7, 7}, Dims{3, 64, 3, 5}, Dims{17, 32, 1, 3}}) {
      cases.push_back(make_case(Format::parse(s), Format::parse(d), shape));
      cases.push_back(make_case(Format::parse(s), Format::parse(d), shape, DataType::f32, DataType::f32, {0, 0, 1, 0},
                                {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 2, 0}));
    }
  cases.push_back(make_case(Format::parse("bfyx"), Format::parse("byxf"), {3, 19, 7, 7}, DataType::u8, DataType::f32,
                            {0, 0, 1, 0}, {0, 0, 0, 0}, {0, 0, 2, 0}, {0, 0, 1, 0}));
  for (const char* w : {"os_is_yx_osa4_isa8_osv8_isv4", "os_is_yx_isv16_osv16", "os_is_yx_osv16_isv4", "os_is_yx_isa8_osv8_isv4"})
    for (DataType t : {DataType::i8, DataType::f32})
      cases.push_back(make_case(Format::parse("oiyx"), Format::parse(w), {64, 64, 3, 3}, t, t));
  cases.push_back(make_case(Format::parse("goiyx"), Format::parse("gs_oiyx_gsv16"), {32, 1, 1, 3, 3}));
  cases.push_back(make_case(Format::parse("goiyx"), Format::parse("gs_oiyx_gsv16"), {48, 2, 3, 3, 3}, DataType::f32, DataType::f16));
  // Every type as source and as destination (the conversions themselves are shared with tiled, which runs
  // each type to and from f32, f16, bf16 and itself), but u4 and i4, which staged declines.
  for (DataType t : all_data_types()) {
    if (is_nibble(t)) continue;
    cases.push_back(make_case(Format::parse("bfyx"), Format::parse("byxf"), {2, 24, 3, 3}, t, DataType::f32));
    cases.push_back(make_case(Format::parse("bfyx"), Format::parse("byxf"), {2, 24, 3, 3}, DataType::f16, t));
  }
  for (const Case& c : cases) EXPECT_EQ(reason_of(*e, c, "staged"), "") << c.label;
  run_batch(*e, cases, true, "staged");
  // Where its tile would need masks it declines, with the reason, and tiled takes the reorder.
  Case tail = make_case(Format::parse("bfyx"), Format::parse("b_fs_yx_fsv16"), {2, 19, 3, 3});
  const std::string why = reason_of(*e, tail, "staged");
  EXPECT_NE(why.find("too short"), std::string::npos) << why;
  EXPECT_EQ(plan_reorder(e->info(), tail.src, tail.dst).impl, "tiled");
  // Runs that tiled's transposes move whole (multiples of 4) or that are dense on both sides it accepts too,
  // ranked after tiled (measured faster there): they run only forced, correctly.
  const std::vector<Case> after = {
      make_case(Format::parse("bfyx"), Format::parse("byxf"), {2, 32, 8, 8}),
      make_case(Format::parse("b_fs_yx_fsv16"), Format::parse("b_fs_yx_fsv32"), {2, 64, 5, 5}, DataType::f16, DataType::f16),
      make_case(Format::parse("bfyx"), Format::parse("b_fs_yx_fsv16"), {2, 32, 4, 4}, DataType::u8, DataType::f32,
                {0, 0, 1, 1}, {0, 0, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0})};
  for (const Case& c : after) {
    for (const Verdict& v : KernelSelector::instance().explain(ReorderParams{c.src, c.dst, e->info(), {}}))
      if (v.impl == "staged") {
        EXPECT_EQ(v.declines, "") << c.label;
        EXPECT_NE(v.rank.why.find("tiled"), std::string::npos) << c.label << ": " << v.rank.why;
      }
    EXPECT_EQ(plan_reorder(e->info(), c.src, c.dst).impl, "tiled") << c.label;
  }
  run_batch(*e, after, true, "staged");
}

// The lanes implementation takes 8- and 16-bit elements packed into 4-byte destination words whose elements
// are strided in the source (the int8 weights formats with isv4, f16 pairs of channels): every case below
// must be accepted by it, be its first choice, and match the reference, including padding on the axes it
// leaves to the grid, words per row that are not a multiple of 4 (or a prime: one word per T vector), 2 to 8
// rows, and work-item loops. Sources
// at every alignment run in PackedLoadsAtEverySourceAlignment, destinations in PackedStores...
TEST(Device, LanesOnPackedWords) {
  REQUIRE_DEVICE(e);
  std::vector<Case> cases;
  for (DataType t : {DataType::i8, DataType::u8}) {
    cases.push_back(make_case(Format::parse("oiyx"), Format::parse("os_is_yx_osa4_isa8_osv8_isv4"), {64, 64, 3, 3}, t, t));
    cases.push_back(make_case(Format::parse("oiyx"), Format::parse("os_is_yx_osv16_isv4"), {32, 20, 3, 3}, t, t));
    cases.push_back(make_case(Format::parse("oiyx"), Format::parse("os_is_yx_isa8_osv8_isv4"), {16, 64, 1, 3}, t, t));
    cases.push_back(make_case(Format::parse("goiyx"), Format::parse("g_os_is_yx_osv16_isv4"), {3, 16, 8, 3, 3}, t, t));
  }
  for (DataType t : {DataType::f16, DataType::bf16}) {
    cases.push_back(make_case(Format::parse("bfyx"), Format::parse("b_fs_yx_fsv16"), {2, 32, 3, 3}, t, t));
    cases.push_back(make_case(Format::parse("bfyx"), Format::parse("byxf"), {3, 4, 1, 3}, t, t));
    cases.push_back(make_case(Format::parse("bfyx"), Format::parse("byxf"), {2, 4, 1, 17}, t, t));  // one word per T
    cases.push_back(make_case(Format::parse("bfyx"), Format::parse("byxf"), {3, 24, 3, 3}, t, t, {1, 0, 0, 0}, {0, 0, 0, 0},
                              {0, 0, 0, 0}, {2, 0, 0, 0}));
  }
  // The ranks measured on PoCL, on every device (on GPUs local runs first).
  const ScopedEnv cpu_tiles("CLREORDER_TUNING", "cpu");
  for (const Case& c : cases) {
    EXPECT_EQ(reason_of(*e, c, "lanes"), "") << c.label;
    EXPECT_EQ(plan_reorder(e->info(), c.src, c.dst).impl, "lanes") << c.label;
  }
  run_batch(*e, cases, true, "lanes");
  // Conversions between element sizes convert each picked element once, and rank lanes first (measured
  // faster than staged there).
  const std::vector<Case> converting_pairs = {
      make_case(Format::parse("oiyx"), Format::parse("os_is_yx_osv16_isv4"), {64, 64, 3, 3}, DataType::f32, DataType::i8),
      make_case(Format::parse("bfyx"), Format::parse("byxf"), {2, 24, 3, 5}, DataType::f32, DataType::f16),
      make_case(Format::parse("b_fs_yx_fsv16"), Format::parse("bfyx"), {2, 32, 3, 4}, DataType::f16, DataType::bf16)};
  for (const Case& c : converting_pairs) EXPECT_EQ(plan_reorder(e->info(), c.src, c.dst).impl, "lanes") << c.label;
  run_batch(*e, converting_pairs, true);
  // Where words are contiguous in the source, ranked after staged and tiled (measured slower), so it runs
  // only forced: correctly.
  const std::pair<Case, const char*> ranked_after[] = {
      {make_case(Format::parse("oiyx"), Format::parse("os_is_yx_osv16_isv4"), {64, 64, 1, 1}, DataType::i8, DataType::i8), "contiguous"}};
  std::vector<Case> forced;
  for (const auto& [c, what] : ranked_after) {
    for (const Verdict& v : KernelSelector::instance().explain(ReorderParams{c.src, c.dst, e->info(), {}}))
      if (v.impl == "lanes") {
        EXPECT_EQ(v.declines, "") << c.label;
        EXPECT_FALSE(v.chosen) << c.label;
        EXPECT_NE(v.rank.why.find(what), std::string::npos) << c.label << ": " << v.rank.why;
      }
    EXPECT_NE(plan_reorder(e->info(), c.src, c.dst).impl, "lanes") << c.label;
    forced.push_back(c);
  }
  run_batch(*e, forced, true, "lanes");
  // It declines, with the reason, where words are spread too far, have tails, or are words already.
  const std::pair<Case, const char*> declined[] = {
      {make_case(Format::parse("oiyx"), Format::parse("os_is_yx_osv16_isv4"), {64, 64, 5, 5}, DataType::i8, DataType::i8), "25 source elements apart"},
      {make_case(Format::parse("oiyx"), Format::parse("os_is_yx_osv16_isv4"), {20, 64, 3, 3}, DataType::i8, DataType::i8), "tails or padding"},
      {make_case(Format::parse("bfyx"), Format::parse("b_fs_yx_fsv16"), {2, 32, 3, 3}), "4 bytes or more"}};
  for (const auto& [c, what] : declined) {
    const std::string why = reason_of(*e, c, "lanes");
    EXPECT_NE(why.find(what), std::string::npos) << c.label << ": " << why;
  }
}

// The selector tunes tiles and work-groups by device type (GPUs get small tiles and work-groups of 64), but a
// choice must be correct on every device: the GPU kernels are generated here and run on this device.
TEST(Device, GpuConfigurationsAreCorrectHereToo) {
  REQUIRE_DEVICE(e);
  DeviceInfo gpu = e->info();
  gpu.type = "gpu";
  const std::pair<Case, const char*> cases[] = {
      {make_case(Format::parse("bfyx"), Format::parse("b_fs_yx_fsv16"), {2, 32, 4, 8}), "tiled"},
      {make_case(Format::parse("bfyx"), Format::parse("byxf"), {3, 19, 5, 7}, DataType::f32, DataType::f16), "tiled"},
      {make_case(Format::parse("b_fs_yx_fsv16"), Format::parse("bfyx"), {2, 32, 7, 7}), "staged"},
      {make_case(Format::parse("oiyx"), Format::parse("os_is_yx_osa4_isa8_osv8_isv4"), {64, 64, 3, 3}, DataType::i8, DataType::i8), "staged"},
      {make_case(Format::parse("oiyx"), Format::parse("os_is_yx_osa4_isa8_osv8_isv4"), {64, 64, 3, 3}, DataType::i8, DataType::i8), "lanes"},
      {make_case(Format::parse("yxfb"), Format::parse("bs_fs_yx_bsv16_fsv16"), {17, 19, 2, 3}), "generic"}};
  for (const auto& [c, impl] : cases) {
    KernelData kd = plan_reorder(gpu, c.src, c.dst, impl);
    EXPECT_EQ(kd.impl, impl);
    EXPECT_EQ(run_planned(*e, c, kd), "") << impl << ", GPU configuration";
  }
}

// The cache that decides streaming is the device's, and for a CPU device that reports none (PoCL on a VM
// without /sys/devices/system/cpu/*/cache, as one of this project's machines: an AMD EPYC host whose 508 MiB
// L3 glibc reads from cpuid) the host's last-level cache, since a CPU device runs on it; without it nothing
// would ever stream there, however large. Another device's 0 stays unknown.
TEST(Device, ACpuDeviceReportingNoCacheTakesTheHosts) {
  REQUIRE_DEVICE(e);
  const DeviceInfo& d = e->info();
  const uint64_t reported = e->device().getInfo<CL_DEVICE_GLOBAL_MEM_CACHE_SIZE>();
  long host = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (host <= 0) host = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (reported != 0 || d.type != "cpu") {
    EXPECT_EQ(d.cache_bytes, reported);
    EXPECT_FALSE(d.cache_from_host);
  } else {
    EXPECT_EQ(d.cache_bytes, host > 0 ? static_cast<uint64_t>(host) : 0u) << d.name;
    EXPECT_EQ(d.cache_from_host, host > 0);
  }
  if (d.type == "cpu" && host > 0) {
    EXPECT_GT(d.cache_bytes, 0u) << d.name << " reports no cache and the host's was not taken";
    EXPECT_TRUE(stream_pays(2 * d.cache_bytes, d)) << "a working set twice the cache streams on a CPU";
  }
  EXPECT_EQ(d.compute_units, e->device().getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>());
  const DeviceInfo again = describe_device(e->device());
  EXPECT_EQ(again.cache_bytes, d.cache_bytes);
  EXPECT_EQ(again.cache_from_host, d.cache_from_host);
}

// Reorders whose working set exceeds the device cache stream tiled's vector stores (CR_STREAM_STORE, when
// the destination base is 64-byte aligned). A device reporting a 1-byte cache makes every case stream; each
// runs at destination offsets that take the streaming branch and those that do not.
TEST(Device, StreamingStoresAtEveryDestinationAlignment) {
  REQUIRE_DEVICE(e);
  DeviceInfo tiny_cache = e->info();
  tiny_cache.cache_bytes = 1;
  tiny_cache.type = "cpu";  // streaming is a CPU policy; its code must run on every device
  const Case cases[] = {
      make_case(Format::parse("bfyx"), Format::parse("b_fs_yx_fsv16"), {2, 32, 4, 8}),
      make_case(Format::parse("bfyx"), Format::parse("byxf"), {2, 64, 2, 8}, DataType::f32, DataType::f16),
      make_case(Format::parse("bfyx"), Format::parse("bfyx"), {2, 3, 4, 16}, DataType::f32, DataType::u8),
      make_case(Format::parse("bfyx"), Format::parse("byxf"), {2, 16, 8, 8}, DataType::i32, DataType::f32)};
  for (const Case& c : cases) {
    const KernelData kd = plan_reorder(tiny_cache, c.src, c.dst, "tiled");
    EXPECT_NE(kd.source.code.find("if (dst_a64) CR_STREAM_STORE("), std::string::npos) << c.label;
    EXPECT_TRUE(kd.streams) << c.label;
    const KernelData cached = plan_reorder(e->info(), c.src, c.dst);
    EXPECT_EQ(cached.source.code.find("CR_STREAM_STORE("), std::string::npos) << c.label;
    EXPECT_FALSE(cached.streams) << c.label;
    const size_t esize = static_cast<size_t>(size_of(c.dst.data_type()));
    for (size_t k : {size_t{0}, 64 / esize, size_t{1}, size_t{3}})
      EXPECT_EQ(run_planned(*e, c, kd, k), "") << kd.impl << ", destination offset " << k << " elements";
  }
  // The plans say so (KernelData::streams, which the benchmarks count), and so do the kernels that carry
  // them: a batch when one of its items streams, the benchmarks' copy past the cache.
  const KernelData streamed = plan_reorder(tiny_cache, cases[0].src, cases[0].dst, "tiled");
  const KernelData plain = plan_reorder(tiny_cache, cases[0].src, cases[0].dst, "generic");
  EXPECT_FALSE(plain.streams);
  const std::pair<DataType, DataType> f32s{DataType::f32, DataType::f32};
  EXPECT_TRUE(batch_kernel({plain, streamed}, {f32s, f32s}, {{0, 1}, {0, 1}}, 2, tiny_cache).streams);
  EXPECT_FALSE(batch_kernel({plain, plain}, {f32s, f32s}, {{0, 1}, {0, 1}}, 2, tiny_cache).streams);
  DeviceInfo large_cache = tiny_cache;
  large_cache.cache_bytes = uint64_t{1} << 30;
  EXPECT_TRUE(copy_kernel(tiny_cache, 1 << 20).streams);
  EXPECT_FALSE(copy_kernel(large_cache, 1 << 20).streams);
}

// The generic implementation is the fallback for every pair; the selector rarely picks it now, so it is
// forced here on every data format, every type pair and padding.
TEST(Device, GenericOnFormatsTypesAndPadding) {
  REQUIRE_DEVICE(e);
  std::vector<Case> cases;
  for (int rank : {4, 5}) {
    Format plain = Format::parse(plain_order(rank));
    for (const Format& f : supported_data_formats(rank)) {
      cases.push_back(make_case(plain, f, odd_shape(rank, 3)));
      cases.push_back(make_case(f, plain, odd_shape(rank, 3), DataType::f32, DataType::f32, {}, {},
                                Dims(static_cast<size_t>(rank), 1), {}));
    }
  }
  // Each type to and from f32, f16, bf16 and itself: the scalar conversions are the ones every implementation
  // prints (EveryDataTypePairOnRandomBits runs all pairs, tails on the scalar path among them).
  for (DataType st : all_data_types())
    for (DataType dt : all_data_types())
      if (st == dt || is_narrow_float_or_f32(st) || is_narrow_float_or_f32(dt))
        cases.push_back(make_case(Format::parse("byxf"), Format::parse("bs_fs_yx_bsv4_fsv4"), {3, 19, 2, 3}, st, dt));
  run_batch(*e, cases, true, "generic");
}
