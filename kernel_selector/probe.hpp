// Internal: the offset probe kernel (kernels_cl/offset_probe.cl), generated from the same plan printers as
// the reorder kernels, so a test can compare the device's offsets with the host plan.
#pragma once

#include "clreorder/layout.hpp"
#include "clreorder/runtime.hpp"

namespace clreorder {

/// Probe kernel for the pair: args (long* src_offsets [src logical count], long* dst_offsets
/// [dst digit space], long* dst_coords [dst digit space]).
KernelSource offset_probe_source(const Layout& src, const Layout& dst);

}  // namespace clreorder
