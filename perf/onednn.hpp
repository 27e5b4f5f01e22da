// oneDNN's CPU reorder of the same case, for comparison in perf/ (only when libdnnl-dev is installed).
#pragma once

#include <string>

#include "clreorder/layout.hpp"

/// Median milliseconds of oneDNN's reorder src -> dst over `runs` runs after warm-up, or why it cannot
/// run (a layout oneDNN cannot describe, or oneDNN's result differing from the host reference).
struct OneDnnTiming {
  bool ok = false;
  double ms = 0;
  std::string why;
};

/// Whether this build has oneDNN.
bool onednn_available();

/// Times oneDNN's reorder of the same layouts on the CPU, checking its output against the reference; each
/// timed run follows an untimed copy of the destination's bytes, as each run of bench_reorder does.
OneDnnTiming onednn_reorder(const clreorder::Layout& src, const clreorder::Layout& dst, int runs);
