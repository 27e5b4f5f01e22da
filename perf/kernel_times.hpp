// Event-profiled kernel times of several kernels for one reorder, launch after launch in the same run, with
// the caches evicted before each launch or left warm: what clreorder_ab compares variants by and what the
// suite's --limits splits each case's time by. On a shared, noisy machine two separate runs of one kernel
// differ by up to 2x, so kernels compared are timed in turn, never in runs of their own.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "clreorder/error.hpp"
#include "clreorder/kernel_selector.hpp"
#include "clreorder/reference.hpp"
#include "clreorder/reorder.hpp"
#include "clreorder/runtime.hpp"

namespace clreorder_perf {

/// How interleaved_kernel_ms() runs its launches.
struct KernelTiming {
  int runs = 25;             ///< timed launches of each kernel (after 3 untimed rounds)
  bool warm = false;         ///< leave the working set in cache (else a 64 MiB copy evicts it before each launch)
  bool consumer = false;     ///< time each reorder together with a copy of its destination after it
  bool random_bits = false;  ///< the source filled with arbitrary bits instead of make_pattern()'s
  bool copy = false;         ///< one more entry last: copy_kernel() over the destination's bytes, own buffers
  /// Per entry of `kernels` (missing ones: none), the compensation sums its conversion writes: each such
  /// kernel gets a buffer for them (atomics into it; the values are not read).
  std::vector<clreorder::Compensation> sums;
  /// Per entry of `kernels` (missing ones: none), the buffers of the parameter values its conversion takes from
  /// a buffer (upload_param_values()).
  std::vector<std::array<cl::Buffer, clreorder::kParams>> values;
};

/// Sorted kernel times in ms, one vector per entry of `kernels` (each a plan of src -> dst: its source, launch
/// and plan buffer), and with `t.copy` one more for the copy kernel. Each round launches every kernel once.
inline std::vector<std::vector<double>> interleaved_kernel_ms(const clreorder::Engine& engine, const clreorder::Layout& src,
                                                              const clreorder::Layout& dst,
                                                              const std::vector<clreorder::KernelData>& kernels,
                                                              const KernelTiming& t) {
  using namespace clreorder;
  check_fits_device(engine.info(), src);
  check_fits_device(engine.info(), dst);
  // Data in both buffers: never-written pages would make the loads artificially cheap. The source holds what
  // `clreorder bench` and the suite reorder (make_pattern(): each element's index, as integers in float types),
  // unless random_bits: arbitrary bits make a fused float multiplication produce subnormals, whose microcode
  // assists on x86 took half the time of an f32 -> i8 kernel with group scales.
  const size_t dst_bytes = static_cast<size_t>(dst.bytes());
  std::vector<uint8_t> fill(std::max(static_cast<size_t>(src.bytes()), dst_bytes));
  for (size_t i = 0; i < fill.size(); ++i) fill[i] = static_cast<uint8_t>(i * 131 + 7);
  const std::vector<uint8_t> pattern = t.random_bits ? fill : make_pattern(src);
  cl::Buffer sbuf(engine.context(), CL_MEM_READ_WRITE, static_cast<size_t>(src.bytes()));
  cl::Buffer dbuf(engine.context(), CL_MEM_READ_WRITE, dst_bytes);
  cl::CommandQueue queue(engine.context(), engine.device(), CL_QUEUE_PROFILING_ENABLE);
  queue.enqueueWriteBuffer(sbuf, CL_TRUE, 0, static_cast<size_t>(src.bytes()), pattern.data());
  queue.enqueueWriteBuffer(dbuf, CL_TRUE, 0, dst_bytes, fill.data());
  std::vector<KernelHandle> handles;
  std::vector<cl::Buffer> plans, sums;
  for (const KernelData& k : kernels) {
    handles.push_back(ProgramCache::instance().handle(engine.context(), engine.device(), k.source));
    plans.push_back(plans_buffer(engine.context(), k));
    const size_t at = sums.size();
    const bool with_sums = at < t.sums.size() && t.sums[at].present();
    sums.push_back(with_sums ? cl::Buffer(engine.context(), CL_MEM_READ_WRITE, static_cast<size_t>(t.sums[at].count(dst.dims())) * 4)
                             : cl::Buffer());
  }
  // The copy kernel reads and writes buffers of its own, of the destination's size (as bench_reorder()'s).
  const KernelData copy_kd = copy_kernel(engine.info(), dst_bytes);
  cl::Buffer copy_src, copy_dst;
  KernelHandle copy_h;
  if (t.copy) {
    copy_src = cl::Buffer(engine.context(), CL_MEM_READ_WRITE, dst_bytes);
    copy_dst = cl::Buffer(engine.context(), CL_MEM_READ_WRITE, dst_bytes);
    queue.enqueueWriteBuffer(copy_src, CL_TRUE, 0, dst_bytes, fill.data());
    queue.enqueueWriteBuffer(copy_dst, CL_TRUE, 0, dst_bytes, fill.data());
    copy_h = ProgramCache::instance().handle(engine.context(), engine.device(), copy_kd.source);
  }
  // Between launches a 64 MiB copy (not timed) evicts the caches, as in a real pipeline and as in the suite,
  // where the copy baseline runs between the reorders.
  const size_t scratch_bytes = std::min<size_t>(size_t{64} << 20, static_cast<size_t>(engine.info().max_alloc / 2));
  cl::Buffer scratch_a(engine.context(), CL_MEM_READ_WRITE, scratch_bytes), scratch_b(engine.context(), CL_MEM_READ_WRITE, scratch_bytes);
  if (!t.warm) queue.enqueueFillBuffer(scratch_a, cl_uint{0x5a5a5a5a}, 0, scratch_bytes);
  if (t.consumer && dst_bytes > scratch_bytes)
    throw Error("--consumer: the destination's " + std::to_string(dst_bytes) + " bytes exceed the " +
                std::to_string(scratch_bytes) + "-byte buffer it is copied into");
  const size_t n = kernels.size() + (t.copy ? 1 : 0);
  std::vector<std::vector<double>> ms(n);
  // Each round starts one kernel later than the one before: in a fixed order the first launch of a round
  // (after the host's bookkeeping) read 0.75x or 1.07x its identical twin's time on 3-6 us kernels.
  for (int r = 0; r < t.runs + 3; ++r)
    for (size_t i = 0; i < n; ++i) {
      const size_t k = (i + static_cast<size_t>(r)) % n;
      if (!t.warm) queue.enqueueCopyBuffer(scratch_a, scratch_b, 0, 0, scratch_bytes);
      const bool is_copy = k == kernels.size();
      LockedKernel lk(is_copy ? copy_h : handles[k]);
      if (is_copy) {
        lk.kernel.setArg(0, copy_src);
        lk.kernel.setArg(1, copy_dst);
        lk.kernel.setArg(2, static_cast<cl_ulong>(dst_bytes));
      } else {
        set_reorder_args(lk.kernel, sbuf, 0, dbuf, 0, plans[k], k < t.values.size() ? t.values[k] : std::array<cl::Buffer, kParams>{},
                         sums[k]);
      }
      const KernelData& kd = is_copy ? copy_kd : kernels[k];
      cl::Event ev;
      queue.enqueueNDRangeKernel(lk.kernel, cl::NullRange, kd.global_range(), kd.local_range(), nullptr, &ev);
      cl::Event last = ev;
      if (t.consumer && !is_copy) queue.enqueueCopyBuffer(dbuf, scratch_b, 0, 0, dst_bytes, nullptr, &last);
      last.wait();
      if (r >= 3)
        ms[k].push_back(1e-6 * static_cast<double>(last.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                                   ev.getProfilingInfo<CL_PROFILING_COMMAND_START>()));
    }
  for (std::vector<double>& v : ms) std::sort(v.begin(), v.end());
  return ms;
}

}  // namespace clreorder_perf
