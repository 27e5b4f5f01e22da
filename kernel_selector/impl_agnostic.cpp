// The `agnostic` implementation: one kernel per type pair (kernels_cl/reorder_agnostic.cl) that reads both
// index plans from a table passed at run time, so a shape it has not seen needs no compile. It accepts
// every pair the generic kernel accepts; the selector lists it after `generic`, so it runs only when asked
// for (forced, or by a caller that must not wait for a compile).
#include <algorithm>

#include "clreorder/error.hpp"
#include "clreorder/kernel_selector.hpp"
#include "codegen.hpp"
#include "impls.hpp"

namespace clreorder {

namespace {

constexpr size_t kAgnosticLocal = 64;
constexpr int64_t kChunk = 64;

// One plan in the table layout reorder_agnostic.cl reads.
void put_plan(std::vector<int64_t>& t, const IndexPlan& p) {
  t.push_back(p.base);
  t.push_back(static_cast<int64_t>(p.dims.size()));
  t.insert(t.end(), p.dims.begin(), p.dims.end());
  t.push_back(static_cast<int64_t>(p.digits.size()));
  auto pow2 = [](int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
  auto log2 = [](int64_t v) {
    int64_t n = 0;
    while ((int64_t{1} << n) < v) ++n;
    return n;
  };
  for (const PlanDigit& g : p.digits)
    t.insert(t.end(), {g.dim, g.divisor, g.extent, g.stride, g.needs_mod ? 1 : 0, pow2(g.divisor) ? log2(g.divisor) : -1,
                       pow2(g.extent) ? g.extent - 1 : -1});
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
  std::string reject(const ReorderParams&) const override { return ""; }
  KernelData generate(const ReorderParams& p) const override {
    KernelData kd;
    kd.impl = name();
    Jit jit = reorder_jit(p, "reorder_agnostic", kd);
    jit.set("IDX_T", "long");  // any shape: 64-bit indices always
    const IndexPlan& dp = p.dst.plan();
    // A work-item walks up to kChunk values of the destination's innermost digit (one row).
    const int64_t ext0 = dp.digits.back().extent, chunk = std::min(ext0, kChunk);
    const int64_t items = dp.digit_space / ext0 * ((ext0 + chunk - 1) / chunk);
    kd.plan_args = {items, p.src.dims() != p.dst.dims() ? 1 : 0, chunk};
    put_plan(kd.plan_args, dp);
    put_plan(kd.plan_args, p.src.plan());
    finish_kernel(kd, jit, "reorder_agnostic.cl", static_cast<size_t>(items), kAgnosticLocal, p.device);
    return kd;
  }
};

}  // namespace

std::unique_ptr<ReorderImpl> make_agnostic_impl() { return std::make_unique<AgnosticReorder>(); }

}  // namespace clreorder
