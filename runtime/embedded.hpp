// Internal: OpenCL C sources from kernels_cl/, embedded at build time by cmake/embed_kernels.cmake.
#pragma once

#include <string>

namespace clreorder {

/// The text of kernels_cl/<name>; throws clreorder::Error when no such file was embedded.
const std::string& embedded_kernel(const std::string& name);

}  // namespace clreorder
