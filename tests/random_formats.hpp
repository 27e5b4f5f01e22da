// Random formats for property tests: registered names, aliases, and names generated from the grammar.
#pragma once

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "clreorder/error.hpp"
#include "clreorder/format.hpp"

namespace clreorder_test {

using namespace clreorder;

/// Random choices from one seeded generator, so a case is a function of the seed.
class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}
  int64_t in(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <typename T>
  const T& pick(const std::vector<T>& v) { return v[static_cast<size_t>(in(0, static_cast<int64_t>(v.size()) - 1))]; }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

inline std::string canonical_axes(FormatKind kind, int rank) {
  if (kind == FormatKind::data) return "bf" + std::string("vuwzyx").substr(static_cast<size_t>(8 - rank));
  if (kind == FormatKind::weights) return "oi" + std::string("zyx").substr(static_cast<size_t>(5 - rank));
  return "goi" + std::string("zyx").substr(static_cast<size_t>(6 - rank));
}

// A format name from the grammar: the axes in a random physical order (y and x of weights sometimes fused
// into one dim), some dims split by one or two blocks placed anywhere after their outer part, sometimes an
// alignment and, for blocked o, a swizzle.
inline std::string grammar_name(Draw& d, FormatKind kind, int rank) {
  std::string axes = canonical_axes(kind, rank);
  std::shuffle(axes.begin(), axes.end(), d.rng());
  std::vector<std::string> dims;
  for (size_t k = 0; k < axes.size(); ++k) {
    if (kind != FormatKind::data && axes[k] == 'y' && k + 1 < axes.size() && axes[k + 1] == 'x' && d.chance(0.15)) {
      dims.push_back("yx");
      ++k;
    } else {
      dims.push_back(std::string(1, axes[k]));
    }
  }
  struct Level {
    size_t dim;
    int64_t block;  // 0: the outer part
  };
  std::vector<Level> levels;
  for (size_t k = 0; k < dims.size(); ++k) levels.push_back({k, 0});
  std::vector<int64_t> tile(dims.size(), 1);
  const std::vector<int64_t> sizes = {2, 3, 4, 8, 16, 32};
  for (size_t k = 0; k < dims.size(); ++k) {
    const int blocks = d.chance(0.35) ? (d.chance(0.25) ? 2 : 1) : 0;
    for (int b = 0; b < blocks; ++b) {
      const int64_t size = d.pick(sizes);
      tile[k] *= size;
      // Anywhere after its outer part (and after this dim's earlier, coarser block).
      size_t after = 0;
      for (size_t i = 0; i < levels.size(); ++i)
        if (levels[i].dim == k) after = i;
      levels.insert(levels.begin() + static_cast<std::ptrdiff_t>(d.in(static_cast<int64_t>(after) + 1, static_cast<int64_t>(levels.size()))),
                    Level{k, size});
    }
  }
  auto sliced = [&](size_t k) { return dims[k].size() > 1 || tile[k] > 1; };
  std::string name;
  bool plain_run = false;  // the previous token is plain letters, which this one may join
  for (const Level& l : levels) {
    const std::string& a = dims[l.dim];
    if (l.block) {
      name += (name.empty() ? "" : "_") + a + "s" + (d.chance(0.2) ? "a" : "v") + std::to_string(l.block);
      plain_run = false;
    } else if (sliced(l.dim)) {
      name += (name.empty() ? "" : "_") + a + "s";
      plain_run = false;
    } else {
      name += (name.empty() || (plain_run && d.chance(0.6)) ? "" : "_") + a;
      plain_run = true;
    }
  }
  const size_t o = axes.find('o');
  if (o != std::string::npos) {
    size_t od = 0;
    for (size_t k = 0; k < dims.size(); ++k)
      if (dims[k].find('o') != std::string::npos) od = k;
    if (tile[od] % 2 == 0 && d.chance(0.3)) name += "_swizzled_by_2";
  }
  if (d.chance(0.15)) {
    // One draw per statement: the operands of + are evaluated in an unspecified order (GCC and clang differ),
    // and a seed must name the same cases whichever compiler built the test.
    const char axis = axes[static_cast<size_t>(d.in(0, rank - 1))];
    name += "__a" + std::string(1, axis) + std::to_string(d.pick(sizes));
  }
  return name;
}

// A format of this kind and rank: registered (half the time), an alias, or one from the grammar. A generated
// name the grammar refuses (a swizzle that does not align with the o blocks) is drawn again.
inline Format random_format(Draw& d, FormatKind kind, int rank, std::string* name) {
  struct Known {
    std::string name;
    FormatKind kind;
    int rank;
  };
  // Every supported registered name and the aliases, parsed once: tests draw thousands of formats.
  static const std::vector<Known> all = [] {
    std::vector<std::string> names;
    for (const FormatEntry& e : registry())
      if (e.unsupported.empty()) names.push_back(e.name);
    for (const char* alias : {"nchw", "nhwc", "chwn", "nChw8c", "nChw16c", "NChw16n16c", "channels_last", "ncdhw",
                              "nCdhw16c", "OIhw16i16o", "Ohwi16o", "gOIhw16i16o", "Goihw16g", "contiguous_format"})
      names.push_back(alias);
    std::vector<Known> out;
    for (const std::string& n : names) {
      const Format f = format_from_name(n);
      out.push_back({n, f.kind(), f.rank()});
    }
    return out;
  }();
  std::vector<std::string> known;
  for (const Known& k : all)
    if (k.kind == kind && k.rank == rank) known.push_back(k.name);
  if (!known.empty() && d.chance(0.5)) {
    *name = d.pick(known);
    return format_from_name(*name);
  }
  for (int attempt = 0;; ++attempt) {
    *name = grammar_name(d, kind, rank);
    try {
      return format_from_name(*name);
    } catch (const Error&) {
      if (attempt == 100) throw;
    }
  }
}

}  // namespace clreorder_test
