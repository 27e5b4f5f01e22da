// Built when oneDNN (libdnnl-dev) is not installed: the suite leaves its oneDNN column empty.
#include "onednn.hpp"

bool onednn_available() { return false; }

OneDnnTiming onednn_reorder(const clreorder::Layout&, const clreorder::Layout&, int) {
  OneDnnTiming t;
  t.why = "oneDNN not installed (bash scripts/setup.sh --perf)";
  return t;
}
