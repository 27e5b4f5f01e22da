// The `agnostic` implementation: one kernel per type pair (kernels_cl/reorder_agnostic.cl) that reads both
// index plans from a table passed at run time, so a shape it has not seen needs no compile. It accepts
// every pair the generic kernel accepts; the selector lists it after `generic`, so it runs only when asked
// for (forced, or by a caller that must not wait for a compile).
#include "clreorder/error.hpp"
#include "clreorder/kernel_selector.hpp"
#include "codegen.hpp"
#include "impls.hpp"

namespace clreorder {

namespace {

constexpr size_t kAgnosticLocal = 64;

// One plan in the table layout reorder_agnostic.cl reads.
void put_plan(std::vector<int64_t>& t, const IndexPlan& p) {
  t.push_back(p.base);
  t.push_back(static_cast<int64_t>(p.dims.size()));
  t.insert(t.end(), p.dims.begin(), p.dims.end());
  t.push_back(static_cast<int64_t>(p.digits.size()));
  for (const PlanDigit& g : p.digits) t.insert(t.end(), {g.dim, g.divisor, g.extent, g.stride, g.needs_mod ? 1 : 0});
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
    kd.plan_args = {dp.digit_space, p.src.dims() != p.dst.dims() ? 1 : 0};
    put_plan(kd.plan_args, dp);
    put_plan(kd.plan_args, p.src.plan());
    finish_kernel(kd, jit, "reorder_agnostic.cl", static_cast<size_t>(dp.digit_space), kAgnosticLocal, p.device);
    return kd;
  }
};

}  // namespace

std::unique_ptr<ReorderImpl> make_agnostic_impl() { return std::make_unique<AgnosticReorder>(); }

}  // namespace clreorder
