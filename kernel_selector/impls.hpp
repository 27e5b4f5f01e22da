// Internal: the implementations the selector lists, and helpers they share.
#pragma once

#include <memory>
#include <string>

#include "clreorder/kernel_selector.hpp"
#include "codegen.hpp"

namespace clreorder {

class Jit;

/// The #defines every reorder kernel shares: KERNEL_NAME, SRC_T, DST_T, IDX_T, CONVERT(v), CR_ZERO_PADDING
/// (1: padding gets zero; 0: Padding::keep, padding is not written), CR_DIVIDES (the kernel divides:
/// build_options()), CR_VALUE_TABLES (value_tables() shaped by `shapes`, for a template to expand at program
/// scope), CR_VALUE_ARGS (value_args()) and CR_COMP_BEGIN, CR_COMP_ADD(v), CR_COMP_END (compensate_macros() at
/// `coord`, the destination's dims compiled in). `coord` gives the coordinate expressions CONVERT reads per-index
/// parameters at (without it, a kernel with per-index parameters must convert by convert_expr() at each
/// site). finish_kernel() names the kernel <prefix>_<hash of its generated text>, and that name becomes kd's
/// entry point.
Jit reorder_jit(const ReorderParams& p, const std::string& prefix, KernelData& kd, const CoordExpr& coord = nullptr,
                const TableShapes& shapes = nullptr);

/// Fills kd's source from the template (named by its text) and its launch shape: `count` work-items rounded
/// up to a multiple of the local size `local` (capped by the device).
void finish_kernel(KernelData& kd, const Jit& jit, const char* template_file, size_t count, size_t local,
                   const DeviceInfo& device);

/// A kernel source named <prefix>_<hash of the generated text> (jit's KERNEL_NAME set to that name).
KernelSource named_by_text(const std::string& prefix, Jit jit, const std::string& body);

// The implementations' usual ranks (Rank::value), in list order with room between them; an implementation
// measured slower than a neighbour on some problems ranks after that neighbour there.
constexpr int kRankLocal = 5, kRankLanes = 10, kRankStaged = 20, kRankTiled = 30, kRankGeneric = 90, kRankAgnostic = 100;
// Where one was measured slower: staged after a usual tiled, tiled (narrow transposes) after staged either
// way, lanes after both.
constexpr int kRankStagedSlower = 34, kRankTiledSlower = 36, kRankLanesSlower = 38;
// staged after tiled either way: compensation sums along the destination's inner run, which tiled adds as
// vectors of its transposed columns and staged lane by lane of its source rows.
constexpr int kRankStagedAfterTiled = 37;
// tiled before staged (after lanes): CPU transposes whose columns or rows read offset tables.
constexpr int kRankTiledFirst = 15;
// local (kernels_cl/reorder_local.cl) runs first on GPUs; after generic on CPUs, and on GPUs where its tile is
// smaller than a work-group.
constexpr int kRankLocalCpu = 95, kRankLocalSmall = 96;

std::unique_ptr<ReorderImpl> make_local_impl();
std::unique_ptr<ReorderImpl> make_lanes_impl();
std::unique_ptr<ReorderImpl> make_staged_impl();
std::unique_ptr<ReorderImpl> make_tiled_impl();
std::unique_ptr<ReorderImpl> make_generic_impl();
std::unique_ptr<ReorderImpl> make_agnostic_impl();

}  // namespace clreorder
