// Device tests of the layout families beside OpenVINO's names: strided views with gaps (never written),
// broadcast sources, blocked layouts with explicit strides and oneDNN tags, on every implementation that
// accepts each case, byte-exact against the host reference, the destination's gaps and guards unchanged.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "clreorder/kernel_selector.hpp"
#include "clreorder/reorder.hpp"
#include "device_cases.hpp"
#include "test_support.hpp"

using namespace clreorder;
using namespace clreorder_test;

namespace {

Layout strided(const char* fmt, const Dims& dims, const Dims& strides, int64_t offset = 0, DataType t = DataType::f32) {
  return Layout(format_from_name(fmt), t, dims, {}, {}, strides, offset);
}

Layout dense(const char* fmt, const Dims& dims, DataType t = DataType::f32) {
  return Layout(format_from_name(fmt), t, dims);
}

// Every implementation that accepts a case runs it, forced; how many cases each ran.
std::map<std::string, int> run_every_implementation(const Engine& e, const std::vector<Case>& cases) {
  std::map<std::string, int> ran;
  for (const auto& impl : KernelSelector::instance().impls()) {
    std::vector<Case> accepted;
    for (const Case& c : cases)
      if (impl->reject(ReorderParams{c.src, c.dst, e.info(), {}}).empty()) accepted.push_back(c);
    ran[impl->name()] = static_cast<int>(accepted.size());
    if (!accepted.empty()) run_batch(e, accepted, true, impl->name());
  }
  for (const auto& [name, n] : ran) std::printf("%s: %d cases\n", name.c_str(), n);
  return ran;
}

// The view cases must reach the generic, tiled and staged implementations.
void expect_main_implementations(std::map<std::string, int> ran) {
  EXPECT_GT(ran["generic"], 0);
  EXPECT_GT(ran["tiled"], 0);
  EXPECT_GT(ran["staged"], 0);
}

}  // namespace

// Views with gaps as destinations and as sources, against plain, blocked and double-blocked formats.
TEST(DeviceFamilies, StridedViewsWithGapsEveryImplementation) {
  REQUIRE_DEVICE(e);
  const Dims shape = {2, 19, 5, 7};
  // x[:, 1:20, 1:6, 2:9] of a (2, 24, 7, 11) bfyx tensor, and the same view of an NHWC one.
  const Layout slice_nchw = strided("bfyx", shape, {24 * 77, 77, 11, 1}, 77 + 11 + 2);
  const Layout slice_nhwc = strided("bfyx", shape, {7 * 11 * 24, 1, 11 * 24, 24}, 24 * 11 + 2 * 24 + 1);
  // Every other row of y and a padded channel stride.
  const Layout sparse = strided("bfyx", shape, {19 * 16 * 8, 16 * 8, 16, 2});
  std::vector<Case> cases;
  for (const char* f : {"bfyx", "byxf", "b_fs_yx_fsv16", "fs_b_yx_fsv32", "bs_fs_yx_bsv16_fsv16", "yxfb"})
    for (const Layout* v : {&slice_nchw, &slice_nhwc, &sparse}) {
      cases.push_back(case_of(dense(f, shape), *v));
      cases.push_back(case_of(*v, dense(f, shape)));
    }
  // Types around it: 8-, 16- and 64-bit elements, conversions.
  cases.push_back(case_of(dense("b_fs_yx_fsv16", shape, DataType::f16), slice_nhwc.with_type(DataType::f16)));
  cases.push_back(case_of(slice_nchw.with_type(DataType::u8), dense("byxf", shape, DataType::f32)));
  cases.push_back(case_of(slice_nhwc.with_type(DataType::i16), sparse.with_type(DataType::f64)));
  expect_main_implementations(run_every_implementation(*e, cases));
}

// A blocked destination with room between its blocks (oneDNN's strided blocked descriptors), oneDNN tags on
// either side, and broadcast sources (stride 0) into dense and blocked destinations.
TEST(DeviceFamilies, BlockedStridesTagsAndBroadcasts) {
  REQUIRE_DEVICE(e);
  const Dims shape = {3, 20, 3, 5};
  const Layout roomy = strided("b_fs_yx_fsv16", shape, {1000, 300, 96, 16}, 7);
  const Layout bcast_f = strided("bfyx", shape, {15, 0, 5, 1});       // one plane for every channel
  const Layout bcast_bx = strided("byxf", shape, {0, 1, 20, 0});      // one value per (f, y)
  std::vector<Case> cases = {case_of(dense("bfyx", shape), roomy),
                             case_of(roomy, dense("byxf", shape)),
                             case_of(dense("nChw16c", shape), dense("aBcd8b", shape)),
                             case_of(dense("ABcd8b16a2b", {17, 20, 3, 5}, DataType::i8), dense("acdb", {17, 20, 3, 5}, DataType::i8)),
                             case_of(bcast_f, dense("b_fs_yx_fsv16", shape)),
                             case_of(bcast_f, roomy),
                             case_of(bcast_bx, dense("bfyx", shape, DataType::f16)),
                             case_of(strided("bfyx", shape, {0, 0, 0, 0}), dense("bs_fs_yx_bsv16_fsv16", shape)),
                             // int8 weights from a slice of a bigger oiyx tensor, into packed words.
                             case_of(strided("oiyx", {32, 20, 3, 3}, {24 * 9, 9, 3, 1}, 9, DataType::i8),
                                  dense("os_is_yx_osv16_isv4", {32, 20, 3, 3}, DataType::i8))};
  expect_main_implementations(run_every_implementation(*e, cases));
  EXPECT_EQ(reason_of(*e, cases.back(), "lanes"), "");
}

// A destination whose elements would share memory is refused before anything runs, naming the strides, and
// the buffer is left as it was.
TEST(DeviceFamilies, OverlappingDestinationIsRefusedUntouched) {
  REQUIRE_DEVICE(e);
  const Layout src = dense("bfyx", {2, 3, 4, 5});
  const Layout dst = strided("bfyx", {2, 3, 4, 5}, {20, 0, 5, 1});
  const std::vector<uint8_t> before = random_bytes(static_cast<size_t>(dst.bytes()), 3);
  cl::Buffer s(e->context(), CL_MEM_READ_WRITE, static_cast<size_t>(src.bytes()));
  cl::Buffer d(e->context(), CL_MEM_READ_WRITE, before.size());
  e->queue().enqueueWriteBuffer(d, CL_TRUE, 0, before.size(), before.data());
  const std::string err = error_of([&] { reorder(*e, s, 0, src, d, 0, dst); });
  EXPECT_NE(err.find("strides 20,0,5,1"), std::string::npos) << err;
  std::vector<uint8_t> after(before.size());
  e->queue().enqueueReadBuffer(d, CL_TRUE, 0, after.size(), after.data());
  EXPECT_EQ(after, before);
}

// TPU local memory to and from plain layouts, every rule and storage mode, on every implementation that
// accepts each case. The destination buffer is the whole local memory filled with random bytes: the other
// tensors' slots (channels before the first NPU and after the last channel, gaps of the strides) must come
// back unchanged, the 4N/2N/2IC dummy elements as zeros.
TEST(DeviceFamilies, TpuLocalMemoryBothWays) {
  REQUIRE_DEVICE(e);
  auto tpu = [](const std::string& spec, const Dims& dims, DataType t = DataType::f32) {
    return Layout(format_from_name(spec), t, dims);
  };
  const std::vector<std::pair<Layout, Layout>> sides = {
      {tpu("tpu_local(npus=4,npu_bytes=1024,addr=0,strides=120:56:16:2)", {2, 5, 3, 4}), dense("bfyx", {2, 5, 3, 4})},
      {tpu("tpu_local(npus=4,npu_bytes=1024,addr=1024,strides=120:0:0:2)", {2, 3, 1, 10}), dense("bfyx", {2, 3, 1, 10})},
      {tpu("tpu_aligned(npus=4,npu_bytes=1024,addr=2048)", {2, 3, 4, 5}), dense("byxf", {2, 3, 4, 5})},
      {tpu("tpu_compact(npus=4,npu_bytes=1024,addr=3076)", {2, 6, 4, 5}), dense("b_fs_yx_fsv16", {2, 6, 4, 5})},
      {tpu("tpu_matrix(npus=4,npu_bytes=1024,addr=0,w=15)", {2, 40}), dense("bf", {2, 40})},
      {tpu("tpu_matrix(npus=4,npu_bytes=1024,addr=1152,w=6)", {2, 40}, DataType::f16), dense("bf", {2, 40}, DataType::f16)},
      {tpu("tpu_aligned(npus=4,npu_bytes=1024,addr=0,mode=4n)", {6, 5, 4, 5}, DataType::i8), dense("bfyx", {6, 5, 4, 5}, DataType::i8)},
      {tpu("tpu_compact(npus=4,npu_bytes=1024,addr=1024,mode=2n)", {3, 5, 4, 5}, DataType::u16), dense("bfyx", {3, 5, 4, 5}, DataType::u16)},
      {tpu("tpu_compact(npus=4,npu_bytes=1024,addr=0,mode=2ic)", {5, 3, 2, 2}), dense("oiyx", {5, 3, 2, 2})}};
  std::vector<Case> cases;
  for (const auto& [t, plain] : sides) {
    cases.push_back(case_of(plain, t));
    cases.push_back(case_of(t, plain));
  }
  // Across families: a TPU layout straight into a oneDNN blocked tag, with a conversion.
  cases.push_back(case_of(sides[2].first, dense("aBcd8b", {2, 3, 4, 5}, DataType::f16)));
  std::map<std::string, int> ran = run_every_implementation(*e, cases);
  EXPECT_EQ(ran["generic"], static_cast<int>(cases.size()));
  // A TPU destination owns only some of its channel slots: the specialised kernels decline it, naming why.
  EXPECT_NE(reason_of(*e, cases[0], "tiled").find("owns only some slots"), std::string::npos);
}

// Reshapes inside a reorder: other ranks and shapes of the same element count, blocked, padded, strided and
// TPU layouts on either side, conversions; the generic kernel maps them by linear index (the specialised
// ones decline, naming why).
TEST(DeviceFamilies, ReshapesByLinearIndex) {
  REQUIRE_DEVICE(e);
  const Layout padded(format_from_name("b_fs_yx_fsv16"), DataType::f32, {2, 19, 4, 3}, {0, 1, 0, 1}, {0, 2, 1, 0});
  std::vector<Case> cases = {
      case_of(dense("bfyx", {2, 2, 2, 2}), dense("bfzyx", {2, 2, 1, 2, 2})),
      case_of(dense("bfzyx", {2, 2, 2, 2, 2}), dense("bfyx", {2, 2, 4, 2})),
      case_of(dense("bfyx", {2, 19, 3, 4}), dense("b_fs_zyx_fsv16", {2, 19, 1, 3, 4}, DataType::f16)),
      case_of(dense("bfwzyx", {2, 3, 2, 2, 3, 2}), dense("bs_fs_yx_bsv16_fsv16", {2, 6, 6, 2})),
      case_of(padded, dense("byxf", {4, 19, 3, 2})),
      case_of(strided("bfyx", {2, 19, 5, 7}, {24 * 77, 77, 11, 1}, 90), dense("bf", {38, 35}, DataType::u8)),
      case_of(dense("bfyx", {2, 5, 3, 4}), Layout(format_from_name("tpu_aligned(npus=4,npu_bytes=1024,addr=0)"), DataType::f32, {5, 2, 4, 3})),
      case_of(dense("oiyx", {16, 9, 3, 3}, DataType::i8), dense("os_is_yx_osv16_isv4", {16, 27, 3, 1}, DataType::i8))};
  for (const Case& c : cases) EXPECT_NE(reason_of(*e, c, "tiled").find("reshape"), std::string::npos) << c.label;
  run_batch(*e, cases, true);
}
