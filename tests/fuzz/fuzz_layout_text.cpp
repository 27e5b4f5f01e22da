// libFuzzer target: layout text, as the CLI and API take it. Lines: source format, data type, dims, lower and
// upper padding; destination format, data type, lower and upper padding. Whatever the text, building the
// layouts either works or throws clreorder::Error. When both work and are small: the host reference reorders
// source -> destination -> source back to the source's elements (same types), the strided permutation agrees
// with both plans on every tuple it writes, and every implementation that accepts the pair generates its
// kernel in both tunings.
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

// Every tuple the permutation writes, with a coordinate, reads what the source plan says for it.
void check_permutation(const Layout& src, const Layout& dst) {
  const Permutation p = make_permutation(src, dst);
  if (!p.reject.empty()) return;
  std::vector<Dims> coord_at(static_cast<size_t>(dst.elements()));
  std::vector<char> valid_at(static_cast<size_t>(dst.elements()), 0);
  int64_t off, c[8];
  for (int64_t t = 0; t < dst.plan().digit_space; ++t) {
    const bool valid = dst.plan().decode(t, &off, c);
    valid_at[static_cast<size_t>(off)] = valid;
    coord_at[static_cast<size_t>(off)] = Dims(c, c + dst.rank());
  }
  std::vector<char> written(static_cast<size_t>(dst.elements()), 0);
  for (int64_t n = 0; n < p.count(); ++n) {
    int64_t rest = n, doff = p.dst_base, soff = p.src_base;
    bool write = true;
    std::vector<int64_t> v(p.axes.size(), 0);
    for (size_t k = p.digits.size(); k-- > 0;) {
      const PermDigit& d = p.digits[k];
      const int64_t i = rest % d.extent;
      rest /= d.extent;
      doff += i * d.dst_stride;
      soff += i * d.src_stride;
      if (d.axis >= 0) v[static_cast<size_t>(d.axis)] += i * d.weight;
    }
    for (size_t a = 0; a < p.axes.size(); ++a) write = write && v[a] < p.axes[a].limit;
    if (!write) continue;
    fuzz_require(doff >= 0 && doff < dst.elements() && !written[static_cast<size_t>(doff)]++,
                 "permutation writes outside or twice: " + src.describe() + " -> " + dst.describe());
    if (!valid_at[static_cast<size_t>(doff)]) continue;
    fuzz_require(soff == src.plan().offset(coord_at[static_cast<size_t>(doff)].data()),
                 "permutation reads another element than the plans: " + src.describe() + " -> " + dst.describe());
  }
  for (char w : written) fuzz_require(w == 1, "permutation misses an element: " + src.describe() + " -> " + dst.describe());
}

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
    fuzz_check_bijection(src);
    fuzz_check_bijection(dst);
    check_permutation(src, dst);
    const std::vector<uint8_t> a = make_pattern(src);
    std::vector<uint8_t> b(static_cast<size_t>(dst.bytes())), back(a.size()), want(a.size());
    reference_reorder(src, a.data(), dst, b.data());
    if (src.data_type() == dst.data_type()) {
      reference_reorder(dst, b.data(), src, back.data());
      reference_reorder(src, a.data(), src, want.data());
      fuzz_require(back == want, "reference round trip lost elements: " + src.describe() + " -> " + dst.describe());
    }
    for (const char* tuning : {"cpu", "gpu"}) {
      DeviceInfo dev;
      dev.type = tuning;
      dev.max_work_group = 256;
      for (const auto& impl : KernelSelector::instance().impls()) {
        if (!impl->reject(ReorderParams{src, dst, dev}).empty()) continue;
        const KernelData kd = plan_reorder(dev, src, dst, impl->name());
        fuzz_require(kd.source.code.find(kd.source.entry) != std::string::npos, "a kernel without its entry point");
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
