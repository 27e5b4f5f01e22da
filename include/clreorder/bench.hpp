// clreorder: timing a reorder against the device's copy bandwidth, measured in the same run.
#pragma once

#include <string>

#include "clreorder/layout.hpp"
#include "clreorder/runtime.hpp"

namespace clreorder {

/// Medians of one reorder and of clEnqueueCopyBuffer of the destination's bytes, timed alternately.
struct BenchResult {
  std::string impl;            ///< implementation that ran
  int runs = 0;                ///< timed runs of each (after warm-up)
  double median_ms = 0;        ///< reorder, enqueue to clFinish
  double kernel_ms = 0;        ///< reorder, event-profiled kernel time (median)
  double copy_ms = 0;          ///< clEnqueueCopyBuffer of dst.bytes(), enqueue to clFinish
  double gbps_logical = 0;     ///< logical elements x (src + dst element size) / median_ms
  double gbps_physical = 0;    ///< (src.bytes() + dst.bytes()) / median_ms
  double copy_gbps = 0;        ///< 2 x dst.bytes() / copy_ms
  double ratio = 0;            ///< gbps_physical / copy_gbps
  double enqueue_us = 0;       ///< host time of one cached reorder() call without waiting (lookup, args, enqueue)
  double bare_enqueue_us = 0;  ///< host time of one bare clEnqueueNDRangeKernel of the same kernel
  /// One JSON object with every field and both layouts.
  std::string json(const Layout& src, const Layout& dst) const;
};

/// Times reorder(src -> dst) on the engine's queue: warm-up, then `runs` alternating reorder / copy pairs.
BenchResult bench_reorder(const Engine& engine, const Layout& src, const Layout& dst, const std::string& force = "",
                          int runs = 25);

}  // namespace clreorder
