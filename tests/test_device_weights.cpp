// Device tests of the weights formats on the default OpenCL device: every weights and grouped-weights
// format to and from its plain counterpart on shapes that are not block multiples (o=33, i=17, g=3;
// 3x3, 1x1 and 3x3x3 kernels; depthwise g=32, o=1, i=1), a ring of weights-to-weights pairs inside each
// rank with type conversion, and data into weights. Destinations are pre-filled, so zeros must be written.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

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

namespace {

// A model's repacks packed as a runtime keeps them: every source in one buffer and every destination in
// another, each at its own offset with untouched bytes between (`gap`, so offsets are not all aligned).
struct PackedBatch {
  std::vector<BatchItem> items;
  std::vector<uint8_t> src_bytes, dst_init;
  cl::Buffer src, dst;
};

PackedBatch pack(const Engine& e, const std::vector<Case>& cases, size_t gap) {
  PackedBatch p;
  std::vector<std::pair<size_t, size_t>> at;
  size_t s_end = 0, d_end = 0;
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    const size_t s_at = (s_end + gap + 7) / 8 * 8, d_at = (d_end + gap + 7) / 8 * 8;  // element-aligned up to i64
    at.emplace_back(s_at, d_at);
    s_end = s_at + static_cast<size_t>(c.src.bytes());
    d_end = d_at + static_cast<size_t>(c.dst.bytes());
  }
  p.src_bytes = random_bytes(s_end + gap, 3);
  p.dst_init = random_bytes(d_end + gap, 4);
  for (size_t k = 0; k < cases.size(); ++k) {
    const std::vector<uint8_t> v = visible_sources(cases[k].src, cases[k].dst.data_type(), k).front();
    std::copy(v.begin(), v.end(), p.src_bytes.begin() + static_cast<std::ptrdiff_t>(at[k].first));
  }
  p.src = cl::Buffer(e.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, p.src_bytes.size(), p.src_bytes.data());
  p.dst = cl::Buffer(e.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, p.dst_init.size(), p.dst_init.data());
  for (size_t k = 0; k < cases.size(); ++k)
    p.items.push_back(BatchItem{p.src, at[k].first, cases[k].src, p.dst, at[k].second, cases[k].dst});
  return p;
}

// The destination buffer as the host reference writes each item into the initial bytes: the rest untouched.
std::vector<uint8_t> expected(const PackedBatch& p, const Conversion& conv = {}) {
  std::vector<uint8_t> want = p.dst_init;
  for (const BatchItem& it : p.items)
    reference_reorder(it.src_layout, p.src_bytes.data() + it.src_offset, it.dst_layout, want.data() + it.dst_offset, conv);
  return want;
}

std::vector<uint8_t> read_all(const Engine& e, const cl::Buffer& b, size_t n) {
  std::vector<uint8_t> out(n);
  e.queue().enqueueReadBuffer(b, CL_TRUE, 0, n, out.data());
  return out;
}

void reset(const Engine& e, const PackedBatch& p) {
  e.queue().enqueueWriteBuffer(p.dst, CL_TRUE, 0, p.dst_init.size(), p.dst_init.data());
}

ReorderOptions with_policy(CompilePolicy policy, const std::string& force = "") {
  ReorderOptions opt;
  opt.policy = policy;
  opt.force_impl = force;
  opt.wait = true;
  return opt;
}

// A model load's kinds of repacks: weights into isv/osv blocks (f32, f16, int8 multi-level), grouped and
// depthwise weights, a conversion, padded data, a 64-bit type, and one pair twice (one function, two calls).
std::vector<Case> model_cases() {
  using T = DataType;
  auto F = [](const char* n) { return format_from_name(n); };
  return {
      make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}),
      make_case(F("oiyx"), F("os_iyx_osv16"), {20, 8, 1, 1}, T::f16, T::f16),
      make_case(F("oiyx"), F("os_is_yx_osa4_isa8_osv8_isv4"), {32, 32, 3, 3}, T::i8, T::i8),
      make_case(F("goiyx"), F("gs_oiyx_gsv16"), {19, 1, 1, 3, 3}),
      make_case(F("goiyx"), F("g_os_is_yx_isv16_osv16"), {2, 17, 5, 3, 3}, T::f32, T::f16),
      make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 5}, T::u8, T::f32, {}, {}, {0, 1, 1, 0}, {0, 2, 0, 1}),
      make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}),
      make_case(F("byxf"), F("bfyx"), {2, 5, 3, 3}, T::i64, T::i64),
  };
}

}  // namespace

// Many reorders in one launch, each result byte-exact and every other byte of the shared buffers untouched;
// the same through the shape-agnostic kernel (one launch each) and the generic one forced. (Each
// implementation forced in a batch: test_oclgrind's Sweep.BatchedLaunchesInBothTunings.)
TEST(DeviceWeights, BatchedRepacksInOneLaunch) {
  REQUIRE_DEVICE(e);
  const std::vector<Case> cases = model_cases();
  const PackedBatch p = pack(*e, cases, 24);
  const std::vector<uint8_t> want = expected(p);
  BatchResult r = reorder_batch(*e, p.items, with_policy(CompilePolicy::wait));
  EXPECT_EQ(r.launches, 1u);
  EXPECT_TRUE(r.batched);
  ASSERT_EQ(r.impls.size(), cases.size());
  EXPECT_EQ(compare_bytes(read_all(*e, p.dst, want.size()), want), "");
  EXPECT_EQ(compare_bytes(read_all(*e, p.src, p.src_bytes.size()), p.src_bytes), "") << "the sources changed";
  for (const char* force : {"agnostic", "generic"}) {
    reset(*e, p);
    r = reorder_batch(*e, p.items, with_policy(CompilePolicy::wait, force));
    EXPECT_EQ(r.launches, std::string(force) == "agnostic" ? cases.size() : 1u) << force;
    EXPECT_EQ(r.batched, std::string(force) != "agnostic") << force;
    for (const std::string& impl : r.impls) EXPECT_EQ(impl, force);
    EXPECT_EQ(compare_bytes(read_all(*e, p.dst, want.size()), want), "") << force;
  }
}

// int8 weights quantized per output channel on their way into two blocked formats, in one launch: each item's
// kernel keeps its own table of scales (named after its function; tiled's over the padded o, generic's over
// o), and the agnostic kernels one launch each.
TEST(DeviceWeights, QuantizedPerChannelInOneLaunch) {
  REQUIRE_DEVICE(e);
  using T = DataType;
  auto F = [](const char* n) { return format_from_name(n); };
  const std::vector<Case> cases = {make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}, T::f32, T::i8),
                                   make_case(F("oiyx"), F("os_iyx_osv16"), {33, 8, 1, 1}, T::f16, T::i8)};
  ReorderOptions opt = with_policy(CompilePolicy::wait);
  std::vector<float> scales(33);
  for (size_t k = 0; k < scales.size(); ++k) scales[k] = 0.25f + 0.125f * static_cast<float>(k % 7);
  opt.conversion.param(Param::dst_scale) = {scales, 0};
  opt.conversion.param(Param::dst_zero_point).values = {-3};
  const PackedBatch p = pack(*e, cases, 24);
  const std::vector<uint8_t> want = expected(p, opt.conversion);
  ASSERT_NE(want, expected(p)) << "the scales change nothing";
  BatchResult r = reorder_batch(*e, p.items, opt);
  EXPECT_EQ(r.launches, 1u);
  EXPECT_TRUE(r.batched);
  for (const std::string& impl : r.impls) EXPECT_EQ(impl, "tiled");
  EXPECT_EQ(compare_bytes(read_all(*e, p.dst, want.size()), want), "");
  for (const char* force : {"generic", "agnostic"}) {
    reset(*e, p);
    opt.force_impl = force;
    r = reorder_batch(*e, p.items, opt);
    EXPECT_EQ(r.launches, std::string(force) == "agnostic" ? cases.size() : 1u) << force;
    EXPECT_EQ(compare_bytes(read_all(*e, p.dst, want.size()), want), "") << force;
  }
  // Scales that fit the first item's o but not another's are refused naming that item, before any launch.
  const Case narrow = make_case(F("oiyx"), F("os_iyx_osv16"), {16, 8, 1, 1}, T::f32, T::i8);
  const PackedBatch q = pack(*e, {cases[0], narrow}, 8);
  EXPECT_NE(error_of([&] { reorder_batch(*e, q.items, opt); }).find("batch item 1"), std::string::npos);
  // Values that cannot apply are refused under every policy though a batch of this shape just ran (its
  // kernel cached), naming the value; nothing is written. The batch call checks only the values' shapes:
  // this fails if a plan (the batch's or an item's own under `agnostic`) takes values unchecked.
  opt.force_impl.clear();
  reset(*e, p);
  for (const CompilePolicy policy : {CompilePolicy::wait, CompilePolicy::background, CompilePolicy::agnostic}) {
    ReorderOptions worse = opt;
    worse.policy = policy;
    worse.conversion.param(Param::dst_scale).values[20] = NAN;
    const std::string err = error_of([&] { reorder_batch(*e, p.items, worse); });
    EXPECT_NE(err.find("index 20) is not finite"), std::string::npos) << err;
    EXPECT_EQ(compare_bytes(read_all(*e, p.dst, p.dst_init.size()), p.dst_init), "") << err;
  }
}

// More items than one launch takes: split into launches of kMaxBatchItems (or the caller's bound), one event for
// all of them.
// Under `background`, a new list runs item by item until its batch kernel is compiled, then batched.
TEST(DeviceWeights, BatchesSplitAtTheDeviceLimitAndCompileInTheBackground) {
  REQUIRE_DEVICE(e);
  using T = DataType;
  const std::vector<Case> kinds = {
      make_case(format_from_name("oiyx"), format_from_name("os_iyx_osv16"), {17, 3, 1, 1}),
      make_case(format_from_name("bfyx"), format_from_name("byxf"), {1, 5, 2, 3}, T::f16, T::f32),
      make_case(format_from_name("goiyx"), format_from_name("gs_oiyx_gsv16"), {17, 1, 1, 3, 3}, T::i8, T::i8)};
  std::vector<Case> cases;
  for (size_t k = 0; k < kMaxBatchItems + 6; ++k) cases.push_back(kinds[k % kinds.size()]);
  const PackedBatch p = pack(*e, cases, 4);
  const std::vector<uint8_t> want = expected(p);
  // Launches as the device's argument space splits the list (batch_fits(): two buffers here, so 64 items
  // where it holds at least 1048 bytes, 56 where it holds 1024).
  auto launches_for = [&](size_t items, size_t bound) {
    size_t count = 0;
    for (size_t left = items; left > 0; ++count) {
      size_t k = 1;
      while (k < std::min(left, bound) && batch_fits(e->info(), 2, k + 1)) ++k;
      left -= k;
    }
    return count;
  };
  BatchResult r = reorder_batch(*e, p.items, with_policy(CompilePolicy::wait));
  EXPECT_EQ(r.launches, launches_for(cases.size(), kMaxBatchItems));
  EXPECT_TRUE(r.batched);
  EXPECT_EQ(compare_bytes(read_all(*e, p.dst, want.size()), want), "");
  // A caller's bound on the items per launch (ReorderOptions::batch_launch_items): 70 items at most 16 a launch.
  reset(*e, p);
  ReorderOptions sixteen = with_policy(CompilePolicy::wait);
  sixteen.batch_launch_items = 16;
  r = reorder_batch(*e, p.items, sixteen);
  EXPECT_EQ(r.launches, launches_for(cases.size(), 16));
  EXPECT_EQ(r.impls.size(), cases.size());
  EXPECT_EQ(compare_bytes(read_all(*e, p.dst, want.size()), want), "");

  // A list no earlier call used (another shape): under `background`, exact at once, batched once compiled.
  std::vector<Case> fresh = {make_case(format_from_name("oiyx"), format_from_name("os_is_yx_isv16_osv16"), {21, 11, 3, 1}),
                             make_case(format_from_name("oiyx"), format_from_name("os_iyx_osv16"), {21, 11, 1, 3})};
  const PackedBatch f = pack(*e, fresh, 16);
  const std::vector<uint8_t> f_want = expected(f);
  r = reorder_batch(*e, f.items, with_policy(CompilePolicy::background));
  EXPECT_EQ(compare_bytes(read_all(*e, f.dst, f_want.size()), f_want), "");
  if (!r.batched) {
    EXPECT_EQ(r.launches, fresh.size());
    for (const std::string& impl : r.impls) EXPECT_EQ(impl, "agnostic");
  }
  wait_for_background_compiles();
  reset(*e, f);
  r = reorder_batch(*e, f.items, with_policy(CompilePolicy::background));
  EXPECT_TRUE(r.batched);
  EXPECT_EQ(r.launches, 1u);
  EXPECT_EQ(compare_bytes(read_all(*e, f.dst, f_want.size()), f_want), "");

  // An empty list: only a marker, after the wait list.
  r = reorder_batch(*e, {}, with_policy(CompilePolicy::wait));
  EXPECT_EQ(r.launches, 0u);
  EXPECT_EQ(r.event.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>(), CL_COMPLETE);
}

// Items that would race (a destination over another item's source or destination) and bad items are refused
// by index before anything runs: the destination buffer keeps every byte.
TEST(DeviceWeights, BadBatchesNameTheItemAndWriteNothing) {
  REQUIRE_DEVICE(e);
  const std::vector<Case> cases = model_cases();
  const PackedBatch p = pack(*e, cases, 24);
  auto refused = [&](std::vector<BatchItem> items, const std::string& words) {
    const std::string err = error_of([&] { reorder_batch(*e, items, with_policy(CompilePolicy::wait)); });
    EXPECT_NE(err.find(words), std::string::npos) << err;
    EXPECT_EQ(compare_bytes(read_all(*e, p.dst, p.dst_init.size()), p.dst_init), "") << words;
  };
  std::vector<BatchItem> items = p.items;
  items[3].dst_offset = items[2].dst_offset + 8;
  refused(items, "batch item 2's destination (bytes [");
  items = p.items;
  items[5].dst = p.src;
  items[5].dst_offset = items[1].src_offset;
  refused(items, "overlaps item 1's source");
  items = p.items;
  items[4].dst_offset = p.dst_init.size();
  refused(items, "batch item 4 (");
  items = p.items;
  items[6].src = cl::Buffer();
  refused(items, "batch item 6 (");
  items = p.items;
  items[7].src_offset = 3;
  refused(items, "byte offset 3 is not a multiple");
  // A forced implementation that declines an item of the second launch: the first launch is not enqueued either.
  std::vector<Case> many(kMaxBatchItems, make_case(format_from_name("oiyx"), format_from_name("os_is_yx_osa4_isa8_osv8_isv4"),
                                                   {32, 32, 3, 3}, DataType::i8, DataType::i8));
  many.push_back(cases.front());
  const PackedBatch q = pack(*e, many, 8);
  const std::string err = error_of([&] { reorder_batch(*e, q.items, with_policy(CompilePolicy::wait, "lanes")); });
  EXPECT_NE(err.find("implementation 'lanes' declines"), std::string::npos) << err;
  EXPECT_EQ(compare_bytes(read_all(*e, q.dst, q.dst_init.size()), q.dst_init), "") << "a launch ran before the refusal";
}

// The overlap check sorts the ranges and compares each with the earlier one reaching furthest, not every pair:
// random lists of items in one buffer (sources and destinations mixed, sizes of 1 to 16 elements) are refused
// exactly when some pair of them would race, as every pair compared says, and run exactly otherwise.
TEST(DeviceWeights, BatchOverlapsFoundAsEveryPairFindsThem) {
  REQUIRE_DEVICE(e);
  std::mt19937 rng(20261128);
  const size_t bytes = 1024;
  std::vector<uint8_t> init = random_bytes(bytes, 5);
  cl::Buffer buf(e->context(), CL_MEM_READ_WRITE, bytes);
  int refusals = 0, runs = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = 2 + rng() % 7;
    std::vector<BatchItem> items;
    std::vector<std::pair<size_t, size_t>> src, dst;  // byte ranges
    for (size_t k = 0; k < n; ++k) {
      const int64_t len = 1 + static_cast<int64_t>(rng() % 16);
      const Layout a(format_from_name("bfyx"), DataType::f32, {1, 1, 1, len});
      const size_t s = 4 * (rng() % ((bytes - 64) / 4)), d = 4 * (rng() % ((bytes - 64) / 4));
      items.push_back(BatchItem{buf, s, a, buf, d, a});
      src.emplace_back(s, s + 4 * static_cast<size_t>(len));
      dst.emplace_back(d, d + 4 * static_cast<size_t>(len));
    }
    auto meet = [](const std::pair<size_t, size_t>& x, const std::pair<size_t, size_t>& y) {
      return x.first < y.second && y.first < x.second;
    };
    bool races = false;
    for (size_t k = 0; k < n; ++k)
      for (size_t j = 0; j < n; ++j)
        races = races || meet(dst[k], src[j]) || (j != k && meet(dst[k], dst[j]));
    e->queue().enqueueWriteBuffer(buf, CL_TRUE, 0, bytes, init.data());
    // On the shape-agnostic kernel, item by item (the lists' shapes would each compile a batch kernel): the
    // same checks before anything runs.
    const std::string err = error_of([&] {
      reorder_batch(*e, items, with_policy(CompilePolicy::agnostic));
      e->queue().finish();
    });
    if (races) {
      ++refusals;
      const bool named =
          err.find("overlaps item") != std::string::npos || err.find("source and destination overlap") != std::string::npos;
      EXPECT_TRUE(named) << "trial " << trial << ": " << err;
      EXPECT_EQ(compare_bytes(read_all(*e, buf, bytes), init), "") << "trial " << trial << " wrote before its refusal";
    } else {
      ++runs;
      EXPECT_EQ(err, "") << "trial " << trial;
      std::vector<uint8_t> want = init;
      for (size_t k = 0; k < n; ++k) std::copy(init.begin() + static_cast<std::ptrdiff_t>(src[k].first),
                                               init.begin() + static_cast<std::ptrdiff_t>(src[k].second),
                                               want.begin() + static_cast<std::ptrdiff_t>(dst[k].first));
      EXPECT_EQ(compare_bytes(read_all(*e, buf, bytes), want), "") << "trial " << trial;
    }
  }
  // Both outcomes drawn often enough to mean something.
  EXPECT_GT(refusals, 50);
  EXPECT_GT(runs, 20);
}
