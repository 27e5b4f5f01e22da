// Host tests of the layout families of the seed documents beside OpenVINO's names: oneDNN tags by grammar
// (FORMATS.md section 2), explicit strides and views.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "clreorder/error.hpp"
#include "clreorder/format.hpp"
#include "clreorder/layout.hpp"
#include "clreorder/reference.hpp"
#include "clreorder/reorder.hpp"
#include "plan_checks.hpp"
#include "test_support.hpp"

using namespace clreorder;
using clreorder_test::error_of;

namespace {

// Whether two formats put every element of `shape` at the same offset and span the same elements (kinds
// may differ: a positional tag reads as data, its OpenVINO twin may be weights).
std::string same_elements(const Format& a, const Format& b, const Dims& shape) {
  const Layout la(a, DataType::f32, shape), lb(b, DataType::f32, shape);
  if (la.elements() != lb.elements())
    return a.name() + " spans " + std::to_string(la.elements()) + ", " + b.name() + " " + std::to_string(lb.elements());
  Dims c(shape.size(), 0);
  for (;;) {
    if (la.offset(c) != lb.offset(c)) return a.name() + " and " + b.name() + " differ at " + dims_to_string(c, ",");
    size_t k = shape.size();
    while (k-- > 0 && ++c[k] == shape[k]) c[k] = 0;
    if (k == static_cast<size_t>(-1)) return "";
  }
}

Dims odd_shape(int rank) {
  const Dims all = {3, 19, 5, 3, 2, 2, 2, 2};
  return Dims(all.begin(), all.begin() + rank);
}

}  // namespace

// FORMATS.md section 2, row by row: the letter tag resolves to the OpenVINO format by name, and the
// positional form has the same element order (its own name where it reads as data).
TEST(OneDnnTags, FormatsMdTableResolvesByGrammar) {
  struct Row {
    const char *openvino, *tag, *abc;
  };
  const Row rows[] = {{"bfyx", "nchw", "abcd"},
                      {"byxf", "nhwc", "acdb"},
                      {"bfzyx", "ncdhw", "abcde"},
                      {"bzyxf", "ndhwc", "acdeb"},
                      {"fyxb", "chwn", "bcda"},
                      {"b_fs_yx_fsv8", "nChw8c", "aBcd8b"},
                      {"b_fs_yx_fsv16", "nChw16c", "aBcd16b"},
                      {"b_fs_yx_fsv32", "nChw32c", "aBcd32b"},
                      {"b_fs_zyx_fsv16", "nCdhw16c", "aBcde16b"},
                      {"bs_fs_yx_bsv16_fsv16", "NChw16n16c", "ABcd16a16b"},
                      {"oiyx", "oihw", "abcd"},
                      {"os_iyx_osv16", "Oihw16o", "Abcd16a"},
                      {"os_yxi_osv16", "Ohwi16o", "Acdb16a"},
                      {"os_is_yx_isv16_osv16", "OIhw16i16o", "ABcd16b16a"},
                      {"is_os_yx_isv16_osv16", "IOhw16i16o", "BAcd16b16a"},
                      {"os_is_yx_osv16_isv16", "OIhw16o16i", "ABcd16a16b"},
                      {"goiyx", "goihw", "abcde"},
                      {"g_os_is_yx_isv16_osv16", "gOIhw16i16o", "aBCde16c16b"},
                      {"g_is_os_yx_isv16_osv16", "gIOhw16i16o", "aCBde16c16b"},
                      {"gs_oiyx_gsv16", "Goihw16g", "Abcde16a"}};
  for (const Row& r : rows) {
    const Format ov = Format::parse(r.openvino);
    EXPECT_EQ(format_from_name(r.tag).name(), r.openvino) << r.tag;
    const Format abc = format_from_name(r.abc);
    EXPECT_EQ(same_elements(abc, ov, odd_shape(ov.rank())), "") << r.abc;
    if (ov.kind() == FormatKind::data) {
      EXPECT_EQ(abc.name(), r.openvino) << r.abc;
    }
    // And back: the format's own tags are these.
    EXPECT_EQ(onednn_tag(ov, false), r.tag);
    if (ov.kind() == FormatKind::data) {
      EXPECT_EQ(onednn_tag(ov, true), r.abc);
    }
  }
}

// The other tags, nested blocks included, with offsets worked out by hand from the grammar's rule.
TEST(OneDnnTags, NestedBlocksFollowTheFirstWrittenIsCoarserRule) {
  // ABcd8b16a2b: A = b/16, B = f/16, c, d, 8b = (f/2)%8, 16a = b%16, 2b = f%2.
  const Layout l(format_from_name("ABcd8b16a2b"), DataType::f32, {32, 32, 2, 3});
  EXPECT_EQ(l.format().name(), "bs_fs_yx_fsv8_bsv16_fsv2");
  const int64_t b = 21, f = 29, y = 1, x = 2;
  const int64_t inner = ((f / 2) % 8) * 32 + (b % 16) * 2 + f % 2;  // 8b, 16a, 2b: 8 * 16 * 2 = 256 per (c, d)
  EXPECT_EQ(l.offset({b, f, y, x}), (((b / 16) * 2 + f / 16) * 6 + y * 3 + x) * 256 + inner);
  // OIhw4i16o4i: OpenVINO's isa4 / osv16 / isv4 pattern (the letter a or v does not change the order).
  EXPECT_EQ(format_from_name("OIhw4i16o4i"), Format::parse("os_is_yx_isa4_osv16_isv4"));
  for (const char* tag : {"ncw", "nwc", "nc", "oi", "oiw", "oidhw", "goidhw", "abcdef", "acdeb", "Acdb16a",
                          "nCdhw8c", "NCdhw16n16c", "gOIdhw16i16o", "Goidhw16g", "ABcde4b16a4b"}) {
    const Format f = format_from_name(tag);
    // Printing it back gives the same element order.
    const std::string again = onednn_tag(f, false).empty() ? onednn_tag(f, true) : onednn_tag(f, false);
    ASSERT_FALSE(again.empty()) << tag;
    EXPECT_EQ(same_elements(format_from_name(again), f, odd_shape(f.rank())), "") << tag << " -> " << again;
  }
}

// Every registered format that oneDNN's grammar can say prints as tags that parse back to its element order.
TEST(OneDnnTags, EveryRegisteredFormatRoundTripsThroughItsTags) {
  int tags = 0;
  for (const FormatEntry& e : registry()) {
    if (!e.unsupported.empty()) continue;
    const Format f = Format::parse(e.name);
    for (bool positional : {false, true}) {
      const std::string tag = onednn_tag(f, positional);
      if (tag.empty()) continue;
      ++tags;
      EXPECT_EQ(same_elements(format_from_name(tag), f, odd_shape(f.rank())), "") << e.name << " as " << tag;
    }
    for (const std::string& alias : aliases_of(f))
      EXPECT_EQ(same_elements(format_from_name(alias), f, odd_shape(f.rank())), "") << e.name << " alias " << alias;
  }
  EXPECT_GT(tags, 150);
}

TEST(OneDnnTags, MalformedTagsNameTheTagAndThePart) {
  const std::pair<const char*, const char*> bad[] = {
      {"nChw16", "ends in a number"},          {"nChw16C", "lower case"},
      {"nchw16c", "must be written 'C'"},     {"nCHw16c", "'H' is upper case but has no block"},
      {"nCCw16c", "appears twice"},           {"aBcd16b16e", "no outer axis 'E'"},
      {"nChw0c", "must be 1 to 999999999"},   {"nkhw", "letter 'k'"},
      {"abcdefghi", "2 to 8 axes"},           {"nChw16c!", "not a valid"}};
  for (const auto& [tag, part] : bad) {
    const std::string err = error_of([t = tag] { format_from_name(t); });
    EXPECT_NE(err.find(std::string("'") + tag + "'"), std::string::npos) << err;
    if (std::string(tag) != "nChw16c!") {
      EXPECT_NE(err.find(part), std::string::npos) << tag << ": " << err;
    }
  }
}

// ---- Explicit strides and views (PyTorch's sizes/strides/storage_offset, oneDNN's strided descriptors) ----

namespace {

Layout strided(const char* fmt, Dims dims, Dims strides, int64_t offset = 0, DataType t = DataType::f32) {
  return Layout(format_from_name(fmt), t, std::move(dims), {}, {}, std::move(strides), offset);
}

}  // namespace

// A PyTorch channels_last tensor is bfyx with NHWC strides: the same plan as byxf, said by name.
TEST(Strides, PermutedDenseStridesAreTheNamedFormat) {
  const Layout view = strided("bfyx", {2, 3, 4, 5}, {60, 1, 15, 3});
  const Layout byxf(Format::parse("byxf"), DataType::f32, {2, 3, 4, 5});
  EXPECT_TRUE(same_elements(view, byxf));
  EXPECT_TRUE(view.plan().dense());
  EXPECT_EQ(view.overlap(), "");
  EXPECT_EQ(named_equivalent(view), "byxf (channels_last, nhwc, acdb)");
  EXPECT_EQ(named_equivalent(strided("bfyx", {2, 3, 4, 5}, {60, 20, 5, 1})), "bfyx (contiguous_format, nchw, abcd)");
  // A blocked format's outer strides, dense: the format itself.
  EXPECT_TRUE(same_elements(strided("b_fs_yx_fsv16", {2, 20, 3, 5}, {480, 240, 80, 16}),
                            Layout(Format::parse("b_fs_yx_fsv16"), DataType::f32, {2, 20, 3, 5})));
}

// A slice of a bigger tensor: offsets from the strides and the base, gaps between rows that are not its.
TEST(Strides, ASliceOfABiggerTensorHasGaps) {
  // x[1:3, 1:4, 2:6, 1:6] of a (3, 8, 6, 7) bfyx tensor.
  const Layout s = strided("bfyx", {2, 3, 4, 5}, {336, 42, 7, 1}, 336 + 42 + 14 + 1);
  EXPECT_EQ(s.offset({1, 2, 3, 4}), 393 + 336 + 84 + 21 + 4);
  EXPECT_EQ(s.elements(), 393 + 336 + 2 * 42 + 3 * 7 + 4 + 1);
  EXPECT_EQ(s.plan().digit_space, 120);
  EXPECT_FALSE(s.plan().dense());
  EXPECT_EQ(s.overlap(), "");
  EXPECT_EQ(named_equivalent(s), "");
  EXPECT_NE(s.describe().find("strides 336,42,7,1 offset 393"), std::string::npos) << s.describe();
  // A blocked layout with room between its blocks: b, fs, y, x strides; f % 16 dense inside.
  const Layout b = strided("b_fs_yx_fsv16", {2, 20, 3, 5}, {1000, 300, 96, 16});
  EXPECT_EQ(b.offset({1, 17, 2, 4}), 1000 + 300 + 2 * 96 + 4 * 16 + 1);
  EXPECT_EQ(b.overlap(), "");
}

// Stride 0 repeats an element: fine to read, refused as a destination, naming the strides; elements that
// interleave without meeting are found disjoint by the exact test, ones that meet are named.
TEST(Strides, OverlapIsFoundAndRefusedForDestinations) {
  const Layout bcast = strided("bfyx", {2, 3, 4, 5}, {0, 1, 0, 0});
  EXPECT_NE(bcast.overlap().find("strides 0,1,0,0"), std::string::npos) << bcast.overlap();
  const Layout dense(Format::parse("bfyx"), DataType::f32, {2, 3, 4, 5});
  EXPECT_NO_THROW(check_compatible(bcast, dense));
  const std::string err = error_of([&] { check_compatible(dense, bcast); });
  EXPECT_NE(err.find("strides 0,1,0,0"), std::string::npos) << err;
  EXPECT_EQ(strided("bf", {2, 3}, {3, 2}).overlap(), "");  // offsets 0 2 4 / 3 5 7
  EXPECT_NE(strided("bf", {2, 3}, {1, 1}).overlap().find("two elements at offset 1"), std::string::npos);
  EXPECT_NE(strided("bf", {3, 16}, {8, 1}).overlap(), "");
  // Blocked: an fs stride smaller than the 16-element block it steps over.
  EXPECT_NE(strided("b_fs_yx_fsv16", {1, 32, 1, 1}, {64, 8, 16, 16}).overlap(), "");
  // The reference writes nothing into a refused destination.
  std::vector<uint8_t> src(static_cast<size_t>(dense.bytes()), 1), dst(static_cast<size_t>(bcast.bytes()), 7);
  EXPECT_THROW(reference_reorder(dense, src.data(), bcast, dst.data()), Error);
  EXPECT_EQ(dst, std::vector<uint8_t>(dst.size(), 7));
}

TEST(Strides, BadStridesAndOffsetsNameTheValue) {
  const Format bfyx = Format::parse("bfyx");
  const std::pair<std::function<void()>, const char*> bad[] = {
      {[&] { Layout(bfyx, DataType::f32, {2, 3, 4, 5}, {}, {}, {1, 2, 3}); }, "strides 1,2,3 must have 4 values"},
      {[&] { Layout(bfyx, DataType::f32, {2, 3, 4, 5}, {}, {}, {60, -1, 5, 1}); }, "stride of axis f is negative"},
      {[&] { Layout(bfyx, DataType::f32, {4, 3, 4, 5}, {}, {}, {int64_t(1) << 49, 1, 1, 1}); }, "over 2^50"},
      {[&] { Layout(bfyx, DataType::f32, {2, 3, 4, 5}, {}, {}, {60, 20, 5, 1}, -3); }, "base offset -3 is negative"},
      {[&] { Layout(bfyx, DataType::f32, {2, 3, 4, 5}, {}, {}, {}, int64_t(1) << 50); }, "base offset 1125899906842624"},
      {[&] { Layout(Format::parse("gs_oi_yxs_gsv16_yxsv4"), DataType::f32, {16, 2, 2, 3, 3}, {}, {}, {1, 1, 1, 1, 1}); },
       "fuses axes"}};
  for (const auto& [f, want] : bad) {
    const std::string err = error_of(f);
    EXPECT_NE(err.find(want), std::string::npos) << want << ": " << err;
  }
}

// PyTorch's preserve_format: a dense, non-overlapping input keeps its strides; a view with gaps or repeats
// becomes contiguous.
TEST(Strides, PreserveFormatKeepsDenseLayoutsOnly) {
  const Layout cl = strided("bfyx", {2, 3, 4, 5}, {60, 1, 15, 3});
  EXPECT_EQ(preserve_format(cl, DataType::f16).strides(), cl.strides());
  EXPECT_EQ(preserve_format(cl, DataType::f16).data_type(), DataType::f16);
  const Layout slice = strided("bfyx", {2, 3, 4, 5}, {336, 42, 7, 1}, 5);
  const Layout c = preserve_format(slice, DataType::f32);
  EXPECT_TRUE(c.strides().empty());
  EXPECT_EQ(c.format().name(), "bfyx");
  EXPECT_TRUE(preserve_format(strided("bfyx", {2, 3, 4, 5}, {0, 1, 0, 0}), DataType::f32).strides().empty());
  const Layout blocked(Format::parse("b_fs_yx_fsv16"), DataType::f32, {2, 20, 3, 5});
  EXPECT_EQ(preserve_format(blocked, DataType::f32).format().name(), "b_fs_yx_fsv16");
}

// A strided layout equal to a named format takes that format's path through the selector: the same
// implementation and the same generated kernel, in both tunings, as source and as destination.
TEST(Strides, ANamedLayoutAsStridesGetsTheSameKernels) {
  const Dims shape = {2, 32, 7, 9};
  const Layout bfyx(Format::parse("bfyx"), DataType::f32, shape), byxf(Format::parse("byxf"), DataType::f16, shape);
  const Layout as_byxf = strided("bfyx", shape, {7 * 9 * 32, 1, 9 * 32, 32}, 0, DataType::f16);
  const Layout fsv16(Format::parse("b_fs_yx_fsv16"), DataType::f32, shape);
  const Layout as_fsv16 = strided("b_fs_yx_fsv16", shape, {2 * 7 * 9 * 16, 7 * 9 * 16, 9 * 16, 16});
  for (const char* type : {"cpu", "gpu"}) {
    const DeviceInfo dev = clreorder_test::tuned_device(type);
    EXPECT_EQ(plan_reorder(dev, bfyx, byxf).source.code, plan_reorder(dev, bfyx, as_byxf).source.code) << type;
    EXPECT_EQ(plan_reorder(dev, byxf, bfyx).source.code, plan_reorder(dev, as_byxf, bfyx).source.code) << type;
    EXPECT_EQ(plan_reorder(dev, byxf, fsv16).source.code, plan_reorder(dev, as_byxf, as_fsv16).source.code) << type;
  }
}

// The one offset model holds for strided layouts: each is a bijection onto its owned slots, and the strided
// permutation the specialised kernels walk agrees with both plans tuple by tuple, gaps never written.
TEST(Strides, PlansAndPermutationsOfViews) {
  const Dims shape = {2, 19, 5, 7};
  const Layout views[] = {strided("bfyx", shape, {24 * 77, 77, 11, 1}, 90), strided("bfyx", shape, {7 * 11 * 24, 1, 11 * 24, 24}, 313),
                          strided("bfyx", shape, {19 * 16 * 8, 16 * 8, 16, 2}),
                          strided("b_fs_yx_fsv16", shape, {1000, 300, 96, 16}, 7), strided("byxf", shape, {0, 1, 0, 0})};
  int checked = 0;
  for (const Layout& v : views) {
    if (v.overlap().empty()) {
      EXPECT_EQ(clreorder_test::plan_bijection_error(v), "") << v.describe();
    }
    for (const char* f : {"bfyx", "byxf", "b_fs_yx_fsv16", "fs_b_yx_fsv32", "bs_fs_yx_bsv16_fsv16"}) {
      const Layout d(Format::parse(f), DataType::f32, shape);
      EXPECT_EQ(clreorder_test::check_permutation(v, d), "") << v.describe() << " -> " << f;
      if (v.overlap().empty()) {
        EXPECT_EQ(clreorder_test::check_permutation(d, v), "") << f << " -> " << v.describe();
      }
      checked += 2;
    }
  }
  EXPECT_EQ(checked, 50);
}

// ---- Sophgo TPU local memory (seed 001), every worked example ----

namespace {

Layout tpu(const std::string& spec, Dims dims, DataType t = DataType::f32) {
  return Layout(format_from_name(spec), t, std::move(dims));
}

// Byte address of element `c` of a TPU layout, and its NPU and offset inside that NPU.
struct Where {
  int64_t npu, offset;
};
Where where_of(const Layout& l, const Dims& c) {
  const int64_t byte = l.offset(c) * static_cast<int64_t>(size_of(l.data_type()));
  return {byte / l.format().tpu()->npu_bytes, byte % l.format().tpu()->npu_bytes};
}

}  // namespace

TEST(Tpu, AddressesAndChannelsPerNpu) {
  // X = 4, S = 1024: A = 340, B = 1472, C = 2300, D = 3088 start at NPU 0/1/2/3, offsets 340/448/252/16.
  const std::pair<int64_t, Where> addrs[] = {{340, {0, 340}}, {1472, {1, 448}}, {2300, {2, 252}}, {3088, {3, 16}}};
  for (const auto& [a, w] : addrs) {
    const Layout l = tpu("tpu_compact(npus=4,npu_bytes=1024,addr=" + std::to_string(a) + ")", {1, 1, 1, 1});
    EXPECT_EQ(where_of(l, {0, 0, 0, 0}).npu, w.npu) << a;
    EXPECT_EQ(where_of(l, {0, 0, 0, 0}).offset, w.offset) << a;
  }
  // Channels per NPU: C = X - 1 at NPU 0 and 1 -> 1; C = X + 2 at NPU 0 -> 2, at NPU X - 1 -> 3.
  const int64_t x = 4;
  EXPECT_EQ(tpu_channels_per_npu(0, x - 1, x), 1);
  EXPECT_EQ(tpu_channels_per_npu(1, x - 1, x), 1);
  EXPECT_EQ(tpu_channels_per_npu(x - 1, x - 1, x), 2);
  EXPECT_EQ(tpu_channels_per_npu(0, x + 2, x), 2);
  EXPECT_EQ(tpu_channels_per_npu(1, x + 2, x), 2);
  EXPECT_EQ(tpu_channels_per_npu(x - 1, x + 2, x), 3);
  // C = X + 2 from NPU X - 1: channel c is on NPU (X - 1 + c) mod X, slot (X - 1 + c) div X.
  const Layout l = tpu("tpu_compact(npus=4,npu_bytes=1024,addr=3072)", {1, 6, 1, 1});
  for (int64_t c = 0; c < 6; ++c) {
    EXPECT_EQ(where_of(l, {0, c, 0, 0}).npu, (3 + c) % 4) << c;
    EXPECT_EQ(where_of(l, {0, c, 0, 0}).offset, (3 + c) / 4 * 4) << c;  // compact: C stride = H * W = 1 element
  }
}

TEST(Tpu, LocalStridesOfTheSeed) {
  // (2,5,3,4) fp32 at NPU 0, W/H/C/N strides 2/16/56/120.
  const Layout a = tpu("tpu_local(npus=4,npu_bytes=1024,addr=0,strides=120:56:16:2)", {2, 5, 3, 4});
  for (const Dims& c : {Dims{0, 0, 0, 0}, Dims{1, 4, 2, 3}, Dims{0, 3, 1, 2}, Dims{1, 1, 0, 1}}) {
    EXPECT_EQ(where_of(a, c).npu, c[1] % 4);
    EXPECT_EQ(where_of(a, c).offset, 4 * (c[1] / 4 * 56 + c[0] * 120 + c[2] * 16 + c[3] * 2));
  }
  // (2,3,1,10) fp32 at NPU 1, W/N strides 2/120 (H and C strides make no sense there: H = 1, one channel per NPU).
  const Layout b = tpu("tpu_local(npus=4,npu_bytes=1024,addr=1024,strides=120:0:0:2)", {2, 3, 1, 10});
  EXPECT_EQ(b.overlap(), "");
  for (const Dims& c : {Dims{0, 0, 0, 0}, Dims{1, 2, 0, 9}, Dims{0, 1, 0, 5}}) {
    EXPECT_EQ(where_of(b, c).npu, 1 + c[1]);
    EXPECT_EQ(where_of(b, c).offset, 4 * (c[0] * 120 + c[3] * 2));
  }
  EXPECT_EQ(b.bytes(), 4096);  // the buffer is the whole local memory
}

TEST(Tpu, AlignedAndCompactOfTheSeed) {
  // (2,3,4,5) fp32: aligned C stride ceil(20 / 32) * 32 = 32; N stride 32 at NPU 0 (1 channel per NPU), 64 at
  // NPU 2 (2). Compact: C stride 20, N stride 20 or 40.
  const struct {
    const char* spec;
    int64_t q, cs, ns;
  } cases[] = {{"tpu_aligned(npus=4,npu_bytes=1024,addr=0)", 0, 32, 32},
               {"tpu_aligned(npus=4,npu_bytes=1024,addr=2048)", 2, 32, 64},
               {"tpu_compact(npus=4,npu_bytes=1024,addr=0)", 0, 20, 20},
               {"tpu_compact(npus=4,npu_bytes=1024,addr=2048)", 2, 20, 40}};
  for (const auto& k : cases) {
    const Layout l = tpu(k.spec, {2, 3, 4, 5});
    for (const Dims& c : {Dims{0, 0, 0, 0}, Dims{1, 2, 3, 4}, Dims{1, 1, 2, 0}}) {
      EXPECT_EQ(where_of(l, c).npu, (k.q + c[1]) % 4) << k.spec;
      EXPECT_EQ(where_of(l, c).offset, 4 * ((k.q + c[1]) / 4 * k.cs + c[0] * k.ns + c[2] * 5 + c[3])) << k.spec;
    }
  }
}

TEST(Tpu, MatrixOfTheSeed) {
  // A 2 x 40 fp32 matrix as (2, ceil(40 / W), 1, W) aligned: W = 40, 20, 10, 8, 15, 6.
  for (int64_t w : {40, 20, 10, 8, 15, 6}) {
    const Layout l = tpu("tpu_matrix(npus=4,npu_bytes=1024,addr=0,w=" + std::to_string(w) + ")", {2, 40});
    const int64_t channels = (40 + w - 1) / w, cs = (w + 31) / 32 * 32, ns = cs * tpu_channels_per_npu(0, channels, 4);
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t m = 0; m < 40; ++m) {
        const int64_t c = m / w;
        ASSERT_EQ(where_of(l, {n, m}).npu, c % 4) << w << " " << m;
        ASSERT_EQ(where_of(l, {n, m}).offset, 4 * (c / 4 * cs + n * ns + m % w)) << w << " " << m;
      }
  }
  EXPECT_NE(error_of([] { tpu("tpu_matrix(npus=4,npu_bytes=1024,addr=0,w=41)", {2, 40}); }).find("w=41"), std::string::npos);
  EXPECT_NE(error_of([] { tpu("tpu_matrix(npus=4,npu_bytes=1024,addr=2052,w=8)", {2, 40}); }).find("addr=2052 is not divisible by 128"),
            std::string::npos);
}

TEST(Tpu, StorageModesOfTheSeed) {
  // 4N: (6,5,4,5) int8 -> (2,5,4,5) int8x4, aligned: C stride ceil(20 / 32) * 32 = 32 words, 2 channels per
  // NPU, N stride 64 words; element n sits in byte n % 4 of its word.
  const Layout n4 = tpu("tpu_aligned(npus=4,npu_bytes=1024,addr=0,mode=4n)", {6, 5, 4, 5}, DataType::i8);
  for (const Dims& c : {Dims{0, 0, 0, 0}, Dims{5, 4, 3, 4}, Dims{3, 1, 2, 2}})
    EXPECT_EQ(where_of(n4, c).offset, 4 * (c[1] / 4 * 32 + c[0] / 4 * 64 + c[2] * 5 + c[3]) + c[0] % 4);
  // 2N: (3,5,4,5) int16 -> (2,5,4,5) int16x2: the same word strides, element n in half n % 2.
  const Layout n2 = tpu("tpu_aligned(npus=4,npu_bytes=1024,addr=0,mode=2n)", {3, 5, 4, 5}, DataType::i16);
  for (const Dims& c : {Dims{0, 0, 0, 0}, Dims{2, 4, 3, 4}, Dims{1, 1, 2, 2}})
    EXPECT_EQ(where_of(n2, c).offset, 4 * (c[1] / 4 * 32 + c[0] / 2 * 64 + c[2] * 5 + c[3]) + 2 * (c[0] % 2));
  // 2IC: fp32 weights [I, O, H, W] = oiyx (5, 3, 2, 2): pairs of input channels in one fp32x2.
  const Layout ic = Layout(format_from_name("tpu_compact(npus=4,npu_bytes=1024,addr=0,mode=2ic)"), DataType::f32, {5, 3, 2, 2});
  EXPECT_EQ(ic.format().kind(), FormatKind::weights);
  for (const Dims& c : {Dims{0, 0, 0, 0}, Dims{4, 2, 1, 1}, Dims{2, 1, 0, 1}})  // (o, i, y, x): C = o, N = i
    EXPECT_EQ(where_of(ic, c).offset, 8 * (c[0] / 4 * 4 + c[1] / 2 * 8 + c[2] * 2 + c[3]) + 4 * (c[1] % 2));
  for (const Layout* l : {&n4, &n2, &ic}) EXPECT_EQ(clreorder_test::plan_bijection_error(*l), "") << l->describe();
  // A TPU layout never equals a named one, even where its offsets match: the other slots are not its own.
  const Layout one = tpu("tpu_compact(npus=1,npu_bytes=4096,addr=0)", {2, 3, 4, 5});
  EXPECT_FALSE(same_elements(one, Layout(format_from_name("b_fs_yx_fsv1"), DataType::f32, {2, 3, 4, 5})));
}

TEST(Tpu, BadParametersAreNamed) {
  const std::pair<const char*, const char*> bad[] = {
      {"tpu_aligned(npus=4,npu_bytes=1024)", "'addr' is missing"},
      {"tpu_aligned(npus=4,npu_bytes=1024,addr=4096)", "addr=4096 is outside"},
      {"tpu_aligned(npus=4,npu_bytes=1024,addr=100)", "addr=100 is not divisible by 128"},
      {"tpu_compact(npus=4,npu_bytes=1024,addr=2)", "addr=2"},
      {"tpu_local(npus=4,npu_bytes=1024,addr=0,strides=1:2:3)", "needs 4 values"},
      {"tpu_aligned(npus=0,npu_bytes=1024,addr=0)", "npus='0'"},
      {"tpu_aligned(npus=4,npu_bytes=1024,addr=0,mode=8n)", "mode='8n'"},
      {"tpu_local(npus=4,npu_bytes=1024,addr=0,strides=1:1:1:1,mode=4n)", "storage modes apply"},
      {"tpu_aligned(npus=4,npu_bytes=1024,addr=0,colour=red)", "unknown parameter 'colour'"},
      {"tpu_fancy(npus=4,npu_bytes=1024,addr=0)", "tpu_fancy"},
      {"tpu_aligned(npus=4,npu_bytes=64,addr=0)", "needs"}};
  for (const auto& [spec, part] : bad) {
    const std::string err = error_of([s = spec] { tpu(s, {2, 3, 4, 5}); });
    EXPECT_NE(err.find(part), std::string::npos) << spec << ": " << err;
  }
  EXPECT_NE(error_of([] { tpu("tpu_aligned(npus=4,npu_bytes=1024,addr=0,mode=4n)", {2, 3, 4, 5}); }).find("mode=4n packs int8"),
            std::string::npos);
  // The name prints back as written, and parses to the same format.
  const char* spec = "tpu_local(npus=8,npu_bytes=4096,addr=4100,strides=120:56:16:2)";
  EXPECT_EQ(format_from_name(spec).name(), spec);
  EXPECT_EQ(format_from_name(spec), format_from_name(format_from_name(spec).name()));
}

// ---- Reshape inside a reorder (OpenVINO's reorder between bfyx, bfzyx and bfwzyx) ----

// OpenVINO's tests: bfyx 2x2x2x2 into bfzyx with z = 1, and bfzyx 2x2x2x2x2 into bfyx with z folded into y.
// Elements correspond by their canonical row-major index, so plain to plain keeps the values in order.
TEST(Reshape, OpenVinoExamplesKeepTheRowMajorOrder) {
  const std::pair<Layout, Layout> cases[] = {
      {Layout(Format::parse("bfyx"), DataType::f32, {2, 2, 2, 2}), Layout(Format::parse("bfzyx"), DataType::f32, {2, 2, 1, 2, 2})},
      {Layout(Format::parse("bfzyx"), DataType::f32, {2, 2, 2, 2, 2}), Layout(Format::parse("bfyx"), DataType::f32, {2, 2, 4, 2})},
      {Layout(Format::parse("bfwzyx"), DataType::f32, {1, 3, 2, 2, 1, 2}), Layout(Format::parse("bf"), DataType::f32, {2, 12})}};
  for (const auto& [src, dst] : cases) {
    const std::vector<uint8_t> in = make_pattern(src);
    std::vector<uint8_t> out(static_cast<size_t>(dst.bytes()));
    reference_reorder(src, in.data(), dst, out.data());
    std::vector<float> got(out.size() / 4);
    std::memcpy(got.data(), out.data(), out.size());
    for (size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got[k], static_cast<float>(k)) << src.describe() << " -> " << dst.describe();
  }
  // Into a blocked layout: element (b, f, z, y, x) of the bfzyx result holds the source's element of the same
  // row-major index.
  const Layout src(Format::parse("bfyx"), DataType::f32, {2, 19, 3, 4}), dst(Format::parse("b_fs_zyx_fsv16"), DataType::f32, {2, 19, 1, 3, 4});
  const std::vector<uint8_t> in = make_pattern(src);
  std::vector<uint8_t> out(static_cast<size_t>(dst.bytes()));
  reference_reorder(src, in.data(), dst, out.data());
  float v = 0;
  std::memcpy(&v, out.data() + dst.offset({1, 17, 0, 2, 3}) * 4, 4);
  EXPECT_EQ(v, static_cast<float>(((1 * 19 + 17) * 3 + 2) * 4 + 3));
  const std::string err = error_of([] {
    check_compatible(Layout(Format::parse("bfyx"), DataType::f32, {2, 3, 4, 5}), Layout(Format::parse("bfyx"), DataType::f32, {2, 3, 4, 6}));
  });
  EXPECT_NE(err.find("hold 120 and 144 elements"), std::string::npos) << err;
}
