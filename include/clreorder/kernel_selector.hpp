// clreorder: the kernel selector. A list of reorder implementations, specialised first and the generic one
// last (it accepts every pair); of those that accept a problem, the one of lowest rank generates its OpenCL C.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "clreorder/layout.hpp"
#include "clreorder/runtime.hpp"

namespace clreorder {

/// One reorder problem: source and destination layouts on a device, and how values convert between them.
struct ReorderParams {
  Layout src;             ///< the source layout
  Layout dst;             ///< the destination layout
  DeviceInfo device;      ///< the device the kernel is for
  Conversion conversion;  ///< rounding and overflow rules of the type conversion, padding policy
  /// The kernel runs as a function of a batch kernel (batch_kernel()), whose work-groups are one size for
  /// all its items: a kernel that stages through work-group local memory keeps its configured group size.
  bool batch_item = false;
};

/// What an implementation generates: the kernel source and its launch shape. Every kernel takes
/// (global const SRC_T* src, global DST_T* dst, ulong src_base, ulong dst_base), bases in units of
/// unit_bytes() (elements; bytes for u4 and i4, whose element offsets inside count nibbles).
struct KernelData {
  std::string impl;           ///< stable implementation name
  KernelSource source;
  std::vector<size_t> global; ///< global work size, already a multiple of local
  std::vector<size_t> local;  ///< local work size
  /// The run-time plans table of a shape-agnostic kernel (its fifth argument, a buffer of longs: see
  /// plans_buffer()); empty for kernels compiled for one shape.
  std::vector<int64_t> plan_args;
  /// Bytes of work-group local memory it stages through (local's tile); 0: none. A batch kernel with such
  /// items takes one more argument after its items' offsets, local memory of its own local_bytes (the largest
  /// item's; set_batch_args() sets it), and runs in such items' group size.
  size_t local_bytes = 0;
  /// Whether some of its stores stream past the cache (non-temporal, where stream_pays() holds: tiled's
  /// vector stores and the copy kernel's; a batch kernel when one of its items does).
  bool streams = false;
  /// global as a cl::NDRange.
  cl::NDRange global_range() const;
  /// local as a cl::NDRange.
  cl::NDRange local_range() const;
};

/// Where an implementation that accepts a problem stands among the others that do: the selector runs the
/// accepting one of lowest value (ties: list order). A rank is a measured preference, never a capability, so
/// forcing a lower-ranked implementation runs it correctly; a new implementation takes a value between its
/// neighbours' instead of making them decline.
struct Rank {
  int value = 0;    ///< lower runs first
  std::string why;  ///< the measurement behind a value other than the implementation's usual one, else ""
};

/// One way to reorder. Implementations are stateless.
class ReorderImpl {
 public:
  /// Implementations are owned by the selector through this base.
  virtual ~ReorderImpl() = default;
  /// Stable name, used by the force switch, logs, tests and benchmarks.
  virtual const char* name() const = 0;
  /// Empty when the implementation accepts the problem, otherwise a short reason why not.
  virtual std::string reject(const ReorderParams& p) const = 0;
  /// Its rank for a problem it accepts, on that device.
  virtual Rank rank(const ReorderParams& p) const = 0;
  /// The kernel for an accepted problem.
  virtual KernelData generate(const ReorderParams& p) const = 0;
};

/// One implementation's verdict on a problem, as explain() lists it.
struct Verdict {
  std::string impl;      ///< stable name
  std::string declines;  ///< why it declines, "" when it accepts
  Rank rank;             ///< where it ranks, when it accepts
  bool chosen = false;   ///< whether the selector runs it (unforced)
};

/// The ordered list of implementations and the choice among them. Thread-safe: the list is fixed at start
/// and implementations are stateless.
class KernelSelector {
 public:
  /// The process-wide selector.
  static const KernelSelector& instance();
  /// The implementations in list order (the order ties of rank break in).
  const std::vector<std::unique_ptr<ReorderImpl>>& impls() const { return impls_; }
  /// The shape-agnostic implementation ("agnostic": both plans passed at run time, one kernel per type pair
  /// and walk), kept out of the ordered list: it is never the fastest, and runs when named (force) or when a
  /// caller must not wait for a compile.
  const ReorderImpl& agnostic() const { return *agnostic_; }
  /// The kernel of the accepting implementation of lowest rank; `force` (or, when empty, the environment
  /// variable CLREORDER_FORCE_IMPL) picks one by name and throws if it is unknown or declines, with its reason.
  KernelData select(const ReorderParams& p, const std::string& force = "") const;
  /// The implementation with this stable name, or null when there is none.
  const ReorderImpl* find(const std::string& name) const;
  /// The stable names in selection order, then "agnostic", comma-separated, for messages.
  std::string names() const;
  /// Every implementation's verdict on `p`: the ordered list, then agnostic.
  std::vector<Verdict> explain(const ReorderParams& p) const;

 private:
  KernelSelector();
  std::vector<std::unique_ptr<ReorderImpl>> impls_;
  std::unique_ptr<ReorderImpl> agnostic_;
};

/// Most reorders one batched launch holds, whatever the device allows.
constexpr size_t kMaxBatchItems = 64;

/// Whether one batched launch of `items` reorders over `buffer_count` distinct buffers fits `device`'s
/// argument space (CL_DEVICE_MAX_PARAMETER_SIZE, 1024 bytes at least in OpenCL 1.2's full profile): 128
/// bytes per ulong16 of offsets (batch_base_vectors()), 8 per buffer (each distinct buffer passed once: items
/// packed into shared buffers cost no more), 8 for a local tile.
bool batch_fits(const DeviceInfo& device, size_t buffer_count, size_t items);

/// The ulong16 arguments that carry `items` items' offsets, two each (a batch kernel's first arguments).
size_t batch_base_vectors(size_t items);

/// One kernel that runs the kernels `items` (generated by the selector for one device, `types` their source
/// and destination data types) in one launch. Its arguments are the items' source and destination offsets
/// in elements, in batch_base_vectors() ulong16 vectors (item k's at 2k and 2k + 1; by value, not in a buffer:
/// a buffer made per launch cost an NVIDIA driver 70-100 us of the host's time, more than the launches a batch
/// saves), then `buffer_count` buffers. Item k reads buffer argument buffers[k].first and writes buffer
/// argument buffers[k].second. Throws when an item takes a run-time plan (the shape-agnostic kernel), or the
/// list exceeds kMaxBatchItems or batch_fits().
KernelData batch_kernel(const std::vector<KernelData>& items, const std::vector<std::pair<DataType, DataType>>& types,
                        const std::vector<std::pair<size_t, size_t>>& buffers, size_t buffer_count, const DeviceInfo& device);

/// The benchmarks' copy of `bytes` bytes on `device` (kernels_cl/copy.cl), launched as a reorder is, with the
/// widest accesses and the streaming stores the reorders use: its arguments are (source, destination, ulong
/// bytes), buffers of at least `bytes` bytes.
KernelData copy_kernel(const DeviceInfo& device, size_t bytes);

}  // namespace clreorder
