// Device tests of the weights formats on the default OpenCL device: every weights and grouped-weights
// format to and from its plain counterpart on shapes that are not block multiples (o=33, i=17, g=3;
// 3x3, 1x1 and 3x3x3 kernels; depthwise g=32, o=1, i=1), a ring of weights-to-weights pairs inside each
// rank with type conversion, and data into weights. Destinations are pre-filled, so zeros must be written.
#include <gtest/gtest.h>

#include "clreorder/format.hpp"
#include "clreorder/reference.hpp"
#include "clreorder/reorder.hpp"
#include "device_cases.hpp"
#include "test_support.hpp"

using namespace clreorder;
using namespace clreorder_test;

namespace {

// Shapes in canonical order for a weights format of this kind and rank.
std::vector<Dims> weights_shapes(const Format& f) {
  std::vector<Dims> out;
  Dims head = f.kind() == FormatKind::grouped_weights ? Dims{3, 33, 17} : Dims{33, 17};
  int spatial = f.rank() - static_cast<int>(head.size());
  if (spatial == 0) return {head};
  for (int64_t k : {3, 1}) {
    Dims d = head;
    for (int s = 0; s < spatial; ++s) d.push_back(k);
    out.push_back(d);
  }
  if (f.kind() == FormatKind::grouped_weights) {
    Dims dw = {32, 1, 1};  // depthwise
    for (int s = 0; s < spatial; ++s) dw.push_back(3);
    out.push_back(dw);
  }
  return out;
}

}  // namespace

TEST(DeviceWeights, EveryFormatToAndFromPlain) {
  REQUIRE_DEVICE(e);
  std::vector<Case> cases;
  for (FormatKind kind : {FormatKind::weights, FormatKind::grouped_weights}) {
    std::vector<Format> formats = supported_formats(kind);
    EXPECT_EQ(formats.size(), kind == FormatKind::weights ? 48u : 31u);
    for (const Format& f : formats) {
      Format plain = Format::parse(f.axes());
      for (const Dims& shape : weights_shapes(f)) {
        cases.push_back(make_case(plain, f, shape));
        cases.push_back(make_case(f, plain, shape));
      }
    }
  }
  run_batch(*e, cases);
}

// Weights to weights of the same rank: each format into the next one of its rank, converting types.
TEST(DeviceWeights, RingOfPairsInsideEachRankWithConversion) {
  REQUIRE_DEVICE(e);
  std::vector<Case> cases;
  for (FormatKind kind : {FormatKind::weights, FormatKind::grouped_weights}) {
    std::vector<Format> formats = supported_formats(kind);
    for (size_t a = 0; a < formats.size(); ++a) {
      for (size_t step = 1; step < formats.size(); ++step) {
        const Format& b = formats[(a + step) % formats.size()];
        if (b.rank() != formats[a].rank()) continue;
        Dims shape = weights_shapes(formats[a]).front();
        cases.push_back(make_case(formats[a], b, shape, DataType::i8, DataType::f16));
        break;
      }
    }
  }
  EXPECT_GT(cases.size(), 70u);
  run_batch(*e, cases, true);
}

TEST(DeviceWeights, DataIntoEveryWeightsFormatOfTheSameRank) {
  REQUIRE_DEVICE(e);
  std::vector<Case> cases;
  for (const Format& w : supported_formats(FormatKind::weights)) {
    if (w.rank() != 4 && w.rank() != 5) continue;
    Format data = Format::parse(w.rank() == 4 ? "b_fs_yx_fsv16" : "bfzyx");
    cases.push_back(make_case(data, w, weights_shapes(w).front(), DataType::f32, DataType::bf16));
  }
  run_batch(*e, cases);
}

TEST(DeviceWeights, PaddedWeights) {
  REQUIRE_DEVICE(e);
  std::vector<Case> cases;
  for (const char* w : {"os_is_yx_osa4_isa8_osv8_isv4_swizzled_by_4", "os_iyx_osv32__ai32", "i_yxs_os_yxsv2_osv16",
                        "iy_xs_os_xsv2_osv16__ao32", "os_is_yx_isv16_osv16"})
    cases.push_back(make_case(Format::parse("oiyx"), Format::parse(w), {33, 17, 3, 3}, DataType::f32, DataType::f32,
                              {1, 2, 0, 1}, {0, 1, 1, 0}, {2, 0, 1, 0}, {1, 3, 0, 1}));
  cases.push_back(make_case(Format::parse("goiyx"), Format::parse("gs_oi_yxs_gsv16_yxsv4"), {32, 1, 1, 3, 3},
                            DataType::f32, DataType::f32, {}, {}, {1, 0, 0, 1, 0}, {0, 0, 0, 0, 1}));
  run_batch(*e, cases);
}
