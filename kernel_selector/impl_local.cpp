// The `local` implementation: a tile of the strided permutation (permute.hpp) staged through the work-group's
// local memory, the textbook GPU transpose. One work-group owns one tile of a few KiB, chosen like staged's
// (a destination-dense and a source-dense run, masked axes left to the grid). Its work-items first read the
// tile in source order, consecutive work-items on consecutive source elements, converting each value into
// local memory; after a barrier they write it in destination order, consecutive work-items on consecutive
// destination elements. So both global passes coalesce, whatever the permutation, and the transposition
// happens in local memory, whose slots are padded by one per 32 so that the work-items of a wavefront that
// write a column of the tile meet distinct banks.
// A work-item moves one element (a 4-byte word of 8- or 16-bit ones) per access, with index arithmetic, where
// tiled and staged move vectors through registers: on a CPU (PoCL runs a work-group as loops split at the
// barrier) that is the slower form, on a GPU the faster.
#include <algorithm>
#include <functional>

#include "clreorder/kernel_selector.hpp"
#include "codegen.hpp"
#include "embedded.hpp"
#include "impls.hpp"
#include "permute.hpp"

namespace clreorder {

namespace {

// Padding of the local slots: one slot after every kBankRow.
constexpr int64_t kBankRow = 32;

struct LocalConfig {
  int64_t run_bytes;   // each run's length to aim for
  int64_t tile_bytes;  // the tile's size limit, in bytes of the wider element
  size_t local;        // work-items per group
};

// GPUs: runs of a 128-byte line each side, 4 KiB tiles (32 x 32 of 4 bytes) and 256 work-items, as the
// classic CUDA and OpenCL transposes; CPUs get smaller groups, which PoCL runs as loops around the barrier.
LocalConfig config_for(const DeviceInfo& dev) {
  if (tuning_of(dev) == Tuning::cpu) return {64, 4096, 64};
  return {128, 4096, 256};
}

struct LocalPlan {
  std::string reject;
  Permutation perm;
  std::vector<PermDigit> tile;  // staged through local memory
  std::vector<PermDigit> grid;  // one work-group per tuple, outer first
  size_t local = 1;
};

LocalPlan make_plan(const ReorderParams& p) {
  LocalPlan lp;
  lp.perm = make_permutation(p.src, p.dst, indexed_axes(p.conversion));
  lp.reject = lp.perm.reject.empty() ? reject_conversion(p, lp.perm, Nibbles::sources, true) : lp.perm.reject;
  if (!lp.reject.empty()) return lp;
  // A u4 or i4 source (its destination is never one) counts a byte per element: its nibbles go to slots of
  // the destination's type.
  const int64_t elem = static_cast<int64_t>(std::max(unit_bytes(p.src.data_type()), size_of(p.dst.data_type())));
  const LocalConfig cfg = config_for(p.device);
  const int64_t max_elems = std::max<int64_t>(cfg.tile_bytes / elem, 2);
  std::vector<PermDigit> pool = lp.perm.digits;
  grow_runs(lp.perm, pool, lp.tile, std::max<int64_t>(cfg.run_bytes / elem, 2), max_elems);
  // Where the runs are one (the destination's run dense in the source too) or stop short, the tile fills
  // with what continues them.
  grow_runs(lp.perm, pool, lp.tile, max_elems, max_elems);
  const int64_t count = extent_product(lp.tile);
  if (count < 2) {
    lp.reject = "no digit without tails or padding continues a dense run of either layout: a tile would hold one element";
    return lp;
  }
  lp.grid = pool;
  // The largest power of two of work-items up to the configured count that the device takes and the tile
  // fills, 8 at least. A small tile (weights whose tails keep it to the kernel window) leaves the rest of a
  // group without slots: on CPUs PoCL runs a group as a loop around the barrier, where such a work-item still
  // costs its iterations and its saved context (2 x 2 and 3 x 3 windows in groups of 8 and 16: 0.28x and
  // 0.49-0.56x the time of the former least, 32; perf/clreorder_ab), and on GPUs a group under a wavefront
  // takes one wavefront as a group of 32 does, with the same lanes at work.
  // A batch's groups are one size for all its items, so a batch item keeps the configured count.
  size_t local = cfg.local;
  while (!p.batch_item && local > 8 && local / 2 >= static_cast<size_t>(count)) local /= 2;
  while (p.device.max_work_group && local > p.device.max_work_group) local /= 2;
  lp.local = local;
  return lp;
}

// The tile's digits in the order one layout walks them, inner first (by `stride`), as positions in `tile`.
std::vector<size_t> walk_order(const std::vector<PermDigit>& tile, Stride stride) {
  std::vector<size_t> order(tile.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::abs(tile[a].*stride) < std::abs(tile[b].*stride);
  });
  return order;
}

// Elements per access on the side `stride` measures (walked in `order`), for its type t: a 4-byte word of
// 4-, 8- or 16-bit elements where the walk's finest digit has stride 1 and an extent the word divides, and
// every other offset (the tile's other digits, the grid's, the base) is a multiple of the word, so that each
// access starts a whole word from the runtime base (src_wide / dst_wide test that once); else 1.
int64_t word_elems(const LocalPlan& lp, const std::vector<size_t>& order, Stride stride, DataType t) {
  const int64_t pack = is_nibble(t) ? 8 : pack_of(t);
  const PermDigit& finest = lp.tile[order.front()];
  if (pack == 1 || finest.*stride != 1 || finest.extent % pack != 0) return 1;
  std::vector<PermDigit> outside = lp.grid;
  for (size_t n = 1; n < order.size(); ++n) outside.push_back(lp.tile[order[n]]);
  return strides_multiple_of(lp.perm, outside, pack, stride) ? pack : 1;
}

// Statements declaring, for access `var` (< the product of their extents) of a walk over the digits of `tile`
// in `order` that moves `word` elements of its finest digit at a time, the index of each of those digits
// (`e<digit>`, the finest one's first).
std::vector<std::string> decompose(const std::vector<PermDigit>& tile, const std::vector<size_t>& order, int64_t word,
                                   const std::string& var = "k") {
  std::vector<std::string> lines;
  int64_t inner = 1;
  for (size_t n = 0; n < order.size(); ++n) {
    const int64_t extent = tile[order[n]].extent / (n == 0 ? word : 1);
    std::string e = inner == 1 ? var : "(" + var + " / " + num(inner) + ")";
    if (n + 1 < order.size()) e = "(" + e + " % " + num(extent) + ")";
    if (n == 0 && word > 1) e = e + " * " + num(word);
    lines.push_back("const IDX_T e" + num(static_cast<int64_t>(order[n])) + " = " + e + ";");
    inner *= extent;
  }
  return lines;
}

// Sum over the tile's digits k of index * coef(k), or "0"; digit `shifted` at index e + `by`.
std::string tile_sum(size_t digits, const std::function<int64_t(size_t k)>& coef, size_t shifted = 0, int64_t by = 0) {
  std::string out;
  for (size_t k = 0; k < digits; ++k) {
    const int64_t c = coef(k);
    if (c == 0) continue;
    std::string e = "e" + num(static_cast<int64_t>(k));
    if (k == shifted && by) e = "(" + e + " + " + num(by) + ")";
    out += (out.empty() ? "" : " + ") + (c == 1 ? e : e + " * " + num(c));
  }
  return out.empty() ? "0" : "(" + out + ")";
}

// The slot of local memory a position of the destination walk lands in (a word's positions, which start at a
// multiple of its 1, 2 or 4 elements, stay consecutive).
std::string slot_of(const std::string& q) { return "(" + q + ") + (" + q + ") / " + num(kBankRow); }

// The loop of a pass: work-item by work-item over `accesses`, none in a group outside the destination.
std::string pass_loop(int64_t accesses, size_t local) {
  return "for (IDX_T k = g_wr ? (IDX_T)get_local_id(0) : " + num(accesses) + "; k < " + num(accesses) + "; k += " +
         num(static_cast<int64_t>(local)) + ") {";
}

// The compensation sums (Conversion::compensation) of a tile, read back from local memory after the barrier:
// its digits on the sums' axes give N sums, the others R terms each; P work-items share a sum (as many as
// keep 16 terms or more each, within the group), each adds its part with one atomic. No atomics in local
// memory: lanes of a wavefront would meet on one sum and serialise. `q_step`: each digit's step in the
// destination walk (the slots' order).
std::vector<std::string> tile_sums(const ReorderParams& p, const LocalPlan& lp, const std::vector<int64_t>& q_step) {
  const Compensation& c = p.conversion.compensation;
  if (!c.present()) return {};
  const std::vector<PermDigit>& tile = lp.tile;
  auto on_sums = [&](const PermDigit& d) { return d.axis >= 0 && (d.axis == c.axis || d.axis == c.outer_axis); };
  std::vector<size_t> sum_digits, term_digits;
  int64_t sums = 1, terms = 1;
  for (size_t k = 0; k < tile.size(); ++k) {
    (on_sums(tile[k]) ? sum_digits : term_digits).push_back(k);
    (on_sums(tile[k]) ? sums : terms) *= tile[k].extent;
  }
  int64_t share = 1;
  while (sums * share * 2 <= static_cast<int64_t>(lp.local) && terms / (share * 2) >= 16) share *= 2;
  const CompensateMacros m = guarded_sums(p.conversion, lp.perm, [&](int axis) {
    return "(v" + num(axis) + " + " + tile_sum(tile.size(), [&](size_t k) { return tile[k].axis == axis ? tile[k].weight : 0; }) + ")";
  }, {"g_ok"});
  std::vector<std::string> out = {pass_loop(sums * share, lp.local)};
  if (sums > 1) out.push_back("  const IDX_T j_ = k % " + num(sums) + ";");
  for (const std::string& l : decompose(tile, sum_digits, 1, "j_")) out.push_back("  " + l);
  out.push_back("  uint cr_total = 0;");
  out.push_back("  for (IDX_T r_ = k / " + num(sums) + "; r_ < " + num(terms) + "; r_ += " + num(share) + ") {");
  for (const std::string& l : decompose(tile, term_digits, 1, "r_")) out.push_back("    " + l);
  out.push_back("    const IDX_T q = " + tile_sum(tile.size(), [&](size_t k) { return q_step[k]; }) + ";");
  out.push_back("    cr_total += (uint)(int)cr_tile[" + slot_of("q") + "];");
  out.push_back("  }");
  out.push_back("  " + m.begin);
  out.push_back("  const uint v = cr_total;");
  out.push_back("  " + m.add);
  out.push_back("  " + m.end);
  out.push_back("}");
  return out;
}

class LocalReorder : public ReorderImpl {
 public:
  const char* name() const override { return "local"; }

  std::string reject(const ReorderParams& p) const override { return make_plan(p).reject; }

  // Measured side by side (clreorder_suite --impls). On an H100, GPU tuning: the fastest that accepts in 43 of
  // the suite's 56 cases, 0.38-1.03 of copy there, where tiled's 8 x 8 register tiles ran 0.13-0.84 and the
  // generic kernel 0.17-0.50; behind where its tile was a few elements between masked axes (16 of a 32-wide
  // group: 0.14 and 0.25 of copy, generic 0.32 and 0.42). On PoCL: 0.18 of the fastest other implementation in
  // geometric mean (an element or a word per access with index arithmetic, and the barrier splits the
  // work-group loop), within 10% of it only on two tensors of 1-20 KB. With compensation sums it ranks as
  // without, unmeasured on a GPU yet: there the plain f32 -> i8 weights reorder ran local at 1.91 of copy and
  // the one with sums tiled at 0.278 (fused table, H100, 2026-11-27); the sums add a local read per element
  // and at most a work-group's atomics per tile.
  Rank rank(const ReorderParams& p) const override {
    if (tuning_of(p.device) == Tuning::cpu)
      return {kRankLocalCpu, "an element per access through a barrier: 0.18 of the fastest other implementation on PoCL"};
    const LocalPlan lp = make_plan(p);
    const int64_t count = extent_product(lp.tile);
    if (count < static_cast<int64_t>(config_for(p.device).local))
      return {kRankLocalSmall, "its tile of " + num(count) + " elements between masked axes leaves most of a work-group idle"};
    return {kRankLocal, ""};
  }

  KernelData generate(const ReorderParams& p) const override {
    const LocalPlan lp = make_plan(p);
    const std::vector<PermDigit>& tile = lp.tile;
    const int64_t count = extent_product(tile);
    const std::vector<size_t> src_order = walk_order(tile, &PermDigit::src_stride);
    const std::vector<size_t> dst_order = walk_order(tile, &PermDigit::dst_stride);
    // Position of each digit's unit step in the destination walk: its slot before the padding.
    std::vector<int64_t> q_step(tile.size(), 0);
    int64_t inner = 1;
    for (size_t k : dst_order) {
      q_step[k] = inner;
      inner *= tile[k].extent;
    }
    const std::vector<int> tracked = indexed_axes(p.conversion);
    const DataType st = p.src.data_type(), dt = p.dst.data_type();
    const std::string dtype = cl_type(dt);

    // Pass 1, in source order: a word (or an element) per access, each element converted into its slot.
    const int64_t in_word = word_elems(lp, src_order, &PermDigit::src_stride, st);
    const size_t finest_src = src_order.front();
    std::vector<std::string> load = {pass_loop(count / in_word, lp.local)};
    for (const std::string& l : decompose(tile, src_order, in_word)) load.push_back("  " + l);
    const size_t n = tile.size();
    const std::string src_at = "s_off + " + tile_sum(n, [&](size_t k) { return tile[k].src_stride; });
    if (in_word > 1) {
      // A word of 8- or 16-bit elements, or of eight nibbles unpacked to 8-bit lanes (cl_type() of u4 and i4).
      const std::string vec = cl_type(st) + num(in_word);
      load.push_back("  const " + vec + " w_ = g_ok ? " + src_vector(st, static_cast<int>(in_word), src_at, true, false) + " : (" +
                     vec + ")0;");
    }
    for (int64_t j = 0; j < in_word; ++j) {
      load.push_back("  {");
      // Per-index parameters read their axis' padded coordinate: the grid's part and the tile's.
      for (int ax : tracked)
        load.push_back("    const IDX_T t" + num(ax) + " = " +
                       tile_sum(n, [&](size_t k) { return tile[k].axis == ax ? tile[k].weight : 0; }, finest_src, j) + ";");
      const std::string value = in_word > 1 ? component("w_", in_word, j) : "SRC_AT(" + src_at + ")";
      load.push_back("    const IDX_T q = " + tile_sum(n, [&](size_t k) { return q_step[k]; }, finest_src, j) + ";");
      load.push_back("    cr_tile[" + slot_of("q") + "] = g_ok ? CONVERT(" + value + ") : (DST_T)0;");
      load.push_back("  }");
    }
    load.push_back("}");

    // Pass 2, in destination order: a word (or an element) of consecutive slots per access.
    const int64_t out_word = word_elems(lp, dst_order, &PermDigit::dst_stride, dt);
    std::vector<std::string> store = {pass_loop(count / out_word, lp.local)};
    for (const std::string& l : decompose(tile, dst_order, out_word)) store.push_back("  " + l);
    store.push_back("  const IDX_T s = " + slot_of("k * " + num(out_word)) + ";");
    const std::string dst_at = "dst + d_off + " + tile_sum(n, [&](size_t k) { return tile[k].dst_stride; });
    if (out_word > 1) {
      std::string value;
      for (int64_t j = 0; j < out_word; ++j) value += std::string(j ? ", " : "") + "cr_tile[s + " + num(j) + "]";
      store.push_back("  " + vstore_stmt(dt, static_cast<int>(out_word), "(" + dtype + num(out_word) + ")(" + value + ")", dst_at,
                                         StoreAlign{true, false}));
    } else {
      store.push_back("  *(" + dst_at + ") = cr_tile[s];");
    }
    store.push_back("}");

    const int64_t grid_count = extent_product(lp.grid), slots = count + count / kBankRow;
    KernelData kd;
    kd.impl = name();
    kd.local_bytes = static_cast<size_t>(slots) * size_of(dt);
    const Permutation& perm = lp.perm;
    Jit jit = reorder_jit(
        p, "reorder_local", kd,
        [&perm](int axis, int) { return padded_coord(perm, axis, "(v" + num(axis) + " + t" + num(axis) + ")"); },
        padded_shapes(perm));
    jit.def("LOCAL_SIZE", static_cast<int64_t>(lp.local))
        .def("TILE_SLOTS", slots)
        .def("GRID_COUNT", grid_count)
        .def("GRID_DECODE(w)", macro_lines(grid_decode(perm, lp.grid, [](int) { return false; }, p.conversion.padding, false)))
        .def("TILE_LOAD", macro_lines(load))
        .def("TILE_STORE", macro_lines(store))
        .def("TILE_SUMS", macro_lines(tile_sums(p, lp, q_step)));
    finish_kernel(kd, jit, "reorder_local.cl", static_cast<size_t>(grid_count) * lp.local, lp.local, p.device);
    return kd;
  }
};

}  // namespace

std::unique_ptr<ReorderImpl> make_local_impl() { return std::make_unique<LocalReorder>(); }

}  // namespace clreorder
