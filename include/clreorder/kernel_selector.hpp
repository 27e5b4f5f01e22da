// clreorder: the kernel selector. An ordered list of reorder implementations, specialised first and the
// generic one last (it accepts every pair); the first that accepts a problem generates its OpenCL C.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "clreorder/layout.hpp"
#include "clreorder/runtime.hpp"

namespace clreorder {

/// One reorder problem: source and destination layouts on a device.
struct ReorderParams {
  Layout src;
  Layout dst;
  DeviceInfo device;
};

/// What an implementation generates: the kernel source and its launch shape. Every kernel takes
/// (global const SRC_T* src, global DST_T* dst, ulong src_base, ulong dst_base), bases in elements.
struct KernelData {
  std::string impl;           ///< stable implementation name
  KernelSource source;
  std::vector<size_t> global; ///< global work size, already a multiple of local
  std::vector<size_t> local;  ///< local work size
  /// The run-time plans table of a shape-agnostic kernel (its fifth argument, a buffer of longs: see
  /// plans_buffer()); empty for kernels compiled for one shape.
  std::vector<int64_t> plan_args;
  /// global as a cl::NDRange.
  cl::NDRange global_range() const;
  /// local as a cl::NDRange.
  cl::NDRange local_range() const;
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
  /// The kernel for an accepted problem.
  virtual KernelData generate(const ReorderParams& p) const = 0;
};

/// The ordered list of implementations and the choice among them. Thread-safe: the list is fixed at start
/// and implementations are stateless.
class KernelSelector {
 public:
  /// The process-wide selector.
  static const KernelSelector& instance();
  /// The implementations in the order they are tried.
  const std::vector<std::unique_ptr<ReorderImpl>>& impls() const { return impls_; }
  /// The shape-agnostic implementation ("agnostic": both plans passed at run time, one kernel per type pair),
  /// kept out of the ordered list: it is never the fastest, and runs when named (force) or when a caller must
  /// not wait for a compile.
  const ReorderImpl& agnostic() const { return *agnostic_; }
  /// The kernel of the first implementation that accepts `p`; `force` (or, when empty, the environment
  /// variable CLREORDER_FORCE_IMPL) picks one by name and throws if it is unknown or declines, with its reason.
  KernelData select(const ReorderParams& p, const std::string& force = "") const;
  /// The implementation with this stable name, or null when there is none.
  const ReorderImpl* find(const std::string& name) const;
  /// The stable names in selection order, then "agnostic", comma-separated, for messages.
  std::string names() const;
  /// Every implementation with its verdict on `p` (the ordered list, then agnostic): an empty reason accepts.
  std::vector<std::pair<std::string, std::string>> explain(const ReorderParams& p) const;

 private:
  KernelSelector();
  std::vector<std::unique_ptr<ReorderImpl>> impls_;
  std::unique_ptr<ReorderImpl> agnostic_;
};

}  // namespace clreorder
