// oneDNN's reorder of the same case. A clreorder layout becomes a oneDNN blocked memory descriptor
// directly (outer strides + inner blocks), so every case whose blocks are innermost can be compared,
// with no table of format tags. oneDNN's output is checked byte for byte against clreorder's host
// reference before its time is reported.
#include "onednn.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "clreorder/reference.hpp"

using namespace clreorder;

namespace {

std::optional<dnnl::memory::desc> to_onednn(const Layout& l, std::string* why) {
  const Format& f = l.format();
  const IndexPlan& plan = l.plan();
  dnnl_data_type_t dt;
  switch (l.data_type()) {
    case DataType::f32: dt = dnnl_f32; break;
    case DataType::f16: dt = dnnl_f16; break;
    case DataType::bf16: dt = dnnl_bf16; break;
    case DataType::i8: dt = dnnl_s8; break;
    case DataType::u8: dt = dnnl_u8; break;
    case DataType::i32: dt = dnnl_s32; break;
    default: *why = std::string("no oneDNN type for ") + to_string(l.data_type()); return std::nullopt;
  }
  if (f.swizzle()) { *why = "swizzled"; return std::nullopt; }
  for (int a = 0; a < l.rank(); ++a)
    if (l.pad_lower()[a] || l.pad_upper()[a]) { *why = "explicit padding"; return std::nullopt; }
  dnnl_memory_desc_t md;
  std::memset(&md, 0, sizeof md);
  md.ndims = l.rank();
  md.data_type = dt;
  md.format_kind = dnnl_blocked;
  bool in_blocks = false;
  for (size_t k = 0; k < plan.digits.size(); ++k) {
    const PlanDigit& g = plan.digits[k];
    if (plan.pdims[g.dim].axes.size() != 1) { *why = "fused axes"; return std::nullopt; }
    const int axis = plan.pdims[g.dim].axes[0];
    const bool outer = !g.needs_mod;
    if (outer) {
      if (in_blocks) { *why = "a block before an outer part"; return std::nullopt; }
      md.format_desc.blocking.strides[axis] = g.stride;
    } else {
      in_blocks = true;
      int n = md.format_desc.blocking.inner_nblks++;
      md.format_desc.blocking.inner_blks[n] = g.extent;
      md.format_desc.blocking.inner_idxs[n] = axis;
    }
  }
  for (int a = 0; a < l.rank(); ++a) {
    md.dims[a] = l.dims()[a];
    md.padded_dims[a] = plan.pdims[static_cast<size_t>(f.dim_of_axis(a))].extent;
  }
  return dnnl::memory::desc(md);
}

}  // namespace

bool onednn_available() { return true; }

OneDnnTiming onednn_reorder(const Layout& src, const Layout& dst, int runs) {
  OneDnnTiming t;
  auto smd = to_onednn(src, &t.why), dmd = to_onednn(dst, &t.why);
  if (!smd || !dmd) return t;
  try {
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    if (smd->get_size() != static_cast<size_t>(src.bytes()) || dmd->get_size() != static_cast<size_t>(dst.bytes())) {
      t.why = "oneDNN sizes differ from clreorder's";
      return t;
    }
    dnnl::memory sm(*smd, eng), dm(*dmd, eng);
    std::vector<uint8_t> pattern = make_pattern(src);
    std::memcpy(sm.get_data_handle(), pattern.data(), pattern.size());
    std::memset(dm.get_data_handle(), 0xCD, static_cast<size_t>(dst.bytes()));
    dnnl::reorder prim(sm, dm);
    prim.execute(strm, sm, dm);
    strm.wait();
    std::vector<uint8_t> want(static_cast<size_t>(dst.bytes()));
    reference_reorder(src, pattern.data(), dst, want.data());
    if (std::memcmp(want.data(), dm.get_data_handle(), want.size()) != 0) {
      t.why = "oneDNN's result differs from the reference";
      return t;
    }
    // bench_reorder alternates each clreorder run with the copy baseline, so every clreorder run starts after
    // a copy of the destination's bytes has passed through the caches. oneDNN gets the same untimed copy before
    // each run: timed back to back instead, it would find its tensors still cached where ours are not.
    const size_t copy_bytes = static_cast<size_t>(dst.bytes());
    std::vector<uint8_t> copy_src(copy_bytes, 1), copy_dst(copy_bytes, 0);
    std::vector<double> ms;
    for (int i = 0; i < runs + 3; ++i) {
      std::memcpy(copy_dst.data(), copy_src.data(), copy_bytes);
      auto t0 = std::chrono::steady_clock::now();
      prim.execute(strm, sm, dm);
      strm.wait();
      auto t1 = std::chrono::steady_clock::now();
      if (i >= 3) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    t.ms = ms[ms.size() / 2];
    t.ok = true;
  } catch (const std::exception& e) {
    t.why = e.what();
  }
  return t;
}
