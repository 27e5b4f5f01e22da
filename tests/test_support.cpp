// The test helpers that walk whole buffers or match kernel text, compiled once (see test_support.hpp).
#include <regex>

#include "code_checks.hpp"
#include "device_cases.hpp"
#include "test_support.hpp"

namespace clreorder_test {

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  std::vector<uint8_t> out(n);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    out[i] = static_cast<uint8_t>(s >> 24);
  }
  return out;
}

std::string compare_bytes(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
  if (got.size() != want.size())
    return "size " + std::to_string(got.size()) + " != " + std::to_string(want.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i] && bad++ == 0) first = i;
  if (!bad) return "";
  return std::to_string(bad) + " of " + std::to_string(got.size()) + " bytes differ, first at byte " +
         std::to_string(first) + " (got " + std::to_string(got[first]) + ", want " + std::to_string(want[first]) + ")";
}

std::vector<std::vector<uint8_t>> visible_sources(const Layout& src, DataType to, uint64_t seed) {
  const int64_t base = std::min(exact_integers(src.data_type()), exact_integers(to));
  const int64_t n = src.logical_elements();
  int passes = 1;
  for (int64_t reach = base; reach < n; reach = reach > n / base ? n : reach * base) ++passes;
  std::vector<std::vector<uint8_t>> out;
  for (int p = 0; p < passes; ++p) {
    std::vector<uint8_t> buf = random_bytes(static_cast<size_t>(src.bytes()), seed * 31 + static_cast<uint64_t>(p));
    for_each_coord(src.dims(), [&](const Dims& c, int64_t i) {
      for (int k = 0; k < p; ++k) i /= base;
      const int64_t v = i % base + 1;
      uint8_t element[8];
      convert_element(DataType::i64, &v, src.data_type(), element);
      write_element(src.data_type(), buf.data(), src.plan().offset(c.data()), element);
    });
    out.push_back(std::move(buf));
  }
  return out;
}

std::string compare_range(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, size_t from, size_t to,
                          const std::string& what) {
  for (size_t i = from; i < to; ++i)
    if (got[i] != want[i])
      return what + " changed at byte " + std::to_string(i - from) + " (" + std::to_string(want[i]) + " -> " +
             std::to_string(got[i]) + ")";
  return "";
}

std::string two_digit_rows(const std::string& code) {
  static const std::regex load(R"(vload\d+\(0, src \+ s_off \+ \(\(\(ib\) % \d+\) \* (\d+) \+ \(\(ib\) / \d+\) \* (\d+)\))");
  std::smatch m;
  if (!std::regex_search(code, m, load)) return "";
  return std::stoll(m[1]) < std::stoll(m[2]) ? "inside" : "outside";
}

std::string edge_step_checks(const std::string& code) {
  if (code.find("fb[ii * ") == std::string::npos || code.find("if (rd) {") == std::string::npos) return "";
  static const std::regex first(R"(const bool rd0 = [^\n]*?\(ib \+ 0\)( /)?)");
  std::smatch m;
  if (!std::regex_search(code, m, first)) return "";
  return m[1].matched ? "outside" : "inside";
}

namespace {

// TILE_LOOPS opening with the ia loop and the ib loop of steps inside it (columns_inner()); group 1: |A|.
const std::regex& columns_inner_loops() {
  static const std::regex loops(R"(TILE_LOOPS for \(IDX_T ia = 0; ia < (\d+); ia \+= \d+\) \{ \\\n +for \(IDX_T ib = \d+; ib < \d+; ib \+= \d+\) \{)");
  return loops;
}

}  // namespace

int64_t transpose_a_length(const std::string& code) {
  static const std::regex loops(R"(for \(IDX_T ib = \d+; ib < \d+; ib \+= \d+\) \{ \\\n(?: +const (?:bool|uint) [^\n]*\\\n)* +for \(IDX_T ia = 0; ia < (\d+);)");
  std::smatch m;
  if (std::regex_search(code, m, loops) || std::regex_search(code, m, columns_inner_loops())) return std::stoll(m[1]);
  return 0;
}

bool columns_inner(const std::string& code) { return std::regex_search(code, columns_inner_loops()); }

bool rows_unrolled(const std::string& code) { return code.find("_Pragma(\"unroll\")  for (IDX_T ia = 0;") != std::string::npos; }

bool scalar_b_tail(const std::string& code) {
  static const std::regex b_tail(R"(for \(IDX_T ib = [1-9]\d*; ib < \d+; \+\+ib\) \{)");
  return std::regex_search(code, b_tail);
}

bool steps_from_real_column(const std::string& code) {
  static const std::regex real_steps(R"(for \(IDX_T ib = [1-9]\d*; ib < \d+; ib \+= \d+\) \{)");
  return std::regex_search(code, real_steps);
}

}  // namespace clreorder_test
