// Internal: the implementations the selector lists, and helpers they share.
#pragma once

#include <memory>
#include <string>

#include "clreorder/kernel_selector.hpp"

namespace clreorder {

/// 16 hex digits naming the problem exactly (both layouts in full), for unique kernel entry names.
std::string problem_hash(const ReorderParams& p);

std::unique_ptr<ReorderImpl> make_tiled_impl();
std::unique_ptr<ReorderImpl> make_generic_impl();

}  // namespace clreorder
