// libFuzzer target: layout text, as the CLI and API take it. Lines: source format, data type, dims, lower and
// upper padding; destination format, data type, lower and upper padding. Whatever the text, building the
// layouts either works or throws clreorder::Error. When both work and are small: both plans are bijections, the
// strided permutation agrees with both plans on every tuple (tests/plan_checks.hpp, as the host tests check),
// the host reference reorders source -> destination -> source back to the source's elements (same types), and
// every implementation that accepts the pair generates its kernel in both tunings.
#include <cstdint>
#include <string>
#include <vector>

#include "clreorder/error.hpp"
#include "clreorder/format.hpp"
#include "clreorder/kernel_selector.hpp"
#include "clreorder/layout.hpp"
#include "clreorder/reference.hpp"
#include "clreorder/reorder.hpp"
#include "fuzz_support.hpp"
#include "permute.hpp"
#include "plan_checks.hpp"

using namespace clreorder;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out(9);
  size_t at = 0;
  for (size_t k = 0; k < out.size() && at <= text.size(); ++k) {
    const size_t nl = text.find('\n', at);
    out[k] = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return out;
}

Dims dims_or_empty(const std::string& t) { return t.empty() ? Dims{} : parse_dims(t); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 512) return 0;
  const std::vector<std::string> f = lines_of(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const Dims dims = parse_dims(f[2]);
    const Layout src(format_from_name(f[0]), parse_data_type(f[1]), dims, dims_or_empty(f[3]), dims_or_empty(f[4]));
    const Layout dst(format_from_name(f[5].empty() ? f[0] : f[5]), f[6].empty() ? src.data_type() : parse_data_type(f[6]),
                     dims, dims_or_empty(f[7]), dims_or_empty(f[8]));
    check_compatible(src, dst);
    if (src.elements() > 4096 || dst.elements() > 4096) return 0;
    for (const Layout* l : {&src, &dst}) {
      const std::string why = clreorder_test::plan_bijection_error(*l);
      fuzz_require(why.empty(), "plan of " + l->describe() + ": " + why);
    }
    if (make_permutation(src, dst).reject.empty()) {
      const std::string why = clreorder_test::check_permutation(src, dst);
      fuzz_require(why.empty(), "permutation " + src.describe() + " -> " + dst.describe() + ": " + why);
    }
    const std::vector<uint8_t> a = make_pattern(src);
    std::vector<uint8_t> b(static_cast<size_t>(dst.bytes())), back(a.size()), want(a.size());
    reference_reorder(src, a.data(), dst, b.data());
    if (src.data_type() == dst.data_type()) {
      reference_reorder(dst, b.data(), src, back.data());
      reference_reorder(src, a.data(), src, want.data());
      fuzz_require(back == want, "reference round trip lost elements: " + src.describe() + " -> " + dst.describe());
    }
    for (const char* tuning : {"cpu", "gpu"}) {
      const DeviceInfo dev = clreorder_test::tuned_device(tuning);
      for (const auto& impl : KernelSelector::instance().impls()) {
        if (!impl->reject(ReorderParams{src, dst, dev, {}}).empty()) continue;
        const KernelData kd = plan_reorder(dev, src, dst, impl->name());
        fuzz_require(kd.source.code.find(kd.source.entry) != std::string::npos, "a kernel without its entry point");
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
