// Shared by the libFuzzer targets: invariant checks that stop the fuzzer with a message.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "clreorder/layout.hpp"

/// Aborts (a crash libFuzzer reports with the input) when an invariant does not hold.
inline void fuzz_require(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "invariant broken: %s\n", what.c_str());
  std::abort();
}

/// The layout's plan holds every logical coordinate exactly once, at the offset offset() gives, inside the layout.
inline void fuzz_check_bijection(const clreorder::Layout& l) {
  std::vector<char> hit(static_cast<size_t>(l.logical_elements()), 0), slot(static_cast<size_t>(l.elements()), 0);
  int64_t off, c[8];
  for (int64_t p = 0; p < l.plan().digit_space; ++p) {
    const bool valid = l.plan().decode(p, &off, c);
    fuzz_require(off >= 0 && off < l.elements() && !slot[static_cast<size_t>(off)]++, "two tuples share a slot: " + l.describe());
    if (!valid) continue;
    fuzz_require(l.plan().offset(c) == off, "offset() disagrees with decode(): " + l.describe());
    int64_t linear = 0;
    for (int a = 0; a < l.rank(); ++a) linear = linear * l.dims()[static_cast<size_t>(a)] + c[a];
    fuzz_require(!hit[static_cast<size_t>(linear)]++, "a coordinate held twice: " + l.describe());
  }
  for (char h : hit) fuzz_require(h == 1, "a coordinate not held: " + l.describe());
}
