// clreorder: the reorder API. Converts a tensor in one layout into another on an OpenCL queue; the kernel
// comes from the kernel selector and the program cache, so a repeated reorder compiles nothing.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "clreorder/kernel_selector.hpp"
#include "clreorder/layout.hpp"
#include "clreorder/runtime.hpp"

namespace clreorder {

/// Per-call choices.
struct ReorderOptions {
  std::string force_impl;  ///< implementation name to use (else CLREORDER_FORCE_IMPL, else the selector's choice)
  /// Block until the kernel has finished (and read its time into ReorderResult::kernel_ms): the blocking form.
  /// By default a reorder only enqueues and returns its event, as CLBlast and oneDNN do.
  bool wait = false;
  /// Events the kernel waits for (in any queue of the same context): with the returned event, what orders a
  /// reorder on an out-of-order queue.
  std::vector<cl::Event> wait_list;
  /// Whether the call makes and returns an event (ReorderResult::event; a batch's too). A caller that orders
  /// its work by an in-order queue or clFinish can leave it out: an event can cost more than the launch
  /// (NVIDIA's OpenCL on an H100: a launch 4.6 us, with an event 6.4 us, on a profiling queue 12 us, since
  /// every event then takes timestamps). `wait` makes one regardless, to wait on.
  bool make_event = true;
  /// What to do when the specialised kernel is not compiled yet; unset: the engine's policy (Engine::policy(),
  /// `background` unless chosen), or `background` on a bare queue. A forced implementation is always compiled.
  std::optional<CompilePolicy> policy;
  /// How values round and overflow on the way to the destination's type, and what padding gets (every
  /// item's, in a batch).
  Conversion conversion;
  /// Indexed by Param: the device buffers of the parameters the conversion takes from one
  /// (ParamValues::from_buffer), each of the queue's context, readable, holding at least count() values
  /// (f32, i32 for zero points) from its start, and apart from the destination; null for the others. The
  /// kernel reads them when it runs: a caller keeps them unchanged until the reorder's event completes.
  std::array<cl::Buffer, kParams> param_buffers;
  /// Where the reorder writes the compensation sums when the conversion asks for them
  /// (Conversion::compensation; null otherwise): a buffer of the queue's context the kernel may write, of at
  /// least Compensation::count() i32 from its start, apart from the source, the destination and the value
  /// buffers. The reorder zeroes it (a fill enqueued before the kernel, after the wait list; the kernel
  /// waits on the fill's event on an out-of-order queue only), then the kernel adds every destination value
  /// to its sum.
  cl::Buffer compensation;
  /// reorder_batch(): the most items one launch takes (0: kMaxBatchItems, the batch kernel's own limit; larger
  /// values are that). Fewer items make each batch kernel smaller and its launch shorter, at a launch's cost
  /// each: on a GPU a kernel carrying many items' code can run slower than its items would alone.
  size_t batch_launch_items = 0;
};

/// What a reorder did.
struct ReorderResult {
  std::string impl;        ///< implementation that ran
  std::string entry;       ///< kernel entry name
  cl::Event event;         ///< the kernel's event (null without ReorderOptions::make_event): wait on it, or pass it on
  /// Kernel time from event profiling in milliseconds; -1 when the queue has no profiling or wait was false.
  double kernel_ms = -1;
  /// The host convenience reorder() only, with Conversion::compensation: the sums it read back.
  std::vector<int32_t> compensation;
};

/// Thread-safe: threads may reorder on one queue or context at once (each cached kernel's arguments and
/// enqueue are under its own mutex). Enqueues the reorder of `src` (at byte offset src_offset, laid out as src_layout) into `dst` (at
/// dst_offset, as dst_layout) on `queue` after the events of `opt.wait_list`, and returns its event without
/// waiting unless `opt.wait`. In-order and out-of-order queues alike. Writes every destination element the
/// layout owns, padding as zero. Throws
/// naming the value, before anything is enqueued, when a buffer is null, of another context, too small for
/// its layout at its offset, flagged so the kernel cannot read (source) or write (destination) it, when the
/// two ranges overlap (one buffer, or sub-buffers of one parent), offsets are misaligned or the layouts do
/// not match.
ReorderResult reorder(const cl::CommandQueue& queue, const cl::Buffer& src, size_t src_offset, const Layout& src_layout,
                      const cl::Buffer& dst, size_t dst_offset, const Layout& dst_layout, const ReorderOptions& opt = {});

/// The same on an engine's queue.
ReorderResult reorder(const Engine& engine, const cl::Buffer& src, size_t src_offset, const Layout& src_layout,
                      const cl::Buffer& dst, size_t dst_offset, const Layout& dst_layout, const ReorderOptions& opt = {});

/// One reorder of a batch: a source and a destination, each a buffer, a byte offset in it and a layout.
struct BatchItem {
  cl::Buffer src;        ///< the source buffer
  size_t src_offset;     ///< byte offset of the source layout's first byte in `src`
  Layout src_layout;     ///< the source layout
  cl::Buffer dst;        ///< the destination buffer
  size_t dst_offset;     ///< byte offset of the destination layout's first byte in `dst`
  Layout dst_layout;     ///< the destination layout
};

/// What a batch did.
struct BatchResult {
  std::vector<std::string> impls;  ///< per item, the implementation that wrote it
  /// Kernel launches it took: one per kMaxBatchItems items (more where the items' buffers and offsets pass
  /// the device's argument space, batch_fits()), or one per item on the shape-agnostic kernel.
  size_t launches = 0;
  bool batched = false;            ///< whether the items ran as batch kernels (else one launch each)
  cl::Event event;                 ///< completes when every item is written (a marker over launches); see make_event
  /// Kernel time summed over the launches from event profiling in milliseconds; -1 unless `wait` and profiling.
  double kernel_ms = -1;
};

/// Thread-safe as reorder(). Enqueues many reorders as one kernel launch (or as few as kMaxBatchItems and the
/// device's argument space allow), for example all of a model's weight repacks at load time, where each
/// reorder alone is too small to pay for its own launch. Each distinct buffer is one kernel argument, so
/// items packed into shared buffers (a runtime's weight blobs) take the fewest arguments. Each item is checked as reorder() checks its arguments, and in addition no item's
/// destination may overlap another item's source or destination (they run at once); a bad item is named by
/// its index and nothing is enqueued. The batch kernel is specialised to the list of layouts and to which
/// items share a buffer (not to the buffers or offsets), and cached like a reorder's kernel. Policy: `wait` compiles it if needed; `background`
/// (the default) runs it when it is compiled or stored already, else runs each item by reorder() now (one
/// launch each, on the shape-agnostic kernel) and compiles the batch kernel on the background thread for the
/// next call; `agnostic` always runs each item on the shape-agnostic kernel. An empty list enqueues only a
/// marker. `opt.force_impl` applies to every item.
BatchResult reorder_batch(const cl::CommandQueue& queue, const std::vector<BatchItem>& items, const ReorderOptions& opt = {});

/// The same on an engine's queue (and its policy).
BatchResult reorder_batch(const Engine& engine, const std::vector<BatchItem>& items, const ReorderOptions& opt = {});

/// Convenience, blocking: host bytes in (src_layout.bytes() of them), host bytes out (dst_layout.bytes()). The
/// destination starts as `dst_init` (dst_layout.bytes() of them) when given, else as zeros, so the bytes the
/// layout does not own (gaps between strided elements) come back as they were. Parameters from a buffer
/// whose values are given (and whose buffer is not) have their values uploaded into one. Compensation sums
/// go into a buffer of its own unless opt.compensation is set, and come back in result->compensation.
std::vector<uint8_t> reorder(const Engine& engine, const std::vector<uint8_t>& src, const Layout& src_layout,
                             const Layout& dst_layout, const ReorderOptions& opt = {}, ReorderResult* result = nullptr,
                             const std::vector<uint8_t>* dst_init = nullptr);

/// Read-only buffers of `context` holding the values of the parameters of `conv` taken from a buffer
/// (ParamValues::from_buffer) as a kernel reads them (f32, i32 for zero points), for
/// ReorderOptions::param_buffers; null for the others, and where no values are given.
std::array<cl::Buffer, kParams> upload_param_values(const cl::Context& context, const Conversion& conv);

/// Throws naming the layout, its bytes and the device when the layout needs a larger buffer than the
/// device can allocate (CL_DEVICE_MAX_MEM_ALLOC_SIZE).
void check_fits_device(const DeviceInfo& device, const Layout& layout);

/// Sets the arguments every generated reorder kernel takes (CR_REORDER_ARGS in kernels_cl/common.cl):
/// source and destination buffers and their offsets in units of unit_bytes() (elements; bytes for u4 and
/// i4), the buffers of run-time parameter values (`values` as ReorderOptions::param_buffers: set exactly for
/// the parameters the kernel's conversion takes from a buffer), the compensation sums' buffer (set exactly
/// when the kernel's conversion writes them), and for a shape-agnostic kernel its plans table
/// (plans_buffer()). The caller holds the kernel's lock.
void set_reorder_args(cl::Kernel& kernel, const cl::Buffer& src, uint64_t src_base, const cl::Buffer& dst,
                      uint64_t dst_base, const cl::Buffer& plans = cl::Buffer(),
                      const std::array<cl::Buffer, kParams>& values = {}, const cl::Buffer& compensation = cl::Buffer());

/// Sets the arguments of a batch kernel (batch_kernel()): the items' offsets (`bases`: two per item, source
/// and destination, in units of unit_bytes()) in ulong16 vectors, each distinct buffer of its items in the
/// order batch_kernel() was given them, and where its items stage through a local tile (`local_bytes`, the
/// batch's KernelData::local_bytes) that much local memory. The caller holds the kernel's lock.
void set_batch_args(cl::Kernel& kernel, const std::vector<cl::Buffer>& buffers, const std::vector<cl_ulong>& bases,
                    size_t local_bytes);

/// The plans table of a shape-agnostic kernel as a read-only buffer of `context`; a null buffer when `kd`
/// has none.
cl::Buffer plans_buffer(const cl::Context& context, const KernelData& kd);

/// The kernel the selector picks for a pair on a device (converting by `conv`), without running it: the
/// kept choice for the pair on that device where one is (keep_choice()) and still accepts, else the
/// accepting implementation of lowest rank; `force` or CLREORDER_FORCE_IMPL override both.
KernelData plan_reorder(const DeviceInfo& device, const Layout& src, const Layout& dst, const std::string& force = "",
                        const Conversion& conv = {});

/// Keeps `impl` as the selector's choice for this pair and conversion on this device (its name, driver and
/// the library version: another of them has no choice kept), in this process and in the persistent kernel
/// cache (DiskCache) for later ones; "" keeps none, so the ranks choose again. Throws naming the
/// implementation when it is unknown or declines the pair. What tune_reorder() calls with what it measured;
/// a runtime may also ship choices measured elsewhere. Reorders already run on this pair in this process
/// switch at their next call. Thread-safe.
void keep_choice(const DeviceInfo& device, const Layout& src, const Layout& dst, const Conversion& conv,
                 const std::string& impl);

/// The choice kept for the pair on the device ("" when none is), from this process or the disk cache.
std::string kept_choice(const DeviceInfo& device, const Layout& src, const Layout& dst, const Conversion& conv = {});

/// Forgets the kept choices this process has read or made (not the disk cache's), so the next lookup reads
/// the disk again: for tests, and for a process that shares the cache with another that tunes.
void forget_kept_choices();

/// Releases every cached kernel, program and dispatch entry (and with them the contexts they retain), after
/// dropping the queued background compiles and waiting for the one in hand. The caches are never destroyed
/// on their own, so that no OpenCL object is released after main returns; a caller that tears OpenCL down
/// before exit, or wants its contexts freed, calls this first. A process that reorders on bare queues under
/// the `background` policy calls this (or wait_for_background_compiles()) before it exits: a compile still
/// running while exit destroys the compiler's static objects can crash (an Engine's last copy does it for
/// its context).
void release_cached_kernels();

/// Blocks until the background thread has compiled every kernel the `background` policy handed it so far
/// (tests, benchmarks, a runtime that wants its specialised kernels before it times anything).
void wait_for_background_compiles();

/// Releases the cached kernels, programs and dispatch entries of one context (what the last copy of an Engine
/// does for its context), after dropping its queued background compiles and waiting for one in hand; a
/// caller reordering on its own queues calls it before releasing its context.
void release_cached_kernels_of(const cl::Context& context);

/// Compiles the kernels of many reorders in one program (one compile instead of one per pair), so that
/// a model load or a test suite pays one build. Later reorder() calls on these pairs (with the same
/// conversion) compile nothing.
void prepare(const Engine& engine, const std::vector<std::pair<Layout, Layout>>& pairs, const std::string& force = "",
             const Conversion& conv = {});

}  // namespace clreorder
