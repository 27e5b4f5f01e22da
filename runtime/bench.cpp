// Timing a reorder against clEnqueueCopyBuffer of the same bytes, alternating the two so that both see the
// same machine load (the machine is shared and noisy; ratios of same-run medians are what we report).
#include "clreorder/bench.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "clreorder/error.hpp"
#include "clreorder/reference.hpp"
#include "clreorder/reorder.hpp"
#include "clreorder/kernel_selector.hpp"

namespace clreorder {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string BenchResult::json(const Layout& src, const Layout& dst) const {
  const nlohmann::ordered_json out = {
      {"from", src.format().name()}, {"to", dst.format().name()}, {"shape", src.dims()}, {"to_shape", dst.dims()},
      {"dtype", to_string(src.data_type())}, {"to_dtype", to_string(dst.data_type())},
      {"source", src.describe()}, {"destination", dst.describe()}, {"impl", impl}, {"runs", runs},
      {"median_ms", median_ms}, {"kernel_ms", kernel_ms}, {"copy_ms", copy_ms}, {"gbps_logical", gbps_logical},
      {"gbps_physical", gbps_physical}, {"copy_gbps", copy_gbps}, {"ratio", ratio}, {"enqueue_us", enqueue_us},
      {"bare_enqueue_us", bare_enqueue_us}};
  return out.dump();
}

BenchResult bench_reorder(const Engine& engine, const Layout& src, const Layout& dst, const std::string& force, int runs) {
  if (runs < 1) throw Error("bench: runs must be at least 1, got " + std::to_string(runs));
  check_compatible(src, dst);
  for (const Layout* l : {&src, &dst}) check_fits_device(engine.info(), *l);
  BenchResult r;
  r.runs = runs;
  try {
    const cl::Context& ctx = engine.context();
    const cl::CommandQueue& q = engine.queue();
    std::vector<uint8_t> pattern = make_pattern(src);
    cl::Buffer s(ctx, CL_MEM_READ_WRITE, pattern.size()), d(ctx, CL_MEM_READ_WRITE, static_cast<size_t>(dst.bytes()));
    cl::Buffer copy_src(ctx, CL_MEM_READ_WRITE, static_cast<size_t>(dst.bytes()));
    cl::Buffer copy_dst(ctx, CL_MEM_READ_WRITE, static_cast<size_t>(dst.bytes()));
    q.enqueueWriteBuffer(s, CL_TRUE, 0, pattern.size(), pattern.data());
    q.enqueueFillBuffer(copy_src, cl_uchar(1), 0, static_cast<size_t>(dst.bytes()));
    q.enqueueFillBuffer(copy_dst, cl_uchar(0), 0, static_cast<size_t>(dst.bytes()));
    q.enqueueFillBuffer(d, cl_uchar(0), 0, static_cast<size_t>(dst.bytes()));
    q.finish();
    ReorderOptions opt;
    opt.force_impl = force;
    opt.wait = false;
    opt.policy = CompilePolicy::wait;  // time the selector's kernel, never the shape-agnostic one meanwhile
    for (int i = 0; i < 3; ++i) {  // warm-up: compile, first launch, page faults
      r.impl = reorder(engine, s, 0, src, d, 0, dst, opt).impl;
      q.enqueueCopyBuffer(copy_src, copy_dst, 0, 0, static_cast<size_t>(dst.bytes()));
      q.finish();
    }
    const bool profiling = q.getInfo<CL_QUEUE_PROPERTIES>() & CL_QUEUE_PROFILING_ENABLE;
    std::vector<double> wall, kernel, copy;
    for (int i = 0; i < runs; ++i) {
      double t0 = now_ms();
      ReorderResult rr = reorder(engine, s, 0, src, d, 0, dst, opt);
      q.finish();
      double t1 = now_ms();
      q.enqueueCopyBuffer(copy_src, copy_dst, 0, 0, static_cast<size_t>(dst.bytes()));
      q.finish();
      double t2 = now_ms();
      wall.push_back(t1 - t0);
      copy.push_back(t2 - t1);
      if (profiling)
        kernel.push_back(static_cast<double>(rr.event.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                             rr.event.getProfilingInfo<CL_PROFILING_COMMAND_START>()) * 1e-6);
    }
    // Host overhead: the same number of cached reorder() calls and bare enqueues of its kernel, not waited for.
    const int n_enqueue = 50;
    std::vector<double> ours, bare;
    KernelData kd = plan_reorder(engine.info(), src, dst, force);
    KernelHandle h = ProgramCache::instance().handle(ctx, engine.device(), kd.source);
    const cl::Buffer plans = plans_buffer(ctx, kd);
    {
      LockedKernel k(h);
      set_reorder_args(k.kernel, s, 0, d, 0, plans);
    }
    for (int i = 0; i < n_enqueue; ++i) {
      double t0 = now_ms();
      reorder(engine, s, 0, src, d, 0, dst, opt);
      double t1 = now_ms();
      q.enqueueNDRangeKernel(h.kernel, cl::NullRange, kd.global_range(), kd.local_range());
      double t2 = now_ms();
      ours.push_back((t1 - t0) * 1e3);
      bare.push_back((t2 - t1) * 1e3);
    }
    q.finish();
    r.enqueue_us = median(ours);
    r.bare_enqueue_us = median(bare);
    r.median_ms = median(wall);
    r.kernel_ms = profiling ? median(kernel) : -1;
    r.copy_ms = median(copy);
  } catch (...) {
    rethrow_cl("bench " + src.describe() + " -> " + dst.describe());
  }
  const double logical = static_cast<double>(src.logical_elements()) *
                         static_cast<double>(size_of(src.data_type()) + size_of(dst.data_type()));
  const double physical = static_cast<double>(src.bytes() + dst.bytes());
  r.gbps_logical = logical / (r.median_ms * 1e6);
  r.gbps_physical = physical / (r.median_ms * 1e6);
  r.copy_gbps = 2.0 * static_cast<double>(dst.bytes()) / (r.copy_ms * 1e6);
  r.ratio = r.gbps_physical / r.copy_gbps;
  return r;
}

}  // namespace clreorder
