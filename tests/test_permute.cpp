// Host tests of the strided-permutation analysis that the specialised kernels loop over: for every tuple
// of the iteration space, what it writes and reads must be what the two index plans say, and it must
// cover the destination exactly once.
#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "clreorder/error.hpp"
#include "clreorder/format.hpp"
#include "clreorder/reference.hpp"
#include "codegen.hpp"
#include "permute.hpp"

using namespace clreorder;

namespace {

// Walks the permutation the way the kernels do and checks every tuple against the plans.
std::string check_permutation(const Layout& src, const Layout& dst) {
  Permutation p = make_permutation(src, dst);
  if (!p.reject.empty()) return "rejected: " + p.reject;
  const int r = dst.rank();
  std::vector<int> written(static_cast<size_t>(dst.elements()), 0);
  std::vector<int64_t> idx(p.digits.size(), 0);
  for (int64_t n = 0; n < p.count(); ++n) {
    int64_t rest = n, doff = p.dst_base, soff = p.src_base;
    std::vector<int64_t> v(static_cast<size_t>(r), 0);
    bool shared_axis_digit = false;
    for (size_t k = p.digits.size(); k-- > 0;) {
      const PermDigit& d = p.digits[k];
      int64_t i = rest % d.extent;
      rest /= d.extent;
      doff += i * d.dst_stride;
      soff += i * d.src_stride;
      if (d.axis >= 0) v[static_cast<size_t>(d.axis)] += i * d.weight;
      else shared_axis_digit = true;
    }
    bool write = true, valid = true;
    Dims c(static_cast<size_t>(r));
    for (int a = 0; a < r; ++a) {
      const PermAxis& ax = p.axes[static_cast<size_t>(a)];
      if (v[static_cast<size_t>(a)] >= ax.limit) {
        if (!ax.check_write) return "tuple beyond the destination without a write mask";
        write = false;
      }
      c[static_cast<size_t>(a)] = v[static_cast<size_t>(a)] - ax.lower;
      bool in = c[static_cast<size_t>(a)] >= 0 && c[static_cast<size_t>(a)] < ax.dim;
      if (!in && !ax.masked()) return "axis without masks reaches padding";
      valid = valid && in;
    }
    if (!write) continue;
    if (doff < 0 || doff >= dst.elements()) return "destination offset out of range";
    if (written[static_cast<size_t>(doff)]++) return "destination offset written twice";
    if (!valid || shared_axis_digit) continue;  // merged digits carry no per-axis coordinate
    if (doff != dst.plan().offset(c.data())) return "destination offset disagrees with the plan";
    if (soff != src.plan().offset(c.data())) return "source offset disagrees with the plan";
  }
  for (int w : written)
    if (w != 1) return "destination element not written";
  return "";
}

Layout L(const std::string& f, const Dims& d, Dims lo = {}, Dims up = {}) {
  return Layout(format_from_name(f), DataType::f32, d, std::move(lo), std::move(up));
}

}  // namespace

TEST(Permutation, AgreesWithBothPlansOnDataPairs) {
  std::vector<std::string> names;
  for (const FormatEntry& e : registry()) {
    if (!e.unsupported.empty()) continue;
    Format f = Format::parse(e.name);
    if (f.kind() == FormatKind::data && f.rank() == 4) names.push_back(e.name);
  }
  for (const std::string& a : names)
    for (const std::string& b : names) {
      std::string err = check_permutation(L(a, {3, 19, 5, 7}), L(b, {3, 19, 5, 7}));
      EXPECT_EQ(err, "") << a << " -> " << b;
    }
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

TEST(Permutation, DeclinesWhatItCannotExpress) {
  EXPECT_NE(make_permutation(L("goiyx", {3, 1, 1, 3, 3}), L("gs_oi_yxs_gsv16_yxsv4", {3, 1, 1, 3, 3})).reject.find("fused"),
            std::string::npos);
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
TEST(TransposeNetwork, TextTransposesWithTwoSourceStages) {
  using Lanes = std::vector<std::pair<int, int>>;
  for (int v : {4, 8, 16}) {
    std::vector<std::string> rows;
    std::map<std::string, Lanes> regs;
    for (int i = 0; i < v; ++i) {
      rows.push_back("r" + std::to_string(i));
      for (int j = 0; j < v; ++j) regs[rows.back()].emplace_back(i, j);
    }
    const TransposeNet net = transpose_network("float", v, rows, "t");
    int stages = 0;
    while ((1 << stages) < v) ++stages;
    EXPECT_EQ(net.lines.size(), static_cast<size_t>(v * stages));
    const std::regex line("const float" + std::to_string(v) + " (\\w+) = \\(float" + std::to_string(v) + "\\)\\((.*)\\);");
    const std::regex part("(\\w+)(\\.s([0-9a-f]+))?");
    for (const std::string& text : net.lines) {
      std::smatch m;
      ASSERT_TRUE(std::regex_match(text, m, line)) << text;
      const std::string name = m[1], args = m[2];
      Lanes out;
      std::map<std::string, int> sources;
      for (auto it = std::sregex_iterator(args.begin(), args.end(), part); it != std::sregex_iterator(); ++it) {
        const std::string reg = (*it)[1], comps = (*it)[3];
        ASSERT_TRUE(regs.count(reg)) << text;
        ++sources[reg];
        if (comps.empty())
          out.insert(out.end(), regs[reg].begin(), regs[reg].end());
        else
          for (char c : comps) out.push_back(regs[reg][static_cast<size_t>(std::stoi(std::string(1, c), nullptr, 16))]);
      }
      EXPECT_EQ(sources.size(), 2u) << text;
      ASSERT_EQ(out.size(), static_cast<size_t>(v)) << text;
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
