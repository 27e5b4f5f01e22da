// clreorder: the one exception type. Every message names the offending value (format name, shape,
// data type, buffer size, device, OpenCL call and error code).
#pragma once

#include <stdexcept>
#include <string>

namespace clreorder {

/// The exception every clreorder call throws on bad input or a failing OpenCL call.
class Error : public std::runtime_error {
 public:
  /// An error whose message names the offending value.
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace clreorder
