// clreorder: OpenCL devices, the engine (context + device + queue) and the program cache.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "clreorder/cl.hpp"

namespace clreorder {

/// Name of an OpenCL error code: cl_error_name(-54) == "CL_INVALID_WORK_GROUP_SIZE".
const char* cl_error_name(int code);

/// Rethrows a cl::Error (or any std::exception) as clreorder::Error naming the call, the code by name and
/// `context` (the layouts or device involved).
[[noreturn]] void rethrow_cl(const std::string& context);

/// One OpenCL device as `clreorder devices` lists it.
struct DeviceInfo {
  int index = 0;                 ///< position in list_devices(), usable in CLREORDER_DEVICE
  std::string platform;          ///< platform name
  std::string name;              ///< device name
  std::string version;           ///< CL_DEVICE_VERSION
  std::string driver;            ///< CL_DRIVER_VERSION
  std::string type;              ///< "gpu", "cpu", "accelerator" or "other"
  /// CL_DEVICE_VENDOR_ID: for a CPU device (PoCL) the processor's maker, 0x8086 Intel, 0x1022 AMD, whose cores'
  /// prefetchers differ (CPU tiles read as many far rows at once as the maker's follow); 0: unknown.
  uint32_t vendor_id = 0;
  uint64_t global_mem = 0;       ///< bytes
  uint64_t max_alloc = 0;        ///< CL_DEVICE_MAX_MEM_ALLOC_SIZE, bytes
  /// CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, or for a CPU device that reports none the host's last-level cache
  /// (cache_from_host); 0: unknown. Decides streaming stores.
  uint64_t cache_bytes = 0;
  bool cache_from_host = false;  ///< cache_bytes is the host's (sysconf), the device reported 0
  /// CL_DEVICE_MAX_COMPUTE_UNITS (a CPU device's cores): bounds the share of a big shared cache a CPU device's
  /// stores may count on (stream_pays()); 0: unknown.
  uint32_t compute_units = 0;
  size_t max_work_group = 0;     ///< CL_DEVICE_MAX_WORK_GROUP_SIZE
  size_t max_parameter_bytes = 0;  ///< CL_DEVICE_MAX_PARAMETER_SIZE: bounds the reorders of one batched launch
  bool fp16 = false;             ///< cl_khr_fp16
  bool fp64 = false;             ///< cl_khr_fp64 (double): f64 layouts are refused without it
  /// CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT: the reciprocals of divisors from device buffers (div, dst-scale)
  /// round as the host reference's do.
  bool exact_divide = false;
  bool is_default = false;       ///< what an empty device choice picks
  /// Whether its OpenCL runtime takes calls from several threads at once, as the standard asks. False for
  /// Oclgrind (its issue #28: two builds at once crash its compiler), where the `background` policy compiles
  /// in the calling thread instead.
  bool thread_safe = true;
  cl::Device device;
};

/// The library's version as built ("MAJOR.MINOR.PATCH"): a shared library may be newer than the headers
/// (clreorder/version.h) a caller compiled against.
const char* version();

/// Information about a cl::Device (index -1, is_default false).
DeviceInfo describe_device(const cl::Device& device);

/// Every device of every platform; the default one (first GPU, else first device) is marked.
std::vector<DeviceInfo> list_devices();

/// Picks a device: `spec` is an index from list_devices() or a case-insensitive substring of the platform
/// or device name; empty means CLREORDER_DEVICE, and when that is unset too, the default. Throws listing
/// the devices there are when nothing matches or there is no OpenCL device.
DeviceInfo choose_device(const std::string& spec = "");

/// What a reorder does when its specialised kernel is neither compiled in this process nor stored in the
/// persistent cache (a stored one is loaded at once: a load, not a compile).
enum class CompilePolicy {
  wait,        ///< compile it, then run it
  background,  ///< the default: run the shape-agnostic kernel now (one per type pair and walk, compiled once and
               ///< stored); compile the specialised one on a background thread and use it from the call after it
               ///< is ready
  agnostic,    ///< never compile per shape: the shape-agnostic kernel
};

/// A context, device and in-order queue (with profiling) to run reorders on: our own, or the caller's. Its
/// members are const: one Engine may be shared by threads (OpenCL enqueues are thread-safe). Copies share
/// one lifetime: when the last copy goes, the kernels cached for its context are released, so a context the
/// caller has released too is freed (reorders on a bare queue keep theirs until release_cached_kernels()).
class Engine {
 public:
  /// Opens the device choose_device(spec) picks, with a new context and a profiling queue.
  static Engine open(const std::string& spec = "");
  /// Wraps a caller's context and queue (retained); the device is the queue's.
  Engine(cl_context context, cl_command_queue queue);

  /// The context reorders run in.
  const cl::Context& context() const { return context_; }
  /// The device.
  const cl::Device& device() const { return device_; }
  /// The in-order queue reorders are enqueued on.
  const cl::CommandQueue& queue() const { return queue_; }
  /// The device as `clreorder devices` lists it.
  const DeviceInfo& info() const { return info_; }
  /// What its reorders do while a specialised kernel is not compiled (a call's ReorderOptions::policy wins).
  CompilePolicy policy() const { return policy_; }
  /// A copy with another policy, sharing this engine's context, queue and lifetime (Engines are values, so a
  /// runtime that shares one across threads never sees it change).
  Engine with_policy(CompilePolicy policy) const {
    Engine e = *this;
    e.policy_ = policy;
    return e;
  }

 private:
  Engine() = default;
  void own_cached_kernels();  // sets lifetime_
  cl::Context context_;
  cl::Device device_;
  cl::CommandQueue queue_;
  DeviceInfo info_;
  CompilePolicy policy_ = CompilePolicy::background;
  std::shared_ptr<void> lifetime_;  // its deleter drops the caches' entries of context_
};

/// Source for one kernel: generated #defines, a template from kernels_cl/, the matching #undefs.
struct KernelSource {
  std::string entry;    ///< kernel function name, unique per problem
  std::string code;     ///< the OpenCL C text (defines + template + undefs)
  std::string options;  ///< build options
};

/// Counters of the program cache, for tests and logs.
struct CacheStats {
  uint64_t programs_built = 0;  ///< programs compiled from source
  uint64_t programs_loaded = 0; ///< programs built from a binary of the persistent cache (cache.hpp)
  uint64_t kernels_built = 0;   ///< kernels compiled (one program may hold many)
  uint64_t hits = 0;            ///< kernel lookups by source answered without compiling
  uint64_t dispatch_hits = 0;   ///< reorders whose kernel was found by problem key (no source generated)
  double compile_ms = 0;        ///< wall time spent loading or compiling programs (all threads together)
};

/// A compiled kernel and the mutex that guards its arguments (a cl::Kernel's arguments are shared state).
struct KernelHandle {
  cl::Kernel kernel;
  std::shared_ptr<std::mutex> mutex;
};

/// A cached kernel with its lock held: arguments and enqueue happen under it.
struct LockedKernel {
  cl::Kernel kernel;
  std::unique_lock<std::mutex> lock;
  /// Locks the handle's mutex for the lifetime of this object.
  explicit LockedKernel(const KernelHandle& h) : kernel(h.kernel), lock(*h.mutex) {}
};

/// Process-wide in-memory cache of compiled kernels, keyed by (context, device, source hash, options), in
/// front of the persistent cache (DiskCache). Thread-safe; no lock is held while a program compiles, so a
/// cached lookup on one thread never waits for another thread's build, and a kernel that several threads ask
/// for at once is built once (the others wait for that build only). Entries keep their context alive, so a
/// freed context's handle can never be confused with a new one.
class ProgramCache {
 public:
  /// The process-wide cache.
  static ProgramCache& instance();
  /// The compiled kernel for `src`, building a one-kernel program when it is not cached yet (its persistent
  /// copy deferred as build() says, on devices whose runtime is thread-safe).
  KernelHandle handle(const cl::Context& ctx, const cl::Device& dev, const KernelSource& src);
  /// The same, locked for setting arguments and enqueueing.
  LockedKernel kernel(const cl::Context& ctx, const cl::Device& dev, const KernelSource& src) {
    return LockedKernel(handle(ctx, dev, src));
  }
  /// Counts a reorder served by a faster cache in front of this one (see CacheStats::dispatch_hits).
  void count_dispatch_hit();
  /// Builds every not-yet-cached kernel of `sources` in as few programs as possible (one per set of
  /// build options), so a test suite or a model load pays one compile. With `defer_store`, the persistent
  /// cache's copy is written later by store_pending() (on PoCL, asking for a program's binary compiles it
  /// again), so the caller waiting for its first result does not wait for that.
  void build(const cl::Context& ctx, const cl::Device& dev, const std::vector<KernelSource>& sources,
             bool defer_store = false);
  /// Writes the deferred stores of one context (null: of all) to the persistent cache; no lock held while
  /// it works. Returns how many programs it stored or tried to.
  size_t store_pending(cl_context context = nullptr);
  /// The context of the oldest deferred store, null when there is none.
  cl_context pending_store_context() const;
  /// Current counters.
  CacheStats stats() const;
  /// Drops every entry (the next lookup compiles again).
  void clear();
  /// Whether `src` is compiled for this context and device already (a lookup compiles nothing then).
  bool cached(const cl::Context& ctx, const cl::Device& dev, const KernelSource& src);
  /// Whether `src` is cached or stored in the persistent cache: a lookup loads at most a binary then, no
  /// compile (unless the stored file turns out unusable).
  bool stored(const cl::Context& ctx, const cl::Device& dev, const KernelSource& src);
  /// Drops the entries of one context (and with them the cache's references to it).
  void clear(cl_context context);

 private:
  struct Entry;
  struct Flight;  // a kernel being built, which other threads wait for
  struct PendingStore;
  ProgramCache() = default;
  mutable std::mutex mutex_;
  std::condition_variable built_;  // a flight ended
  std::unordered_multimap<uint64_t, std::shared_ptr<Entry>> entries_;  // by hash of code + options
  std::vector<std::shared_ptr<Flight>> flights_;
  std::vector<std::shared_ptr<PendingStore>> pending_stores_;
  CacheStats stats_;
  std::shared_ptr<Entry> find(const cl::Context& ctx, const cl::Device& dev, const KernelSource& src, uint64_t h);
  // Under mutex_: removes and returns the deferred stores of `context` (null: all).
  std::vector<std::shared_ptr<PendingStore>> take_pending_stores(cl_context context);
  std::shared_ptr<Flight> flight(const cl::Context& ctx, const cl::Device& dev, const KernelSource& src, uint64_t h);
  // Loads from the persistent cache or compiles `sources` (none cached, none in flight); no lock held.
  std::vector<std::shared_ptr<Entry>> make(const cl::Context& ctx, const cl::Device& dev,
                                           const std::vector<const KernelSource*>& sources, CacheStats* counts,
                                           std::vector<std::shared_ptr<PendingStore>>* deferred);
};

/// 64-bit FNV-1a hash, used for cache keys and kernel entry names.
uint64_t fnv1a(const std::string& text, uint64_t seed = 1469598103934665603ull);

}  // namespace clreorder
