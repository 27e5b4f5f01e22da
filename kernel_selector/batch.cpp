// A batch: the kernels the selector generated for many reorders, as functions of one kernel launched once
// (kernels_cl/reorder_batch.cl). A model's weight repacks are each too small to fill a device, and each of
// their launches costs more than its work; one launch pays that once.
#include <algorithm>
#include <cstdio>
#include <map>

#include "clreorder/error.hpp"
#include "clreorder/kernel_selector.hpp"
#include "codegen.hpp"
#include "embedded.hpp"
#include "impls.hpp"

namespace clreorder {

namespace {

// The calls of items [lo, hi) as a binary search on the work-group index w over their ranges' starts (each a
// multiple of the group size `group`): on the group's index, so that a compiler sees each branch taken by a
// whole group.
void dispatch_tree(const std::vector<std::string>& calls, const std::vector<size_t>& start, size_t group, size_t lo,
                   size_t hi, const std::string& indent, std::vector<std::string>& out) {
  if (hi - lo == 1) {
    out.push_back(indent + calls[lo]);
    return;
  }
  const size_t mid = (lo + hi) / 2;
  out.push_back(indent + "if (w < " + num(static_cast<int64_t>(start[mid] / group)) + "ul) {");
  dispatch_tree(calls, start, group, lo, mid, indent + "  ", out);
  out.push_back(indent + "} else {");
  dispatch_tree(calls, start, group, mid, hi, indent + "  ", out);
  out.push_back(indent + "}");
}

}  // namespace

bool batch_fits(const DeviceInfo& device, size_t buffer_count, size_t items) {
  // The offsets' ulong16 vectors first (each 128 bytes, aligned to 128 from the start of the arguments), then
  // pointers counted at 8 bytes whatever the device's address size, the local tile's among them.
  const size_t space = device.max_parameter_bytes ? device.max_parameter_bytes : 1024;
  return items <= kMaxBatchItems && buffer_count <= 2 * kMaxBatchItems &&
         128 * batch_base_vectors(items) + 8 * buffer_count + 8 <= space;
}

size_t batch_base_vectors(size_t items) { return (2 * items + 15) / 16; }

KernelData batch_kernel(const std::vector<KernelData>& items, const std::vector<std::pair<DataType, DataType>>& types,
                        const std::vector<std::pair<size_t, size_t>>& buffers, size_t buffer_count, const DeviceInfo& device) {
  const auto n = [](size_t v) { return num(static_cast<int64_t>(v)); };
  if (items.empty()) throw Error("a batch needs at least one reorder");
  if (items.size() != types.size() || items.size() != buffers.size())
    throw Error("internal: batch_kernel got " + n(items.size()) + " kernels, " + n(types.size()) + " type pairs and " +
                n(buffers.size()) + " buffer pairs");
  if (items.size() > kMaxBatchItems)
    throw Error("a launch of " + n(items.size()) + " reorders exceeds the " + n(kMaxBatchItems) + " one batch kernel holds");
  if (!batch_fits(device, buffer_count, items.size()))
    throw Error("a launch of " + n(items.size()) + " reorders over " + n(buffer_count) + " buffers passes the " +
                n(device.max_parameter_bytes) + " bytes of arguments device '" + device.name + "' takes");
  std::vector<bool> used(buffer_count, false);
  for (const auto& [s, d] : buffers) {
    if (s >= buffer_count || d >= buffer_count)
      throw Error("internal: batch_kernel got buffer argument " + n(std::max(s, d)) + " of " + n(buffer_count));
    used[s] = used[d] = true;
  }
  if (std::find(used.begin(), used.end(), false) != used.end()) throw Error("internal: batch_kernel got an unused buffer argument");
  // The group size: that of the items that stage through a local tile (their groups must be whole, and
  // all of one size: ReorderParams::batch_item), else that of the item with the most work-items. Every
  // range is a multiple of it; the other items' kernels take any.
  size_t local = 1, widest = 0, tile_bytes = 0, tiled_group = 0;
  for (const KernelData& kd : items) {
    if (!kd.plan_args.empty() || kd.global.size() != 1 || kd.local.size() != 1)
      throw Error("implementation '" + kd.impl + "' cannot run inside a batch (it takes a run-time plan or a " +
                  "multi-dimensional range)");
    if (kd.local_bytes) {
      if (tiled_group && kd.local[0] != tiled_group)
        throw Error("implementation '" + kd.impl + "' cannot run inside this batch: its work-groups of " + n(kd.local[0]) +
                    " share a local tile, another item's are " + n(tiled_group) + " (plan batch items with ReorderParams::batch_item)");
      tiled_group = kd.local[0];
      tile_bytes = std::max(tile_bytes, kd.local_bytes);
    }
    if (kd.global[0] > widest) {
      widest = kd.global[0];
      local = kd.local[0];
    }
  }
  if (tiled_group) local = tiled_group;
  std::string functions = embedded_kernel("reorder_batch_begin.cl");
  std::map<std::string, std::string> renamed;  // kernel entry -> its function's name (one per distinct kernel)
  std::vector<std::string> calls, after, args, bases;  // after: each item's part past the barrier, if any
  for (size_t b = 0; b < buffer_count; ++b) args.push_back("__global uchar* b" + n(b) + (b + 1 < buffer_count ? "," : ""));
  for (size_t v = 0; v < batch_base_vectors(items.size()); ++v) bases.push_back("const ulong16 cr_bases" + n(v) + ",");
  // Offset i (item k's source 2k, destination 2k + 1) as its vector's component.
  const auto base = [&](size_t i) { return "cr_bases" + n(i / 16) + ".s" + "0123456789abcdef"[i % 16]; };
  std::vector<size_t> start;
  size_t total = 0;
  for (size_t k = 0; k < items.size(); ++k) {
    const KernelSource& ks = items[k].source;
    auto it = renamed.find(ks.entry);
    if (it == renamed.end()) {
      // Renamed, so that a program may hold both the kernel and a batch that calls it.
      const std::string fn = ks.entry + "_item", from = "#define KERNEL_NAME " + ks.entry + "\n";
      std::string code = ks.code;
      const size_t at = code.find(from);
      if (at == std::string::npos) throw Error("internal: kernel " + ks.entry + " does not define its KERNEL_NAME");
      code.replace(at, from.size(), "#define KERNEL_NAME " + fn + "\n");
      functions += code;
      it = renamed.emplace(ks.entry, fn).first;
    }
    const std::string args_k = "((__global const " + cl_type(types[k].first) + "*)b" + n(buffers[k].first) + ", (__global " +
                               cl_type(types[k].second) + "*)b" + n(buffers[k].second) + ", " + base(2 * k) + ", " + base(2 * k + 1) +
                               ", g - " + n(total) + "ul";
    if (items[k].local_bytes) {
      // Its two passes, the batch kernel's barrier between them (kernels_cl/reorder_local.cl says why).
      const std::string tile = ", (__local " + cl_type(types[k].second) + "*)cr_batch_tile);";
      calls.push_back(it->second + "_load" + args_k + tile);
      after.push_back(it->second + "_store" + args_k + tile);
    } else {
      calls.push_back(it->second + args_k + ");");
      after.push_back(";");
    }
    start.push_back(total);
    total += round_up(items[k].global[0], local);
  }
  functions += embedded_kernel("reorder_batch_end.cl");
  std::vector<std::string> tree, second;
  dispatch_tree(calls, start, local, 0, calls.size(), "", tree);
  if (tile_bytes) {
    second.push_back("barrier(CLK_LOCAL_MEM_FENCE);");
    dispatch_tree(after, start, local, 0, after.size(), "", second);
  }
  Jit jit;
  const std::string tile = tile_bytes ? ", __local ulong* cr_batch_tile" : "";
  jit.def("KERNEL_NAME", "reorder_batch")
      .def("BATCH_ARGS", macro_lines(args))
      .def("BATCH_BASES", macro_lines(bases))
      .def("BATCH_TILE", tile)
      .def("BATCH_DISPATCH(g)", macro_lines(tree))
      .def("BATCH_AFTER_BARRIER(g)", macro_lines(second));
  KernelData kd;
  kd.impl = "batch";
  kd.local_bytes = tile_bytes;
  kd.streams = std::any_of(items.begin(), items.end(), [](const KernelData& item) { return item.streams; });
  kd.source = named_by_text("reorder_batch", jit, embedded_kernel("reorder_batch.cl"));
  kd.source.code = functions + kd.source.code;
  kd.source.options = build_options(kd.source.code, device);
  kd.global = {total};
  kd.local = {local};
  return kd;
}

}  // namespace clreorder
