// The copy kernel of the benchmarks (kernels_cl/copy.cl): the best copy this device has, launched as our
// reorders are, so that a reorder's speed is measured against what the device can do.
#include <algorithm>

#include "clreorder/kernel_selector.hpp"
#include "codegen.hpp"
#include "embedded.hpp"
#include "impls.hpp"

namespace clreorder {

KernelData copy_kernel(const DeviceInfo& device, size_t bytes) {
  const bool cpu = tuning_of(device) == Tuning::cpu;
  // CPUs: 64-byte vectors (a cache line, an AVX-512 register), 4 KiB per work-item as tiled's tiles, and
  // streaming stores above the cache as the reorders' (stream_pays()); GPUs: 16-byte vectors, one per
  // work-item per step, the whole range in one sweep of the grid.
  const size_t width = cpu ? 64 : 16, chunk = cpu ? 4096 / width : 0, local = cpu ? 8 : 64;
  const bool stream = stream_pays(2 * static_cast<uint64_t>(bytes), device);  // the reorders' rule
  Jit jit;
  jit.def("KERNEL_NAME", "copy").def("COPY_T", "uint" + num(static_cast<int64_t>(width / 4)))
      .def("CHUNK", static_cast<int64_t>(chunk)).def("STREAM", stream ? 1 : 0);
  KernelData kd;
  kd.impl = "copy";
  kd.streams = stream;
  kd.source = named_by_text("copy", jit, embedded_kernel("copy.cl"));
  const size_t vecs = bytes / width;
  // CPUs: one work-item per chunk (at least one, for the tail); GPUs: enough work-items for the device, at
  // most one per vector.
  const size_t items = cpu ? vecs / chunk + 1 : std::min<size_t>(std::max<size_t>(vecs, 1), 1 << 20);
  const size_t l = device.max_work_group ? std::min(local, device.max_work_group) : local;
  kd.local = {l};
  kd.global = {round_up(items, l)};
  return kd;
}

}  // namespace clreorder
