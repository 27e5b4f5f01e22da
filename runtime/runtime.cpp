// Devices, engines, OpenCL error names and the program cache.
#include "clreorder/runtime.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include "clreorder/cache.hpp"
#include "clreorder/error.hpp"
#include "clreorder/reorder.hpp"
#include "clreorder/version.h"
#include "codegen.hpp"
#include "embedded.hpp"

namespace clreorder {

const char* cl_error_name(int code) {
  switch (code) {
#define CR_ERR(name) case name: return #name;
    CR_ERR(CL_SUCCESS) CR_ERR(CL_DEVICE_NOT_FOUND) CR_ERR(CL_DEVICE_NOT_AVAILABLE) CR_ERR(CL_COMPILER_NOT_AVAILABLE)
    CR_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE) CR_ERR(CL_OUT_OF_RESOURCES) CR_ERR(CL_OUT_OF_HOST_MEMORY)
    CR_ERR(CL_PROFILING_INFO_NOT_AVAILABLE) CR_ERR(CL_MEM_COPY_OVERLAP) CR_ERR(CL_IMAGE_FORMAT_MISMATCH)
    CR_ERR(CL_IMAGE_FORMAT_NOT_SUPPORTED) CR_ERR(CL_BUILD_PROGRAM_FAILURE) CR_ERR(CL_MAP_FAILURE)
    CR_ERR(CL_MISALIGNED_SUB_BUFFER_OFFSET) CR_ERR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    CR_ERR(CL_COMPILE_PROGRAM_FAILURE) CR_ERR(CL_LINKER_NOT_AVAILABLE) CR_ERR(CL_LINK_PROGRAM_FAILURE)
    CR_ERR(CL_DEVICE_PARTITION_FAILED) CR_ERR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) CR_ERR(CL_INVALID_VALUE)
    CR_ERR(CL_INVALID_DEVICE_TYPE) CR_ERR(CL_INVALID_PLATFORM) CR_ERR(CL_INVALID_DEVICE) CR_ERR(CL_INVALID_CONTEXT)
    CR_ERR(CL_INVALID_QUEUE_PROPERTIES) CR_ERR(CL_INVALID_COMMAND_QUEUE) CR_ERR(CL_INVALID_HOST_PTR)
    CR_ERR(CL_INVALID_MEM_OBJECT) CR_ERR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) CR_ERR(CL_INVALID_IMAGE_SIZE)
    CR_ERR(CL_INVALID_SAMPLER) CR_ERR(CL_INVALID_BINARY) CR_ERR(CL_INVALID_BUILD_OPTIONS) CR_ERR(CL_INVALID_PROGRAM)
    CR_ERR(CL_INVALID_PROGRAM_EXECUTABLE) CR_ERR(CL_INVALID_KERNEL_NAME) CR_ERR(CL_INVALID_KERNEL_DEFINITION)
    CR_ERR(CL_INVALID_KERNEL) CR_ERR(CL_INVALID_ARG_INDEX) CR_ERR(CL_INVALID_ARG_VALUE) CR_ERR(CL_INVALID_ARG_SIZE)
    CR_ERR(CL_INVALID_KERNEL_ARGS) CR_ERR(CL_INVALID_WORK_DIMENSION) CR_ERR(CL_INVALID_WORK_GROUP_SIZE)
    CR_ERR(CL_INVALID_WORK_ITEM_SIZE) CR_ERR(CL_INVALID_GLOBAL_OFFSET) CR_ERR(CL_INVALID_EVENT_WAIT_LIST)
    CR_ERR(CL_INVALID_EVENT) CR_ERR(CL_INVALID_OPERATION) CR_ERR(CL_INVALID_GL_OBJECT) CR_ERR(CL_INVALID_BUFFER_SIZE)
    CR_ERR(CL_INVALID_MIP_LEVEL) CR_ERR(CL_INVALID_GLOBAL_WORK_SIZE) CR_ERR(CL_INVALID_PROPERTY)
    CR_ERR(CL_INVALID_IMAGE_DESCRIPTOR) CR_ERR(CL_INVALID_COMPILER_OPTIONS) CR_ERR(CL_INVALID_LINKER_OPTIONS)
    CR_ERR(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef CR_ERR
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "CL_UNKNOWN_ERROR";
  }
}

void rethrow_cl(const std::string& context) {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const cl::Error& e) {
    throw Error(std::string(e.what()) + " failed: " + cl_error_name(e.err()) + " (" + std::to_string(e.err()) +
                ")" + (context.empty() ? "" : " [" + context + "]"));
  } catch (const std::exception& e) {
    throw Error(std::string(e.what()) + (context.empty() ? "" : " [" + context + "]"));
  }
}

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\0' || std::isspace(static_cast<unsigned char>(s.back())))) s.pop_back();
  return s;
}

// The host's last-level cache in bytes, 0 where the C library does not know it. glibc reads it from cpuid, so
// it is there where PoCL, which reads /sys/devices/system/cpu/*/cache, finds nothing (some VMs have no such
// directory, and PoCL then reports a cache of 0).
uint64_t host_cache_bytes() {
  static const uint64_t bytes = [] {
    long size = 0;
#if defined(_SC_LEVEL3_CACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    size = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (size <= 0) size = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return size > 0 ? static_cast<uint64_t>(size) : uint64_t{0};
  }();
  return bytes;
}

std::string device_list_text(const std::vector<DeviceInfo>& devs) {
  if (devs.empty()) return "there is no OpenCL device (is an ICD such as pocl-opencl-icd installed?)";
  std::string s = "devices:";  // one line: errors are printed as one line
  for (const DeviceInfo& d : devs) s += (d.index ? "; " : " ") + std::to_string(d.index) + ": " + d.platform + " / " + d.name;
  return s;
}

}  // namespace

const char* version() { return CLREORDER_VERSION_STRING; }

DeviceInfo describe_device(const cl::Device& device) {
  DeviceInfo d;
  d.index = -1;
  try {
    cl::Platform p(device.getInfo<CL_DEVICE_PLATFORM>(), true);
    d.platform = trim(p.getInfo<CL_PLATFORM_NAME>());
    d.name = trim(device.getInfo<CL_DEVICE_NAME>());
    d.version = trim(device.getInfo<CL_DEVICE_VERSION>());
    d.driver = trim(device.getInfo<CL_DRIVER_VERSION>());
    cl_device_type t = device.getInfo<CL_DEVICE_TYPE>();
    d.type = (t & CL_DEVICE_TYPE_GPU) ? "gpu" : (t & CL_DEVICE_TYPE_CPU) ? "cpu"
           : (t & CL_DEVICE_TYPE_ACCELERATOR) ? "accelerator" : "other";
    d.vendor_id = device.getInfo<CL_DEVICE_VENDOR_ID>();
    d.global_mem = device.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
    d.max_alloc = device.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
    d.cache_bytes = device.getInfo<CL_DEVICE_GLOBAL_MEM_CACHE_SIZE>();
    if (d.cache_bytes == 0 && d.type == "cpu") {  // a CPU device runs on this host: its cache is the host's
      d.cache_bytes = host_cache_bytes();
      d.cache_from_host = d.cache_bytes != 0;
    }
    d.compute_units = device.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
    d.max_work_group = device.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
    d.max_parameter_bytes = device.getInfo<CL_DEVICE_MAX_PARAMETER_SIZE>();
    const std::string extensions = device.getInfo<CL_DEVICE_EXTENSIONS>();
    d.fp16 = extensions.find("cl_khr_fp16") != std::string::npos;
    d.fp64 = extensions.find("cl_khr_fp64") != std::string::npos;
    d.exact_divide = (device.getInfo<CL_DEVICE_SINGLE_FP_CONFIG>() & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
    d.thread_safe = d.platform.find("Oclgrind") == std::string::npos;
    d.device = device;
  } catch (...) {
    rethrow_cl("describing a device");
  }
  return d;
}

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> out;
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error& e) {
    if (e.err() == -1001) return out;  // the ICD loader found no platform
    rethrow_cl("listing platforms");
  }
  for (const cl::Platform& p : platforms) {
    std::vector<cl::Device> devs;
    try {
      p.getDevices(CL_DEVICE_TYPE_ALL, &devs);
    } catch (const cl::Error&) {
      continue;  // CL_DEVICE_NOT_FOUND: a platform without devices
    }
    for (const cl::Device& dev : devs) {
      DeviceInfo d = describe_device(dev);
      d.index = static_cast<int>(out.size());
      out.push_back(d);
    }
  }
  auto gpu = std::find_if(out.begin(), out.end(), [](const DeviceInfo& d) { return d.type == "gpu"; });
  if (gpu != out.end()) gpu->is_default = true;
  else if (!out.empty()) out.front().is_default = true;
  return out;
}

DeviceInfo choose_device(const std::string& spec_in) {
  std::string spec = spec_in;
  std::string origin = "device choice";
  if (spec.empty()) {
    const char* env = std::getenv("CLREORDER_DEVICE");
    if (env && *env) {
      spec = env;
      origin = "CLREORDER_DEVICE";
    }
  }
  std::vector<DeviceInfo> devs = list_devices();
  if (devs.empty()) throw Error("no OpenCL device: " + device_list_text(devs));
  if (spec.empty()) return *std::find_if(devs.begin(), devs.end(), [](const DeviceInfo& d) { return d.is_default; });
  if (spec.find_first_not_of("0123456789") == std::string::npos && spec.size() < 6) {
    size_t i = std::stoul(spec);
    if (i < devs.size()) return devs[i];
  } else {
    for (const DeviceInfo& d : devs)
      if (lower(d.name).find(lower(spec)) != std::string::npos || lower(d.platform).find(lower(spec)) != std::string::npos)
        return d;
  }
  throw Error(origin + " '" + spec + "' matches no OpenCL device; " + device_list_text(devs));
}

Engine Engine::open(const std::string& spec) {
  DeviceInfo d = choose_device(spec);
  Engine e;
  try {
    e.device_ = d.device;
    e.context_ = cl::Context(d.device);
    e.queue_ = cl::CommandQueue(e.context_, d.device, CL_QUEUE_PROFILING_ENABLE);
  } catch (...) {
    rethrow_cl("opening device " + d.name);
  }
  e.info_ = d;
  e.own_cached_kernels();
  return e;
}

void Engine::own_cached_kernels() {
  // The deleter holds its own reference until the caches have let go of theirs.
  cl::Context ctx = context_;
  lifetime_ = std::shared_ptr<void>(nullptr, [ctx](void*) {
    try {
      release_cached_kernels_of(ctx);
    } catch (...) {
      // A destructor must not throw; the entries then stay until release_cached_kernels().
    }
  });
}

Engine::Engine(cl_context context, cl_command_queue queue) {
  if (!context || !queue) throw Error("Engine: the caller's cl_context and cl_command_queue must not be null");
  try {
    context_ = cl::Context(context, true);
    queue_ = cl::CommandQueue(queue, true);
    device_ = queue_.getInfo<CL_QUEUE_DEVICE>();
    if (queue_.getInfo<CL_QUEUE_CONTEXT>()() != context)
      throw Error("Engine: the caller's command queue does not belong to the caller's context");
  } catch (...) {
    rethrow_cl("wrapping the caller's context and queue");
  }
  info_ = describe_device(device_);
  own_cached_kernels();
}

uint64_t fnv1a(const std::string& text, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

struct ProgramCache::Entry {
  cl::Context context;  // retained: keeps the handle from being reused while we key by it
  cl_device_id device;
  uint64_t hash;
  std::string code, options, entry;
  cl::Program program;
  cl::Kernel kernel;
  std::shared_ptr<std::mutex> mutex = std::make_shared<std::mutex>();
};

// A built program whose persistent copy is still to be written.
struct ProgramCache::PendingStore {
  cl::Program program;
  cl_context context;
  std::string device_key, options, common;
  DiskCache::Program stored;  // its kernels; the binary is asked for when stored
};

namespace {

// Asks the driver for the program's binary and writes it with its kernel list; a driver that cannot hand out
// binaries just gets no persistent cache.
void store_binary(const cl::Program& program, const std::string& device_key, const std::string& options,
                  const std::string& common, DiskCache::Program stored) {
  try {
    std::vector<std::vector<unsigned char>> binaries = program.getInfo<CL_PROGRAM_BINARIES>();
    if (binaries.size() == 1 && !binaries[0].empty()) {
      stored.binary = std::move(binaries[0]);
      DiskCache::instance().store(device_key, options, common, stored);
    }
  } catch (const std::exception&) {
  }
}

// kernels_cl/common.cl instantiates its conversion families for scalars and for the vector widths a program
// asks for (each width costs PoCL's front end about 15 ms a program): CR_WIDTH_<N> for every width N whose
// functions `code` names (an identifier cr_..._2, _4, _8 or _16). A name that only looks like one costs a
// family more, never a missing function. Derived from the code alone, so the disk cache's key (common.cl and
// the kernels' code) still decides the program's text.
std::string conversion_widths(const std::string& code) {
  bool used[4] = {false, false, false, false};
  const char* const suffixes[4] = {"_2", "_4", "_8", "_16"};
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = code.find("cr_"); at != std::string::npos; at = code.find("cr_", at + 1)) {
    if (at > 0 && ident(code[at - 1])) continue;
    size_t end = at;
    while (end < code.size() && ident(code[end])) ++end;
    for (int k = 0; k < 4; ++k) {  // the name code[at, end) ends in the suffix, after something
      const size_t n = std::strlen(suffixes[k]);
      if (end - at > n && code.compare(end - n, n, suffixes[k]) == 0) used[k] = true;
    }
    at = end - 1;
  }
  std::string out;
  for (int k = 0; k < 4; ++k)
    if (used[k]) out += std::string("#define CR_WIDTH") + suffixes[k] + "\n";
  return out;
}

}  // namespace

struct ProgramCache::Flight {
  cl_context context;
  cl_device_id device;
  uint64_t hash;
  std::string code, options, entry;
  bool done = false;
  std::string error;  // the build's failure, rethrown to every waiter
};

ProgramCache& ProgramCache::instance() {
  // Never destroyed, for the reason the dispatch table in reorder.cpp gives: no OpenCL object is released
  // after main returns. clear() releases everything while the caller's OpenCL is still up.
  static ProgramCache& cache = *new ProgramCache;
  return cache;
}

namespace {

bool same_kernel(const std::string& code, const std::string& options, const std::string& entry, const KernelSource& s) {
  return code == s.code && options == s.options && entry == s.entry;
}

// The in-memory cache's bucket of a kernel: its code and build options.
uint64_t entry_hash(const KernelSource& s) { return fnv1a(s.code + "\n//" + s.options); }

// Everything a program binary depends on besides its source and options: the persistent cache's key.
std::string device_cache_key(const cl::Device& dev) {
  const cl::Platform platform(dev.getInfo<CL_DEVICE_PLATFORM>());
  return std::string("clreorder ") + CLREORDER_VERSION_STRING + "|" + platform.getInfo<CL_PLATFORM_NAME>() + "|" +
         platform.getInfo<CL_PLATFORM_VERSION>() + "|" + dev.getInfo<CL_DEVICE_NAME>() + "|" +
         dev.getInfo<CL_DEVICE_VERSION>() + "|" + dev.getInfo<CL_DRIVER_VERSION>();
}

}  // namespace

std::shared_ptr<ProgramCache::Entry> ProgramCache::find(const cl::Context& ctx, const cl::Device& dev,
                                                        const KernelSource& src, uint64_t h) {
  auto range = entries_.equal_range(h);
  for (auto it = range.first; it != range.second; ++it) {
    const auto& e = it->second;
    if (e->context() == ctx() && e->device == dev() && same_kernel(e->code, e->options, e->entry, src)) return e;
  }
  return nullptr;
}

std::shared_ptr<ProgramCache::Flight> ProgramCache::flight(const cl::Context& ctx, const cl::Device& dev,
                                                           const KernelSource& src, uint64_t h) {
  for (const auto& f : flights_)
    if (f->hash == h && f->context == ctx() && f->device == dev() && same_kernel(f->code, f->options, f->entry, src)) return f;
  return nullptr;
}

std::vector<std::shared_ptr<ProgramCache::Entry>> ProgramCache::make(const cl::Context& ctx, const cl::Device& dev,
                                                                     const std::vector<const KernelSource*>& sources,
                                                                     CacheStats* counts,
                                                                     std::vector<std::shared_ptr<PendingStore>>* deferred) {
  std::vector<std::shared_ptr<Entry>> made;
  std::vector<bool> have(sources.size(), false);
  const std::string common = embedded_kernel("common.cl");
  // A program's text: the conversion families at the widths its kernels name, common.cl, the kernels.
  auto program_text = [&](const std::string& code) { return conversion_widths(code) + common + code; };
  // A kernel its program's build produced, or, where the driver cannot create it from that build
  // (`unoptimised`, source builds only), from a program of its own built with -cl-opt-disable. Oclgrind 21.10
  // compiles with clang -O2, whose optimiser may emit an intrinsic its interpreter lacks (a swizzle's mask
  // exchanging two binary digits becomes llvm.bitreverse.i2), and then refuses the kernel with
  // CL_INVALID_KERNEL_NAME after a build that succeeded (NOTES, "An Oclgrind failure that is Oclgrind's").
  auto entry_of = [&](const KernelSource& s, const cl::Program& program, bool* unoptimised) {
    auto e = std::make_shared<Entry>();
    e->context = ctx;
    e->device = dev();
    e->hash = entry_hash(s);
    e->code = s.code;
    e->options = s.options;
    e->entry = s.entry;
    e->program = program;
    try {
      try {
        e->kernel = cl::Kernel(program, s.entry.c_str());
      } catch (const cl::Error& ce) {
        if (!unoptimised || ce.err() != CL_INVALID_KERNEL_NAME) throw;
        e->program = cl::Program(ctx, program_text(s.code));
        e->program.build(std::vector<cl::Device>{dev}, (s.options + " -cl-opt-disable").c_str());
        e->kernel = cl::Kernel(e->program, s.entry.c_str());
        *unoptimised = true;
        ++counts->programs_built;
      }
    } catch (...) {
      rethrow_cl("creating kernel " + s.entry);
    }
    return e;
  };
  auto add = [&](size_t i, const cl::Program& program, bool* unoptimised = nullptr) {
    made.push_back(entry_of(*sources[i], program, unoptimised));
    have[i] = true;
    ++counts->kernels_built;
  };
  DiskCache& disk = DiskCache::instance();
  const std::string dkey = disk.directory().empty() ? "" : device_cache_key(dev);
  // Stored binaries first: one load brings every kernel its program holds (a model's batch comes back whole).
  for (size_t i = 0; i < sources.size() && !dkey.empty(); ++i) {
    if (have[i]) continue;
    const KernelSource& s = *sources[i];
    DiskCache::Program stored;
    if (!disk.load(dkey, s.options, common, s.entry, s.code, &stored)) continue;
    cl::Program program;
    try {
      program = cl::Program(ctx, std::vector<cl::Device>{dev}, cl::Program::Binaries{stored.binary});
      program.build(std::vector<cl::Device>{dev}, s.options.c_str());
    } catch (const std::exception& e) {
      disk.count_driver_rejection(e.what());
      continue;
    }
    ++counts->programs_loaded;
    // Its other kernels come along (a model's batch, stored by a background compile, is looked up one
    // kernel at a time by the reorders that follow); build() publishes those nobody has yet.
    for (const auto& k : stored.kernels) {
      bool asked = false;
      for (size_t j = i; j < sources.size() && !asked; ++j) {
        asked = !have[j] && sources[j]->options == s.options && k.first == sources[j]->entry && k.second == sources[j]->code;
        if (asked) add(j, program);
      }
      if (!asked) made.push_back(entry_of(KernelSource{k.first, k.second, s.options}, program, nullptr));
    }
  }
  // The rest from source: one program per set of build options, stored for the next process.
  std::vector<std::pair<std::string, std::vector<size_t>>> groups;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (have[i]) continue;
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == sources[i]->options; });
    if (g == groups.end()) groups.push_back({sources[i]->options, {i}});
    else g->second.push_back(i);
  }
  for (const auto& [options, members] : groups) {
    std::string code;
    DiskCache::Program stored;
    for (size_t i : members) {
      code += "\n" + sources[i]->code;
      stored.kernels.emplace_back(sources[i]->entry, sources[i]->code);
    }
    const std::string text = program_text(code);
    cl::Program program;
    try {
      program = cl::Program(ctx, text);
      program.build(std::vector<cl::Device>{dev}, options.c_str());
    } catch (const cl::BuildError& e) {
      std::string log;
      for (const auto& pair : e.getBuildLog()) log += pair.second;
      throw Error(std::string("clBuildProgram failed: ") + cl_error_name(e.err()) + " (" + std::to_string(e.err()) +
                  ") for " + std::to_string(members.size()) + " kernel(s) starting with " + sources[members.front()]->entry +
                  "; build log:\n" + log);
    } catch (...) {
      rethrow_cl("building " + sources[members.front()]->entry);
    }
    ++counts->programs_built;
    if (build_log_wanted()) {
      std::string log;
      for (const auto& pair : program.getBuildInfo<CL_PROGRAM_BUILD_LOG>()) log += pair.second;
      std::fprintf(stderr, "clreorder: build log of the program of %zu kernel(s) starting with %s (options %s):\n%s\n",
                   members.size(), sources[members.front()]->entry.c_str(), options.c_str(), log.c_str());
    }
    for (size_t i : members) {
      bool unoptimised = false;
      add(i, program, &unoptimised);
      // The stored binary lacks that kernel: a later process builds it again the same way.
      if (unoptimised)
        stored.kernels.erase(std::find(stored.kernels.begin(), stored.kernels.end(),
                                       std::make_pair(sources[i]->entry, sources[i]->code)));
    }
    if (dkey.empty() || stored.kernels.empty()) continue;
    if (deferred)
      deferred->push_back(std::make_shared<PendingStore>(PendingStore{program, ctx(), dkey, options, common, std::move(stored)}));
    else
      store_binary(program, dkey, options, common, std::move(stored));
  }
  return made;
}

void ProgramCache::build(const cl::Context& ctx, const cl::Device& dev, const std::vector<KernelSource>& sources,
                         bool defer_store) {
  // Claim what nobody has or builds; wait for what another thread builds. No lock while compiling.
  std::vector<const KernelSource*> mine;
  std::vector<std::shared_ptr<Flight>> claimed, theirs;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    for (const KernelSource& s : sources) {
      const uint64_t h = entry_hash(s);
      if (find(ctx, dev, s, h)) continue;
      if (auto f = flight(ctx, dev, s, h)) {
        if (std::find(theirs.begin(), theirs.end(), f) == theirs.end() &&
            std::find(claimed.begin(), claimed.end(), f) == claimed.end())
          theirs.push_back(f);
        continue;
      }
      auto f = std::make_shared<Flight>();
      f->context = ctx();
      f->device = dev();
      f->hash = h;
      f->code = s.code;
      f->options = s.options;
      f->entry = s.entry;
      flights_.push_back(f);
      claimed.push_back(f);
      mine.push_back(&s);
    }
  }
  std::string error;
  std::vector<std::shared_ptr<Entry>> made;
  std::vector<std::shared_ptr<PendingStore>> deferred;
  CacheStats counts;
  if (!mine.empty()) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      made = make(ctx, dev, mine, &counts, defer_store ? &deferred : nullptr);
    } catch (const std::exception& e) {
      error = e.what();
    }
    counts.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  {
    std::lock_guard<std::mutex> guard(mutex_);
    for (const auto& e : made)
      if (!find(e->context, cl::Device(e->device, true), KernelSource{e->entry, e->code, e->options}, e->hash))
        entries_.emplace(e->hash, e);
    pending_stores_.insert(pending_stores_.end(), deferred.begin(), deferred.end());
    stats_.programs_built += counts.programs_built;
    stats_.programs_loaded += counts.programs_loaded;
    stats_.kernels_built += counts.kernels_built;
    stats_.compile_ms += counts.compile_ms;
    for (const auto& f : claimed) {
      f->done = true;
      f->error = error;
      flights_.erase(std::find(flights_.begin(), flights_.end(), f));
    }
  }
  if (!claimed.empty()) built_.notify_all();
  if (!error.empty()) throw Error(error);
  std::unique_lock<std::mutex> lock(mutex_);
  for (const auto& f : theirs) {
    built_.wait(lock, [&] { return f->done; });
    if (!f->error.empty()) throw Error(f->error);
  }
}

KernelHandle ProgramCache::handle(const cl::Context& ctx, const cl::Device& dev, const KernelSource& src) {
  const uint64_t h = entry_hash(src);
  std::shared_ptr<Entry> e;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    e = find(ctx, dev, src, h);
    if (e) ++stats_.hits;
  }
  if (!e) {
    build(ctx, dev, {src}, describe_device(dev).thread_safe);
    std::lock_guard<std::mutex> guard(mutex_);
    e = find(ctx, dev, src, h);
  }
  if (!e) throw Error("program cache lost kernel " + src.entry);
  return KernelHandle{e->kernel, e->mutex};
}

void ProgramCache::count_dispatch_hit() {
  std::lock_guard<std::mutex> guard(mutex_);
  ++stats_.dispatch_hits;
}

CacheStats ProgramCache::stats() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return stats_;
}

void ProgramCache::clear() {
  std::lock_guard<std::mutex> guard(mutex_);
  entries_.clear();
  pending_stores_.clear();  // unwritten: release_cached_kernels() writes them first
}

bool ProgramCache::cached(const cl::Context& ctx, const cl::Device& dev, const KernelSource& src) {
  std::lock_guard<std::mutex> guard(mutex_);
  return find(ctx, dev, src, entry_hash(src)) != nullptr;
}

std::vector<std::shared_ptr<ProgramCache::PendingStore>> ProgramCache::take_pending_stores(cl_context context) {
  std::vector<std::shared_ptr<PendingStore>> taken;
  for (auto it = pending_stores_.begin(); it != pending_stores_.end();) {
    if (!context || (*it)->context == context) {
      taken.push_back(std::move(*it));
      it = pending_stores_.erase(it);
    } else {
      ++it;
    }
  }
  return taken;
}

size_t ProgramCache::store_pending(cl_context context) {
  std::vector<std::shared_ptr<PendingStore>> mine;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    mine = take_pending_stores(context);
  }
  for (const auto& p : mine) store_binary(p->program, p->device_key, p->options, p->common, std::move(p->stored));
  return mine.size();
}

cl_context ProgramCache::pending_store_context() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return pending_stores_.empty() ? nullptr : pending_stores_.front()->context;
}

bool ProgramCache::stored(const cl::Context& ctx, const cl::Device& dev, const KernelSource& src) {
  if (cached(ctx, dev, src)) return true;
  const DiskCache& disk = DiskCache::instance();
  return !disk.directory().empty() && disk.has(device_cache_key(dev), src.options, src.entry, src.code);
}

void ProgramCache::clear(cl_context context) {
  std::vector<std::shared_ptr<Entry>> dropped;  // released after the lock
  std::vector<std::shared_ptr<PendingStore>> unwritten;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (context) unwritten = take_pending_stores(context);
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->second->context() == context) {
        dropped.push_back(std::move(it->second));
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
  }
}

}  // namespace clreorder
