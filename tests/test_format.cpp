// Host tests of the format model: grammar round trip, malformed names, golden offsets from the documents,
// the offset model as a bijection, and the element conversions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "clreorder/bench.hpp"
#include "clreorder/error.hpp"
#include "clreorder/format.hpp"
#include "clreorder/layout.hpp"
#include "clreorder/reference.hpp"
#include "bad_inputs.hpp"
#include "plan_checks.hpp"
#include "random_formats.hpp"
#include "test_support.hpp"

using namespace clreorder;
using clreorder_test::error_of;
using clreorder_test::modes;

namespace {

Layout L(const std::string& fmt, Dims dims, Dims lo = {}, Dims up = {}, DataType t = DataType::f32) {
  return Layout(format_from_name(fmt), t, std::move(dims), std::move(lo), std::move(up));
}

}  // namespace

TEST(Grammar, EveryRegisteredNameRoundTrips) {
  int supported = 0;
  for (const FormatEntry& e : registry()) {
    if (!e.unsupported.empty()) continue;
    ++supported;
    Format f = Format::parse(e.name);
    EXPECT_EQ(f.name(), e.name);
    EXPECT_EQ(Format::parse(f.name()), f) << e.name;
  }
  EXPECT_EQ(supported, 131);  // 141 rows less nv12, image_2d_* and winograd_* (10 rows)
}

TEST(Grammar, RegistryCountsAndKinds) {
  std::map<FormatKind, int> kinds;
  for (const FormatEntry& e : registry())
    if (e.unsupported.empty()) ++kinds[Format::parse(e.name).kind()];
  EXPECT_EQ(kinds[FormatKind::data], 52);
  EXPECT_EQ(kinds[FormatKind::weights], 48);
  EXPECT_EQ(kinds[FormatKind::grouped_weights], 31);
}

TEST(Grammar, QueriesMatchTheTraitsTable) {
  Format f = Format::parse("b_fs_yx_fsv16");
  EXPECT_EQ(f.kind(), FormatKind::data);
  EXPECT_EQ(f.rank(), 4);
  EXPECT_EQ(f.axes(), "bfyx");
  EXPECT_EQ(f.order(), "bfyx");
  EXPECT_EQ(f.blocks_string(), "f16");
  EXPECT_TRUE(f.is_blocked());
  Format g = Format::parse("os_is_yx_osa4_isa8_osv8_isv4");
  EXPECT_EQ(g.kind(), FormatKind::weights);
  EXPECT_EQ(g.blocks_string(), "o4 i8 o8 i4");
  EXPECT_EQ(Format::parse("fs_b_yx_fsv32").order(), "fbyx");
  EXPECT_EQ(Format::parse("is_os_yx_isv16_osv16").order(), "ioyx");
  EXPECT_EQ(Format::parse("g_os_zyx_is_osv16_isv4").order(), "gozyxi");
  EXPECT_EQ(Format::parse("gs_oiyx_gsv16").kind(), FormatKind::grouped_weights);
  EXPECT_EQ(Format::parse("bfvuwzyx").rank(), 8);
  EXPECT_FALSE(Format::parse("yxfb").is_blocked());
  EXPECT_EQ(Format::parse("yxfb").axes(), "bfyx");
}

TEST(Grammar, SpellingIsKeptButEqualityIsByElementOrder) {
  EXPECT_EQ(Format::parse("fs_b_yx_fsv32").name(), "fs_b_yx_fsv32");
  EXPECT_EQ(Format::parse("fs_byx_fsv32").name(), "fs_byx_fsv32");
  EXPECT_EQ(Format::parse("fs_b_yx_fsv32"), Format::parse("fs_byx_fsv32"));
  EXPECT_NE(Format::parse("bfyx"), Format::parse("byxf"));
}

TEST(Grammar, AliasesResolveToOpenVinoFormats) {
  EXPECT_EQ(format_from_name("nChw16c").name(), "b_fs_yx_fsv16");
  EXPECT_EQ(format_from_name("nhwc").name(), "byxf");
  EXPECT_EQ(format_from_name("channels_last").name(), "byxf");
  EXPECT_EQ(format_from_name("channels_last_3d").name(), "bzyxf");
  EXPECT_EQ(format_from_name("NChw16n16c").name(), "bs_fs_yx_bsv16_fsv16");
  EXPECT_EQ(format_from_name("OIhw16i16o").name(), "os_is_yx_isv16_osv16");
}

TEST(Grammar, MalformedNamesFailNamingTheOffendingPart) {
  struct Case {
    std::string name, must_contain;
  };
  const Case cases[] = {
      {"", "empty"},
      {"bfq", "'bfq'"},
      {"b_fs_yx_fsq16", "'fsq16'"},
      {"b_fs_yx_fsv", "'fsv'"},
      {"b_fs_yx_fsv0", "at least 1"},
      {"b__fs", "alignment suffix"},
      {"bfyxb", "appears twice"},
      {"b_f_yx_fsv16", "must be written 'fs'"},
      {"b_fs_yx", "has no block"},
      {"bfzx", "not a data"},
      {"bfyx__aq32", "'__aq32'"},
      {"b_fsv16_yx_fs", "comes before"},
      {"oiyx_swizzled_by_x", "swizzle factor"},
      {"bfyx_swizzled_by_2", "needs an o axis"},
      {"b__fs_yx", "unknown alignment suffix"},
      {"b_fs_yx_fsv16_", "empty part"},
  };
  for (const Case& c : cases) {
    std::string msg = error_of([&] { Format::parse(c.name); });
    EXPECT_NE(msg.find("'" + c.name + "'"), std::string::npos) << c.name << ": " << msg;
    EXPECT_NE(msg.find(c.must_contain), std::string::npos) << c.name << ": " << msg;
  }
  // Alignments on one axis multiply; name() writes the product as one suffix, which must parse back (the
  // fuzzer found 321216 x 3212 = 1031745792, ten digits, refused once written as one).
  const Format twice = Format::parse("giy_xs_os_xsv2_osv16__ao321216__ao3212");
  EXPECT_EQ(Format::parse(twice.name()), twice) << twice.name();
  EXPECT_NE(error_of([] { Format::parse("bfyx__ab2147483649"); }).find("more than 2^31"), std::string::npos);
  EXPECT_NE(error_of([] { Format::parse("bfyx__ab12345678901"); }).find("unknown alignment suffix"), std::string::npos);
  EXPECT_NE(error_of([] { format_from_name("nv12"); }).find("not supported"), std::string::npos);
  EXPECT_NE(error_of([] { format_from_name("winograd_2x3_s1_data"); }).find("not supported"), std::string::npos);
}

// Seed 000 (OpenVINO gpu_memory_formats.md): bfyx 2x2x2x2 in b_fs_yx_fsv16 is a 128-element buffer.
TEST(Golden, Seed000BFsYxFsv16) {
  Layout l = L("b_fs_yx_fsv16", {2, 2, 2, 2});
  EXPECT_EQ(l.elements(), 128);
  EXPECT_EQ(l.offset({0, 0, 0, 1}), 16);
  EXPECT_EQ(l.offset({1, 0, 0, 0}), 64);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t f = 0; f < 2; ++f)
      for (int64_t y = 0; y < 2; ++y)
        for (int64_t x = 0; x < 2; ++x) EXPECT_EQ(l.offset({b, f, y, x}), f + 16 * (x + 2 * (y + 2 * b)));
}

// Seeds 003/004 (oneDNN "Understanding memory formats"): offset_nChw8c and C=17 padded to 24.
TEST(Golden, OneDnnNChw8cFormulaAndPadding) {
  const int64_t N = 2, C = 17, H = 5, W = 4, Cp = 24;
  Layout l = L("nChw8c", {N, C, H, W});
  EXPECT_EQ(l.elements(), N * Cp * H * W);
  const Dims coords[] = {{0, 0, 0, 0}, {1, 16, 4, 3}, {0, 9, 2, 1}, {1, 7, 0, 3}, {0, 8, 4, 0}};
  for (const Dims& c : coords) {
    int64_t n = c[0], ch = c[1], h = c[2], w = c[3];
    int64_t want = n * Cp * H * W + (ch / 8) * H * W * 8 + h * W * 8 + w * 8 + ch % 8;
    EXPECT_EQ(l.offset(c), want) << dims_to_string(c, ",");
  }
  // nchw and nhwc from the same seed.
  EXPECT_EQ(L("nchw", {N, C, H, W}).offset({1, 3, 2, 1}), 1 * C * H * W + 3 * H * W + 2 * W + 1);
  EXPECT_EQ(L("nhwc", {N, C, H, W}).offset({1, 3, 2, 1}), 1 * H * W * C + 2 * W * C + 1 * C + 3);
  EXPECT_EQ(L("chwn", {N, C, H, W}).offset({1, 3, 2, 1}), 3 * H * W * N + 2 * W * N + 1 * N + 1);
}

// FORMATS.md section 1 check values.
TEST(Golden, FormatsMdCheckValues) {
  EXPECT_EQ(L("bfyx", {2, 3, 4, 5}).offset({1, 2, 3, 4}), 119);
  EXPECT_EQ(L("bfyx", {2, 3, 4, 5}, {0, 0, 1, 2}, {0, 0, 1, 1}).offset({1, 2, 3, 4}), 278);
  Layout f16 = L("b_fs_yx_fsv16", {2, 20, 3, 5});
  EXPECT_EQ(f16.offset({1, 17, 2, 4}), 945);
  EXPECT_EQ(f16.elements(), 960);
  Layout tail = L("b_fs_yx_fsv16", {1, 3, 1, 1});
  EXPECT_EQ(tail.elements(), 16);
  int64_t c[8], off;
  for (int64_t p = 0; p < 16; ++p) {
    bool valid = tail.plan().decode(p, &off, c);
    EXPECT_EQ(off, p);
    EXPECT_EQ(valid, p < 3) << p;
    if (valid) {
      EXPECT_EQ(c[1], p);
    }
  }
  Layout g = L("g_os_iyx_osv16", {2, 20, 3, 2, 2});
  EXPECT_EQ(g.offset({1, 17, 2, 1, 1}), 753);
  EXPECT_EQ(g.elements(), 768);
  // DESIGN-SKETCH.md: b_fs_yx_fsv16, dims (1,32,7,7): coord (0,18,6,6) -> offset 1554.
  EXPECT_EQ(L("b_fs_yx_fsv16", {1, 32, 7, 7}).offset({0, 18, 6, 6}), 1554);
}

// The offset model is a bijection: logical coordinates map to distinct in-range offsets, and decoding the
// physical buffer finds each of them exactly once, every other element being padding.
TEST(Model, OffsetIsABijectionOntoTheNonPaddingElements) {
  std::vector<std::string> names;
  for (const FormatEntry& e : registry())
    if (e.unsupported.empty()) names.push_back(e.name);
  names.push_back("fbwzyx");
  for (const std::string& name : names) {
    Format f = Format::parse(name);
    Dims dims(f.rank()), lo(f.rank()), up(f.rank());
    const int64_t sizes[] = {3, 19, 5, 7, 2, 3, 2, 2};
    for (int a = 0; a < f.rank(); ++a) {
      dims[a] = sizes[a];
      lo[a] = a % 3 == 1 ? 2 : a % 2;
      up[a] = a % 3 == 2 ? 1 : 0;
    }
    for (bool padded : {false, true}) {
      Layout l(f, DataType::f32, dims, padded ? lo : Dims{}, padded ? up : Dims{});
      ASSERT_EQ(l.plan().digit_space, l.elements()) << name;
      // Every tuple at its own offset inside the layout, every coordinate held once, offset() == decode().
      EXPECT_EQ(clreorder_test::plan_bijection_error(l), "") << name << " padded " << padded;
    }
  }
}

// Every refused layout, through the C++ API and the C API alike: the same words, a status, no handle, no
// exception across the C boundary (tests/bad_inputs.hpp holds the rows).
TEST(Model, LayoutErrorsNameTheValue) {
  int in_c = 0;
  for (const clreorder_test::BadLayout& b : clreorder_test::bad_layouts()) {
    const std::string cpp = error_of([&] { b.spec.cpp(); });
    EXPECT_NE(cpp.find(b.says), std::string::npos) << b.spec.format << ": expected '" << b.says << "' in: " << cpp;
    if (!b.spec.expressible_in_c()) continue;
    ++in_c;
    clreorder_status status = CLREORDER_SUCCESS;
    clreorder_layout made = b.spec.c(&status);
    const std::string c = clreorder_last_error();
    EXPECT_EQ(made, nullptr) << b.spec.format;
    clreorder_layout_release(made);
    EXPECT_TRUE(status == CLREORDER_INVALID_VALUE || status == CLREORDER_INVALID_ARGUMENT) << b.spec.format << ": " << status;
    EXPECT_NE(c.find(b.says), std::string::npos) << b.spec.format << ": expected '" << b.says << "' in: " << c;
    // The C message holds the C++ one whole (the C API adds only where it came from).
    if (status == CLREORDER_INVALID_VALUE) {
      EXPECT_NE(c.find(cpp), std::string::npos) << c << " vs " << cpp;
    }
  }
  EXPECT_GE(in_c, 20);
  EXPECT_NE(error_of([] { L("bfyx", {2, 3, 4, 4}).offset({0, 3, 0, 0}); }).find("outside shape"), std::string::npos);
  EXPECT_NE(error_of([] { parse_dims("3,x,4"); }).find("'x'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_data_type("f8"); }).find("'f8'"), std::string::npos);
  EXPECT_NE(error_of([] {
              reference_reorder(L("bfyx", {1, 2, 3, 4}), nullptr, L("bfzyx", {1, 2, 2, 3, 4}), nullptr);  // 24 vs 48 elements
            }).find("cannot reorder"),
            std::string::npos);
}

TEST(Conversions, F16RoundTripsEveryPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float f = f16_to_f32(static_cast<uint16_t>(h));
    uint16_t back = f32_to_f16(f);
    bool nan = ((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff);
    if (nan) {
      EXPECT_TRUE(std::isnan(f));
      EXPECT_EQ(back, h | 0x200) << h;  // quieted, payload kept
    } else {
      EXPECT_EQ(back, h) << h;
    }
  }
}

TEST(Conversions, RoundingAndSaturation) {
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65519.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 1);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0);             // tie to even
  EXPECT_EQ(f32_to_f16(std::ldexp(1.5f, -25)), 1);
  EXPECT_EQ(f32_to_f16(std::ldexp(3.0f, -25)), 2);             // 1.5 units: tie to even 2
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00); // tie to even
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(3.0f, -11)), 0x3c02);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);  // tie to even
  EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(3.0f, -8)), 0x3f82);
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);

  auto to = [](DataType t, float f) {
    int64_t out = 0;
    convert_element(DataType::f32, &f, t, &out);
    switch (t) {
      case DataType::i8: return static_cast<int64_t>(static_cast<int8_t>(out));
      case DataType::u8: return static_cast<int64_t>(static_cast<uint8_t>(out));
      case DataType::i32: return static_cast<int64_t>(static_cast<int32_t>(out));
      default: return out;
    }
  };
  EXPECT_EQ(to(DataType::i32, 2.5f), 2);
  EXPECT_EQ(to(DataType::i32, 3.5f), 4);
  EXPECT_EQ(to(DataType::i32, -2.5f), -2);
  EXPECT_EQ(to(DataType::i8, 300.0f), 127);
  EXPECT_EQ(to(DataType::i8, -300.0f), -128);
  EXPECT_EQ(to(DataType::u8, -3.0f), 0);
  EXPECT_EQ(to(DataType::u8, 255.5f), 255);
  EXPECT_EQ(to(DataType::i32, std::nanf("")), 0);
  EXPECT_EQ(to(DataType::i64, 1e30f), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(to(DataType::i32, -1e30f), std::numeric_limits<int32_t>::min());
  int64_t big = -129;
  int8_t small = 0;
  convert_element(DataType::i64, &big, DataType::i8, &small);
  EXPECT_EQ(small, -128);
}

// One element converted by the host reference, its bits zero-extended.
template <class T>
uint64_t cvt(DataType from, T v, DataType to, const Conversion& c = {}) {
  uint64_t out = 0;
  convert_element(from, &v, to, &out, c);
  return out;
}

// The 16-, 32- and 64-bit types issue 12 added: known results, including f64 values that a conversion
// rounding twice (to f32, then to f16) would get wrong.
TEST(Conversions, SixteenThirtyTwoAndSixtyFourBitTypes) {
  const double p40 = std::ldexp(1.0, -40);
  EXPECT_EQ(cvt(DataType::f64, 1.0 + std::ldexp(1.0, -11) + p40, DataType::f16), 0x3c01u);  // twice: 0x3c00
  EXPECT_EQ(cvt(DataType::f64, 1.0 + std::ldexp(1.0, -11), DataType::f16), 0x3c00u);        // a true tie
  EXPECT_EQ(cvt(DataType::f64, 1.0 + std::ldexp(1.0, -8) + p40, DataType::bf16), 0x3f81u);
  EXPECT_EQ(cvt(DataType::f64, std::ldexp(1.0, -25) * (1 + p40), DataType::f16), 1u);       // above the half
  EXPECT_EQ(cvt(DataType::f64, 1e300, DataType::f16), 0x7c00u);
  EXPECT_EQ(cvt(DataType::f64, 1e300, DataType::f32), 0x7f800000u);
  EXPECT_EQ(cvt(DataType::f64, 3.4028235677973362e38, DataType::f32), 0x7f7fffffu);  // just under the rounding to inf
  EXPECT_EQ(cvt(DataType::f64, std::nan(""), DataType::i32), 0u);
  EXPECT_EQ(cvt(DataType::f64, -1.0, DataType::u64), 0u);
  EXPECT_EQ(cvt(DataType::f64, 1e20, DataType::u64), UINT64_MAX);
  EXPECT_EQ(cvt(DataType::f64, 2.5, DataType::i16), 2u);
  EXPECT_EQ(cvt(DataType::f64, 40000.0, DataType::i16), 0x7fffu);
  EXPECT_EQ(cvt(DataType::f32, 70000.0f, DataType::u16), 0xffffu);
  EXPECT_EQ(cvt(DataType::f32, -1.0f, DataType::u32), 0u);
  EXPECT_EQ(cvt(DataType::u64, UINT64_MAX, DataType::i64), static_cast<uint64_t>(INT64_MAX));
  EXPECT_EQ(cvt(DataType::i64, int64_t{-5}, DataType::u64), 0u);
  EXPECT_EQ(cvt(DataType::u32, uint32_t{4000000000u}, DataType::i32), static_cast<uint64_t>(INT32_MAX));
  EXPECT_EQ(cvt(DataType::i16, int16_t{-300}, DataType::u8), 0u);
  EXPECT_EQ(cvt(DataType::u16, uint16_t{2049}, DataType::f16), 0x6800u);  // 2048: tie to even
  EXPECT_EQ(cvt(DataType::u16, uint16_t{2051}, DataType::f16), 0x6802u);  // 2052
  double d = 0;
  const uint64_t two53p1 = (uint64_t{1} << 53) + 1;
  const uint64_t dbits = cvt(DataType::u64, two53p1, DataType::f64);
  std::memcpy(&d, &dbits, 8);
  EXPECT_EQ(d, std::ldexp(1.0, 53));  // 2^53 + 1 rounds to even
  float f = 0;
  const uint32_t fbits = static_cast<uint32_t>(cvt(DataType::u64, UINT64_MAX, DataType::f32));
  std::memcpy(&f, &fbits, 4);
  EXPECT_EQ(f, std::ldexp(1.0f, 64));
  // NaN keeps its sign and top payload bits, quiet, as the device code writes it.
  EXPECT_EQ(cvt(DataType::f64, -std::nan("0x8000000000001"), DataType::f32), 0xffc00000u | (0x8000000000001ull >> 29));
  for (const char* name : {"i16", "u16", "u32", "u64", "f64"}) EXPECT_EQ(to_string(parse_data_type(name)), std::string(name));
  EXPECT_NE(error_of([] { parse_data_type("f128"); }).find("'f128'"), std::string::npos);
}

// Issue 16's rounding and overflow modes: OpenVINO's own reorder unit-test expectations (its GPU plugin
// truncates and wraps), and each mode's edges: every rounding conversion toward zero, wrapping modulo 2^bits
// from floats of any size, integers narrowed by their low bits, and one rounding where there used to be two.
TEST(Conversions, RoundingAndOverflowModes) {
  const Conversion rtz = modes(Rounding::toward_zero, Overflow::saturate), wrap = modes(Rounding::nearest_even, Overflow::wrap);
  const Conversion truncate = modes(Rounding::toward_zero, Overflow::wrap);
  const float ov[] = {1, -2.5f, 3.1f, -4, 5.03f, -6.99f, 7, -8, 9};
  const int8_t want_i8[] = {1, -2, 3, -4, 5, -6, 7, -8, 9};
  const uint8_t want_u8[] = {1, 254, 3, 252, 5, 250, 7, 248, 9};
  for (size_t k = 0; k < 9; ++k) {
    EXPECT_EQ(static_cast<int8_t>(cvt(DataType::f32, ov[k], DataType::i8, truncate)), want_i8[k]) << ov[k];
    EXPECT_EQ(static_cast<int8_t>(cvt(DataType::f32, ov[k], DataType::i8, rtz)), want_i8[k]) << ov[k];
    EXPECT_EQ(cvt(DataType::f32, ov[k], DataType::u8, truncate), want_u8[k]) << ov[k];
  }
  EXPECT_EQ(cvt(DataType::f32, -2.5f, DataType::u8, rtz), 0u);    // toward zero, still saturating
  EXPECT_EQ(cvt(DataType::f32, -2.5f, DataType::u8, wrap), 254u);  // nearest even -2, wrapped
  EXPECT_EQ(cvt(DataType::f32, -3.5f, DataType::u8, wrap), 252u);  // nearest even -4
  EXPECT_EQ(cvt(DataType::f32, 300.0f, DataType::u8, wrap), 44u);
  EXPECT_EQ(cvt(DataType::f32, 1e10f, DataType::i32, wrap), 1410065408u);  // 10^10 mod 2^32
  EXPECT_EQ(cvt(DataType::f32, 1e10f, DataType::i32, rtz), static_cast<uint64_t>(INT32_MAX));
  EXPECT_EQ(cvt(DataType::f32, std::ldexp(1.0f, 64), DataType::u64, wrap), 0u);
  EXPECT_EQ(cvt(DataType::f32, std::ldexp(3.0f, 62), DataType::u64, wrap), uint64_t{3} << 62);
  EXPECT_EQ(cvt(DataType::f32, -std::ldexp(3.0f, 62), DataType::i64, wrap), uint64_t{1} << 62);  // -3*2^62 + 2^64
  EXPECT_EQ(cvt(DataType::f32, std::ldexp(1.0f, 100), DataType::i32, wrap), 0u);
  EXPECT_EQ(cvt(DataType::f32, INFINITY, DataType::i16, wrap), 0u);
  EXPECT_EQ(cvt(DataType::f32, std::nanf(""), DataType::u32, truncate), 0u);
  EXPECT_EQ(cvt(DataType::f64, 1e20, DataType::u64, wrap), 7766279631452241920u);  // 10^20 mod 2^64
  EXPECT_EQ(cvt(DataType::f64, -1.5, DataType::u16, truncate), 65535u);
  EXPECT_EQ(cvt(DataType::i32, int32_t{300}, DataType::u8, wrap), 44u);
  EXPECT_EQ(cvt(DataType::i32, int32_t{-1}, DataType::u16, wrap), 65535u);
  EXPECT_EQ(cvt(DataType::u64, UINT64_MAX, DataType::i8, wrap), 0xffu);
  EXPECT_EQ(cvt(DataType::u32, uint32_t{0x80000000u}, DataType::i32, wrap), 0x80000000u);
  // Floats toward zero: the largest finite value instead of infinity, subnormals truncated, NaN kept.
  EXPECT_EQ(cvt(DataType::f32, 65519.0f, DataType::f16, rtz), 0x7bffu);
  EXPECT_EQ(cvt(DataType::f32, 1e6f, DataType::f16, rtz), 0x7bffu);
  EXPECT_EQ(cvt(DataType::f32, -INFINITY, DataType::f16, rtz), 0xfc00u);
  EXPECT_EQ(cvt(DataType::f32, 1.0f + std::ldexp(3.0f, -11), DataType::f16, rtz), 0x3c01u);
  EXPECT_EQ(cvt(DataType::f32, std::ldexp(1.9f, -24), DataType::f16, rtz), 1u);
  EXPECT_EQ(cvt(DataType::f32, std::nanf("0x12345"), DataType::f16, rtz), cvt(DataType::f32, std::nanf("0x12345"), DataType::f16, {}));
  EXPECT_EQ(cvt(DataType::f32, 1.0f + std::ldexp(3.0f, -8), DataType::bf16, rtz), 0x3f81u);
  EXPECT_EQ(cvt(DataType::f64, 1e300, DataType::f32, rtz), 0x7f7fffffu);
  EXPECT_EQ(cvt(DataType::f64, -static_cast<double>(INFINITY), DataType::f32, rtz), 0xff800000u);
  EXPECT_EQ(cvt(DataType::f64, 1e300, DataType::f16, rtz), 0x7bffu);
  EXPECT_EQ(cvt(DataType::i32, int32_t{16777217}, DataType::f32, rtz), 0x4b800000u);  // 2^24, not 2^24 + 2
  EXPECT_EQ(cvt(DataType::i32, int32_t{16777219}, DataType::f32, {}), 0x4b800002u);   // 2^24 + 4 (tie to even)
  EXPECT_EQ(cvt(DataType::i32, int32_t{16777219}, DataType::f32, rtz), 0x4b800001u);  // 2^24 + 2
  EXPECT_EQ(cvt(DataType::i64, -((int64_t{1} << 53) + 1), DataType::f64, rtz), 0xc340000000000000u);  // -2^53
  // i32 2^24 + 2^16 + 1 to bf16: rounded to f32 first (2^24 + 2^16, a tie) and then to bf16 it would give
  // 2^24; correctly rounded it is 2^24 + 2^17.
  EXPECT_EQ(cvt(DataType::i32, int32_t{16842753}, DataType::bf16, {}), 0x4b81u);
  EXPECT_EQ(cvt(DataType::i32, int32_t{16842753}, DataType::bf16, rtz), 0x4b80u);
  for (Rounding r : {Rounding::nearest_even, Rounding::toward_zero}) EXPECT_EQ(parse_rounding(to_string(r)), r);
  for (Overflow o : {Overflow::saturate, Overflow::wrap}) EXPECT_EQ(parse_overflow(to_string(o)), o);
  EXPECT_NE(error_of([] { parse_rounding("up"); }).find("'up'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_overflow("clamp"); }).find("'clamp'"), std::string::npos);
  EXPECT_EQ(Conversion{}.key(), "");
  EXPECT_EQ(truncate.key(), "round=toward-zero,overflow=wrap");
}

// Issue 16's u4 and i4: two to a byte, the lower offset in the low nibble (OpenVINO's order); the modes as for
// i8 and u8 (OpenVINO's unit-test values), clamped to -8..7 and 0..15 or wrapped to 4 bits; a trailing half
// byte left as it was; sizes in whole bytes; refused where no byte count would be right (TPU, size_of()).
TEST(Conversions, FourBitTypes) {
  const Conversion rtz = modes(Rounding::toward_zero, Overflow::saturate), truncate = modes(Rounding::toward_zero, Overflow::wrap);
  const float ov[] = {1, -2.5f, 3.1f, -4, 5.03f, -6.99f, 7, -8, 9};
  const Layout src(Format::parse("bfyx"), DataType::f32, {1, 1, 1, 9});
  std::vector<uint8_t> bytes(sizeof ov);
  std::memcpy(bytes.data(), ov, sizeof ov);
  auto packed = [&](DataType t, const Conversion& conv) {
    const Layout dst(Format::parse("bfyx"), t, {1, 1, 1, 9});
    EXPECT_EQ(dst.bytes(), 5);
    std::vector<uint8_t> out(5, 0x50);  // the last byte's high nibble is no element's: it stays
    reference_reorder(src, bytes.data(), dst, out.data(), conv);
    return out;
  };
  // i4 toward zero {1, -2, 3, -4, 5, -6, 7, -8, 7 (9 saturated)}, wrapped 9 is -7; u4 wrapped as u8's
  // {1, 254, 3, 252, 5, 250, 7, 248, 9} modulo 16.
  EXPECT_EQ(packed(DataType::i4, rtz), (std::vector<uint8_t>{0xe1, 0xc3, 0xa5, 0x87, 0x57}));
  EXPECT_EQ(packed(DataType::i4, truncate), (std::vector<uint8_t>{0xe1, 0xc3, 0xa5, 0x87, 0x59}));
  EXPECT_EQ(packed(DataType::u4, truncate), (std::vector<uint8_t>{0xe1, 0xc3, 0xa5, 0x87, 0x59}));
  EXPECT_EQ(packed(DataType::u4, rtz), (std::vector<uint8_t>{0x01, 0x03, 0x05, 0x07, 0x59}));  // negatives clamp to 0
  // Reads: i4 sign-extends, u4 does not; element 2k + 1 is byte k's high nibble.
  const uint8_t data[] = {0x8f, 0x7e};
  int8_t v;
  read_element(DataType::i4, data, 0, &v);
  EXPECT_EQ(v, -1);
  read_element(DataType::i4, data, 1, &v);
  EXPECT_EQ(v, -8);
  read_element(DataType::i4, data, 3, &v);
  EXPECT_EQ(v, 7);
  read_element(DataType::u4, data, 2, &v);
  EXPECT_EQ(v, 14);
  EXPECT_EQ(cvt(DataType::i4, int8_t{-8}, DataType::f32, {}), 0xc1000000u);
  EXPECT_EQ(cvt(DataType::u4, uint8_t{15}, DataType::i4, {}), 7u);
  EXPECT_EQ(cvt(DataType::i4, int8_t{-3}, DataType::u4, truncate), 13u);
  EXPECT_EQ(cvt(DataType::i32, int32_t{-300}, DataType::i4, {}), static_cast<uint8_t>(-8));
  EXPECT_EQ(parse_data_type("int4"), DataType::i4);
  EXPECT_EQ(parse_data_type("uint4"), DataType::u4);
  EXPECT_EQ(bits_of(DataType::u4), 4);
  EXPECT_EQ(unit_bytes(DataType::i4), 1u);
  EXPECT_EQ(bytes_of(DataType::u4, 7), 4);
  EXPECT_NE(error_of([] { size_of(DataType::u4); }).find("size_of(u4)"), std::string::npos);
  const std::string tpu = error_of([] { Layout(Format::parse("tpu_compact(npus=4,npu_bytes=1024,addr=0)"), DataType::i4, {1, 4, 2, 2}); });
  EXPECT_NE(tpu.find("i4"), std::string::npos) << tpu;
  // An odd base offset: the first element is byte 0's high nibble.
  const Layout shifted(Format::parse("bfyx"), DataType::u4, {1, 1, 1, 2}, {}, {}, {}, 1);
  EXPECT_EQ(shifted.bytes(), 2);
  const std::vector<uint8_t> pattern = make_pattern(shifted);
  EXPECT_EQ(pattern, (std::vector<uint8_t>{0x00, 0x01}));
}

// Issue 16's 8-bit floats: OpenVINO's values for every pattern (f8e4m3: no infinities, 448 the largest,
// S.1111.111 NaN; f8e5m2: f16's top byte), round trips, ties to even at every midpoint, truncation, and the
// overflow and NaN behaviour of OpenVINO's conversion.
TEST(Conversions, EightBitFloats) {
  const Conversion rtz = modes(Rounding::toward_zero, Overflow::saturate);
  EXPECT_EQ(f8e4m3_to_f32(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(f8e4m3_to_f32(0x08), std::ldexp(1.0f, -6));
  EXPECT_EQ(f8e4m3_to_f32(0x38), 1.0f);
  EXPECT_EQ(f8e4m3_to_f32(0x59), 18.0f);
  EXPECT_EQ(f8e4m3_to_f32(0x7e), 448.0f);
  EXPECT_EQ(f8e4m3_to_f32(0xb8), -1.0f);
  EXPECT_EQ(cvt(DataType::f8e4m3, uint8_t{0x7f}, DataType::f32), 0x7fc00000u);
  EXPECT_EQ(cvt(DataType::f8e4m3, uint8_t{0xff}, DataType::f32), 0xffc00000u);
  EXPECT_EQ(f8e5m2_to_f32(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(f8e5m2_to_f32(0x04), std::ldexp(1.0f, -14));
  EXPECT_EQ(f8e5m2_to_f32(0x3c), 1.0f);
  EXPECT_EQ(f8e5m2_to_f32(0x7b), 57344.0f);
  EXPECT_EQ(f8e5m2_to_f32(0xfc), -INFINITY);
  // f8e5m2 is f16's top byte, NaN payloads included.
  for (int b = 0; b < 256; ++b)
    EXPECT_EQ(cvt(DataType::f8e5m2, static_cast<uint8_t>(b), DataType::f32), cvt(DataType::f16, static_cast<uint16_t>(b << 8), DataType::f32)) << b;
  for (DataType t : {DataType::f8e4m3, DataType::f8e5m2}) {
    SCOPED_TRACE(to_string(t));
    auto decode = [t](int b) { return t == DataType::f8e4m3 ? f8e4m3_to_f32(static_cast<uint8_t>(b)) : f8e5m2_to_f32(static_cast<uint8_t>(b)); };
    int finite = 0;
    for (int b = 0; b < 256; ++b) {
      const float v = decode(b);
      if (std::isnan(v)) continue;
      ++finite;
      EXPECT_EQ(cvt(DataType::f32, v, t), static_cast<uint64_t>(b)) << b;  // every value round-trips
      EXPECT_EQ(cvt(DataType::f32, v, t, rtz), static_cast<uint64_t>(b)) << b;
      const float next = decode(b + 1);
      if ((b & 0x7f) == 0x7f || !std::isfinite(v) || !std::isfinite(next)) continue;
      // Between two neighbours: the midpoint goes to the even code, the floats beside it to the nearer one,
      // and toward zero everything below the larger magnitude to the smaller one.
      const float mid = (v + next) / 2;
      const int even = b % 2 == 0 ? b : b + 1, inner = std::fabs(v) < std::fabs(next) ? b : b + 1;
      EXPECT_EQ(cvt(DataType::f32, mid, t), static_cast<uint64_t>(even)) << b;
      EXPECT_EQ(cvt(DataType::f32, std::nextafter(mid, v), t), static_cast<uint64_t>(b)) << b;
      EXPECT_EQ(cvt(DataType::f32, std::nextafter(mid, next), t), static_cast<uint64_t>(b + 1)) << b;
      EXPECT_EQ(cvt(DataType::f32, std::nextafter(mid, next), t, rtz), static_cast<uint64_t>(inner)) << b;
    }
    EXPECT_EQ(finite, t == DataType::f8e4m3 ? 254 : 250);  // 2 NaN patterns; 6
  }
  // Overflow: f8e4m3 gives NaN from the tie between 448 and 480 on (as OpenVINO; it has no infinity), and
  // infinities become NaN; f8e5m2 gives inf from 61440 (the tie to 2^16) on. Toward zero, the largest value.
  EXPECT_EQ(cvt(DataType::f32, 464.0f, DataType::f8e4m3), 0x7eu);
  EXPECT_EQ(cvt(DataType::f32, std::nextafter(464.0f, 500.0f), DataType::f8e4m3), 0x7fu);
  EXPECT_EQ(cvt(DataType::f32, -1e30f, DataType::f8e4m3), 0xffu);
  EXPECT_EQ(cvt(DataType::f32, INFINITY, DataType::f8e4m3), 0x7fu);
  EXPECT_EQ(cvt(DataType::f32, INFINITY, DataType::f8e4m3, rtz), 0x7fu);
  EXPECT_EQ(cvt(DataType::f32, -1e30f, DataType::f8e4m3, rtz), 0xfeu);
  EXPECT_EQ(cvt(DataType::f32, -std::nanf(""), DataType::f8e4m3), 0xffu);
  EXPECT_EQ(cvt(DataType::f32, std::nextafter(61440.0f, 0.0f), DataType::f8e5m2), 0x7bu);
  EXPECT_EQ(cvt(DataType::f32, 61440.0f, DataType::f8e5m2), 0x7cu);
  EXPECT_EQ(cvt(DataType::f32, -1e30f, DataType::f8e5m2, rtz), 0xfbu);
  EXPECT_EQ(cvt(DataType::f32, -INFINITY, DataType::f8e5m2, rtz), 0xfcu);
  // NaN: quiet, sign and the top payload bit kept (the top byte of the f16 conversion).
  EXPECT_EQ(cvt(DataType::f32, std::nanf("0x200000"), DataType::f8e5m2), 0x7fu);
  EXPECT_EQ(cvt(DataType::f32, -std::nanf("0x1"), DataType::f8e5m2), 0xfeu);
  // Below the smallest subnormal: half of it ties to zero, anything above rounds up.
  EXPECT_EQ(cvt(DataType::f32, std::ldexp(1.0f, -10), DataType::f8e4m3), 0u);
  EXPECT_EQ(cvt(DataType::f32, std::ldexp(1.0f, -10) * 1.0001f, DataType::f8e4m3), 1u);
  EXPECT_EQ(cvt(DataType::f32, -std::ldexp(1.0f, -17) * 1.0001f, DataType::f8e5m2), 0x81u);
  EXPECT_EQ(cvt(DataType::f32, std::ldexp(1.0f, -140), DataType::f8e4m3), 0u);
  // One rounding, where OpenVINO's f8e5m2 rounds to f16 first: 1 + 2^-3 + 2^-12 lies above the tie between
  // 1 and 1.25, which f16 would reach exactly (and then round to even, 1).
  EXPECT_EQ(cvt(DataType::f32, 1.0f + std::ldexp(1.0f, -3) + std::ldexp(1.0f, -12), DataType::f8e5m2), 0x3du);
  EXPECT_EQ(cvt(DataType::f16, f32_to_f16(1.0f + std::ldexp(1.0f, -3)), DataType::f8e5m2), 0x3cu);
  // ... and from f64 through f32 rounded to odd (to nearest even, f32 would reach the tie 1 + 2^-4).
  EXPECT_EQ(cvt(DataType::f64, 1.0 + std::ldexp(1.0, -4) + std::ldexp(1.0, -40), DataType::f8e4m3), 0x39u);
  EXPECT_EQ(cvt(DataType::i32, int32_t{(1 << 26) + (1 << 22) + 1}, DataType::f8e4m3), 0x7fu);  // beyond 448
  EXPECT_EQ(cvt(DataType::i64, int64_t{(1 << 14) + (1 << 11) + 1}, DataType::f8e5m2), 0x75u);   // 20480, above the tie
  EXPECT_EQ(cvt(DataType::i8, int8_t{17}, DataType::f8e4m3), 0x58u);   // 16: tie to even
  EXPECT_EQ(cvt(DataType::u8, uint8_t{19}, DataType::f8e4m3), 0x5au);  // 20
  // To integers and between the two.
  EXPECT_EQ(cvt(DataType::f8e4m3, uint8_t{0x7e}, DataType::i8), 127u);
  EXPECT_EQ(cvt(DataType::f8e4m3, uint8_t{0x7e}, DataType::i8, modes(Rounding::nearest_even, Overflow::wrap)), 0xc0u);
  EXPECT_EQ(cvt(DataType::f8e4m3, uint8_t{0x7f}, DataType::i32), 0u);
  EXPECT_EQ(cvt(DataType::f8e4m3, uint8_t{0x7e}, DataType::f8e5m2), 0x5fu);  // 448 exactly
  EXPECT_EQ(cvt(DataType::f8e5m2, uint8_t{0x7b}, DataType::f8e4m3), 0x7fu);  // 57344: NaN
  EXPECT_EQ(cvt(DataType::f8e5m2, uint8_t{0x7b}, DataType::f8e4m3, rtz), 0x7eu);
  for (const char* name : {"f8e4m3", "f8e5m2"}) EXPECT_EQ(to_string(parse_data_type(name)), std::string(name));
  EXPECT_EQ(parse_data_type("f8_e4m3"), DataType::f8e4m3);         // oneDNN
  EXPECT_EQ(parse_data_type("float8_e5m2"), DataType::f8e5m2);     // PyTorch
  EXPECT_EQ(parse_data_type("float8_e4m3fn"), DataType::f8e4m3);
  EXPECT_EQ(parse_data_type("s32"), DataType::i32);
  EXPECT_EQ(parse_data_type("bfloat16"), DataType::bf16);
}

// Issue 16's fused arithmetic (Conversion::params) in the host reference, against values worked out apart from
// it (Python, every operation rounded to f32 on its own): OpenVINO's mean modes on a u8 image to f16, oneDNN's
// requantization of f32 to i8 and dequantization of u8 to f32, per channel and per tensor.
TEST(Arithmetic, FusedInTheDocumentedOrder) {
  auto run = [](DataType from, const std::vector<uint8_t>& in, DataType to, Dims dims, const Conversion& conv) {
    const Layout s(format_from_name("bfyx"), from, dims), d(format_from_name("bfyx"), to, dims);
    std::vector<uint8_t> out(static_cast<size_t>(d.bytes()));
    reference_reorder(s, in.data(), d, out.data(), conv);
    return out;
  };
  auto bytes_of = [](const auto& v) {
    std::vector<uint8_t> b(sizeof v[0] * v.size());
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  Conversion norm;  // (x - sub[f]) / div[f], features 0..2, values 0, 128, 255 along x
  norm.param(Param::sub) = {{123.7f, 116.3f, 103.5f}, 1};
  norm.param(Param::div) = {{58.4f, 57.1f, 57.4f}, 1};
  const std::vector<uint8_t> image = {0, 128, 255, 0, 128, 255, 0, 128, 255};
  std::vector<uint8_t> got = run(DataType::u8, image, DataType::f16, {1, 3, 1, 3}, norm);
  const std::vector<uint16_t> want_f16 = {0xc03c, 0x2cb6, 0x407f, 0xc013, 0x328f, 0x40dc, 0xbf36, 0x36d4, 0x4147};
  EXPECT_EQ(got, bytes_of(want_f16));

  Conversion requant;  // saturate(rint(x * 0.1 / 0.37 + 5))
  requant.param(Param::src_scale).values = {0.1f};
  requant.param(Param::dst_scale).values = {0.37f};
  requant.param(Param::dst_zero_point).values = {5};
  const std::vector<float> f = {1.0f, -2.5f, 3.1f, 100.7f, -1000.0f, 0.05f};
  got = run(DataType::f32, bytes_of(f), DataType::i8, {1, 1, 1, 6}, requant);
  EXPECT_EQ(got, (std::vector<uint8_t>{5, 4, 6, 32, 0x80, 5}));

  Conversion dequant;  // (x - 128) * 0.05
  dequant.param(Param::src_zero_point).values = {128};
  dequant.param(Param::src_scale).values = {0.05f};
  got = run(DataType::u8, {0, 127, 128, 200, 255}, DataType::f32, {1, 1, 1, 5}, dequant);
  const std::vector<float> want_f32 = {-0x1.99999ap+2f, -0x1.99999ap-5f, 0.0f, 0x1.cccccep+1f, 0x1.966666p+2f};
  EXPECT_EQ(got, bytes_of(want_f32));

  // A division multiplies by the divisor's f32 reciprocal (operand_of()), as oneDNN's reorders do: 5 / 3
  // divided exactly would round to 0x3fd55555, 5 * (1/3) rounds to 0x3fd55556.
  Conversion third;
  third.param(Param::div).values = {3};
  got = run(DataType::i32, bytes_of(std::vector<int32_t>{5}), DataType::f32, {1, 1, 1, 1}, third);
  EXPECT_EQ(got, bytes_of(std::vector<uint32_t>{0x3fd55556u}));

  // The key names each parameter, its axis and every value exactly; conversions with other values differ.
  EXPECT_EQ(dequant.key(), "src-zero-point=0x1p+7,src-scale=0x1.99999ap-5");
  EXPECT_EQ(norm.key().substr(0, 16), "sub@1=0x1.eecccc");
  Conversion other = dequant;
  other.param(Param::src_scale).values = {0.0500001f};
  EXPECT_NE(other, dequant);
  EXPECT_NE(other.key(), dequant.key());
}

// Parameters that cannot apply are refused naming the parameter, the value and the layout.
TEST(Arithmetic, BadParametersAreNamed) {
  const Layout dst(format_from_name("b_fs_yx_fsv16"), DataType::i8, {1, 3, 2, 2});
  auto error = [&](Param q, std::vector<float> v, int axis) {
    Conversion c;
    c.param(q) = {std::move(v), axis};
    return error_of([&] { check_params(c, dst); });
  };
  EXPECT_NE(error(Param::sub, {1, 2}, 1).find("sub of b_fs_yx_fsv16 i8 1x3x2x2: 2 values on axis f of extent 3"), std::string::npos);
  EXPECT_NE(error(Param::mul, {1, 2}, -1).find("2 values for the whole tensor"), std::string::npos);
  EXPECT_NE(error(Param::mul, {1}, 4).find("axis 4 is not one of its 4 axes"), std::string::npos);
  EXPECT_NE(error(Param::div, {1, 0, 2}, 1).find("index 1) divides by zero"), std::string::npos);
  EXPECT_NE(error(Param::dst_scale, {0}, -1).find("divides by zero"), std::string::npos);
  EXPECT_NE(error(Param::dst_scale, {0x1p-130f}, -1).find("has no finite f32 reciprocal"), std::string::npos);
  EXPECT_NE(error(Param::src_zero_point, {1.5f}, -1).find("0x1.8p+0 (1.500000, index 0) is not an integer"), std::string::npos);
  EXPECT_NE(error(Param::src_scale, {INFINITY}, -1).find("is not finite"), std::string::npos);
  EXPECT_NE(error_of([] { parse_param("scale"); }).find("unknown parameter 'scale'"), std::string::npos);
  const Layout wide(format_from_name("bfyx"), DataType::f32, {1, static_cast<int64_t>(kMaxIndexedValues) + 1, 1, 1});
  Conversion c;
  c.param(Param::mul) = {std::vector<float>(kMaxIndexedValues + 1, 1.0f), 1};
  EXPECT_NE(error_of([&] { check_params(c, wide); }).find("more than the 8192"), std::string::npos);
  // The reference checks before it reads or writes anything.
  EXPECT_NE(error_of([&] { reference_reorder(wide, nullptr, wide, nullptr, c); }).find("more than the 8192"), std::string::npos);
}

// check_params() tests thousands of values per call in one branch-free pass: every kind of value is judged as
// the per-value definition judges it (finite; integral for a zero point; a finite f32 reciprocal for a
// divisor), wherever it sits among 4096 values (the vector loop's first lanes, its middle, its last element).
TEST(Arithmetic, EveryValueIsJudgedWhereverItSits) {
  const Layout dst(format_from_name("bfyx"), DataType::f32, {1, 4096, 1, 1});
  const std::vector<float> edges = {0.0f, -0.0f, 0.5f, -1.5f, 1.0f, -3.0f, 8388607.0f, 8388607.5f, 8388608.0f, 16777217.0f,
                                    0x1p-128f, 0x1.000008p-128f, -0x1.000008p-128f, 0x1p-149f, 0x1p-126f, 0x1p+127f,
                                    std::numeric_limits<float>::max(), INFINITY, -INFINITY, NAN, 4294967296.5f, 0.1f};
  for (Param q : {Param::sub, Param::src_zero_point, Param::dst_scale}) {
    const bool integer = q == Param::src_zero_point, divisor = q == Param::dst_scale;
    for (float e : edges)
      for (size_t at : {size_t{0}, size_t{5}, size_t{4095}}) {
        Conversion c;
        c.param(q) = {std::vector<float>(4096, 1.0f), 1};
        c.param(q).values[at] = e;
        const bool usable = std::isfinite(e) && (!integer || std::nearbyint(e) == e) && (!divisor || std::isfinite(1.0f / e));
        const std::string err = error_of([&] { check_params(c, dst); });
        if (usable) {
          EXPECT_EQ(err, "") << to_string(q) << " " << e << " at " << at;
        } else {
          EXPECT_NE(err.find("index " + std::to_string(at) + ")"), std::string::npos) << to_string(q) << " " << e << ": " << err;
        }
      }
  }
}

// check_param_shapes() is check_params() but for the values: what reorder() runs per call, its kernel cache
// having compared the values bit for bit with ones that passed. Axes, groups and counts are refused alike.
TEST(Arithmetic, ParamShapesAreCheckedWithoutTheValues) {
  const Layout dst(format_from_name("b_fs_yx_fsv16"), DataType::i8, {1, 3, 2, 2});
  auto errors = [&](Param q, std::vector<float> v, int axis) {
    Conversion c;
    c.param(q) = {std::move(v), axis};
    return std::make_pair(error_of([&] { check_param_shapes(c, dst); }), error_of([&] { check_params(c, dst); }));
  };
  for (const auto& [q, v, axis] : {std::make_tuple(Param::sub, std::vector<float>{1, 2}, 1),
                                   std::make_tuple(Param::mul, std::vector<float>{1}, 4),
                                   std::make_tuple(Param::src_scale, std::vector<float>{1, 2}, -1)}) {
    const auto [shapes, all] = errors(q, v, axis);
    EXPECT_NE(shapes, "");
    EXPECT_EQ(shapes, all);
  }
  for (const auto& [q, v] : {std::make_pair(Param::div, std::vector<float>{1, 0, 2}),
                             std::make_pair(Param::src_zero_point, std::vector<float>{1.5f, 1, 1}),
                             std::make_pair(Param::dst_scale, std::vector<float>{NAN, 1, 1})}) {
    const auto [shapes, all] = errors(q, v, 1);
    EXPECT_EQ(shapes, "") << to_string(q);
    EXPECT_NE(all, "") << to_string(q);
  }
}

// Issue 16's groups: int4 LLM weights' scales, one per group of G consecutive input channels for every output
// channel (row-major: o, then the group), the last group short; worked out by hand on a 2 x 5 matrix.
TEST(Arithmetic, GroupsAlongOneAxisForEveryIndexOfAnother) {
  const Layout s(format_from_name("oiyx"), DataType::i8, {2, 5, 1, 1}), d(format_from_name("oiyx"), DataType::f32, {2, 5, 1, 1});
  Conversion c;
  c.param(Param::src_scale) = {{1, 10, 100, 2, 20, 200}, 1, 2, 0};  // groups {0,1} {2,3} {4} of i, rows o
  c.param(Param::src_zero_point) = {{1, -1}, 0};                    // per o
  EXPECT_EQ(c.param(Param::src_scale).count(d.dims()), 6);
  const std::vector<int8_t> in = {1, 2, 3, 4, 5, 1, 2, 3, 4, 5};
  std::vector<float> out(10);
  reference_reorder(s, in.data(), d, out.data(), c);
  EXPECT_EQ(out, (std::vector<float>{0, 1, 20, 30, 400, 4, 6, 80, 100, 1200}));
  // The key says rows, axis and group; a run-time parameter's key has no values (one kernel serves any).
  EXPECT_EQ(c.key().substr(0, 25), "src-zero-point@0=0x1p+0/-");
  EXPECT_NE(c.key().find("src-scale@0/1g2=0x1p+0/0x1.4p+3/"), std::string::npos) << c.key();
  Conversion b = c;
  b.param(Param::src_scale).from_buffer = true;
  EXPECT_NE(b.key().find("src-scale@0/1g2=buffer"), std::string::npos) << b.key();
  EXPECT_NE(b, c);
  // The host reference needs the values a buffer holds on the device.
  b.param(Param::src_scale).values.clear();
  check_params(b, d);
  EXPECT_NE(error_of([&] { reference_reorder(s, in.data(), d, out.data(), b); }).find("the host reference needs the values of src-scale"),
            std::string::npos);
  auto error = [&](ParamValues v) {
    Conversion e;
    e.param(Param::dst_scale) = std::move(v);
    return error_of([&] { check_params(e, d); });
  };
  EXPECT_NE(error({{1, 2, 3}, 1, 2, 0}).find("dst-scale of oiyx f32 2x5x1x1: 3 values on axis i of extent 5 in groups of 2 for each of the 2 indices of o (needs 6)"),
            std::string::npos) << error({{1, 2, 3}, 1, 2, 0});
  EXPECT_NE(error({{1, 2}, 1, 0}).find("group of 0 (at least 1)"), std::string::npos);
  EXPECT_NE(error({{1, 2}, 0, 1, 0}).find("rows on axis o need groups along another axis"), std::string::npos);
  EXPECT_NE(error({{1}, -1, 2}).find("group of 2 without an axis"), std::string::npos);
  EXPECT_NE(error({{1, 2}, 1, 1, 7}).find("axis 7 is not one of its 4 axes"), std::string::npos);
}

// Compensation sums worked out by hand: padding and other tensors' bytes are not summed, signed types are
// sign-extended, the sums wrap modulo 2^32, rows are (outer, axis) row-major.
TEST(Arithmetic, CompensationSumsByHand) {
  // oiyx i8 2x3 inside os_iyx_osv16 (14 lanes of padding per i, holding junk that must not count).
  const Layout w(format_from_name("os_iyx_osv16"), DataType::i8, {2, 3, 1, 1});
  std::vector<int8_t> bytes(static_cast<size_t>(w.bytes()), 99);
  const int8_t values[2][3] = {{1, -2, 3}, {-128, 127, 5}};
  for (int64_t o = 0; o < 2; ++o)
    for (int64_t i = 0; i < 3; ++i) bytes[static_cast<size_t>(w.offset({o, i, 0, 0}))] = values[o][i];
  EXPECT_EQ(reference_compensation(w, bytes.data(), Compensation{0}), (std::vector<int32_t>{2, 4}));
  EXPECT_EQ(reference_compensation(w, bytes.data(), Compensation{1}), (std::vector<int32_t>{-127, 125, 8}));
  EXPECT_EQ(reference_compensation(w, bytes.data(), Compensation{1, 0}), (std::vector<int32_t>{1, -2, 3, -128, 127, 5}));
  // u32 values wrap: 0xffffffff + 2 = 1.
  const Layout u(format_from_name("bfyx"), DataType::u32, {1, 2, 1, 1});
  const uint32_t big[2] = {0xffffffffu, 2};
  EXPECT_EQ(reference_compensation(u, big, Compensation{0}), (std::vector<int32_t>{1}));
  Conversion c;
  c.compensation = Compensation{1, 0};
  EXPECT_EQ(c.key(), "compensation=0/1");
  EXPECT_EQ(c.compensation.count(w.dims()), 6);
  EXPECT_NE(c, Conversion{});
  c.compensation = Compensation{0, 0};
  EXPECT_NE(error_of([&] { check_params(c, w); }).find("compensation of os_iyx_osv16 i8 2x3x1x1: axes 0 and 0"), std::string::npos);
  c.compensation = Compensation{-1, 1};
  EXPECT_NE(error_of([&] { check_params(c, w); }).find("axes 1 and -1"), std::string::npos);
  c.compensation = Compensation{0};
  EXPECT_NE(error_of([&] { check_params(c, w.with_type(DataType::i64)); }).find("i64 is not an integer type of at most 32 bits"),
            std::string::npos);
}

TEST(Pattern, IsTheLogicalIndexWithZeroPadding) {
  Layout l = L("b_fs_yx_fsv16", {2, 3, 2, 2}, {}, {}, DataType::i32);
  std::vector<uint8_t> buf = make_pattern(l);
  ASSERT_EQ(static_cast<int64_t>(buf.size()), l.bytes());
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t f = 0; f < 3; ++f)
      for (int64_t y = 0; y < 2; ++y)
        for (int64_t x = 0; x < 2; ++x) {
          int32_t v;
          std::memcpy(&v, buf.data() + l.offset({b, f, y, x}) * 4, 4);
          EXPECT_EQ(v, ((b * 3 + f) * 2 + y) * 2 + x);
        }
  int32_t pad;
  std::memcpy(&pad, buf.data() + 3 * 4, 4);
  EXPECT_EQ(pad, 0);
}

// Every name the grammar accepts gives a plan that is a bijection: over its digit tuples each logical
// coordinate appears exactly once, at the offset the plan's offset() gives, every offset inside the layout
// and none twice. Random names from the grammar (tests/random_formats.hpp), shapes and paddings; a swizzle
// that split the o tile off its block bounds once mapped two o values to one slot.
TEST(Plan, EveryGeneratedNameIsABijection) {
  clreorder_test::Draw d(20261123);
  const FormatKind kinds[] = {FormatKind::data, FormatKind::weights, FormatKind::grouped_weights};
  int checked = 0;
  for (int n = 0; n < 3000; ++n) {
    // Half the draws are weights, where swizzles and fused y*x occur.
    const FormatKind kind = d.chance(0.5) ? FormatKind::weights : kinds[d.in(0, 2)];
    const int rank = static_cast<int>(kind == FormatKind::data ? d.in(2, 6) : kind == FormatKind::weights ? d.in(2, 5) : d.in(3, 6));
    std::string name;
    const Format f = clreorder_test::random_format(d, kind, rank, &name);
    Dims dims, lo, up;
    for (int a = 0; a < rank; ++a) {
      dims.push_back(d.in(1, 7));
      lo.push_back(d.chance(0.2) ? d.in(1, 2) : 0);
      up.push_back(d.chance(0.2) ? d.in(1, 2) : 0);
    }
    const Layout l(f, DataType::f32, dims, lo, up);
    if (l.elements() > 200000) continue;
    ++checked;
    EXPECT_EQ(clreorder_test::plan_bijection_error(l), "") << name << " " << l.describe();
  }
  EXPECT_GT(checked, 2000);
}

TEST(Grammar, SwizzlesMustAlignWithTheOBlocks) {
  EXPECT_NE(error_of([] { Format::parse("os_osv3_is_osv2_isv16_x_isv4_swizzled_by_2"); }).find("splits the o tile 6 at 3"),
            std::string::npos);
  EXPECT_NO_THROW(Format::parse("os_is_yx_osa4_isa8_osv8_isv4_swizzled_by_4"));
  EXPECT_NO_THROW(Format::parse("os_osv6_is_osv2_isv16_x_isv4_swizzled_by_2"));  // splits 12 at 6: bounds 2 and 12
}

// The benchmarks' ratio to copy (ratio_to_faster_copy()): three operations of one typical time, each round's
// times noisy, read 1, where the least of the two copies round by round reads far below it; the faster copy
// is the one of the lower median however the rounds go; and a machine's phase, scaling a whole round,
// cancels.
TEST(BenchRatios, TheFasterCopyIsChosenByItsMedianNotRoundByRound) {
  std::mt19937 rng(7);
  std::lognormal_distribution<double> noise(0.0, 0.4);
  std::uniform_real_distribution<double> phase(0.5, 2.0);
  std::vector<double> wall, copy, kernel, per_round_min;
  for (int i = 0; i < 2001; ++i) {
    const double f = phase(rng);
    wall.push_back(f * 20 * noise(rng));
    copy.push_back(f * 20 * noise(rng));
    kernel.push_back(f * 20 * noise(rng));
    per_round_min.push_back(std::min(copy.back(), kernel.back()) / wall.back());
  }
  EXPECT_NEAR(clreorder::ratio_to_faster_copy(1.0, wall, copy, kernel), 1.0, 0.05);
  std::sort(per_round_min.begin(), per_round_min.end());
  EXPECT_LT(per_round_min[per_round_min.size() / 2], 0.85);  // the bias the median choice removes
  // A copy kernel twice as fast in every round is the one: the reorder at its own speed reads 0.5.
  std::vector<double> fast = kernel;
  for (double& t : fast) t /= 2;
  EXPECT_NEAR(clreorder::ratio_to_faster_copy(1.0, wall, copy, fast), 0.5, 0.03);
  EXPECT_NEAR(clreorder::ratio_to_faster_copy(1.0, wall, fast, copy), 0.5, 0.03);
  // scale: the reorder's bytes over the copy's.
  EXPECT_NEAR(clreorder::ratio_to_faster_copy(2.0, wall, copy, copy), 2.0, 0.1);
  EXPECT_THROW(clreorder::ratio_to_faster_copy(1.0, {}, {}, {}), clreorder::Error);
  EXPECT_THROW(clreorder::ratio_to_faster_copy(1.0, wall, copy, {1.0}), clreorder::Error);
}
