// The `lanes` implementation: reorders into formats that pack 8- or 16-bit elements into 4-byte words whose
// elements are strided in the source, the int8 weights formats above all (os_is_yx_osv16_isv4,
// os_is_yx_osa4_isa8_osv8_isv4, ...): each destination word holds 4 input channels, which sit 9 bytes apart
// in oiyx for a 3 x 3 kernel, and consecutive words come from consecutive output channels. Two stages, both
// in registers:
//  1. for each row (a value of the digit just outside the word), one shuffle of at most two vector loads
//     gathers up to 4 of the row's words in destination order (a T vector);
//  2. the rows' T vectors, as uint lanes, are transposed in 4 x 4 blocks by transpose_network() (2 x 2
//     blocks by hand); each result is one 16-byte store of 4 rows' words.
// staged moves the same words element by element, each store drawing from up to 8 registers.
#include <algorithm>
#include <utility>

#include "clreorder/kernel_selector.hpp"
#include "codegen.hpp"
#include "embedded.hpp"
#include "impls.hpp"
#include "permute.hpp"

namespace clreorder {

namespace {

constexpr int64_t kWindow = 16;  // elements of the widest vector load
constexpr int64_t kMaxRows = 8;
constexpr int64_t kMaxWordsPerRow = 16;

struct LanesConfig {
  int64_t work_item_bytes;
  size_t local;
};

// As staged: a work-item walks a few KiB on CPUs, one tile on GPUs.
LanesConfig config_for(const DeviceInfo& dev) {
  if (tuning_of(dev) == Tuning::cpu) return {4096, 8};
  return {256, 64};
}

struct LanesPlan {
  std::string reject;
  std::string slower;    // why staged or tiled is preferred here (measured), else ""
  Permutation perm;
  int64_t g = 1;         // elements per word
  PermDigit unit{};      // destination stride 1, extent g
  PermDigit rows{};      // destination stride g, extent 2, 4 or 8
  PermDigit word{};      // which word of a row: the digit with the smallest source stride left
  int64_t per_t = 1;     // words per T vector (4, 2 or 1)
  PermDigit loop{};      // walked by each work-item (extent 1: none)
  std::vector<PermDigit> grid;
};

// Source elements spanned by `n` consecutive words of one row.
int64_t span_of(const LanesPlan& lp, int64_t n) {
  return (n - 1) * lp.word.src_stride + (lp.g - 1) * lp.unit.src_stride + 1;
}

LanesPlan make_plan(const ReorderParams& p) {
  LanesPlan lp;
  auto fail = [&lp](const std::string& why) {
    lp.reject = why;
    return lp;
  };
  lp.perm = make_permutation(p.src, p.dst, indexed_axes(p.conversion));
  if (!lp.perm.reject.empty()) return fail(lp.perm.reject);
  if (std::string why = reject_conversion(p, lp.perm); !why.empty()) return fail(why);
  const int64_t esize = size_of(p.dst.data_type());
  if (esize >= 4) return fail("destination elements of 4 bytes or more are words already");
  const Permutation& perm = lp.perm;
  lp.g = 4 / esize;
  std::vector<PermDigit> pool = perm.digits;
  const PermDigit inner = pool.back();
  if (inner.dst_stride != 1 || inner.extent % lp.g != 0 || perm.masked(inner))
    return fail("the destination's inner run of " + num(inner.extent) + " elements is not whole words without tails or padding");
  if (inner.src_stride == 1 && lp.slower.empty())
    lp.slower = "the destination's words are contiguous in the source: staged and tiled move them whole";
  lp.unit = take_inner(pool, pool.size() - 1, lp.g);
  auto next = std::find_if(pool.begin(), pool.end(), [&](const PermDigit& d) { return d.dst_stride == lp.g; });
  if (next == pool.end() || perm.masked(*next)) return fail("no digit without tails or padding continues the destination's words");
  int64_t rows = kMaxRows;
  while (next->extent % rows != 0) rows /= 2;
  if (rows < 2) return fail("the destination's words come in runs of " + num(next->extent) + ", an odd number");
  lp.rows = take_inner(pool, static_cast<size_t>(next - pool.begin()), rows);
  size_t pick = pool.size();
  for (size_t k = 0; k < pool.size(); ++k)
    if (!perm.masked(pool[k]) && (pick == pool.size() || pool[k].src_stride < pool[pick].src_stride)) pick = k;
  if (pick == pool.size()) return fail("every digit left has tails or padding");
  lp.word = take_inner(pool, pick, divisor_at_most(pool[pick].extent, kMaxWordsPerRow));
  // Two loads of kWindow elements must cover a T vector; a 4 x 4 block transpose needs 4 rows.
  for (lp.per_t = std::min<int64_t>(4, rows); lp.per_t > 1 && span_of(lp, lp.per_t) > 2 * kWindow;) lp.per_t /= 2;
  lp.per_t = std::min(lp.per_t, lp.word.extent >= 4 ? int64_t{4} : lp.word.extent >= 2 ? int64_t{2} : int64_t{1});
  if (span_of(lp, 1) > 2 * kWindow)
    return fail("a word's elements are " + num(lp.unit.src_stride) + " source elements apart: more than two vector loads");
  // The work-item loop continues the destination past the rows where it can.
  const int64_t dst_run = lp.g * lp.rows.extent;
  lp.loop = take_loop(perm, pool, config_for(p.device).work_item_bytes / (lp.rows.extent * lp.word.extent * 4),
                      [&](const PermDigit& d) { return d.dst_stride == dst_run; });
  lp.grid = pool;
  return lp;
}

// Loads (start, width) covering source positions [0, span) of a T vector, reading at most `slack`
// elements past it (the rest of the row's words are there). One load when a power of two fits; else two
// of width w (w < span <= 2w), the second starting on a multiple of `pack` where the slack allows, so it
// can go as uints.
std::vector<std::pair<int64_t, int64_t>> windows(int64_t span, int64_t slack, int64_t pack) {
  for (int64_t w = 2; w <= kWindow; w *= 2)
    if (w >= span && w <= span + slack) return {{0, w}};
  int64_t w = 2;
  while (2 * w < span) w *= 2;
  int64_t second = (span - w + pack - 1) / pack * pack;
  if (second > w || second + w > span + slack) second = span - w;
  return {{0, w}, {second, w}};
}

std::string uint_type(int64_t n) { return n == 1 ? "uint" : "uint" + num(n); }

class LanesReorder : public ReorderImpl {
 public:
  const char* name() const override { return "lanes"; }

  std::string reject(const ReorderParams& p) const override { return make_plan(p).reject; }

  Rank rank(const ReorderParams& p) const override {
    const LanesPlan lp = make_plan(p);
    return lp.slower.empty() ? Rank{kRankLanes, ""} : Rank{kRankLanesSlower, lp.slower};
  }

  KernelData generate(const ReorderParams& p) const override {
    const LanesPlan lp = make_plan(p);
    const DataType st = p.src.data_type(), dtype = p.dst.data_type();
    const std::string dt = cl_type(dtype);
    const int64_t g = lp.g, rows = lp.rows.extent, group = std::min<int64_t>(4, rows), words = lp.word.extent;
    std::vector<PermDigit> outside = lp.grid;
    outside.push_back(lp.loop);
    std::vector<PermDigit> row_bases = outside;
    row_bases.push_back(lp.rows);
    std::vector<PermDigit> store_bases = outside;
    store_bases.push_back(lp.word);
    const int64_t spack = pack_of(st);
    const bool src_packable = strides_multiple_of(lp.perm, row_bases, spack, &PermDigit::src_stride);
    const bool dst_packable = strides_multiple_of(lp.perm, store_bases, pack_of(dtype), &PermDigit::dst_stride);
    // Loads and stores take CPU tunings' unaligned form (CR_LOADU / CR_STOREU): in the guarded one, the body
    // for a base off the word moved 8- and 16-bit vectors element by element, and PoCL's compile of an int8
    // weights kernel took 5-10x as long. A stored value is uint lanes, which LLVM 14 (Oclgrind's compiler) turns
    // into uint stores claiming 4-byte alignment, wrong at a 16-bit element's odd offset (common.cl,
    // CR_UNALIGNED_VECTORS): or-ed with a zero it cannot prove (cr_opaque_zero: dst_base is below 2^63), it
    // stays one store of the element type.
    const bool unaligned = unaligned_vectors(p.device);

    std::vector<std::string> body;
    if (unaligned) body.push_back("const " + dt + " cr_opaque_zero = (" + dt + ")(dst_base >> 63);");
    std::vector<int64_t> widths;
    // The elements are picked raw and converted in word order, where lane (k, j) is word k0 + k, unit j:
    // per-index parameters need each element's coordinate, which the overlapping loads do not have, and
    // converting the loads whole converted each element up to four times (two loads of 16 for 8 picked:
    // b_fs_yx_fsv16 -> bfyx f16 -> bf16 took 1.6x the time so, and lanes ranked after staged and tiled for
    // conversions between element sizes; converted once it ran at 0.70-0.89x staged's time on f32, f16 and
    // i32 to i8 and u8 weights and blocks, perf/clreorder_ab).
    const bool per_index = p.conversion.per_index();
    auto lane_coord = [&](int axis, int64_t r, int64_t word, int64_t unit) {
      std::string v = "v" + num(axis);
      if (lp.loop.axis == axis) v = "(" + v + " + it * " + num(lp.loop.weight) + ")";
      int64_t part = 0;
      for (const auto& [d, i] : {std::make_pair(&lp.word, word), std::make_pair(&lp.unit, unit), std::make_pair(&lp.rows, r)})
        if (d->axis == axis) part += i * d->weight;
      return padded_coord(lp.perm, axis, v, part);
    };
    // Rows pages apart get prefetch hints (prefetches_rows()), one per row before its first load: the loop walks
    // along the rows (os_is_yx_osa4_isa8_osv8_isv4 from oiyx i8: 32 output channels' rows 2304 bytes apart).
    const bool prefetch = rows > 1 && prefetches_rows(p, lp.rows.src_stride);
    for (int64_t k0 = 0; k0 < words;) {
      int64_t n = lp.per_t;
      while (n > words - k0) n /= 2;
      const std::string c = num(k0);
      // Stage 1: each row's n words, in destination order, from at most two loads.
      const int64_t span = span_of(lp, n);
      const int64_t slack = (words - 1 - k0) * lp.word.src_stride + (g - 1) * lp.unit.src_stride + 1 - span;
      const auto loads = windows(span, slack, spack);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t base = k0 * lp.word.src_stride + r * lp.rows.src_stride;
        std::vector<std::string> vars;
        if (prefetch && k0 == 0) body.push_back(prefetch_stmt(p, "so + " + num(base), {"g_ok"}));
        for (size_t a = 0; a < loads.size(); ++a) {
          const auto [start, w] = loads[a];
          const std::string var = "x" + c + "_" + num(r) + "_" + num(static_cast<int64_t>(a));
          const std::string type = cl_type(st) + num(w);
          const std::string raw = vload_expr(st, static_cast<int>(w), "src + so + " + num(base + start),
                                             src_packable && (base + start) % spack == 0, unaligned);
          body.push_back("const " + type + " " + var + " = g_ok ? " + raw + " : (" + type + ")0;");
          vars.push_back(var);
        }
        std::string picks;
        for (int64_t k = 0; k < n; ++k)
          for (int64_t j = 0; j < g; ++j) {
            const int64_t pos = k * lp.word.src_stride + j * lp.unit.src_stride;
            const size_t a = pos < loads[0].first + loads[0].second ? 0 : 1;
            picks += std::string(picks.empty() ? "" : ", ") + component(vars[a], loads[a].second, pos - loads[a].first);
          }
        std::string picked = "(" + cl_type(st) + num(n * g) + ")(" + picks + ")";
        const std::string converted =
            per_index ? convert_expr(p, picked, static_cast<int>(n * g),
                                     [&](int axis, int lane) { return lane_coord(axis, r, k0 + lane / g, lane % g); })
                      : "CONVERT_V" + num(n * g) + "(" + picked + ")";
        picked = "(g_ok ? " + converted + " : (" + dt + num(n * g) + ")0)";  // padding tiles stay zero
        if (!per_index && std::find(widths.begin(), widths.end(), n * g) == widths.end()) widths.push_back(n * g);
        body.push_back("const " + uint_type(n) + " t" + c + "_" + num(r) + " = as_" + uint_type(n) + "(" + picked + ");");
      }
      // Stage 2: per group of 4 rows, word k of each row side by side, then one store per k.
      for (int64_t s = 0; s < rows / group; ++s) {
        auto t = [&](int64_t r) { return "t" + c + "_" + num(s * group + r); };
        const std::string q = "q" + c + "_" + num(s) + "_";
        std::vector<std::string> out(static_cast<size_t>(n));
        if (n == 4) {
          // 4 x 4: tiled's transpose network, on uint lanes.
          const TransposeNet net = transpose_network("uint", 4, {t(0), t(1), t(2), t(3)}, q);
          body.insert(body.end(), net.lines.begin(), net.lines.end());
          out = net.columns;
        } else {
          // Word k of each row side by side (2 x 2 blocks, or single words), listed word by word: a literal of
          // sub-vectors is the same shuffle for LLVM, and one that Oclgrind's -O0 checks cannot run.
          for (int64_t k = 0; k < n; ++k) {
            std::string v;
            for (int64_t r = 0; r < group; ++r) v += std::string(r ? ", " : "") + component(t(r), n, k);
            out[static_cast<size_t>(k)] = "(uint" + num(group) + ")(" + v + ")";
          }
        }
        for (int64_t k = 0; k < n; ++k) {
          std::string value = "as_" + dt + num(group * g) + "(" + out[static_cast<size_t>(k)] + ")";
          if (unaligned) value = "(" + value + " | cr_opaque_zero)";
          const std::string ptr = "dst + do_ + " + num((k0 + k) * lp.word.dst_stride + s * group * g);
          body.push_back(vstore_stmt(dtype, static_cast<int>(group * g), value, ptr, StoreAlign{dst_packable, false, unaligned}));
        }
      }
      k0 += n;
    }

    const int64_t grid_count = extent_product(lp.grid);
    KernelData kd;
    kd.impl = name();
    Jit jit = reorder_jit(p, "reorder_lanes", kd, nullptr, padded_shapes(lp.perm));
    const std::string tile = macro_lines(walk_tiles(lp.loop, body));
    // The body is written twice only where it tests the base's alignment (reorder_lanes.cl, GPU tunings): with
    // no access guarded a second copy would only add to the compile.
    const bool tests_alignment =
        tile.find("src_wide") != std::string::npos || tile.find("dst_wide") != std::string::npos;
    jit.def("GRID_COUNT", grid_count)
        .def("GRID_DECODE(w)", macro_lines(grid_decode(lp.perm, lp.grid, [](int) { return false; }, p.conversion.padding)))
        .def("TILE_BODY", tile)
        .def("CR_ALIGNMENT_SPLIT", tests_alignment ? 1 : 0);
    if (!per_index)
      for (int64_t w : widths) jit.def("CONVERT_V" + num(w) + "(v)", convert_expr(p, "v", static_cast<int>(w)));
    finish_kernel(kd, jit, "reorder_lanes.cl", static_cast<size_t>(grid_count), config_for(p.device).local, p.device);
    return kd;
  }
};

}  // namespace

std::unique_ptr<ReorderImpl> make_lanes_impl() { return std::make_unique<LanesReorder>(); }

}  // namespace clreorder
