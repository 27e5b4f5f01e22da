// Host tests of the weights formats: goldens computed by hand, and every offset of several formats against
// independent formulas written from OpenVINO's OpenCL index functions (fetch_weights.cl), which are the
// ground truth where its traits table disagrees (same-axis double blocks, g_os_is_zyx_isv16_osv16,
// g_os_zyx_is_*, the swizzles).
#include <gtest/gtest.h>

#include <functional>

#include "clreorder/format.hpp"
#include "clreorder/layout.hpp"

using namespace clreorder;

namespace {

Layout W(const std::string& fmt, Dims dims) { return Layout(format_from_name(fmt), DataType::f32, std::move(dims)); }

int64_t up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// Visits every coordinate of `dims`.
void for_each(const Dims& dims, const std::function<void(const Dims&)>& f) {
  Dims c(dims.size(), 0);
  for (;;) {
    f(c);
    int a = static_cast<int>(dims.size()) - 1;
    while (a >= 0 && ++c[a] == dims[a]) c[a--] = 0;
    if (a < 0) return;
  }
}

}  // namespace

// Worked by hand for O=33, I=17, 3x3 (G=3), coordinate o=20, i=5, y=1, x=2 (g=2).
TEST(WeightsGolden, HandComputedOffsets) {
  const Dims oiyx = {33, 17, 3, 3}, goiyx = {3, 33, 17, 3, 3};
  // (o/16)*17*9*16 + i*9*16 + y*3*16 + x*16 + o%16 = 2448 + 720 + 48 + 32 + 4
  EXPECT_EQ(W("os_iyx_osv16", oiyx).offset({20, 5, 1, 2}), 3252);
  // (o/16)*2*9*256 + (i/16)*9*256 + y*3*256 + x*256 + (i%16)*16 + o%16 = 4608 + 768 + 512 + 80 + 4
  EXPECT_EQ(W("os_is_yx_isv16_osv16", oiyx).offset({20, 5, 1, 2}), 5972);
  // (i/16)*3*9*256 + (o/16)*9*256 + y*768 + x*256 + (i%16)*16 + o%16 = 2304 + 768 + 512 + 80 + 4
  EXPECT_EQ(W("is_os_yx_isv16_osv16", oiyx).offset({20, 5, 1, 2}), 3668);
  // o = os*32 + osa*8 + osv, i = is*32 + isa*4 + isv: osa 2, osv 4, isa 1, isv 1;
  // y*3*1024 + x*1024 + osa*256 + isa*32 + osv*4 + isv = 3072 + 2048 + 512 + 32 + 16 + 1
  EXPECT_EQ(W("os_is_yx_osa4_isa8_osv8_isv4", oiyx).offset({20, 5, 1, 2}), 5681);
  // g*(3*17*9*16) + (o/16)*2448 + i*144 + y*48 + x*16 + o%16 = 14688 + 2448 + 720 + 48 + 32 + 4
  EXPECT_EQ(W("g_os_iyx_osv16", goiyx).offset({2, 20, 5, 1, 2}), 17940);
  // (g/16)*... + o*17*9*16 + i*144 + y*48 + x*16 + g%16 = 48960 + 720 + 48 + 32 + 2
  EXPECT_EQ(W("gs_oiyx_gsv16", goiyx).offset({2, 20, 5, 1, 2}), 49762);
  // swizzled by 4: o_sw = (o%4)*8 + (o%32)/4 = 5, osv = 5, osa = 0; isv 1, isa 1;
  // isv + osv*4 + isa*32 + x*1024 + y*3*1024 = 1 + 20 + 32 + 2048 + 3072
  EXPECT_EQ(W("os_is_yx_osa4_isa8_osv8_isv4_swizzled_by_4", oiyx).offset({20, 5, 1, 2}), 5173);
  // swizzled by 2, o=21: ofm_block = 1, ofm_in_block = 10; i tile 1, id 1;
  // is*Y*X*32*4 + y*X*128 + x*128 + 1*16*4 + 10*4 + 1 = 1*1152 + 384 + 256 + 64 + 40 + 1
  EXPECT_EQ(W("os_is_yx_osv32_isv4_swizzled_by_2", oiyx).offset({21, 5, 1, 2}), 1897);
  // Buffer sizes: blocked axes rounded up, alignment applied.
  EXPECT_EQ(W("os_iyx_osv16", oiyx).elements(), 48 * 17 * 9);
  EXPECT_EQ(W("os_is_yx_osa4_isa8_osv8_isv4", oiyx).elements(), 64 * 32 * 9);
  EXPECT_EQ(W("os_iyx_osv32__ai32", oiyx).elements(), 64 * 32 * 9);
  EXPECT_EQ(W("os_i_osv16__ai8", {33, 17}).elements(), 48 * 24);
  EXPECT_EQ(W("gs_oi_yxs_gsv16_yxsv4", {3, 1, 1, 3, 3}).elements(), 16 * 12);
  EXPECT_EQ(W("iy_xs_os_xsv2_osv8__ao32", oiyx).elements(), 17 * 3 * 2 * 64 * 2);
}

// Independent formulas written from OpenVINO's OpenCL index functions, compared on every coordinate.
struct Reference {
  const char* format;
  Dims dims;
  std::function<int64_t(const Dims&)> offset;
};

TEST(WeightsGolden, EveryOffsetMatchesOpenVinoIndexFunctions) {
  const int64_t O = 33, I = 17, Y = 3, X = 3, Z = 3, G = 3;
  const std::vector<Reference> refs = {
      {"os_iyx_osv16", {O, I, Y, X},
       [&](const Dims& c) { return c[0] % 16 + 16 * (c[3] + X * (c[2] + Y * (c[1] + I * (c[0] / 16)))); }},
      {"os_is_yx_isv16_osv16", {O, I, Y, X},
       [&](const Dims& c) {
         int64_t o = c[0], i = c[1], y = c[2], x = c[3];
         return o % 16 + 16 * (i % 16) + 256 * (x + X * (y + Y * (i / 16 + up(I, 16) / 16 * (o / 16))));
       }},
      {"is_os_yx_isv16_osv16", {O, I, Y, X},
       [&](const Dims& c) {
         int64_t o = c[0], i = c[1], y = c[2], x = c[3];
         return o % 16 + 16 * (i % 16) + 256 * (x + X * (y + Y * (o / 16 + up(O, 16) / 16 * (i / 16))));
       }},
      // get_os_is_yx_osa4_isa8_osv8_isv4_index
      {"os_is_yx_osa4_isa8_osv8_isv4", {O, I, Y, X},
       [&](const Dims& c) {
         int64_t o = c[0], i = c[1], y = c[2], x = c[3];
         return i % 4 + (o % 8) * 4 + ((i / 4) % 8) * 32 + ((o / 8) % 4) * 256 + x * 1024 + y * X * 1024 +
                (i / 32) * 1024 * X * Y + (o / 32) * (up(I, 32) / 32) * 1024 * X * Y;
       }},
      // get_os_is_yx_osa4_isa8_osv8_isv4_swizzled_by_4_index
      {"os_is_yx_osa4_isa8_osv8_isv4_swizzled_by_4", {O, I, Y, X},
       [&](const Dims& c) {
         int64_t o = c[0], i = c[1], y = c[2], x = c[3];
         int64_t sw = (o % 4) * 8 + (o % 32) / 4 + (o / 32) * 32;
         return i % 4 + (sw % 8) * 4 + ((i / 4) % 8) * 32 + ((sw / 8) % 4) * 256 + x * 1024 + y * X * 1024 +
                (i / 32) * 1024 * X * Y + (o / 32) * (up(I, 32) / 32) * 1024 * X * Y;
       }},
      // get_os_is_yx_osv32_isv4_swizzled_by_2
      {"os_is_yx_osv32_isv4_swizzled_by_2", {O, I, Y, X},
       [&](const Dims& c) {
         int64_t o = c[0], i = c[1], y = c[2], x = c[3];
         return (o / 32) * up(I, 4) * Y * X * 32 + (i / 4) * Y * X * 32 * 4 + y * X * 128 + x * 128 +
                ((o % 32) % 2) * 64 + ((o % 32) / 2) * 4 + i % 4;
       }},
      // get_os_is_yx_isa8_osv8_isv4_index
      {"os_is_yx_isa8_osv8_isv4", {O, I, Y, X},
       [&](const Dims& c) {
         int64_t o = c[0], i = c[1], y = c[2], x = c[3];
         return i % 4 + 4 * (o % 8 + 8 * ((i / 4) % 8)) + x * 256 + y * X * 256 + (i / 32) * Y * X * 256 +
                (o / 8) * (up(I, 32) / 32) * Y * X * 256;
       }},
      // get_os_is_zyx_isa8_osv16_isv4_index
      {"os_is_zyx_isa8_osv16_isv4", {O, I, Z, Y, X},
       [&](const Dims& c) {
         int64_t o = c[0], i = c[1], z = c[2], y = c[3], x = c[4];
         return i % 4 + 4 * (o % 16 + 16 * ((i / 4) % 8)) + x * 512 + y * X * 512 + z * Y * X * 512 +
                (i / 32) * Z * Y * X * 512 + (o / 16) * (up(I, 32) / 32) * Z * Y * X * 512;
       }},
      // GET_FILTER_G_OS_IS_ZYX_ISV16_OSV16_INDEX: o%16 innermost (its traits row says i innermost)
      {"g_os_is_zyx_isv16_osv16", {G, O, I, Z, Y, X},
       [&](const Dims& c) {
         int64_t g = c[0], o = c[1], i = c[2], z = c[3], y = c[4], x = c[5];
         int64_t per_g = up(O, 16) * up(I, 16) * Z * Y * X;
         return g * per_g + o % 16 + 16 * (i % 16) +
                256 * (x + X * (y + Y * (z + Z * (i / 16 + up(I, 16) / 16 * (o / 16)))));
       }},
      // get_g_os_zyx_is_osv_isv_index (osv 16, isv 4): is after the spatial axes
      {"g_os_zyx_is_osv16_isv4", {G, O, I, Z, Y, X},
       [&](const Dims& c) {
         int64_t g = c[0], o = c[1], i = c[2], z = c[3], y = c[4], x = c[5];
         int64_t is_size = up(I, 4) / 4, os_size = up(O, 16) / 16;
         int64_t isv_pitch = 1, osv_pitch = 4, is_pitch = 64, x_pitch = is_pitch * is_size, y_pitch = x_pitch * X,
                 z_pitch = y_pitch * Y, os_pitch = z_pitch * Z, g_pitch = os_pitch * os_size;
         return (i % 4) * isv_pitch + (o % 16) * osv_pitch + (i / 4) * is_pitch + x * x_pitch + y * y_pitch +
                z * z_pitch + (o / 16) * os_pitch + g * g_pitch;
       }},
      // get_gs_oi_yxs_gsv_yxsv4_index on its depthwise use (o = i = 1)
      {"gs_oi_yxs_gsv16_yxsv4", {32, 1, 1, Y, X},
       [&](const Dims& c) {
         int64_t g = c[0], y = c[3], x = c[4], yx = y * X + x, yxa = up(Y * X, 4);
         return yx % 4 + (g % 16) * 4 + (yx / 4) * 4 * 16 + (g / 16) * 16 * yxa;
       }},
      // get_i_yxs_os_yxsv2_osv_index with dense pitches (yx pairs, o aligned to 16)
      {"i_yxs_os_yxsv2_osv16", {O, I, Y, X},
       [&](const Dims& c) {
         int64_t o = c[0], i = c[1], y = c[2], x = c[3], yx = y * X + x, line = up(O, 16);
         int64_t height = i * up(Y * X, 2) + yx;
         return (height & ~int64_t(1)) * line + 32 * (o / 16) + 16 * (yx & 1) + o % 16;
       }},
      // get_iy_xs_os_xsv2_osv_index with dense pitches, X even (see README: odd X differs in OpenVINO)
      {"iy_xs_os_xsv2_osv8__ao32", {O, I, Y, 4},
       [&](const Dims& c) {
         int64_t o = c[0], i = c[1], y = c[2], x = c[3], line = up(O, 32);
         int64_t height = i * Y * 4 + y * 4 + x;
         return (height & ~int64_t(1)) * line + 16 * (o / 8) + 8 * (x & 1) + o % 8;
       }},
  };
  for (const Reference& r : refs) {
    Layout l = W(r.format, r.dims);
    int64_t mismatches = 0;
    for_each(r.dims, [&](const Dims& c) {
      if (l.offset(c) != r.offset(c) && mismatches++ < 3)
        ADD_FAILURE() << r.format << " coord " << dims_to_string(c, ",") << ": ours " << l.offset(c) << ", OpenVINO "
                      << r.offset(c);
    });
    EXPECT_EQ(mismatches, 0) << r.format;
  }
}

TEST(WeightsGolden, KindsAndAxes) {
  EXPECT_EQ(format_from_name("oiyx").axes(), "oiyx");
  EXPECT_EQ(format_from_name("yxio").order(), "yxio");
  EXPECT_EQ(format_from_name("os_i_osv16").axes(), "oi");
  EXPECT_EQ(format_from_name("goizyx").axes(), "goizyx");
  EXPECT_EQ(format_from_name("gyxio").kind(), FormatKind::grouped_weights);
  EXPECT_EQ(format_from_name("os_zyxi_osv16").order(), "ozyxi");
  EXPECT_EQ(format_from_name("iy_xs_os_xsv2_osv8__ao32").blocks_string(), "x2 o8");
  EXPECT_EQ(format_from_name("gs_oi_yxs_gsv4_yxsv4").blocks_string(), "g4 yx4");
  EXPECT_EQ(format_from_name("os_is_yx_osv32_isv4_swizzled_by_2").swizzle(), 2);
}
