// Host tests of the strided-permutation analysis that the specialised kernels loop over: for every tuple
// of the iteration space, what it writes and reads must be what the two index plans say, and it must
// cover the destination exactly once.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>

#include "clreorder/error.hpp"
#include "clreorder/format.hpp"
#include "clreorder/reference.hpp"
#include "clreorder/reorder.hpp"
#include "code_checks.hpp"
#include "codegen.hpp"
#include "permute.hpp"
#include "plan_checks.hpp"

using namespace clreorder;
using clreorder_test::check_permutation;
using clreorder_test::tuned_device;
using clreorder_test::columns_inner;
using clreorder_test::rows_unrolled;
using clreorder_test::transpose_a_length;

namespace {

Layout L(const std::string& f, const Dims& d, Dims lo = {}, Dims up = {}) {
  return Layout(format_from_name(f), DataType::f32, d, std::move(lo), std::move(up));
}

std::vector<std::string> rank4_data_names() {
  std::vector<std::string> names;
  for (const FormatEntry& e : registry()) {
    if (!e.unsupported.empty()) continue;
    Format f = Format::parse(e.name);
    if (f.kind() == FormatKind::data && f.rank() == 4) names.push_back(e.name);
  }
  return names;
}

// The ordered list and the shape-agnostic implementation beside it.
std::vector<const ReorderImpl*> every_impl() {
  std::vector<const ReorderImpl*> out;
  for (const auto& impl : KernelSelector::instance().impls()) out.push_back(impl.get());
  out.push_back(&KernelSelector::instance().agnostic());
  return out;
}

}  // namespace

TEST(Permutation, AgreesWithBothPlansOnDataPairs) {
  const std::vector<std::string> names = rank4_data_names();
  for (const std::string& a : names)
    for (const std::string& b : names) {
      std::string err = check_permutation(L(a, {3, 19, 5, 7}), L(b, {3, 19, 5, 7}));
      EXPECT_EQ(err, "") << a << " -> " << b;
    }
}

// The same pairs with lower and upper paddings on either side (lower differences that are multiples of the
// source blocks; others decline), so tuples reach padding the source lacks or holds.
TEST(Permutation, AgreesWithBothPlansOnPaddedDataPairs) {
  const std::vector<std::string> names = rank4_data_names();
  const Dims pads[][4] = {{{0, 0, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 2, 1}},
                          {{0, 0, 0, 0}, {1, 0, 2, 1}, {1, 0, 1, 1}, {0, 3, 0, 2}},
                          {{0, 32, 0, 2}, {0, 1, 1, 0}, {0, 0, 2, 0}, {2, 1, 0, 0}}};
#if defined(CLREORDER_SANITIZED)
  // Under the sanitizers (about ten times slower here) each pair gets one padding set, in turn: the same code
  // paths in a third of the time; the release build checks all three.
  constexpr bool every_padding = false;
#else
  constexpr bool every_padding = true;
#endif
  int checked = 0, turn = 0;
  for (const std::string& a : names)
    for (const std::string& b : names)
      for (const auto& pd : pads) {
        if (!every_padding && turn++ % 3 != 0) continue;
        if (make_permutation(L(a, {3, 19, 5, 7}, pd[0], pd[1]), L(b, {3, 19, 5, 7}, pd[2], pd[3])).reject.size()) continue;
        ++checked;
        EXPECT_EQ(check_permutation(L(a, {3, 19, 5, 7}, pd[0], pd[1]), L(b, {3, 19, 5, 7}, pd[2], pd[3])), "")
            << a << " " << dims_to_string(pd[0], ",") << "/" << dims_to_string(pd[1], ",") << " -> " << b << " "
            << dims_to_string(pd[2], ",") << "/" << dims_to_string(pd[3], ",");
      }
  EXPECT_GT(checked, every_padding ? 2000 : 600);
}

TEST(Permutation, AgreesWithBothPlansOnWeightsAndPadding) {
  const std::pair<const char*, const char*> pairs[] = {
      {"oiyx", "os_is_yx_osa4_isa8_osv8_isv4_swizzled_by_4"}, {"os_is_yx_osv32_isv4_swizzled_by_2", "oiyx"},
      {"oiyx", "os_iyx_osv32__ai32"}, {"os_is_yx_isv16_osv16", "is_os_yx_isv16_osv16"},
      {"oiyx", "iy_xs_os_xsv2_osv16__ao32"}, {"os_is_yx_isa8_osv16_isv4", "os_is_yx_osv16_isv16"}};
  for (const auto& [a, b] : pairs) EXPECT_EQ(check_permutation(L(a, {33, 17, 3, 3}), L(b, {33, 17, 3, 3})), "") << a << " -> " << b;
  EXPECT_EQ(check_permutation(L("goiyx", {3, 33, 17, 3, 3}), L("gs_oiyx_gsv16", {3, 33, 17, 3, 3})), "");
  // Paddings: unblocked axes, and a lower-padding difference that is a multiple of the source block.
  EXPECT_EQ(check_permutation(L("bfyx", {3, 19, 5, 7}, {0, 3, 1, 2}, {1, 2, 0, 1}), L("b_fs_yx_fsv16", {3, 19, 5, 7}, {0, 1, 0, 3}, {0, 5, 1, 0})), "");
  EXPECT_EQ(check_permutation(L("b_fs_yx_fsv16", {3, 19, 5, 7}, {0, 16, 1, 0}, {0, 1, 0, 0}), L("byxf", {3, 19, 5, 7}, {0, 0, 2, 0}, {0, 3, 0, 1})), "");
  EXPECT_EQ(check_permutation(L("bfyx", {3, 19, 5, 7}), L("bfyx", {3, 19, 5, 7})), "");
}

// A fused dim (yxs) and the axes it combines, kept apart on the other side, are one coordinate: both ways,
// against the plain order and a blocked one, with blocked tails of the combined value (yxsv2 over 3x3 cuts
// across rows of x) and padding on its first axis.
TEST(Permutation, FusedDimsAreOneCoordinate) {
  int formats = 0;
  for (const FormatEntry& e : registry()) {
    if (!e.unsupported.empty()) continue;
    const Format f = Format::parse(e.name);
    bool fused = false;
    for (const Dim& d : f.dims()) fused = fused || d.axes.size() > 1;
    if (!fused) continue;
    ++formats;
    const bool grouped = f.kind() == FormatKind::grouped_weights;
    const Dims shape = grouped ? Dims{3, 33, 17, 3, 3} : Dims{33, 17, 3, 3};
    const Dims none(shape.size(), 0);
    Dims lo = none, up = none;
    lo[shape.size() - 2] = 1, up[shape.size() - 2] = 2;  // y: the first axis of yx
    for (const char* other : {grouped ? "goiyx" : "oiyx", grouped ? "g_os_is_yx_isv16_osv16" : "os_is_yx_isv16_osv16"})
      for (bool padded : {false, true}) {
        const Layout a(f, DataType::f32, shape, padded ? lo : none, padded ? up : none);
        const Layout b(format_from_name(other), DataType::f32, shape, padded ? lo : none);
        EXPECT_EQ(check_permutation(b, a), "") << other << " -> " << e.name << (padded ? " padded" : "");
        EXPECT_EQ(check_permutation(a, b), "") << e.name << " -> " << other << (padded ? " padded" : "");
      }
    // Padding on x would leave holes inside the combined coordinate: declined, naming the axis.
    Dims xlo = none;
    xlo.back() = 1;
    const Permutation holes = make_permutation(Layout(format_from_name(grouped ? "goiyx" : "oiyx"), DataType::f32, shape),
                                               Layout(f, DataType::f32, shape, xlo));
    EXPECT_NE(holes.reject.find("axis x is padded inside a fused dim"), std::string::npos) << e.name << ": " << holes.reject;
  }
  EXPECT_GE(formats, 5);  // (g)i_yxs_os_yxsv2_osv16, gs_oi_yxs_gsv{4,16,32}_yxsv4
}

TEST(Permutation, DeclinesWhatItCannotExpress) {
  EXPECT_NE(make_permutation(L("b_fs_yx_fsv16", {1, 19, 2, 2}, {0, 3, 0, 0}), L("bfyx", {1, 19, 2, 2})).reject.find("not a multiple"),
            std::string::npos);
  EXPECT_NE(make_permutation(L("b_fs_yx_fsv16", {1, 19, 2, 2}), L("b_fs_yx_fsv24", {1, 19, 2, 2})).reject.find("do not nest"),
            std::string::npos);
  // Identical unpadded layouts collapse into one contiguous digit; a blocked tail keeps f apart (masked).
  Permutation same = make_permutation(L("b_fs_yx_fsv16", {3, 32, 5, 7}), L("b_fs_yx_fsv16", {3, 32, 5, 7}));
  ASSERT_EQ(same.digits.size(), 1u);
  EXPECT_EQ(same.digits[0].extent, 3 * 32 * 5 * 7);
  Permutation tail = make_permutation(L("b_fs_yx_fsv16", {3, 19, 5, 7}), L("b_fs_yx_fsv16", {3, 19, 5, 7}));
  EXPECT_TRUE(tail.axes[1].check_high);
  EXPECT_FALSE(tail.axes[2].masked());
}

// tiled's register transpose, read back from its text: every stage line is a shuffle of two registers, and
// evaluating the lines on (row, column) labels leaves column j, rows in order, in the register it names.
// Stages that move runs shorter than a 128-bit lane are unpacks (one instruction each on x86 and ARM,
// whatever the element size): runs from the lower or upper half of each lane of the two, interleaved.
TEST(TransposeNetwork, TextTransposesWithTwoSourceStages) {
  using Lanes = std::vector<std::pair<int, int>>;
  for (const auto& [type, bytes] : std::vector<std::pair<std::string, int>>{{"char", 1}, {"ushort", 2}, {"float", 4}, {"long", 8}})
  for (int v : {4, 8, 16}) {
    SCOPED_TRACE(type + std::to_string(v));
    const int lane = std::min(v, 16 / bytes);
    std::vector<std::string> rows;
    std::map<std::string, Lanes> regs;
    for (int i = 0; i < v; ++i) {
      rows.push_back("r" + std::to_string(i));
      for (int j = 0; j < v; ++j) regs[rows.back()].emplace_back(i, j);
    }
    const TransposeNet net = transpose_network(type, v, rows, "t");
    int stages = 0;
    while ((1 << stages) < v) ++stages;
    EXPECT_EQ(net.lines.size(), static_cast<size_t>(v * stages));
    const std::regex line("const " + type + std::to_string(v) + " (\\w+) = \\(" + type + std::to_string(v) + "\\)\\((.*)\\);");
    // A run is CR_SW<n>(reg, c0, c1, ..) (expanded in kernels_cl/common.cl), a component reg.sC, or a whole reg.
    const std::regex part("CR_SW([248])\\((\\w+)((?:, [0-9a-f])+)\\)|(\\w+)(\\.s([0-9a-f]))?");
    for (size_t n = 0; n < net.lines.size(); ++n) {
      const std::string& text = net.lines[n];
      const int run_length = 1 << (n / static_cast<size_t>(v));  // stage s moves runs of 2^s
      std::smatch m;
      ASSERT_TRUE(std::regex_match(text, m, line)) << text;
      const std::string name = m[1], args = m[2];
      Lanes out;
      std::vector<int> from;  // the position each output element had in its source register
      std::map<std::string, int> sources;
      for (auto it = std::sregex_iterator(args.begin(), args.end(), part); it != std::sregex_iterator(); ++it) {
        const bool run = (*it)[1].matched;
        const std::string reg = run ? (*it)[2] : (*it)[4];
        std::string comps = run ? (*it)[3] : (*it)[6];
        comps.erase(std::remove(comps.begin(), comps.end(), ','), comps.end());
        comps.erase(std::remove(comps.begin(), comps.end(), ' '), comps.end());
        if (run) {
          EXPECT_EQ(comps.size(), static_cast<size_t>(std::stoi((*it)[1]))) << text;
        }
        ASSERT_TRUE(regs.count(reg)) << text;
        ++sources[reg];
        if (comps.empty())
          for (int c = 0; c < v; ++c) comps += "0123456789abcdef"[c];
        for (char c : comps) {
          from.push_back(std::stoi(std::string(1, c), nullptr, 16));
          out.push_back(regs[reg][static_cast<size_t>(from.back())]);
        }
      }
      EXPECT_EQ(sources.size(), 2u) << text;
      ASSERT_EQ(out.size(), static_cast<size_t>(v)) << text;
      if (run_length < lane) {  // an unpack: runs from one half of each lane of the two, interleaved
        const int half = from[0] % lane / (lane / 2);
        for (int e = 0; e < v; ++e) {
          const int f = from[static_cast<size_t>(e)];
          EXPECT_EQ(f / lane, e / lane) << text << ": element " << e << " leaves its lane";
          EXPECT_EQ(f % lane / (lane / 2), half) << text << ": element " << e;
          EXPECT_EQ(f % (lane / 2), e % lane / (2 * run_length) * run_length + e % run_length) << text << ": element " << e;
        }
      }
      regs[name] = out;
    }
    ASSERT_EQ(net.columns.size(), static_cast<size_t>(v));
    for (int j = 0; j < v; ++j) {
      Lanes want;
      for (int i = 0; i < v; ++i) want.emplace_back(i, j);
      EXPECT_EQ(regs[net.columns[static_cast<size_t>(j)]], want) << "width " << v << ", column " << j;
    }
  }
  EXPECT_THROW(transpose_network("float", 6, std::vector<std::string>(6, "r"), "t"), Error);
}

// Index arithmetic is IDX_T throughout, whatever the implementation or tuning: a counter or product declared
// int would overflow in a 64-bit kernel (for (int ia ..) times a stride of 2^26 did, at ia = 32). Checked on
// the text of every implementation's kernel for a spread of pairs, in both index widths.
TEST(Generated, NoIndexArithmeticInInt) {
  const std::pair<const char*, const char*> pairs[] = {
      {"bfyx", "b_fs_yx_fsv16"}, {"b_fs_yx_fsv16", "bfyx"}, {"bfyx", "byxf"}, {"fs_b_yx_fsv32", "bfyx"},
      {"bfyx", "bs_fs_yx_bsv16_fsv16"}, {"yxfb", "bfyx"}, {"bfyx", "bfyx"}};
  const char* weights[] = {"os_is_yx_isv16_osv16", "os_is_yx_osa4_isa8_osv8_isv4", "os_iyx_osv16", "os_is_yx_osv16_isv4"};
  std::vector<std::pair<Layout, Layout>> cases;
  for (const auto& [a, b] : pairs)
    for (const Dims& shape : {Dims{2, 19, 7, 7}, Dims{2, 32, 4, 8}})
      cases.emplace_back(L(a, shape), L(b, shape));
  for (const char* w : weights)
    for (DataType t : {DataType::i8, DataType::f32})
      cases.emplace_back(Layout(format_from_name("oiyx"), t, {64, 64, 3, 3}), Layout(format_from_name(w), t, {64, 64, 3, 3}));
  int kernels = 0;
  for (const char* bits : {"", "64"}) {
    setenv("CLREORDER_INDEX_BITS", bits, 1);
    for (const char* type : {"cpu", "gpu"}) {
      const DeviceInfo dev = tuned_device(type);
      for (const auto& [src, dst] : cases)
        for (const ReorderImpl* impl : every_impl()) {
          if (!impl->reject(ReorderParams{src, dst, dev, {}}).empty()) continue;
          const std::string code = plan_reorder(dev, src, dst, impl->name()).source.code;
          const bool long_always = std::string(impl->name()) == "agnostic";
          ++kernels;
          for (const char* bad : {"for (int ", "const int ", "(int)", " int "})
            EXPECT_EQ(code.find(bad), std::string::npos) << impl->name() << " " << src.describe() << " -> " << dst.describe()
                                                         << ": '" << bad << "' in the generated code";
          EXPECT_NE(code.find(*bits || long_always ? "#define IDX_T long" : "#define IDX_T int"), std::string::npos);
        }
    }
  }
  unsetenv("CLREORDER_INDEX_BITS");
  EXPECT_GT(kernels, 100);
}

// Streaming stores go to memory a write-combining buffer at a time: a transpose that fills a line piecewise,
// V columns a step, leaves its buffers part-written, and such streamed transposes took 2.3-29x the time of
// plain stores on PoCL. So where a transpose streams, each column's stores in a step (V elements, or V times
// the steps unrolled into the step: the `iaN` positions) are one whole 64-byte line. Every element size in
// every family, with a device reporting a 1-byte cache (everything past it streams). Transposes whose
// columns can fill a line must still stream, and those whose columns cannot (32-byte blocks) must not.
TEST(Generated, StreamedTransposesWriteWholeLines) {
  const DeviceInfo dev = tuned_device("cpu", 1);
  auto bytes_of = [](const std::string& type) {  // an OpenCL vector type's size: float8 -> 32
    static const std::map<std::string, int> scalar = {{"char", 1}, {"uchar", 1}, {"short", 2}, {"ushort", 2}, {"half", 2},
                                                      {"int", 4},  {"uint", 4},  {"float", 4}, {"long", 8},   {"ulong", 8},
                                                      {"double", 8}};
    const size_t digits = type.find_first_of("0123456789");
    const int lanes = digits == std::string::npos ? 1 : std::stoi(type.substr(digits));
    return scalar.at(type.substr(0, digits)) * lanes;
  };
  struct Pair {
    const char *from, *to;
    Dims shape;
    DataType src, dst;
    int streams;  // 1: must stream, 0: must not, -1: either, as long as whole lines
  };
  using T = DataType;
  const Pair pairs[] = {{"bfyx", "byxf", {2, 256, 4, 8}, T::f32, T::f32, 1},
                        {"byxf", "bfyx", {2, 256, 4, 8}, T::f32, T::f32, 1},
                        {"byxf", "bfyx", {2, 64, 8, 16}, T::u8, T::u8, 1},
                        {"bfyx", "byxf", {2, 64, 8, 16}, T::i8, T::i8, 1},
                        {"byxf", "bfyx", {2, 128, 8, 8}, T::bf16, T::bf16, 1},
                        {"bfyx", "byxf", {2, 128, 8, 8}, T::f16, T::f32, 1},
                        {"bfyx", "byxf", {2, 64, 4, 8}, T::i64, T::i64, 1},
                        {"bfyx", "b_fs_yx_fsv16", {2, 64, 4, 8}, T::f32, T::f32, 1},
                        {"b_fs_yx_fsv16", "bfyx", {2, 64, 4, 8}, T::f32, T::f32, 1},
                        {"b_fs_yx_fsv32", "bfyx", {2, 64, 8, 16}, T::i8, T::i8, 1},
                        {"b_fs_yx_fsv16", "bfyx", {2, 64, 4, 8}, T::f64, T::f64, 1},
                        {"bzyxf", "bfzyx", {1, 32, 4, 8, 16}, T::i8, T::i8, 1},
                        // 16 columns (8-bit) a multiple of 4 KiB apart stream slower than plain stores; 8 do not
                        {"byxf", "bfyx", {2, 64, 64, 64}, T::u8, T::u8, 0},
                        {"bzyxf", "bfzyx", {1, 32, 8, 16, 96}, T::i8, T::i8, 0},
                        {"bzyxf", "bfzyx", {1, 32, 8, 16, 80}, T::i8, T::i8, 1},
                        {"bfyx", "byxf", {2, 1024, 2, 2}, T::f32, T::f32, 1},
                        {"byxf", "bfyx", {2, 64, 64, 64}, T::f16, T::f16, 1},
                        {"fs_b_yx_fsv32", "bfyx", {4, 64, 4, 8}, T::f32, T::f32, -1},
                        {"bs_fs_yx_bsv16_fsv16", "bfyx", {32, 64, 4, 8}, T::f16, T::f16, -1},
                        {"bfyx", "bs_fs_yx_bsv16_fsv16", {32, 64, 4, 8}, T::f32, T::f32, -1},
                        // 32-byte blocks: A takes two batches of the bsv32 block, a line per column
                        {"bfyx", "bs_fs_yx_bsv32_fsv32", {32, 64, 4, 8}, T::i8, T::i8, 1},
                        {"bfyx", "bs_fs_yx_bsv32_fsv16", {32, 64, 4, 8}, T::f16, T::f16, 1},
                        {"bfyx", "bs_fs_yx_bsv32_fsv32", {32, 64, 4, 8}, T::f32, T::i8, 1},
                        {"yxfb", "bfyx", {32, 64, 4, 4}, T::f32, T::f32, -1},
                        {"bfyx", "yxfb", {32, 64, 4, 4}, T::f16, T::f16, -1},
                        {"oiyx", "os_iyx_osv16", {64, 64, 1, 1}, T::f32, T::f32, -1},
                        {"oiyx", "os_is_yx_isv16_osv16", {64, 64, 3, 3}, T::f16, T::f16, -1},
                        {"goiyx", "g_os_is_yx_isv16_osv16", {4, 32, 32, 3, 3}, T::f16, T::f16, -1}};
  const std::regex stream(R"(CR_STREAM_STORE\(([a-z]+[0-9]*), )"), unrolled(R"(const IDX_T ia[0-9]+ = ia \+ )");
  int transposes = 0;
  for (const Pair& c : pairs) {
    const Layout src(format_from_name(c.from), c.src, c.shape), dst(format_from_name(c.to), c.dst, c.shape);
    const std::string label = src.describe() + " -> " + dst.describe();
    if (!KernelSelector::instance().find("tiled")->reject(ReorderParams{src, dst, dev, {}}).empty()) {
      ADD_FAILURE() << label << ": tiled declines";
      continue;
    }
    const std::string code = plan_reorder(dev, src, dst, "tiled").source.code;
    const size_t loops = code.find("#define TILE_LOOPS");
    ASSERT_NE(loops, std::string::npos) << label;
    const std::string body = code.substr(loops, code.find("\n#define", loops + 1) - loops);
    if (body.find("ib += ") == std::string::npos) {  // rows (or scalar loops): each row's stores are consecutive
      ADD_FAILURE() << label << ": not a transpose";
      continue;
    }
    ++transposes;
    const auto unroll = std::distance(std::sregex_iterator(body.begin(), body.end(), unrolled), std::sregex_iterator());
    int streamed = 0;
    for (auto it = std::sregex_iterator(body.begin(), body.end(), stream); it != std::sregex_iterator(); ++it, ++streamed)
      EXPECT_EQ(bytes_of((*it)[1]) * std::max<decltype(unroll)>(1, unroll), 64) << label << ": " << (*it)[0];
    if (c.streams >= 0) {
      EXPECT_EQ(streamed > 0, c.streams == 1) << label << ": " << streamed << " streaming stores";
    }
  }
  EXPECT_EQ(transposes, static_cast<int>(std::size(pairs)));
}

// CPU tiles whose rows of A are short take part of the digit continuing A, so that each column's stores are
// one line of 8-bit elements (two batches of a bsv32 block for 32-byte channel blocks) and four of wider ones
// (eight batches for 16 f16 channels); whole digits that fit stay.
TEST(Generated, ShortRowsOfATakePartOfTheDigitContinuingThem) {
  struct Pair {
    const char *from, *to;
    DataType src, dst;
    const char* tuning;
    int64_t a;  // the transpose's A
  };
  using T = DataType;
  const Pair pairs[] = {{"bfyx", "bs_fs_yx_bsv32_fsv32", T::i8, T::i8, "cpu", 64},
                        {"bfyx", "bs_fs_yx_bsv32_fsv16", T::f16, T::f16, "cpu", 128},
                        {"bfyx", "bs_fs_yx_bsv16_fsv32", T::i8, T::i8, "cpu", 64},
                        {"bfyx", "bs_fs_yx_bsv32_fsv32", T::f32, T::i8, "cpu", 64},
                        {"bfyx", "bs_fs_yx_bsv32_fsv32", T::f32, T::f32, "cpu", 64},
                        {"bfyx", "bs_fs_yx_bsv32_fsv32", T::i8, T::f16, "cpu", 128},
                        {"bfyx", "bs_fs_yx_bsv16_fsv16", T::f16, T::f16, "cpu", 256},  // the whole digit
                        {"bfyx", "yxfb", T::f16, T::f16, "cpu", 64},  // 32 batches of 4 channels, cut to 64 far rows
                        {"bfyx", "yxfb", T::u8, T::u8, "cpu", 64},    // 32 batches of 2 channels: one line
                        {"bfyx", "yxfb", T::i64, T::i64, "cpu", 16},  // 256-byte rows already; 16 far rows off Intel
                        {"bfyx", "bs_fs_yx_bsv32_fsv32", T::i8, T::i8, "gpu", 16}};  // GPU tiles: unchanged
  for (const Pair& c : pairs) {
    const Dims shape = std::string(c.to) == "yxfb" ? Dims{32, 64, 28, 28} : Dims{64, 64, 8, 8};
    const Layout src(format_from_name(c.from), c.src, shape), dst(format_from_name(c.to), c.dst, shape);
    const std::string code = plan_reorder(tuned_device(c.tuning), src, dst, "tiled").source.code;
    EXPECT_EQ(transpose_a_length(code), c.a) << src.describe() << " -> " << dst.describe() << ", " << c.tuning << " tuning";
  }
}

// CPU tiles whose B is two steps take both inside each step of A where A's rows lie at most 512 bytes apart in
// the source and the destination's elements are 2 bytes or more; farther rows, 8-bit destinations, longer B
// and GPU tiles keep the steps of B outside.
TEST(Generated, BothStepsOfBTogetherWhereRowsAreNear) {
  struct Pair {
    const char *from, *to;
    DataType src, dst;
    Dims shape;
    const char* tuning;
    bool inner;
  };
  using T = DataType;
  const Pair pairs[] = {{"b_fs_yx_fsv16", "bfyx", T::f64, T::f64, {4, 64, 56, 56}, "cpu", true},  // rows 128 bytes apart
                        {"b_fs_yx_fsv32", "bfyx", T::i64, T::i64, {8, 64, 56, 56}, "cpu", true},  // 256
                        {"byxf", "bfyx", T::f32, T::f32, {8, 64, 56, 56}, "cpu", true},            // 256
                        {"byxf", "bfyx", T::f16, T::f32, {8, 256, 28, 28}, "cpu", true},           // 512
                        {"b_fs_yx_fsv16", "bfyx", T::i4, T::f16, {8, 64, 56, 56}, "cpu", true},    // 8 bytes of nibbles
                        {"byxf", "bfyx", T::f32, T::f32, {8, 256, 56, 56}, "cpu", false},          // 1 KiB
                        {"bfyx", "byxf", T::f16, T::f32, {8, 256, 28, 28}, "cpu", false},          // a plane apart
                        {"byxf", "bfyx", T::i8, T::i8, {8, 256, 28, 28}, "cpu", false},            // 8-bit destination
                        {"bs_fs_yx_bsv16_fsv16", "bfyx", T::f32, T::f32, {8, 64, 56, 56}, "cpu", false},  // B of 32 steps
                        {"b_fs_yx_fsv16", "bfyx", T::f64, T::f64, {4, 64, 56, 56}, "gpu", false}};
  for (const Pair& c : pairs) {
    const Layout src(format_from_name(c.from), c.src, c.shape), dst(format_from_name(c.to), c.dst, c.shape);
    const std::string code = plan_reorder(tuned_device(c.tuning), src, dst, "tiled").source.code;
    EXPECT_GT(transpose_a_length(code), 0) << src.describe() << " -> " << dst.describe() << ": not a transpose";
    EXPECT_EQ(columns_inner(code), c.inner) << src.describe() << " -> " << dst.describe() << ", " << c.tuning << " tuning";
  }
}

// Row loops of at most 16 steps are unrolled in CPU tiles where a parameter is per group (its value one per
// step's lanes, at an index changing every few steps), so the steps share the group's index and load: constants
// and buffers alike; not for per-channel parameters, plain conversions, rows of more steps or GPU tiles.
TEST(Generated, RowsUnrolledForGroupParameters) {
  using T = DataType;
  auto grouped = [](const Dims& shape, bool buffer) {
    Conversion c;
    ParamValues v;
    v.axis = 1, v.group = 128, v.outer_axis = 0, v.from_buffer = buffer;
    if (!buffer) v.values.assign(static_cast<size_t>(v.count(shape)), 0.25f);
    c.param(Param::src_scale) = v;
    return c;
  };
  const Dims big = {256, 4096, 1, 1}, huge = {4096, 4096, 1, 1}, odd = {3, 600, 1, 1};
  Conversion per_channel;
  per_channel.param(Param::src_scale) = ParamValues{std::vector<float>(4096, 0.5f), 1};
  struct Pair {
    Dims shape;
    Conversion conv;
    const char* tuning;
    bool grouped;
  };
  const Pair pairs[] = {{big, grouped(big, false), "cpu", true},     {huge, grouped(huge, true), "cpu", true},
                        {odd, grouped(odd, false), "cpu", true},     {big, per_channel, "cpu", false},
                        {big, Conversion{}, "cpu", false},           {huge, grouped(huge, true), "gpu", false}};
  const std::regex loop("for \\(IDX_T ia = 0; ia < ([0-9]+); ia \\+= ([0-9]+)\\)");
  int long_rows = 0;
  for (const Pair& c : pairs) {
    const Layout src(format_from_name("oiyx"), T::i8, c.shape), dst(format_from_name("oiyx"), T::f16, c.shape);
    const std::string code = plan_reorder(tuned_device(c.tuning), src, dst, "tiled", c.conv).source.code;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(code, m, loop)) << src.describe() << ": no row loop\n" << code;
    const long steps = std::stol(m[1]) / std::stol(m[2]);
    long_rows += steps > 16;
    const bool want = c.grouped && steps > 1 && steps <= 16;
    EXPECT_EQ(rows_unrolled(code), want)
        << src.describe() << ", " << c.tuning << " tuning, " << steps << " steps: " << (want ? "not unrolled" : "unrolled");
  }
  EXPECT_GT(long_rows, 0) << "no row of more than 16 steps among the cases";
}

// CPU tiles whose rows of A lie far apart in the source (yxfb -> bfyx: pixels 8 KiB apart) and whose B is a digit
// of under four lines (a pixel's batches) take part of the digit continuing B in the source, so each far row
// gives four whole lines; B already that long, and GPU tiles, keep B as it was.
TEST(Generated, FarRowsReadFourLinesOfB) {
  struct Pair {
    Dims shape;
    DataType src, dst;
    const char* tuning;
    int64_t b;  // the transpose's B
  };
  using T = DataType;
  const Pair pairs[] = {{{8, 256, 56, 56}, T::f32, T::f32, "cpu", 64},   // 8 batches x 8 channels
                        {{8, 256, 28, 28}, T::u8, T::f32, "cpu", 256},  // 8 x 32
                        {{4, 256, 56, 56}, T::i64, T::i64, "cpu", 32},  // 4 x 8
                        {{32, 64, 28, 28}, T::f32, T::f32, "cpu", 64},  // 32 x 2
                        {{16, 256, 56, 56}, T::f16, T::f16, "cpu", 64},  // 16 x 8, cut to 64 (nested source blocks)
                        {{64, 64, 28, 28}, T::f32, T::f32, "cpu", 64},  // 64 batches: four lines already
                        {{8, 256, 56, 56}, T::f32, T::f32, "gpu", 8}};
  auto b_length = [](const std::string& code) -> int64_t {
    const std::string head = "TILE_LOOPS for (IDX_T ib = 0; ib < ";
    const size_t at = code.find(head);
    return at == std::string::npos ? 0 : std::stoll(code.substr(at + head.size()));
  };
  for (const Pair& c : pairs) {
    const Layout src(format_from_name("yxfb"), c.src, c.shape), dst(format_from_name("bfyx"), c.dst, c.shape);
    const std::string code = plan_reorder(tuned_device(c.tuning), src, dst, "tiled").source.code;
    EXPECT_EQ(b_length(code), c.b) << src.describe() << " -> " << dst.describe() << ", " << c.tuning << " tuning";
  }
}

// A streaming CPU tile's chunk of A is a multiple of a destination line where one divides A, so its steps unroll
// to whole lines and its stores stream: 8-bit transposes of 3136 positions take 448 (or 64 under a cap of 256),
// not 784; without streaming the chunk stays tile_size()'s.
TEST(Generated, StreamedTilesTakeWholeLinesOfA) {
  struct Pair {
    const char* from;
    uint64_t cache;  // 1: everything streams; 0: unknown, nothing does
    int64_t a;
  };
  const Pair pairs[] = {{"b_fs_yx_fsv16", 1, 448}, {"b_fs_yx_fsv16", 0, 784}, {"bs_fs_yx_bsv16_fsv16", 1, 64}, {"byxf", 1, 448}};
  for (const Pair& c : pairs) {
    const Dims shape{16, 256, 56, 56};
    const Layout src(format_from_name(c.from), DataType::i8, shape), dst(format_from_name("bfyx"), DataType::i8, shape);
    const std::string code = plan_reorder(tuned_device("cpu", c.cache), src, dst, "tiled").source.code;
    EXPECT_EQ(transpose_a_length(code), c.a) << src.describe() << ", cache " << c.cache;
    EXPECT_EQ(code.find("CR_STREAM_STORE(") != std::string::npos, c.cache == 1) << src.describe() << ", cache " << c.cache;
  }
}

// A CPU reorder streams once its source and destination exceed a quarter of the device's cache, or 12 MiB per
// compute unit where that is less (a reorder and its consumer measured faster so from there on); never on a
// GPU, nor where the cache is unknown.
TEST(Generated, StreamingPaysPastAQuarterOfTheCache) {
  const DeviceInfo cpu = tuned_device("cpu", uint64_t{32} << 20);
  EXPECT_FALSE(stream_pays(uint64_t{8} << 20, cpu));
  EXPECT_TRUE(stream_pays((uint64_t{8} << 20) + 1, cpu));
  const Layout src(format_from_name("bfyx"), DataType::f32, {1, 256, 56, 56}), dst(format_from_name("byxf"), DataType::f32, {1, 256, 56, 56});
  EXPECT_FALSE(stream_pays(src, dst, cpu));  // 6.4 MB
  const Layout src2(format_from_name("bfyx"), DataType::f32, {2, 256, 56, 56}), dst2(format_from_name("byxf"), DataType::f32, {2, 256, 56, 56});
  EXPECT_TRUE(stream_pays(src2, dst2, cpu));  // 12.8 MB
  EXPECT_NE(plan_reorder(cpu, src2, dst2, "tiled").source.code.find("CR_STREAM_STORE("), std::string::npos);
  EXPECT_EQ(plan_reorder(cpu, src, dst, "tiled").source.code.find("CR_STREAM_STORE("), std::string::npos);
  const DeviceInfo gpu = tuned_device("gpu", cpu.cache_bytes);
  EXPECT_FALSE(stream_pays(src2, dst2, gpu));
  DeviceInfo unknown = tuned_device("cpu");
  EXPECT_FALSE(stream_pays(uint64_t{1} << 40, unknown));
  // Where the device's compute units are known, at most 12 MiB per unit: two cores of a host reporting 260 MiB
  // stream past 24 MiB, not 65; 32 MiB keeps its quarter (8 MiB under 24); 64 cores keep the quarter of 260.
  DeviceInfo vm = tuned_device("cpu", uint64_t{260} << 20);
  EXPECT_EQ(stream_threshold(vm), uint64_t{65} << 20);
  vm.compute_units = 2;
  EXPECT_EQ(stream_threshold(vm), uint64_t{24} << 20);
  EXPECT_FALSE(stream_pays(uint64_t{24} << 20, vm));
  EXPECT_TRUE(stream_pays((uint64_t{24} << 20) + 1, vm));
  DeviceInfo small = cpu;
  small.compute_units = 2;
  EXPECT_EQ(stream_threshold(small), uint64_t{8} << 20);
  vm.compute_units = 64;
  EXPECT_EQ(stream_threshold(vm), uint64_t{65} << 20);
  DeviceInfo gpu_units = gpu;
  gpu_units.compute_units = 2;
  EXPECT_FALSE(stream_pays(uint64_t{1} << 40, gpu_units));
}

// CPU tiles of 8- and 16-bit transposes whose B is at its floor (a pixel's 16 of 32 channels) walk rows of A
// of 1 KiB, as 4-byte elements do, not of 256 elements; A stays as it was where the longer row would cut
// B (bs_fs_yx_bsv32_fsv32's 32-byte source rows), where B holds two digits (chunk() cuts none of those), for
// 4- and 8-byte elements and in the GPU tuning.
TEST(Generated, NarrowTransposesWalkKiBRowsWhereBIsAtItsFloor) {
  struct Pair {
    const char *from, *to;
    Dims shape;
    DataType src, dst;
    const char* tuning;
    bool longer;  // A over 256 elements
  };
  using T = DataType;
  const Pair pairs[] = {{"b_fs_yx_fsv32", "bfyx", {8, 64, 112, 112}, T::i8, T::i8, "cpu", true},
                        {"byxf", "bfyx", {8, 64, 112, 112}, T::u8, T::u8, "cpu", true},
                        {"bzyxf", "bfzyx", {1, 32, 32, 64, 64}, T::i8, T::i8, "cpu", true},
                        {"byxf", "bfyx", {8, 32, 112, 112}, T::f16, T::f16, "cpu", true},
                        {"byxf", "bfyx", {8, 64, 56, 56}, T::i8, T::f16, "cpu", true},
                        {"byxf", "bfyx", {8, 32, 112, 112}, T::f32, T::f32, "cpu", false},
                        {"byxf", "bfyx", {8, 64, 56, 56}, T::u8, T::f32, "cpu", false},
                        {"b_fs_yx_fsv16", "bfyx", {4, 64, 56, 56}, T::f64, T::f64, "cpu", false},
                        {"bs_fs_yx_bsv32_fsv32", "bfyx", {32, 64, 28, 28}, T::i8, T::i8, "cpu", false},
                        // B of nested blocks (32 x 32, 16 x 16): never cut, so never at its floor
                        {"bs_fs_yx_bsv32_fsv32", "bfyx", {32, 64, 56, 56}, T::i8, T::i8, "cpu", false},
                        {"bs_fs_yx_bsv16_fsv16", "bfyx", {32, 64, 56, 56}, T::f16, T::f16, "cpu", false},
                        {"b_fs_yx_fsv32", "bfyx", {8, 64, 112, 112}, T::i8, T::i8, "gpu", false}};
  for (const Pair& c : pairs) {
    const Layout src(format_from_name(c.from), c.src, c.shape), dst(format_from_name(c.to), c.dst, c.shape);
    const std::string label = src.describe() + " -> " + dst.describe() + ", " + c.tuning + " tuning";
    const int64_t a = transpose_a_length(plan_reorder(tuned_device(c.tuning), src, dst, "tiled").source.code);
    ASSERT_GT(a, 0) << label << ": not a transpose";
    EXPECT_EQ(a > 256, c.longer) << label << ": A of " << a;
  }
}

// CPU tiles of transposes whose source rows lie 2 KiB or more apart read at most 32 of them at a time (kFarRows)
// into 16-bit destinations (B of 2048 4-byte elements' bytes a tile), where A would be longer, 64 into 8-bit
// destinations (a line of each destination row: B of 128 i8, 32 f32 positions), 16 into 4- and 8-byte ones
// where A is a multiple of 16 (kWideFarRows: B of 128 f32, 64 i64 positions), and 64 rows of nested
// destination blocks (kFarBlockRows: bs_fs_yx_bsv16_fsv16's 256, not bsv32_fsv32's 64 already), 16 of them
// into 4- and 8-byte destinations; A stays as it was where its rows lie closer (1 KiB), where it is no
// longer (a block of 16 channels), where 16 does not divide it (24 channels), and in the GPU tuning. Out of
// nested source blocks B is cut alike (to 64 destination rows) for 8- and 16-bit destinations.
TEST(Generated, TransposesReadFewRowsPagesApart) {
  struct Pair {
    const char *from, *to;
    Dims shape;
    DataType src, dst;
    const char* tuning;
    int64_t a, b;  // A's and B's length in the tile; 0: not checked
  };
  using T = DataType;
  const Pair pairs[] = {{"bfyx", "byxf", {8, 256, 56, 56}, T::f32, T::f32, "cpu", 16, 112},
                        {"bfyx", "byxf", {8, 64, 112, 112}, T::i8, T::i8, "cpu", 64, 128},
                        {"bfyx", "byxf", {8, 64, 112, 112}, T::f32, T::u8, "cpu", 64, 32},
                        {"bfyx", "byxf", {8, 128, 56, 56}, T::f16, T::f16, "cpu", 32, 112},
                        {"bfyx", "byxf", {8, 128, 56, 56}, T::f32, T::f16, "cpu", 32, 64},
                        {"bfyx", "byxf", {8, 64, 112, 112}, T::u8, T::f32, "cpu", 16, 128},
                        {"bfyx", "byxf", {4, 64, 56, 56}, T::i64, T::i64, "cpu", 16, 64},
                        {"bfyx", "byxf", {8, 64, 56, 56}, T::f32, T::f64, "cpu", 16, 64},
                        {"bfyx", "byxf", {8, 24, 56, 56}, T::f32, T::f32, "cpu", 24, 0},  // no multiple of 16
                        {"bfyx", "byxf", {1, 256, 16, 16}, T::f32, T::f32, "cpu", 256, 0},  // rows 1 KiB apart
                        {"bfyx", "b_fs_yx_fsv16", {8, 256, 56, 56}, T::f32, T::f32, "cpu", 16, 0},
                        {"bfyx", "b_fs_yx_fsv32", {8, 256, 56, 56}, T::f32, T::f32, "cpu", 16, 0},
                        {"bfyx", "b_fs_yx_fsv32", {8, 256, 56, 56}, T::f16, T::f16, "cpu", 32, 0},
                        // nested blocks (16 channels x 16 batches): 64 rows, B of 2048 / 64 elements; 16 rows
                        // (one block of channels) into 4- and 8-byte destinations
                        {"bfyx", "bs_fs_yx_bsv16_fsv16", {32, 64, 56, 56}, T::f32, T::f32, "cpu", 16, 112},
                        {"bfyx", "bs_fs_yx_bsv16_fsv16", {16, 64, 56, 56}, T::i64, T::i64, "cpu", 16, 0},
                        {"bfyx", "bs_fs_yx_bsv16_fsv16", {32, 64, 56, 56}, T::f16, T::f16, "cpu", 64, 64},
                        {"bfyx", "bs_fs_yx_bsv32_fsv32", {32, 64, 56, 56}, T::i8, T::i8, "cpu", 64, 112},
                        // out of nested blocks (B of 256 or 1024 destination rows each a plane apart): 64 of
                        // them into 8- and 16-bit destinations, all into 32-bit ones; 16 in the GPU tuning
                        {"bs_fs_yx_bsv16_fsv16", "bfyx", {32, 64, 56, 56}, T::f16, T::f16, "cpu", 224, 64},
                        {"bs_fs_yx_bsv32_fsv32", "bfyx", {32, 64, 56, 56}, T::i8, T::i8, "cpu", 224, 64},
                        {"bs_fs_yx_bsv32_fsv32", "bfyx", {32, 64, 56, 56}, T::u8, T::f16, "cpu", 224, 64},
                        {"bs_fs_zyx_bsv16_fsv16", "bfzyx", {16, 32, 8, 28, 28}, T::f16, T::f16, "cpu", 224, 64},
                        {"bs_fs_yx_bsv16_fsv16", "bfyx", {32, 64, 56, 56}, T::f32, T::f32, "cpu", 224, 256},
                        {"bs_fs_yx_bsv16_fsv16", "bfyx", {32, 64, 56, 56}, T::f16, T::f32, "cpu", 224, 256},
                        {"bs_fs_yx_bsv16_fsv16", "bfyx", {32, 64, 56, 56}, T::f16, T::f16, "gpu", 8, 16},
                        {"bfyx", "byxf", {8, 256, 56, 56}, T::f32, T::f32, "gpu", 8, 0},
                        {"bfyx", "byxf", {8, 64, 112, 112}, T::i8, T::i8, "gpu", 16, 0}};
  static const std::regex b_loop(R"(for \(IDX_T ib = 0; ib < (\d+);)");
  for (const Pair& c : pairs) {
    const Layout src(format_from_name(c.from), c.src, c.shape), dst(format_from_name(c.to), c.dst, c.shape);
    const std::string label = src.describe() + " -> " + dst.describe() + ", " + c.tuning + " tuning";
    const std::string code = plan_reorder(tuned_device(c.tuning), src, dst, "tiled").source.code;
    EXPECT_EQ(transpose_a_length(code), c.a) << label << "\n" << code;
    std::smatch m;
    if (c.b) {
      ASSERT_TRUE(std::regex_search(code, m, b_loop)) << label;
      EXPECT_EQ(std::stoll(m[1]), c.b) << label;
    }
  }
}

// f16 bound for an integer type widens with its NaNs as 0 (cr_f16_to_f32_nan0), so 8- and 16-bit integer
// conversions after it take their _finite form (no NaN test), in every implementation and in the scalar
// tails as in the vectors; not with fused arithmetic (NaN - a zero point stays NaN, then 0), where f16 widens
// with NaNs in any form (cr_f16_to_f32_quiet: the result's NaNs become 0 or canonical, so no payload is seen);
// not into floats without arithmetic (NaN payloads kept), not from bf16 (its widening is a shift).
TEST(Generated, HalfIntoIntegersWidensNaNsAsZero) {
  struct Pair {
    DataType src, dst;
    bool sub;          // a fused subtraction
    const char* impl;  // "" the selector's
    bool nan0, quiet;        // cr_f16_to_f32_nan0, cr_f16_to_f32_quiet in the kernel
    const char* conversion;  // in CONVERT(v), the scalar form
  };
  using T = DataType;
  const Pair pairs[] = {{T::f16, T::i8, false, "", true, false, "cr_float_to_char_finite(cr_f16_to_f32_nan0(v))"},
                        {T::f16, T::u8, false, "generic", true, false, "cr_float_to_uchar_finite(cr_f16_to_f32_nan0(v))"},
                        {T::f16, T::i16, false, "staged", true, false, "cr_float_to_short_finite(cr_f16_to_f32_nan0(v))"},
                        {T::f16, T::u4, false, "", true, false, "min((uchar)(cr_float_to_uchar_finite(cr_f16_to_f32_nan0(v))), (uchar)15)"},
                        {T::f16, T::i32, false, "", true, false, "cr_float_to_int(cr_f16_to_f32_nan0(v))"},
                        {T::f16, T::i8, true, "", false, true, "cr_float_to_char(((cr_f16_to_f32_quiet(v) - 0x1.4p+1f)))"},
                        {T::f16, T::f16, true, "", false, true, nullptr},
                        {T::f16, T::f32, false, "", false, false, "cr_f16_to_f32(v)"},
                        {T::bf16, T::i8, false, "", false, false, "cr_float_to_char(cr_bf16_to_f32(v))"}};
  for (const Pair& c : pairs) {
    const Layout src(format_from_name("bfyx"), c.src, {2, 32, 7, 9}), dst(format_from_name("byxf"), c.dst, {2, 32, 7, 9});
    Conversion conv;
    if (c.sub) conv.param(Param::sub) = ParamValues{{2.5f}, -1};
    const std::string label = src.describe() + " -> " + dst.describe() + (c.sub ? " --sub 2.5" : "") + " " + c.impl;
    const std::string code = plan_reorder(tuned_device("cpu"), src, dst, c.impl, conv).source.code;
    EXPECT_EQ(code.find("cr_f16_to_f32_nan0") != std::string::npos, c.nan0) << label << "\n" << code;
    EXPECT_EQ(code.find("cr_f16_to_f32_quiet") != std::string::npos, c.quiet) << label << "\n" << code;
    if (c.conversion) {
      EXPECT_NE(code.find(std::string("#define CONVERT(v) ") + c.conversion + "\n"), std::string::npos) << label << "\n" << code;
    }
  }
}

// Into 4- and 8-byte destinations the 16 far rows are AMD's rule: on Intel's CPUs, whose L2 streamer follows 32
// streams, such tiles keep 32 rows and nested destination blocks 64 (a maker the device does not name gets
// AMD's, as above); 8- and 16-bit destinations and the GPU tuning do not depend on the maker.
TEST(Generated, FarRowsFollowTheCpuMaker) {
  struct Pair {
    const char *from, *to;
    Dims shape;
    DataType src, dst;
    uint32_t vendor;
    int64_t a, b;  // A's and B's length in the tile; 0: not checked
  };
  using T = DataType;
  constexpr uint32_t intel = 0x8086, amd = 0x1022;
  const Pair pairs[] = {{"bfyx", "byxf", {8, 256, 56, 56}, T::f32, T::f32, intel, 32, 64},
                        {"bfyx", "byxf", {8, 256, 56, 56}, T::f32, T::f32, amd, 16, 112},
                        {"bfyx", "byxf", {8, 64, 112, 112}, T::u8, T::f32, intel, 32, 64},
                        {"bfyx", "byxf", {4, 64, 56, 56}, T::i64, T::i64, intel, 32, 0},
                        {"bfyx", "byxf", {4, 64, 56, 56}, T::i64, T::i64, amd, 16, 0},
                        {"bfyx", "bs_fs_yx_bsv16_fsv16", {32, 64, 56, 56}, T::f32, T::f32, intel, 64, 0},
                        {"bfyx", "bs_fs_yx_bsv16_fsv16", {32, 64, 56, 56}, T::f32, T::f32, amd, 16, 112},
                        {"bfyx", "byxf", {8, 64, 112, 112}, T::i8, T::i8, intel, 64, 128},
                        {"bfyx", "byxf", {8, 128, 56, 56}, T::f16, T::f16, intel, 32, 112}};
  static const std::regex b_loop(R"(for \(IDX_T ib = 0; ib < (\d+);)");
  for (const Pair& c : pairs) {
    const Layout src(format_from_name(c.from), c.src, c.shape), dst(format_from_name(c.to), c.dst, c.shape);
    const std::string label = src.describe() + " -> " + dst.describe() + ", vendor " + std::to_string(c.vendor);
    DeviceInfo dev = tuned_device("cpu");
    dev.vendor_id = c.vendor;
    const std::string code = plan_reorder(dev, src, dst, "tiled").source.code;
    EXPECT_EQ(transpose_a_length(code), c.a) << label << "\n" << code;
    std::smatch m;
    if (c.b) {
      ASSERT_TRUE(std::regex_search(code, m, b_loop)) << label;
      EXPECT_EQ(std::stoll(m[1]), c.b) << label;
    }
  }
  DeviceInfo gpu = tuned_device("gpu");
  gpu.vendor_id = intel;
  const Layout src(format_from_name("bfyx"), T::f32, {8, 256, 56, 56}), dst(format_from_name("byxf"), T::f32, {8, 256, 56, 56});
  EXPECT_EQ(transpose_a_length(plan_reorder(gpu, src, dst, "tiled").source.code), 8);
}

// Transposes whose A is longer than a 16-element block step 16 columns of 8- and 16-bit elements at a time (32-byte
// vectors of 16-bit ones, as f32's 8 columns), 8 of 32- and 64-bit ones, and 8 of 16-bit ones unpacked from u4
// or i4 (vector_width()); the first row's vector type says which.
TEST(Generated, SixteenBitTransposesStepSixteenColumns) {
  struct Pair {
    const char *from, *to;
    Dims shape;
    DataType src, dst;
    int columns;
  };
  using T = DataType;
  const Pair pairs[] = {{"bfyx", "byxf", {8, 128, 56, 56}, T::f16, T::f16, 16},
                        {"byxf", "bfyx", {8, 128, 56, 56}, T::bf16, T::bf16, 16},
                        {"bfyx", "yxfb", {32, 64, 28, 28}, T::u16, T::u16, 16},
                        {"bfyx", "byxf", {8, 128, 56, 56}, T::f32, T::f16, 16},
                        {"bfyx", "byxf", {8, 64, 112, 112}, T::i8, T::i8, 16},
                        {"bfyx", "byxf", {1, 256, 16, 16}, T::f32, T::f32, 8},  // rows 1 KiB apart: A of 256
                        {"byxf", "bfyx", {8, 128, 56, 56}, T::f16, T::f32, 8},
                        {"bfyx", "byxf", {1, 64, 8, 16}, T::i64, T::i64, 8},  // rows 1 KiB apart: A of 64
                        {"b_fs_yx_fsv16", "bfyx", {8, 64, 56, 56}, T::i4, T::f16, 8}};
  static const std::regex first_row(R"(const [a-z]+(\d+) r0(_0)? = )");
  for (const Pair& c : pairs) {
    const Layout src(format_from_name(c.from), c.src, c.shape), dst(format_from_name(c.to), c.dst, c.shape);
    const std::string label = src.describe() + " -> " + dst.describe();
    const std::string code = plan_reorder(tuned_device("cpu"), src, dst, "tiled").source.code;
    ASSERT_GT(transpose_a_length(code), 16) << label << ": not a transpose with A past one block";
    std::smatch m;
    ASSERT_TRUE(std::regex_search(code, m, first_row)) << label << "\n" << code;
    EXPECT_EQ(std::stoi(m[1]), c.columns) << label;
  }
}

namespace {

// A staged plan and the elements its kernel's loads name (vector widths summed, a scalar load as one).
struct StagedPair { const char *from, *to; Dims shape; DataType src, dst; const char* tuning; int64_t elements; };

void expect_staged_loads(const StagedPair& c) {
  static const std::regex load(R"(vload(\d+)\(|CR_LOADU\([a-z]+(\d+),|CONVERT\(\*\(src)");
  const Layout src(format_from_name(c.from), c.src, c.shape), dst(format_from_name(c.to), c.dst, c.shape);
  const std::string code = plan_reorder(tuned_device(c.tuning), src, dst, "staged").source.code;
  int64_t elements = 0;
  for (auto m = std::sregex_iterator(code.begin(), code.end(), load); m != std::sregex_iterator(); ++m)
    elements += (*m)[1].matched ? std::stoll((*m)[1]) : (*m)[2].matched ? std::stoll((*m)[2]) : 1;
  EXPECT_EQ(elements, c.elements) << src.describe() << " -> " << dst.describe() << ", " << c.tuning << " tuning\n" << code;
}

}  // namespace

// Staged's CPU tiles hold runs of at least 16 bytes of the destination type (config_for()): conversions into
// 8-bit types from 4- and 8-byte sources, and i64 -> i16, take tiles of twice the elements 32-byte runs of the
// wider type gave them; conversions into 2- and 4-byte types from sources of their size or 4 bytes keep theirs,
// and the GPU tuning keeps its 32-byte runs. And CPU tiles of 8-bit elements hold up to 512 of them
// (max_tile_bytes), those of wider elements 256: the elements named double from 256-element tiles into 8-bit
// ones (196, 144 and 144 before) and stay for f16, f32 and the GPU tuning.
TEST(Generated, StagedRunsHoldSixteenBytesOfTheDestination) {
  using T = DataType;
  const StagedPair pairs[] = {{"bfyx", "b_fs_yx_fsv4", {8, 64, 56, 56}, T::f32, T::i8, "cpu", 64},
                        {"bfyx", "b_fs_yx_fsv4", {8, 64, 56, 56}, T::i32, T::i8, "cpu", 64},
                        {"oiyx", "os_is_yx_isv16_osv16", {256, 256, 3, 3}, T::f32, T::u8, "cpu", 144},
                        {"oiyx", "os_is_yx_isv16_osv16", {128, 128, 3, 3}, T::f64, T::i8, "cpu", 144},
                        {"goiyx", "g_os_is_yx_isv16_osv16", {32, 32, 32, 3, 3}, T::f32, T::i8, "cpu", 144},
                        {"oiyx", "os_is_yx_isv16_osv16", {128, 128, 3, 3}, T::i64, T::i16, "cpu", 72},
                        {"oiyx", "os_is_yx_isv16_osv16", {256, 256, 3, 3}, T::f32, T::f32, "cpu", 72},
                        {"oiyx", "os_is_yx_isv16_osv16", {256, 256, 3, 3}, T::f32, T::f16, "cpu", 72},
                        {"bfyx", "b_fs_yx_fsv4", {8, 64, 56, 56}, T::u8, T::f32, "cpu", 32},
                        {"bfyx", "b_fs_yx_fsv4", {8, 64, 56, 56}, T::f32, T::i8, "gpu", 32},
                        {"bfyx", "bs_fs_yx_bsv4_fsv2", {32, 64, 28, 28}, T::i8, T::i8, "cpu", 392},
                        {"bfyx", "bs_fs_yx_bsv4_fsv2", {32, 64, 28, 28}, T::f16, T::f16, "cpu", 128},
                        {"oiyx", "is_os_yx_isv16_osv16", {256, 256, 3, 3}, T::u8, T::u8, "cpu", 288},
                        {"oiyx", "is_os_yx_isv16_osv16", {256, 256, 3, 3}, T::f32, T::f32, "cpu", 72},
                        {"oiyx", "os_is_yx_osa4_isa8_osv8_isv2", {256, 256, 3, 3}, T::i8, T::i8, "cpu", 288},
                        {"bfyx", "bs_fs_yx_bsv4_fsv2", {32, 64, 28, 28}, T::i8, T::i8, "gpu", 68}};
  for (const StagedPair& c : pairs) expect_staged_loads(c);
}

// CPU-tuned transposes prefetch their source rows where those lie 2 KiB or more apart (prefetches_rows()): tiled
// once per 64-byte line where a step reads less (8- and 16-bit rows of 16 and 8), every step where it reads a line
// or more, each hint beside its row's load and under its conditions; staged and lanes before each row's first
// load; tiled's row copies too. Tiled transposes also from 256 bytes apart where 4-byte sources go to 2- or
// 4-byte destinations, the reorder streams and the next work-items read the rest of the rows (channels last back
// to planar, f32 and i32). Not where rows lie closer otherwise (channels last back to planar in 8 and 16 bits,
// into 8-bit destinations, in cache, weights of few input channels; a pixel's rest in a padded batch block), not
// where the tensor is narrower than tiled's tile along A's digit (3 channels in blocks of 16), not for 4-bit
// sources, not in the GPU tuning. Nor where 8-bit rows go to 8-bit columns in unrolled steps of 64 rows (far
// rows into an 8-bit destination, streamed): from a 2-byte source the same steps keep them, and so do 8-bit
// tiles stepping 16 rows.
TEST(Generated, TransposesPrefetchSourceRowsPagesApart) {
  struct Pair {
    const char *from, *to;
    Dims shape;
    DataType src, dst;
    const char *impl, *tuning;
    const char* prefetch;  // nullptr: none; else the form of its statement
  };
  using T = DataType;
  const char* each_line = "if (pf && g_ok";  // tensors in cache: a hint per line
  const char* each_step = "      if (g_ok";   // a step a line or more, or streamed: a hint every step
  const char* each_row = "    if (g_ok) CR_PREFETCH(src + so + ";
  const Pair pairs[] = {{"bfyx", "byxf", {8, 64, 112, 112}, T::f16, T::i8, "tiled", "cpu", each_step},
                        {"bfyx", "byxf", {8, 64, 64, 64}, T::i8, T::i8, "tiled", "cpu", each_line},
                        // 8-bit copies in unrolled steps of 64 rows: hinted where they stream, not where the
                        // steps are unrolled for 4 KiB-aliased destination rows of a tensor in cache.
                        {"bfyx", "byxf", {8, 64, 112, 112}, T::i8, T::i8, "tiled", "cpu", each_step},
                        {"bfzyx", "bzyxf", {1, 64, 32, 64, 64}, T::u8, T::u8, "tiled", "cpu", each_step},
                        {"bfyx", "byxf", {1, 4096, 16, 16}, T::i8, T::i8, "tiled", "cpu", nullptr},
                        {"bfyx", "fs_b_yx_fsv32", {8, 64, 56, 56}, T::f16, T::f16, "tiled", "cpu", each_line},
                        {"bfyx", "byxf", {4, 64, 56, 56}, T::i64, T::i64, "tiled", "cpu", each_step},
                        {"bfyx", "b_fs_yx_fsv16", {1, 20, 32, 32}, T::f32, T::f16, "tiled", "cpu", each_step},
                        // y and x one digit of both (no axis of its own), 8 KiB apart; 16 of them a tile (its
                        // rows far apart: kFarRows), each step of 16 a line.
                        {"yxfb", "bfyx", {32, 64, 28, 28}, T::f32, T::f32, "tiled", "cpu", each_step},
                        {"oiyx", "os_is_yx_isv16_osv16", {256, 256, 3, 3}, T::f32, T::f32, "staged", "cpu", each_row},
                        {"oiyx", "os_is_yx_osv32_isv4_swizzled_by_2", {256, 256, 3, 3}, T::i8, T::i8, "lanes", "cpu", each_row},
                        {"bfyx", "byxf", {1, 16, 16, 16}, T::f32, T::f32, "tiled", "cpu", nullptr},  // rows 1 KiB apart
                        // Pixels 1 KiB and 256 bytes apart, split between B and the next work-items, streamed: from
                        // every whole-byte source type into any destination.
                        {"byxf", "bfyx", {8, 256, 28, 28}, T::f32, T::f32, "tiled", "cpu", each_step},
                        {"byxf", "bfyx", {8, 64, 56, 56}, T::i32, T::i32, "tiled", "cpu", each_step},
                        {"byxf", "bfyx", {8, 256, 28, 28}, T::f32, T::f16, "tiled", "cpu", each_step},
                        {"byxf", "bfyx", {8, 128, 56, 56}, T::f32, T::i8, "tiled", "cpu", each_step},
                        {"byxf", "bfyx", {8, 128, 56, 56}, T::f16, T::f16, "tiled", "cpu", each_step},
                        {"byxf", "bfyx", {8, 256, 56, 56}, T::bf16, T::bf16, "tiled", "cpu", each_step},
                        {"byxf", "bfyx", {1, 256, 16, 16}, T::f32, T::f32, "tiled", "cpu", nullptr},  // in cache: no stream
                        // The pixel's rest is a block's batches, half of them padding.
                        {"bs_fs_yx_bsv16_fsv16", "bfyx", {8, 64, 56, 56}, T::f32, T::f32, "tiled", "cpu", nullptr},
                        {"byxf", "bfyx", {8, 256, 28, 28}, T::f32, T::f32, "tiled", "gpu", nullptr},
                        {"byxf", "bfyx", {8, 64, 112, 112}, T::u8, T::u8, "tiled", "cpu", nullptr},
                        {"bfyx", "b_fs_yx_fsv16", {1, 3, 224, 224}, T::f32, T::f32, "tiled", "cpu", nullptr},
                        {"bfyx", "byxf", {8, 64, 112, 112}, T::i4, T::i8, "tiled", "cpu", nullptr},
                        {"goiyx", "g_os_is_yx_isv16_osv16", {32, 32, 32, 3, 3}, T::f16, T::f16, "staged", "cpu", nullptr},
                        {"oiyx", "os_is_yx_osv16_isv4", {128, 128, 3, 3}, T::i8, T::i8, "lanes", "cpu", nullptr},
                        {"bfyx", "byxf", {8, 64, 112, 112}, T::i8, T::i8, "tiled", "gpu", nullptr},
                        {"oiyx", "os_is_yx_isv16_osv16", {256, 256, 3, 3}, T::f32, T::f32, "staged", "gpu", nullptr},
                        {"oiyx", "os_is_yx_osv32_isv4_swizzled_by_2", {256, 256, 3, 3}, T::i8, T::i8, "lanes", "gpu", nullptr}};
  // A device reporting a 32 MiB cache, so that the big transposes stream (their steps unrolled) as on this host.
  const uint64_t cache = uint64_t{32} << 20;
  for (const Pair& c : pairs) {
    const Layout src(format_from_name(c.from), c.src, c.shape), dst(format_from_name(c.to), c.dst, c.shape);
    const std::string label = src.describe() + " -> " + dst.describe() + ", " + c.impl + ", " + c.tuning + " tuning";
    const std::string code = plan_reorder(tuned_device(c.tuning, cache), src, dst, c.impl).source.code;
    if (std::string(c.impl) == "tiled") {
      ASSERT_GT(transpose_a_length(code), 0) << label << ": not a transpose";
    }
    if (!c.prefetch) {
      EXPECT_EQ(code.find("CR_PREFETCH(src"), std::string::npos) << label << "\n" << code;
      continue;
    }
    EXPECT_NE(code.find(c.prefetch), std::string::npos) << label << "\n" << code;
    // Into the second-level cache where the data comes from memory (source and destination past a quarter of
    // the cache: the reorder streams), into the first otherwise.
    const char want = static_cast<uint64_t>(src.bytes() + dst.bytes()) > cache / 4 ? '2' : '3';
    static const std::regex locality(R"(CR_PREFETCH\(src \+ [^;\n]*, (\d)\);)");
    size_t localities = 0;
    for (auto m = std::sregex_iterator(code.begin(), code.end(), locality); m != std::sregex_iterator(); ++m, ++localities)
      EXPECT_EQ((*m)[1].str(), std::string(1, want)) << label << ": a hint's locality";
    EXPECT_GT(localities, 0u) << label << "\n" << code;
    if (want == '2') {
      EXPECT_EQ(code.find("const bool pf"), std::string::npos) << label << ": streamed, a hint every step\n" << code;
    }
    if (std::string(c.impl) != "tiled") continue;
    // One per row of a step, each beside that row's load and under its conditions.
    static const std::regex row(R"(if \((?:pf && )?(g_ok[^\n]*?)\) CR_PREFETCH\(src \+ [^\n]*\\\n +const \w+ r\w* = \(([^\n]*?)\) \? )");
    size_t hints = 0, rows = 0;
    for (size_t at = code.find("CR_PREFETCH(src + "); at != std::string::npos; at = code.find("CR_PREFETCH(src + ", at + 1)) ++hints;
    for (auto m = std::sregex_iterator(code.begin(), code.end(), row); m != std::sregex_iterator(); ++m, ++rows)
      EXPECT_EQ((*m)[1].str(), (*m)[2].str()) << label << ": a hint's conditions are not its row's";
    EXPECT_EQ(hints, rows) << label << "\n" << code;
    EXPECT_GT(rows, 0u) << label;
  }
  // The 8-bit copy and the conversion from f16 above take the same steps, 64 rows each (4 unrolled steps of 16).
  for (const DataType from : {T::i8, T::f16}) {
    const Dims shape = {8, 64, 112, 112};
    const Layout src(format_from_name("bfyx"), from, shape), dst(format_from_name("byxf"), T::i8, shape);
    const std::string code = plan_reorder(tuned_device("cpu", cache), src, dst, "tiled").source.code;
    EXPECT_NE(code.find("for (IDX_T ia = 0; ia < 64; ia += 64) {"), std::string::npos) << src.describe() << "\n" << code;
    EXPECT_NE(code.find("const IDX_T ia3 = ia + 48;"), std::string::npos) << src.describe() << "\n" << code;
  }
  {  // The aliased 8-bit copy above (in cache, no hints) takes unrolled steps too.
    const Dims shape = {1, 4096, 16, 16};
    const Layout src(format_from_name("bfyx"), T::i8, shape), dst(format_from_name("byxf"), T::i8, shape);
    const std::string code = plan_reorder(tuned_device("cpu", cache), src, dst, "tiled").source.code;
    EXPECT_NE(code.find("const IDX_T ia3 = ia + 48;"), std::string::npos) << src.describe() << "\n" << code;
  }
  // Row copies (row_loops()): a hint per row and line where a tile holds 8 rows or more pages apart (a pixel's
  // 16 channels from each of 8 planes); none for 2 such rows, which the hardware follows itself.
  const struct {
    const char *from, *to;
    Dims shape;
    DataType type;
    bool hinted;
  } copies[] = {{"b_fs_yx_fsv16", "byxf", {8, 128, 56, 56}, T::f16, true}, {"b_fs_yx_fsv32", "byxf", {8, 64, 56, 56}, T::i8, false}};
  for (const auto& c : copies) {
    const Layout src(format_from_name(c.from), c.type, c.shape), dst(format_from_name(c.to), c.type, c.shape);
    const std::string code = plan_reorder(tuned_device("cpu"), src, dst, "tiled").source.code;
    ASSERT_EQ(transpose_a_length(code), 0) << src.describe() << " -> " << dst.describe() << ": not a row copy\n" << code;
    EXPECT_EQ(code.find("if (ok) CR_PREFETCH(src + s_off + ((ib) * ") != std::string::npos, c.hinted)
        << src.describe() << " -> " << dst.describe() << "\n" << code;
  }
}

// tiled's tiles whose rows of A fill destination lines while their source rows are under one, scalar or
// transposed with a scalar tail of B, walk the grid digit nearest in the source innermost in CPU tiles
// (plan_on()): oiyx -> i_yxs_os_yxsv2_osv16 f32 (16 channels' rows of 9 floats, 10 columns with the yxsv2
// padding: 8 transposed, 2 scalar) steps on by an input channel, 9 floats; not with 32-byte rows of A (f16),
// not in the GPU tuning. Rows 2 KiB or more apart get a prefetch hint each at a line's first step (CPU only).
TEST(Generated, ShortSourceRowsWalkTheSourcesNearestDigitInnermost) {
  struct Pair {
    Dims shape;
    DataType type;
    const char* tuning;
    bool nearest_inside;
  };
  const Pair pairs[] = {{{256, 256, 3, 3}, DataType::f32, "cpu", true},
                        {{32, 8, 3, 3}, DataType::f32, "cpu", true},
                        {{128, 64, 3, 3}, DataType::f16, "cpu", false},
                        {{256, 256, 3, 3}, DataType::f32, "gpu", false}};
  static const std::regex step(R"(s_off \+= k\d+ \* (\d+);)");
  for (const Pair& c : pairs) {
    const Layout src(format_from_name("oiyx"), c.type, c.shape), dst(format_from_name("i_yxs_os_yxsv2_osv16"), c.type, c.shape);
    const std::string label = src.describe() + " -> " + dst.describe() + ", " + c.tuning + " tuning";
    const std::string code = plan_reorder(tuned_device(c.tuning), src, dst, "tiled").source.code;
    ASSERT_GT(transpose_a_length(code), 0) << label << ": transposes along the output channels\n" << code;
    ASSERT_NE(code.find("for (IDX_T ib = 8; ib < 10; ++ib) {"), std::string::npos) << label << ": B's last 2 columns scalar\n" << code;
    // The grid's digits, innermost first, by their source strides.
    std::vector<int64_t> strides;
    for (auto m = std::sregex_iterator(code.begin(), code.end(), step); m != std::sregex_iterator(); ++m) strides.push_back(std::stoll((*m)[1]));
    ASSERT_GE(strides.size(), 2u) << label << "\n" << code;
    EXPECT_EQ(strides.front() == *std::min_element(strides.begin(), strides.end()), c.nearest_inside) << label << "\n" << code;
    const bool apart = c.shape[1] * 9 * static_cast<int64_t>(size_of(c.type)) >= 2048;
    EXPECT_EQ(code.find("if (pf && g_ok) CR_PREFETCH(src + s_off + ib + ((ia + 0) * ") != std::string::npos,
              apart && std::string(c.tuning) == "cpu")
        << label << "\n" << code;
  }
}

// CPU transposes whose B's destination offsets (or A's source offsets) would divide by a constant that is not a
// power of two (3 x 3 positions after 16 input channels: oiyx -> os_is_yx_isv16_osv16, and back) read each
// column's (row's) offset from a table, and rank before staged where the grid holds 32 work-items or more; GPU
// tiles keep the arithmetic, and runs of powers of two (a blocked data layout) need no table.
TEST(Generated, OddRunsReadOffsetTables) {
  struct Pair {
    const char *from, *to;
    Dims shape;
    DataType src, dst;
    const char* tuning;
    bool table;
    const char* chosen;
    const char* read = "_bo)[ib + 0]";  // the first column's (or row's) read of its table
  };
  using T = DataType;
  const Pair pairs[] = {{"oiyx", "os_is_yx_isv16_osv16", {256, 256, 3, 3}, T::f16, T::f16, "cpu", true, "tiled"},
                        {"oiyx", "os_is_yx_isv16_osv16", {256, 256, 3, 3}, T::f32, T::i8, "cpu", true, "tiled"},
                        {"oiyx", "is_os_yx_isv16_osv16", {256, 256, 3, 3}, T::f32, T::f32, "cpu", true, "tiled"},
                        {"goiyx", "g_os_is_yx_isv16_osv16", {32, 32, 32, 3, 3}, T::f16, T::f16, "cpu", true, "tiled"},
                        {"oizyx", "os_is_zyx_isv16_osv16", {128, 96, 3, 3, 3}, T::f32, T::f32, "cpu", true, "tiled"},
                        // a grid of 16 work-items (tiles of 784 columns): staged stays first
                        {"oiyx", "os_is_yx_isv16_osv16", {64, 64, 7, 7}, T::f16, T::f16, "cpu", true, "staged"},
                        {"oiyx", "os_is_yx_isv16_osv16", {256, 256, 3, 3}, T::f16, T::f16, "gpu", false, nullptr},
                        {"bfyx", "b_fs_yx_fsv16", {8, 64, 56, 56}, T::f32, T::f32, "cpu", false, nullptr},
                        // back to plain: A takes 3 x 3 positions and the block's 16 input channels, its rows'
                        // source offsets from a table
                        {"os_is_yx_isv16_osv16", "oiyx", {256, 256, 3, 3}, T::f32, T::f32, "cpu", true, "tiled", "_ao)[ia + 0]"},
                        {"is_os_yx_isv16_osv16", "oiyx", {256, 256, 3, 3}, T::i8, T::i8, "cpu", true, "tiled", "_ao)[ia + 0]"},
                        {"g_os_is_yx_isv16_osv16", "goiyx", {32, 32, 32, 3, 3}, T::f16, T::f16, "cpu", true, "tiled", "_ao)[ia + 0]"}};
  for (const Pair& c : pairs) {
    const Layout src(format_from_name(c.from), c.src, c.shape), dst(format_from_name(c.to), c.dst, c.shape);
    const std::string label = src.describe() + " -> " + dst.describe() + ", " + c.tuning + " tuning";
    const DeviceInfo dev = tuned_device(c.tuning);
    const std::string code = plan_reorder(dev, src, dst, "tiled").source.code;
    ASSERT_GT(transpose_a_length(code), 0) << label << "\n" << code;
    EXPECT_EQ(code.find(c.read) != std::string::npos, c.table) << label << "\n" << code;
    if (c.table) {
      EXPECT_EQ(code.find("% 9) *"), std::string::npos) << label << "\n" << code;
    }
    if (c.chosen) {
      EXPECT_EQ(plan_reorder(dev, src, dst, "").impl, c.chosen) << label;
    }
  }
}

// Where no vector width divides B's run, tiled transposes the columns a width covers and leaves the rest to
// scalar loops, rather than running the whole tile in scalar loops: 3 x 3 weights' rows of 9 (10 with
// i_yxs_os_yxsv2_osv16's padding). Where B is one digit along a destination axis with lower padding, the
// transposes step from its first real column and the padding columns (with any real ones a width leaves
// over) go to scalar loops on both sides: no step then reads a column the source lacks, and every step's
// loads start where the source's rows do. 4-bit types and compensation sums keep the scalar loops.
TEST(Generated, TransposesLeaveATailOfBToScalarLoops) {
  struct Pair {
    const char *from, *to;
    DataType type;
    Dims shape;
    int pad;                   // the destination padded by it in y and x
    int64_t lo, main, length;  // B's columns transposed from `lo`, `main` of them, of `length` (0: none scalar)
    bool transposes;
  };
  const Pair pairs[] = {{"oiyx", "i_yxs_os_yxsv2_osv16", DataType::f32, {64, 64, 3, 3}, 0, 0, 8, 10, true},
                        {"oiyx", "i_yxs_os_yxsv2_osv16", DataType::i8, {64, 64, 3, 3}, 0, 0, 8, 10, true},
                        {"goiyx", "gi_yxs_os_yxsv2_osv16", DataType::f16, {4, 32, 32, 3, 3}, 0, 0, 8, 10, true},
                        {"oiyx", "o_is_yx_isv16", DataType::f16, {64, 64, 3, 3}, 0, 0, 8, 9, true},
                        {"bfyx", "b_fs_yx_fsv16", DataType::f16, {2, 32, 8, 8}, 1, 1, 8, 10, true},
                        {"bfyx", "b_fs_yx_fsv16", DataType::f16, {8, 64, 56, 56}, 1, 1, 56, 58, true},
                        {"bfyx", "b_fs_yx_fsv16", DataType::f32, {8, 64, 62, 62}, 1, 1, 60, 64, true},
                        {"bfyx", "b_fs_yx_fsv16", DataType::i8, {2, 64, 28, 28}, 2, 2, 28, 32, true},
                        {"bfyx", "b_fs_yx_fsv16", DataType::f16, {8, 64, 56, 56}, 0, 0, 0, 0, true},
                        {"oiyx", "i_yxs_os_yxsv2_osv16", DataType::u4, {64, 64, 3, 3}, 0, 0, 0, 0, false}};
  static const std::regex scalar(R"(for \(IDX_T ib = (\d+); ib < (\d+); \+\+ib\) \{)");
  for (const Pair& c : pairs) {
    const Dims pad = c.shape.size() == 4 ? Dims{0, 0, c.pad, c.pad} : Dims(c.shape.size(), 0);
    const Layout src(format_from_name(c.from), c.type, c.shape), dst(format_from_name(c.to), c.type, c.shape, pad, pad);
    const std::string label = src.describe() + " -> " + dst.describe();
    const std::string code = plan_reorder(tuned_device("cpu"), src, dst, "tiled").source.code;
    EXPECT_EQ(transpose_a_length(code) > 0, c.transposes) << label << "\n" << code;
    if (!c.transposes) continue;
    // The scalar ranges cover what the transposes leave: [0, lo) and [lo + main, length).
    int64_t covered = 0;
    for (auto m = std::sregex_iterator(code.begin(), code.end(), scalar); m != std::sregex_iterator(); ++m) {
      const int64_t from = std::stoll((*m)[1]), to = std::stoll((*m)[2]);
      EXPECT_TRUE((from == 0 && to == c.lo) || (from == c.lo + c.main && to == c.length)) << label << ": ib in [" << from << ", " << to << ")\n" << code;
      covered += to - from;
    }
    EXPECT_EQ(covered, c.length - c.main) << label << "\n" << code;
    if (c.length > 0) {
      EXPECT_NE(code.find("for (IDX_T ib = " + std::to_string(c.lo) + "; ib < " + std::to_string(c.lo + c.main) + "; ib += "), std::string::npos)
          << label << "\n" << code;
    }
  }
}

// CPU tiles leave no per-access test in their loops where they need not: 8- and 16-bit vectors of tiled,
// staged and lanes load and store unaligned (CR_LOADU / CR_STOREU, no src_wide / dst_wide test), and tiled's
// tile is written for g_ok known true and known false where the grid holds padding (CR_GRID_SPLIT). GPU tunings
// keep the guarded forms and one tile; a grid without masks has one tile everywhere. lanes writes its body
// twice (CR_ALIGNMENT_SPLIT) only where the body tests an alignment: GPU tunings.
TEST(Generated, CpuTilesTakeTheirTestsOutOfTheLoop) {
  struct Pair {
    const char *from, *to, *impl;
    DataType type;
    Dims shape;
    bool padded;            // the destination padded by 1 in y and x
    bool unaligned, split;  // in the CPU tuning
  };
  const Pair pairs[] = {{"bfyx", "byxf", "tiled", DataType::i8, {2, 64, 16, 16}, false, true, false},
                        {"bfyx", "byxf", "tiled", DataType::i8, {2, 64, 16, 16}, true, true, true},
                        {"bfyx", "b_fs_yx_fsv16", "tiled", DataType::f16, {2, 32, 8, 8}, false, true, false},
                        {"bfyx", "b_fs_yx_fsv16", "tiled", DataType::f16, {2, 32, 8, 8}, true, true, true},
                        {"bfyx", "byxf", "tiled", DataType::f32, {2, 64, 16, 16}, true, false, true},
                        {"oiyx", "os_is_yx_isv16_osv16", "staged", DataType::f16, {32, 32, 3, 3}, false, true, false},
                        {"oiyx", "os_is_yx_osa4_isa8_osv8_isv4", "lanes", DataType::i8, {32, 32, 3, 3}, false, true, false}};
  for (const Pair& c : pairs)
    for (const char* tuning : {"cpu", "gpu"}) {
      const Dims pad = c.padded ? Dims{0, 0, 1, 1} : Dims{0, 0, 0, 0};
      const Layout src(format_from_name(c.from), c.type, c.shape), dst(format_from_name(c.to), c.type, c.shape, pad, pad);
      const std::string label = src.describe() + " -> " + dst.describe() + " " + c.impl + ", " + tuning + " tuning";
      const std::string code = plan_reorder(tuned_device(tuning), src, dst, c.impl).source.code;
      const bool cpu = std::string(tuning) == "cpu", unaligned = cpu && c.unaligned;
      for (const char* form : {"CR_LOADU(", "CR_STOREU("}) {
        EXPECT_EQ(code.find(form) != std::string::npos, unaligned) << form << " " << label << "\n" << code;
      }
      for (const char* test : {"(src_wide ? ", "if (dst_wide)"}) {
        EXPECT_TRUE(!unaligned || code.find(test) == std::string::npos) << test << " " << label << "\n" << code;
      }
      if (std::string(c.impl) == "tiled") {
        EXPECT_NE(code.find(std::string("#define CR_GRID_SPLIT ") + (cpu && c.split ? "1" : "0")), std::string::npos) << label << "\n" << code;
      }
      if (std::string(c.impl) == "lanes") {
        EXPECT_NE(code.find(std::string("#define CR_ALIGNMENT_SPLIT ") + (unaligned ? "0" : "1")), std::string::npos) << label << "\n" << code;
      }
    }
}

// Planning is bounded by the tiles, not the shape: a dim of about 10^10 without small divisors (found by the
// CLI fuzzer, where `source` never returned) plans at once with every implementation and both tunings.
TEST(Generated, HugeDimsPlanAtOnce) {
  const Dims shape = {5, 4, 9999999434, 83};
  const Layout src(format_from_name("oixy"), DataType::i8, shape), dst(format_from_name("os_is_yx_osv6_isv4"), DataType::i8, shape);
  for (const char* type : {"cpu", "gpu"}) {
    const DeviceInfo dev = tuned_device(type);
    for (const auto& impl : KernelSelector::instance().impls()) {
      if (!impl->reject(ReorderParams{src, dst, dev, {}}).empty()) continue;
      EXPECT_NE(plan_reorder(dev, src, dst, impl->name()).source.code.find("#define IDX_T long"), std::string::npos)
          << impl->name();
    }
  }
}

// Capability and preference apart: on every pair of 4-D data formats and weights pairs, in both tunings and
// with converting and plain types, the selector runs the accepting implementation of lowest rank (ties: list
// order), exactly one is chosen, a rank off an implementation's usual place says the measurement behind it,
// and every accepting implementation generates its kernel when forced.
TEST(Selector, RunsTheAcceptingImplementationOfLowestRank) {
  std::vector<std::pair<Layout, Layout>> pairs;
  const std::vector<std::string> names = rank4_data_names();
  for (const std::string& a : names)
    for (const char* b : {"bfyx", "byxf", "b_fs_yx_fsv16", "b_fs_yx_fsv4", "fs_b_yx_fsv32"})
      for (const auto& [st, dt] : {std::pair{DataType::f32, DataType::f32}, {DataType::f16, DataType::f16},
                                   {DataType::i8, DataType::i8}, {DataType::f32, DataType::i8}, {DataType::u8, DataType::f16}})
        pairs.emplace_back(Layout(format_from_name(a), st, {2, 32, 3, 3}), Layout(format_from_name(b), dt, {2, 32, 3, 3}));
  for (const char* w : {"os_is_yx_osv16_isv4", "os_is_yx_osa4_isa8_osv8_isv4", "os_is_yx_isv16_osv16"})
    for (const Dims& shape : {Dims{64, 64, 3, 3}, Dims{64, 64, 1, 1}})
      for (DataType st : {DataType::i8, DataType::f32})
        pairs.emplace_back(Layout(format_from_name("oiyx"), st, shape), Layout(format_from_name(w), DataType::i8, shape));
  // Tiled's 4 x 4 transposes of bytes (4-byte vectors): staged runs first.
  pairs.emplace_back(Layout(format_from_name("bfyx"), DataType::i8, {2, 32, 8, 8}),
                     Layout(format_from_name("b_fs_yx_fsv4"), DataType::i8, {2, 32, 8, 8}));
  // A TPU destination owns only some channel slots: only generic takes it.
  pairs.emplace_back(L("bfyx", {1, 2, 3, 4}), L("tpu_aligned(npus=4,npu_bytes=1024,addr=128)", {1, 2, 3, 4}));
  std::map<std::string, int> chosen_by, ranked_off;
  for (const char* type : {"cpu", "gpu"}) {
    const DeviceInfo dev = tuned_device(type);
    for (const auto& [src, dst] : pairs) {
      const std::string label = std::string(type) + " " + src.describe() + " -> " + dst.describe();
      const std::vector<Verdict> verdicts = KernelSelector::instance().explain(ReorderParams{src, dst, dev, {}});
      const Verdict* chosen = nullptr;
      int lowest = 1 << 30;
      for (size_t k = 0; k + 1 < verdicts.size(); ++k) {  // the ordered list; agnostic (last) is never chosen
        const Verdict& v = verdicts[k];
        if (!v.declines.empty()) {
          EXPECT_FALSE(v.chosen) << label;
          continue;
        }
        if (v.chosen) {
          EXPECT_EQ(chosen, nullptr) << label << ": two chosen";
          chosen = &v;
        }
        lowest = std::min(lowest, v.rank.value);
        if (!v.rank.why.empty()) ++ranked_off[v.impl];
        EXPECT_EQ(plan_reorder(dev, src, dst, v.impl).impl, v.impl) << label;
      }
      EXPECT_FALSE(verdicts.back().chosen) << label;
      ASSERT_NE(chosen, nullptr) << label;
      EXPECT_EQ(chosen->rank.value, lowest) << label;
      for (const Verdict& v : verdicts) {
        if (&v == chosen) break;  // earlier in the list with the same rank would have won the tie
        if (v.declines.empty()) {
          EXPECT_GT(v.rank.value, lowest) << label << ": " << v.impl << " ties earlier";
        }
      }
      EXPECT_EQ(plan_reorder(dev, src, dst).impl, chosen->impl) << label;
      ++chosen_by[chosen->impl];
    }
  }
  // The cases reach every implementation as a choice, and every specialised one ranked off its usual place.
  for (const char* impl : {"local", "lanes", "staged", "tiled", "generic"}) EXPECT_GT(chosen_by[impl], 0) << impl;
  for (const char* impl : {"local", "lanes", "staged", "tiled"}) EXPECT_GT(ranked_off[impl], 0) << impl;
}

// Tiled's rows under 16 bytes whose destination neighbours are a cache line or more apart in the source go to
// staged (measured 1.9-3.6x faster there); near neighbours and 16-byte rows stay with tiled (measured
// faster). Both tunings, local aside (it runs first on GPUs: Selector.LocalFirstOnGpus).
TEST(Selector, NarrowRowsOfFarNeighboursGoToStaged) {
  const Dims shape = {2, 32, 5, 6};
  const struct {
    const char *from, *to;
    DataType st, dt;
    const char* impl;
  } cases[] = {
      {"b_fs_yx_fsv4", "b_fs_yx_fsv16", DataType::i8, DataType::i8, "staged"},
      {"b_fs_yx_fsv4", "b_fs_yx_fsv32", DataType::u8, DataType::u8, "staged"},
      {"b_fs_yx_fsv4", "b_fs_yx_fsv16", DataType::f16, DataType::f16, "staged"},
      {"b_fs_yx_fsv4", "fs_b_yx_fsv32", DataType::f16, DataType::f16, "staged"},
      {"b_fs_yx_fsv4", "b_fs_yx_fsv16", DataType::u8, DataType::f32, "staged"},  // 4-byte source rows (1.5x)
      {"b_fs_yx_fsv4", "b_fs_yx_fsv16", DataType::f32, DataType::f32, "tiled"},  // 16-byte rows
      {"b_fs_yx_fsv16", "b_fs_yx_fsv4", DataType::i8, DataType::i8, "tiled"},    // neighbours 16 bytes apart
      {"b_fs_yx_fsv16", "bs_fs_yx_bsv16_fsv16", DataType::f16, DataType::f16, "tiled"},
  };
  for (const char* type : {"cpu", "gpu"})
    for (const auto& c : cases) {
      const Layout src(format_from_name(c.from), c.st, shape), dst(format_from_name(c.to), c.dt, shape);
      std::string best;
      int lowest = 1 << 30;
      for (const Verdict& v : KernelSelector::instance().explain(ReorderParams{src, dst, tuned_device(type), {}}))
        if (v.declines.empty() && v.impl != "local" && v.impl != "agnostic" && v.rank.value < lowest) lowest = v.rank.value, best = v.impl;
      EXPECT_EQ(best, c.impl) << type << " " << src.describe() << " -> " << dst.describe();
    }
}

// local (one work-group per tile, through local memory) runs first on GPUs, where its tile fills a work-group:
// measured the fastest in 40 of the suite's 56 cases on an H100, every family and element size among them.
// Where masked axes leave it a few elements (padding on y and x, a fused yxs digit), and on CPUs, it ranks
// after generic; it declines 4-bit types, compensation sums and batches.
TEST(Selector, LocalFirstOnGpus) {
  using T = DataType;
  const struct {
    const char *from, *to;
    Dims shape;
    T st, dt;
  } first[] = {{"bfyx", "byxf", {8, 256, 56, 56}, T::f32, T::f32},
               {"byxf", "bfyx", {8, 64, 112, 112}, T::u8, T::u8},
               {"bfyx", "b_fs_yx_fsv16", {8, 128, 56, 56}, T::f32, T::bf16},
               {"b_fs_yx_fsv16", "b_fs_yx_fsv32", {8, 256, 56, 56}, T::f32, T::f32},
               {"bfyx", "bs_fs_yx_bsv32_fsv32", {32, 64, 56, 56}, T::i8, T::i8},
               {"oiyx", "os_is_yx_isv16_osv16", {256, 256, 3, 3}, T::f32, T::f32},
               {"oiyx", "os_is_yx_osa4_isa8_osv8_isv4", {256, 256, 3, 3}, T::i8, T::i8},
               {"bfyx", "b_fs_yx_fsv16", {4, 64, 56, 56}, T::i64, T::i64}};
  for (const auto& c : first) {
    const Layout src(format_from_name(c.from), c.st, c.shape), dst(format_from_name(c.to), c.dt, c.shape);
    EXPECT_EQ(plan_reorder(tuned_device("gpu"), src, dst).impl, "local") << src.describe() << " -> " << dst.describe();
    EXPECT_NE(plan_reorder(tuned_device("cpu"), src, dst).impl, "local") << src.describe() << " -> " << dst.describe();
  }
  const Dims shape = {8, 64, 56, 56};
  const Layout padded(format_from_name("b_fs_yx_fsv16"), T::f16, shape, {0, 0, 1, 1}, {0, 0, 1, 1});
  const Layout bfyx(format_from_name("bfyx"), T::f16, shape);
  for (const Verdict& v : KernelSelector::instance().explain(ReorderParams{bfyx, padded, tuned_device("gpu"), {}}))
    if (v.impl == "local") {
      EXPECT_EQ(v.declines, "");
      EXPECT_FALSE(v.chosen);
      EXPECT_NE(v.rank.why.find("tile of 16 elements"), std::string::npos) << v.rank.why;
    }
  ReorderParams item{bfyx, Layout(format_from_name("byxf"), T::f16, shape), tuned_device("gpu"), {}};
  item.batch_item = true;
  EXPECT_EQ(KernelSelector::instance().find("local")->reject(item), "");
  // Inside a batch its groups are the batch's, one size for every item that stages through a tile: a small
  // tile's item keeps the configured 256 there (16 alone), the batch takes the largest tile as a local
  // argument, and items planned apart with other group sizes are refused by name.
  const Layout window(format_from_name("oiyx"), T::f32, {33, 17, 3, 3});
  ReorderParams small{window, Layout(format_from_name("os_is_yx_isv16_osv16"), T::f32, window.dims()), tuned_device("gpu"), {}};
  small.batch_item = true;
  const KernelData big_item = KernelSelector::instance().select(item, "local");
  const KernelData small_item = KernelSelector::instance().select(small, "local");
  const KernelData tiled_item = KernelSelector::instance().select(small, "tiled");
  EXPECT_EQ(big_item.local, std::vector<size_t>{256});
  EXPECT_EQ(small_item.local, std::vector<size_t>{256});
  EXPECT_GT(big_item.local_bytes, small_item.local_bytes);
  EXPECT_EQ(tiled_item.local_bytes, 0u);
  const KernelData batch = batch_kernel({tiled_item, small_item, big_item}, {{T::f32, T::f32}, {T::f32, T::f32}, {T::f16, T::f16}},
                                        {{0, 1}, {0, 2}, {3, 4}}, 5, tuned_device("gpu"));
  EXPECT_EQ(batch.local, std::vector<size_t>{256});
  EXPECT_EQ(batch.local_bytes, big_item.local_bytes);
  // The two `local` items' passes as functions with the batch kernel's one barrier between them, at its top
  // level: PoCL 3.1 left blocks of small-tile items unwritten with the barrier inside an item's function
  // (NOTES, "local inside batches"), a race the sweep's batches catch only now and then.
  auto occurrences = [&](const std::string& what) {
    size_t count = 0;
    for (size_t at = batch.source.code.find(what); at != std::string::npos; at = batch.source.code.find(what, at + 1)) ++count;
    return count;
  };
  EXPECT_EQ(occurrences("__local ulong* cr_batch_tile"), 1u);
  EXPECT_EQ(occurrences("_item_load(("), 2u);
  EXPECT_EQ(occurrences("_item_store(("), 2u);
  EXPECT_EQ(occurrences("#define BATCH_AFTER_BARRIER(g) barrier(CLK_LOCAL_MEM_FENCE);"), 1u);
  try {
    batch_kernel({big_item, plan_reorder(tuned_device("gpu"), small.src, small.dst, "local")}, {{T::f16, T::f16}, {T::f32, T::f32}},
                 {{0, 1}, {2, 3}}, 4, tuned_device("gpu"));
    ADD_FAILURE() << "a batch took tiles of two group sizes";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("work-groups of 16"), std::string::npos) << err.what();
  }
  EXPECT_NE(plan_reorder(tuned_device("gpu"), bfyx, Layout(format_from_name("byxf"), T::u4, shape)).impl, "local");
  // Its group size is the host's to keep, not the kernel's to require: with reqd_work_group_size, PoCL 3.1
  // aborted a process that stored such programs' binaries and ran 150 of them (NOTES: "PoCL's dlhandle cache
  // and reqd_work_group_size").
  for (const char* type : {"cpu", "gpu"})
    EXPECT_EQ(plan_reorder(tuned_device(type), item.src, item.dst, "local").source.code.find("__attribute__((reqd_work_group_size"),
              std::string::npos) << type;
  // Group sizes: the configured count for a big tile; for a small one (weights' tails keep it to the kernel
  // window) the power of two the tile fills, 8 at least (PoCL runs a group as a loop, where a work-item
  // without a slot costs its iteration).
  const struct {
    Dims shape;
    size_t local;
  } groups[] = {{{33, 17, 3, 3}, 16}, {{33, 17, 2, 2}, 8}};
  for (const auto& g : groups) {
    const Layout oiyx(format_from_name("oiyx"), T::f32, g.shape), blocked(format_from_name("os_is_yx_isv16_osv16"), T::f32, g.shape);
    for (const char* type : {"cpu", "gpu"})
      EXPECT_EQ(plan_reorder(tuned_device(type), oiyx, blocked, "local").local, std::vector<size_t>{g.local}) << oiyx.describe() << type;
  }
  const Layout big(format_from_name("bfyx"), T::f32, {8, 256, 56, 56}), nhwc(format_from_name("byxf"), T::f32, {8, 256, 56, 56});
  EXPECT_EQ(plan_reorder(tuned_device("cpu"), big, nhwc, "local").local, std::vector<size_t>{64});
  EXPECT_EQ(plan_reorder(tuned_device("gpu"), big, nhwc, "local").local, std::vector<size_t>{256});
}

// A batch passes its items' offsets by value, in ulong16 vectors (a buffer made per launch cost NVIDIA's
// driver 70-100 us of the host's time; an argument each, 100 arguments to set: NOTES), so the device's
// argument space bounds the items of a launch as well as its buffers: 128 bytes a vector of 8 items' offsets,
// 8 a buffer, 8 for a local tile.
TEST(Selector, BatchLaunchesFitTheDevicesArgumentSpace) {
  DeviceInfo least = tuned_device("gpu"), nvidia = tuned_device("gpu");
  least.max_parameter_bytes = 1024;  // OpenCL 1.2's full profile at least
  nvidia.max_parameter_bytes = 4352;
  EXPECT_TRUE(batch_fits(least, 2, 56));
  EXPECT_FALSE(batch_fits(least, 2, 57));
  EXPECT_TRUE(batch_fits(least, 111, 1));
  EXPECT_FALSE(batch_fits(least, 112, 1));
  EXPECT_TRUE(batch_fits(nvidia, 2, kMaxBatchItems));
  EXPECT_TRUE(batch_fits(nvidia, 2 * kMaxBatchItems, kMaxBatchItems));
  EXPECT_FALSE(batch_fits(nvidia, 2, kMaxBatchItems + 1));
  EXPECT_FALSE(batch_fits(nvidia, 2 * kMaxBatchItems + 1, 1));
  // The offsets as the kernel's arguments, none in a buffer; and a list past the space refused by name.
  using T = DataType;
  const Layout oiyx(format_from_name("oiyx"), T::f32, {33, 17, 3, 3});
  const KernelData item = plan_reorder(least, oiyx, Layout(format_from_name("os_is_yx_isv16_osv16"), T::f32, oiyx.dims()), "tiled");
  std::vector<std::pair<size_t, size_t>> buffers(9, {0, 1});
  buffers[8] = {0, 2};
  const KernelData batch = batch_kernel(std::vector<KernelData>(9, item), std::vector<std::pair<T, T>>(9, {T::f32, T::f32}),
                                        buffers, 3, least);
  const std::string& code = batch.source.code;
  EXPECT_NE(code.find("#define BATCH_BASES const ulong16 cr_bases0, \\\n  const ulong16 cr_bases1,\n"), std::string::npos);
  EXPECT_NE(code.find("#define BATCH_ARGS __global uchar* b0, \\\n  __global uchar* b1, \\\n  __global uchar* b2\n"),
            std::string::npos);
  EXPECT_NE(code.find("*)b1, cr_bases0.s0, cr_bases0.s1, g - 0ul"), std::string::npos);   // item 0
  EXPECT_NE(code.find("*)b1, cr_bases0.se, cr_bases0.sf, g - "), std::string::npos);      // item 7
  EXPECT_NE(code.find("*)b2, cr_bases1.s0, cr_bases1.s1, g - "), std::string::npos);      // item 8
  EXPECT_EQ(code.find("__global const ulong*"), std::string::npos);
  try {
    batch_kernel(std::vector<KernelData>(63, item), std::vector<std::pair<T, T>>(63, {T::f32, T::f32}),
                 std::vector<std::pair<size_t, size_t>>(63, {0, 1}), 2, least);
    ADD_FAILURE() << "a launch past the device's argument space";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("a launch of 63 reorders over 2 buffers passes the 1024 bytes"), std::string::npos)
        << err.what();
  }
}
