// The `tiled` implementation: a reorder as a strided permutation (permute.hpp). Each work-item owns a tile
// of the destination-contiguous digit A and the source-contiguous digit B; the other digits are decoded
// once per work-item, so the per-element work is two multiply-adds and the masks that the shape needs.
// Shapes, strides and masks are constants in the generated code.
#include <algorithm>

#include "clreorder/kernel_selector.hpp"
#include "codegen.hpp"
#include "embedded.hpp"
#include "impls.hpp"
#include "permute.hpp"

namespace clreorder {

namespace {

std::string num(int64_t v) { return std::to_string(v); }

// Largest divisor of n not above cap; n itself when the best divisor would make tiles too thin.
int64_t tile_size(int64_t n, int64_t cap) {
  if (n <= cap) return n;
  int64_t best = 1;
  for (int64_t d = cap; d >= 1; --d)
    if (n % d == 0) {
      best = d;
      break;
    }
  return best * 4 < cap && n <= 4 * cap ? n : best;
}

struct TileConfig {
  int64_t cap_a, cap_b;
  size_t local;
};

// CPU devices (PoCL) run a work-group as a loop, so big tiles amortise the decode; GPUs want many small
// work-items. Both are correct on every device: the choice only moves speed.
TileConfig config_for(const DeviceInfo& dev) {
  if (dev.type == "cpu") return {256, 64, 8};
  return {16, 16, 64};
}

class TiledReorder : public ReorderImpl {
 public:
  const char* name() const override { return "tiled"; }

  std::string reject(const ReorderParams& p) const override { return make_permutation(p.src, p.dst).reject; }

  KernelData generate(const ReorderParams& p) const override {
    Permutation perm = make_permutation(p.src, p.dst);
    const TileConfig cfg = config_for(p.device);
    std::vector<PermDigit> grid = perm.digits;
    // A: destination stride 1 (the innermost digit); B: source stride 1, when it is another digit.
    PermDigit a = grid.back();
    grid.pop_back();
    PermDigit b{-1, 1, 1, 0, 0};
    auto bit = std::find_if(grid.begin(), grid.end(), [](const PermDigit& d) { return d.src_stride == 1; });
    if (bit != grid.end()) {
      b = *bit;
      grid.erase(bit);
    }
    const int64_t ta = tile_size(a.extent, cfg.cap_a), tb = tile_size(b.extent, std::max<int64_t>(1, cfg.cap_b * 16 / ta));
    for (PermDigit* d : {&a, &b}) {
      int64_t t = d == &a ? ta : tb;
      if (t < d->extent)
        grid.push_back(PermDigit{d->axis, d->weight * t, d->extent / t, d->dst_stride * t, d->src_stride * t});
    }
    int64_t grid_count = 1;
    for (const PermDigit& d : grid) grid_count *= d.extent;

    // Grid decode: offsets and, for masked axes, the grid's part of the padded coordinate.
    std::vector<std::string> lines = {"IDX_T t_ = w;", "IDX_T d_off = " + num(perm.dst_base) + ";",
                                      "IDX_T s_off = " + num(perm.src_base) + ";"};
    std::vector<std::string> axis_v(perm.axes.size(), "");
    for (size_t k = grid.size(); k-- > 0;) {
      const PermDigit& d = grid[k];
      std::string g = "k" + num(static_cast<int64_t>(k));
      lines.push_back(k == 0 ? "const IDX_T " + g + " = t_;"
                             : "const IDX_T " + g + " = t_ % " + num(d.extent) + "; t_ /= " + num(d.extent) + ";");
      lines.push_back("d_off += " + g + " * " + num(d.dst_stride) + "; s_off += " + g + " * " + num(d.src_stride) + ";");
      if (d.axis >= 0 && perm.axes[static_cast<size_t>(d.axis)].masked()) {
        std::string& v = axis_v[static_cast<size_t>(d.axis)];
        v += (v.empty() ? "" : " + ") + g + " * " + num(d.weight);
      }
    }
    // Masks: an axis advanced by A or B is tested per element, any other once per work-item.
    std::vector<std::string> tile_ok, grid_ok, tile_wr, grid_wr;
    for (size_t ax = 0; ax < perm.axes.size(); ++ax) {
      const PermAxis& m = perm.axes[ax];
      if (!m.masked()) continue;
      std::string v = axis_v[ax].empty() ? "0" : axis_v[ax];
      std::string vname = "v" + num(static_cast<int64_t>(ax));
      lines.push_back("const IDX_T " + vname + " = " + v + ";");
      std::string full = vname;
      bool in_tile = false;
      if (a.axis == static_cast<int>(ax)) full += " + ia * " + num(a.weight), in_tile = true;
      if (b.axis == static_cast<int>(ax)) full += " + ib * " + num(b.weight), in_tile = true;
      if (in_tile) full = "(" + full + ")";
      std::vector<std::string>& ok = in_tile ? tile_ok : grid_ok;
      if (m.check_low) ok.push_back(full + " >= " + num(m.lower));
      if (m.check_high) ok.push_back(full + " < " + num(m.lower + m.dim));
      if (m.check_write) (in_tile ? tile_wr : grid_wr).push_back(full + " < " + num(m.limit));
    }
    auto join = [](const std::vector<std::string>& xs) {
      std::string s;
      for (const std::string& x : xs) s += (s.empty() ? "" : " && ") + x;
      return s;
    };
    if (!grid_wr.empty()) lines.push_back("if (!(" + join(grid_wr) + ")) return;");
    lines.push_back("const bool g_ok = " + (grid_ok.empty() ? std::string("true") : join(grid_ok)) + ";");

    std::vector<std::string> body;
    body.push_back("for (int ib = 0; ib < " + num(tb) + "; ++ib) {");
    body.push_back("  for (int ia = 0; ia < " + num(ta) + "; ++ia) {");
    std::string dst_i = "d_off + ib * " + num(b.dst_stride) + " + ia" + (a.dst_stride == 1 ? "" : " * " + num(a.dst_stride));
    std::string src_i = "s_off + ib" + (b.src_stride == 1 ? "" : " * " + num(b.src_stride)) + " + ia * " + num(a.src_stride);
    std::string ok = "g_ok" + (tile_ok.empty() ? "" : " && " + join(tile_ok));
    std::string store = "dst[" + dst_i + "] = (" + ok + ") ? CONVERT(src[" + src_i + "]) : (DST_T)0;";
    body.push_back(tile_wr.empty() ? "    " + store : "    if (" + join(tile_wr) + ") " + store);
    body.push_back("  }");
    body.push_back("}");

    auto macro = [](const std::vector<std::string>& ls) {
      std::string out;
      for (size_t i = 0; i < ls.size(); ++i) out += (i ? " \\\n  " : "") + ls[i];
      return out;
    };
    KernelData kd;
    kd.impl = name();
    kd.source.entry = std::string("reorder_tiled_") + problem_hash(p);
    Jit jit;
    jit.def("KERNEL_NAME", kd.source.entry)
        .def("SRC_T", cl_type(p.src.data_type()))
        .def("DST_T", cl_type(p.dst.data_type()))
        .def("IDX_T", needs_64bit(p.src, p.dst) ? "long" : "int")
        .def("GRID_COUNT", grid_count)
        .def("GRID_DECODE(w)", macro(lines))
        .def("TILE_LOOPS", macro(body))
        .def("CONVERT(v)", convert_expr(p.src.data_type(), p.dst.data_type(), "v"));
    kd.source.code = jit.wrap(embedded_kernel("reorder_tiled.cl"));
    kd.source.options = "-cl-std=CL1.2";
    size_t local = std::min<size_t>(cfg.local, p.device.max_work_group ? p.device.max_work_group : cfg.local);
    kd.local = {local};
    kd.global = {round_up(static_cast<size_t>(grid_count), local)};
    return kd;
  }
};

}  // namespace

std::unique_ptr<ReorderImpl> make_tiled_impl() { return std::make_unique<TiledReorder>(); }

}  // namespace clreorder
