// Internal: a reorder seen as a strided permutation. The digits of both layouts are refined, axis by axis,
// into one mixed-radix iteration space in destination order, where every digit moves both offsets
// linearly (a destination stride and a source stride). Specialised kernels loop over this space; the
// generic kernel does not need it. Derived from the same index plans, and checked against them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "clreorder/layout.hpp"
#include "codegen.hpp"

namespace clreorder {

/// One digit of the iteration space.
struct PermDigit {
  int axis = -1;            ///< logical axis it advances; -1 after merging digits of mask-free axes
  int64_t weight = 1;       ///< step of the destination's padded coordinate of `axis` per unit
  int64_t extent = 1;
  int64_t dst_stride = 0;   ///< elements
  int64_t src_stride = 0;   ///< elements
};

/// Per logical axis: what the masks need. c = v - lower, where v sums weight * index over the axis' digits.
struct PermAxis {
  int64_t lower = 0;        ///< destination lower padding
  int64_t dim = 0;          ///< logical extent
  int64_t limit = 0;        ///< destination padded extent: v >= limit is outside the destination (not written)
  bool check_low = false;   ///< c >= 0 must be tested (lower padding)
  bool check_high = false;  ///< c < dim must be tested (tails, upper padding)
  bool check_write = false; ///< v < limit must be tested (the iteration overshoots the destination)
  /// v in [read_lo, read_hi) has a slot in the source (a real element or the source's own padding), so its
  /// source offset may be read; outside it the offset may lie before or past the source buffer.
  int64_t read_lo = 0, read_hi = 0;
  int64_t span = 0;         ///< the iteration's range of v: [0, span)
  /// A kernel needs its coordinate (per-index parameters of the conversion): its digits keep their axis
  /// (never merged with another axis') and grid_decode() computes its v, masked or not.
  bool tracked = false;
  /// The dims of the axes after this one that a fused dim (yxs, on either side) folds into its coordinate,
  /// outer first: v then counts row-major over this axis and them, and their own PermAxis are single points
  /// (v = 0). Empty for an axis of its own.
  std::vector<int64_t> folds;
  bool masked() const { return check_low || check_high || check_write; }
};

/// Which of a digit's strides (&PermDigit::dst_stride or &PermDigit::src_stride) a helper measures.
using Stride = int64_t PermDigit::*;

/// The permutation, or why a reorder cannot be one.
struct Permutation {
  std::string reject;            ///< empty when valid
  std::vector<PermDigit> digits; ///< destination order, outer first, no extent-1 digits
  std::vector<PermAxis> axes;    ///< by logical axis
  int64_t src_base = 0;          ///< constant source offset (lower paddings that differ)
  int64_t dst_base = 0;
  int64_t count() const;         ///< product of extents
  /// Whether `d` advances an axis that needs masks (tails, padding), so a tile cannot hold it unchecked.
  bool masked(const PermDigit& d) const;
};

/// Refines src and dst into one iteration space; the axes a fused dim (yxs) combines are one coordinate
/// (PermAxis::folds). Declines padding inside such a coordinate, per-index values on it, and source/destination
/// lower-padding differences that are not multiples of the source blocks of that axis. The axes in `tracked`
/// are PermAxis::tracked.
Permutation make_permutation(const Layout& src, const Layout& dst, const std::vector<int>& tracked = {});

/// The logical axes the indexed parameters and the compensation sums of `conv` read coordinates of (each once).
std::vector<int> indexed_axes(const Conversion& conv);

/// Which u4 and i4 layouts (two elements to a byte) a kernel takes: none, sources only (reading a nibble
/// is a byte load any number of work-items may share), or both sides (writing one takes a byte's owner).
enum class Nibbles { none, sources, both };

/// Why a specialised kernel over `perm` cannot take `p`: a u4 or i4 layout `nibbles` leaves out, compensation
/// sums (unless it writes `sums`), or constant tables, one per index over their axes' padded ranges
/// (PermAxis::span entries each), groups as they are, of more than kMaxIndexedValues in all; "" when it can.
std::string reject_conversion(const ReorderParams& p, const Permutation& perm, Nibbles nibbles = Nibbles::none,
                              bool sums = false);

/// The compensation sums' statements (compensate_macros()) for a uint `v` whose padded coordinate on each of
/// the sums' axes is `padded(axis)`: `add` adds it only where it is non-zero, each of `also` holds and those
/// coordinates lie inside the tensor (padding positions hold zeros, and their index could be another's or
/// past the buffer).
CompensateMacros guarded_sums(const Conversion& conv, const Permutation& perm, const std::function<std::string(int axis)>& padded,
                              const std::vector<std::string>& also = {});

/// The table shapes (value_tables()) indexed by the padded coordinate v of `perm`'s axes (entries for
/// padding lanes and for the iteration past a tail hold no value and are never stored), for kernels that
/// follow v.
TableShapes padded_shapes(const Permutation& perm);

/// A lane's padded coordinate on `axis` of `perm` (v = base + offset), for convert_expr().
TableIndex padded_coord(const Permutation& perm, int axis, const std::string& base, int64_t offset = 0);

/// Product of the extents of `digits`.
int64_t extent_product(const std::vector<PermDigit>& digits);

/// Splits `d` at `t` (a divisor of its extent): `d` keeps its inner t units, the returned digit counts the
/// outer extent / t (weight and strides times t).
PermDigit split_outer(PermDigit& d, int64_t t);

/// Takes the inner `t` units (a divisor of its extent) of `pool[k]`, for a tile or a loop; the rest stays in
/// the pool, in place, as a coarser digit (or leaves it when t is the whole extent).
PermDigit take_inner(std::vector<PermDigit>& pool, size_t k, int64_t t);

/// The digit a work-item walks over tile after tile: up to `room` inner units (a divisor of the extent, at
/// least 2) of the first unmasked pool digit that `continues` a run, else of the first unmasked one. Taken
/// from the pool; extent 1 when there is none.
PermDigit take_loop(const Permutation& perm, std::vector<PermDigit>& pool, int64_t room,
                    const std::function<bool(const PermDigit&)>& continues);

/// Which digits of `tile` form its run that is dense in the layout `stride` measures: the stride-1 digit,
/// the digit continuing it, and so on; with `also`, dense in that layout too (equal strides on both sides).
std::vector<bool> dense_run(const std::vector<PermDigit>& tile, Stride stride, Stride also = nullptr);

/// Elements of that run.
int64_t run_length(const std::vector<PermDigit>& tile, Stride stride, Stride also = nullptr);

/// Grows `tile` from `pool` (digits of `perm`) by the destination-dense and the source-dense run in turn, each
/// by the digit continuing it (its inner units taken, take_inner()), until each run reaches `want` elements
/// or the tile would pass `max_elems`. Masked axes stay outside the tile (a kernel tests them once per tile),
/// so a run stops before them.
void grow_runs(const Permutation& perm, std::vector<PermDigit>& pool, std::vector<PermDigit>& tile, int64_t want,
               int64_t max_elems);

/// Largest divisor of n not above `cap` (at least 1).
int64_t divisor_at_most(int64_t n, int64_t cap);

/// Smallest divisor of n in [need, cap], else n itself. The search stops at `cap` (a tile's room): a dim of
/// 10^10 without a small divisor once made the planner count that far.
int64_t divisor_at_least(int64_t n, int64_t need, int64_t cap);

/// Whether one side's constant base and its strides (`stride`) of `digits` are multiples of `m` elements
/// (then offsets built from them are, apart from the runtime base).
bool strides_multiple_of(const Permutation& perm, const std::vector<PermDigit>& digits, int64_t m, Stride stride);

/// Conditions on a masked axis for its padded coordinate expression `v`: validity (`ok`: inside the logical
/// tensor, else the element is padding and gets zero) and, when `wr` is given, whether to write at all.
void axis_checks(const PermAxis& m, const std::string& v, std::vector<std::string>* ok, std::vector<std::string>* wr);

/// Under Padding::keep a padding element is not written at all: moves the validity conditions `ok` into the
/// write conditions `wr` (leaving `ok` empty). Under Padding::zero it leaves both as they are.
void keep_padding_unwritten(Padding padding, std::vector<std::string>* ok, std::vector<std::string>* wr);

/// Conditions on a masked axis for its padded coordinate expression `v` to have a source slot (PermAxis::read_lo,
/// read_hi): a load of that element stays inside the source's span.
void read_checks(const PermAxis& m, const std::string& v, std::vector<std::string>* rd);

/// Statements that decode work-item `w` over the `grid` digits (outer first) of a tiled kernel: they declare
/// IDX_T d_off / s_off (the work-item's offsets), IDX_T v<axis> (the grid's part of each masked or tracked
/// axis' padded coordinate) and bool g_ok. Masked axes that `in_tile` does not claim are tested here, once per work-item;
/// a work-item outside the destination returns, and so does one whose tile is padding when `padding` keeps
/// it (g_ok is then true). Without `returns` they declare bool g_wr (false for them) instead, for kernels whose
/// work-items must all reach a barrier.
std::vector<std::string> grid_decode(const Permutation& perm, const std::vector<PermDigit>& grid,
                                     const std::function<bool(int axis)>& in_tile, Padding padding, bool returns = true);

/// Statements of a work-item's walk over `loop`: `body` once per tile, with IDX_T so / do_ (the tile's
/// source and destination offsets) advanced from s_off / d_off by the loop digit's strides.
std::vector<std::string> walk_tiles(const PermDigit& loop, const std::vector<std::string>& body);

}  // namespace clreorder
