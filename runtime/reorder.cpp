// The reorder API: selector -> program cache -> enqueue.
#include "clreorder/reorder.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include "clreorder/cache.hpp"
#include "clreorder/error.hpp"
#include "clreorder/reference.hpp"
#include "env.hpp"
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace clreorder {

namespace {

// The bytes a buffer argument covers, in the buffer that owns its memory (the parent of a sub-buffer).
struct ByteRange {
  cl_mem root = nullptr;
  size_t begin = 0, end = 0;
};

// Everything about one buffer argument that can be checked before any work is enqueued, so that a bad
// argument leaves the destination untouched: it is a live buffer of the queue's context, its flags let the
// kernel read (source) or write (destination) it, the offset is a multiple of the element size, and
// offset + layout bytes fit (compared without forming the sum, which could wrap).
// What the checks need of a buffer, asked of the driver once per buffer (a batch may pass one many times).
struct BufferFacts {
  cl_mem mem = nullptr;
  size_t size = 0;
  cl_mem_flags flags = 0;
  cl_mem root = nullptr;  // the buffer, or a sub-buffer's parent
  size_t origin = 0;      // a sub-buffer's offset in its parent
};

// A handle-valued fact of an OpenCL object read without the C++ wrappers' retain and release: each of those
// takes the driver's lock on the object (PoCL's), and these run on every cached call. `query` is
// clGetMemObjectInfo, clGetCommandQueueInfo, ...; `what` its name for the error.
template <class Handle, class Query, class Object, class Name>
Handle raw_info(Query query, Object object, Name name, const char* what) {
  Handle h = nullptr;
  const cl_int err = query(object, name, sizeof h, &h, nullptr);
  if (err != CL_SUCCESS) throw cl::Error(err, what);
  return h;
}

template <class Handle>
Handle raw_queue_info(const cl::CommandQueue& queue, cl_command_queue_info name) {
  return raw_info<Handle>(clGetCommandQueueInfo, queue(), name, "clGetCommandQueueInfo");
}

template <class Handle>
Handle raw_mem_info(const cl::Buffer& buf, cl_mem_info name) {
  return raw_info<Handle>(clGetMemObjectInfo, buf(), name, "clGetMemObjectInfo");
}

// The queue's context as a wrapper that neither retains nor releases it (the queue holds it for the call):
// see raw_info(). Copies made of it retain as usual.
class BorrowedContext {
 public:
  explicit BorrowedContext(const cl::CommandQueue& queue)
      : context_(raw_queue_info<cl_context>(queue, CL_QUEUE_CONTEXT), false) {}
  ~BorrowedContext() { context_() = nullptr; }
  BorrowedContext(const BorrowedContext&) = delete;
  BorrowedContext& operator=(const BorrowedContext&) = delete;
  const cl::Context& get() const { return context_; }

 private:
  cl::Context context_;
};

BufferFacts buffer_facts(const cl::Context& ctx, const cl::Buffer& buf, const char* which) {
  if (!buf()) throw Error(std::string(which) + " buffer is null");
  if (raw_mem_info<cl_context>(buf, CL_MEM_CONTEXT) != ctx())
    throw Error(std::string(which) + " buffer belongs to another OpenCL context than the command queue");
  BufferFacts f{buf(), buf.getInfo<CL_MEM_SIZE>(), buf.getInfo<CL_MEM_FLAGS>(), buf(), 0};
  if (const cl_mem parent = raw_mem_info<cl_mem>(buf, CL_MEM_ASSOCIATED_MEMOBJECT)) {
    f.root = parent;
    f.origin = buf.getInfo<CL_MEM_OFFSET>();
  }
  return f;
}

ByteRange check_range(const BufferFacts& f, size_t offset, const Layout& l, const char* which, bool written) {
  const auto what = [which] { return std::string(which) + " buffer"; };  // made only for an error
  if (written && (f.flags & CL_MEM_READ_ONLY))
    throw Error(what() + " was created CL_MEM_READ_ONLY: a kernel cannot write it");
  if (!written && (f.flags & CL_MEM_WRITE_ONLY))
    throw Error(what() + " was created CL_MEM_WRITE_ONLY: a kernel cannot read it");
  const size_t esize = unit_bytes(l.data_type());
  if (offset % esize)
    throw Error(std::string(which) + " byte offset " + std::to_string(offset) + " is not a multiple of the " +
                to_string(l.data_type()) + " element size " + std::to_string(esize));
  const size_t have = f.size, bytes = static_cast<size_t>(l.bytes());
  if (offset > have || bytes > have - offset)
    throw Error(what() + " holds " + std::to_string(have) + " bytes but " + l.describe() + " at byte offset " +
                std::to_string(offset) + " needs " + std::to_string(bytes) + " bytes from there");
  return ByteRange{f.root, f.origin + offset, f.origin + offset + bytes};
}

ByteRange check_buffer(const cl::Context& ctx, const cl::Buffer& buf, size_t offset, const Layout& l, const char* which,
                       bool written) {
  return check_range(buffer_facts(ctx, buf, which), offset, l, which, written);
}

// Whether two ranges share a byte of one buffer's memory.
bool overlap(const ByteRange& a, const ByteRange& b) { return a.root == b.root && a.begin < b.end && b.begin < a.end; }

// A kernel reads the source while it writes the destination (both restrict pointers), so no byte may be both.
void check_disjoint(const ByteRange& s, const ByteRange& d) {
  if (!overlap(s, d)) return;
  throw Error("source and destination overlap: bytes [" + std::to_string(s.begin) + ", " + std::to_string(s.end) +
              ") and [" + std::to_string(d.begin) + ", " + std::to_string(d.end) + ") of one buffer");
}

// What a repeated reorder needs, found by problem key without generating any source: the selector's
// choice, the compiled kernel and the launch shape. Entries keep their context alive, so the context
// handle in the key cannot be reused by another context while the entry exists.
struct Dispatch {
  cl::Context context;
  Conversion conversion;  // compared on every hit: the key holds only a hash of its values
  std::string impl, entry;
  KernelHandle kernel;
  cl::NDRange global, local;
  cl::Buffer plans;  // a shape-agnostic kernel's plans table, made once per problem and context
  std::vector<std::string> item_impls;  // a batch kernel's: the implementation of each of its items
  size_t local_bytes = 0;                // a batch kernel's local tile, its last argument (KernelData::local_bytes)
  std::atomic<bool> launched{false};  // its first launch was noted (PoCL finishes compiling a kernel then)
};

struct DispatchTable {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<Dispatch>> entries;
};

DispatchTable& dispatch_table() {
  // Never destroyed: its entries hold OpenCL objects, and releasing them from a static destructor, after
  // main returns, runs into OpenCL implementations whose own state is gone by then (Oclgrind aborts).
  static DispatchTable& table = *new DispatchTable;
  return table;
}

// The conversion's part of a dispatch key: its fields with the values as an XXH3-128 hash of their bits.
// Conversion::key() formats every value, which cost a reorder with 4096 group scales 370 us per call;
// hashing them costs about a microsecond, and a hit compares the values themselves (cached_dispatch()).
std::string conversion_key(const Conversion& conv) {
  if (!conv.has_arithmetic()) return conv.key();
  XXH3_state_t state;  // on the stack: no allocation per call
  XXH3_INITSTATE(&state);
  XXH3_128bits_reset(&state);
  for (Param q : all_params()) {
    if (conv.param(q).from_buffer) continue;  // the values there serve the host reference only
    const std::vector<float>& v = conv.param(q).values;
    const uint64_t n = v.size();
    XXH3_128bits_update(&state, &n, sizeof n);
    XXH3_128bits_update(&state, v.data(), v.size() * sizeof(float));
  }
  const XXH128_hash_t h = XXH3_128bits_digest(&state);
  char hex[40];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(h.high64), static_cast<unsigned long long>(h.low64));
  return conv.summary(0) + "#" + hex;
}

// Everything the selector's choice depends on: context, device, forced implementation, index width, tuning,
// conversion, layouts.
// The pair's part of every key: conversion and both layouts.
std::string pair_key(const Layout& src, const Layout& dst, const Conversion& conv) {
  return conversion_key(conv) + ":" + src.key() + "->" + dst.key();
}

// Implementation choices kept per device and pair (keep_choice(), tune_reorder()): in memory, read from the
// disk cache once per pair and process ("" remembered too, so that a pair never chosen costs one file
// lookup). Its lock is never held across a compile or a file access.
struct Choices {
  std::mutex mutex;
  std::unordered_map<std::string, std::string> entries;
  static Choices& instance() {
    static Choices& c = *new Choices;  // never destroyed: holds no OpenCL object
    return c;
  }
};

// What a choice depends on besides the pair: the library, the device and driver, and the environment's
// switches that change the kernels.
std::string choice_key(const DeviceInfo& device, const std::string& pair) {
  return std::string("clreorder choice ") + version() + "|" + device.platform + "|" + device.name + "|" + device.version +
         "|" + device.driver + "|" + device.type + "|" + env_value("CLREORDER_TUNING") + "|" +
         env_value("CLREORDER_INDEX_BITS") + "|" + env_value("CLREORDER_BUILD_OPTIONS") + "\n" + pair;
}

std::string kept_choice_of(const DeviceInfo& device, const Layout& src, const Layout& dst, const Conversion& conv) {
  const std::string key = choice_key(device, pair_key(src, dst, conv));
  Choices& c = Choices::instance();
  {
    std::lock_guard<std::mutex> guard(c.mutex);
    auto it = c.entries.find(key);
    if (it != c.entries.end()) return it->second;
  }
  const std::string impl = DiskCache::instance().load_choice(key);
  std::lock_guard<std::mutex> guard(c.mutex);
  return c.entries.emplace(key, impl).first->second;
}

std::string dispatch_key(const cl::Context& ctx, cl_device_id dev, const Layout& src, const Layout& dst,
                         const std::string& force, const Conversion& conv) {
  return std::to_string(reinterpret_cast<uintptr_t>(ctx())) + ":" + std::to_string(reinterpret_cast<uintptr_t>(dev)) +
         ":" + (force.empty() ? env_value("CLREORDER_FORCE_IMPL") : force) + ":" + env_value("CLREORDER_INDEX_BITS") + ":" +
         env_value("CLREORDER_TUNING") + ":" + env_value("CLREORDER_BUILD_OPTIONS") + ":" + pair_key(src, dst, conv);
}

// Whether two conversions compile to one kernel: the values of a parameter from a buffer are the caller's
// at run time, not the kernel's.
bool same_kernel(const Conversion& a, const Conversion& b) {
  if (a.rounding != b.rounding || a.overflow != b.overflow || a.padding != b.padding || !(a.compensation == b.compensation))
    return false;
  for (Param q : all_params()) {
    const ParamValues &x = a.param(q), &y = b.param(q);
    if (x.from_buffer != y.from_buffer || x.axis != y.axis || x.group != y.group || x.outer_axis != y.outer_axis ||
        (!x.from_buffer && !(x == y)))
      return false;
  }
  return true;
}

// The dispatch of `key` for conversion `conv`, or null. A hash collision between two value sets (never seen,
// but not impossible) finds an entry of other values: that is a miss, planned again each call, never recorded.
std::shared_ptr<Dispatch> cached_dispatch(const std::string& key, const Conversion& conv) {
  std::lock_guard<std::mutex> guard(dispatch_table().mutex);
  auto it = dispatch_table().entries.find(key);
  if (it == dispatch_table().entries.end() || !same_kernel(it->second->conversion, conv)) return nullptr;
  ProgramCache::instance().count_dispatch_hit();
  return it->second;
}

// plan_reorder() of a problem that may be a batch's item.
KernelData plan_params(const ReorderParams& params, const std::string& force) {
  if (force.empty() && env_value("CLREORDER_FORCE_IMPL").empty()) {
    // A kept choice that no longer accepts the pair (another library version would have another key, a batch
    // declines local memory) falls back to the ranks.
    const std::string kept = kept_choice_of(params.device, params.src, params.dst, params.conversion);
    const ReorderImpl* impl = kept.empty() ? nullptr : KernelSelector::instance().find(kept);
    if (impl && impl->reject(params).empty()) return KernelSelector::instance().select(params, kept);
  }
  return KernelSelector::instance().select(params, force);
}

// A batch kernel planned: the kernel and the implementation of each item.
struct PlannedBatch {
  KernelData kd;
  std::vector<std::string> impls;
};

// A launch's items: their layouts, and for each the buffer arguments it reads and writes (each distinct
// buffer is one argument).
struct BatchShape {
  std::vector<std::pair<Layout, Layout>> pairs;
  std::vector<std::pair<size_t, size_t>> buffers;
  size_t buffer_count = 0;
  Conversion conversion;  // every item's
};

PlannedBatch plan_batch(const DeviceInfo& info, const BatchShape& shape, const std::string& force) {
  const auto& pairs = shape.pairs;
  PlannedBatch pb;
  std::vector<KernelData> items;
  std::vector<std::pair<DataType, DataType>> types;
  for (const auto& [s, d] : pairs) {
    ReorderParams item{s, d, info, shape.conversion};
    item.batch_item = true;
    items.push_back(plan_params(item, force));
    types.emplace_back(s.data_type(), d.data_type());
    pb.impls.push_back(items.back().impl);
  }
  pb.kd = batch_kernel(items, types, shape.buffers, shape.buffer_count, info);
  return pb;
}

// Compiles (or finds compiled) the planned kernel and records it as the dispatch of `key`.
std::shared_ptr<Dispatch> record_dispatch(const cl::Context& ctx, const cl::Device& dev, const KernelData& kd,
                                          const std::string& key, const Conversion& conv,
                                          const std::vector<std::string>& item_impls = {}) {
  auto d = std::make_shared<Dispatch>();
  d->context = ctx;
  d->conversion = conv;
  d->impl = kd.impl;
  d->item_impls = item_impls;
  d->entry = kd.source.entry;
  d->kernel = ProgramCache::instance().handle(ctx, dev, kd.source);
  d->global = kd.global_range();
  d->local = kd.local_range();
  d->plans = plans_buffer(ctx, kd);
  d->local_bytes = kd.local_bytes;
  std::lock_guard<std::mutex> guard(dispatch_table().mutex);
  dispatch_table().entries.emplace(key, d);
  return d;
}

// Plans, compiles (or finds compiled) and records the dispatch of `key`.
std::shared_ptr<Dispatch> make_dispatch(const cl::Context& ctx, const cl::Device& dev, const Layout& src,
                                        const Layout& dst, const std::string& force, const Conversion& conv,
                                        const std::string& key) {
  return record_dispatch(ctx, dev, plan_reorder(describe_device(dev), src, dst, force, conv), key, conv);
}

// One thread for the work a caller should not wait for: the specialised kernels of the `background` policy,
// compiled a batch at a time, and the persistent copies of programs the callers compiled (ProgramCache's
// deferred stores). It works when the callers are quiet (no kernel being looked up or compiled for a short
// while, or after a longest delay), since on PoCL a compile holds a lock that a caller's first launch of a
// kernel needs too. Never destroyed (no OpenCL call from a static destructor). Releasing a context's caches
// (an Engine's last copy) waits for its work in hand and writes its deferred stores; an atexit handler, the
// last resort of bare-queue callers, lets the work in hand finish and stops the thread, though statics the
// compiler constructs after the handler's registration are destroyed before it runs.
class BackgroundCompiler {
 public:
  static BackgroundCompiler& instance() {
    static BackgroundCompiler& b = *new BackgroundCompiler;
    return b;
  }
  // Whether `key` is queued, being compiled, or failed (its calls keep the agnostic kernel).
  bool known(const std::string& key) {
    std::lock_guard<std::mutex> guard(mutex_);
    return known_.count(key) != 0;
  }
  // A reorder's specialised kernel (one pair), or a batch kernel (`batch`: the pairs of one launch).
  void submit(const std::string& key, const cl::Context& ctx, const cl::Device& dev, BatchShape shape, bool batch = false) {
    std::lock_guard<std::mutex> guard(mutex_);
    if (stopping_ || !known_.insert(key).second) return;
    note_work();
    jobs_.push_back(Job{key, ctx, dev, std::move(shape), batch});
    start();
  }
  // A caller looks up or compiles a kernel while this lives: background work waits.
  class Foreground {
   public:
    Foreground() {
      std::lock_guard<std::mutex> guard(instance().mutex_);
      ++instance().foreground_;
    }
    ~Foreground() {
      const bool stores = ProgramCache::instance().pending_store_context() != nullptr;
      BackgroundCompiler& b = instance();
      std::lock_guard<std::mutex> guard(b.mutex_);
      --b.foreground_;
      b.last_activity_ = std::chrono::steady_clock::now();
      if (stores && !b.stopping_) {
        b.note_stores();
        b.start();
      }
      b.wake_.notify_all();
    }
    Foreground(const Foreground&) = delete;
    Foreground& operator=(const Foreground&) = delete;
  };
  // The event of a dispatch's first launch: background work waits for it too, since the driver may still
  // compile for that launch (PoCL builds the work-group function then).
  void note_first_launch(const cl::Event& event) {
    std::lock_guard<std::mutex> guard(mutex_);
    if (!jobs_.empty() || stores_) launches_.push_back(event);  // none kept while there is nothing to hold back
  }
  void wait_idle() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return jobs_.empty() && !stores_ && !busy_; });
  }
  // Drops the queued jobs of a context whose caches are being released (null: of every context), waits for
  // work in hand for it and writes its deferred stores, so that the caller's release then drops everything
  // kept for that context. The wait is deliberate: a compile still running when the process exits can meet
  // a compiler whose static objects exit has begun to destroy (PoCL's LLVM crashed so), and an Engine going
  // away is the last moment the library knows of before that.
  void forget(cl_context context) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      for (auto it = jobs_.begin(); it != jobs_.end();) {
        if (!context || it->ctx() == context) {
          known_.erase(it->key);
          it = jobs_.erase(it);
        } else {
          ++it;
        }
      }
      launches_.clear();  // they only hold background work back, and keep their contexts
      idle_.notify_all();
      if (std::this_thread::get_id() == thread_.get_id()) return;
      idle_.wait(lock, [&] { return !busy_ || (context && current_ != context); });
    }
    ProgramCache::instance().store_pending(context);
  }

 private:
  struct Job {
    std::string key;
    cl::Context ctx;
    cl::Device dev;
    BatchShape shape;  // one pair (and no buffers) for a reorder's kernel
    bool batch = false;
    PlannedBatch plan(const DeviceInfo& info) const {
      if (batch) return plan_batch(info, shape, "");
      KernelData kd = plan_reorder(info, shape.pairs.front().first, shape.pairs.front().second, "", shape.conversion);
      return PlannedBatch{kd, {}};
    }
  };
  // Under mutex_: work arrives; the longest delay counts from the oldest waiting work.
  void note_work() {
    if (jobs_.empty() && !stores_) pending_since_ = std::chrono::steady_clock::now();
  }
  // Under mutex_: ProgramCache holds deferred stores.
  void note_stores() {
    if (!stores_) note_work();
    stores_ = true;
  }
  // Under mutex_.
  void start() {
    if (!thread_.joinable()) {
      thread_ = std::thread([this] { run(); });
      std::atexit([] { BackgroundCompiler::instance().stop(); });
    }
    wake_.notify_all();
  }
  // Under `lock`: until the callers are quiet (and their first launches done), the longest delay is over,
  // or stop. Launches are polled: an event cannot be waited for with a time limit, and one may wait for a
  // user event that never comes.
  void wait_for_quiet(std::unique_lock<std::mutex>& lock) {
    for (;;) {
      const size_t launched = launches_.size();
      launches_.erase(std::remove_if(launches_.begin(), launches_.end(),
                                     [](const cl::Event& e) {
                                       cl_int status = CL_COMPLETE;
                                       e.getInfo(CL_EVENT_COMMAND_EXECUTION_STATUS, &status);
                                       return status <= CL_COMPLETE;  // done, or failed
                                     }),
                      launches_.end());
      const auto now = std::chrono::steady_clock::now();
      if (launches_.size() != launched) last_activity_ = now;  // the caller goes on from there
      const auto quiet_at = last_activity_ + kQuiet, give_up_at = pending_since_ + kLongestDelay;
      if (stopping_ || now >= give_up_at || (foreground_ == 0 && launches_.empty() && now >= quiet_at)) return;
      auto until = foreground_ ? give_up_at : std::min(quiet_at, give_up_at);
      if (!launches_.empty()) until = std::min(until, now + kPoll);
      wake_.wait_until(lock, until);
    }
  }
  void run() {
    for (;;) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty() || stores_; });
      wait_for_quiet(lock);
      launches_.clear();  // given up on, or done
      if (stopping_) break;
      if (jobs_.empty() && !stores_) {  // forget() took them while this waited
        idle_.notify_all();
        continue;
      }
      if (stores_) {
        const cl_context store_ctx = ProgramCache::instance().pending_store_context();
        if (!store_ctx) {
          stores_ = false;
          idle_.notify_all();
          continue;
        }
        busy_ = true;
        current_ = store_ctx;
        lock.unlock();
        ProgramCache::instance().store_pending(store_ctx);
        lock.lock();
        busy_ = false;
        current_ = nullptr;
        idle_.notify_all();
        continue;
      }
      // The jobs queued for the front job's context and device, compiled as one program: a model load
      // that runs many new shapes at once pays one compile for their specialised kernels, not one each.
      std::vector<Job> batch;
      for (auto it = jobs_.begin(); it != jobs_.end() && batch.size() < kBatch;) {
        if (batch.empty() || (it->ctx() == batch.front().ctx() && it->dev() == batch.front().dev())) {
          batch.push_back(std::move(*it));
          it = jobs_.erase(it);
        } else {
          ++it;
        }
      }
      const cl::Context ctx = batch.front().ctx;
      const cl::Device dev = batch.front().dev;
      busy_ = true;
      current_ = ctx();
      lock.unlock();
      std::vector<bool> ok(batch.size(), false);
      try {
        const DeviceInfo info = describe_device(dev);
        std::vector<PlannedBatch> planned;
        std::vector<KernelSource> sources;
        for (const Job& job : batch) {
          planned.push_back(job.plan(info));
          sources.push_back(planned.back().kd.source);
        }
        ProgramCache::instance().build(ctx, dev, sources);
        for (size_t k = 0; k < batch.size(); ++k) {
          record_dispatch(ctx, dev, planned[k].kd, batch[k].key, batch[k].shape.conversion, planned[k].impls);
          ok[k] = true;
        }
      } catch (...) {
        // One at a time then, so that a kernel that fails to build keeps only its own calls on the agnostic one.
        for (size_t k = 0; k < batch.size(); ++k) {
          if (ok[k]) continue;
          try {
            const PlannedBatch pb = batch[k].plan(describe_device(dev));
            record_dispatch(ctx, dev, pb.kd, batch[k].key, batch[k].shape.conversion, pb.impls);
            ok[k] = true;
          } catch (...) {
          }
        }
      }
      lock.lock();
      for (size_t k = 0; k < batch.size(); ++k)
        if (ok[k]) known_.erase(batch[k].key);
      if (!jobs_.empty()) pending_since_ = std::chrono::steady_clock::now();
      if (ProgramCache::instance().pending_store_context()) note_stores();  // a one-at-a-time retry deferred its own
      busy_ = false;
      current_ = nullptr;
      idle_.notify_all();
    }
    std::lock_guard<std::mutex> guard(mutex_);
    jobs_.clear();
    stores_ = false;
    idle_.notify_all();
  }
  void stop() {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  static constexpr size_t kBatch = 64;  // most jobs compiled as one program
  // Background work starts once no caller has looked up or compiled a kernel for kQuiet, or kLongestDelay
  // after it arrived, whichever is first: a model load's burst of new shapes is not slowed by it (and its
  // jobs go as one batch), and a stream of new shapes does not starve it.
  static constexpr std::chrono::milliseconds kQuiet{30}, kLongestDelay{5000}, kPoll{2};
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<Job> jobs_;
  std::set<std::string> known_;
  bool busy_ = false, stopping_ = false;
  bool stores_ = false;           // ProgramCache may hold deferred stores
  int foreground_ = 0;            // callers looking up or compiling a kernel now
  std::vector<cl::Event> launches_;  // first launches not seen complete yet
  std::chrono::steady_clock::time_point last_activity_{}, pending_since_{};
  cl_context current_ = nullptr;  // the context of the work in hand
  std::thread thread_;
};

// Whether the shape-agnostic kernel takes the problem: it declines u4 and i4 destinations whose rows split
// bytes, and then a policy that would run it while the selector's kernel compiles waits for that instead.
bool agnostic_takes(const DeviceInfo& info, const Layout& src, const Layout& dst, const Conversion& conv) {
  return KernelSelector::instance().agnostic().reject(ReorderParams{src, dst, info, conv}).empty();
}

std::shared_ptr<Dispatch> dispatch_for(const cl::CommandQueue& queue, const cl::Context& ctx, const Layout& src,
                                       const Layout& dst, const std::string& force, CompilePolicy policy,
                                       const Conversion& conv) {
  // The device's wrapper asks the driver for the platform's version as it is made: not on a cached call.
  const cl_device_id device = raw_queue_info<cl_device_id>(queue, CL_QUEUE_DEVICE);
  const std::string key = dispatch_key(ctx, device, src, dst, force, conv);
  if (auto d = cached_dispatch(key, conv)) return d;
  const cl::Device dev(device, true);
  const BackgroundCompiler::Foreground busy;
  if (!force.empty() || !env_value("CLREORDER_FORCE_IMPL").empty() || policy == CompilePolicy::wait)
    return make_dispatch(ctx, dev, src, dst, force, conv, key);
  if (policy == CompilePolicy::background && !BackgroundCompiler::instance().known(key)) {
    const DeviceInfo info = describe_device(dev);
    if (!info.thread_safe || !agnostic_takes(info, src, dst, conv))
      return record_dispatch(ctx, dev, plan_reorder(info, src, dst, "", conv), key, conv);
    // The specialised kernel when it is compiled already (prepare(), another thread) or stored by an earlier
    // process: nothing to compile (a stored binary loads in milliseconds, about what the agnostic kernel's does).
    const KernelData kd = plan_reorder(info, src, dst, "", conv);
    if (ProgramCache::instance().stored(ctx, dev, kd.source)) return record_dispatch(ctx, dev, kd, key, conv);
    BackgroundCompiler::instance().submit(key, ctx, dev, BatchShape{{{src, dst}}, {}, 0, conv});
  }
  return dispatch_for(queue, ctx, src, dst, "agnostic", CompilePolicy::wait, conv);
}

}  // namespace

void check_fits_device(const DeviceInfo& device, const Layout& layout) {
  if (static_cast<uint64_t>(layout.bytes()) > device.max_alloc)
    throw Error(layout.describe() + " needs " + std::to_string(layout.bytes()) + " bytes, over the largest buffer device '" +
                device.name + "' allows (" + std::to_string(device.max_alloc) + ")");
}

void set_reorder_args(cl::Kernel& kernel, const cl::Buffer& src, uint64_t src_base, const cl::Buffer& dst,
                      uint64_t dst_base, const cl::Buffer& plans, const std::array<cl::Buffer, kParams>& values,
                      const cl::Buffer& compensation) {
  kernel.setArg(0, src);
  kernel.setArg(1, dst);
  kernel.setArg(2, static_cast<cl_ulong>(src_base));
  kernel.setArg(3, static_cast<cl_ulong>(dst_base));
  cl_uint next = 4;
  for (const cl::Buffer& v : values)
    if (v()) kernel.setArg(next++, v);
  if (compensation()) kernel.setArg(next++, compensation);
  if (plans()) kernel.setArg(next, plans);
}

void set_batch_args(cl::Kernel& kernel, const std::vector<cl::Buffer>& buffers, const std::vector<cl_ulong>& bases,
                    size_t local_bytes) {
  cl_uint a = 0;
  for (size_t at = 0; at < bases.size(); at += 16) {  // ulong16 vectors, the last one's tail zero
    cl_ulong16 part{};
    std::copy(bases.begin() + static_cast<std::ptrdiff_t>(at),
              bases.begin() + static_cast<std::ptrdiff_t>(std::min(bases.size(), at + 16)), part.s);
    kernel.setArg(a++, part);
  }
  for (const cl::Buffer& b : buffers) kernel.setArg(a++, b);
  if (local_bytes) kernel.setArg(a, cl::Local(local_bytes));
}

cl::Buffer plans_buffer(const cl::Context& context, const KernelData& kd) {
  if (kd.plan_args.empty()) return cl::Buffer();
  std::vector<cl_long> table(kd.plan_args.begin(), kd.plan_args.end());
  return cl::Buffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, table.size() * sizeof(cl_long), table.data());
}

KernelData plan_reorder(const DeviceInfo& device, const Layout& src, const Layout& dst, const std::string& force,
                        const Conversion& conv) {
  return plan_params(ReorderParams{src, dst, device, conv}, force);
}

void keep_choice(const DeviceInfo& device, const Layout& src, const Layout& dst, const Conversion& conv,
                 const std::string& impl) {
  if (!impl.empty()) {
    const ReorderImpl* found = KernelSelector::instance().find(impl);
    if (!found)
      throw Error("unknown reorder implementation '" + impl + "' (known: " + KernelSelector::instance().names() + ")");
    const std::string why = found->reject(ReorderParams{src, dst, device, conv});
    if (!why.empty())
      throw Error("implementation '" + impl + "' declines " + src.describe() + " -> " + dst.describe() + ": " + why);
  }
  const std::string pair = pair_key(src, dst, conv), key = choice_key(device, pair);
  {
    std::lock_guard<std::mutex> guard(Choices::instance().mutex);
    Choices::instance().entries[key] = impl;
  }
  // The pair's dispatches (single and batched, on any context) are planned again at their next call, with
  // the choice; a caller's reorder in flight keeps its own reference.
  std::vector<std::shared_ptr<Dispatch>> dropped;
  {
    std::lock_guard<std::mutex> guard(dispatch_table().mutex);
    auto& table = dispatch_table().entries;
    for (auto it = table.begin(); it != table.end();) {
      if (it->first.find(pair) != std::string::npos) {
        dropped.push_back(std::move(it->second));
        it = table.erase(it);
      } else {
        ++it;
      }
    }
  }
  dropped.clear();  // released outside the table's lock
  DiskCache::instance().store_choice(key, impl);
}

std::string kept_choice(const DeviceInfo& device, const Layout& src, const Layout& dst, const Conversion& conv) {
  return kept_choice_of(device, src, dst, conv);
}

void forget_kept_choices() {
  std::lock_guard<std::mutex> guard(Choices::instance().mutex);
  Choices::instance().entries.clear();
}

namespace {

void check_wait_list(const cl::Context& ctx, const std::vector<cl::Event>& wait_list) {
  for (size_t i = 0; i < wait_list.size(); ++i) {
    if (!wait_list[i]()) throw Error("wait_list[" + std::to_string(i) + "] is a null event");
    if (wait_list[i].getInfo<CL_EVENT_CONTEXT>()() != ctx())
      throw Error("wait_list[" + std::to_string(i) + "] belongs to another OpenCL context than the command queue");
  }
}

// The kernel time of a finished event in milliseconds, or -1 when the queue does not profile.
double profiled_ms(const cl::CommandQueue& queue, const cl::Event& event) {
  if (!(queue.getInfo<CL_QUEUE_PROPERTIES>() & CL_QUEUE_PROFILING_ENABLE)) return -1;
  return static_cast<double>(event.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                             event.getProfilingInfo<CL_PROFILING_COMMAND_START>()) * 1e-6;
}

// Enqueues d's kernel after `wait_list`, its arguments set by `set_args`; a first launch counts as the
// caller's activity too (PoCL compiles the work-group function in it) and is reported to the background thread.
// The event is made when `event_wanted` or at the first launch (which the background thread waits on); else
// the returned one is null.
template <class SetArgs>
cl::Event launch(const cl::CommandQueue& queue, Dispatch& d, const std::vector<cl::Event>& wait_list, bool event_wanted,
                 SetArgs set_args) {
  cl::Event event;
  std::optional<BackgroundCompiler::Foreground> first_launch;
  if (!d.launched.load(std::memory_order_relaxed)) first_launch.emplace();
  const bool make = event_wanted || first_launch.has_value();
  LockedKernel k(d.kernel);
  set_args(k.kernel);
  queue.enqueueNDRangeKernel(k.kernel, cl::NullRange, d.global, d.local, wait_list.empty() ? nullptr : &wait_list,
                             make ? &event : nullptr);
  if (first_launch && !d.launched.exchange(true)) BackgroundCompiler::instance().note_first_launch(event);
  return event_wanted ? event : cl::Event();
}

// Whether a call's kernels make events: asked for, or to be waited on.
bool events_made(const ReorderOptions& opt) { return opt.make_event || opt.wait; }

// A reorder's kernel on its buffers, enqueued (everything checked and the kernel found already).
cl::Event launch_reorder(const cl::CommandQueue& queue, Dispatch& d, const cl::Buffer& src, size_t src_offset,
                         const Layout& src_layout, const cl::Buffer& dst, size_t dst_offset, const Layout& dst_layout,
                         const ReorderOptions& opt) {
  std::vector<cl::Event> waits = opt.wait_list;
  if (opt.compensation()) {
    // The kernel adds into the sums, so they start at zero, after whatever the caller's wait list orders.
    // An in-order queue runs the kernel after the fill without an event between them: on NVIDIA's driver an
    // event costs more host time than the fill's launch (perf/results/h100/host_cost.txt: 13.7 us against
    // 5.6 us per enqueue), and the fill was the fused table's one row at half its plain twin's speed there.
    const size_t bytes = static_cast<size_t>(opt.conversion.compensation.count(dst_layout.dims())) * 4;
    const bool in_order = !(queue.getInfo<CL_QUEUE_PROPERTIES>() & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    cl::Event zeroed;
    queue.enqueueFillBuffer(opt.compensation, cl_int(0), 0, bytes, waits.empty() ? nullptr : &waits,
                            in_order ? nullptr : &zeroed);
    if (in_order)
      waits.clear();
    else
      waits = {zeroed};
  }
  return launch(queue, d, waits, events_made(opt), [&](cl::Kernel& k) {
    set_reorder_args(k, src, src_offset / unit_bytes(src_layout.data_type()), dst, dst_offset / unit_bytes(dst_layout.data_type()),
                     d.plans, opt.param_buffers, opt.compensation);
  });
}

// The first `count` 4-byte words of buffer `f` (named `name`, holding `what`), which it must hold.
ByteRange words_range(const BufferFacts& f, uint64_t count, const std::string& name, const char* what) {
  if (f.size / 4 < count)
    throw Error(name + " buffer holds " + std::to_string(f.size) + " bytes but " + std::to_string(count) + what + " need " +
                std::to_string(count * 4));
  return ByteRange{f.root, f.origin, f.origin + count * 4};
}

// Checks the buffers of the run-time parameter values (ReorderOptions::param_buffers): of the context,
// readable, large enough, apart from the destination; none set for a constant. Adds their ranges to `ranges`.
void check_value_buffers(const cl::Context& ctx, const ReorderOptions& opt, const Layout& dst_layout, const ByteRange& dst,
                         std::vector<std::pair<ByteRange, std::string>>& ranges) {
  for (Param q : all_params()) {
    const ParamValues& pv = opt.conversion.param(q);
    const cl::Buffer& b = opt.param_buffers[static_cast<size_t>(q)];
    const std::string name = to_string(q);
    if (!pv.from_buffer) {
      if (b()) throw Error(name + " buffer is set, but the conversion does not take " + name + " from a buffer (from_buffer)");
      continue;
    }
    const BufferFacts f = buffer_facts(ctx, b, name.c_str());
    if (f.flags & CL_MEM_WRITE_ONLY) throw Error(name + " buffer was created CL_MEM_WRITE_ONLY: a kernel cannot read it");
    const ByteRange range = words_range(f, static_cast<uint64_t>(pv.count(dst_layout.dims())), name,
                                        is_zero_point(q) ? " i32 values" : " f32 values");
    if (overlap(range, dst))
      throw Error(name + " buffer overlaps the destination (bytes [" + std::to_string(dst.begin) + ", " + std::to_string(dst.end) +
                  ") of one buffer)");
    ranges.emplace_back(range, name + " buffer");
  }
}

// Checks the compensation sums' buffer (ReorderOptions::compensation): set exactly when the conversion writes
// sums, of the context, writable, large enough, apart from everything else the kernel reads or writes.
void check_compensation_buffer(const cl::Context& ctx, const ReorderOptions& opt, const Layout& dst_layout,
                               const std::vector<std::pair<ByteRange, std::string>>& others) {
  if (!opt.conversion.compensation.present()) {
    if (opt.compensation())
      throw Error("compensation buffer is set, but the conversion writes no compensation sums (Conversion::compensation)");
    return;
  }
  const BufferFacts f = buffer_facts(ctx, opt.compensation, "compensation");
  if (f.flags & CL_MEM_READ_ONLY) throw Error("compensation buffer was created CL_MEM_READ_ONLY: a kernel cannot write it");
  const ByteRange mine = words_range(f, static_cast<uint64_t>(opt.conversion.compensation.count(dst_layout.dims())),
                                     "compensation", " i32 sums");
  for (const auto& [range, what] : others)
    if (overlap(mine, range))
      throw Error("compensation buffer (bytes [" + std::to_string(mine.begin) + ", " + std::to_string(mine.end) + ")) overlaps the " +
                  what + " (bytes [" + std::to_string(range.begin) + ", " + std::to_string(range.end) + ") of one buffer)");
}

// reorder() with the policy resolved (the call's, else the engine's or the default).
ReorderResult enqueue_reorder(const cl::CommandQueue& queue, const cl::Buffer& src, size_t src_offset,
                              const Layout& src_layout, const cl::Buffer& dst, size_t dst_offset,
                              const Layout& dst_layout, const ReorderOptions& opt, CompilePolicy policy) {
  try {
    check_compatible(src_layout, dst_layout);
    // The values themselves are checked where a kernel is planned for them (KernelSelector::select()); a
    // cached dispatch was planned for these very values (same_kernel()), which passed then. Checked per call,
    // 4096 group scales took a cached call from 3.5 to 5.2 us (the plain conversion's: 1.9).
    check_param_shapes(opt.conversion, dst_layout);
    if (!queue()) throw Error("the command queue is null");
    const BorrowedContext borrowed(queue);
    const cl::Context& ctx = borrowed.get();
    const ByteRange dst_range = check_buffer(ctx, dst, dst_offset, dst_layout, "destination", true);
    const ByteRange src_range = check_buffer(ctx, src, src_offset, src_layout, "source", false);
    check_disjoint(src_range, dst_range);
    std::vector<std::pair<ByteRange, std::string>> others = {{src_range, "source"}, {dst_range, "destination"}};
    check_value_buffers(ctx, opt, dst_layout, dst_range, others);
    check_compensation_buffer(ctx, opt, dst_layout, others);
    check_wait_list(ctx, opt.wait_list);
    std::shared_ptr<Dispatch> d = dispatch_for(queue, ctx, src_layout, dst_layout, opt.force_impl, policy, opt.conversion);
    ReorderResult res;
    res.impl = d->impl;
    res.entry = d->entry;
    res.event = launch_reorder(queue, *d, src, src_offset, src_layout, dst, dst_offset, dst_layout, opt);
    if (opt.wait) {
      res.event.wait();
      res.kernel_ms = profiled_ms(queue, res.event);
    }
    return res;
  } catch (...) {
    rethrow_cl(src_layout.describe() + " -> " + dst_layout.describe());
  }
}

// The checks of reorder() on every item, and no destination overlapping another item's bytes, since the
// items run at once: all before anything is enqueued. As in reorder(), the conversion's values are checked
// where a kernel is planned for them (each item's, KernelSelector::select()) and a cached batch kernel was
// planned for these very values (same_kernel()): each batch call checks only the values' shapes, per item.
void check_batch(const cl::Context& ctx, const std::vector<BatchItem>& items, const Conversion& conv) {
  std::vector<ByteRange> src(items.size()), dst(items.size());
  std::vector<BufferFacts> known;
  auto facts = [&](const cl::Buffer& b, const char* which) -> const BufferFacts& {
    for (const BufferFacts& f : known)
      if (b() && f.mem == b()) return f;
    known.push_back(buffer_facts(ctx, b, which));
    return known.back();
  };
  for (size_t k = 0; k < items.size(); ++k) {
    const BatchItem& it = items[k];
    try {
      check_compatible(it.src_layout, it.dst_layout);
      check_param_shapes(conv, it.dst_layout);
      src[k] = check_range(facts(it.src, "source"), it.src_offset, it.src_layout, "source", false);
      dst[k] = check_range(facts(it.dst, "destination"), it.dst_offset, it.dst_layout, "destination", true);
      check_disjoint(src[k], dst[k]);
    } catch (const std::exception& e) {
      throw Error("batch item " + std::to_string(k) + " (" + it.src_layout.describe() + " -> " + it.dst_layout.describe() +
                  "): " + e.what());
    }
  }
  // No destination may meet another item's source or destination (its own source is checked above). One
  // sweep over the ranges sorted by buffer and start, not every pair: a model's list may hold thousands. A
  // range that meets an earlier one meets the earlier one reaching furthest, so that one (of destinations,
  // and of all ranges for a destination) is all a range is compared with.
  struct Range {
    const ByteRange* r;
    size_t item;
    bool writes;
  };
  std::vector<Range> ranges;
  for (size_t k = 0; k < items.size(); ++k)
    for (const Range& x : {Range{&src[k], k, false}, Range{&dst[k], k, true}})
      if (x.r->begin < x.r->end) ranges.push_back(x);
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return std::make_pair(a.r->root, a.r->begin) < std::make_pair(b.r->root, b.r->begin);
  });
  auto refuse = [&](const Range& a, const Range& b) {  // named from the destination (of two, the lower index)
    const Range& d = !a.writes ? b : !b.writes ? a : a.item < b.item ? a : b;
    const Range& o = &d == &a ? b : a;
    throw Error("batch item " + std::to_string(d.item) + "'s destination (bytes [" + std::to_string(d.r->begin) + ", " +
                std::to_string(d.r->end) + ")) overlaps item " + std::to_string(o.item) + "'s " +
                (o.writes ? "destination" : "source") + " (bytes [" + std::to_string(o.r->begin) + ", " +
                std::to_string(o.r->end) + ")) in one buffer: the items of a batch run at once");
  };
  const Range* far = nullptr;        // of this buffer's ranges so far, the one ending last
  const Range* far_write = nullptr;  // the same of its destinations
  for (const Range& x : ranges) {
    if (far && far->r->root != x.r->root) far = far_write = nullptr;
    if (far_write && overlap(*far_write->r, *x.r)) refuse(*far_write, x);
    if (x.writes && far && overlap(*far->r, *x.r)) refuse(x, *far);
    if (!far || x.r->end > far->r->end) far = &x;
    if (x.writes && (!far_write || x.r->end > far_write->r->end)) far_write = &x;
  }
}

// reorder_batch() with the policy resolved.
BatchResult enqueue_batch(const cl::CommandQueue& queue, const std::vector<BatchItem>& items, const ReorderOptions& opt,
                          CompilePolicy policy) {
  try {
    if (!queue()) throw Error("the command queue is null");
    const cl::Context ctx = queue.getInfo<CL_QUEUE_CONTEXT>();
    check_wait_list(ctx, opt.wait_list);
    for (Param q : all_params())
      if (opt.conversion.param(q).from_buffer || opt.param_buffers[static_cast<size_t>(q)]())
        throw Error(std::string("a batch takes no parameter from a device buffer (") + to_string(q) +
                    "): its items would share one; reorder them one by one");
    if (opt.conversion.compensation.present() || opt.compensation())
      throw Error("a batch writes no compensation sums: its items would share one buffer; reorder them one by one");
    check_batch(ctx, items, opt.conversion);
    const cl::Device dev = queue.getInfo<CL_QUEUE_DEVICE>();
    const std::string force = opt.force_impl.empty() ? env_value("CLREORDER_FORCE_IMPL") : opt.force_impl;
    if (force == KernelSelector::instance().agnostic().name()) policy = CompilePolicy::agnostic;
    DeviceInfo limits;
    limits.max_parameter_bytes = dev.getInfo<CL_DEVICE_MAX_PARAMETER_SIZE>();
    BatchResult res;
    res.batched = !items.empty();
    // First every launch's kernel (found, loaded or compiled: whatever can fail), then the enqueues, so that a
    // refusal anywhere (a forced implementation that declines an item) enqueues nothing.
    struct Launch {
      size_t first = 0, n = 0;
      std::vector<cl::Buffer> args;
      std::shared_ptr<Dispatch> batch;               // null: one launch per item meanwhile
      std::vector<std::shared_ptr<Dispatch>> each;   // then the items' own (shape-agnostic) kernels, launched one by one
    };
    std::vector<Launch> launches;
    const size_t per_launch = opt.batch_launch_items ? std::min(opt.batch_launch_items, kMaxBatchItems) : kMaxBatchItems;
    for (size_t first = 0, n = 0; first < items.size(); first += n) {
      // This launch's items: up to per_launch while their distinct buffers and offsets fit the device's
      // arguments (the first always: any device takes two buffers and two offsets).
      std::vector<cl::Buffer> args;
      std::vector<std::pair<size_t, size_t>> buffers;
      auto argument = [&args](const cl::Buffer& b) {
        for (size_t i = 0; i < args.size(); ++i)
          if (args[i]() == b()) return i;
        args.push_back(b);
        return args.size() - 1;
      };
      for (n = 0; first + n < items.size() && n < per_launch; ++n) {
        const BatchItem& it = items[first + n];
        const size_t had = args.size();
        const std::pair<size_t, size_t> b{argument(it.src), argument(it.dst)};
        if (n > 0 && !batch_fits(limits, args.size(), n + 1)) {
          args.resize(had);
          break;
        }
        buffers.push_back(b);
      }
      // Specialised to the layouts and to which items share buffers, never to the buffers or offsets.
      std::string key = "batch:" + dispatch_key(ctx, dev(), items[first].src_layout, items[first].dst_layout, force, opt.conversion);
      for (size_t k = 0; k < n; ++k) {
        if (k > 0) key.append("|").append(items[first + k].src_layout.key()).append("->").append(items[first + k].dst_layout.key());
        key.append("@").append(std::to_string(buffers[k].first)).append(",").append(std::to_string(buffers[k].second));
      }
      auto shape = [&] {
        BatchShape sh{{}, buffers, args.size(), opt.conversion};
        for (size_t k = first; k < first + n; ++k) sh.pairs.emplace_back(items[k].src_layout, items[k].dst_layout);
        return sh;
      };
      std::shared_ptr<Dispatch> d = policy == CompilePolicy::agnostic ? nullptr : cached_dispatch(key, opt.conversion);
      if (!d && policy != CompilePolicy::agnostic) {
        const BackgroundCompiler::Foreground busy;
        const DeviceInfo info = describe_device(dev);
        if (!force.empty() || policy == CompilePolicy::wait || !info.thread_safe) {
          const PlannedBatch pb = plan_batch(info, shape(), force);
          d = record_dispatch(ctx, dev, pb.kd, key, opt.conversion, pb.impls);
        } else if (!BackgroundCompiler::instance().known(key)) {
          const PlannedBatch pb = plan_batch(info, shape(), "");
          if (ProgramCache::instance().stored(ctx, dev, pb.kd.source)) d = record_dispatch(ctx, dev, pb.kd, key, opt.conversion, pb.impls);
          else BackgroundCompiler::instance().submit(key, ctx, dev, shape(), true);
        }
      }
      Launch l{first, n, std::move(args), d, {}};
      if (!d) {  // one launch per item meanwhile, on the shape-agnostic kernel: the batch kernel is what gets compiled
        const DeviceInfo info = policy == CompilePolicy::agnostic ? DeviceInfo{} : describe_device(dev);  // asked only then
        for (size_t k = first; k < first + n; ++k) {
          const bool meanwhile = policy == CompilePolicy::agnostic ||
                                 agnostic_takes(info, items[k].src_layout, items[k].dst_layout, opt.conversion);
          l.each.push_back(dispatch_for(queue, ctx, items[k].src_layout, items[k].dst_layout, opt.force_impl,
                                        meanwhile ? CompilePolicy::agnostic : CompilePolicy::wait, opt.conversion));
        }
      }
      launches.push_back(std::move(l));
    }
    std::vector<cl::Event> events;
    for (const Launch& l : launches) {
      const size_t first = l.first, n = l.n;
      const std::vector<cl::Buffer>& args = l.args;
      const std::shared_ptr<Dispatch>& d = l.batch;
      if (!d) {  // each item by itself, on the kernel found above
        res.batched = false;
        for (size_t k = first; k < first + n; ++k) {
          const BatchItem& it = items[k];
          Dispatch& each = *l.each[k - first];
          events.push_back(launch_reorder(queue, each, it.src, it.src_offset, it.src_layout, it.dst, it.dst_offset,
                                          it.dst_layout, opt));
          res.impls.push_back(each.impl);
        }
        res.launches += n;
        continue;
      }
      std::vector<cl_ulong> bases;
      for (size_t k = first; k < first + n; ++k) {
        bases.push_back(items[k].src_offset / unit_bytes(items[k].src_layout.data_type()));
        bases.push_back(items[k].dst_offset / unit_bytes(items[k].dst_layout.data_type()));
      }
      events.push_back(launch(queue, *d, opt.wait_list, events_made(opt),
                              [&](cl::Kernel& k) { set_batch_args(k, args, bases, d->local_bytes); }));
      res.impls.insert(res.impls.end(), d->item_impls.begin(), d->item_impls.end());
      ++res.launches;
    }
    if (!events_made(opt)) events.clear();  // null events: nothing to wait on or return
    else if (events.size() == 1) res.event = events.front();
    else queue.enqueueMarkerWithWaitList(events.empty() ? (opt.wait_list.empty() ? nullptr : &opt.wait_list) : &events, &res.event);
    if (opt.wait) {
      res.event.wait();
      if (!events.empty() && (queue.getInfo<CL_QUEUE_PROPERTIES>() & CL_QUEUE_PROFILING_ENABLE)) {
        res.kernel_ms = 0;
        for (const cl::Event& e : events) res.kernel_ms += profiled_ms(queue, e);
      }
    }
    return res;
  } catch (...) {
    rethrow_cl("batch of " + std::to_string(items.size()) + " reorders");
  }
}

}  // namespace

ReorderResult reorder(const cl::CommandQueue& queue, const cl::Buffer& src, size_t src_offset, const Layout& src_layout,
                      const cl::Buffer& dst, size_t dst_offset, const Layout& dst_layout, const ReorderOptions& opt) {
  return enqueue_reorder(queue, src, src_offset, src_layout, dst, dst_offset, dst_layout, opt,
                         opt.policy.value_or(CompilePolicy::background));
}

ReorderResult reorder(const Engine& engine, const cl::Buffer& src, size_t src_offset, const Layout& src_layout,
                      const cl::Buffer& dst, size_t dst_offset, const Layout& dst_layout, const ReorderOptions& opt) {
  return enqueue_reorder(engine.queue(), src, src_offset, src_layout, dst, dst_offset, dst_layout, opt,
                         opt.policy.value_or(engine.policy()));
}

BatchResult reorder_batch(const cl::CommandQueue& queue, const std::vector<BatchItem>& items, const ReorderOptions& opt) {
  return enqueue_batch(queue, items, opt, opt.policy.value_or(CompilePolicy::background));
}

BatchResult reorder_batch(const Engine& engine, const std::vector<BatchItem>& items, const ReorderOptions& opt) {
  return enqueue_batch(engine.queue(), items, opt, opt.policy.value_or(engine.policy()));
}

namespace {

// A buffer holding `bytes` (at least one byte: OpenCL has no empty buffers).
cl::Buffer host_copy(const cl::Context& context, cl_mem_flags flags, const std::vector<uint8_t>& bytes) {
  if (bytes.empty()) return cl::Buffer(context, flags, 1);
  // CL_MEM_COPY_HOST_PTR only reads the host memory.
  return cl::Buffer(context, flags | CL_MEM_COPY_HOST_PTR, bytes.size(), const_cast<uint8_t*>(bytes.data()));
}

}  // namespace

std::vector<uint8_t> reorder(const Engine& engine, const std::vector<uint8_t>& src, const Layout& src_layout,
                             const Layout& dst_layout, const ReorderOptions& opt, ReorderResult* result,
                             const std::vector<uint8_t>* dst_init) {
  check_compatible(src_layout, dst_layout);
  if (static_cast<int64_t>(src.size()) != src_layout.bytes())
    throw Error("source holds " + std::to_string(src.size()) + " bytes but " + src_layout.describe() + " needs " +
                std::to_string(src_layout.bytes()));
  if (dst_init && static_cast<int64_t>(dst_init->size()) != dst_layout.bytes())
    throw Error("initial destination holds " + std::to_string(dst_init->size()) + " bytes but " + dst_layout.describe() +
                " needs " + std::to_string(dst_layout.bytes()));
  for (const Layout* l : {&src_layout, &dst_layout}) check_fits_device(engine.info(), *l);
  std::vector<uint8_t> out = dst_init ? *dst_init : std::vector<uint8_t>(static_cast<size_t>(dst_layout.bytes()), 0);
  try {
    // Filled as they are made, and the kernel not waited for: the blocking read is the one wait (on PoCL each
    // blocking command is a round trip to its worker threads, a tenth of a small reorder's time).
    const cl::Buffer s = host_copy(engine.context(), CL_MEM_READ_ONLY, src);
    const cl::Buffer d = host_copy(engine.context(), CL_MEM_READ_WRITE, out);
    ReorderOptions o = opt;
    o.wait = false;
    o.make_event = true;  // the reads wait on it, and the kernel's time is read from it
    const std::array<cl::Buffer, kParams> uploaded = upload_param_values(engine.context(), o.conversion);
    for (size_t q = 0; q < o.param_buffers.size(); ++q)
      if (!o.param_buffers[q]()) o.param_buffers[q] = uploaded[q];
    const size_t sums = o.conversion.compensation.present() ? static_cast<size_t>(o.conversion.compensation.count(dst_layout.dims())) : 0;
    if (sums && !o.compensation()) o.compensation = cl::Buffer(engine.context(), CL_MEM_READ_WRITE, sums * 4);
    ReorderResult r = reorder(engine, s, 0, src_layout, d, 0, dst_layout, o);
    const std::vector<cl::Event> after = {r.event};  // what orders the reads on an out-of-order queue
    r.compensation.resize(sums);
    cl::Event sums_read;
    if (sums) engine.queue().enqueueReadBuffer(o.compensation, CL_FALSE, 0, sums * 4, r.compensation.data(), &after, &sums_read);
    engine.queue().enqueueReadBuffer(d, CL_TRUE, 0, out.size(), out.data(), &after);
    if (sums) sums_read.wait();
    r.kernel_ms = profiled_ms(engine.queue(), r.event);
    if (result) *result = r;
  } catch (...) {
    rethrow_cl(src_layout.describe() + " -> " + dst_layout.describe());
  }
  return out;
}

std::array<cl::Buffer, kParams> upload_param_values(const cl::Context& context, const Conversion& conv) {
  std::array<cl::Buffer, kParams> out;
  for (Param q : all_params()) {
    const ParamValues& pv = conv.param(q);
    if (!pv.from_buffer || pv.values.empty()) continue;
    std::vector<int32_t> z;  // zero points go as i32
    if (is_zero_point(q))
      for (float v : pv.values) {
        if (!(std::nearbyint(v) == v && std::fabs(v) <= 0x1p31f - 128))
          throw Error(std::string(to_string(q)) + " value " + hex_float(v) + " is not an i32 (zero points are)");
        z.push_back(static_cast<int32_t>(v));
      }
    // CL_MEM_COPY_HOST_PTR only reads the host memory.
    const void* data = is_zero_point(q) ? static_cast<const void*>(z.data()) : pv.values.data();
    out[static_cast<size_t>(q)] =
        cl::Buffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, pv.values.size() * 4, const_cast<void*>(data));
  }
  return out;
}

void wait_for_background_compiles() { BackgroundCompiler::instance().wait_idle(); }

void release_cached_kernels_of(const cl::Context& context) {
  BackgroundCompiler::instance().forget(context());
  std::vector<std::shared_ptr<Dispatch>> dropped;  // released after the lock
  {
    std::lock_guard<std::mutex> guard(dispatch_table().mutex);
    auto& table = dispatch_table().entries;
    for (auto it = table.begin(); it != table.end();) {
      if (it->second->context() == context()) {
        dropped.push_back(std::move(it->second));
        it = table.erase(it);
      } else {
        ++it;
      }
    }
  }
  ProgramCache::instance().clear(context());
}

void release_cached_kernels() {
  BackgroundCompiler::instance().forget(nullptr);
  {
    std::lock_guard<std::mutex> guard(dispatch_table().mutex);
    dispatch_table().entries.clear();
  }
  ProgramCache::instance().clear();
}

void prepare(const Engine& engine, const std::vector<std::pair<Layout, Layout>>& pairs, const std::string& force,
             const Conversion& conv) {
  std::vector<KernelSource> sources;
  for (const auto& [s, d] : pairs) sources.push_back(plan_reorder(engine.info(), s, d, force, conv).source);
  ProgramCache::instance().build(engine.context(), engine.device(), sources);
}

}  // namespace clreorder
