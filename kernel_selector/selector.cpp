// The kernel selector: the implementation list, the choice by rank, and the generic implementation.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "clreorder/error.hpp"
#include "clreorder/kernel_selector.hpp"
#include "clreorder/reference.hpp"
#include "codegen.hpp"
#include "embedded.hpp"
#include "impls.hpp"
#include "probe.hpp"

namespace clreorder {

namespace {

constexpr size_t kGenericLocal = 64;

std::string hex(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}


// Every pair (but u4 and i4 destinations whose bytes its work-items would share: shared_bytes()): one
// work-item per destination element, or byte (see kernels_cl/reorder_generic.cl).
class GenericReorder : public ReorderImpl {
 public:
  const char* name() const override { return "generic"; }
  std::string reject(const ReorderParams& p) const override { return shared_bytes(p.dst, true); }
  Rank rank(const ReorderParams&) const override { return {kRankGeneric, ""}; }
  KernelData generate(const ReorderParams& p) const override {
    const IndexPlan& dp = p.dst.plan();
    KernelData kd;
    kd.impl = name();
    // The arithmetic's per-index values are read at the destination coordinate.
    Jit jit = reorder_jit(p, "reorder_generic", kd, [](int axis, int) { return TableIndex{"d_c" + num(axis)}; });
    std::string decode = decode_stmts(dp, "p", "d_");
    std::string coords = "d_";
    if (p.src.dims() != p.dst.dims()) {
      // A reshape: the destination coordinate's canonical row-major index, split over the source's dims.
      std::vector<std::string> lines = {"IDX_T r_lin = " + row_major_index(p.dst.dims(), coord_names(p.dst.rank(), "d_")) + ";"};
      const std::vector<std::string> split = split_row_major(p.src.dims(), "r_lin", coord_names(p.src.rank(), "s_"));
      lines.insert(lines.end(), split.begin(), split.end());
      decode += " \\\n  " + macro_lines(lines);
      coords = "s_";
    }
    int64_t items;
    if (is_nibble(p.dst.data_type())) {
      // Work-item w writes byte w: tuples 2w and 2w + 1 (shared_bytes() holds), shifted by one where a dense
      // plan starts in the middle of a byte.
      const int64_t shift = dp.dense() ? dp.base % 2 : 0;
      items = (dp.digit_space + shift + 1) / 2;
      jit.def("DST_FIRST(w)", "max((IDX_T)0, (IDX_T)" + num(shift) + " - 2 * (w))")
          .def("DST_END(w)", "min((IDX_T)2, (IDX_T)" + num(dp.digit_space + shift) + " - 2 * (w))")
          .def("DST_TUPLE(w, q)", "(2 * (w) + (q) - " + num(shift) + ")");
    } else {
      const Walk walk = walk_of(p);
      items = dp.digit_space / walk.extent * walk.pieces;
      if (walk.extent == 1) {
        jit.def("DST_FIRST(w)", "0").def("DST_END(w)", "1").def("DST_TUPLE(w, q)", "(w)");
      } else {
        const std::string in = num(walk.inner), first = "(((w) / " + in + ") % " + num(walk.pieces) + ") * " + num(walk.chunk);
        jit.def("DST_FIRST(w)", first)
            .def("DST_END(w)", "min((IDX_T)" + num(walk.extent) + ", " + first + " + " + num(walk.chunk) + ")")
            .def("DST_TUPLE(w, q)", "((w) / " + in + " / " + num(walk.pieces) + ") * " + num(walk.extent * walk.inner) +
                                        " + (q) * " + in + " + (w) % " + in);
      }
    }
    jit.def("DST_ITEMS", items)
        .def("DST_DECODE(p)", decode)
        .def("SRC_OFFSET", offset_expr(p.src.plan(), coord_names(p.src.rank(), coords)));
    finish_kernel(kd, jit, "reorder_generic.cl", static_cast<size_t>(items), kGenericLocal, p.device);
    return kd;
  }

 private:
  // The digit a work-item walks pieces of (`chunk` values each, `pieces` per digit), and the product of the
  // extents of the digits inside it; extent 1: one tuple per work-item.
  struct Walk {
    int64_t extent = 1, inner = 1, chunk = 1, pieces = 1;
  };
  static constexpr int64_t kCompensationChunk = 64;

  // With compensation sums: the largest digit whose pdim holds none of the sums' axes (so that a piece has
  // one index, summed with one atomic), not the innermost where another exists, so that neighbouring
  // work-items still write neighbouring elements.
  static Walk walk_of(const ReorderParams& p) {
    Walk walk;
    const Compensation& c = p.conversion.compensation;
    if (!c.present()) return walk;
    const IndexPlan& dp = p.dst.plan();
    const size_t n = dp.digits.size();
    int best = -1;
    for (size_t k = 0; k < n; ++k) {
      const std::vector<int>& axes = dp.pdims[static_cast<size_t>(dp.digits[k].dim)].axes;
      if (std::find(axes.begin(), axes.end(), c.axis) != axes.end() ||
          std::find(axes.begin(), axes.end(), c.outer_axis) != axes.end() || dp.digits[k].extent < 2)
        continue;
      const bool inner_only = k + 1 == n;
      if (best < 0 || (best + 1 == static_cast<int>(n) && !inner_only) ||
          (!inner_only && dp.digits[k].extent > dp.digits[static_cast<size_t>(best)].extent))
        best = static_cast<int>(k);
    }
    if (best < 0) return walk;
    walk.extent = dp.digits[static_cast<size_t>(best)].extent;
    for (size_t k = static_cast<size_t>(best) + 1; k < n; ++k) walk.inner *= dp.digits[k].extent;
    walk.chunk = std::min(walk.extent, kCompensationChunk);
    walk.pieces = (walk.extent + walk.chunk - 1) / walk.chunk;
    return walk;
  }
};

cl::NDRange nd_range(const std::vector<size_t>& v) {
  return v.size() == 1 ? cl::NDRange(v[0]) : v.size() == 2 ? cl::NDRange(v[0], v[1]) : cl::NDRange(v[0], v[1], v[2]);
}

}  // namespace

cl::NDRange KernelData::global_range() const { return nd_range(global); }

cl::NDRange KernelData::local_range() const { return nd_range(local); }

Jit reorder_jit(const ReorderParams& p, const std::string& prefix, KernelData& kd, const CoordExpr& coord,
                const TableShapes& shapes) {
  kd.source.entry = prefix;  // finish_kernel() appends the hash of the generated text
  Jit jit;
  jit.def("KERNEL_NAME", kd.source.entry)
      .def("SRC_T", cl_type(p.src.data_type()))
      .def("DST_T", cl_type(p.dst.data_type()))
      .def("IDX_T", needs_64bit(p.src, p.dst) ? "long" : "int")
      // Without coordinates a per-index CONVERT names a function that does not exist: a kernel that uses it
      // fails to build instead of converting wrongly.
      .def("CONVERT(v)", p.conversion.per_index() && !coord ? "cr_per_index_needs_coordinates(v)" : convert_expr(p, "v", 1, coord))
      .def("CR_ZERO_PADDING", p.conversion.padding == Padding::zero ? "1" : "0")
      .def("CR_DIVIDES", divides(p.conversion) ? "1" : "0")
      .def("CR_VALUE_TABLES", value_tables(p.conversion, shapes))
      .def("CR_VALUE_ARGS", value_args(p.conversion))
      // u4 and i4: elements are nibbles of the byte pointers (kernels_cl/common.cl).
      .def("SRC_AT(o)", p.src.data_type() == DataType::u4   ? "CR_U4_AT(src, o)"
                        : p.src.data_type() == DataType::i4 ? "CR_I4_AT(src, o)"
                                                            : "src[o]")
      .def("CR_STORE_BEGIN", is_nibble(p.dst.data_type()) ? "CR_NIB_BEGIN" : "")
      .def("CR_STORE(o, v)", is_nibble(p.dst.data_type()) ? "CR_NIB_STORE(o, v)" : "dst[o] = (v);")
      .def("CR_STORE_END", is_nibble(p.dst.data_type()) ? "CR_NIB_END" : "");
  def_compensate(jit, compensate_macros(
                          p.conversion, [&](int axis) { return coord ? coord(axis, 0).base : std::string("cr_no_coordinates"); },
                          [&](int axis) { return num(p.dst.dims()[static_cast<size_t>(axis)]); }));
  return jit;
}

KernelSource named_by_text(const std::string& prefix, Jit jit, const std::string& body) {
  // Named after everything generated (not only the layouts): kernels of one pair generated for another
  // tuning, cache size or index width differ, and must be able to share a program.
  KernelSource ks;
  ks.entry = prefix + "_" + hex(fnv1a(jit.set("KERNEL_NAME", prefix).wrap(body)));
  ks.code = jit.set("KERNEL_NAME", ks.entry).wrap(body);
  ks.options = "-cl-std=CL1.2";
  return ks;
}

void finish_kernel(KernelData& kd, const Jit& jit, const char* template_file, size_t count, size_t local,
                   const DeviceInfo& device) {
  kd.source = named_by_text(kd.source.entry, jit, embedded_kernel(template_file));
  kd.source.options = build_options(kd.source.code, device);
  if (device.max_work_group) local = std::min(local, device.max_work_group);
  kd.local = {local};
  kd.global = {round_up(count, local)};
}

std::unique_ptr<ReorderImpl> make_generic_impl() { return std::make_unique<GenericReorder>(); }

KernelSelector::KernelSelector() {
  // Specialised implementations go first, the generic one last (it accepts everything); local's rank depends
  // on the device type (first on GPUs, after generic on CPUs), so it sits just before generic. The
  // shape-agnostic kernel is kept beside the list: it is never chosen for speed, only asked for by name.
  impls_.push_back(make_lanes_impl());
  impls_.push_back(make_staged_impl());
  impls_.push_back(make_tiled_impl());
  impls_.push_back(make_local_impl());
  impls_.push_back(make_generic_impl());
  agnostic_ = make_agnostic_impl();
}

const KernelSelector& KernelSelector::instance() {
  static const KernelSelector selector;
  return selector;
}

KernelData KernelSelector::select(const ReorderParams& p, const std::string& force_in) const {
  check_compatible(p.src, p.dst);
  check_params(p.conversion, p.dst);
  for (const Layout* l : {&p.src, &p.dst})
    if (l->data_type() == DataType::f64 && !p.device.fp64)
      throw Error(l->describe() + ": f64 needs double support (cl_khr_fp64), which device '" + p.device.name +
                  "' (" + p.device.platform + ") lacks");
  std::string force = force_in;
  if (force.empty()) {
    const char* env = std::getenv("CLREORDER_FORCE_IMPL");
    if (env && *env) force = env;
  }
  if (!force.empty()) {
    const ReorderImpl* impl = find(force);
    if (!impl) throw Error("unknown reorder implementation '" + force + "' (known: " + names() + ")");
    std::string why = impl->reject(p);
    if (!why.empty())
      throw Error("implementation '" + force + "' declines " + p.src.describe() + " -> " + p.dst.describe() + ": " + why);
    return impl->generate(p);
  }
  // The generic implementation's reason stands for all: it declines only what none can do.
  for (const Verdict& v : explain(p))
    if (v.chosen) return find(v.impl)->generate(p);
  throw Error("no implementation accepts " + p.src.describe() + " -> " + p.dst.describe() + ": " + impls_.back()->reject(p));
}

const ReorderImpl* KernelSelector::find(const std::string& name) const {
  for (const auto& impl : impls_)
    if (name == impl->name()) return impl.get();
  return name == agnostic_->name() ? agnostic_.get() : nullptr;
}

std::string KernelSelector::names() const {
  std::string out;
  for (const auto& impl : impls_) out += std::string(out.empty() ? "" : ", ") + impl->name();
  return out + ", " + agnostic_->name();
}

std::vector<Verdict> KernelSelector::explain(const ReorderParams& p) const {
  std::vector<Verdict> out;
  Verdict* best = nullptr;
  for (const auto& impl : impls_) {
    Verdict v{impl->name(), impl->reject(p), {}, false};
    if (v.declines.empty()) v.rank = impl->rank(p);
    out.push_back(v);
  }
  for (Verdict& v : out)
    if (v.declines.empty() && (!best || v.rank.value < best->rank.value)) best = &v;
  if (best) best->chosen = true;
  Verdict a{agnostic_->name(), agnostic_->reject(p), {}, false};
  if (a.declines.empty()) a.rank = agnostic_->rank(p);
  out.push_back(a);
  return out;
}

KernelSource offset_probe_source(const Layout& src, const Layout& dst) {
  check_compatible(src, dst);
  const int r = src.rank();
  std::vector<std::string> logical = {"IDX_T lr = n;"};
  const std::vector<std::string> split = split_row_major(src.dims(), "lr", coord_names(r, ""));
  logical.insert(logical.end(), split.begin(), split.end());
  const std::string linear = row_major_index(dst.dims(), coord_names(r, "d_"));
  Jit jit;
  jit.def("KERNEL_NAME", "offset_probe")
      .def("IDX_T", needs_64bit(src, dst) ? "long" : "int")
      .def("LOGICAL_COUNT", src.logical_elements())
      .def("LOGICAL_DECODE(n)", macro_lines(logical))
      .def("SRC_OFFSET", offset_expr(src.plan(), coord_names(r, "")))
      .def("DST_COUNT", dst.plan().digit_space)
      .def("DST_DECODE(p)", decode_stmts(dst.plan(), "p", "d_"))
      .def("DST_LINEAR", linear);
  return named_by_text("offset_probe", jit, embedded_kernel("offset_probe.cl"));
}

}  // namespace clreorder
