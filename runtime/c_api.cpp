// The C API (include/clreorder/clreorder.h) over the C++ library: every entry point catches everything, keeps
// the message for clreorder_last_error() and writes its outputs only on success.
#include "clreorder/clreorder.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "clreorder/bench.hpp"
#include "clreorder/cache.hpp"
#include "clreorder/error.hpp"
#include "clreorder/format.hpp"
#include "clreorder/reorder.hpp"

struct clreorder_context_t {
  clreorder::Engine engine;
};

struct clreorder_layout_t {
  clreorder::Layout layout;
};

struct clreorder_attr_t {
  clreorder::Conversion conversion;
  std::array<cl::Buffer, clreorder::kParams> buffers;  // clreorder_attr_set_param_buffer()'s, retained
  cl::Buffer compensation;                              // clreorder_attr_set_compensation()'s, retained
};

namespace {

thread_local std::string last_error;

// A caller's buffer as the C++ API takes it: a retained copy, so the handle stays the caller's; null stays
// null, which the C++ API names.
cl::Buffer callers_buffer(cl_mem mem) { return mem ? cl::Buffer(mem, true) : cl::Buffer(); }

// Runs `body`, mapping what it throws to a status and a message; clears the message on success.
template <class Body>
clreorder_status guarded(const char* function, Body&& body) {
  try {
    body();
    last_error.clear();
    return CLREORDER_SUCCESS;
  } catch (const clreorder::Error& e) {
    last_error = std::string(function) + ": " + e.what();
    return CLREORDER_INVALID_VALUE;
  } catch (const std::bad_alloc&) {
    last_error = std::string(function) + ": out of host memory";
    return CLREORDER_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    last_error = std::string(function) + ": " + e.what();
    return CLREORDER_INTERNAL_ERROR;
  } catch (...) {
    last_error = std::string(function) + ": an unexpected exception";
    return CLREORDER_INTERNAL_ERROR;
  }
}

// The conversion of attributes that may be NULL (the defaults).
clreorder::Conversion conversion_of(clreorder_attr attr) { return attr ? attr->conversion : clreorder::Conversion{}; }

// A null argument the caller had to give: the status for it, with its name.
clreorder_status missing(const char* function, const char* argument) {
  last_error = std::string(function) + ": " + argument + " is NULL";
  return CLREORDER_INVALID_ARGUMENT;
}

#define CR_REQUIRE(arg) \
  if (!(arg)) return missing(__func__, #arg)

clreorder::Dims dims_of(const int64_t* values, size_t rank) {
  return values ? clreorder::Dims(values, values + rank) : clreorder::Dims{};
}

// `text` copied into the caller's buffer as clreorder.h describes.
void copy_text(const std::string& text, char* out, size_t size, size_t* length) {
  if (size > 0) {
    const size_t n = std::min(size - 1, text.size());
    std::memcpy(out, text.data(), n);
    out[n] = '\0';
  }
  if (length) *length = text.size();
}

clreorder::CompilePolicy policy_of(clreorder_policy p) {
  switch (p) {
    case CLREORDER_POLICY_BACKGROUND: return clreorder::CompilePolicy::background;
    case CLREORDER_POLICY_WAIT: return clreorder::CompilePolicy::wait;
    case CLREORDER_POLICY_AGNOSTIC: return clreorder::CompilePolicy::agnostic;
    case CLREORDER_POLICY_INT_MIN_:
    case CLREORDER_POLICY_INT_MAX_:
      break;
  }
  throw clreorder::Error("policy " + std::to_string(static_cast<int>(p)) + " is none of CLREORDER_POLICY_*");
}

}  // namespace

extern "C" {

const char* clreorder_version(void) { return clreorder::version(); }

const char* clreorder_last_error(void) { return last_error.c_str(); }

clreorder_status clreorder_context_create(cl_context context, cl_device_id device, cl_command_queue queue,
                                          clreorder_context* out) {
  CR_REQUIRE(context);
  CR_REQUIRE(device);
  CR_REQUIRE(queue);
  CR_REQUIRE(out);
  return guarded(__func__, [&] {
    cl_context queue_context = nullptr;
    cl_device_id queue_device = nullptr;
    if (clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof queue_context, &queue_context, nullptr) != CL_SUCCESS ||
        clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof queue_device, &queue_device, nullptr) != CL_SUCCESS)
      throw clreorder::Error("the command queue is not a valid cl_command_queue");
    if (queue_context != context) throw clreorder::Error("the command queue belongs to another cl_context than the one given");
    if (queue_device != device) throw clreorder::Error("the command queue belongs to another device than the one given");
    auto* c = new clreorder_context_t{clreorder::Engine(context, queue)};
    *out = c;
  });
}

clreorder_status clreorder_context_create_default(const char* device_spec, clreorder_context* out) {
  CR_REQUIRE(out);
  return guarded(__func__, [&] {
    auto* c = new clreorder_context_t{clreorder::Engine::open(device_spec ? device_spec : "")};
    *out = c;
  });
}

void clreorder_context_release(clreorder_context context) {
  guarded(__func__, [&] { delete context; });
}

clreorder_status clreorder_context_info(clreorder_context context, cl_context* cl_ctx, cl_device_id* device,
                                        cl_command_queue* queue) {
  CR_REQUIRE(context);
  if (cl_ctx) *cl_ctx = context->engine.context()();
  if (device) *device = context->engine.device()();
  if (queue) *queue = context->engine.queue()();
  last_error.clear();
  return CLREORDER_SUCCESS;
}

clreorder_status clreorder_context_set_policy(clreorder_context context, clreorder_policy policy) {
  CR_REQUIRE(context);
  return guarded(__func__, [&] { context->engine = context->engine.with_policy(policy_of(policy)); });
}

clreorder_status clreorder_layout_create(const char* format, const char* data_type, size_t rank, const int64_t* dims,
                                         const int64_t* pad_lower, const int64_t* pad_upper, const int64_t* strides,
                                         int64_t offset, clreorder_layout* out) {
  CR_REQUIRE(format);
  CR_REQUIRE(data_type);
  CR_REQUIRE(dims);
  CR_REQUIRE(out);
  return guarded(__func__, [&] {
    if (rank == 0 || rank > 8) throw clreorder::Error("rank " + std::to_string(rank) + " is not 1 to 8");
    clreorder::Layout layout(clreorder::format_from_name(format), clreorder::parse_data_type(data_type),
                             dims_of(dims, rank), dims_of(pad_lower, rank), dims_of(pad_upper, rank),
                             dims_of(strides, rank), offset);
    *out = new clreorder_layout_t{std::move(layout)};
  });
}

void clreorder_layout_release(clreorder_layout layout) {
  guarded(__func__, [&] { delete layout; });
}

clreorder_status clreorder_layout_bytes(clreorder_layout layout, size_t* bytes) {
  CR_REQUIRE(layout);
  CR_REQUIRE(bytes);
  return guarded(__func__, [&] { *bytes = static_cast<size_t>(layout->layout.bytes()); });
}

clreorder_status clreorder_layout_describe(clreorder_layout layout, char* text, size_t size, size_t* length) {
  CR_REQUIRE(layout);
  if (size > 0) CR_REQUIRE(text);
  return guarded(__func__, [&] { copy_text(layout->layout.describe(), text, size, length); });
}

clreorder_status clreorder_attr_create(clreorder_attr* out) {
  CR_REQUIRE(out);
  return guarded(__func__, [&] { *out = new clreorder_attr_t{}; });
}

void clreorder_attr_release(clreorder_attr attr) { delete attr; }

clreorder_status clreorder_attr_set_rounding(clreorder_attr attr, const char* mode) {
  CR_REQUIRE(attr);
  CR_REQUIRE(mode);
  return guarded(__func__, [&] { attr->conversion.rounding = clreorder::parse_rounding(mode); });
}

clreorder_status clreorder_attr_set_overflow(clreorder_attr attr, const char* mode) {
  CR_REQUIRE(attr);
  CR_REQUIRE(mode);
  return guarded(__func__, [&] { attr->conversion.overflow = clreorder::parse_overflow(mode); });
}

clreorder_status clreorder_attr_set_padding(clreorder_attr attr, const char* policy) {
  CR_REQUIRE(attr);
  CR_REQUIRE(policy);
  return guarded(__func__, [&] { attr->conversion.padding = clreorder::parse_padding(policy); });
}

clreorder_status clreorder_attr_set_param(clreorder_attr attr, const char* name, const float* values, size_t count,
                                          int axis) {
  return clreorder_attr_set_param_groups(attr, name, values, count, axis, 1, -1);
}

clreorder_status clreorder_attr_set_param_groups(clreorder_attr attr, const char* name, const float* values, size_t count,
                                                 int axis, int64_t group, int outer_axis) {
  CR_REQUIRE(attr);
  CR_REQUIRE(name);
  CR_REQUIRE(values || count == 0);
  return guarded(__func__, [&] {
    const clreorder::Param q = clreorder::parse_param(name);
    clreorder::ParamValues pv;
    pv.values.assign(values, values + count);
    if (count) {
      pv.axis = axis;
      pv.group = group;
      pv.outer_axis = outer_axis;
    }
    attr->conversion.param(q) = std::move(pv);
    attr->buffers[static_cast<size_t>(q)] = cl::Buffer();
  });
}

clreorder_status clreorder_attr_set_param_buffer(clreorder_attr attr, const char* name, cl_mem buffer, int axis,
                                                 int64_t group, int outer_axis) {
  CR_REQUIRE(attr);
  CR_REQUIRE(name);
  return guarded(__func__, [&] {
    const clreorder::Param q = clreorder::parse_param(name);
    clreorder::ParamValues pv;
    if (buffer) {
      pv.from_buffer = true;
      pv.axis = axis;
      pv.group = group;
      pv.outer_axis = outer_axis;
    }
    attr->conversion.param(q) = std::move(pv);
    attr->buffers[static_cast<size_t>(q)] = callers_buffer(buffer);
  });
}

clreorder_status clreorder_attr_set_compensation(clreorder_attr attr, cl_mem buffer, int axis, int outer_axis) {
  CR_REQUIRE(attr);
  return guarded(__func__, [&] {
    attr->conversion.compensation = buffer ? clreorder::Compensation{axis, outer_axis} : clreorder::Compensation{};
    attr->compensation = callers_buffer(buffer);
  });
}

clreorder_status clreorder_reorder(clreorder_context context, cl_mem src, size_t src_offset, clreorder_layout src_layout,
                                   cl_mem dst, size_t dst_offset, clreorder_layout dst_layout, cl_uint num_events,
                                   const cl_event* wait_list, cl_event* event) {
  return clreorder_reorder_attr(context, src, src_offset, src_layout, dst, dst_offset, dst_layout, nullptr, num_events,
                                wait_list, event);
}

clreorder_status clreorder_reorder_attr(clreorder_context context, cl_mem src, size_t src_offset,
                                        clreorder_layout src_layout, cl_mem dst, size_t dst_offset,
                                        clreorder_layout dst_layout, clreorder_attr attr, cl_uint num_events,
                                        const cl_event* wait_list, cl_event* event) {
  CR_REQUIRE(context);
  CR_REQUIRE(src_layout);
  CR_REQUIRE(dst_layout);
  if (num_events > 0) CR_REQUIRE(wait_list);
  return guarded(__func__, [&] {
    clreorder::ReorderOptions opt;
    opt.conversion = conversion_of(attr);
    if (attr) {
      opt.param_buffers = attr->buffers;
      opt.compensation = attr->compensation;
    }
    for (cl_uint i = 0; i < num_events; ++i) opt.wait_list.emplace_back(wait_list[i], true);
    opt.make_event = event != nullptr;  // an event costs a driver time of its own (ReorderOptions::make_event)
    const cl::Buffer s = callers_buffer(src), d = callers_buffer(dst);
    clreorder::ReorderResult r =
        clreorder::reorder(context->engine, s, src_offset, src_layout->layout, d, dst_offset, dst_layout->layout, opt);
    if (event) {
      clRetainEvent(r.event());  // the caller's reference; r's own goes with r
      *event = r.event();
    }
  });
}

clreorder_status clreorder_reorder_batch(clreorder_context context, size_t count, const clreorder_batch_item* items,
                                         cl_uint num_events, const cl_event* wait_list, cl_event* event, size_t* launches) {
  return clreorder_reorder_batch_attr(context, count, items, nullptr, num_events, wait_list, event, launches);
}

clreorder_status clreorder_reorder_batch_attr(clreorder_context context, size_t count, const clreorder_batch_item* items,
                                              clreorder_attr attr, cl_uint num_events, const cl_event* wait_list,
                                              cl_event* event, size_t* launches) {
  CR_REQUIRE(context);
  if (count > 0) CR_REQUIRE(items);
  if (num_events > 0) CR_REQUIRE(wait_list);
  return guarded(__func__, [&] {
    clreorder::ReorderOptions opt;
    opt.conversion = conversion_of(attr);
    if (attr) {  // refused: a batch takes no run-time values and writes no sums
      opt.param_buffers = attr->buffers;
      opt.compensation = attr->compensation;
    }
    for (cl_uint i = 0; i < num_events; ++i) opt.wait_list.emplace_back(wait_list[i], true);
    opt.make_event = event != nullptr;  // an event costs a driver time of its own (ReorderOptions::make_event)
    std::vector<clreorder::BatchItem> list;
    for (size_t i = 0; i < count; ++i) {
      const clreorder_batch_item& it = items[i];
      if (!it.src_layout || !it.dst_layout) throw clreorder::Error("batch item " + std::to_string(i) + " holds a NULL layout");
      list.push_back(clreorder::BatchItem{callers_buffer(it.src), it.src_offset, it.src_layout->layout, callers_buffer(it.dst),
                                          it.dst_offset, it.dst_layout->layout});
    }
    clreorder::BatchResult r = clreorder::reorder_batch(context->engine, list, opt);
    if (launches) *launches = r.launches;
    if (event) {
      clRetainEvent(r.event());
      *event = r.event();
    }
  });
}

clreorder_status clreorder_precompile(clreorder_context context, size_t count, const clreorder_layout* src_layouts,
                                      const clreorder_layout* dst_layouts) {
  return clreorder_precompile_attr(context, count, src_layouts, dst_layouts, nullptr);
}

clreorder_status clreorder_precompile_attr(clreorder_context context, size_t count, const clreorder_layout* src_layouts,
                                           const clreorder_layout* dst_layouts, clreorder_attr attr) {
  CR_REQUIRE(context);
  if (count > 0) {
    CR_REQUIRE(src_layouts);
    CR_REQUIRE(dst_layouts);
  }
  return guarded(__func__, [&] {
    std::vector<std::pair<clreorder::Layout, clreorder::Layout>> pairs;
    for (size_t i = 0; i < count; ++i) {
      if (!src_layouts[i] || !dst_layouts[i]) throw clreorder::Error("layout pair " + std::to_string(i) + " holds a NULL layout");
      pairs.emplace_back(src_layouts[i]->layout, dst_layouts[i]->layout);
    }
    clreorder::prepare(context->engine, pairs, "", conversion_of(attr));
  });
}

clreorder_status clreorder_tune(clreorder_context context, clreorder_layout src_layout, clreorder_layout dst_layout,
                                clreorder_attr attr, int runs, char* kept, size_t size, size_t* length) {
  CR_REQUIRE(context);
  CR_REQUIRE(src_layout);
  CR_REQUIRE(dst_layout);
  if (size > 0) CR_REQUIRE(kept);
  return guarded(__func__, [&] {
    const clreorder::TuneResult t =
        clreorder::tune_reorder(context->engine, src_layout->layout, dst_layout->layout, conversion_of(attr), runs);
    copy_text(t.kept, kept, size, length);
  });
}

clreorder_status clreorder_wait_for_background(void) {
  return guarded(__func__, [] { clreorder::wait_for_background_compiles(); });
}

clreorder_status clreorder_set_cache_directory(const char* directory) {
  return guarded(__func__, [&] {
    if (directory && *directory) clreorder::DiskCache::instance().set_directory(directory);
    else clreorder::DiskCache::instance().use_environment();
  });
}

clreorder_status clreorder_cache_directory(char* text, size_t size, size_t* length) {
  if (size > 0) CR_REQUIRE(text);
  return guarded(__func__, [&] { copy_text(clreorder::DiskCache::instance().directory(), text, size, length); });
}

clreorder_status clreorder_get_cache_stats(clreorder_cache_stats* stats) {
  CR_REQUIRE(stats);
  return guarded(__func__, [&] {
    const clreorder::CacheStats m = clreorder::ProgramCache::instance().stats();
    const clreorder::DiskCacheStats d = clreorder::DiskCache::instance().stats();
    *stats = clreorder_cache_stats{m.programs_built, m.programs_loaded, m.kernels_built, d.hits, d.misses, d.rejected, d.stored};
  });
}

}  // extern "C"
