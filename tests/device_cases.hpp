// Device-test helpers shared by the device test files: a reorder case, running it against the host
// reference with a pre-filled destination and byte offsets, and batches compiled in one program.
#pragma once

#include <string>
#include <vector>

#include "clreorder/format.hpp"
#include "clreorder/reference.hpp"
#include "clreorder/reorder.hpp"
#include "test_support.hpp"

namespace clreorder_test {

using namespace clreorder;

struct Case {
  Layout src, dst;
  std::string label;
};

// Writes `src` into a source buffer `src_off` bytes in, pre-fills a destination buffer with 0xCD, lets
// `launch(s, d)` reorder into it `dst_off` bytes in, then checks that nothing before the offset changed and
// that the destination matches the host reference byte for byte.
template <typename Launch>
std::string check_launch(const Engine& e, const Case& c, const std::vector<uint8_t>& src, size_t src_off, size_t dst_off,
                         Launch launch) {
  std::vector<uint8_t> want(static_cast<size_t>(c.dst.bytes()), 0xCD);
  reference_reorder(c.src, src.data(), c.dst, want.data());
  cl::Buffer s(e.context(), CL_MEM_READ_WRITE, src_off + src.size());
  cl::Buffer d(e.context(), CL_MEM_READ_WRITE, dst_off + want.size());
  e.queue().enqueueWriteBuffer(s, CL_FALSE, src_off, src.size(), src.data());
  std::vector<uint8_t> fill(dst_off + want.size(), 0xCD);
  e.queue().enqueueWriteBuffer(d, CL_FALSE, 0, fill.size(), fill.data());
  launch(s, d);
  std::vector<uint8_t> got(fill.size());
  e.queue().enqueueReadBuffer(d, CL_TRUE, 0, got.size(), got.data());
  for (size_t i = 0; i < dst_off; ++i)
    if (got[i] != 0xCD) return c.label + ": wrote before the destination offset at byte " + std::to_string(i);
  std::string diff = compare_bytes(std::vector<uint8_t>(got.begin() + static_cast<std::ptrdiff_t>(dst_off), got.end()), want);
  return diff.empty() ? "" : c.label + ": " + diff;
}

// reorder() on the case, the source and the destination buffers at byte offsets.
inline std::string run_case(const Engine& e, const Case& c, const std::vector<uint8_t>& src, const std::string& force = "",
                            size_t src_off = 0, size_t dst_off = 0) {
  return check_launch(e, c, src, src_off, dst_off, [&](const cl::Buffer& s, const cl::Buffer& d) {
    ReorderOptions opt;
    opt.force_impl = force;
    reorder(e, s, src_off, c.src, d, dst_off, c.dst, opt);
  });
}

// Runs a kernel planned outside the selector's own device (another device type, another cache size) on this
// device, the destination `dst_off` elements into its buffer, and compares with the host reference.
inline std::string run_planned(const Engine& e, const Case& c, const KernelData& kd, size_t dst_off = 0) {
  const size_t esize = static_cast<size_t>(size_of(c.dst.data_type()));
  return check_launch(e, c, random_bytes(static_cast<size_t>(c.src.bytes()), 3), 0, dst_off * esize,
                      [&](const cl::Buffer& s, const cl::Buffer& d) {
                        LockedKernel k = ProgramCache::instance().kernel(e.context(), e.device(), kd.source);
                        set_reorder_args(k.kernel, s, 0, d, dst_off);
                        e.queue().enqueueNDRangeKernel(k.kernel, cl::NullRange, kd.global_range(), kd.local_range());
                      });
}

// Compiles every case's kernel in one program, then runs and checks each (with `force`, on that implementation).
inline void run_batch(const Engine& e, const std::vector<Case>& cases, bool random_source = false,
                      const std::string& force = "") {
  std::vector<std::pair<Layout, Layout>> pairs;
  for (const Case& c : cases) pairs.emplace_back(c.src, c.dst);
  prepare(e, pairs, force);
  int failures = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    std::vector<uint8_t> src = random_source ? random_bytes(static_cast<size_t>(c.src.bytes()), i) : make_pattern(c.src);
    std::string err = run_case(e, c, src, force);
    if (!err.empty() && ++failures <= 20) ADD_FAILURE() << err;
  }
  EXPECT_EQ(failures, 0) << "of " << cases.size() << " cases";
}

inline std::vector<Format> supported_data_formats(int rank) {
  std::vector<Format> out;
  for (const FormatEntry& e : registry()) {
    if (!e.unsupported.empty()) continue;
    Format f = Format::parse(e.name);
    if (f.kind() == FormatKind::data && f.rank() == rank) out.push_back(f);
  }
  return out;
}

inline Dims odd_shape(int rank, int64_t b) {
  Dims d = {b, 19};
  const int64_t spatial[] = {3, 2, 2, 3, 5, 7};  // v u w z y x
  for (int a = 2; a < rank; ++a) d.push_back(spatial[6 - (rank - a)]);
  return d;
}

inline std::string plain_order(int rank) { return std::string("bf") + std::string("vuwzyx").substr(8 - rank); }

inline Case make_case(const Format& s, const Format& d, const Dims& shape, DataType st = DataType::f32,
               DataType dt = DataType::f32, Dims slo = {}, Dims sup = {}, Dims dlo = {}, Dims dup = {}) {
  Layout src(s, st, shape, slo, sup), dst(d, dt, shape, dlo, dup);
  return Case{src, dst, src.describe() + " -> " + dst.describe()};
}

// Why implementation `impl` declines the case on this device ("" when it accepts).
inline std::string reason_of(const Engine& e, const Case& c, const std::string& impl) {
  for (const auto& [name, why] : KernelSelector::instance().explain(ReorderParams{c.src, c.dst, e.info()}))
    if (name == impl) return why;
  return "no implementation named " + impl;
}

}  // namespace clreorder_test
