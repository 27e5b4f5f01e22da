// Bad inputs as data, so that each one is fed to the C++ API and to the C API (clreorder.h) by the same
// test: a refused value must be refused the same way, with the same words, and no exception may cross the C
// boundary. Used by tests/test_format.cpp (layouts, no device) and tests/test_device.cpp (reorders on buffers).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

// The tests target OpenCL 1.2 like the library; set here since this header may come before any other.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include "clreorder/clreorder.h"
#include "clreorder/layout.hpp"

namespace clreorder_test {

/// A layout as both APIs take it: names and numbers. Empty pads and strides mean none.
struct LayoutSpec {
  std::string format;
  clreorder::Dims dims;
  clreorder::Dims pad_lower = {}, pad_upper = {}, strides = {};
  int64_t offset = 0;
  std::string dtype = "f32";

  clreorder::Layout cpp() const {
    return clreorder::Layout(clreorder::format_from_name(format), clreorder::parse_data_type(dtype), dims, pad_lower,
                             pad_upper, strides, offset);
  }
  /// The C API's layout, or null with the status and clreorder_last_error() set.
  clreorder_layout c(clreorder_status* status) const {
    clreorder_layout out = nullptr;
    auto ptr = [](const clreorder::Dims& d) { return d.empty() ? nullptr : d.data(); };
    // C passes `rank` values per array; a row whose arrays disagree in length cannot be said in C.
    *status = clreorder_layout_create(format.c_str(), dtype.c_str(), dims.size(), dims.data(), ptr(pad_lower),
                                      ptr(pad_upper), ptr(strides), offset, &out);
    return out;
  }
  /// Whether the C API can express it: its arrays are all `rank` long.
  bool expressible_in_c() const {
    for (const clreorder::Dims* d : {&pad_lower, &pad_upper, &strides})
      if (!d->empty() && d->size() != dims.size()) return false;
    return !dims.empty();
  }
};

/// A layout both APIs must refuse, and the words the message must hold.
struct BadLayout {
  LayoutSpec spec;
  std::string says;
};

inline std::vector<BadLayout> bad_layouts() {
  const int64_t huge = std::numeric_limits<int64_t>::max();
  return {
      {{"bfyx", {2, 3, 4}}, "shape 2,3,4 has 3 dims but format bfyx has rank 4"},
      {{"bfyx", {2, 0, 4, 4}}, "dim 1 (f) is 0"},
      {{"bfyx", {2, 3, 4, 4}, {0, 0, -1, 0}}, "negative"},
      {{"bfyx", {2, 3, 4, 4}, {0, 0}}, "must have 4 values"},
      {{"bfyx", {2, 3, 4, 4}, {}, {}, {1, 2}}, "strides 1,2 must have 4 values"},
      {{"bfyx", {1 << 20, 1 << 20, 1 << 20, 4}}, "too large"},
      {{"bfyx", {1, 1, 1, 1}, {0, huge, 0, 0}}, "padding of axis f (lower 9223372036854775807, upper 0)"},
      {{"bfyx", {1, 1, 1, 1}, {}, {0, 0, huge, huge}}, "padding of axis y"},
      {{"bfyx", {1, 2, 3, 4}, {}, {0, 999999999999999, 0, 0}}, "with padding lower 0,0,0,0 upper 0,999999999999999,0,0"},
      {{"bfyx", {huge, 1, 1, 1}}, "dim 0 (b) is 9223372036854775807, over 2^50"},
      {{"bfyx", {1, 2, 3, 4}, {}, {}, {}, -1}, "-1"},
      {{"bfyx", {1, 2, 3, 4}, {}, {}, {24, 12, 4, 1}, huge}, "9223372036854775807"},
      {{"b_fs_yx_fsv65536_fsv65536_fsv65536_fsv65536", {1, 1, 1, 1}}, "multiply to more than 2^31"},
      {{"b_fs_yx_fsv1048576_fsv1024__af387420489", {1, 1, 1, 1}}, "over 2^50"},
      {{"b_fs_yx_fsq16", {1, 2, 3, 4}}, "bad format name 'b_fs_yx_fsq16': unknown part 'fsq16'"},
      {{"os_iyx_osv16__ao999999999__ao999999999", {1, 1, 1, 1}}, "'__ao999999999'"},
      {{"os_iyx_osv16_swizzled_by_3", {1, 1, 1, 1}}, "swizzle factor 3 does not divide"},
      {{"winograd_2x3_s1_data", {1, 2, 3, 4}}, "format 'winograd_2x3_s1_data' is not supported"},
      {{"tpu_aligned(npus=4,npu_bytes=1024,addr=100)", {1, 2, 3, 4}}, "addr=100 is not divisible by 128"},
      {{"aBcd16e", {1, 2, 3, 4}}, "bad oneDNN format tag 'aBcd16e'"},
      {{"", {1, 2, 3, 4}}, "format"},
      {{"bfyx", {1, 2, 3, 4}, {}, {}, {}, 0, "f128"}, "unknown data type 'f128'"},
      {{"bfyx", {1, 2, 3, 4}, {}, {}, {}, 0, ""}, "data type"},
  };
}

}  // namespace clreorder_test
