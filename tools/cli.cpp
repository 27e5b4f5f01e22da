// clreorder command-line tool: thin argument parsing over the library (all logic lives there, so the CLI,
// the C++ API and tests behave the same). See `clreorder help`.
#include "cli.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <map>
#include <memory>
#include <tuple>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "clreorder/bench.hpp"
#include "clreorder/cache.hpp"
#include "clreorder/error.hpp"
#include "clreorder/format.hpp"
#include "clreorder/kernel_selector.hpp"
#include "clreorder/picture.hpp"
#include "clreorder/reference.hpp"
#include "clreorder/reorder.hpp"

namespace clreorder {

namespace {

using Json = nlohmann::ordered_json;

// What `clreorder --help` shows after the command list: the notes that hold for every command.
const char* kFooter = R"(Run `clreorder COMMAND --help` for a command's options; options take `--key value` or `--key=value`.
Strides (elements; of a whole block for a blocked axis) and offsets (elements) describe views such as
PyTorch's (sizes, strides, storage_offset): elements between strided ones are never written; a source
stride may be 0 (broadcast). FORMAT is an OpenVINO name, a oneDNN tag (nChw16c, aBcd16b), a PyTorch
name (channels_last) or a TPU layout (tpu_aligned(npus=4,npu_bytes=1024,addr=0)).
--to-shape reshapes on the way (same element count, any rank): elements correspond by their canonical
row-major index, as OpenVINO's reorder between bfyx, bfzyx and bfwzyx.
Shapes, paddings and strides are in the formats' canonical logical order: data b,f,[v,u,w,z],y,x; weights
o,i,[z],y,x; grouped weights g,o,i,[z],y,x. Data types: f32 f16 bf16 f64 f8e4m3 f8e5m2 i8 u8 i16 u16 i32 u32
i64 u64 u4 i4 (default f32; f64 on devices with double support; u4 and i4 two to a byte, low nibble first,
offsets and strides in nibbles).
Without --input the source holds each element's logical linear index (wrapped to the type) and zero
padding. --check compares every destination byte, padding included, with the host reference.
Kernel cache: compiled kernels persist in CLREORDER_CACHE_DIR, else $XDG_CACHE_HOME/clreorder, else
~/.cache/clreorder; CLREORDER_CACHE_DIR=off disables it.
Environment: CLREORDER_DEVICE (index or name substring), CLREORDER_FORCE_IMPL (implementation name),
CLREORDER_TUNING (cpu or gpu tiles, whatever the device), CLREORDER_INDEX_BITS (64 forces 64-bit indices).
On PoCL this program pins the driver's worker threads to their cores (POCL_AFFINITY=1) unless POCL_AFFINITY
is set: unpinned, both often shared one core, which halved the speeds it reports.
Exit status: 0 done, 1 a --check that found a difference, 2 bad input or an error (one line on stderr).)";

// One command's options, parsed by CLI11 and kept as text: numbers, lists, names and files are checked by the
// command itself, whose errors name the value. Unknown, repeated or missing options and extra arguments are
// CLI11's errors, which name them too.
class Args {
 public:
  Args(CLI::App& parent, const std::string& name, const std::string& about)
      : app_(parent.add_subcommand(name, about)) {}
  Args(const Args&) = delete;
  Args& operator=(const Args&) = delete;

  /// `--key VALUE`: one non-empty value, not itself an option (a forgotten value is not silently the next option).
  Args& value(const std::string& key, const std::string& type, const std::string& help, bool required = false) {
    CLI::Option* o = app_->add_option("--" + key, values_[key], help)->type_name(type);
    o->check(CLI::Validator(
        [](std::string& v) -> std::string {
          if (v.empty()) return "empty value";
          if (v.rfind("--", 0) == 0) return "needs a value, not the option '" + v + "'";
          return "";
        },
        "", "not empty"));
    if (required) o->required();
    return *this;
  }
  /// A bare `--key`.
  Args& flag(const std::string& key, const std::string& help) {
    app_->add_flag("--" + key, help);
    return *this;
  }
  /// A positional argument, at most one (FORMAT, FILE, info|clear).
  Args& positional(const std::string& name, const std::string& help) {
    positional_option_ = app_->add_option(name, positional_, help);
    return *this;
  }
  /// Parses a line of `run`'s options on their own (precompile's lines).
  void parse_line(std::vector<std::string> words) {
    words.insert(words.begin(), app_->get_name());
    std::reverse(words.begin(), words.end());  // CLI11 takes them last first
    app_->get_parent()->parse(words);
  }
  bool chosen() const { return app_->parsed(); }

  bool has(const std::string& k) const {
    CLI::Option* o = app_->get_option_no_throw("--" + k);
    return o && o->count() > 0;
  }
  std::string get(const std::string& k, const std::string& def = "") const {
    return has(k) ? values_.at(k) : def;
  }
  /// A whole number option in [lo, hi], or `def` when absent.
  int64_t count(const std::string& k, int64_t def, int64_t lo, int64_t hi) const {
    if (!has(k)) return def;
    const std::string v = get(k);
    const bool digits = v.size() <= 15 && v.find_first_not_of("0123456789") == std::string::npos;
    const int64_t n = digits ? std::stoll(v) : -1;
    if (!digits || n < lo || n > hi)
      throw Error("--" + k + " '" + v + "': expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
    return n;
  }
  /// The positional argument, or "" when none was given.
  std::string positional() const {
    return positional_option_ && positional_option_->count() > 0 ? positional_ : std::string();
  }

 private:
  CLI::App* app_;
  std::map<std::string, std::string> values_;  // nodes stay put: CLI11 holds references to the values
  std::string positional_;
  CLI::Option* positional_option_ = nullptr;
};

// One side's padding, strides and base offset, as layout_from() reads them (`pre`: "src-", "dst-" or "").
void add_side_options(Args& a, const std::string& pre, const std::string& side) {
  a.value(pre + "pad-lower", "P0,P1,..", side + "padding before each axis (a destination's is zeroed)")
      .value(pre + "pad-upper", "P0,P1,..", side + "padding after each axis")
      .value(pre + "strides", "S0,S1,..", side + "strides in elements: a view (0 broadcasts a source)")
      .value(pre + "offset", "N", side + "base offset in elements");
}

// The options that describe a reorder (run, bench, source, precompile's lines); `device` as well unless a
// precompile line, whose device is the command's. `required`: --from, --to and --shape must be given (bench
// checks them itself: --batch FILE replaces them).
void add_layout_options(Args& a, bool device = true, bool required = true) {
  a.value("from", "FORMAT", "source format", required)
      .value("to", "FORMAT", "destination format", required)
      .value("shape", "D0,D1,..", "logical dims, canonical order", required)
      .value("dtype", "TYPE", "source data type (default f32)")
      .value("to-dtype", "TYPE", "destination data type (default: --dtype)")
      .value("to-shape", "D0,D1,..", "destination dims: a reshape, same element count")
      .value("round", "MODE", "rounding of inexact values: nearest-even (default) or toward-zero")
      .value("overflow", "MODE", "out-of-range values in an integer type: saturate (default) or wrap")
      .value("padding", "POLICY", "the destination's padding: zero (default) or keep (left as it was, not written)")
      .value("src-zero-point", "Z|Z0,Z1,..|@FILE", "subtracted from the source value first (integers; a list or a file of raw i32: per index of --quant-axis)")
      .value("sub", "V|V0,V1,..|@FILE", "subtracted next (a list or a file of raw f32: per index of the feature axis f)")
      .value("src-scale", "S|S0,S1,..|@FILE", "then multiplied by (a list or a file of raw f32: per index of --quant-axis)")
      .value("mul", "V|V0,V1,..|@FILE", "then multiplied by (a list or a file of raw f32: per index of the feature axis f)")
      .value("div", "V|V0,V1,..|@FILE", "then divided by (multiplied by its f32 reciprocal; a list or a file of raw f32: per index of the feature axis f)")
      .value("dst-scale", "S|S0,S1,..|@FILE", "then divided by (multiplied by its f32 reciprocal; a list or a file of raw f32: per index of --quant-axis)")
      .value("dst-zero-point", "Z|Z0,Z1,..|@FILE", "added last, before the conversion to the destination type (integers; a list or a file of raw i32: per index of --quant-axis)")
      .value("quant-axis", "[O,]A", "the axis letter (of the destination format) the scale and zero-point lists are per index of; O,A: one row of A's values (or groups) for each index of O")
      .value("quant-group", "G", "scales and zero points per group of G consecutive indices of --quant-axis's A (the last group may be short)")
      .flag("param-buffers", "pass the parameters' values to the kernel in device buffers instead of compiling them in (one kernel for any values; automatic past 8192 indexed values)")
      .value("compensation", "[O,]A", "also sum the destination's values (integers) per index of axis A (O,A: for each index of O too) into i32 compensation sums, as oneDNN's int8 weights reorders do")
      .value("impl", "NAME", "force an implementation (see `source`)");
  add_side_options(a, "src-", "source ");
  add_side_options(a, "dst-", "destination ");
  if (device) a.value("device", "SPEC", "device index or name substring (see `devices`)");
}

Dims optional_dims(const Args& a, const std::string& key) { return a.has(key) ? parse_dims(a.get(key)) : Dims{}; }

Json json_or_null(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }

std::string coord_text(const Format& f, const int64_t* c) {
  std::string s = "[";
  for (int a = 0; a < f.rank(); ++a)
    s += (a ? "; " : "") + std::string(1, f.axes()[a]) + "=" + std::to_string(c[a]);
  return s + "]";
}

int cmd_devices(const Args& a) {
  std::vector<DeviceInfo> devs = list_devices();
  if (a.has("json")) {
    Json out = Json::array();
    for (const DeviceInfo& d : devs)
      out.push_back({{"index", d.index}, {"default", d.is_default}, {"platform", d.platform}, {"name", d.name},
                     {"type", d.type}, {"vendor_id", d.vendor_id}, {"version", d.version}, {"driver", d.driver}, {"global_mem_bytes", d.global_mem},
                     {"max_alloc_bytes", d.max_alloc}, {"cache_bytes", d.cache_bytes ? Json(d.cache_bytes) : Json(nullptr)},
                     {"cache_from_host", d.cache_from_host}, {"compute_units", d.compute_units},
                     {"max_work_group", d.max_work_group}, {"fp16", d.fp16}, {"fp64", d.fp64}});
    std::printf("%s\n", out.dump(2).c_str());
    return devs.empty() ? 1 : 0;
  }
  if (devs.empty()) {
    std::printf("no OpenCL platform or device found\n");
    return 1;
  }
  std::string platform;
  for (const DeviceInfo& d : devs) {
    if (d.platform != platform) {
      std::printf("platform: %s\n", d.platform.c_str());
      platform = d.platform;
    }
    std::printf("%s %d: %s\n", d.is_default ? "*" : " ", d.index, d.name.c_str());
    std::printf("     type %s, vendor id 0x%04x, %s, driver %s\n", d.type.c_str(), d.vendor_id, d.version.c_str(),
                d.driver.c_str());
    std::printf("     global memory %.1f MiB, max allocation %.1f MiB, cache %.1f MiB%s, compute units %u, max work-group %zu, fp16 %s, fp64 %s\n",
                d.global_mem / 1048576.0, d.max_alloc / 1048576.0, d.cache_bytes / 1048576.0,
                d.cache_from_host ? " (the host's: the device reports none)" : "", d.compute_units, d.max_work_group,
                d.fp16 ? "yes" : "no", d.fp64 ? "yes" : "no");
  }
  return 0;
}

// A format's blocks as data: [{"axes": "f", "size": 16}, ...] in physical order.
Json blocks_json(const Format& f) {
  Json out = Json::array();
  for (const Level& l : f.levels())
    if (l.block > 0) out.push_back({{"axes", f.dims()[static_cast<size_t>(l.dim)].axes}, {"size", l.block}});
  return out;
}

int cmd_formats(const Args& a) {
  const bool json = a.has("json");
  Json out = Json::array();
  for (const FormatEntry& e : registry()) {
    if (!e.unsupported.empty()) {
      if (json)
        out.push_back({{"name", e.name}, {"source", e.source}, {"supported", false}, {"reason", e.unsupported}, {"kind", nullptr},
                       {"rank", nullptr}, {"axes", nullptr}, {"order", nullptr}, {"blocks", nullptr},
                       {"blocked", nullptr}, {"aliases", Json::array()}});
      else
        std::printf("%-46s not supported: %s\n", e.name.c_str(), e.unsupported.c_str());
      continue;
    }
    const Format f = Format::parse(e.name);
    const std::vector<std::string> aliases = aliases_of(f);
    if (json) {
      out.push_back({{"name", e.name}, {"source", e.source}, {"supported", true}, {"reason", nullptr}, {"kind", to_string(f.kind())},
                     {"rank", f.rank()}, {"axes", f.axes()}, {"order", f.order()}, {"blocks", blocks_json(f)},
                     {"blocked", f.is_blocked()}, {"aliases", aliases}});
      continue;
    }
    std::string aka;
    for (const std::string& alias : aliases) aka += (aka.empty() ? "aka " : ", ") + alias;
    std::printf("%-46s %-16s rank %d  order %-8s blocks %-12s %s\n", e.name.c_str(), to_string(f.kind()), f.rank(),
                f.order().c_str(), f.blocks_string().c_str(), aka.c_str());
  }
  if (json) std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

// What the first reorder of a process found: its kernel in the persistent cache, or compiled (and stored).
std::string cache_outcome(const CacheStats& before, const DiskCacheStats& disk_before) {
  const CacheStats now = ProgramCache::instance().stats();
  const DiskCacheStats disk = DiskCache::instance().stats();
  const std::string dir = DiskCache::instance().directory();
  if (now.programs_loaded > before.programs_loaded) return "loaded from the kernel cache " + dir;
  if (now.programs_built == before.programs_built) return "kernel already in memory";
  if (dir.empty()) return "compiled (kernel cache off)";
  std::string s = disk.rejected > disk_before.rejected ? "compiled (a stored file was unusable), " : "compiled, ";
  if (disk.stored > disk_before.stored) return s + "stored in " + dir;
  if (ProgramCache::instance().pending_store_context()) return s + "to be stored in " + dir + " (off the first result's path)";
  return s + "not stored (see the warning)";
}

// One side's layout from its options (`pre` "src-", "dst-" or "" for explain): format, type, shape, paddings,
// explicit strides and base offset.
Layout layout_from(const Args& a, const std::string& fmt, const std::string& dtype, const Dims& shape, const std::string& pre) {
  return Layout(format_from_name(fmt), parse_data_type(dtype), shape, optional_dims(a, pre + "pad-lower"),
                optional_dims(a, pre + "pad-upper"), optional_dims(a, pre + "strides"),
                a.count(pre + "offset", 0, 0, int64_t(1) << 50));
}

std::string errno_text() { return std::strerror(errno); }

// A file the CLI writes (`run --output`, `explain --svg`; `option` names it in errors): opened without
// truncating (run opens it before any device work, so an unwritable path is reported before a kernel runs),
// written only at the end, each write checked (/dev/full fails there); if this run created the file and then
// failed, it is removed, so an error leaves nothing behind, and a file (or device) that was there stays.
class OutputFile {
 public:
  explicit OutputFile(std::string path, std::string option = "--output") : path_(std::move(path)), option_(std::move(option)) {
    struct stat st;
    existed_ = stat(path_.c_str(), &st) == 0;
    if (existed_ && S_ISDIR(st.st_mode)) throw Error(option_ + " '" + path_ + "' is a directory, not a file");
    fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (fd_ < 0) throw Error("cannot write " + option_ + " file '" + path_ + "': " + errno_text());
    regular_ = fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile() {
    if (fd_ >= 0) close(fd_);
    if (!written_ && !existed_) unlink(path_.c_str());
  }
  void write_all(const void* data, size_t size) {
    if (regular_ && ftruncate(fd_, 0) != 0) fail();
    const char* bytes = static_cast<const char*>(data);
    for (size_t at = 0; at < size;) {
      const ssize_t n = write(fd_, bytes + at, size - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail();
      at += static_cast<size_t>(n);
    }
    const int rc = close(fd_);  // reports a write the kernel deferred
    fd_ = -1;
    if (rc != 0) fail();
    written_ = true;
  }

 private:
  [[noreturn]] void fail() { throw Error("cannot write " + option_ + " file '" + path_ + "': " + errno_text()); }
  std::string path_, option_;
  int fd_ = -1;
  bool existed_ = false, regular_ = false, written_ = false;
};

// `explain --svg FILE`: the memory map as a picture; a dry run (the fuzzer) draws it but writes nothing.
int write_picture(const Args& a, const Layout& l, int64_t limit, const CliOptions& o) {
  PictureOptions po;
  po.color_by = a.get("color-by");
  po.columns = a.count("columns", 0, 1, 4096);
  po.max_cells = limit;
  const MemoryPicture pic = draw_memory_map(l, po);
  const std::string path = a.get("svg");
  if (!o.dry_run) OutputFile(path, "--svg").write_all(pic.svg.data(), pic.svg.size());
  std::printf("picture: %s, %lld of %lld slots in rows of %lld, coloured by %c (%.0fx%.0f)\n", path.c_str(),
              static_cast<long long>(pic.shown), static_cast<long long>(pic.total), static_cast<long long>(pic.columns),
              l.format().axes()[static_cast<size_t>(pic.color_axis)], pic.width, pic.height);
  return 0;
}

// A layout as data: what `explain --json` and `run --json` report of each side.
Json layout_json(const Layout& l) {
  const Format& f = l.format();
  return {{"format", f.name()}, {"dtype", to_string(l.data_type())}, {"shape", l.dims()}, {"pad_lower", l.pad_lower()},
          {"pad_upper", l.pad_upper()}, {"strides", l.strides().empty() ? Json(nullptr) : Json(l.strides())},
          {"offset", l.base_offset()}, {"kind", to_string(f.kind())}, {"axes", f.axes()}, {"order", f.order()},
          {"blocks", blocks_json(f)}, {"elements", l.elements()}, {"logical_elements", l.logical_elements()},
          {"bytes", l.bytes()}};
}

const char* slot_kind(SlotKind k) {
  switch (k) {
    case SlotKind::element: return "element";
    case SlotKind::pad: return "pad";
    case SlotKind::gap: return "gap";
    case SlotKind::foreign: break;
  }
  return "foreign";  // another tensor's slot
}

int cmd_explain(const Args& a, const CliOptions& o) {
  if (a.positional().empty()) throw Error("explain takes one FORMAT, e.g. clreorder explain b_fs_yx_fsv16 --shape 2,2,2,2");
  Layout l = layout_from(a, a.positional(), a.get("dtype", "f32"), parse_dims(a.get("shape")), "");
  const int64_t limit = a.count("limit", std::min<int64_t>(4096, o.max_explain_lines), 0, o.max_explain_lines);
  const bool json = a.has("json");
  if (json && a.has("svg")) throw Error("--json and --svg: give one of them");
  const Format& f = l.format();
  // A layout given another way (strides, a spelling) that a registered format describes.
  std::string same = named_equivalent(l);
  if (!same.empty() && format_from_name(same.substr(0, same.find(' '))) == f) same.clear();
  Json out = layout_json(l);
  out["same_elements_as"] = json_or_null(same);
  out["overlap"] = json_or_null(l.overlap());
  if (!json) {
    std::printf("%s: %s, axes %s, order %s, blocks %s\n", l.describe().c_str(), to_string(f.kind()), f.axes().c_str(),
                f.order().c_str(), f.blocks_string().c_str());
    std::printf("%lld elements (%lld logical), %lld bytes\n", static_cast<long long>(l.elements()),
                static_cast<long long>(l.logical_elements()), static_cast<long long>(l.bytes()));
    if (!same.empty()) std::printf("same elements as %s\n", same.c_str());
    if (!l.overlap().empty()) std::printf("overlapping: %s (a source only)\n", l.overlap().c_str());
  }
  if (a.has("at")) {
    Dims c = parse_dims(a.get("at"));
    int64_t off = l.offset(c);
    const int64_t byte = off * bits_of(l.data_type()) / 8;  // a u4 or i4 element: the byte that holds it
    const TpuPlacement* t = f.tpu();
    if (json) {
      out["at"] = {{"coord", c}, {"offset", off}, {"byte", byte}, {"npu", t ? Json(byte / t->npu_bytes) : Json(nullptr)},
                   {"npu_offset", t ? Json(byte % t->npu_bytes) : Json(nullptr)}};
      std::printf("%s\n", out.dump(2).c_str());
      return 0;
    }
    std::printf("%s -> offset %lld (byte %lld)", coord_text(f, c.data()).c_str(), static_cast<long long>(off),
                static_cast<long long>(byte));
    if (t)
      std::printf(": NPU %lld, offset %lld in it (local memory address %lld)", static_cast<long long>(byte / t->npu_bytes),
                  static_cast<long long>(byte % t->npu_bytes), static_cast<long long>(byte));
    std::printf("\n");
    return 0;
  }
  if (a.has("svg")) return write_picture(a, l, limit, o);
  if (a.has("color-by") || a.has("columns")) throw Error("--color-by and --columns shape the picture: give --svg FILE too");
  // Slots in memory order, so only the printed lines are decoded, whatever the size; offsets between them
  // (strided views) show as gaps.
  int64_t total = 0, next = l.base_offset();
  const std::vector<MemorySlot> slots = memory_slots(l, limit, &total);
  Json listed = Json::array();
  for (const MemorySlot& s : slots) {
    if (json) {
      listed.push_back({{"offset", s.offset}, {"kind", slot_kind(s.kind)},
                        {"coord", s.kind == SlotKind::element ? Json(s.coord) : Json(nullptr)}});
      continue;
    }
    if (s.offset > next)
      std::printf("i = %lld..%lld => gap (not this tensor's)\n", static_cast<long long>(next), static_cast<long long>(s.offset - 1));
    next = s.offset + 1;
    std::printf("i = %lld => %s\n", static_cast<long long>(s.offset),
                s.kind == SlotKind::element ? coord_text(f, s.coord.data()).c_str()
                : s.kind == SlotKind::pad   ? "pad"
                                            : "another tensor's slot");
  }
  const int64_t more = total - static_cast<int64_t>(slots.size());
  if (json) {
    out["slots"] = listed;
    out["more_slots"] = more;
    std::printf("%s\n", out.dump(2).c_str());
  } else if (more > 0) {
    std::printf("... %lld more slots (raise --limit)\n", static_cast<long long>(more));
  }
  return 0;
}

struct Pair {
  Layout src, dst;
  Conversion conversion;
};

// A comma list of f32 values, each all of its text.
std::vector<float> parse_floats(const std::string& key, const std::string& text) {
  std::vector<float> out;
  size_t pos = 0;
  while (true) {
    const size_t comma = text.find(',', pos);
    const std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    errno = 0;
    const float f = part.empty() ? 0 : std::strtof(part.c_str(), &end);
    if (part.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(f))
      throw Error("--" + key + " '" + text + "': '" + part + "' is not a finite f32 number");
    out.push_back(f);
    if (comma == std::string::npos) return out;
    pos = comma + 1;
  }
}

// The position of axis letter `letter` in the destination's axes, for the option `key`.
int axis_of(const Layout& dst, const std::string& letter, const std::string& key) {
  const std::string& axes = dst.format().axes();
  const size_t at = letter.size() == 1 ? axes.find(letter[0]) : std::string::npos;
  if (at == std::string::npos)
    throw Error(key + " '" + letter + "' is not an axis of " + dst.format().name() + " (axes " + axes + ")");
  return static_cast<int>(at);
}

// Option `key`'s "A" or "O,A" as axes (O, A) of dst; (-1, -1) when absent.
std::pair<int, int> axes_of(const Args& a, const Layout& dst, const std::string& key) {
  if (!a.has(key)) return {-1, -1};
  const std::string text = a.get(key);
  const size_t comma = text.find(',');
  const int axis = axis_of(dst, comma == std::string::npos ? text : text.substr(comma + 1), "--" + key);
  return {comma == std::string::npos ? -1 : axis_of(dst, text.substr(0, comma), "--" + key + "'s row axis"), axis};
}

std::vector<uint8_t> read_exact(const std::string& path, size_t need, const std::string& option, const std::string& what);

// --round, --overflow, --padding and the arithmetic's parameters (the defaults when absent): a list of
// values, or @FILE (raw f32, i32 for zero points, in this machine's byte order), is per index of the feature
// axis f (sub, mul, div) or of --quant-axis (scales, zero points: "A", or "O,A" for a row per index of O),
// in groups of --quant-group along A; --param-buffers (or more indexed values than a kernel holds) passes
// them in device buffers.
Conversion conversion_from(const Args& a, const Layout& dst) {
  Conversion conv;
  if (a.has("round")) conv.rounding = parse_rounding(a.get("round"));
  if (a.has("overflow")) conv.overflow = parse_overflow(a.get("overflow"));
  if (a.has("padding")) conv.padding = parse_padding(a.get("padding"));
  const auto [quant_outer, quant_axis] = axes_of(a, dst, "quant-axis");
  std::tie(conv.compensation.outer_axis, conv.compensation.axis) = axes_of(a, dst, "compensation");
  const int64_t group = a.count("quant-group", 1, 1, int64_t(1) << 40);
  if (a.has("quant-group") && !a.has("quant-axis")) throw Error("--quant-group " + a.get("quant-group") + " without --quant-axis");
  bool listed = false;
  size_t indexed = 0;
  for (Param q : all_params()) {
    const std::string key = to_string(q), text = a.get(key);
    if (!a.has(key)) continue;
    ParamValues& pv = conv.param(q);
    const bool file = text[0] == '@';
    if (!file) pv.values = parse_floats(key, text);
    if (!file && pv.values.size() == 1) continue;
    const bool normalisation = q == Param::sub || q == Param::mul || q == Param::div;
    if (!normalisation && !a.has("quant-axis"))
      throw Error("--" + key + (file ? " reads a file of values" : " lists " + std::to_string(pv.values.size()) + " values") +
                  ": name the axis they index with --quant-axis");
    if (normalisation) {
      pv.axis = axis_of(dst, "f", "--" + key + "'s feature axis");
    } else {
      pv.axis = quant_axis;
      pv.outer_axis = quant_outer;
      pv.group = group;
      listed = true;
    }
    if (file) {
      const bool zero_point = is_zero_point(q);
      const auto count = static_cast<size_t>(pv.count(dst.dims()));  // at most the destination's elements
      const std::string letter(1, dst.format().axes()[static_cast<size_t>(pv.axis)]);
      std::string shape = pv.group > 1 ? "one per group of " + std::to_string(pv.group) + " of " + letter : "one per index of " + letter;
      if (pv.outer_axis >= 0) shape += ", for each index of " + std::string(1, dst.format().axes()[static_cast<size_t>(pv.outer_axis)]);
      const std::vector<uint8_t> raw =
          read_exact(text.substr(1), 4 * count, "--" + key, std::to_string(count) + (zero_point ? " i32" : " f32") + " values (" + shape + ")");
      for (size_t i = 0; i < count; ++i) {
        int32_t z;
        float f;
        std::memcpy(zero_point ? static_cast<void*>(&z) : static_cast<void*>(&f), raw.data() + 4 * i, 4);
        if (zero_point && (z > (1 << 24) || z < -(1 << 24)))
          throw Error("--" + key + " file '" + text.substr(1) + "': zero point " + std::to_string(z) + " (index " + std::to_string(i) +
                      ") is beyond 2^24, which f32 arithmetic holds exactly");
        pv.values.push_back(zero_point ? static_cast<float>(z) : f);
      }
    }
    indexed += pv.values.size();
  }
  if (a.has("quant-axis") && !listed) throw Error("--quant-axis '" + a.get("quant-axis") + "' without a list of scales or zero points to index");
  // Past what a kernel holds in constant memory the indexed values go in buffers (each kernel then serves
  // any values of that shape).
  for (ParamValues& pv : conv.params)
    if (pv.present() && (a.has("param-buffers") || (pv.axis >= 0 && indexed > kMaxIndexedValues))) pv.from_buffer = true;
  check_params(conv, dst);
  return conv;
}

Pair pair_from(const Args& a) {
  Dims shape = parse_dims(a.get("shape"));
  std::string dt = a.get("dtype", "f32");
  Layout src = layout_from(a, a.get("from"), dt, shape, "src-");
  Layout dst = layout_from(a, a.get("to"), a.get("to-dtype", dt), a.has("to-shape") ? parse_dims(a.get("to-shape")) : shape, "dst-");
  check_compatible(src, dst);
  const KernelSelector& ks = KernelSelector::instance();
  if (a.has("impl") && !ks.find(a.get("impl")))
    throw Error("--impl '" + a.get("impl") + "' names no implementation (known: " + ks.names() + ")");
  return {src, dst, conversion_from(a, dst)};
}

// Exactly `need` bytes of the file `path`, for the option `option` (`what` names what they are for). It reads
// one byte more than that at most, so an endless file (/dev/zero) is refused instead of read until memory
// runs out.
std::vector<uint8_t> read_exact(const std::string& path, size_t need, const std::string& option, const std::string& what) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) throw Error("cannot read " + option + " file '" + path + "': " + errno_text());
  if (S_ISDIR(st.st_mode)) throw Error(option + " '" + path + "' is a directory, not a file");
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot read " + option + " file '" + path + "': " + errno_text());
  std::vector<uint8_t> buf(need + 1);
  size_t got = 0;
  while (got < buf.size()) {
    const ssize_t n = read(fd, buf.data() + got, buf.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = errno_text();
      close(fd);
      throw Error("cannot read " + option + " file '" + path + "': " + why);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  if (got > need)
    throw Error(option + " file '" + path + "' holds more than the " + std::to_string(need) + " bytes " + what + " needs");
  if (got < need)
    throw Error(option + " file '" + path + "' holds " + std::to_string(got) + " bytes but " + what + " needs " + std::to_string(need));
  buf.resize(need);
  return buf;
}

// The raw source of `run --input`: exactly `layout.bytes()` bytes.
std::vector<uint8_t> read_input(const std::string& path, const Layout& layout) {
  return read_exact(path, static_cast<size_t>(layout.bytes()), "--input", layout.describe());
}

// How many entries of `got` differ from `want` (as many), and the index of the first that does in `first`.
template <class T>
size_t mismatches(const std::vector<T>& got, const std::vector<T>& want, size_t* first) {
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i] && bad++ == 0) *first = i;
  return bad;
}

// The reorder of `run` and `demo`: lines of text, or with `json` one object at the end (ready_ms: the first
// reorder from the call to its result on the host, kernel lookup or compile, upload and download included).
int run_reorder(const Engine& engine, const Pair& pr, const std::string& input, OutputFile* output, bool check,
                const std::string& impl, bool json = false, CompilePolicy policy = CompilePolicy::wait,
                OutputFile* sums_output = nullptr) {
  for (const Layout* l : {&pr.src, &pr.dst}) check_fits_device(engine.info(), *l);  // before allocating the source
  const std::vector<uint8_t> src = input.empty() ? make_pattern(pr.src) : read_input(input, pr.src);
  auto say = [json](const char* fmt, auto... args) {
    if (!json) std::printf(fmt, args...);
  };
  say("device: %s / %s (%s)\n", engine.info().platform.c_str(), engine.info().name.c_str(), engine.info().version.c_str());
  say("reorder: %s -> %s\n", pr.src.describe().c_str(), pr.dst.describe().c_str());
  if (pr.conversion != Conversion{}) say("conversion: %s\n", pr.conversion.summary().c_str());
  ReorderOptions opt;
  opt.force_impl = impl;
  opt.policy = policy;
  opt.conversion = pr.conversion;
  ReorderResult res;
  const CacheStats mem_before = ProgramCache::instance().stats();
  const DiskCacheStats disk_before = DiskCache::instance().stats();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<uint8_t> out;
  {
    const CompileProgress progress("compiling the reorder's kernel (not in the kernel cache yet)");
    out = reorder(engine, src, pr.src, pr.dst, opt, &res);
  }
  const double ready_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const double compile_ms = ProgramCache::instance().stats().compile_ms - mem_before.compile_ms;
  const std::string cache = cache_outcome(mem_before, disk_before);
  say("cache: %s\n", cache.c_str());
  say("ready: %.2f ms to the first result (%.2f ms of it loading or compiling the kernel)\n", ready_ms, compile_ms);
  // A second run: the first paid for the kernel's first launch; this one shows the steady state. Its
  // destination starts as a sentinel, so that --check sees an element the kernel failed to write, and a
  // byte it wrote that the layout does not own (a gap).
  const std::vector<uint8_t> sentinel(out.size(), 0xAB);
  ReorderOptions blocking = opt;
  blocking.wait = true;
  const std::vector<uint8_t> checked = reorder(engine, src, pr.src, pr.dst, blocking, &res, &sentinel);
  const double bytes = static_cast<double>(pr.src.bytes() + pr.dst.bytes());
  say("impl: %s (kernel %s)\n", res.impl.c_str(), res.entry.c_str());
  say("bytes: source %lld, destination %lld (%lld logical elements)\n", static_cast<long long>(pr.src.bytes()),
      static_cast<long long>(pr.dst.bytes()), static_cast<long long>(pr.src.logical_elements()));
  if (res.kernel_ms >= 0)
    say("kernel: %.4f ms, %.2f GB/s (source + destination bytes / kernel time)\n", res.kernel_ms,
        bytes / (res.kernel_ms * 1e-3) / 1e9);
  if (output) {
    output->write_all(out.data(), out.size());
    say("output: %zu bytes written\n", out.size());
  }
  const std::vector<int32_t>& sums = res.compensation;
  if (pr.conversion.compensation.present()) {
    std::string shown;
    for (size_t i = 0; i < sums.size() && i < 8; ++i) shown += (i ? " " : "") + std::to_string(sums[i]);
    say("compensation: %zu i32 sums: %s%s\n", sums.size(), shown.c_str(), sums.size() > 8 ? " ..." : "");
    if (sums_output) {
      sums_output->write_all(sums.data(), sums.size() * 4);
      say("compensation output: %zu bytes written\n", sums.size() * 4);
    }
  }
  size_t bad = 0, first = 0, bad_sums = 0;
  if (check) {
    std::vector<uint8_t> want = sentinel;
    reference_reorder(pr.src, src.data(), pr.dst, want.data(), pr.conversion);
    bad = mismatches(checked, want, &first);
    if (bad)
      say("check: FAILED, %zu of %zu bytes differ from the host reference; first at byte %zu (got 0x%02x, want 0x%02x)\n",
          bad, checked.size(), first, checked[first], want[first]);
    else
      say("check: OK, all %zu destination bytes (padding included) match the host reference\n", checked.size());
    if (pr.conversion.compensation.present()) {
      const std::vector<int32_t> want_sums = reference_compensation(pr.dst, want.data(), pr.conversion.compensation);
      size_t first_sum = 0;
      bad_sums = mismatches(sums, want_sums, &first_sum);
      if (bad_sums)
        say("check: FAILED, %zu of %zu compensation sums differ from the host's; first at index %zu (got %d, want %d)\n",
            bad_sums, want_sums.size(), first_sum, sums[first_sum], want_sums[first_sum]);
      else
        say("check: OK, all %zu compensation sums match the host's\n", want_sums.size());
    }
  }
  if (json) {
    const Json report = {
        {"device", engine.info().name}, {"platform", engine.info().platform}, {"from", layout_json(pr.src)},
        {"to", layout_json(pr.dst)}, {"rounding", to_string(pr.conversion.rounding)},
        {"overflow", to_string(pr.conversion.overflow)}, {"padding", to_string(pr.conversion.padding)},
        {"conversion", pr.conversion.summary()}, {"impl", res.impl}, {"entry", res.entry}, {"cache", cache},
        {"ready_ms", ready_ms}, {"compile_ms", compile_ms},
        {"kernel_ms", res.kernel_ms >= 0 ? Json(res.kernel_ms) : Json(nullptr)},
        {"gbps", res.kernel_ms > 0 ? Json(bytes / (res.kernel_ms * 1e-3) / 1e9) : Json(nullptr)},
        {"output_bytes", output ? Json(out.size()) : Json(nullptr)},
        {"check", check ? Json(bad == 0 && bad_sums == 0) : Json(nullptr)},
        {"mismatched_bytes", check ? Json(bad) : Json(nullptr)},
        {"compensation", pr.conversion.compensation.present() ? Json(sums) : Json(nullptr)},
        {"mismatched_sums", check && pr.conversion.compensation.present() ? Json(bad_sums) : Json(nullptr)}};
    std::printf("%s\n", report.dump(2).c_str());
  }
  return bad || bad_sums ? 1 : 0;
}

CompilePolicy policy_from(const std::string& name) {
  if (name == "wait") return CompilePolicy::wait;
  if (name == "background") return CompilePolicy::background;
  if (name == "agnostic") return CompilePolicy::agnostic;
  throw Error("--policy '" + name + "': expected wait, background or agnostic");
}

int cmd_run(const Args& a, const CliOptions& o) {
  // Checked before any device work. A CLI process runs one reorder and exits, before any background compile
  // could be used, so it waits by default: what it checks and times is the kernel a runtime keeps.
  const CompilePolicy policy = policy_from(a.get("policy", "wait"));
  Pair pr = pair_from(a);
  if (o.dry_run) return 0;
  std::unique_ptr<OutputFile> output;
  if (a.has("output")) output = std::make_unique<OutputFile>(a.get("output"));
  std::unique_ptr<OutputFile> sums_output;
  if (a.has("compensation-output")) {
    if (!pr.conversion.compensation.present())
      throw Error("--compensation-output '" + a.get("compensation-output") + "' without --compensation");
    sums_output = std::make_unique<OutputFile>(a.get("compensation-output"), "--compensation-output");
  }
  Engine engine = Engine::open(a.get("device"));
  return run_reorder(engine, pr, a.get("input"), output.get(), a.has("check"), a.get("impl"), a.has("json"),
                     policy, sums_output.get());
}

// A list of reorders (precompile FILE, bench --batch FILE): one per line, the layout options of `run` and
// --impl; '#' starts a comment. Each with its forced implementation ("" for the selector's choice).
std::vector<std::pair<Pair, std::string>> read_reorder_list(const std::string& path, const std::string& what) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw Error(what + " file '" + path + "' is a directory");
  std::ifstream in(path);
  if (!in) throw Error("cannot read " + what + " file '" + path + "': " + std::strerror(errno));
  std::vector<std::pair<Pair, std::string>> out;
  size_t line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::vector<std::string> tokens;
    for (std::string w; words >> w;) tokens.push_back(w);
    if (tokens.empty()) continue;
    try {
      CLI::App line_app("a line of " + path);
      Args line_args(line_app, "reorder", "");
      add_layout_options(line_args, false);
      line_args.parse_line(tokens);
      out.emplace_back(pair_from(line_args), line_args.get("impl"));
    } catch (const std::exception& e) {
      throw Error(path + ":" + std::to_string(line_no) + ": " + e.what());
    }
  }
  if (out.empty()) throw Error(what + " file '" + path + "' lists no reorder");
  return out;
}

// `bench --batch FILE`: the listed reorders one launch each against one batched launch.
int bench_batch_list(const Args& a, const CliOptions& o) {
  for (const char* k : {"from", "to", "shape", "dtype", "to-dtype", "to-shape"})
    if (a.has(k)) throw Error("--" + std::string(k) + " goes in the --batch file's lines, not on the command line");
  const std::string path = a.get("batch");
  const auto list = read_reorder_list(path, "batch");
  std::vector<std::pair<Layout, Layout>> pairs;
  for (const auto& [pr, impl] : list) {
    if (!impl.empty()) throw Error(path + ": --impl in a batch file; force one implementation for all with bench's --impl");
    if (pr.conversion != Conversion{})
      throw Error(path + ": a conversion option (--round, --padding, --sub ...) in a batch file; give one for all on bench's command line");
    pairs.emplace_back(pr.src, pr.dst);
  }
  // One conversion for the whole batch (ReorderOptions::conversion): given on the command line, not per line,
  // its axes named after the first item's destination (the library checks it against every item's).
  if (pairs.empty()) throw Error(path + ": no reorders listed");
  const Conversion conv = conversion_from(a, pairs.front().second);
  const int runs = static_cast<int>(a.count("runs", 25, 1, 100000));
  const auto launch_items = static_cast<size_t>(a.count("launch-items", 0, 1, static_cast<int64_t>(kMaxBatchItems)));
  if (o.dry_run) return 0;
  Engine engine = Engine::open(a.get("device"));
  BatchBenchResult r;
  {
    const CompileProgress progress("compiling the batch's kernels (not in the kernel cache yet)");
    r = bench_batch(engine, pairs, a.get("impl"), runs, conv, launch_items);
  }
  if (a.has("json")) {
    std::printf("%s\n", Json::parse(r.json()).dump(2).c_str());
    return r.exact ? 0 : 1;
  }
  std::map<std::string, int> impls;
  for (const std::string& i : r.impls) ++impls[i];
  std::string mix;
  for (const auto& [name, n] : impls) mix += (mix.empty() ? "" : ", ") + name + " x" + std::to_string(n);
  std::printf("device: %s / %s\n", engine.info().platform.c_str(), engine.info().name.c_str());
  std::printf("batch: %zu reorders from %s (%s), %.2f MB in all, %d runs (medians)\n", r.reorders, path.c_str(),
              mix.c_str(), static_cast<double>(r.bytes) / 1e6, r.runs);
  std::printf("one launch each: %.4f ms\n", r.one_by_one_ms);
  std::printf("batched:         %.4f ms in %zu launch%s\n", r.batched_ms, r.launches, r.launches == 1 ? "" : "es");
  std::printf("speedup:         %.2fx\n", r.speedup);
  std::printf("copy:            %.4f ms (clEnqueueCopyBuffer of the destinations' bytes: the bandwidth floor)\n", r.copy_ms);
  if (r.batched_kernel_ms >= 0)
    std::printf("kernels:         %.4f ms batched, %.4f ms one launch each (event-profiled, summed over launches)\n",
                r.batched_kernel_ms, r.one_by_one_kernel_ms);
  std::printf("host:            %.4f ms in reorder_batch() until it returns\n", r.batched_enqueue_ms);
  std::printf("check: %s\n", r.exact ? "OK (every item byte-exact in both forms)" : ("MISMATCH: " + r.mismatch).c_str());
  return r.exact ? 0 : 1;
}

// `bench --every-impl [--keep]`: every implementation that accepts the reorder, forced, interleaved launch by
// launch against the same copies; which is fastest here, and how the selector's choice compares. --keep
// makes the fastest the pair's choice on this device (tune_reorder()).
int bench_every_impl(const Args& a, const CliOptions& o, const Pair& pr, int runs) {
  if (o.dry_run) return 0;
  Engine engine = Engine::open(a.get("device"));
  TuneResult t;
  {
    const CompileProgress progress("compiling each implementation's kernel (not in the kernel cache yet)");
    t = a.has("keep") ? tune_reorder(engine, pr.src, pr.dst, pr.conversion, runs)
                      : compare_impls(engine, pr.src, pr.dst, pr.conversion, runs);
  }
  const std::vector<BenchResult>& rs = t.results;
  size_t fastest = 0, pick = 0;
  for (size_t k = 0; k < rs.size(); ++k) {
    if (rs[k].impl == t.fastest) fastest = k;
    if (rs[k].impl == t.chosen) pick = k;
  }
  const std::string where = t.stored ? "kept in " + DiskCache::instance().directory()
                                     : "kept for this process only: the kernel cache is off";
  if (a.has("json")) {
    Json out = {{"from", pr.src.format().name()}, {"to", pr.dst.format().name()}, {"source", pr.src.describe()},
                {"destination", pr.dst.describe()}, {"runs", runs}, {"impls", Json::array()}};
    for (size_t k = 0; k < rs.size(); ++k) {
      Json one = Json::parse(rs[k].json(pr.src, pr.dst));
      one["chosen"] = k == pick;
      out["impls"].push_back(one);
    }
    out["chosen"] = t.chosen;
    out["ranked"] = t.ranked;
    out["fastest"] = t.fastest;
    out["chosen_over_fastest"] = rs[pick].ratio / rs[fastest].ratio;
    if (a.has("keep")) {
      out["kept"] = t.kept;
      out["stored"] = t.stored;
    }
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("device: %s / %s\n", engine.info().platform.c_str(), engine.info().name.c_str());
  std::printf("reorder: %s -> %s\n", pr.src.describe().c_str(), pr.dst.describe().c_str());
  if (pr.conversion != Conversion{}) std::printf("conversion: %s\n", pr.conversion.summary().c_str());
  std::printf("every implementation that accepts it, %d runs each, interleaved (medians; ratio to the faster copy):\n", runs);
  for (size_t k = 0; k < rs.size(); ++k)
    std::printf("  %-9s %.4f ms (kernel %.4f ms), ratio %.3f%s\n", rs[k].impl.c_str(), rs[k].median_ms, rs[k].kernel_ms,
                rs[k].ratio, k == pick ? (t.chosen == t.ranked ? "  (the selector's choice)" : "  (the selector's choice, kept)") : "");
  std::printf("fastest: %s; the selector's choice runs at %.3f of its speed\n", t.fastest.c_str(), rs[pick].ratio / rs[fastest].ratio);
  if (a.has("keep"))
    std::printf("kept: %s (%s), the choice for this pair on this device from now on\n", t.kept.c_str(), where.c_str());
  return 0;
}

int cmd_bench(const Args& a, const CliOptions& o) {
  if (a.has("launch-items") && !a.has("batch")) throw Error("--launch-items splits a --batch list's launches: give --batch FILE");
  if (a.has("batch")) {
    if (a.has("beside-plain")) throw Error("--beside-plain times one reorder, not a --batch list");
    if (a.has("every-impl") || a.has("keep")) throw Error("--every-impl and --keep time one reorder, not a --batch list");
    return bench_batch_list(a, o);
  }
  if (!a.has("from") || !a.has("to") || !a.has("shape"))
    throw Error("bench needs --from, --to and --shape (or --batch FILE)");
  Pair pr = pair_from(a);
  const int runs = static_cast<int>(a.count("runs", 25, 1, 100000));
  if (a.has("every-impl")) {
    if (a.has("impl")) throw Error("--every-impl times every implementation that accepts the reorder: drop --impl");
    if (a.has("beside-plain")) throw Error("--every-impl and --beside-plain are two comparisons: give one");
    return bench_every_impl(a, o, pr, runs);
  }
  if (a.has("keep")) throw Error("--keep keeps the fastest of --every-impl: give --every-impl too");
  // --beside-plain: the same pair and modes without the arithmetic and sums, timed launch by launch beside it.
  Conversion plain;
  plain.rounding = pr.conversion.rounding;
  plain.overflow = pr.conversion.overflow;
  plain.padding = pr.conversion.padding;
  const bool beside = a.has("beside-plain");
  if (beside && pr.conversion == plain)
    throw Error("--beside-plain compares fused arithmetic or --compensation with the plain conversion: give one of them");
  if (o.dry_run) return 0;
  Engine engine = Engine::open(a.get("device"));
  {
    // The compile apart from the timing, so that a long one can say so without covering the runs.
    const CompileProgress progress("compiling the reorder's kernel (not in the kernel cache yet)");
    prepare(engine, {{pr.src, pr.dst}}, a.get("impl"), pr.conversion);
    if (beside) prepare(engine, {{pr.src, pr.dst}}, a.get("impl"), plain);
  }
  const std::vector<BenchResult> rs =
      bench_reorders(engine, pr.src, pr.dst, a.get("impl"), runs, beside ? std::vector<Conversion>{pr.conversion, plain}
                                                                            : std::vector<Conversion>{pr.conversion});
  const BenchResult& r = rs.front();
  if (a.has("json")) {
    Json out = Json::parse(r.json(pr.src, pr.dst));
    if (beside) {
      out["plain"] = Json::parse(rs[1].json(pr.src, pr.dst));
      out["fused_over_plain"] = r.ratio / rs[1].ratio;
    }
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("device: %s / %s\n", engine.info().platform.c_str(), engine.info().name.c_str());
  std::printf("reorder: %s -> %s\n", pr.src.describe().c_str(), pr.dst.describe().c_str());
  if (pr.conversion != Conversion{}) std::printf("conversion: %s\n", pr.conversion.summary().c_str());
  std::printf("impl: %s, %d runs (medians)\n", r.impl.c_str(), r.runs);
  std::printf("reorder: %.4f ms (kernel %.4f ms), %.2f GB/s logical, %.2f GB/s physical\n", r.median_ms, r.kernel_ms,
              r.gbps_logical, r.gbps_physical);
  std::printf("copy:    %.4f ms, %.2f GB/s (clEnqueueCopyBuffer of %lld bytes)\n", r.copy_ms, r.copy_gbps,
              static_cast<long long>(pr.dst.bytes()));
  std::printf("copy:    %.4f ms, %.2f GB/s (copy kernel of the same bytes, launched as a reorder)\n", r.copy_kernel_ms,
              r.copy_kernel_gbps);
  std::printf("ratio:   %.3f of the faster copy (%.3f of clEnqueueCopyBuffer)\n", r.ratio, r.ratio_copy_buffer);
  std::printf("host:    %.2f us per cached reorder() call, %.2f us per bare clEnqueueNDRangeKernel (overhead %.2f us)\n",
              r.enqueue_us, r.bare_enqueue_us, r.enqueue_us - r.bare_enqueue_us);
  if (beside)
    std::printf("plain:   %.4f ms (kernel %.4f ms, %s), ratio %.3f of the faster copy; fused / plain %.3f (launch by launch)\n",
                rs[1].median_ms, rs[1].kernel_ms, rs[1].impl.c_str(), rs[1].ratio, r.ratio / rs[1].ratio);
  return 0;
}

// `cache info [--json]`, `cache clear`: the persistent kernel cache's directory and files.
int cmd_cache(const Args& a) {
  if (a.positional() != "info" && a.positional() != "clear")
    throw Error("cache takes 'info' or 'clear', e.g. clreorder cache info");
  DiskCache& cache = DiskCache::instance();
  if (a.positional() == "clear") {
    if (a.has("json")) throw Error("--json goes with cache info");
    const std::string dir = cache.directory();
    if (dir.empty()) {
      std::printf("the kernel cache is off (CLREORDER_CACHE_DIR=off): nothing to clear\n");
      return 0;
    }
    const uint64_t n = cache.clear();
    std::printf("removed %llu files from %s\n", static_cast<unsigned long long>(n), dir.c_str());
    return 0;
  }
  const DiskCacheInfo info = cache.info();
  if (a.has("json")) {
    const Json out = {{"directory", json_or_null(info.directory)}, {"source", info.source},
                      {"enabled", !info.directory.empty()}, {"programs", info.programs}, {"indexes", info.indexes},
                      {"choices", info.choices}, {"bytes", info.bytes}};
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  if (info.directory.empty()) {
    std::printf("kernel cache: off (CLREORDER_CACHE_DIR=off)\n");
    return 0;
  }
  std::printf("kernel cache: %s (from %s)\n", info.directory.c_str(), info.source.c_str());
  std::printf("%llu programs, %llu kernel indexes, %llu kept implementation choices, %.1f KiB\n",
              static_cast<unsigned long long>(info.programs), static_cast<unsigned long long>(info.indexes),
              static_cast<unsigned long long>(info.choices), static_cast<double>(info.bytes) / 1024.0);
  return 0;
}

// `precompile FILE`: every reorder listed compiled ahead of use, one program per implementation forced,
// into the persistent cache.
int cmd_precompile(const Args& a, const CliOptions& o) {
  const std::string path = a.positional();
  if (path.empty()) throw Error("precompile takes one FILE of reorders, one per line (the options of run)");
  // One program per forced implementation and conversion.
  std::map<std::pair<std::string, std::string>, std::pair<Conversion, std::vector<std::pair<Layout, Layout>>>> groups;
  const auto list = read_reorder_list(path, "precompile");
  for (const auto& [pr, impl] : list) {
    auto& g = groups[{impl, pr.conversion.key()}];
    g.first = pr.conversion;
    g.second.emplace_back(pr.src, pr.dst);
  }
  const size_t count = list.size();
  if (o.dry_run) return 0;
  Engine engine = Engine::open(a.get("device"));
  const CacheStats before = ProgramCache::instance().stats();
  {
    const CompileProgress progress("precompiling " + std::to_string(count) + " reorders");
    for (const auto& [key, group] : groups) prepare(engine, group.second, key.first, group.first);
  }
  const CacheStats after = ProgramCache::instance().stats();
  const std::string dir = DiskCache::instance().directory();
  std::printf("precompiled %zu reorders from %s on %s: %llu programs compiled, %llu loaded in %.0f ms, %s\n", count,
              path.c_str(), engine.info().name.c_str(),
              static_cast<unsigned long long>(after.programs_built - before.programs_built),
              static_cast<unsigned long long>(after.programs_loaded - before.programs_loaded),
              after.compile_ms - before.compile_ms,
              dir.empty() ? "kernel cache off (nothing kept for the next process)" : ("kept in " + dir).c_str());
  return 0;
}

// What a device would get when there is none (or a dry run opens none): a GPU's tuning.
DeviceInfo typical_device() {
  DeviceInfo dev;
  dev.max_work_group = 256;
  dev.type = "gpu";
  return dev;
}

int cmd_source(const Args& a, const CliOptions& o) {
  Pair pr = pair_from(a);
  // A device choice (--device, CLREORDER_DEVICE) that matches nothing fails as it does for run; with no
  // choice and no OpenCL device at all, the source is what a typical GPU would get, and says so.
  DeviceInfo dev = typical_device();
  const bool chosen = a.has("device") || std::getenv("CLREORDER_DEVICE");
  if (!o.dry_run && (chosen || !list_devices().empty())) dev = choose_device(a.get("device"));
  if (dev.name.empty()) std::printf("// no OpenCL device: the kernel a typical GPU would get\n");
  for (const Verdict& v : KernelSelector::instance().explain(ReorderParams{pr.src, pr.dst, dev, pr.conversion})) {
    std::string what = "declines: " + v.declines;
    if (v.declines.empty())
      what = "accepts, rank " + std::to_string(v.rank.value) + (v.rank.why.empty() ? "" : " (" + v.rank.why + ")") +
             (v.chosen ? ": chosen" : "");
    std::printf("// selector: %-8s %s\n", v.impl.c_str(), what.c_str());
  }
  const std::string kept = kept_choice(dev, pr.src, pr.dst, pr.conversion);
  if (!kept.empty()) std::printf("// selector: kept for this device (bench --every-impl --keep): %s\n", kept.c_str());
  KernelData kd = plan_reorder(dev, pr.src, pr.dst, a.get("impl"), pr.conversion);
  std::printf("// %s -> %s\n// impl %s, entry %s, options '%s', global %s, local %s\n", pr.src.describe().c_str(),
              pr.dst.describe().c_str(), kd.impl.c_str(), kd.source.entry.c_str(), kd.source.options.c_str(),
              dims_to_string(Dims(kd.global.begin(), kd.global.end()), ",").c_str(),
              dims_to_string(Dims(kd.local.begin(), kd.local.end()), ",").c_str());
  std::printf("%s", kd.source.code.c_str());
  return 0;
}

void add_explain_options(Args& a) {
  a.positional("FORMAT", "the format (any spelling: OpenVINO name, oneDNN tag, PyTorch name, TPU layout)")
      .value("shape", "D0,D1,..", "logical dims, canonical order", true)
      .value("dtype", "TYPE", "data type (default f32)")
      .value("at", "C0,C1,..", "print only this coordinate's offset (and NPU for TPU layouts)")
      .value("limit", "N", "most slots listed (default 4096)")
      .value("svg", "FILE", "draw the memory map into FILE instead")
      .value("color-by", "AXIS", "--svg: colour cells by this axis (default the channel)")
      .value("columns", "N", "--svg: cells per row")
      .flag("json", "the layout, and its slots or the --at offset, as JSON");
  add_side_options(a, "", "");
}

int cmd_demo(const CliOptions& o) {
  std::printf("== clreorder demo: bfyx -> b_fs_yx_fsv16 (nChw16c) on an odd shape, checked on the device ==\n\n");
  std::printf("-- the layout: clreorder explain b_fs_yx_fsv16 --shape 1,3,1,2 --\n");
  CLI::App demo_app("the demo's explain");
  Args explain(demo_app, "explain", "");
  add_explain_options(explain);
  explain.parse_line({"b_fs_yx_fsv16", "--shape", "1,3,1,2", "--limit", "20"});
  int rc = cmd_explain(explain, o);
  if (rc || o.dry_run) return rc;
  std::printf("\n-- the reorder: clreorder run --from bfyx --to b_fs_yx_fsv16 --shape 3,19,5,7 --check --\n");
  Engine engine = Engine::open();
  Dims shape = {3, 19, 5, 7};
  Pair pr{Layout(Format::parse("bfyx"), DataType::f32, shape), Layout(Format::parse("b_fs_yx_fsv16"), DataType::f32, shape), {}};
  rc = run_reorder(engine, pr, "", nullptr, true, "");
  if (rc == 0) std::printf("\ndemo: OK\n");
  return rc;
}

// --verbose: what the caches did in this process, on stderr ("is the cache used at all" is the first question
// such caches get). After the command, so the stores an Engine's release writes are counted.
int with_cache_report(const Args& a, const CliOptions& o, int rc) {
  if (!a.has("verbose") || o.dry_run) return rc;
  const CacheStats m = ProgramCache::instance().stats();
  const DiskCacheStats d = DiskCache::instance().stats();
  const std::string dir = DiskCache::instance().directory();
  std::fprintf(stderr,
               "kernel cache, memory: %llu programs compiled, %llu loaded from disk, %llu kernels built, %llu lookups "
               "answered, %llu reorders found by problem, %.1f ms loading or compiling\n",
               static_cast<unsigned long long>(m.programs_built), static_cast<unsigned long long>(m.programs_loaded),
               static_cast<unsigned long long>(m.kernels_built), static_cast<unsigned long long>(m.hits),
               static_cast<unsigned long long>(m.dispatch_hits), m.compile_ms);
  if (dir.empty())
    std::fprintf(stderr, "kernel cache, disk: off\n");
  else
    std::fprintf(stderr, "kernel cache, disk (%s): %llu hits, %llu misses, %llu rejected, %llu stored, %llu write failures\n",
                 dir.c_str(), static_cast<unsigned long long>(d.hits), static_cast<unsigned long long>(d.misses),
                 static_cast<unsigned long long>(d.rejected), static_cast<unsigned long long>(d.stored),
                 static_cast<unsigned long long>(d.write_failures));
  return rc;
}

constexpr const char* kRunAbout =
    "Reorder on the device: the implementation, where its kernel came from, time to the first result, kernel "
    "time, GB/s.";
// Waiting is the CLI's default: one reorder per process, so the kernel a runtime keeps is the one checked and timed.
constexpr const char* kPolicyHelp =
    "while the specialised kernel is neither compiled nor stored: wait for it (default here), run the "
    "shape-agnostic kernel and compile it in the background (the library's default), or never compile it";

// The whole command line: every command and its options. Built once per thread and cleared before each parse
// (App::clear), since building it costs more than most commands (the argument fuzzer calls run_cli in a loop).
struct CommandLine {
  CLI::App app{"clreorder " + std::string(version()) +
                   ": OpenCL reorders between tensor memory formats and data types, checked against a host reference",
               "clreorder"};
  Args devices{app, "devices", "List OpenCL platforms and devices; '*' marks the default."};
  Args formats{app, "formats", "List every registered format: kind, rank, order, blocks, aliases (oneDNN tags, "
                               "PyTorch names); the unsupported ones with the reason."};
  Args explain{app, "explain", "Print a layout's memory map: each offset with its logical coordinate, pad or gap; "
                               "--svg draws it (cells in memory order coloured by an axis)."};
  Args run{app, "run", kRunAbout};
  Args bench{app, "bench", "Time the reorder (median of --runs runs after warm-up) against a copy of the same "
                           "bytes in the same run; with --batch FILE, many reorders one launch each against one "
                           "batched launch."};
  Args source{app, "source", "Print the generated OpenCL C for the reorder on the chosen (else default) device, "
                             "with the selector's verdict on each implementation."};
  Args precompile{app, "precompile", "Compile every reorder FILE lists (one per line: the layout options of run, "
                                     "and --impl; '#' starts a comment) ahead of use, into the kernel cache."};
  Args cache{app, "cache", "The persistent kernel cache: `cache info` (its directory, files and size) or `cache "
                           "clear` (remove its files)."};
  Args demo{app, "demo", "bfyx -> b_fs_yx_fsv16 on a small odd shape, checked, with a short explain."};
  Args version_cmd{app, "version", "Print the library's version."};
  Args help{app, "help", "Print this help."};

  CommandLine() {
    app.footer(kFooter);
    app.require_subcommand(0, 1);
    app.add_flag("--version", "print the library's version");
    devices.flag("json", "as JSON");
    formats.flag("json", "as JSON");
    add_explain_options(explain);
    add_layout_options(run);
    run.value("input", "FILE", "the source's raw bytes (default: each element's linear index)")
        .value("output", "FILE", "write the destination's raw bytes here")
        .value("compensation-output", "FILE", "write the --compensation sums here (raw i32, this machine's byte order)")
        .value("policy", "wait|background|agnostic", kPolicyHelp)
        .flag("check", "compare every destination byte with the host reference (exit 1 on a difference)")
        .flag("json", "the result as JSON")
        .flag("verbose", "the kernel caches' counts on stderr afterwards");
    add_layout_options(bench, true, false);
    bench.value("runs", "N", "timed runs (default 25)")
        .flag("beside-plain", "with fused arithmetic or --compensation: the plain conversion of the same pair timed "
                              "launch by launch beside it, and fused / plain")
        .flag("every-impl", "every implementation that accepts the reorder, forced, timed launch by launch side by "
                            "side: the fastest here, and the selector's choice against it")
        .flag("keep", "with --every-impl: keep the fastest as this pair's choice on this device (in the kernel cache) "
                      "where it beats the ranked choice by 10%, else the ranked one")
        .value("batch", "FILE", "instead of one reorder: the reorders FILE lists (as precompile's) one launch each "
                                "against one batched launch, each result checked")
        .value("launch-items", "N", "with --batch: at most N items per batched launch (default and most: 64)")
        .flag("json", "the result as JSON")
        .flag("verbose", "the kernel caches' counts on stderr afterwards");
    add_layout_options(source);
    precompile.positional("FILE", "the list of reorders")
        .value("device", "SPEC", "device index or name substring (see `devices`)")
        .flag("verbose", "the kernel caches' counts on stderr afterwards");
    cache.positional("ACTION", "info or clear").flag("json", "info as JSON");
  }
};

int dispatch(int argc, const char* const* argv, const CliOptions& o) {
  static thread_local CommandLine line;
  line.app.clear();
  CLI::App& app = line.app;

  // An unknown command by name (CLI11 would call it an unexpected argument).
  const std::string first = argv[1];
  const auto named = [&first](const CLI::App* sub) { return sub->get_name() == first; };
  if (!first.empty() && first[0] != '-' && app.get_subcommands(named).empty())
    throw Error("unknown command '" + first + "' (clreorder --help lists them)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);  // the chosen command's help, or the whole list
    return 0;
  }
  if (app.count("--version") || line.version_cmd.chosen()) {
    std::printf("clreorder %s\n", version());
    return 0;
  }
  if (line.help.chosen()) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  }
  if (line.devices.chosen()) return o.dry_run ? 0 : cmd_devices(line.devices);
  if (line.formats.chosen()) return cmd_formats(line.formats);
  if (line.explain.chosen()) return cmd_explain(line.explain, o);
  if (line.source.chosen()) return cmd_source(line.source, o);
  if (line.run.chosen()) return with_cache_report(line.run, o, cmd_run(line.run, o));
  if (line.bench.chosen()) return with_cache_report(line.bench, o, cmd_bench(line.bench, o));
  if (line.demo.chosen()) return cmd_demo(o);
  if (line.cache.chosen()) return cmd_cache(line.cache);
  if (line.precompile.chosen()) return with_cache_report(line.precompile, o, cmd_precompile(line.precompile, o));
  throw Error("no command given (clreorder --help lists them)");
}

}  // namespace

CompileProgress::CompileProgress(std::string what, std::FILE* stream, int terminal, std::chrono::milliseconds after)
    : what_(std::move(what)), stream_(stream ? stream : stderr), start_(std::chrono::steady_clock::now()) {
  if (terminal < 0) terminal = isatty(fileno(stream_));
  if (!terminal) return;
  thread_ = std::thread([this, after] {
    std::unique_lock<std::mutex> lock(mutex_);
    if (done_cv_.wait_for(lock, after, [this] { return done_; })) return;
    do {
      std::fprintf(stream_, "\rclreorder: %s: %.1f s", what_.c_str(), seconds());
      std::fflush(stream_);
      shown_ = true;
    } while (!done_cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return done_; }));
  });
}

CompileProgress::~CompileProgress() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  done_cv_.notify_all();
  thread_.join();
  if (shown_) std::fprintf(stream_, "\rclreorder: %s: %.2f s\n", what_.c_str(), seconds());
}

double CompileProgress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

int run_cli(int argc, const char* const* argv, const CliOptions& options) {
  if (argc < 2) {
    std::fputs("usage: clreorder COMMAND [options]  (clreorder --help lists the commands)\n", stderr);
    return 2;
  }
  std::FILE* err = options.errors ? options.errors : stderr;
  try {
    return dispatch(argc, argv, options);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(err, "clreorder: error: %s\n", e.what());
  } catch (...) {
    std::fflush(stdout);
    std::fprintf(err, "clreorder: error: an unexpected exception\n");
  }
  return 2;
}

}  // namespace clreorder
