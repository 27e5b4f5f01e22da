// Shared by the libFuzzer targets: invariant checks that stop the fuzzer with a message.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

/// Aborts (a crash libFuzzer reports with the input) when an invariant does not hold.
inline void fuzz_require(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "invariant broken: %s\n", what.c_str());
  std::abort();
}
