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
  int64_t cap_a;  // most elements of A per work-item
  int64_t tile;   // elements per work-item to aim for
  size_t local;
};

// CPU devices (PoCL) run a work-group as a loop, so big tiles amortise the decode; GPUs want many small
// work-items. Both are correct on every device: the choice only moves speed.
TileConfig config_for(const DeviceInfo& dev) {
  if (dev.type == "cpu") return {256, 1024, 8};
  return {16, 256, 64};
}

std::string join(const std::vector<std::string>& xs) {
  std::string s;
  for (const std::string& x : xs) s += (s.empty() ? "" : " && ") + x;
  return s;
}

// Conditions on axis `ax` for the padded coordinate expression `v` (validity, and whether to write).
void axis_checks(const PermAxis& m, const std::string& v, std::vector<std::string>* ok, std::vector<std::string>* wr) {
  if (m.check_low) ok->push_back(v + " >= " + num(m.lower));
  if (m.check_high) ok->push_back(v + " < " + num(m.lower + m.dim));
  if (m.check_write && wr) wr->push_back(v + " < " + num(m.limit));
}

// The padded coordinate of `axis` at tile position (ia, ib).
std::string tile_coord(int axis, const PermDigit& a, const PermDigit& b, const std::string& ia, const std::string& ib) {
  std::string v = "v" + num(axis);
  if (a.axis == axis) v += " + " + ia + " * " + num(a.weight);
  if (b.axis == axis) v += " + " + ib + " * " + num(b.weight);
  return "(" + v + ")";
}

// Element loops: ia along A (destination-contiguous, innermost: contiguous stores), ib along B.
std::vector<std::string> scalar_loops(const Permutation& perm, const PermDigit& a, const PermDigit& b, int64_t ta,
                                      int64_t tb) {
  std::vector<std::string> ok = {"g_ok"}, wr;
  std::vector<int> tile_axes = {a.axis};
  if (b.axis != a.axis) tile_axes.push_back(b.axis);
  for (int ax : tile_axes)
    if (ax >= 0) axis_checks(perm.axes[static_cast<size_t>(ax)], tile_coord(ax, a, b, "ia", "ib"), &ok, &wr);
  std::vector<std::string> body;
  body.push_back("for (int ib = 0; ib < " + num(tb) + "; ++ib) {");
  body.push_back("  for (int ia = 0; ia < " + num(ta) + "; ++ia) {");
  std::string dst_i = "d_off + ib * " + num(b.dst_stride) + " + ia" + (a.dst_stride == 1 ? "" : " * " + num(a.dst_stride));
  std::string src_i = "s_off + ib * " + num(b.src_stride) + " + ia * " + num(a.src_stride);
  std::string store = "dst[" + dst_i + "] = (" + join(ok) + ") ? CONVERT(src[" + src_i + "]) : (DST_T)0;";
  body.push_back(wr.empty() ? "    " + store : "    if (" + join(wr) + ") " + store);
  body.push_back("  }");
  body.push_back("}");
  return body;
}

// Width of the register transpose: V x V blocks need V | ta and V | tb, and masks that act on whole rows
// (axis of A) or whole columns (axis of B); an A digit that overshoots the destination would need partial
// stores, so it stays scalar.
int vector_width(int64_t ta, int64_t tb, const PermDigit& a, const PermDigit& b, const Permutation& perm) {
  if (a.axis >= 0 && a.axis == b.axis && perm.axes[static_cast<size_t>(a.axis)].masked()) return 1;
  if (a.axis >= 0 && perm.axes[static_cast<size_t>(a.axis)].check_write) return 1;
  // Measured on PoCL (perf/suite.cpp): 16-wide transposes pay when A is short (b_fs_yx_fsv16, and when a
  // conversion is fused), narrower ones when A is long (bfyx -> byxf, b_fs_yx_fsv16 -> bfyx).
  const int widest = ta <= 16 ? 16 : ta <= 64 ? 8 : 4;
  for (int v : {16, 8, 4})
    if (v <= widest && ta % v == 0 && tb % v == 0) return v;
  return 1;
}

// V x V register transpose: V vector loads along B (source-contiguous), V vector stores along A
// (destination-contiguous). Rows of padding load as zero; padding columns store zero.
std::vector<std::string> transpose_loops(const ReorderParams& p, const Permutation& perm, const PermDigit& a,
                                         const PermDigit& b, int64_t ta, int64_t tb, int vec) {
  const std::string V = num(vec), st = cl_type(p.src.data_type()) + V, dt = cl_type(p.dst.data_type()) + V;
  const char* comp = "0123456789abcdef";
  std::vector<std::string> body;
  body.push_back("for (int ib = 0; ib < " + num(tb) + "; ib += " + V + ") {");
  body.push_back("  for (int ia = 0; ia < " + num(ta) + "; ia += " + V + ") {");
  for (int i = 0; i < vec; ++i) {
    std::vector<std::string> ok = {"g_ok"};
    if (a.axis >= 0) axis_checks(perm.axes[static_cast<size_t>(a.axis)], tile_coord(a.axis, a, b, "(ia + " + num(i) + ")", "ib"), &ok, nullptr);
    std::string load = "vload" + V + "(0, src + s_off + ib + (ia + " + num(i) + ") * " + num(a.src_stride) + ")";
    body.push_back("    const " + st + " r" + num(i) + " = (" + join(ok) + ") ? " + load + " : (" + st + ")0;");
  }
  for (int j = 0; j < vec; ++j) {
    std::vector<std::string> ok, wr;
    if (b.axis >= 0) axis_checks(perm.axes[static_cast<size_t>(b.axis)], tile_coord(b.axis, a, b, "ia", "(ib + " + num(j) + ")"), &ok, &wr);
    std::string col = "(" + st + ")(";
    for (int i = 0; i < vec; ++i) col += std::string(i ? ", " : "") + "r" + num(i) + ".s" + comp[j];
    col += ")";
    std::string value = "CONVERT_V(" + col + ")";
    if (!ok.empty()) value = "(" + join(ok) + ") ? " + value + " : (" + dt + ")0";
    std::string store = "vstore" + V + "(" + value + ", 0, dst + d_off + (ib + " + num(j) + ") * " + num(b.dst_stride) + " + ia);";
    body.push_back(wr.empty() ? "    " + store : "    if (" + join(wr) + ") " + store);
  }
  body.push_back("  }");
  body.push_back("}");
  return body;
}

// Width of vector row copies when A is contiguous in both layouts: V | ta and no masks along A.
int row_width(int64_t ta, const PermDigit& a, const Permutation& perm) {
  if (a.axis >= 0 && perm.axes[static_cast<size_t>(a.axis)].masked()) return 1;
  for (int v : {16, 8, 4})
    if (ta % v == 0) return v;
  return 1;
}

// A is contiguous in both layouts: each of the tb rows is ta elements copied with vector loads and stores.
std::vector<std::string> row_loops(const ReorderParams& p, const Permutation& perm, const PermDigit& a,
                                   const PermDigit& b, int64_t ta, int64_t tb, int vec) {
  const std::string V = num(vec), dt = cl_type(p.dst.data_type()) + V;
  std::vector<std::string> ok = {"g_ok"}, wr;
  if (b.axis >= 0 && b.axis != a.axis) axis_checks(perm.axes[static_cast<size_t>(b.axis)], tile_coord(b.axis, a, b, "0", "ib"), &ok, &wr);
  std::vector<std::string> body;
  body.push_back("for (int ib = 0; ib < " + num(tb) + "; ++ib) {");
  if (!wr.empty()) body.push_back("  if (!(" + join(wr) + ")) continue;");
  body.push_back("  const bool ok = " + join(ok) + ";");
  body.push_back("  for (int ia = 0; ia < " + num(ta) + "; ia += " + V + ") {");
  body.push_back("    vstore" + V + "(ok ? CONVERT_V(vload" + V + "(0, src + s_off + ib * " + num(b.src_stride) + " + ia)) : (" + dt +
                 ")0, 0, dst + d_off + ib * " + num(b.dst_stride) + " + ia);");
  body.push_back("  }");
  body.push_back("}");
  return body;
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
    // When A is contiguous in the source too, B extends the tile along the next destination digit, so the
    // whole tile is one contiguous destination run read as runs of A.
    if (bit == grid.end() && !grid.empty()) bit = grid.end() - 1;
    if (bit != grid.end()) {
      b = *bit;
      grid.erase(bit);
    }
    const int64_t ta = tile_size(a.extent, cfg.cap_a);
    const int64_t tb = tile_size(b.extent, std::max<int64_t>(16, cfg.tile / ta));
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
    // Masks: axes advanced by A or B are tested in the loops; any other once per work-item.
    std::vector<std::string> grid_ok, grid_wr;
    for (size_t ax = 0; ax < perm.axes.size(); ++ax) {
      const PermAxis& m = perm.axes[ax];
      if (!m.masked()) continue;
      const std::string vname = "v" + num(static_cast<int64_t>(ax));
      lines.push_back("const IDX_T " + vname + " = " + (axis_v[ax].empty() ? "0" : axis_v[ax]) + ";");
      if (a.axis != static_cast<int>(ax) && b.axis != static_cast<int>(ax)) axis_checks(m, vname, &grid_ok, &grid_wr);
    }
    if (!grid_wr.empty()) lines.push_back("if (!(" + join(grid_wr) + ")) return;");
    lines.push_back("const bool g_ok = " + (grid_ok.empty() ? std::string("true") : join(grid_ok)) + ";");

    const bool b_src_contiguous = b.extent > 1 && b.src_stride == 1;
    int vec = 1;
    std::vector<std::string> body;
    if (b_src_contiguous && (vec = vector_width(ta, tb, a, b, perm)) > 1) {
      body = transpose_loops(p, perm, a, b, ta, tb, vec);
    } else if (a.src_stride == 1 && (vec = row_width(ta, a, perm)) > 1) {
      body = row_loops(p, perm, a, b, ta, tb, vec);
    } else {
      vec = 1;
      body = scalar_loops(perm, a, b, ta, tb);
    }
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
    if (vec > 1) jit.def("CONVERT_V(v)", convert_expr(p.src.data_type(), p.dst.data_type(), "v", vec));
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
