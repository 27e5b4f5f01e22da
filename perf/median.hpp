// The perf drivers' summary of repeated timings: the median (the machine is shared and noisy, so never a mean).
#pragma once

#include <algorithm>
#include <vector>

namespace clreorder_perf {

/// The median of `v` (the upper one of an even count); `v` must not be empty.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace clreorder_perf
