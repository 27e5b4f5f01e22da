// The `agnostic` implementation: one kernel per type pair and walk (kernels_cl/reorder_agnostic.cl) that reads
// both index plans from a table passed at run time, so a shape it has not seen needs no compile. It accepts
// every pair the generic kernel accepts (but u4 and i4 destinations whose rows do not fill whole bytes); the
// selector lists it after `generic`, so it runs only when asked for (forced, or by a caller that must not
// wait for a compile).
#include <algorithm>

#include "clreorder/error.hpp"
#include "clreorder/kernel_selector.hpp"
#include "codegen.hpp"
#include "impls.hpp"
#include "permute.hpp"

namespace clreorder {

namespace {

constexpr size_t kAgnosticLocal = 64;
constexpr int64_t kChunk = 64;
constexpr size_t kPermDigits = 40;  // CR_AG_PERM_DIGITS
constexpr size_t kAxes = 8;         // CR_AG_AXES

// The table of mode 2 (reorder_agnostic.cl's head comment), or empty when the pair is no strided permutation
// or does not fit the kernel's arrays. The inner digit is cut into pieces so that no work-item walks more
// than its share, and each work-item takes whole rows: on a CPU enough of them for its loop to outweigh the
// divisions that place it (about a thousand elements), on a GPU one, so that neighbours run side by side.
std::vector<int64_t> permutation_table(const ReorderParams& p) {
  const Permutation perm = make_permutation(p.src, p.dst);
  if (!perm.reject.empty() || perm.digits.size() + 1 > kPermDigits) return {};
  std::vector<int64_t> slot(perm.axes.size(), -1);  // masked axis -> its place in the table
  std::vector<int64_t> axes;
  for (size_t a = 0; a < perm.axes.size(); ++a) {
    const PermAxis& m = perm.axes[a];
    if (!m.masked()) continue;
    slot[a] = static_cast<int64_t>(axes.size() / 3);
    axes.insert(axes.end(), {m.lower, m.dim, m.limit});
  }
  if (axes.size() / 3 > kAxes) return {};
  const bool cpu = tuning_of(p.device) == Tuning::cpu;
  std::vector<PermDigit> digits = perm.digits;
  const PermDigit inner = digits.back();
  const int64_t piece = std::min(inner.extent, cpu ? int64_t{1024} : kChunk);
  digits.back() = PermDigit{inner.axis, inner.weight * piece, (inner.extent + piece - 1) / piece,
                            inner.dst_stride * piece, inner.src_stride * piece};
  digits.push_back(inner);
  digits.back().extent = piece;
  const int64_t rows = extent_product(digits) / piece;
  const int64_t per_item = cpu ? std::clamp<int64_t>(rows / 256, 1, std::max<int64_t>(1, 1024 / piece)) : 1;
  const int64_t items = (rows + per_item - 1) / per_item;
  std::vector<int64_t> t = {items, 2, per_item, rows, static_cast<int64_t>(digits.size()), perm.dst_base,
                            perm.src_base, static_cast<int64_t>(axes.size() / 3), inner.extent};
  for (const PermDigit& d : digits) {
    const int64_t masked = perm.masked(d) ? slot[static_cast<size_t>(d.axis)] : -1;
    t.insert(t.end(), {d.extent, d.dst_stride, d.src_stride, masked, d.weight});
  }
  t.insert(t.end(), axes.begin(), axes.end());
  return t;
}

// One plan in the table layout reorder_agnostic.cl reads.
void put_plan(std::vector<int64_t>& t, const IndexPlan& p) {
  t.push_back(p.base);
  t.push_back(static_cast<int64_t>(p.dims.size()));
  t.insert(t.end(), p.dims.begin(), p.dims.end());
  t.push_back(static_cast<int64_t>(p.digits.size()));
  for (const PlanDigit& g : p.digits)
    t.insert(t.end(), {g.dim, g.divisor, g.extent, g.stride, g.needs_mod ? 1 : 0, log2_exact(g.divisor),
                       log2_exact(g.extent) >= 0 ? g.extent - 1 : -1});
  t.push_back(static_cast<int64_t>(p.pdims.size()));
  for (const PlanDim& d : p.pdims) {
    t.push_back(static_cast<int64_t>(d.axes.size()));
    t.push_back(d.owned ? 1 : 0);
    for (size_t k = 0; k < d.axes.size(); ++k) t.insert(t.end(), {d.axes[k], d.sizes[k], d.lower[k]});
  }
}

class AgnosticReorder : public ReorderImpl {
 public:
  const char* name() const override { return "agnostic"; }
  std::string reject(const ReorderParams& p) const override { return shared_bytes(p.dst, false); }
  Rank rank(const ReorderParams&) const override { return {kRankAgnostic, ""}; }
  KernelData generate(const ReorderParams& p) const override {
    KernelData kd;
    kd.impl = name();
    // Per-index parameters and compensation sums are read at the destination coordinate, which the plan walk
    // (mode 0 and 1) decodes into dc and the permutation walk (mode 2) does not.
    auto dc = [](int axis) { return "dc[" + num(axis) + "]"; };
    Jit jit = reorder_jit(p, "reorder_agnostic", kd, [&](int axis, int) { return TableIndex{dc(axis)}; });
    jit.set("IDX_T", "long");  // any shape: 64-bit indices always
    // Compensation sums are indexed by the run-time dims of the destination plan, not compiled-in ones.
    def_compensate(jit, compensate_macros(p.conversion, dc, [](int axis) { return "dims[" + num(axis) + "]"; }), true);
    // The plan walk also for a u4 or i4 destination: its rows, whole bytes each, go to one work-item.
    const bool coordinates = p.conversion.per_index() || p.conversion.compensation.present();
    const bool plan_walk = coordinates || is_nibble(p.dst.data_type());
    if (!plan_walk) kd.plan_args = permutation_table(p);
    if (kd.plan_args.empty()) {
      const IndexPlan& dp = p.dst.plan();
      // A work-item walks up to kChunk values of the destination's innermost digit (one row).
      const int64_t ext0 = dp.digits.back().extent, chunk = std::min(ext0, kChunk);
      const int64_t items = dp.digit_space / ext0 * ((ext0 + chunk - 1) / chunk);
      kd.plan_args = {items, p.src.dims() != p.dst.dims() ? 1 : 0, chunk};
      put_plan(kd.plan_args, dp);
      put_plan(kd.plan_args, p.src.plan());
    }
    // The kernel holds its table's walk alone: one kernel per type pair and mode, each 0.4-0.6 of the
    // compile of all three on PoCL.
    jit.def("CR_AG_MODE", num(kd.plan_args[1]));
    finish_kernel(kd, jit, "reorder_agnostic.cl", static_cast<size_t>(kd.plan_args[0]), kAgnosticLocal, p.device);
    return kd;
  }
};

}  // namespace

std::unique_ptr<ReorderImpl> make_agnostic_impl() { return std::make_unique<AgnosticReorder>(); }

}  // namespace clreorder
