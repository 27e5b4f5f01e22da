// The `tiled` implementation: a reorder as a strided permutation (permute.hpp). Each work-item owns a tile
// of a destination-dense run of digits A and a source-dense run B; the other digits are decoded once per
// work-item, so the per-element work is a few multiply-adds and the masks that the shape needs.
// Shapes, strides and masks are constants in the generated code.
#include <algorithm>
#include <functional>
#include <optional>

#include "clreorder/error.hpp"
#include "clreorder/kernel_selector.hpp"
#include "codegen.hpp"
#include "embedded.hpp"
#include "impls.hpp"
#include "permute.hpp"

namespace clreorder {

namespace {

// Factors of two in n, up to 16: the widest register transpose a tile of n elements allows.
int64_t vector_factor(int64_t n) {
  int64_t f = 1;
  while (f < 16 && n % (f * 2) == 0) f *= 2;
  return f;
}

// A divisor of n not above cap: of those with the most factors of two (up to 16, so the register transposes
// can take the tile: a 56-long source row gives 8, not 14, whatever the type), the largest; n itself when the
// largest divisor would make tiles too thin.
int64_t tile_size(int64_t n, int64_t cap) {
  if (n <= cap) return n;
  const int64_t best = divisor_at_most(n, cap);
  if (best * 4 < cap && n <= 4 * cap) return n;
  int64_t pick = best;
  for (int64_t d = best - 1; d > 1; --d)
    if (n % d == 0 && vector_factor(d) > vector_factor(pick)) pick = d;
  return pick;
}

struct TileConfig {
  int64_t cap_a;  // most elements of A per work-item
  int64_t tile;   // elements of 4 bytes per work-item to aim for
  int64_t min_b;  // least elements of B per work-item where it has them
  size_t local;
};

// CPU devices (PoCL) run a work-group as a loop, so big tiles amortise the decode; GPUs want many small
// work-items. Both are correct on every device: the choice only moves speed. On an H100 the GPU tuning's
// former 16 x 16 tiles (256 floats in one work-item's registers, and a 401K-element transpose in 1568
// work-items) ran at 0.10-0.27 of copy, below the generic kernel's one element per work-item (0.19-0.32):
// 8 x 8 now, 64 registers of 4 bytes, a 32-byte row per load and store, but rows never narrower than 16
// bytes of the destination (tiled's narrow transposes rank after staged, as in the CPU tiles).
TileConfig config_for(const ReorderParams& p) {
  if (tuning_of(p.device) == Tuning::cpu) return {256, 1024, 16, 8};
  return {std::max<int64_t>(8, 16 / static_cast<int64_t>(unit_bytes(p.dst.data_type()))), 64, 8, 64};
}

// A run: digits that are dense in one layout (inner first), walked by one linear index. A is dense in the
// destination (its index is the destination offset), B dense in the source.
struct Run {
  std::vector<PermDigit> digits;  // inner first
  int64_t length() const { return extent_product(digits); }
  bool has_axis(int axis) const {
    for (const PermDigit& d : digits)
      if (d.axis == axis) return true;
    return false;
  }
  // Index of digit k for run position `var`.
  std::string index(size_t k, const std::string& var) const {
    int64_t inner = 1;
    for (size_t i = 0; i < k; ++i) inner *= digits[i].extent;
    std::string e = inner == 1 ? var : "(" + var + ") / " + num(inner);
    if (k + 1 < digits.size()) e = "(" + e + ") % " + num(digits[k].extent);
    return "(" + e + ")";
  }
  // Offset in the other layout (src for A, dst for B), or an axis' coordinate part, at position `var`.
  std::string sum(const std::string& var, const std::function<int64_t(const PermDigit&)>& coef) const {
    std::string out;
    for (size_t k = 0; k < digits.size(); ++k) {
      int64_t c = coef(digits[k]);
      if (c == 0) continue;
      out += (out.empty() ? "" : " + ") + index(k, var) + (c == 1 ? "" : " * " + num(c));
    }
    return out.empty() ? "0" : "(" + out + ")";
  }
  std::string src_offset(const std::string& var) const { return sum(var, [](const PermDigit& d) { return d.src_stride; }); }
  // The same halved (bytes of a u4 or i4 source), where every digit's source stride is even; else "".
  std::string src_bytes(const std::string& var) const {
    for (const PermDigit& d : digits)
      if (d.src_stride % 2) return "";
    return sum(var, [](const PermDigit& d) { return d.src_stride / 2; });
  }
  std::string dst_offset(const std::string& var) const { return sum(var, [](const PermDigit& d) { return d.dst_stride; }); }
  std::string coord(int axis, const std::string& var) const {
    return sum(var, [axis](const PermDigit& d) { return d.axis == axis ? d.weight : 0; });
  }
};

// The padded coordinate of `axis` at run positions (ia, ib).
std::string tile_coord(int axis, const Run& a, const Run& b, const std::string& ia, const std::string& ib) {
  std::string v = "v" + num(axis);
  if (a.has_axis(axis)) v += " + " + a.coord(axis, ia);
  if (b.has_axis(axis)) v += " + " + b.coord(axis, ib);
  return "(" + v + ")";
}

// Whether a run's offsets in the layout `stride` measures (Run::sum(): B's destination strides, A's source
// strides) divide or take a remainder by a constant that is not a power of two (a digit of 9 positions after
// a digit of 16: oiyx -> os_is_yx_isv16_osv16 3 x 3), in a run of at most kMaxOffsetTable positions. A CPU
// transpose then reads each column's (row's) offset from a table (offset_table()): each column of a step
// names its own position (ib + j), and two divisions by 9 (a multiply and shifts each)
// per column took `oiyx -> os_is_yx_isv16_osv16` f16 256x256x3x3 2.0x the time with the source in cache and
// 1.5x with it evicted (perf/clreorder_ab, interleaved; NOTES, "Offset tables for B's columns"). A table read
// is one load from L1. Powers of two are shifts and masks, and GPU tiles keep the arithmetic (not measured).
constexpr int64_t kMaxOffsetTable = 2048;
bool takes_offset_table(const Run& run, Stride stride) {
  if (run.length() > kMaxOffsetTable) return false;
  int64_t inner = 1;
  for (size_t k = 0; k < run.digits.size(); ++k) {
    const int64_t extent = run.digits[k].extent;
    if (run.digits[k].*stride != 0 && ((inner > 1 && log2_exact(inner) < 0) || (k + 1 < run.digits.size() && log2_exact(extent) < 0)))
      return true;
    inner *= extent;
  }
  return false;
}
// A run's offsets (in the layout `stride` measures) at positions 0 .. count - 1 (count: past the run's end as far as a step names)
// as a program-scope __constant table of IDX_T named CR_CAT(KERNEL_NAME, suffix), appended to `tables`; its
// name, or "" where takes_offset_table() says no.
std::string offset_table(const Run& run, Stride stride, const std::string& suffix, int64_t count, std::string* tables) {
  if (!tables || !takes_offset_table(run, stride)) return "";
  std::string values;
  for (int64_t c = 0; c < count; ++c) {
    int64_t off = 0, in = 1;
    for (size_t k = 0; k < run.digits.size(); ++k) {
      const int64_t q = c / in;
      off += (k + 1 < run.digits.size() ? q % run.digits[k].extent : q) * (run.digits[k].*stride);
      in *= run.digits[k].extent;
    }
    values += (c ? ", " : "") + num(off);
  }
  const std::string name = "CR_CAT(KERNEL_NAME, " + suffix + ")";
  *tables += std::string(tables->empty() ? "" : " ") + "__constant IDX_T " + name + "[" + num(count) + "] = {" + values + "};";
  return name;
}

std::vector<int> masked_axes(const Permutation& perm, const Run& a, const Run& b) {
  std::vector<int> out;
  for (size_t ax = 0; ax < perm.axes.size(); ++ax)
    if (perm.axes[ax].masked() && (a.has_axis(static_cast<int>(ax)) || b.has_axis(static_cast<int>(ax))))
      out.push_back(static_cast<int>(ax));
  return out;
}

// Compensation sums (Conversion::compensation) of a work-item's tile, summed in private memory: each value a
// work-item stores is added to the sum of its position along the run that moves the sums' index (A or B;
// none when the index is the grid's alone), and at its end each position's sum goes to the caller's buffer
// with one atomic (runs of positions with one index merged first). A tile whose index moved along both runs
// would need a slot per element: make_plan() keeps the sums' axes in one run, and reject() declines if not.
struct TileSums {
  enum class Along { none, a, b } along = Along::none;
  bool present = false;
  int64_t slots = 0;  // private uints: positions along A or B
  std::string reject;
};

// The most private uints a work-item keeps for its sums (4 KB): positions beyond it would spill.
constexpr int64_t kMaxTileSums = 1024;

TileSums tile_sums(const Compensation& c, const Run& a, const Run& b) {
  TileSums ts;
  if (!(ts.present = c.present())) return ts;
  bool in_a = false, in_b = false;
  for (int axis : {c.axis, c.outer_axis})
    if (axis >= 0) in_a |= a.has_axis(axis), in_b |= b.has_axis(axis);
  if (in_a && in_b) {
    ts.reject = "the compensation sums' index moves along both runs of the tile";
    return ts;
  }
  ts.along = in_a ? TileSums::Along::a : in_b ? TileSums::Along::b : TileSums::Along::none;
  ts.slots = in_a ? a.length() : in_b ? b.length() : 0;
  if (ts.slots > kMaxTileSums)
    ts.reject = "the tile's compensation sums would take " + num(ts.slots) + " private words, more than " + num(kMaxTileSums);
  return ts;
}

// Adds `x` (the stored value: a vector of `width` along A at positions ia.., or a scalar) to the sums; "" without.
std::string add_to_sums(const TileSums& ts, const std::string& x, int width, const std::string& ia, const std::string& ib) {
  if (!ts.present) return "";
  const std::string W = width > 1 ? num(width) : "", u = width > 1 ? "convert_uint" + W + "(" + x + ")" : "(uint)(" + x + ")";
  switch (ts.along) {
    case TileSums::Along::none: return "cr_acc += " + u + ";";
    case TileSums::Along::b: return "cr_s[" + ib + "] += " + (width > 1 ? "cr_hsum" + W + "(" + u + ")" : u) + ";";
    case TileSums::Along::a:
      if (width == 1) return "cr_s[" + ia + "] += " + u + ";";
      return "vstore" + W + "(vload" + W + "(0, cr_s + " + ia + ") + " + u + ", 0, cr_s + " + ia + ");";
  }
  return "";
}

// The narrowest type that holds a sum of `terms` values of `t` exactly (modulo 2^32 for 32-bit ones), for
// partial sums that are widened to uint once rather than every value.
std::string partial_sum_type(DataType t, int64_t terms) {
  const int bits = bits_of(t);
  if (bits <= 8 && terms * 255 <= 32767) return "short";
  if (bits <= 16 && terms * 65535 <= 2147483647) return "int";
  return "uint";
}

// The sums' declaration, before the tile loops (`width`: the loops' vector width).
std::vector<std::string> begin_sums(const TileSums& ts, int width) {
  if (!ts.present) return {};
  if (ts.along == TileSums::Along::none) return {std::string(width > 1 ? "uint" + num(width) : "uint") + " cr_acc = 0;"};
  // Zeroed by a loop: Oclgrind's uninitialized-value check does not see the memset an initializer becomes at -O0.
  return {"uint cr_s[" + num(ts.slots) + "];", "for (int q = 0; q < " + num(ts.slots) + "; ++q) cr_s[q] = 0;"};
}

// After the tile loops: each position's sum added to its index in cr_comp, where the sums' axes are inside the
// tensor (padding positions hold zeros, and their index could be another's or past the buffer).
std::vector<std::string> end_sums(const ReorderParams& p, const Permutation& perm, const TileSums& ts, const Run& a,
                                  const Run& b, int width) {
  if (!ts.present) return {};
  const CompensateMacros m = guarded_sums(p.conversion, perm, [&](int axis) {
    const std::string q = ts.along == TileSums::Along::none ? "0" : "q";
    return ts.along == TileSums::Along::a ? tile_coord(axis, a, Run{}, q, "0") : tile_coord(axis, Run{}, b, "0", q);
  });
  if (ts.along == TileSums::Along::none) {
    const std::string total = width > 1 ? "cr_hsum" + num(width) + "(cr_acc)" : "cr_acc";
    return {"{", "  " + m.begin, "  const uint v = " + total + ";", "  " + m.add, "  " + m.end, "}"};
  }
  return {"{", "  " + m.begin, "  for (IDX_T q = 0; q < " + num(ts.slots) + "; ++q) {", "    const uint v = cr_s[q];",
          "    " + m.add, "  }", "  " + m.end, "}"};
}

// What the logical coordinate on `axis` of lane 0 of a vector is a multiple of, when the lanes step through
// `axis`'s digit of weight 1 from a multiple of `width` (its extent a multiple of it): every other digit of the
// axis, and every part of that one a grid or a run splits off, weighs a multiple of the width (the axis'
// digits are mixed radix, checked here), so v is one too, and c = v - lower when the lower padding is.
int64_t lane0_align(const Permutation& perm, int axis, int width) {
  const PermAxis& m = perm.axes[static_cast<size_t>(axis)];
  if (m.lower % width != 0) return 1;
  for (const PermDigit& d : perm.digits)
    if (d.axis == axis && (d.weight == 1 ? d.extent % width != 0 : d.weight % width != 0)) return 1;
  return width;
}

// The conversion of `v` (a vector of `width`, or a scalar) whose lane k sits at run positions pos(k) = (ia, ib):
// CONVERT / CONVERT_V, or with per-index parameters the expression that reads their tables at each lane's
// padded coordinate (the tables are indexed by it: see generate()).
// `along`: the run the lanes step through (one position each); when its inner digit holds whole vectors,
// lane k's coordinate is lane 0's plus k times that digit's weight (which convert_expr() reads as one vector
// load when the weight is 1).
std::string convert_at(const ReorderParams& p, const Permutation& perm, const std::string& v, int width, const Run& a, const Run& b,
                       const std::function<std::pair<std::string, std::string>(int lane)>& pos, const Run* along = nullptr) {
  if (!p.conversion.per_index()) return (width > 1 ? "CONVERT_V(" : "CONVERT(") + v + ")";
  const bool linear = along && !along->digits.empty() && along->digits.front().extent % width == 0;
  return convert_expr(p, v, width, [&](int axis, int lane) {
    if (linear) {
      const PermDigit& d = along->digits.front();
      const auto [ia, ib] = pos(0);
      TableIndex t = padded_coord(perm, axis, tile_coord(axis, a, b, ia, ib), d.axis == axis ? lane * d.weight : 0);
      if (lane == 0 && d.axis == axis && d.weight == 1) t.align = lane0_align(perm, axis, width);
      return t;
    }
    const auto [ia, ib] = pos(lane);
    return padded_coord(perm, axis, tile_coord(axis, a, b, ia, ib));
  });
}

// Element loops: ia along A (destination-dense, innermost: contiguous stores), ib along B. Padding is stored
// as zero, or (Padding::keep) skipped. A u4 or i4 destination goes a byte at a time: the elements at ia and
// ia + 1 (even, and their byte is this work-item's alone: nibble_pairs()) through CR_NIB_PAIR.
std::vector<std::string> scalar_loops(const ReorderParams& p, const Permutation& perm, const Run& a, const Run& b, bool b_src_dense,
                                      const TileSums& ts, int64_t b_begin = 0, int64_t b_end = -1) {
  // The conditions on the element at A position `at`: valid (else zero) and written at all.
  auto checks = [&](const std::string& at, std::vector<std::string>* ok, std::vector<std::string>* wr) {
    ok->push_back("g_ok");
    for (int ax : masked_axes(perm, a, b)) axis_checks(perm.axes[static_cast<size_t>(ax)], tile_coord(ax, a, b, at, "ib"), ok, wr);
    keep_padding_unwritten(p.conversion.padding, ok, wr);
  };
  // A is dense in the destination, so its destination offset is ia itself; likewise B's source offset is ib.
  auto value_at = [&](const std::string& at) {
    const std::string src_i = "s_off + " + (b_src_dense ? std::string("ib") : b.src_offset("ib")) + " + " + a.src_offset(at);
    return convert_at(p, perm, "SRC_AT(" + src_i + ")", 1, a, b, [&](int) { return std::make_pair(at, std::string("ib")); });
  };
  const std::string dst_i = "d_off + " + b.dst_offset("ib") + " + ia";
  std::vector<std::string> body;
  body.push_back("for (IDX_T ib = " + num(b_begin) + "; ib < " + num(b_end < 0 ? b.length() : b_end) + "; ++ib) {");
  if (is_nibble(p.dst.data_type())) {
    body.push_back("  for (IDX_T ia = 0; ia < " + num(a.length()) + "; ia += 2) {");
    std::vector<std::string> written;
    for (int k = 0; k < 2; ++k) {
      const std::string at = k ? "(ia + 1)" : "ia", c = "c" + num(k);
      std::vector<std::string> ok, wr;
      checks(at, &ok, &wr);
      // An odd run ends in a byte whose high nibble is not this tile's (a gap, or past the end): kept.
      if (k == 1 && a.length() % 2 != 0) wr.push_back("(ia + 1) < " + num(a.length()));
      // A nibble that is not written is not read either: its source offset may lie outside the source.
      std::vector<std::string> all = ok;
      all.insert(all.end(), wr.begin(), wr.end());
      body.push_back("    const DST_T " + c + " = (" + join_and(all) + ") ? " + value_at(at) + " : (DST_T)0;");
      written.push_back(wr.empty() ? "true" : join_and(wr));
      if (ts.present) {
        const std::string add = add_to_sums(ts, c, 1, at, "ib");
        body.push_back("    " + (wr.empty() ? add : "if (" + written.back() + ") " + add));
      }
    }
    body.push_back("    CR_NIB_PAIR(" + dst_i + ", c0, c1, " + written[0] + ", " + written[1] + ")");
    body.push_back("  }");
    body.push_back("}");
    return body;
  }
  body.push_back("  for (IDX_T ia = 0; ia < " + num(a.length()) + "; ++ia) {");
  std::vector<std::string> ok, wr;
  checks("ia", &ok, &wr);
  // Rows of A 2 KiB or more apart in the source (prefetches_rows(): i_yxs_os_yxsv2_osv16's 16 output channels,
  // 9 floats each per work-item) get one hint each, at the tile's first column, for the line 128 bytes on along
  // the row, where the next work-items read (plan_on() puts the digit nearest in the source innermost):
  // oiyx -> i_yxs_os_yxsv2_osv16 f32 256x256x3x3 0.84x the time (perf/clreorder_ab, caches evicted). Only where
  // these loops are the whole tile: beside transposes (a tail or padding columns of B) the transposes hint.
  if (b_src_dense && b_begin == 0 && b_end < 0 && !a.digits.empty() && prefetches_rows(p, a.digits.front().src_stride)) {
    std::vector<std::string> when = {"ib == 0"};
    when.insert(when.end(), ok.begin(), ok.end());
    body.push_back("    " + prefetch_stmt(p, "s_off + " + a.src_offset("ia"), when));
  }
  const std::string value = value_at("ia");
  const std::string stored = ok.empty() ? value : "(" + join_and(ok) + ") ? " + value + " : (DST_T)0";
  std::string store = "dst[" + dst_i + "] = " + stored + ";";
  if (ts.present) store = "{ const DST_T c = " + stored + "; dst[" + dst_i + "] = c; " + add_to_sums(ts, "c", 1, "ia", "ib") + " }";
  body.push_back(wr.empty() ? "    " + store : "    if (" + join_and(wr) + ") " + store);
  body.push_back("  }");
  body.push_back("}");
  return body;
}

// Width of the register transpose: V x V blocks need V | |A| and V | |B|, masks that act on whole rows
// (axes of A) or whole columns (axes of B), and no A axis that overshoots the destination (that would
// need partial stores). `bytes`: the size of a transposed (destination) element; `nibble_src`: a u4 or i4
// source.
// With `b_main` and `b_lo` given, the transposes may cover part of B, scalar loops the rest (never for 4-bit
// types or compensation sums: plan_on()). Where B is one digit spanning a destination axis with lower padding
// (an image padded in x), they take the real columns from the first one, *b_lo, *b_main of them (the most a V
// that divides |A| covers, the widest of those): every step's loads start where a source row does and no
// step holds a column the source lacks, the padding columns going to scalar loops on both sides (0.31-0.93x
// the time of steps along the padded row in 15 of 17 cases, every block and 8- to 32-bit elements; NOTES,
// "Padded destinations: steps from the first real column"). Else where no width divides |B|, B's first
// *b_main columns, the most such a V covers (rows of 9 or 10 elements: 3 x 3 weights' yx,
// i_yxs_os_yxsv2_osv16's pairs of them padded to 10: 0.75-0.83x the all-scalar time).
int vector_width(const Run& a, const Run& b, const Permutation& perm, int64_t bytes, bool nibble_src,
                 int64_t* b_main = nullptr, int64_t* b_lo = nullptr) {
  for (int ax : masked_axes(perm, a, b)) {
    if (a.has_axis(ax) && b.has_axis(ax)) return 1;
    if (a.has_axis(ax) && perm.axes[static_cast<size_t>(ax)].check_write) return 1;
  }
  const int64_t ta = a.length(), tb = b.length();
  // Measured on PoCL with the transpose network (perf/clreorder_ab, cold and warm): 16-wide when A starts
  // with a destination block of 16 or less, so each store is one block row (os_iyx_osv16 0.87-1.00x of
  // 8-wide's time, bfyx -> b_fs_yx_fsv16 0.78-0.94x); 8-wide when A's inner run is longer (fs_b_yx_fsv32 ->
  // bfyx 0.82-0.94x of 4-wide's, bfyx -> byxf 0.85-1.01x), but never vectors under 16 bytes (i8
  // b_fs_yx_fsv16 -> bfyx: 4-wide took 1.7x as long as 16-wide) or over 64 (i64 16-wide: 1.4-2x of 8-wide).
  // 16-bit elements 16-wide there too (32-byte vectors, as f32's 8-wide; 16-byte ones before): `clreorder
  // bench`, 8-wide and 16-wide alternated nine times (PoCL, workers pinned; NOTES, "16-bit transposes
  // 16-wide"), ran 1.03-1.21x as fast over eleven 16-bit transposes (bfyx <-> byxf f16 and bf16, yxfb,
  // 5-D, fs_b_yx_fsv32, bsv16/bsv32 blocks, f32 -> f16, os_iyx_osv32__ai32), but from an i4 source (16
  // nibbles unpacked a row) 0.77x: not there.
  const bool wide16 = bytes == 1 || (bytes == 2 && !nibble_src);
  int64_t widest = a.digits.front().extent <= 16 || wide16 ? 16 : 8;
  widest = std::min<int64_t>(widest, std::max<int64_t>(4, 64 / bytes));
  // The most of `n` columns a V covers, the widest V of those, or 1.
  auto covering = [&](int64_t n, int64_t* covered) {
    int best = 1;
    for (int v : {16, 8, 4})
      if (v <= widest && ta % v == 0 && n >= v && n - n % v > *covered) {
        *covered = n - n % v;
        best = v;
      }
    return best;
  };
  if (b_main && b_lo && b.digits.size() == 1 && b.digits[0].axis >= 0 && b.digits[0].weight == 1) {
    const PermAxis& m = perm.axes[static_cast<size_t>(b.digits[0].axis)];
    if (m.lower > 0 && m.folds.empty() && b.digits[0].extent == m.span) {
      int64_t covered = 0;
      const int v = covering(std::min(m.dim, tb - m.lower), &covered);
      if (v > 1) {
        *b_main = covered;
        *b_lo = m.lower;
        return v;
      }
    }
  }
  for (int v : {16, 8, 4})
    if (v <= widest && ta % v == 0 && tb % v == 0) return v;
  return b_main ? covering(tb, b_main) : 1;
}

// Stores `value`, `vec` destination elements, at element offset `off`: a vector store (`align`), or for u4
// and i4 (8-bit lanes) packed two to a byte, the lower offset in the low nibble (`off` even: nibble_pairs()),
// as uints where `nibble_align` allows (a multiple of 8 nibbles).
std::string dst_vector_store(DataType t, int vec, const std::string& value, const std::string& off, StoreAlign align,
                             StoreAlign nibble_align) {
  if (!is_nibble(t)) return vstore_stmt(t, vec, value, "dst + " + off, align);
  return vstore_stmt(DataType::u8, vec / 2, "cr_nib_pack" + num(vec) + "(as_uchar" + num(vec) + "(" + value + "))",
                     "(__global uchar*)dst + ((" + off + ") >> 1)", nibble_align);
}

// V x V register transpose: V vector loads along B (source-dense), V vector stores along A
// (destination-dense). Rows of padding load as zero; padding columns store zero. `src_packable`: the load
// offsets outside ib are multiples of pack_of(source type) elements.
// A padding column of B may have no slot in the source (a destination tail or lower padding the source
// lacks), so its address can lie outside the source: where B holds such an axis, each step tests its V
// columns (rd_j) and loads whole vectors only when all are readable, else element by element.
// With Padding::keep padding columns are not stored, and a column whose rows include padding stores its
// valid elements one by one (whole vectors where every row is valid: all but the tiles at a tail).
// A u4 or i4 destination's columns are packed (dst_vector_store(), aligned as `nibble_align` says).
std::vector<std::string> transpose_loops(const ReorderParams& p, const Permutation& perm, const Run& a, const Run& b,
                                         int vec, bool src_packable, StoreAlign align, StoreAlign nibble_align, const TileSums& ts,
                                         int64_t b_begin, int64_t b_end, bool rows_split, std::string* tables) {
  const std::string V = num(vec), dt = cl_type(p.dst.data_type()) + V, st = cl_type(p.src.data_type());
  // The columns' destination offsets and the rows' source offsets: Run::sum(), or in CPU tiles reads of
  // offset_table()'s tables (made once the steps' unrolling is known, below).
  std::string b_table, a_table;
  auto b_dst = [&](const std::string& column) { return b_table.empty() ? b.dst_offset(column) : b_table + "[" + column + "]"; };
  auto a_src = [&](const std::string& row) { return a_table.empty() ? a.src_offset(row) : a_table + "[" + row + "]"; };
  std::vector<int> axes = masked_axes(perm, a, b);
  std::vector<std::string> body, readable;
  body.push_back("for (IDX_T ib = " + num(b_begin) + "; ib < " + num(b_end) + "; ib += " + V + ") {");
  for (int j = 0; j < vec; ++j) {
    std::vector<std::string> rd;
    for (int ax : axes)
      if (b.has_axis(ax)) read_checks(perm.axes[static_cast<size_t>(ax)], tile_coord(ax, Run{}, b, "0", "ib + " + num(j)), &rd);
    if (rd.empty()) continue;
    readable.push_back("rd" + num(j));
    body.push_back("  const bool " + readable.back() + " = " + join_and(rd) + ";");
  }
  if (!readable.empty() && readable.size() != static_cast<size_t>(vec))
    throw Error("internal: tiled's read checks cover some columns of a step only");
  if (!readable.empty()) body.push_back("  const bool rd = " + join_and(readable) + ";");
  // A step with unreadable columns (at padding or a tail: the first and last steps of a row) loads its readable
  // columns in one loop into a private V x V tile, zeros elsewhere, and its rows from that tile; rd is tested
  // once per step, around all V rows' loads (`if (rd) { .. } else { .. }`). Each row written out with a test
  // of its own (a whole vector if readable, else quarter vectors, else element by element: V * (V + 4)
  // conditional loads a step) took PoCL 4.3-5.5 s to compile (work-group function and code generation,
  // `oiyx -> os_is_yx_isv16_osv16` f32 33x17x1x1; 6.6-9.9 s for such kernels inside the tests), the same
  // quarters behind the one test a step 2.6-3.1 s, this loop 0.8-1.4 s. The loop ran 0.97-1.05x the time of
  // the quarters over padded rows and 1 x 1 weights' tails (`perf/clreorder_ab`, 40 interleaved runs) and
  // 0.97-1.02x that of the loop with a test per row over 3 x 3 and 7 x 7 weights (NOTES, "tiled's edge
  // steps in one branch").
  const bool rolled = !readable.empty();
  if (rolled) {
    std::string mask;
    for (int j = 0; j < vec; ++j) mask += std::string(j ? " | " : "") + "(rd" + num(j) + " ? " + num(int64_t{1} << j) + "u : 0u)";
    body.push_back("  const uint rdm = " + mask + ";");
  }
  const bool keep = p.conversion.padding == Padding::keep;
  const std::string wide = partial_sum_type(p.dst.data_type(), vec);
  // On CPUs, columns whose destination rows lie a multiple of 4 KiB apart share one cache set (L1's 64 sets
  // of 64 bytes, and L2's for a multiple of its set span): with V such rows written a vector at a time, the
  // lines of a step evict each other before they are whole. There a work-item runs `unroll` steps along A,
  // enough for a cache line per column, and then writes each column's line in one go (registers of several
  // steps: not with sums, kept padding or 4-bit destinations). bzyxf -> bfzyx 1x32x32x64x64 (rows 128 KiB
  // apart): i8 0.86-0.89x, f16 0.89-0.90x the one-step time (perf/clreorder_ab); other strides keep one step.
  // Streaming stores need it at any stride: a line that V columns' stores fill piecewise, step by step, leaves
  // its write-combining buffer part-written, and each such line goes to memory as a read-modify-write.
  // Streamed that way, transposes into rows of 16-32 bytes took 2.3-29x the time of plain stores (bfyx ->
  // byxf f32 8x256x56x56 2.4x, b_fs_yx_fsv32 -> bfyx i8 29x); with whole lines 0.34-0.92x it in each of the
  // 33 of 40 cases that stream, every family and element size (PoCL, 2 cores, perf/clreorder_ab, caches
  // evicted). So a transpose streams only where a column's stores fill whole lines; without streaming the
  // unrolled steps measured 0.94-1.38x: kept to the 4 KiB strides.
  // Except where both hold: 16 columns (8-bit elements) a multiple of 4 KiB apart took 1.16-1.42x the plain
  // stores' time streamed, whole lines and all, alone and with a consumer after (byxf -> bfyx u8 8x64x128x128,
  // 32x64x64x64 and 8x64x96x128, bzyxf -> bfzyx i8 1x64x32x64x64 and 1x64x64x64x64), where the same columns
  // at other strides took 0.58-0.96x (8x64x112x112, 8x64x80x128, 1x64x32x60x60) and 8 columns (16- and
  // 32-bit destinations) at such strides 0.77-1.11x (byxf -> bfyx f16 4x256x64x64 and 4x128x128x128, f32
  // 2x256x64x64, u8 -> f32 8x64x64x64, bfyx -> byxf f32 2x1024x28x28). So those 16-column transposes keep
  // plain stores. Not 16 columns of 16-bit elements (vector_width()): byxf -> bfyx f16 32x256x64x64 took
  // 0.96x the 8-column streamed time streamed, 1.6x with plain stores (`clreorder bench`, three alternations).
  const int64_t elem_bytes = static_cast<int64_t>(unit_bytes(p.dst.data_type())), row_bytes = elem_bytes * vec;
  const bool set_aliased = !b.digits.empty() && b.digits.front().dst_stride * elem_bytes % 4096 == 0;
  if (set_aliased && vec >= 16 && elem_bytes == 1) align.streams = false;
  int64_t unroll = 1;
  if (tuning_of(p.device) == Tuning::cpu && !ts.present && !keep && !is_nibble(p.dst.data_type()) && row_bytes < 64 &&
      (align.streams || set_aliased) && a.length() % (64 / row_bytes * vec) == 0)
    unroll = 64 / row_bytes;
  if (row_bytes * unroll < 64) align.streams = false;
  // CPU tiles prefetch each row's source line two lines ahead, once per line, where A's rows lie 2 KiB or more
  // apart in the source (prefetches_rows()): a step then reads V rows in V pages, and the tile as many as A has
  // (64-256), more streams than a core's hardware prefetcher follows. Measured (perf/clreorder_ab, PoCL on AMD
  // Zen 5, caches evicted; NOTES, "Prefetch hints"): the suite's 23 such cases 0.74-1.00x the time without
  // hints; where rows lie closer (byxf -> bfyx: 64-256 bytes) the lines stream anyway and hints only cost
  // instructions (bf16 1.11x). Not where the tensor is narrower than the tile along A's inner digit, a masked one
  // (3 channels in blocks of 16: most rows are padding and the 3 real ones stream; 1.12x). A digit of several
  // axes (axis -1: yxfb's y and x, 8 KiB apart) has no masks.
  // Nor where 8-bit rows go to 8-bit columns in unrolled steps (64 rows a step, since the tile keeps 64 far rows
  // into 8-bit destinations) and the reorder does not stream (the steps unrolled for 4 KiB-aliased destination
  // rows): there hints into the first-level cache cost time. Without them over with (`perf/clreorder_ab --variant
  // 'CR_PREFETCH(src=>(void)(src'`, PoCL on AMD Zen 5, caches evicted, interleaved; NOTES, "No hints in 64-row
  // steps of 8-bit copies"): the 40 plans this changes among 2167 pairs 0.945x in geometric mean (bfyx -> byxf i8
  // 8x64x112x112 0.80-0.88x, bfzyx -> bzyxf i8 0.81-0.86x; bfyx -> bs_fs_yx_bsv16_fsv4 4x64x128x128 0.94-1.24x, the
  // one that lost). From 2- and 4-byte sources the same steps gain (f16 -> i8 1.12-1.35x, f32 -> u8 1.10-1.14x),
  // and so do 8-bit tiles stepping 16 rows (bfyx -> byxf i8 8x64x64x64 1.10-1.13x). Streamed, the hints go to
  // the second level (prefetch_stmt()) and then gain in these steps too: with them over without (a temporary
  // switch, `perf/clreorder_ab --env`, 21 interleaved runs, PoCL on AMD EPYC Zen 4; NOTES, "Streamed 8-bit
  // copies hinted again") the 38 plans it changes among 82 i8 and u8 pairs 0.84x and 0.87x the time cold in two
  // runs (bfyx -> yxfb, byxf, bs_fs_yx_bsv16_fsv16, bsv32_fsv32 0.45-0.96x; yxfb -> bfyx, bfzyx -> bzyxf,
  // bs_fs_yx_bsv16_fsv16 -> bfyx 0.95-1.12x), 1.03x warm (up to 1.21x: data a streamed size leaves in cache).
  // Rows from 256 bytes to 2 KiB apart get them too where the reorder streams (its data comes from memory, the
  // hints then go to the second-level cache: prefetch_stmt()) and the rows are split between B and the innermost
  // grid digit (`rows_split`), so the line a hint fetches is the next work-item's: a channels-last source's
  // pixels (byxf -> bfyx, 64-256 channels). First for 4-byte sources into 2- and 4-byte destinations, with
  // hints into every level; with them over without (perf/clreorder_ab,
  // the old and new kernels interleaved, caches evicted or warm, two runs; NOTES, "Hints for rows 256 bytes
  // apart"): byxf -> bfyx f32 8x64 to 8x256 channels at 56x56 and 28x28 and 1x128x112x112 0.71-1.00x the time
  // cold, 0.67-0.99x warm; i32 0.78-0.91x and 0.83-0.93x; f32 -> f16 0.60-0.70x and 0.66-0.95x; bzyxf -> bfzyx
  // f32 0.66-0.88x and 0.69-0.97x; bfyx -> byxf f32 32x256x16x16 (1 KiB planes) 0.75-0.97x and 0.94-0.99x.
  // Into 8-bit destinations and from 1- and 2-byte sources they then lost (f32 -> i8, u8: 1.03-1.10x cold;
  // byxf -> bfyx f16, bf16, u8, f16 -> f32: 0.94-1.25x cold); into the second level they gain there too (a
  // temporary switch, `perf/clreorder_ab --env`, 21 interleaved runs, PoCL on AMD EPYC Zen 4; NOTES, "Near rows'
  // hints for every whole-byte type"): the 25 plans it changes among 156 channels-last pairs 0.76x the time
  // cold, 0.82x warm in geometric mean (bf16 8x256x56x56 0.60x, f32 -> i8 0.64-0.71x, f16 -> f32 0.92-1.00x, the
  // least; warm 1.04x the worst). Not the small tensors whose data stays in cache (bfyx ->
  // byxf f32 8x256x16x16 1.05-1.15x, 8x512x14x14 in 4-wide steps 1.26-1.28x warm). Not where the grid digit is
  // masked: with a block's batches as the digit and most of them padding the hints took 5.7x the time
  // (bs_fs_zyx_bsv16_fsv16 -> bfzyx f32 1x64x16x32x32, one batch of 16) and 1.3-1.6x at 8 of 16
  // (bs_fs_yx_bsv16_fsv16 -> bfyx f32 8x64x56x56, 8x256x28x28).
  const PermDigit* a0 = a.digits.empty() ? nullptr : &a.digits.front();
  const bool narrow = a0 && a0->axis >= 0 && perm.axes[static_cast<size_t>(a0->axis)].masked() &&
                      perm.axes[static_cast<size_t>(a0->axis)].dim < a0->extent * a0->weight;
  const bool byte_copy_steps =
      unroll > 1 && unit_bytes(p.src.data_type()) == 1 && elem_bytes == 1 && !stream_pays(p.src, p.dst, p.device);
  const int64_t src_elem = static_cast<int64_t>(unit_bytes(p.src.data_type()));
  const bool near_rows = a0 && tuning_of(p.device) == Tuning::cpu && !is_nibble(p.src.data_type()) && rows_split &&
                         a0->src_stride * src_elem >= kNearPrefetchRowBytes && stream_pays(p.src, p.dst, p.device);
  const bool prefetch = a0 && !narrow && !byte_copy_steps && (prefetches_rows(p, a0->src_stride) || near_rows);  // axis -1: digits of several axes, unmasked
  const std::string line_start = prefetch ? once_per_line(p, b_begin ? "(ib - " + num(b_begin) + ")" : "ib", vec) : "";
  if (!line_start.empty()) body.push_back("  const bool pf = " + line_start + ";");
  // CPU tiles whose B is two steps and whose rows of A lie at most 512 bytes apart in the source (a blocked or
  // channels-last source's pixels: b_fs_yx_fsv16/32, fs_b_yx_fsv32, byxf, bzyxf -> plain) take both steps of
  // a row group before the next (ib inner): each source line is then read whole at once and its 2V columns
  // written side by side, where ib outside read each line's halves a whole A of rows apart. Measured
  // (perf/clreorder_ab --env, a temporary switch, 21 interleaved runs, the Xeon host; NOTES, "Both steps of B
  // together"): the 57 plans the rule without a stride or size bound changes among 501 pairs 0.95x the time in
  // geometric mean, cold twice and warm; within it 8-byte elements 0.79-0.89x (b_fs_yx_fsv32 -> bfyx i64
  // 8x64x56x56 0.79-0.82x, b_fs_yx_fsv16 -> bfyx f64 0.87-0.88x), byxf -> bfyx f32 8x64x56x56 0.87-0.90x,
  // u8 -> f32 8x256x28x28 0.84-0.87x, f16 -> f32 0.86-0.92x, blocked f32 0.88-0.99x. Not rows 784 bytes and more
  // apart (bfyx -> byxf, b_fs_yx_fsv32 f16 -> f32 8x256x28x28: 1.13-1.31x; byxf -> bfyx f32 8x256x56x56, rows of
  // 1 KiB: 0.95-1.06x), nor 8-bit destinations (0.92-1.17x, mixed), nor longer B: ib inner over 4 to 32 steps
  // took 1.04-1.66x (bs_fs_yx_bsv16_fsv16 -> bfyx), and with the hints' far rows 1.20-1.34x (bfyx -> byxf f32).
  const bool columns_inner = a0 && tuning_of(p.device) == Tuning::cpu && !ts.present && !prefetch && unroll == 1 &&
                             b_end - b_begin == 2 * vec && elem_bytes >= 2 && !is_nibble(p.dst.data_type()) &&
                             a0->src_stride * static_cast<int64_t>(bits_of(p.src.data_type())) <= 512 * 8;
  const size_t ib_lines = body.size();  // the ib loop's head and its columns' tests
  // One step of V x V at A position `ia` (a variable name), registers tagged `tag`: its loads and network
  // (`pre`), and each column's store.
  struct Step {
    std::vector<std::string> pre, stores, block_sum;
  };
  auto step = [&](const std::string& ia, const std::string& tag) {
    Step out;
    std::vector<std::string> rows, row_ok;  // row_ok (keep): rows that may be padding, as named flags
    // The checks that a row of A (at `row`) lies inside the source, as conditions to join.
    auto row_checks = [&](const std::string& row) {
      std::vector<std::string> ok = {"g_ok"};
      for (int ax : axes)
        if (a.has_axis(ax)) axis_checks(perm.axes[static_cast<size_t>(ax)], tile_coord(ax, a, Run{}, row, "0"), &ok, nullptr);
      return ok;
    };
    // The rolled loads: row ii's readable columns (rdm) where the row is valid, else zero, into a V x V tile;
    // `whole` and `edge` assign the rows for steps with every column readable and for the others.
    std::vector<std::string> whole, edge;
    if (rolled) {
      edge.push_back("  " + st + " fb" + tag + "[" + num(vec * vec) + "];");
      edge.push_back("  for (int ii = 0; ii < " + V + "; ++ii) { const bool rok = " + join_and(row_checks(ia + " + ii")) +
                        "; for (int jj = 0; jj < " + V + "; ++jj) fb" + tag + "[ii * " + V + " + jj] = (rok && ((rdm >> jj) & 1u)) ? SRC_AT(s_off + ib + " +
                        a_src(ia + " + ii") + " + jj) : (" + st + ")0; }");
    }
    for (int i = 0; i < vec; ++i) {
      const std::string row = ia + " + " + num(i);
      std::vector<std::string> ok = row_checks(row);
      if (keep && ok.size() > 1) {
        row_ok.push_back("okr" + tag + num(i));
        out.pre.push_back("const bool " + row_ok.back() + " = " + join_and(ok) + ";");
        ok = {row_ok.back()};
      }
      // Rows are converted as loaded, while they are whole vectors; the transpose then moves destination values.
      const std::string off = "s_off + ib + " + a_src(row);
      // A 4-bit source's byte offset halved term by term where A's source strides are even (s_off + ib then
      // is too, the sum being even): the rows' loads stay constants apart, which the halved sum hid from LLVM
      // (a shift and a sign extension per row; i4 -> f16 b_fs_yx_fsv16 -> bfyx took 0.85x the time so).
      const std::string half = a.src_bytes(row);
      const std::string load = src_vector(p.src.data_type(), vec, off, src_packable, unaligned_vectors(p.device), half.empty() ? "" : "((s_off + ib) >> 1) + " + half);
      if (prefetch) {  // under the row's own conditions: no hint for a row of padding
        std::vector<std::string> when = ok;
        if (!line_start.empty()) when.insert(when.begin(), "pf");
        out.pre.push_back(prefetch_stmt(p, off, when));
      }
      rows.push_back("r" + tag + num(i));
      auto row_value = [&](const std::string& loaded) {
        return "(" + join_and(ok) + ") ? " + convert_at(p, perm, loaded, vec, a, b, [&](int lane) { return std::make_pair(row, "ib + " + num(lane)); }, &b) +
               " : (" + dt + ")0;";
      };
      if (!rolled) {
        out.pre.push_back("const " + dt + " " + rows.back() + " = " + row_value(load));
        continue;
      }
      whole.push_back("  " + rows.back() + " = " + row_value(load));
      edge.push_back("  " + rows.back() + " = " + row_value("vload" + V + "(" + num(i) + ", fb" + tag + ")"));
    }
    if (rolled) {
      std::string names;
      for (const std::string& r : rows) names += (names.empty() ? "" : ", ") + r;
      out.pre.push_back(dt + " " + names + ";");
      out.pre.push_back("if (rd) {");
      out.pre.insert(out.pre.end(), whole.begin(), whole.end());
      out.pre.push_back("} else {");
      out.pre.insert(out.pre.end(), edge.begin(), edge.end());
      out.pre.push_back("}");
    }
    const TransposeNet net = transpose_network(cl_type(p.dst.data_type()), vec, rows, "t" + tag);
    out.pre.insert(out.pre.end(), net.lines.begin(), net.lines.end());
    for (int j = 0; j < vec; ++j) {
      const std::string column = "ib + " + num(j);
      std::vector<std::string> ok, wr;
      for (int ax : axes)
        if (b.has_axis(ax)) axis_checks(perm.axes[static_cast<size_t>(ax)], tile_coord(ax, Run{}, b, "0", column), &ok, &wr);
      std::string value = net.columns[static_cast<size_t>(j)];
      const std::string at = "dst + d_off + " + b_dst(column) + " + " + ia;
      keep_padding_unwritten(p.conversion.padding, &ok, &wr);
      if (!ok.empty()) value = "(" + join_and(ok) + ") ? " + value + " : (" + dt + ")0";
      if (ts.present) {
        out.pre.push_back("const " + dt + " c" + tag + num(j) + " = " + value + ";");
        value = "c" + tag + num(j);
      }
      std::string store = dst_vector_store(p.dst.data_type(), vec, value, "d_off + " + b_dst(column) + " + " + ia, align, nibble_align);
      if (!row_ok.empty()) {
        if (row_ok.size() != static_cast<size_t>(vec)) throw Error("internal: tiled's row masks cover some rows of a step only");
        std::string each;
        for (int i = 0; i < vec; ++i)
          each += " if (" + row_ok[static_cast<size_t>(i)] + ") (" + at + ")[" + num(i) + "] = (" + value + ").s" + "0123456789abcdef"[i] + ";";
        store = "if (" + join_and(row_ok) + ") " + store + " else {" + each + " }";
      }
      if (ts.along == TileSums::Along::b) store = "{ " + store + " " + add_to_sums(ts, value, vec, ia, column) + " }";
      if (ts.present && ts.along != TileSums::Along::b)
        out.block_sum.push_back("convert_" + wide + V + "(" + (wr.empty() ? value : "(" + join_and(wr) + ") ? " + value + " : (" + dt + ")0") + ")");
      out.stores.push_back(wr.empty() ? store : "if (" + join_and(wr) + ") { " + store + " }");
    }
    return out;
  };
  if (tuning_of(p.device) == Tuning::cpu) {
    const int64_t a_step = vec * unroll;
    b_table = offset_table(b, &PermDigit::dst_stride, "_bo", b_begin + (b_end - b_begin + vec - 1) / vec * vec, tables);
    a_table = offset_table(a, &PermDigit::src_stride, "_ao", (a.length() + a_step - 1) / a_step * a_step, tables);
  }
  body.push_back("  for (IDX_T ia = 0; ia < " + num(a.length()) + "; ia += " + num(vec * unroll) + ") {");
  std::vector<Step> steps;
  for (int64_t u = 0; u < unroll; ++u) {
    const std::string tag = unroll == 1 ? "" : num(u) + "_", ia = unroll == 1 ? "ia" : "ia" + num(u);
    if (unroll > 1) body.push_back("    const IDX_T " + ia + " = ia + " + num(u * vec) + ";");
    steps.push_back(step(ia, tag));
    for (const std::string& line : steps.back().pre) body.push_back("    " + line);
  }
  for (int j = 0; j < vec; ++j)
    for (const Step& st_u : steps) body.push_back("    " + st_u.stores[static_cast<size_t>(j)]);
  // Sums along A or none: the block's columns added lane by lane in a type just wide enough (16 of them), then
  // widened once, instead of widening every column.
  if (ts.present && ts.along != TileSums::Along::b) {
    std::string total;
    for (const std::string& term : steps.front().block_sum) total += (total.empty() ? "" : " + ") + term;
    body.push_back("    " + add_to_sums(ts, "(" + total + ")", vec, "ia", ""));
  }
  body.push_back("  }");
  body.push_back("}");
  if (columns_inner) {  // ia's head first, then ib's with its tests
    std::rotate(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(ib_lines), body.begin() + static_cast<std::ptrdiff_t>(ib_lines) + 1);
    body[0] = body[0].substr(2);
    body[1] = "  " + body[1];
  }
  return body;
}

// A row (A dense in both layouts: one digit) whose valid elements are a prefix: its axis is masked only by
// its upper end (a blocked tail: byxf u8 -> b_fs_yx_fsv16 f16 with 3 channels in blocks of 16), with padding
// stored as zero, and the grid moves the axis in whole rows (its other digits' weights are multiples of the
// row's span). A row then holds n_ok = ceil((lower + dim - v) / weight) valid elements clamped to [0, |A|],
// v the grid's part of the axis' coordinate: all of them, none, or (the tail row) a number known here.
// Null when A is not such a row.
const PermDigit* prefix_row(const Run& a, const Permutation& perm, Padding padding) {
  if (a.digits.size() != 1 || !perm.masked(a.digits[0]) || padding != Padding::zero) return nullptr;
  const PermDigit& row = a.digits[0];
  const PermAxis& m = perm.axes[static_cast<size_t>(row.axis)];
  if (m.check_low || m.check_write) return nullptr;
  for (const PermDigit& d : perm.digits)
    if (d.axis == row.axis && d.weight != row.weight && d.weight % (row.extent * row.weight) != 0) return nullptr;
  return &row;
}

// Width of vector row copies when A is dense in both layouts: V | |A| and no masks along A but a prefix_row()'s.
int row_width(const Run& a, const Permutation& perm, Padding padding) {
  for (const PermDigit& d : a.digits)
    if (perm.masked(d) && !prefix_row(a, perm, padding)) return 1;
  for (int v : {16, 8, 4})
    if (a.length() % v == 0) return v;
  return 1;
}

// The signed integer type of `t`'s element size, for select()'s masks.
std::string mask_type(DataType t) {
  switch (size_of(t)) {
    case 1: return "char";
    case 2: return "short";
    case 4: return "int";
    default: return "long";
  }
}

// A is dense in both layouts: each of the |B| rows is |A| elements copied with vector loads and stores.
// `src_packable`: the load offsets outside ia are multiples of pack_of(source type) elements. A u4 or i4
// destination's rows are packed (dst_vector_store(), aligned as `nibble_align` says; make_plan() gives them no tail).
std::vector<std::string> row_loops(const ReorderParams& p, const Permutation& perm, const Run& a, const Run& b, int vec,
                                   bool src_packable, StoreAlign align, StoreAlign nibble_align, const TileSums& ts,
                                   std::string* tables) {
  const std::string V = num(vec), dt = cl_type(p.dst.data_type()) + V;
  std::vector<std::string> ok = {"g_ok"}, wr;
  for (int ax : masked_axes(perm, a, b)) axis_checks(perm.axes[static_cast<size_t>(ax)], tile_coord(ax, Run{}, b, "0", "ib"), &ok, &wr);
  // Padding rows are stored as zero, or (Padding::keep) skipped.
  keep_padding_unwritten(p.conversion.padding, &ok, &wr);
  std::vector<std::string> body;
  const PermDigit* row = prefix_row(a, perm, p.conversion.padding);
  body.push_back("for (IDX_T ib = 0; ib < " + num(b.length()) + "; ++ib) {");
  if (!wr.empty()) body.push_back("  if (!(" + join_and(wr) + ")) continue;");
  if (row) {
    // The row's first coordinate on its axis is the grid's part and B's (B may move the axis too).
    const PermAxis& m = perm.axes[static_cast<size_t>(row->axis)];
    const std::string left = "(" + num(m.lower + m.dim) + " - " + tile_coord(row->axis, Run{}, b, "0", "ib") + ")";
    body.push_back("  const IDX_T n_ok = clamp((" + left + " + " + num(row->weight - 1) + ") / " + num(row->weight) + ", (IDX_T)0, (IDX_T)" +
                   num(a.length()) + ");");
  }
  // Lane k of a row's vector sits at A position ia + k of row ib.
  const auto along_a = [](int lane) { return std::make_pair("ia + " + num(lane), std::string("ib")); };
  // A 4-bit source's bytes halved term by term, as in transpose_loops() (ia steps by V, an even count).
  const std::string half = b.src_bytes("ib");
  const std::string load = convert_at(p, perm, src_vector(p.src.data_type(), vec, "s_off + " + b.src_offset("ib") + " + ia", src_packable, unaligned_vectors(p.device),
                                                          half.empty() ? "" : "(s_off >> 1) + " + half + " + (ia >> 1)"),
                                      vec, a, b, along_a, &a);
  if (!ok.empty()) body.push_back("  const bool ok = " + join_and(ok) + ";");
  // Sums along B or none: a row's values are added lane by lane in a type just wide enough, then widened and
  // added once per row.
  const bool row_sum = ts.present && ts.along != TileSums::Along::a;
  const std::string wide = partial_sum_type(p.dst.data_type(), a.length() / vec) + V;
  if (row_sum) body.push_back("  " + wide + " cr_r = 0;");
  // A parameter per group of G indices (int4/int8 weights' group scales) is one value for each step's V lanes,
  // at an index that changes every G / V steps; LLVM keeps the rolled loop's index arithmetic and load in every
  // step (4 of the 16 instructions per 16 lanes of i8 -> f16). CPU rows of at most 16 steps are unrolled, so
  // their steps share each group's value. `oiyx -> oiyx` 1024x4096 and 4096x4096 with groups of 32 and 128
  // from a buffer, 11 type pairs (perf/clreorder_ab --param-buffers, caches evicted / warm): 0.93x / 0.95x the
  // time in geometric mean (f16 -> i8 0.83-0.90x, i8 -> f32 1.00-1.04x the worst); plain rows 1.005x and
  // per-channel parameters 1.00x (109 and 75 plans): not there.
  bool grouped = false;
  for (const ParamValues& v : p.conversion.params) grouped |= v.present() && v.axis >= 0 && v.group > 1;
  const bool unrolled = grouped && tuning_of(p.device) == Tuning::cpu && a.length() / vec > 1 && a.length() / vec <= 16;
  body.push_back(std::string(unrolled ? "  _Pragma(\"unroll\")" : "") + "  for (IDX_T ia = 0; ia < " + num(a.length()) + "; ia += " + V + ") {");
  std::string value = ok.empty() ? load : "ok ? " + load + " : (" + dt + ")0";
  if (row) {
    // Vectors wholly inside the row's valid prefix load as usual and those past it store zeros. The tail
    // row's vector across its end (n_ok - ia = tail elements) reads those one by one (the others may lie past
    // the source) and converts only as many lanes as it needs (a power of two: 4 for 3 channels; the
    // conversion is most of its work), spread over V lanes of zeros lane by lane (see CR_SW2).
    const PermAxis& m = perm.axes[static_cast<size_t>(row->axis)];
    const int64_t tail = (m.lower + m.dim + row->weight - 1) / row->weight % a.length() % vec;
    int w = vec;
    while (w / 2 >= std::max<int64_t>(tail, 2)) w /= 2;
    const std::string W = num(w), st = cl_type(p.src.data_type()), at = "src + s_off + " + b.src_offset("ib") + " + ia";
    std::string lanes, mask, spread;
    for (int k = 0; k < vec; ++k) {
      if (k < w) {
        lanes += std::string(k ? ", " : "") + (k < tail ? "(" + at + ")[" + num(k) + "]" : "(" + st + ")0");
        mask += std::string(k ? ", " : "") + (k < tail ? "-1" : "0");
      }
      spread += std::string(k ? ", " : "") + (k < w ? "cr_t.s" + std::string(1, "0123456789abcdef"[k]) : "0");
    }
    const std::string dw = cl_type(p.dst.data_type()) + W;
    // An 8-bit source's few tail lanes look their results up (byte_table()): with warm caches 0.62x the
    // time of the normal-path f16 conversion of a u8 image's 3-channel tail, and 0.56x that of its
    // normalisation (perf/clreorder_ab); lanes past the tail are zero without a read.
    const ByteTable table = byte_table(p, row->axis);
    std::string masked;
    if (table.usable && tail > 0) {
      std::string looked;
      for (int k = 0; k < w; ++k)
        looked += std::string(k ? ", " : "") +
                  (k < tail ? byte_table_read(p, table, "(" + at + ")[" + num(k) + "]",
                                              padded_coord(perm, row->axis, tile_coord(row->axis, a, b, "ia + " + num(k), "ib")))
                            : "(" + cl_type(p.dst.data_type()) + ")0");
      masked = "(" + dw + ")(" + looked + ")";
      *tables = byte_table_text(p, table);
    } else {
      const std::string loaded = "(" + st + W + ")(" + lanes + ")";
      const std::string partial = p.conversion.per_index() || w == vec
                                      ? convert_at(p, perm, loaded, w, a, b, along_a, &a)
                                      : convert_expr(p, loaded, w);
      // On the bits where the lanes are f32 or f64: select() may pass floats through arithmetic (Oclgrind's
      // does, through double), which quiets a signalling NaN the conversion keeps bit for bit.
      const std::string mw = "(" + mask_type(p.dst.data_type()) + W + ")(" + mask + ")";
      const bool floating = p.dst.data_type() == DataType::f32 || p.dst.data_type() == DataType::f64;
      const std::string bits = "u" + mask_type(p.dst.data_type()) + W;
      masked = floating ? "as_" + dw + "(select((" + bits + ")0, as_" + bits + "(" + partial + "), " + mw + "))"
                        : "select((" + dw + ")0, " + partial + ", " + mw + ")";
    }
    if (w < vec && tail > 0) body.push_back("    " + dw + " cr_t;");
    const std::string across = tail == 0 ? "(" + dt + ")0" : w == vec ? masked : "(cr_t = " + masked + ", (" + dt + ")(" + spread + "))";
    value = "(ia + " + V + " <= n_ok) ? " + value + " : (ia < n_ok" + (ok.empty() ? "" : " && ok") + ") ? " + across + " : (" + dt + ")0";
  }
  // Rows 2 KiB or more apart in the source (prefetches_rows(): b_fs_yx_fsv16 -> byxf, a pixel's 16 channels from
  // each of 8 planes 100 KiB apart) get a hint per line along the row, two lines ahead, as transposes' rows do,
  // where a tile has 8 such rows or more: 2-4 streams the hardware follows itself, and hints only cost there.
  if (!b.digits.empty() && b.digits.front().extent >= 8 && prefetches_rows(p, b.digits.front().src_stride)) {
    std::vector<std::string> when;
    if (const std::string line_start = once_per_line(p, "ia", vec); !line_start.empty() && a.length() > vec) when.push_back(line_start);
    if (!ok.empty()) when.push_back("ok");
    if (row) when.push_back("ia < n_ok");
    body.push_back("    " + prefetch_stmt(p, "s_off + " + b.src_offset("ib") + " + ia", when));
  }
  if (ts.present) {
    body.push_back("    const " + dt + " c = " + value + ";");
    value = "c";
  }
  body.push_back("    " + dst_vector_store(p.dst.data_type(), vec, value, "d_off + " + b.dst_offset("ib") + " + ia", align, nibble_align));
  if (row_sum) body.push_back("    cr_r += convert_" + wide + "(c);");
  else if (ts.present) body.push_back("    " + add_to_sums(ts, value, vec, "ia", "ib"));
  body.push_back("  }");
  if (row_sum) body.push_back("  " + add_to_sums(ts, "cr_r", vec, "", "ib"));
  body.push_back("}");
  return body;
}

// Moves the digit of `grid` that `pick` selects into `run` (as its new outermost digit); false if none.
bool take(std::vector<PermDigit>& grid, Run& run, const std::function<bool(const PermDigit&)>& pick) {
  auto it = std::find_if(grid.begin(), grid.end(), pick);
  if (it == grid.end()) return false;
  run.digits.push_back(*it);
  grid.erase(it);
  return true;
}

// Splits a single-digit run longer than `t` into a run of t and a grid digit counting the chunks.
void chunk(Run& run, int64_t t, std::vector<PermDigit>& grid) {
  if (run.digits.size() != 1 || t >= run.digits[0].extent) return;
  grid.push_back(split_outer(run.digits[0], t));
}

// Where `run`'s rows (its length in elements of `elem_bytes`) are under `row_bytes` and divide it, the run takes
// the inner part of `cont` (the grid digit continuing it) that makes them row_bytes, if that part divides the
// digit and leaves the run at most `cap` elements; `cont` keeps the outer part in the grid.
void grow_rows(Run& run, std::vector<PermDigit>::iterator cont, const std::vector<PermDigit>& grid, int64_t elem_bytes,
               int64_t row_bytes, int64_t cap) {
  const int64_t bytes = run.length() * elem_bytes;
  if (cont == grid.end() || bytes >= row_bytes || row_bytes % bytes != 0) return;
  const int64_t t = row_bytes / bytes;
  if (t >= cont->extent || cont->extent % t != 0 || run.length() * t > cap) return;
  PermDigit inner = *cont;
  *cont = split_outer(inner, t);
  run.digits.push_back(inner);
}

// How a work-item moves its tile: A and B, the grid digits left, and the form (register transposes of
// width vec, vector row copies of width vec, or scalar loops).
struct TiledPlan {
  Permutation perm;
  Run a, b;
  std::vector<PermDigit> grid;
  bool a_src_dense = false;
  enum class Form { transpose, rows, scalar } form = Form::scalar;
  int vec = 1;
  int64_t b_main = 0;  // Form::transpose: B's columns the transposes cover; scalar loops take the rest
  int64_t b_lo = 0;    // the first of them
  TileSums sums;
};

// The bytes of a destination row of A that CPU tiles of 2-byte and wider elements make up from the digit
// continuing a shorter A, and of a source row of B where A's rows lie far apart (plan_on()): four cache lines.
constexpr int64_t kShortRowBytes = 256;

TiledPlan plan_on(const ReorderParams& p, Permutation perm) {
  TiledPlan tp;
  tp.perm = std::move(perm);
  TileConfig cfg = config_for(p);
  // The tile budget is in bytes of the wider element: byte-sized types get proportionally longer tiles.
  const int64_t wide_bytes = static_cast<int64_t>(std::max(unit_bytes(p.src.data_type()), unit_bytes(p.dst.data_type())));
  cfg.tile = cfg.tile * 4 / wide_bytes;
  std::vector<PermDigit>& grid = tp.grid;
  Run &a = tp.a, &b = tp.b;
  grid = tp.perm.digits;
  a.digits.push_back(grid.back());  // destination stride 1
  grid.pop_back();
  // Compensation sums are kept per position along one run (TileSums): digits of their axes join the other
  // run only while this one has none.
  const Compensation& comp = p.conversion.compensation;
  auto sums_axis = [&](int axis) { return comp.present() && axis >= 0 && (axis == comp.axis || axis == comp.outer_axis); };
  auto free_of = [&](const Run& other) {
    const bool moves = std::any_of(other.digits.begin(), other.digits.end(), [&](const PermDigit& d) { return sums_axis(d.axis); });
    return [&, moves](const PermDigit& d) { return !moves || !sums_axis(d.axis); };
  };
  tp.a_src_dense = a.digits[0].src_stride == 1;
  if (tp.a_src_dense) {
    // A is contiguous in both layouts: B extends the tile along the next destination digit, so the whole
    // tile is one contiguous destination run read as runs of A. Not where A is cut into chunks: a tile's
    // rows would then lie a whole row apart, and consecutive work-items a tile of rows apart (a 4096x4096
    // reorder with per-row scales, which keep its two axes apart, ran at 0.17 of copy against 0.56 with one
    // scale); without B consecutive work-items take consecutive chunks of a row.
    if (!grid.empty() && free_of(a)(grid.back()) && tile_size(a.length(), cfg.cap_a) == a.length()) {
      const PermDigit next = grid.back();
      grid.pop_back();
      // Where the source's row goes on past A (byxf -> b_fs_yx_fsv16: A is 16 of a pixel's 64 channels), B
      // takes the digit continuing A in the source too (fs), inside `next`: a work-item then reads whole
      // source rows and writes as many destination runs, instead of every fs-th line of a stretch the next
      // fs pass reads again. Where `next` is far in the source (b_fs_yx_fsv16 -> byxf: next is fs) and alone
      // leaves the tile small (a work-item per pixel), the continuing digit goes outside it. Measured on PoCL
      // (perf/clreorder_ab, caches evicted; NOTES, "B takes the digit continuing A in the source"): 0.43-1.11x
      // the time over 31 plain, blocked, double-blocked, 5-D and weights cases, 0.79x in geometric mean
      // (byxf -> b_fs_yx_fsv16 32x64x56x56 f32 0.74x). Only for source rows of A of a whole line or more:
      // 16- and 8-bit rows took 0.89-1.18x inside and 1.0-1.1x outside. Inside only where next's source
      // stride is at most 2 KiB (the stride an x86 prefetcher follows): 9 KiB apart it took 1.09-1.16x
      // (iyxo -> is_os_yx_isv16_osv16 f32). Not where the row's axis is masked (24 channels in blocks of 16:
      // every other row a tail, 1.16-1.32x). CPU tiles only: not measured on a GPU.
      const int64_t src_bytes = static_cast<int64_t>(unit_bytes(p.src.data_type()));
      const bool whole_lines = tuning_of(p.device) == Tuning::cpu && a.length() * src_bytes >= 64;
      const auto continuing = [&](const PermDigit& d) {
        return d.src_stride == a.length() && free_of(a)(d) && (d.axis < 0 || !tp.perm.axes[static_cast<size_t>(d.axis)].masked());
      };
      if (whole_lines && next.src_stride * src_bytes <= 2048)
        take(grid, b, [&](const PermDigit& d) { return continuing(d) && a.length() * d.extent <= cfg.tile; });
      b.digits.push_back(next);
      if (whole_lines && b.digits.size() == 1 && a.length() * next.extent * 4 <= cfg.tile) take(grid, b, continuing);
    }
  } else {
    // B: the source-dense run (source stride 1, then the digit continuing it, ...), within the budget.
    int64_t blen = 1;
    const auto b_may = free_of(a);
    // In CPU tiles B leaves to A a digit that continues A in the destination where A alone is no multiple of 4
    // and A with it is (os_is_yx_isv16_osv16 -> oiyx: A of 3 x 3 positions, then the 16 input channels of the
    // block, which continue B's 16 output channels in the source): A's rows then vectorise (their source offsets
    // from offset_table()) where the tile was scalar, and tiled ranks before staged. Against staged, the choice
    // before (perf/clreorder_ab, 31 interleaved runs; NOTES, "A of 3 x 3 positions takes the block's input
    // channels"): 0.21-0.73x its time warm and 0.56-1.09x cold over nine pairs out of the isv16_osv16 families
    // (f32, f16, i8; 0.99-1.09x on three f16 pairs cold).
    const bool leave_to_a = tuning_of(p.device) == Tuning::cpu && a.length() % 4 != 0;
    while (blen < cfg.tile / 4 && take(grid, b, [&](const PermDigit& d) {
             return d.src_stride == blen && (blen == 1 || blen * d.extent <= cfg.tile) && b_may(d) &&
                    !(leave_to_a && blen > 1 && d.dst_stride == a.length() && a.length() * d.extent % 4 == 0);
           }))
      blen = b.length();
    // Where A's rows lie far apart in the source (prefetches_rows(): yxfb -> bfyx, whose pixels are 8 KiB apart)
    // and B, the source-dense run, is a short digit that the budget kept from its continuation (8 batches of a
    // pixel: 32 bytes of f32, the pixel's 256 channels too many to join whole), B takes as much of that digit as
    // makes its rows kShortRowBytes: each far row then gives a work-item four whole lines, where it gave half of
    // one, the rest a chunk of the grid later. Measured (perf/clreorder_ab --env, a temporary switch, 21
    // interleaved runs; NOTES, "Far rows read four lines of B"): the 22 plans it changes among 850 pairs (the
    // suite's cases, 36 families in seven type pairs at 0.4-6.4 MB and at streaming sizes, and yxfb into six
    // layouts at 2-16 batches) 0.66x the time cold and 0.65x warm in geometric mean: yxfb -> bfyx f32 8x256x56x56
    // 0.53x / 0.53x, f32 -> f16 0.41x / 0.51x, u8 -> f32 0.39x / 0.39x, i64 4x256x56x56 0.39x / 0.35x, f16
    // 16x256x56x56 0.56x / 0.57x, 32x64x28x28 f32 0.97x / 1.00x; the one loss u8 -> f32 16x128x28x28 (1.14x /
    // 1.09x). 128 bytes gained less (0.67x / 0.64x over 18), 512 more on the biggest but took 1.31-2.38x on
    // bs_fs_yx_bsv32_fsv32 -> bfyx i64.
    if (tuning_of(p.device) == Tuning::cpu && !is_nibble(p.src.data_type()) && prefetches_rows(p, a.digits.front().src_stride)) {
      grow_rows(b, std::find_if(grid.begin(), grid.end(), [&](const PermDigit& d) { return d.src_stride == blen && b_may(d); }), grid,
                static_cast<int64_t>(unit_bytes(p.src.data_type())), kShortRowBytes, cfg.tile);
      blen = b.length();
    }
    // A grows along the destination while it is short, so rows are long enough to vectorise.
    int64_t alen = a.length();
    const auto a_may = free_of(b);
    while (alen < 64 &&
           take(grid, a, [&](const PermDigit& d) { return d.dst_stride == alen && alen * d.extent <= cfg.cap_a && a_may(d); }))
      alen = a.length();
    // Where the digit continuing A is too long to join whole (bs_fs_yx_bsv32_fsv32 i8: 32 channels' bytes,
    // then 32 batches), CPU tiles take as much of it as makes A's rows one 64-byte line, so each column's
    // store is a whole line, not half of one that the next work-item completes. bfyx ->
    // bs_fs_yx_bsv32_fsv32 i8 32x64x56x56 took 0.55-0.57x the time, 32x64x28x28 0.92x, bs_fs_yx_bsv16_fsv32
    // i8 0.62x, bs_fs_yx_bsv32_fsv16 f16 0.69x, f32 -> i8 into bsv32_fsv32 0.68x (perf/clreorder_ab, caches
    // evicted); the other families' A already fills a line or takes the whole digit.
    // Into destinations of 2 bytes or more, rows of four lines (kShortRowBytes): a work-item then reads 4x the
    // rows per column and writes 256 contiguous bytes per store run. Over the 22 plans into 16- to 64-bit
    // elements this changes among 168 pairs of 24 families in seven type pairs (bfyx -> yxfb and
    // bs_fs_yx_bsv16/32_fsv16/32; PoCL on the Xeon host, perf/clreorder_ab --env, 21 interleaved runs, two
    // rounds; NOTES, "Rows of four lines"), 0.89x in geometric mean cold and warm: f32
    // 0.71-1.02x the time cold and warm (yxfb 16x64x28x28 0.74x / 0.71x, bsv32_fsv16 0.81x / 0.82x), f16
    // 0.80-0.93x, u8 -> f16 0.78-1.01x, f16 -> f32 0.73-1.05x, i64 0.95-1.02x, f32 -> f16 0.86-0.96x cold but
    // 0.88-1.15x warm. 8-bit destinations keep one line: four took 0.80-1.22x, mixed between rounds. Rows of
    // 512 bytes (one round) were within 0.05 of these but for i64 (0.78-0.84x) and i8 (1.21-1.42x).
    const int64_t dst_bytes = static_cast<int64_t>(unit_bytes(p.dst.data_type()));
    if (tuning_of(p.device) == Tuning::cpu && !is_nibble(p.dst.data_type()))
      grow_rows(a, std::find_if(grid.begin(), grid.end(), [&](const PermDigit& d) { return d.dst_stride == alen && a_may(d); }), grid,
                dst_bytes, dst_bytes == 1 ? 64 : kShortRowBytes, cfg.cap_a);
  }
  constexpr int64_t kFarRows = 32, kFarBlockRows = 64, kWideFarRows = 16;
  constexpr uint32_t kIntelVendorId = 0x8086;
  // A run of nested blocks (two digits or more, which chunk() leaves whole) longer than `rows`: its outermost
  // digit is cut so the run holds that many, its chunks a grid digit. One-digit runs are chunk()'s.
  auto keep_block_rows = [&](Run& run, int64_t rows) {
    if (run.digits.size() < 2) return;
    PermDigit& outer = run.digits.back();
    const int64_t inner = run.length() / outer.extent, t = rows / inner;
    if (run.length() > rows && rows % inner == 0 && t < outer.extent && outer.extent % t == 0 && !sums_axis(outer.axis))
      grid.push_back(split_outer(outer, t));
  };
  // Where A's rows lie 2 KiB or more apart in the source (prefetches_rows(): bfyx -> byxf, yxfb -> bfyx), each
  // row is a stream of its own, and a tile of 256 rows of 16 positions read more streams than a core's
  // prefetchers follow, each for one line. CPU tiles then read at most kFarRows rows, and B takes a budget of
  // 2048 4-byte elements (256 bytes of each row: 64 f32 positions). A hand-written AVX2 transpose showed the
  // form (perf/clreorder_host_transpose, "strips"): 16 rows at a time ran at 0.92-1.06 of a streaming copy
  // where 256 rows ran at 0.69. Measured with `clreorder bench` (PoCL, workers pinned, old and new alternated
  // seven times, the median ratio to copy; NOTES, "Fewer source streams per tile"): bfyx -> byxf f32
  // 8x256x56x56 1.22x, i8 1.22x, u8 -> f32 1.20x, bfyx -> bs_fs_yx_bsv32_fsv32 i8 1.12x; f16 0.96x, i64 1.01x,
  // yxfb -> bfyx f32 0.94x (1.01x, 1.07x, 1.20x in an earlier round of five: noise). 16 rows, 64 rows or a
  // 4096-element budget were no better. Only where A is longer than that (a blocked format's A is one block
  // already: a longer B alone ran 0.89-1.03x there). Into 8-bit destinations A keeps 64 rows, so each of its
  // destination rows is a whole line: with 32 the rule below put A's other chunk innermost in the grid to
  // complete those lines, and each core read all 64 rows anyway, in two tiles of half lines. `perf/clreorder_ab`
  // (PoCL on AMD Zen 5; NOTES, "Far rows into 8-bit destinations"): 0.64-0.97x the time cold and 0.52-0.99x warm
  // over nine transposes into i8 and u8 (bfyx -> byxf i8, u8 8x64x112x112 0.74x and 0.64x cold; from f16, f32,
  // i32, i64 sources; 5-D), bfyx -> byxf f32 -> i8 8x64x56x56 1.06x cold and 0.89x warm.
  // Otherwise a transpose whose B is cut to its floor (min_b: 16 of a pixel's channels, for example) keeps rows of A
  // of 1 KiB in CPU tiles, as 4-byte elements have them, instead of 256 elements: 8- and 16-bit tiles were
  // a quarter and a half of a 4-byte tile's bytes. Measured on PoCL (perf/clreorder_ab, caches evicted; NOTES,
  // "A's rows in bytes where B is at its floor"): 0.78-0.99x the time over 8- and 16-bit transposes out of
  // byxf, bzyxf, b_fs_yx_fsv16/32 and fs_b_yx_fsv32 (byxf -> bfyx u8 16x64x224x224 0.77x). Not where B is
  // longer than its floor: the longer A would cut B, and bs_fs_yx_bsv32_fsv32 -> bfyx i8 took 1.5-1.6x (B
  // from 32 to 16 of a 32-byte source row). Not for 8-byte elements (128 elements: 0.99-1.05x). Nor where B
  // holds two digits (nested blocks: bs_fs_yx_bsv32_fsv32's 32 x 32), which chunk() never cuts: B keeps its
  // whole length, and the longer A only made tiles of up to 800 KB and grids of 8 work-items (bsv32_fsv32 ->
  // bfyx i8 32x64x56x56, one work-group for two cores). Without it (`clreorder bench`, alternated seven
  // times): that case 1.87x as fast, bs_fs_yx_bsv32_fsv16 -> bfyx f16 1.04x, bs_fs_yx_bsv16_fsv16 -> bfyx f16
  // 0.98x and 1.12x in two rounds.
  // Into 4- and 8-byte destinations such tiles read kWideFarRows rows (a 64-byte line of f32 in each destination
  // row, two of i64) where A is a multiple of them. On the AMD Zen 5 host (32 MiB L3; `perf/clreorder_ab`, old
  // and new interleaved 31 times; NOTES, "16 far rows into 4- and 8-byte destinations") 32 rows took 1.03-2.06x
  // the time of 16 with caches evicted over 38 transposes (1.36x in geometric mean: bfyx -> byxf f32 8x256x56x56
  // 1.56x, i32 1.38x, u8 -> f32 1.13x, i64 1.03-2.06x, f64 1.49x; b_fs_yx_fsv32, fs_b_yx_fsv32, bs_fs_yx_bsv16_fsv16
  // and bsv16/32_fsv32, yxfb, fyxb, 5-D, os_iyx_osv32/64 weights), and 0.82-2.17x with the source in cache (1.15x;
  // under 0.95x on three: bfyx -> bs_fs_yx_bsv32_fsv32 f32 32x64x28x28 0.82x, bsv16_fsv32 0.92x, bfyx -> byxf
  // f16 -> i32 0.87x). 16-bit destinations keep 32 rows (a line already) and 8-bit ones 64: 16 rows into f16 took
  // 1.99x the time (bfyx -> byxf 8x128x56x56), 32 into i8 1.39x; an A of 24 (no multiple) cut to 12 took 1.27x.
  // Not on Intel's CPUs (CL_DEVICE_VENDOR_ID 0x8086), whose L2 streamer follows up to 32 streams, one per 4 KiB
  // page: on the Xeon host (480 MiB L3; NOTES, "Far rows by the CPU's maker") 32 rows, and 64 of nested blocks,
  // took 0.62-0.93x the time of 16 over the 13 transposes of the same families measured, cold and warm (bfyx ->
  // byxf f32 8x256x56x56 0.84x / 0.86x, u8 -> f32 0.73x / 0.62x, bfyx -> bs_fs_yx_bsv16_fsv16 f32 0.76x /
  // 0.71x, bfzyx -> bzyxf f32 0.75x / 0.75x). Other makers' CPUs keep the AMD rule (measured on Zen 5 alone).
  const DataType dst_t = p.dst.data_type();
  const bool wide_dst = !is_nibble(dst_t) && unit_bytes(dst_t) >= 4 && p.device.vendor_id != kIntelVendorId;
  const bool wide_rows = wide_dst && a.length() % kWideFarRows == 0;
  if (!tp.a_src_dense && prefetches_rows(p, a.digits.front().src_stride) && a.length() > (wide_rows ? kWideFarRows : kFarRows)) {
    cfg.cap_a = wide_rows ? kWideFarRows : bits_of(dst_t) == 8 ? 2 * kFarRows : kFarRows;
    cfg.tile = 2048 * 4 / wide_bytes;
    // An A of nested destination blocks (bs_fs_yx_bsv16_fsv16's 16 channels x 16 batches: 256 rows), which
    // chunk() does not cut, keeps 64 of them: its outer digit's chunks go to the grid. Against 256 rows,
    // 32 ran 0.86-1.27x as fast over seven cases and 64 1.02-1.25x over the same seven (`clreorder bench`,
    // alternated five to nine times; NOTES, "Nested destination blocks read 64 rows"): bfyx ->
    // bs_fs_yx_bsv16_fsv16 f32 32x64x56x56 1.25x, f16 1.17x, 16x64x80x80 f16 1.11x, u8 -> f16 1.09x. Into 4- and
    // 8-byte destinations kWideFarRows of them (a 16-channel block; among the 38 cases above: bfyx ->
    // bs_fs_yx_bsv16_fsv16 f32 32x64x56x56 1.55x as fast cold, 1.52x warm, i64 1.71x, f64 1.83x, 5-D f32 1.60x);
    // 32 of them into f16 ran 1.27-1.4x as fast cold but took 1.25-1.62x the time warm: not there.
    keep_block_rows(a, wide_dst ? kWideFarRows : kFarBlockRows);
  } else if (!tp.a_src_dense && tuning_of(p.device) == Tuning::cpu && b.digits.size() == 1 &&
             tile_size(b.length(), std::max<int64_t>(cfg.min_b, cfg.tile / tile_size(a.length(), cfg.cap_a))) <= cfg.min_b) {
    cfg.cap_a = std::max<int64_t>(cfg.cap_a, cfg.cap_a * 4 / wide_bytes);
  }
  // A transpose streams only in steps unrolled along A to a whole destination line per column
  // (transpose_loops()), so a streaming CPU tile's chunk of a one-digit A is a multiple of a line's elements
  // where one divides |A| (within 4x of tile_size()'s pick): `b_fs_yx_fsv16 -> bfyx` i8 16x256x56x56 took 784 of
  // 3136 positions, no multiple of 64, and fell back to plain stores; 448 streams. Measured (perf/clreorder_ab
  // --env, a temporary switch, 21 interleaved runs, cold twice and warm; NOTES, "Streamed tiles of whole lines"):
  // the 6 plans it changes among 253 pairs at streaming sizes (8-bit transposes into bfyx from b_fs_yx_fsv16/32,
  // fs_b_yx_fsv32, byxf, bs_fs_yx_bsv16_fsv16 and bsv32_fsv32) 0.40-0.80x the time, with a copy of the
  // destination after them 0.88-0.91x.
  int64_t a_tile = tile_size(a.length(), cfg.cap_a);
  if (tuning_of(p.device) == Tuning::cpu && !tp.a_src_dense && a.digits.size() == 1 && !is_nibble(p.dst.data_type()) &&
      stream_pays(p.src, p.dst, p.device)) {
    const int64_t line = 64 / static_cast<int64_t>(unit_bytes(p.dst.data_type())), most = std::min(cfg.cap_a, a.length());
    const int64_t whole = a.length() % line == 0 && most >= line ? line * divisor_at_most(a.length() / line, most / line) : 0;
    if (a_tile % line != 0 && whole * 4 >= a_tile) a_tile = whole;
  }
  chunk(a, a_tile, grid);
  chunk(b, tile_size(b.length(), std::max<int64_t>(cfg.min_b, cfg.tile / a.length())), grid);
  // A B of nested source blocks (bs_fs_yx_bsv16_fsv16 -> bfyx: 16 channels x 16 batches, 256 destination rows
  // each a plane apart), which chunk() does not cut either, keeps 64 of them in CPU tiles for 8- and 16-bit
  // destinations: its outer digit's chunks go to the grid, innermost (pushed last), so the next work-item reads
  // on along the same source rows. `clreorder bench`, alternated five times (NOTES, "Nested source blocks
  // write 64 rows"): 0.96-1.28x as fast over eight 8- and 16-bit cases (bsv32_fsv32 i8 1.13x, bsv16_fsv16 f16
  // 1.28x, bsv32_fsv16 f16 1.25x, u8 -> f16 1.12x), 32 or 128 rows no better; f32 0.94-0.98x over three: not
  // there.
  if (!tp.a_src_dense && tuning_of(p.device) == Tuning::cpu && unit_bytes(p.dst.data_type()) < 4 && !is_nibble(p.dst.data_type()) &&
      !is_nibble(p.src.data_type()))
    keep_block_rows(b, kFarBlockRows);
  // A row run's B of two digits (above): its outer one is cut to what the budget leaves.
  if (tp.a_src_dense && b.digits.size() == 2) {
    const int64_t t = tile_size(b.digits[1].extent, std::max<int64_t>(1, cfg.tile / b.digits[0].extent / a.length()));
    if (t < b.digits[1].extent) grid.push_back(split_outer(b.digits[1], t));
  }
  // Rows of A shorter than a cache line: consecutive work-items fill the rest of their lines (the grid digit
  // continuing A in the destination goes innermost) instead of leaving them part-written until a later
  // chunk comes back to them. bfyx -> bs_fs_yx_bsv32_fsv32 i8 (32-byte rows, the batch block next): 0.71 of
  // the former time, bs_fs_yx_bsv32_fsv16 f16: 0.60 (perf/clreorder_ab, caches evicted); with rows of 64
  // bytes and more the chunk of B stays innermost (f32 bs_fs_yx_bsv32_fsv32 took 1.12x longer the other way).
  const auto next = std::find_if(grid.begin(), grid.end(), [&](const PermDigit& d) { return d.dst_stride == a.length(); });
  if (a.length() * static_cast<int64_t>(unit_bytes(p.dst.data_type())) < 64 && next != grid.end())
    std::rotate(next, next + 1, grid.end());
  // A u4 or i4 destination is converted as vectors of 8-bit values and packed into V / 2 bytes per column
  // (transpose_loops()) or row (row_loops(), rows without a tail), with padding stored as zero and no sums;
  // a u4 or i4 source is loaded as V / 2 bytes unpacked to 8-bit lanes where every vector starts on a
  // byte (even strides and base outside the vector's run, which starts at a multiple of V), in rows without
  // a tail. Otherwise 4-bit types go through the scalar loops: their vectors would address half bytes.
  const bool nib_dst = is_nibble(p.dst.data_type()), nib_src = is_nibble(p.src.data_type());
  auto whole_bytes = [&](const Run& run) {
    std::vector<PermDigit> outside = grid;
    outside.insert(outside.end(), run.digits.begin(), run.digits.end());
    return !nib_src || strides_multiple_of(tp.perm, outside, 2, &PermDigit::src_stride);
  };
  const bool tail = prefix_row(a, tp.perm, p.conversion.padding) != nullptr;
  if (nib_dst && (p.conversion.padding != Padding::zero || p.conversion.compensation.present()))
    tp.vec = 1;
  else if (!tp.a_src_dense && !b.digits.empty() && whole_bytes(a) &&
           (tp.vec = vector_width(a, b, tp.perm, static_cast<int64_t>(unit_bytes(p.dst.data_type())), nib_src,
                                  nib_dst || nib_src || p.conversion.compensation.present() ? nullptr : &tp.b_main, &tp.b_lo)) > 1) {
    tp.form = TiledPlan::Form::transpose;
    if (tp.b_main == 0) tp.b_main = b.length();  // V divides |B|: the transposes take all of it
  } else if (tp.a_src_dense && !((nib_dst || nib_src) && tail) && whole_bytes(b) &&
           (tp.vec = row_width(a, tp.perm, p.conversion.padding)) > 1)
    tp.form = TiledPlan::Form::rows;
  else
    tp.vec = 1;
  // Scalar loops whose rows of A fill whole destination lines (64 bytes or more) but whose source rows (B) are
  // under a line (oiyx -> i_yxs_os_yxsv2_osv16 f32: 16 output channels' rows of 9 floats) read each source line
  // partly; the grid digit nearest in the source (the input channel, 9 floats on) goes innermost in CPU tiles,
  // so consecutive work-items read on along the same rows and use the rest of their lines. Measured with tiled
  // forced (perf/clreorder_ab, caches evicted; NOTES, "Scalar loops: the grid digit nearest in the source
  // innermost"): 0.58-1.05x the time over the 20 scalar plans it changes among every registered format from
  // its plain twin in f32, f16 and i8 (0.73-0.82x on i_yxs_os_yxsv2_osv16 f32 256x256x3x3, where tiled is
  // chosen); where A is dense in both (oiyx -> ioyx: 36-byte rows on both sides) it took 1.28-1.32x: not there.
  // Transposes with a scalar tail of B (vector_width()) read such rows too: i_yxs_os_yxsv2_osv16 f32 with the
  // output-channel block innermost took 1.05-1.09x the time at 128 and 256 channels, 0.96x at 32 (8 groups).
  if ((tp.vec == 1 || tp.b_main < b.length()) && !tp.a_src_dense && tuning_of(p.device) == Tuning::cpu && !grid.empty() &&
      a.length() * static_cast<int64_t>(unit_bytes(p.dst.data_type())) >= 64 &&
      b.length() * static_cast<int64_t>(unit_bytes(p.src.data_type())) < 64) {
    auto nearest = std::min_element(grid.begin(), grid.end(), [](const PermDigit& x, const PermDigit& y) { return x.src_stride < y.src_stride; });
    std::rotate(nearest, nearest + 1, grid.end());
  }
  tp.sums = tile_sums(p.conversion.compensation, a, b);
  return tp;
}

// The permutation with its source-dense digit (source stride 1, not the destination's) iterated to the
// nearest multiple of 16, 8 or 4 that overshoots it by an eighth at most, or null. A destination padded
// along the source's rows makes them odd (56 + 1 of lower padding = 57 slots), no vector width divides them,
// and the transposes fall back to scalar loops (bfyx -> b_fs_yx_fsv16 f16 8x64x56x56 padded by one before y
// and x: 0.25 of copy, 0.87 unpadded). The overshoot is an iteration past the destination's row, the way a
// blocked tail's already is: its reads are masked (read_hi), its stores skipped (check_write). Only for a
// row that is the whole of its axis, with no per-index parameters or sums along it. The overshoot lengthens
// the offsets computed (never used) by an eighth of that digit's part at most, inside the factor of two that
// needs_64bit() leaves.
std::optional<Permutation> rounded_source_row(const ReorderParams& p, const Permutation& perm) {
  if (p.conversion.compensation.present()) return std::nullopt;
  const auto row = std::find_if(perm.digits.begin(), perm.digits.end(), [](const PermDigit& d) { return d.src_stride == 1; });
  if (row == perm.digits.end() || row->dst_stride == 1 || row->axis < 0) return std::nullopt;
  const PermAxis& ax = perm.axes[static_cast<size_t>(row->axis)];
  const bool alone = std::count_if(perm.digits.begin(), perm.digits.end(), [&](const PermDigit& d) { return d.axis == row->axis; }) == 1;
  if (!alone || row->weight != 1 || ax.tracked || !ax.folds.empty() || row->extent % 4 == 0 || ax.span != row->extent) return std::nullopt;
  for (int64_t m : {16, 8, 4}) {
    const int64_t up = (row->extent + m - 1) / m * m;
    if ((up - row->extent) * 8 > row->extent) continue;
    Permutation rounded = perm;
    PermDigit& d = rounded.digits[static_cast<size_t>(row - perm.digits.begin())];
    PermAxis& a = rounded.axes[static_cast<size_t>(row->axis)];
    d.extent = up;
    a.span = up;
    a.check_high = a.check_high || up > a.lower + a.dim;
    a.check_write = a.check_write || up > a.limit;
    return rounded;
  }
  return std::nullopt;
}

// The plan on the reorder's permutation, or, where that leaves the tile scalar or part scalar (a tail of B), on
// its rounded source rows when they give vector transposes over the whole of B.
TiledPlan make_plan(const ReorderParams& p) {
  TiledPlan tp = plan_on(p, make_permutation(p.src, p.dst, indexed_axes(p.conversion)));
  auto whole = [](const TiledPlan& t) { return t.form == TiledPlan::Form::transpose && t.b_main == t.b.length(); };
  if (tp.form == TiledPlan::Form::rows || whole(tp) || tp.b_lo > 0) return tp;
  std::optional<Permutation> rounded = rounded_source_row(p, tp.perm);
  if (!rounded) return tp;
  TiledPlan wide = plan_on(p, std::move(*rounded));
  return whole(wide) ? wide : tp;
}

// A u4 or i4 destination is written a byte (the elements at ia and ia + 1) at a time, so no byte may hold
// elements of two work-items. It holds when every run A starts at an even offset (even destination strides
// and base outside it): an element of another run in this run's last byte would be at an odd offset, and
// so would have its own run's element before it there, which is this run's. An odd run's last byte keeps
// its other nibble (a gap's, or past the end). "" when it holds (or the destination is wider).
std::string nibble_pairs(const ReorderParams& p, const TiledPlan& tp) {
  if (!is_nibble(p.dst.data_type())) return "";
  std::vector<PermDigit> outside = tp.grid;
  outside.insert(outside.end(), tp.b.digits.begin(), tp.b.digits.end());
  if (strides_multiple_of(tp.perm, outside, 2, &PermDigit::dst_stride)) return "";
  return "the " + std::string(to_string(p.dst.data_type())) + " destination's runs of " + num(tp.a.length()) +
         " along it would not start on whole bytes (odd strides or base outside them): two work-items would write one byte";
}

class TiledReorder : public ReorderImpl {
 public:
  const char* name() const override { return "tiled"; }

  std::string reject(const ReorderParams& p) const override {
    const Permutation perm = make_permutation(p.src, p.dst, indexed_axes(p.conversion));
    if (!perm.reject.empty()) return perm.reject;
    if (std::string why = reject_conversion(p, perm, Nibbles::both, true); !why.empty()) return why;
    // Planned once, and only where a plan decides (4-bit destinations, compensation sums).
    const TiledPlan tp = is_nibble(p.dst.data_type()) || p.conversion.compensation.present() ? make_plan(p) : TiledPlan{};
    if (std::string why = nibble_pairs(p, tp); !why.empty()) return why;
    // A's index is the destination offset itself (vector stores, ia + offsets): a destination whose finest
    // stride is not 1 (a view of every other element) has no such run, and its gaps must not be written.
    if (perm.digits.back().dst_stride != 1)
      return "the destination's finest stride is " + num(perm.digits.back().dst_stride) + ", not a dense run";
    return tp.sums.reject;
  }

  // Its transposes of vectors narrower than 16 bytes (a destination block of 4 bytes: b_fs_yx_fsv4 i8) took
  // about twice staged's time there (bfyx -> b_fs_yx_fsv4 8x64x112x112 i8 0.49, from f32 0.55; PoCL,
  // clreorder bench --impl): staged, where it accepts, runs first. At 16 bytes and wider neither led across
  // types and families (8- and 16-bit transposes: staged/tiled 0.50-1.95, geometric mean 0.99; 32- and
  // 64-bit: tiled faster in every case measured), so tiled keeps its place.
  Rank rank(const ReorderParams& p) const override {
    const TiledPlan tp = make_plan(p);
    const int64_t bytes = tp.vec * static_cast<int64_t>(unit_bytes(p.dst.data_type()));
    if (tp.form == TiledPlan::Form::transpose && bytes < 16 && !is_nibble(p.dst.data_type()))
      return {kRankTiledSlower, "its " + num(tp.vec) + " x " + num(tp.vec) + " transposes move " + num(bytes) +
                                       "-byte vectors: staged took 0.49-0.55 of its time there"};
    // CPU transposes whose columns or rows read offset tables (takes_offset_table(): oiyx into the isv16_osv16
    // weights, and back) against staged's element-wise tiles (perf/clreorder_ab, 25-51 interleaved runs; NOTES,
    // "Offset tables for B's columns" and "A of 3 x 3 positions ..."): 0.51-0.73x staged's time with the source
    // in cache over nine f32 and f16 cases, and 0.73-0.94x with caches evicted where tiled's grid holds 32
    // work-items or more; grids of 8 and 16 (64 x 64 x 7 x 7: tiles of 784 columns) took 1.13-1.34x, so those
    // stay with staged. Over the 18 pairs it moves into the isv16_osv16 families (f32, f16, i8; f32 into i8 and f16) staged took 0.94-1.40x
    // tiled's time cold and 0.93-1.96x warm, over the nine back to plain 0.92-1.77x and 1.37-4.83x.
    if (tuning_of(p.device) == Tuning::cpu && tp.form == TiledPlan::Form::transpose && extent_product(tp.grid) >= 32 &&
        (takes_offset_table(tp.b, &PermDigit::dst_stride) || takes_offset_table(tp.a, &PermDigit::src_stride)))
      return {kRankTiledFirst, "its transposes read offset tables, where staged moves one element at a time: staged took 1.4-4.8x its time "
                               "with the source in cache on 26 of 27 pairs"};
    return {kRankTiled, ""};
  }

  KernelData generate(const ReorderParams& p) const override {
    const TiledPlan tp = make_plan(p);
    const Permutation& perm = tp.perm;
    const Run &a = tp.a, &b = tp.b;
    const std::vector<PermDigit>& grid = tp.grid;
    const int64_t grid_count = extent_product(grid);

    std::vector<std::string> lines = grid_decode(perm, grid, [&](int ax) { return a.has_axis(ax) || b.has_axis(ax); }, p.conversion.padding);

    const int vec = tp.vec;
    std::vector<std::string> body;
    std::string tables;  // more program-scope tables than the parameters' (row_loops()'s byte table, offset_table()'s)
    // Vector stores start at ia (a multiple of the width) plus grid and B offsets. Vector loads start at ib
    // plus grid and A offsets (transposes), or at ia plus grid and B offsets (rows).
    auto with = [&](const Run& run) {
      std::vector<PermDigit> digits = grid;
      digits.insert(digits.end(), run.digits.begin(), run.digits.end());
      return digits;
    };
    const std::vector<PermDigit> outside = with(b);
    const bool streams = stream_pays(p.src, p.dst, p.device);
    // Transposes stream whole 64-byte lines only (transpose_loops()): their stores outside A start on one.
    auto align = [&](int64_t width) {
      return StoreAlign{strides_multiple_of(perm, outside, pack_of(p.dst.data_type()), &PermDigit::dst_stride),
                        streams && strides_multiple_of(perm, outside, width, &PermDigit::dst_stride), unaligned_vectors(p.device)};
    };
    const int64_t line = std::max<int64_t>(vec, 64 / static_cast<int64_t>(unit_bytes(p.dst.data_type())));
    const int64_t src_pack = is_nibble(p.src.data_type()) ? 8 : pack_of(p.src.data_type());
    // Packed u4 and i4 bytes go as uints where every store starts at a multiple of 8 nibbles.
    const StoreAlign nibble_align{strides_multiple_of(perm, outside, 8, &PermDigit::dst_stride), false, unaligned_vectors(p.device)};
    if (tp.form == TiledPlan::Form::transpose) {
      // Stores keep their alignment from any first column (B's strides are in `outside`); loads, whose offsets
      // count ib in elements from a multiple of V, keep their packing only from a column that is a multiple of it.
      const bool packable = strides_multiple_of(perm, with(a), src_pack, &PermDigit::src_stride) && tp.b_lo % src_pack == 0;
      // Whether A's source rows are B and the innermost grid digit, all of them and all real (byxf -> bfyx: a
      // pixel's channels, a chunk of B per work-item): the next work-items read the rest of this tile's rows.
      const bool rows_split = !grid.empty() && !a.digits.empty() && !perm.masked(grid.back()) &&
                              grid.back().src_stride == b.length() && a.digits.front().src_stride == b.length() * grid.back().extent;
      body = transpose_loops(p, perm, a, b, vec, packable, align(line), nibble_align, tp.sums, tp.b_lo, tp.b_lo + tp.b_main,
                             rows_split, &tables);
      for (const auto& [from, to] : {std::make_pair(int64_t{0}, tp.b_lo), std::make_pair(tp.b_lo + tp.b_main, b.length())}) {
        if (from >= to) continue;
        const std::vector<std::string> rest = scalar_loops(p, perm, a, b, !tp.a_src_dense, tp.sums, from, to);
        body.insert(body.end(), rest.begin(), rest.end());
      }
    } else if (tp.form == TiledPlan::Form::rows)
      body = row_loops(p, perm, a, b, vec, strides_multiple_of(perm, outside, src_pack, &PermDigit::src_stride), align(vec), nibble_align, tp.sums,
                       &tables);
    else
      body = scalar_loops(p, perm, a, b, !tp.a_src_dense, tp.sums);
    const std::vector<std::string> begin = begin_sums(tp.sums, vec), end = end_sums(p, perm, tp.sums, a, b, vec);
    body.insert(body.begin(), begin.begin(), begin.end());
    body.insert(body.end(), end.begin(), end.end());
    KernelData kd;
    kd.impl = name();
    kd.streams = std::any_of(body.begin(), body.end(),
                             [](const std::string& line) { return line.find("CR_STREAM_STORE(") != std::string::npos; });
    Jit jit = reorder_jit(p, "reorder_tiled", kd, nullptr, padded_shapes(perm));
    if (!tables.empty()) {
      const std::string params = value_tables(p.conversion, padded_shapes(perm));
      jit.set("CR_VALUE_TABLES", params.empty() ? tables : macro_lines({params, tables}));
    }
    // CPU tiles whose grid holds padding or tails (g_ok not a constant) take the tile twice, once for each value
    // of g_ok (reorder_tiled.cl): its test before every row's load went. Measured (perf/clreorder_ab, 40
    // interleaved runs, 12 destinations padded in y and x; NOTES): bfyx -> byxf i8 0.71x the time cold, 0.59x
    // warm, f32 0.94x and 0.77x, byxf -> bfyx f16 0.80x and 0.79x, blocked destinations 0.95-1.01x.
    const bool grid_tests = lines.back() != "const bool g_ok = true;";
    jit.def("GRID_COUNT", grid_count).def("GRID_DECODE(w)", macro_lines(lines)).def("TILE_LOOPS", macro_lines(body));
    jit.def("CR_GRID_SPLIT", grid_tests && tuning_of(p.device) == Tuning::cpu ? 1 : 0);
    if (vec > 1 && !p.conversion.per_index()) jit.def("CONVERT_V(v)", convert_expr(p, "v", vec));
    finish_kernel(kd, jit, "reorder_tiled.cl", static_cast<size_t>(grid_count), config_for(p).local, p.device);
    return kd;
  }
};

}  // namespace

std::unique_ptr<ReorderImpl> make_tiled_impl() { return std::make_unique<TiledReorder>(); }

}  // namespace clreorder
