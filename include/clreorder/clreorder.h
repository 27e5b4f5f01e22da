/* clreorder: the C API (C99 and C++). Opaque handles over the C++ library; no exception crosses it. Every
 * function returns a status; on failure it writes none of its outputs, and clreorder_last_error() names the
 * offending value (format, shape, type, buffer, offset, device) in this thread's last failed call.
 * Thread safety: a clreorder_context may be used by several threads at once (reorders on its queue are
 * thread-safe); a clreorder_layout is immutable once made and may be shared; releasing a handle while
 * another thread uses it is the caller's error. */
#ifndef CLREORDER_CLREORDER_H
#define CLREORDER_CLREORDER_H

#include <stddef.h>
#include <stdint.h>

#include <CL/cl.h>

#include "clreorder/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a call did. */
typedef enum clreorder_status {
  CLREORDER_SUCCESS = 0,
  CLREORDER_INVALID_ARGUMENT = -1, /**< a null handle or pointer, or a count out of range */
  CLREORDER_INVALID_VALUE = -2,    /**< a format, type, shape, layout, buffer, offset or device the library refuses */
  CLREORDER_OUT_OF_MEMORY = -3,    /**< the host ran out of memory */
  CLREORDER_INTERNAL_ERROR = -4    /**< anything else; the message says what */
} clreorder_status;

/** What a reorder does while its specialised kernel is neither compiled nor stored (see CompilePolicy). */
typedef enum clreorder_policy {
  CLREORDER_POLICY_BACKGROUND = 0, /**< the default: the shape-agnostic kernel now, the specialised one later */
  CLREORDER_POLICY_WAIT = 1,       /**< compile the specialised kernel, then run it */
  CLREORDER_POLICY_AGNOSTIC = 2,   /**< never compile per shape */
  /* Not policies: they make every 32-bit int a value of the type, so that a wrong one from C is refused
     (CLREORDER_INVALID_VALUE) instead of being undefined behaviour in the C++ behind this API. */
  CLREORDER_POLICY_INT_MIN_ = -0x7fffffff - 1,
  CLREORDER_POLICY_INT_MAX_ = 0x7fffffff
} clreorder_policy;

/** A device, context and queue to reorder on: the caller's (retained, not owned) or the library's own. */
typedef struct clreorder_context_t* clreorder_context;
/** A tensor's memory layout: format, data type, dims, paddings, strides, base offset. Immutable. */
typedef struct clreorder_layout_t* clreorder_layout;
/** How a reorder writes its destination (the rounding and overflow rules of the conversion, the padding
 *  policy); the `_attr` forms of the calls take one, NULL meaning the defaults. Set it up before use: calls only read it. */
typedef struct clreorder_attr_t* clreorder_attr;

/** Counters of the kernel caches in this process (memory and disk). */
typedef struct clreorder_cache_stats {
  uint64_t programs_compiled; /**< programs compiled from source */
  uint64_t programs_loaded;   /**< programs built from a stored binary */
  uint64_t kernels_built;     /**< kernels compiled or loaded */
  uint64_t disk_hits;         /**< stored kernels found */
  uint64_t disk_misses;       /**< kernels looked up on disk and not found */
  uint64_t disk_rejected;     /**< stored files found unusable and rebuilt */
  uint64_t disk_stored;       /**< programs written */
} clreorder_cache_stats;

/** The version of the linked library ("MAJOR.MINOR.PATCH"); CLREORDER_VERSION_STRING is the headers'. */
const char* clreorder_version(void);

/** The message of this thread's last failed call ("" when none failed yet). Valid until its next call. */
const char* clreorder_last_error(void);

/** A context over the caller's OpenCL objects: `queue` must belong to `context` and `device`. All three are
 *  retained until clreorder_context_release(); the caller keeps its own references. */
clreorder_status clreorder_context_create(cl_context context, cl_device_id device, cl_command_queue queue,
                                          clreorder_context* out);

/** A context on a device of the library's choosing: `device_spec` is an index or a name substring as in
 *  `clreorder devices`, or NULL / "" for CLREORDER_DEVICE or the default device. */
clreorder_status clreorder_context_create_default(const char* device_spec, clreorder_context* out);

/** Releases a context (NULL is ignored): its cached kernels and its hold on the OpenCL objects go with it,
 *  after a background compile in hand for it ends. */
void clreorder_context_release(clreorder_context context);

/** The context's OpenCL objects (not retained for the caller); any output may be NULL. */
clreorder_status clreorder_context_info(clreorder_context context, cl_context* cl_ctx, cl_device_id* device,
                                        cl_command_queue* queue);

/** Sets what the context's reorders do while a specialised kernel is not compiled. Not to be called while
 *  other threads reorder on the context. */
clreorder_status clreorder_context_set_policy(clreorder_context context, clreorder_policy policy);

/** A layout by format name (OpenVINO names, oneDNN tags, PyTorch names, TPU layouts: every spelling the C++
 *  API takes) and data type name ("f32", "f16", "bf16", "f64", "f8e4m3", "f8e5m2", "i8", "u8", "i16", "u16",
 *  "i32", "u32", "i64", "u64", "u4", "i4"; u4 and i4 go two to a byte, the lower offset in the low nibble).
 *  `pad_lower`, `pad_upper` and `strides` hold `rank` values each, or are NULL (no padding; the format's dense
 *  strides); strides and `offset` count elements (nibbles of u4 and i4). */
clreorder_status clreorder_layout_create(const char* format, const char* data_type, size_t rank, const int64_t* dims,
                                         const int64_t* pad_lower, const int64_t* pad_upper, const int64_t* strides,
                                         int64_t offset, clreorder_layout* out);

/** Releases a layout (NULL is ignored). */
void clreorder_layout_release(clreorder_layout layout);

/** Bytes a buffer must hold for the layout from its start (paddings, gaps and offset included). */
clreorder_status clreorder_layout_bytes(clreorder_layout layout, size_t* bytes);

/** The layout described as the CLI prints it ("bfyx f32 1x3x4x5 ..."): writes at most `size` bytes with the
 *  terminating zero into `text` (which may be NULL when size is 0) and the full length (without it) into
 *  *length when that is not NULL. */
clreorder_status clreorder_layout_describe(clreorder_layout layout, char* text, size_t size, size_t* length);

/** Attributes holding the defaults: rounding to nearest even, saturating integers. */
clreorder_status clreorder_attr_create(clreorder_attr* out);

/** Releases attributes (NULL is ignored). */
void clreorder_attr_release(clreorder_attr attr);

/** How inexact values round: "nearest-even" (the default) or "toward-zero" (as a C cast; OpenVINO's GPU
 *  plugin). */
clreorder_status clreorder_attr_set_rounding(clreorder_attr attr, const char* mode);

/** What out-of-range values become in an integer destination: "saturate" (the default: clamped) or "wrap"
 *  (modulo 2^bits, two's complement; OpenVINO's truncate mode). Float destinations follow IEEE either way. */
clreorder_status clreorder_attr_set_overflow(clreorder_attr attr, const char* mode);

/** What the destination's padding (blocked tails, explicit padding) gets: "zero" (the default; weights need
 *  it) or "keep" (not written: its bytes stay as they were, for consumers that ignore them). */
clreorder_status clreorder_attr_set_padding(clreorder_attr attr, const char* policy);

/** One parameter of the arithmetic fused into the reorder (clreorder::Conversion::params): `name` is
 *  "src-zero-point", "sub", "src-scale", "mul", "div", "dst-scale" or "dst-zero-point"; `count` values (copied),
 *  one for the whole tensor (axis -1) or one per index of the destination's canonical axis `axis` (per
 *  channel); count 0 removes it. "div" and "dst-scale" divide by multiplying with the value's f32 reciprocal,
 *  as oneDNN's reorders do. The values are checked against each reorder's destination when it runs. */
clreorder_status clreorder_attr_set_param(clreorder_attr attr, const char* name, const float* values, size_t count,
                                          int axis);

/** clreorder_attr_set_param() in groups: one value per group of `group` consecutive indices of `axis` (the
 *  last may be short), one row of them for each index of `outer_axis` (-1: one row), row-major: int4 LLM
 *  weights' scales, groups along i for every o. */
clreorder_status clreorder_attr_set_param_groups(clreorder_attr attr, const char* name, const float* values, size_t count,
                                                 int axis, int64_t group, int outer_axis);

/** One parameter whose values the kernel reads from `buffer` when it runs (f32; i32 for zero points; as many
 *  as axis, group and outer_axis give, as clreorder_attr_set_param_groups(); axis -1: one value), so one
 *  compiled kernel serves any values and they may come from another kernel. `attr` retains the buffer until
 *  the parameter is set again (NULL removes it) or `attr` is released. A batch takes no such parameter. */
clreorder_status clreorder_attr_set_param_buffer(clreorder_attr attr, const char* name, cl_mem buffer, int axis,
                                                 int64_t group, int outer_axis);

/** Compensation sums (clreorder::Conversion::compensation): the reorder also writes, into `buffer` (zeroed
 *  first), for each index of the destination's canonical axis `axis` (and of `outer_axis`, -1 for none:
 *  row-major), the i32 sum of the destination values there (an integer type of at most 32 bits), as oneDNN's
 *  int8 weights reorders do. `attr` retains the buffer; NULL removes the sums. A batch writes none. */
clreorder_status clreorder_attr_set_compensation(clreorder_attr attr, cl_mem buffer, int axis, int outer_axis);

/** Enqueues the reorder of `src` (at byte offset src_offset, laid out as src_layout) into `dst` (at dst_offset,
 *  as dst_layout) on the context's queue after the `num_events` events of `wait_list`, and returns at once;
 *  `event` (may be NULL: then none is made, which saves a driver its cost) receives the kernel's event, which
 *  the caller releases. Every destination element
 *  the layout owns is written, padding as zero; nothing is enqueued when an argument is refused. */
clreorder_status clreorder_reorder(clreorder_context context, cl_mem src, size_t src_offset, clreorder_layout src_layout,
                                   cl_mem dst, size_t dst_offset, clreorder_layout dst_layout, cl_uint num_events,
                                   const cl_event* wait_list, cl_event* event);

/** clreorder_reorder() converting values by `attr` (NULL: the defaults). */
clreorder_status clreorder_reorder_attr(clreorder_context context, cl_mem src, size_t src_offset,
                                        clreorder_layout src_layout, cl_mem dst, size_t dst_offset,
                                        clreorder_layout dst_layout, clreorder_attr attr, cl_uint num_events,
                                        const cl_event* wait_list, cl_event* event);

/** One reorder of a batch: a source and a destination, each a buffer, a byte offset in it and a layout. */
typedef struct clreorder_batch_item {
  cl_mem src;                   /**< the source buffer */
  size_t src_offset;            /**< byte offset of the source layout in `src` */
  clreorder_layout src_layout;  /**< the source layout */
  cl_mem dst;                   /**< the destination buffer */
  size_t dst_offset;            /**< byte offset of the destination layout in `dst` */
  clreorder_layout dst_layout;  /**< the destination layout */
} clreorder_batch_item;

/** Enqueues `count` reorders as one kernel launch (one per device limit of items), for example a model's
 *  weight repacks at load time, after the `num_events` events of `wait_list`, and returns at once; `event`
 *  (may be NULL: none made) receives an event that completes when every item is written, which the caller
 *  releases; `launches` (may be NULL) the number of kernel launches. Each item is checked as clreorder_reorder()
 *  checks its arguments, and no item's destination may overlap another item's bytes; a refused item is
 *  named by its index and nothing is enqueued. Compile policy as clreorder_reorder(). */
clreorder_status clreorder_reorder_batch(clreorder_context context, size_t count, const clreorder_batch_item* items,
                                         cl_uint num_events, const cl_event* wait_list, cl_event* event, size_t* launches);

/** clreorder_reorder_batch() converting every item's values by `attr` (NULL: the defaults). */
clreorder_status clreorder_reorder_batch_attr(clreorder_context context, size_t count, const clreorder_batch_item* items,
                                              clreorder_attr attr, cl_uint num_events, const cl_event* wait_list,
                                              cl_event* event, size_t* launches);

/** Compiles the kernels of `count` reorders (src_layouts[i] -> dst_layouts[i]) as one program, ahead of use. */
clreorder_status clreorder_precompile(clreorder_context context, size_t count, const clreorder_layout* src_layouts,
                                      const clreorder_layout* dst_layouts);

/** clreorder_precompile() for reorders that convert by `attr` (NULL: the defaults). */
clreorder_status clreorder_precompile_attr(clreorder_context context, size_t count, const clreorder_layout* src_layouts,
                                           const clreorder_layout* dst_layouts, clreorder_attr attr);

/** Times every implementation that accepts src -> dst (converting by `attr`, NULL: the defaults) on the
 *  context's device, `runs` rounds interleaved, and keeps the fastest as the pair's choice on this device
 *  (where it beats the ranked choice by 10%, else the ranked one), in this process and in the kernel cache:
 *  later reorders of the pair run it. The kept implementation's name is written as
 *  clreorder_layout_describe() writes text (`kept` may be NULL with `size` 0). */
clreorder_status clreorder_tune(clreorder_context context, clreorder_layout src_layout, clreorder_layout dst_layout,
                                clreorder_attr attr, int runs, char* kept, size_t size, size_t* length);

/** Waits for the background compiles and the kernel-cache writes handed to the background thread so far. */
clreorder_status clreorder_wait_for_background(void);

/** Sets the persistent kernel cache's directory for this process ("off" disables it; NULL or "" returns to
 *  CLREORDER_CACHE_DIR, then $XDG_CACHE_HOME/clreorder or ~/.cache/clreorder). */
clreorder_status clreorder_set_cache_directory(const char* directory);

/** The cache directory in use ("" when off), as clreorder_layout_describe() writes text. */
clreorder_status clreorder_cache_directory(char* text, size_t size, size_t* length);

/** The kernel caches' counters. */
clreorder_status clreorder_get_cache_stats(clreorder_cache_stats* stats);

#ifdef __cplusplus
}
#endif

#endif
