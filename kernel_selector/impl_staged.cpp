// The `staged` implementation: a reorder as a strided permutation (permute.hpp), ranked first where its
// dense runs are too odd for V x V register transposes, e.g. oiyx -> os_is_yx_osa4_isa8_osv8_isv4, where
// the source moves 9 contiguous elements (y, x) and the destination 4 (isv4). The generator picks a small tile
// of digits that holds a long source-dense run and a long destination-dense run, and emits it fully
// unrolled: vector loads of the source runs, then vector stores of the destination runs whose components
// are picked from the loaded registers by constants worked out here. Every element moves through
// registers once, with no per-element index arithmetic.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "clreorder/kernel_selector.hpp"
#include "codegen.hpp"
#include "embedded.hpp"
#include "impls.hpp"
#include "permute.hpp"

namespace clreorder {

namespace {

// Per device type: runs of 32 bytes on both sides; tiles of at most 256 elements on CPUs (measured on PoCL
// against 64-byte runs and 128-1024 elements: bigger tiles ran up to 2x slower, from register spills, and
// compiled up to 2.5 s longer); on GPUs, where the tile lives in one work-item's registers, 64. The
// per-work-item loop amortises the grid decode over a few KiB on CPUs; on GPUs a work-item takes one tile,
// since a 2 MiB weight tensor walked 1 KiB per work-item (the former setting) gave an H100 2048 work-items.
// On CPUs runs are also at least 16 bytes of the destination type: 32 bytes of a 4- or 8-byte source gave an
// 8-bit destination 8- or 4-byte runs, half a vector register per store with the conversion's arithmetic and
// narrowing done on half-filled registers too. Those runs took 0.97-1.38x the time of 16-byte ones cold and
// 0.98-1.66x warm over 14 conversions into 8-bit types (f32, i32, f64, i64 sources; fsv4, isv16_osv16,
// osv16_isv4, osa4_isa8_osv8_isv4, grouped weights; plain and with fused scales, zero points and the
// requantization: perf/clreorder_ab, PoCL on AMD Zen 5); i64 -> i16 1.22x cold, 1.11x warm, f64 -> f16 1.00x.
// CPU tiles of 8-bit elements hold up to 512 (max_tile_bytes: 256 elements are a quarter of a 4-byte tile's
// bytes, and the runs of 8-bit blocks fill few registers): over the 13 plans this changes among 323 pairs
// (the suite's cases and 42 families in five to seven type pairs; bfyx -> bs_fs_yx_bsv4_fsv2, yxfb, weights
// into is_os_yx_isv16_osv16, os_is_yx_isv16_osv16, os_is_yx_osa4_isa8_osv8_isv2, os_iyx_osv16 and back from
// int8 blocks; i8 and u8), 0.79x the time in geometric mean cold and 0.81x warm (0.42-1.06x; `perf/clreorder_ab
// --env`, 21 interleaved runs, PoCL on the Xeon host; NOTES, "Staged tiles of 512 bytes"). They compile longer:
// the first result of a cold `clreorder run` 0.12-0.71 s later (bfyx -> bs_fs_yx_bsv4_fsv2 i8 32x64x28x28 0.80
// -> 1.51 s). 1024 8-bit elements gained less (0.85x / 0.88x over the same plans); 512 elements of 16 and 32
// bits were mixed (0.81-1.16x over six plans).
struct StagedConfig {
  int64_t want_run_bytes, min_dst_run_bytes, max_tile_elems, max_tile_bytes, work_item_bytes;
  size_t local;
};

StagedConfig config_for(const DeviceInfo& dev) {
  if (tuning_of(dev) == Tuning::cpu) return {32, 16, 256, 512, 4096, 8};
  return {32, 0, 64, 0, 256, 64};
}

// Whether tiled's rows (the run dense on both sides) are under 16 bytes of the narrower type while the
// destination's next elements lie a cache line or more away in the source. Such rows took tiled 1.9-3.6x
// staged's time (PoCL, clreorder bench --every-impl: b_fs_yx_fsv4 into b_fs_yx_fsv16 and b_fs_yx_fsv32 in i8,
// u8 and f16, into fs_b_yx_fsv32 in f16), while with the neighbours near (b_fs_yx_fsv16 -> b_fs_yx_fsv4 i8:
// 16 bytes) and with rows of 16 bytes and more (isv4 weight blocks of 64, fsv16 into bsv16_fsv16) tiled led:
// staged runs first only there.
bool narrow_far_rows(const ReorderParams& p, const Permutation& perm) {
  const int64_t narrow = std::min(size_of(p.src.data_type()), size_of(p.dst.data_type()));
  const int64_t rows = run_length(perm.digits, &PermDigit::dst_stride, &PermDigit::src_stride);
  const auto next = std::find_if(perm.digits.begin(), perm.digits.end(), [&](const PermDigit& d) { return d.dst_stride == rows; });
  return rows * narrow < 16 && next != perm.digits.end() &&
         next->src_stride * static_cast<int64_t>(size_of(p.src.data_type())) >= 64;
}

struct StagedPlan {
  std::string reject;
  std::string slower;  // why tiled is preferred here (measured), else ""
  Permutation perm;
  std::vector<PermDigit> tile;  // unrolled
  PermDigit loop{};             // walked by each work-item (extent 1: none)
  std::vector<PermDigit> grid;  // one work-item per tuple, outer first
  int64_t sums = 0;             // private compensation sums: one per tile part of their index
  bool sums_inner = false;      // the sums' index moves along the destination's inner run (tiled ranks first)
};

// Compensation sums (Conversion::compensation) in a work-item's registers: a uint per value the tile's digits
// on the sums' axes give their index (their extents' product; 1 where only the grid and the loop move it). Each
// loaded register adds its converted lanes to theirs; the sums go to cr_comp once per work-item, or once per
// tile where the loop moves the index. More than this many would spill.
constexpr int64_t kMaxStagedSums = 64;

int64_t sum_slots(const Compensation& c, const std::vector<PermDigit>& tile) {
  if (!c.present()) return 0;
  int64_t n = 1;
  for (const PermDigit& d : tile)
    if (d.axis >= 0 && (d.axis == c.axis || d.axis == c.outer_axis)) n *= d.extent;
  return n;
}

// A register of `width` lanes of destination type `t` (an integer of at most 32 bits) as uints, modulo 2^32 as
// the host sums them: narrower values widened to int first, so a negative one keeps its value.
std::string as_uints(DataType t, const std::string& x, int width) {
  const std::string W = width > 1 ? num(width) : "";
  if (bits_of(t) == 32) return is_unsigned(t) ? x : "as_uint" + W + "(" + x + ")";
  return "as_uint" + W + "(convert_int" + W + "(" + x + "))";
}

// What the logical coordinate on `axis` of a register's first lane is a multiple of (TableIndex::align): it is
// the grid's digits' part (multiples of their weights), the loop's (of its weight), the tile's constant `part`,
// less the lower padding, so their greatest common divisor (0 when all are 0: the coordinate is always 0).
int64_t lane0_align(const StagedPlan& sp, int axis, int64_t part) {
  int64_t g = std::gcd(sp.perm.axes[static_cast<size_t>(axis)].lower, part);
  for (const PermDigit& d : sp.grid)
    if (d.axis == axis) g = std::gcd(g, d.weight);
  if (sp.loop.axis == axis && sp.loop.extent > 1) g = std::gcd(g, sp.loop.weight);
  return g == 0 ? int64_t{1} << 40 : g;
}

StagedPlan make_plan(const ReorderParams& p) {
  StagedPlan sp;
  sp.perm = make_permutation(p.src, p.dst, indexed_axes(p.conversion));
  sp.reject = sp.perm.reject.empty() ? reject_conversion(p, sp.perm, Nibbles::none, true) : sp.perm.reject;
  if (!sp.reject.empty()) return sp;
  const Permutation& perm = sp.perm;
  const PermDigit& inner = perm.digits.back();
  auto src_inner = std::find_if(perm.digits.begin(), perm.digits.end(), [](const PermDigit& d) { return d.src_stride == 1; });
  if (src_inner == perm.digits.end()) {
    sp.reject = "no source digit has stride 1";
    return sp;
  }
  // Where both runs are multiples of 4, tiled's V x V transposes apply. Timed against each other with caches
  // evicted between launches (perf/clreorder_ab --vs), tiled was as fast or faster there on 32-bit elements
  // (0.75-1.07 of staged's time, streaming stores included), and on 32 and 64 bits across the families
  // (clreorder bench --impl: 0.46-0.95 of staged's time); on 8 and 16 bits neither led (see tiled's rank, which steps back
  // where its transposes are narrow); on the odd runs staged takes about half of tiled's time.
  if (inner.src_stride == 1) {
    if (!narrow_far_rows(p, perm))
      sp.slower = "the destination's inner run is dense in the source too: tiled copies it as vector rows";
  } else if (inner.extent % 4 == 0 && src_inner->extent % 4 == 0)
    sp.slower = "dense runs of " + num(inner.extent) + " (destination) and " + num(src_inner->extent) +
                " (source) elements are multiples of 4: tiled's register transposes apply (measured as fast or faster)";
  const int64_t elem = std::max(size_of(p.src.data_type()), size_of(p.dst.data_type()));
  const StagedConfig cfg = config_for(p.device);
  const int64_t dst_elem = static_cast<int64_t>(size_of(p.dst.data_type()));
  const int64_t want = std::max<int64_t>({cfg.want_run_bytes / elem, cfg.min_dst_run_bytes / dst_elem, 2});
  std::vector<PermDigit> pool = perm.digits;
  grow_runs(perm, pool, sp.tile, want, std::max(cfg.max_tile_elems, cfg.max_tile_bytes / elem));
  const int64_t dst_run = run_length(sp.tile, &PermDigit::dst_stride), src_run = run_length(sp.tile, &PermDigit::src_stride);
  if (dst_run < 2 || src_run < 2) {
    sp.reject = "dense runs of " + num(dst_run) + " (destination) and " + num(src_run) +
                " (source) elements without tails or padding are too short to stage";
    return sp;
  }
  // The work-item loop continues one of the runs where it can (neighbouring iterations share cache lines).
  sp.loop = take_loop(perm, pool, cfg.work_item_bytes / elem / extent_product(sp.tile),
                      [&](const PermDigit& d) { return d.dst_stride == dst_run || d.src_stride == src_run; });
  sp.grid = pool;
  const Compensation& comp = p.conversion.compensation;
  sp.sums_inner = comp.present() && inner.axis >= 0 && (inner.axis == comp.axis || inner.axis == comp.outer_axis);
  if ((sp.sums = sum_slots(comp, sp.tile)) > kMaxStagedSums)
    sp.reject = "the tile's compensation sums would take " + num(sp.sums) + " private words, more than " + num(kMaxStagedSums);
  return sp;
}

// Splits a run of `len` elements into vector widths 16, 8, 4, 2, 1: (start, width) pairs.
std::vector<std::pair<int64_t, int>> chunks(int64_t len) {
  std::vector<std::pair<int64_t, int>> out;
  for (int64_t at = 0; at < len;) {
    int w = 16;
    while (w > len - at) w /= 2;
    out.emplace_back(at, w);
    at += w;
  }
  return out;
}

// Offsets (relative to the tile's origin) of every row of `tile` in the layout `stride` measures: the
// digits outside the dense run of that layout, enumerated in the order they appear in `tile`.
std::vector<int64_t> row_offsets(const std::vector<PermDigit>& tile, Stride stride) {
  const std::vector<bool> in_run = dense_run(tile, stride);
  std::vector<int64_t> rows = {0};
  for (size_t k = 0; k < tile.size(); ++k) {
    if (in_run[k]) continue;
    std::vector<int64_t> next;
    for (int64_t i = 0; i < tile[k].extent; ++i)
      for (int64_t r : rows) next.push_back(r + i * (tile[k].*stride));
    rows = next;
  }
  return rows;
}

// A loaded element: component `comp` of register `var` (a scalar when width is 1).
struct Reg {
  std::string var;
  int width = 1;
  int comp = 0;
  std::string expr() const { return component(var, width, comp); }
};

class StagedReorder : public ReorderImpl {
 public:
  const char* name() const override { return "staged"; }

  std::string reject(const ReorderParams& p) const override { return make_plan(p).reject; }

  // With compensation sums along the destination's inner run, tiled sums its transposed columns as vectors:
  // staged took 1.5-2.2x tiled's kernel time on oiyx -> os_is_yx_isv16_osv16 f32 -> i8 (sums per o), 1.6-2.4x on
  // g_os_is_yx_isv16_osv16 (per g and o), 1.1x on bfyx -> b_fs_yx_fsv4 (per f). Where the inner run is another
  // axis' tiled's transposes are narrow and staged led: 0.14x on os_is_yx_osv16_isv4, 0.4x on
  // os_is_yx_osa4_isa8_osv8_isv4 and g_os_is_yx_osv16_isv4 (clreorder bench --impl, event times, PoCL on Zen 5).
  Rank rank(const ReorderParams& p) const override {
    const StagedPlan sp = make_plan(p);
    if (sp.sums_inner)
      return Rank{kRankStagedAfterTiled, "compensation sums along the destination's inner run: tiled adds them as vectors (measured faster)"};
    return sp.slower.empty() ? Rank{kRankStaged, ""} : Rank{kRankStagedSlower, sp.slower};
  }

  KernelData generate(const ReorderParams& p) const override {
    StagedPlan sp = make_plan(p);
    const std::vector<PermDigit>& tile = sp.tile;
    const std::string dt = cl_type(p.dst.data_type());
    std::vector<std::string> lines = grid_decode(sp.perm, sp.grid, [](int) { return false; }, p.conversion.padding);

    // Where each source element of the tile sits after the loads: source offset -> (register, component).
    std::map<int64_t, Reg> reg;
    std::vector<std::string> body;
    std::vector<int> widths;
    const int64_t src_run = run_length(tile, &PermDigit::src_stride), dst_run = run_length(tile, &PermDigit::dst_stride);
    const std::vector<int64_t> src_rows = row_offsets(tile, &PermDigit::src_stride);
    // Offsets outside the tile come from the grid digits and the loop; the tile's own are the constants below.
    std::vector<PermDigit> outside = sp.grid;
    outside.push_back(sp.loop);
    const DataType st = p.src.data_type();
    const bool src_packable = strides_multiple_of(sp.perm, outside, pack_of(st), &PermDigit::src_stride);
    const bool unaligned = unaligned_vectors(p.device);
    // Destination offset -> source offset over the tile's tuples, and each source offset's part of the
    // padded coordinates of the tracked axes (per-index parameters).
    std::map<int64_t, int64_t> from;
    std::map<std::pair<int, int64_t>, int64_t> tile_part;  // (axis, source offset) -> coordinate part
    const std::vector<int> tracked = indexed_axes(p.conversion);
    std::vector<int64_t> idx(tile.size(), 0);
    for (int64_t n = 0; n < extent_product(tile); ++n) {
      int64_t so = 0, dso = 0;
      for (size_t k = 0; k < tile.size(); ++k) {
        so += idx[k] * tile[k].src_stride;
        dso += idx[k] * tile[k].dst_stride;
      }
      from[dso] = so;
      for (int ax : tracked) {
        int64_t part = 0;
        for (size_t k = 0; k < tile.size(); ++k) part += tile[k].axis == ax ? idx[k] * tile[k].weight : 0;
        tile_part[{ax, so}] = part;
      }
      for (size_t k = 0; k < tile.size() && ++idx[k] == tile[k].extent; ++k) idx[k] = 0;
    }
    // Compensation sums: a slot per tile part of their index (sum_slots()), numbered as first met.
    const Compensation& comp = p.conversion.compensation;
    std::map<std::pair<int64_t, int64_t>, int64_t> slot;  // (tile part on the axis, on the outer axis) -> cr_s<slot>
    std::vector<std::pair<int64_t, int64_t>> slot_key;
    auto slot_at = [&](int64_t so) {
      const std::pair<int64_t, int64_t> key{tile_part.at({comp.axis, so}), comp.outer_axis >= 0 ? tile_part.at({comp.outer_axis, so}) : 0};
      auto [it, fresh] = slot.emplace(key, static_cast<int64_t>(slot_key.size()));
      if (fresh) slot_key.push_back(key);
      return it->second;
    };
    // Per slot, an accumulator of each register width that adds to it (cr_s<slot>_<width>): a register whose
    // lanes share the slot adds lane by lane, one whose lanes are several slots adds each lane to its slot's
    // scalar, and each accumulator is summed across its lanes once, when the sums are written (a horizontal
    // sum per register took staged twice its plain time on oiyx -> os_is_yx_isv16_osv16 f32 -> i8).
    std::vector<std::string> sums;
    std::set<std::pair<int64_t, int>> accs;  // (slot, width)
    auto acc_name = [](int64_t k, int w) { return "cr_s" + num(k) + "_" + num(w); };
    auto acc = [&](int64_t k, int w) {
      accs.insert({k, w});
      return acc_name(k, w);
    };
    auto add_to_sums = [&](const std::string& var, int64_t first, int w) {
      const int64_t lane0 = slot_at(first);
      bool one = true;
      for (int k = 1; k < w; ++k) one = one && slot_at(first + k) == lane0;
      if (one) {
        sums.push_back(acc(lane0, w) + " += " + as_uints(p.dst.data_type(), var, w) + ";");
      } else {
        for (int k = 0; k < w; ++k)
          sums.push_back(acc(slot_at(first + k), 1) + " += " + as_uints(p.dst.data_type(), component(var, w, k), 1) + ";");
      }
    };
    // Source rows pages apart get prefetch hints (prefetches_rows()), each row's before its first load: the loop
    // walks along the rows (os_is_yx_isv16_osv16 from oiyx: 16 output channels' rows 9 KiB apart, 9 floats a step).
    std::vector<int64_t> sorted_rows = src_rows;
    std::sort(sorted_rows.begin(), sorted_rows.end());
    int64_t nearest = std::numeric_limits<int64_t>::max();
    for (size_t r = 1; r < sorted_rows.size(); ++r) nearest = std::min(nearest, sorted_rows[r] - sorted_rows[r - 1]);
    const bool prefetch = sorted_rows.size() > 1 && prefetches_rows(p, nearest);
    for (size_t r = 0; r < src_rows.size(); ++r)
      for (const auto& [at, w] : chunks(src_run)) {
        if (prefetch && at == 0) body.push_back(prefetch_stmt(p, "so + " + num(src_rows[r]), {"g_ok"}));
        const std::string var = "l" + num(static_cast<int64_t>(r)) + "_" + num(at);
        const std::string off = "src + so + " + num(src_rows[r] + at);
        const std::string type = w == 1 ? dt : dt + num(w);
        const std::string raw = vload_expr(st, w, off, src_packable && (src_rows[r] + at) % pack_of(st) == 0, unaligned);
        // Per-index values at each lane's padded coordinate: the grid's part (v<axis>), the loop's, the tile's.
        const int64_t first = src_rows[r] + at;
        const std::string load =
            !p.conversion.per_index() ? (w == 1 ? "CONVERT(" + raw + ")" : "CONVERT_V" + num(w) + "(" + raw + ")")
                                      : convert_expr(p, raw, w, [&](int axis, int lane) {
                                          std::string v = "v" + num(axis);
                                          if (sp.loop.axis == axis) v = "(" + v + " + it * " + num(sp.loop.weight) + ")";
                                          TableIndex t = padded_coord(sp.perm, axis, v, tile_part.at({axis, first + lane}));
                                          if (lane == 0) t.align = lane0_align(sp, axis, t.offset);
                                          return t;
                                        });
        body.push_back("const " + type + " " + var + " = g_ok ? " + load + " : (" + type + ")0;");
        if (w > 1 && std::find(widths.begin(), widths.end(), w) == widths.end()) widths.push_back(w);
        for (int k = 0; k < w; ++k) reg[src_rows[r] + at + k] = Reg{var, w, k};
        if (comp.present()) add_to_sums(var, first, w);
      }
    // A vector built from two registers is one shuffle; from more, LLVM moves it element by element, and
    // storing the elements directly is cheaper (measured on PoCL). So a store is halved until its
    // components come from at most two registers.
    const int64_t pack = pack_of(p.dst.data_type());
    const bool packable = strides_multiple_of(sp.perm, outside, pack, &PermDigit::dst_stride);
    std::function<void(int64_t, int)> store = [&](int64_t at, int w) {
      std::set<std::string> regs;
      std::string value;
      for (int k = 0; k < w; ++k) {
        const Reg& r = reg.at(from.at(at + k));
        regs.insert(r.var);
        value += std::string(k ? ", " : "") + r.expr();
      }
      if (w > 1 && regs.size() > 2) {
        store(at, w / 2);
        store(at + w / 2, w / 2);
        return;
      }
      if (w > 1) value = "(" + dt + num(w) + ")(" + value + ")";
      // No streaming: staged's stores are mostly narrower than the 16 bytes a streaming store needs.
      body.push_back(vstore_stmt(p.dst.data_type(), w, value, "dst + do_ + " + num(at), StoreAlign{packable && at % pack == 0, false, unaligned}));
    };
    for (int64_t row : row_offsets(tile, &PermDigit::dst_stride))
      for (const auto& [at, w] : chunks(dst_run)) store(row + at, w);

    std::vector<std::string> tile_body;
    if (comp.present()) {
      // Declared and added to cr_comp around the loop, or in each tile where the loop moves the index.
      const bool per_tile = sp.loop.extent > 1 && (sp.loop.axis == comp.axis || sp.loop.axis == comp.outer_axis);
      std::vector<std::string> decl, total(slot_key.size()), flush = {"{"};
      for (const auto& [k, w] : accs) {
        decl.push_back((w > 1 ? "uint" + num(w) : std::string("uint")) + " " + acc_name(k, w) + " = 0;");
        std::string& t = total[static_cast<size_t>(k)];
        t += (t.empty() ? "" : " + ") + (w > 1 ? "cr_hsum" + num(w) + "(" + acc_name(k, w) + ")" : acc_name(k, w));
      }
      for (size_t k = 0; k < slot_key.size(); ++k) {
        const CompensateMacros m = guarded_sums(p.conversion, sp.perm, [&](int axis) {
          std::string v = "v" + num(axis);
          if (sp.loop.axis == axis && sp.loop.extent > 1) v += " + it * " + num(sp.loop.weight);
          return v + " + " + num(axis == comp.axis ? slot_key[k].first : slot_key[k].second);
        });
        if (k == 0) flush.push_back(m.begin);  // the same for every slot
        flush.push_back("{ const uint v = " + total[k] + "; " + m.add + " }");
        if (k + 1 == slot_key.size()) flush.push_back(m.end);
      }
      flush.push_back("}");
      body.push_back("/* compensation sums */");
      body.insert(body.end(), sums.begin(), sums.end());
      if (per_tile) {
        body.insert(body.begin(), decl.begin(), decl.end());
        body.insert(body.end(), flush.begin(), flush.end());
        tile_body = walk_tiles(sp.loop, body);
      } else {
        tile_body = decl;
        for (const std::string& l : walk_tiles(sp.loop, body)) tile_body.push_back(l);
        tile_body.insert(tile_body.end(), flush.begin(), flush.end());
      }
    } else {
      tile_body = walk_tiles(sp.loop, body);
    }
    int64_t grid_count = extent_product(sp.grid);
    KernelData kd;
    kd.impl = name();
    Jit jit = reorder_jit(p, "reorder_staged", kd, nullptr, padded_shapes(sp.perm));
    jit.def("GRID_COUNT", grid_count).def("GRID_DECODE(w)", macro_lines(lines)).def("TILE_BODY", macro_lines(tile_body));
    if (!p.conversion.per_index())
      for (int w : widths) jit.def("CONVERT_V" + num(w) + "(v)", convert_expr(p, "v", w));
    finish_kernel(kd, jit, "reorder_staged.cl", static_cast<size_t>(grid_count), config_for(p.device).local, p.device);
    return kd;
  }
};

}  // namespace

std::unique_ptr<ReorderImpl> make_staged_impl() { return std::make_unique<StagedReorder>(); }

}  // namespace clreorder
