// clreorder command-line tool: thin argument parsing over the library (all logic lives there, so the CLI,
// the C++ API and tests behave the same). See `clreorder help`.
#include "cli.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <map>
#include <memory>
#include <set>

#include "clreorder/bench.hpp"
#include "clreorder/cache.hpp"
#include "clreorder/error.hpp"
#include "clreorder/format.hpp"
#include "clreorder/picture.hpp"
#include "clreorder/reference.hpp"
#include "clreorder/reorder.hpp"

namespace clreorder {

namespace {

const char* kUsage = R"(usage: clreorder COMMAND [options]

commands:
  devices                      list OpenCL platforms and devices; '*' marks the default
  formats [--json]             list every registered format (kind, rank, order, blocks, aliases)
  explain FORMAT --shape D0,D1,... [--dtype T] [--pad-lower ..] [--pad-upper ..] [--strides ..] [--offset N]
          [--at C0,C1,..] [--limit N] [--svg FILE [--color-by AXIS] [--columns N]]
                               print the memory map: each offset with its logical coordinate, pad or gap;
                               --svg draws it (cells in memory order coloured by AXIS, default the channel)
  run --from FMT --to FMT --shape D0,D1,... [--dtype T] [--to-dtype T]
      [--src-pad-lower ..] [--src-pad-upper ..] [--dst-pad-lower ..] [--dst-pad-upper ..]
      [--src-strides S0,S1,..] [--dst-strides ..] [--src-offset N] [--dst-offset N] [--to-shape D0,D1,..]
      [--input FILE] [--output FILE] [--check] [--device SPEC] [--impl NAME] [--json]
      [--policy wait|background|agnostic] [--verbose]
                               reorder on the device; prints the implementation, where its kernel came from,
                               the time to the first result (ready), kernel time and GB/s. --policy: while the
                               specialised kernel is not compiled or stored, wait for it (the default here: one
                               reorder per process, so the kernel a runtime keeps is the one checked and timed),
                               run the shape-agnostic kernel and compile it in the background (the library's
                               default), or never compile it
  bench --from FMT --to FMT --shape ... [same layout options] [--impl NAME] [--runs N] [--json] [--verbose]
                               time the reorder (median of N runs, default 25, after warm-up) against
                               clEnqueueCopyBuffer of the destination's bytes in the same run
  source --from FMT --to FMT --shape ... [same layout options] [--impl NAME]
                               print the generated OpenCL C
  precompile FILE [--device SPEC] [--verbose]
                               compile every reorder FILE lists (one per line: the layout options of run, and
                               --impl) ahead of use, into the kernel cache
                               (--verbose, for run, bench and precompile: the kernel caches' counts on stderr
                               afterwards: programs compiled and loaded, hits, misses, rejected, stored)
  cache info [--json] | cache clear
                               the persistent kernel cache: its directory, files and size; or remove its files
  demo                         bfyx -> b_fs_yx_fsv16 on a small odd shape, checked, with a short explain
  version, --version           the library's version
  help                         this text

Strides (elements; of a whole block for a blocked axis) and offsets (elements) describe views such as
PyTorch's (sizes, strides, storage_offset): elements between strided ones are never written; a source
stride may be 0 (broadcast). FORMAT is an OpenVINO name, a oneDNN tag (nChw16c, aBcd16b) or a PyTorch
name (channels_last).
--to-shape reshapes on the way (same element count, any rank): elements correspond by their canonical
row-major index, as OpenVINO's reorder between bfyx, bfzyx and bfwzyx.
Shapes, paddings and strides are in the formats' canonical logical order: data b,f,[v,u,w,z],y,x; weights
o,i,[z],y,x; grouped weights g,o,i,[z],y,x. Data types: f32 f16 bf16 f64 i8 u8 i16 u16 i32 u32 i64 u64 (default f32;
f64 on devices with double support).
Without --input the source holds each element's logical linear index (wrapped to the type) and zero
padding. --check compares every destination byte, padding included, with the host reference.
Kernel cache: compiled kernels persist in CLREORDER_CACHE_DIR, else $XDG_CACHE_HOME/clreorder, else
~/.cache/clreorder; CLREORDER_CACHE_DIR=off disables it.
Environment: CLREORDER_DEVICE (index or name substring), CLREORDER_FORCE_IMPL (implementation name),
CLREORDER_TUNING (cpu or gpu tiles, whatever the device), CLREORDER_INDEX_BITS (64 forces 64-bit indices).
)";

// --key value options and bare flags, with every key checked against what the command accepts: an unknown,
// repeated or empty option, or a positional argument the command does not take, is an error naming it.
class Args {
 public:
  Args(int argc, const char* const* argv, int first, const std::set<std::string>& valued,
       const std::set<std::string>& flags, size_t max_positional = 0) {
    for (int i = first; i < argc; ++i) {
      std::string a = argv[i];
      if (a.rfind("--", 0) != 0) {
        if (positional_.size() >= max_positional) throw Error("unexpected argument '" + a + "'");
        positional_.push_back(a);
        continue;
      }
      std::string key = a.substr(2);
      if (!flags.count(key) && !valued.count(key)) throw Error("unknown option '" + a + "'");
      if (values_.count(key)) throw Error("option " + a + " is given twice");
      if (flags.count(key)) {
        values_[key] = "1";
        continue;
      }
      if (i + 1 >= argc) throw Error("option " + a + " needs a value");
      if (std::string(argv[i + 1]).rfind("--", 0) == 0)
        throw Error("option " + a + " needs a value, not the option '" + argv[i + 1] + "'");
      values_[key] = argv[++i];
      if (values_[key].empty()) throw Error("option " + a + " is empty");
    }
  }
  bool has(const std::string& k) const { return values_.count(k) != 0; }
  std::string get(const std::string& k, const std::string& def = "") const {
    auto it = values_.find(k);
    return it == values_.end() ? def : it->second;
  }
  std::string need(const std::string& k) const {
    if (!has(k)) throw Error("missing option --" + k);
    return get(k);
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
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

Dims optional_dims(const Args& a, const std::string& key) { return a.has(key) ? parse_dims(a.get(key)) : Dims{}; }

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string coord_text(const Format& f, const int64_t* c) {
  std::string s = "[";
  for (int a = 0; a < f.rank(); ++a)
    s += (a ? "; " : "") + std::string(1, f.axes()[a]) + "=" + std::to_string(c[a]);
  return s + "]";
}

int cmd_devices() {
  std::vector<DeviceInfo> devs = list_devices();
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
    std::printf("     type %s, %s, driver %s\n", d.type.c_str(), d.version.c_str(), d.driver.c_str());
    std::printf("     global memory %.1f MiB, max allocation %.1f MiB, cache %.1f MiB, max work-group %zu, fp16 %s, fp64 %s\n",
                d.global_mem / 1048576.0, d.max_alloc / 1048576.0, d.cache_bytes / 1048576.0, d.max_work_group,
                d.fp16 ? "yes" : "no", d.fp64 ? "yes" : "no");
  }
  return 0;
}

int cmd_formats(const Args& a) {
  const bool json = a.has("json");
  if (json) std::printf("[\n");
  bool first = true;
  for (const FormatEntry& e : registry()) {
    std::string kind = "-", order = "-", blocks = "-", axes = "-", aliases, plain_aliases;
    int rank = 0;
    bool blocked = false;
    if (e.unsupported.empty()) {
      Format f = Format::parse(e.name);
      for (const std::string& alias : aliases_of(f)) {
        aliases += (aliases.empty() ? "\"" : ", \"") + json_escape(alias) + "\"";
        plain_aliases += (plain_aliases.empty() ? "aka " : ", ") + alias;
      }
      kind = to_string(f.kind());
      order = f.order();
      blocks = f.blocks_string();
      axes = f.axes();
      rank = f.rank();
      blocked = f.is_blocked();
    }
    if (json) {
      std::printf("%s  {\"name\": \"%s\", \"supported\": %s, \"kind\": \"%s\", \"rank\": %d, \"axes\": \"%s\", "
                  "\"order\": \"%s\", \"blocks\": \"%s\", \"blocked\": %s, \"aliases\": [%s], \"reason\": \"%s\"}",
                  first ? "" : ",\n", e.name.c_str(), e.unsupported.empty() ? "true" : "false", kind.c_str(), rank,
                  axes.c_str(), order.c_str(), blocks.c_str(), blocked ? "true" : "false", aliases.c_str(),
                  json_escape(e.unsupported).c_str());
    } else if (e.unsupported.empty()) {
      std::printf("%-46s %-16s rank %d  order %-8s blocks %-12s %s\n", e.name.c_str(), kind.c_str(), rank, order.c_str(),
                  blocks.c_str(), plain_aliases.c_str());
    } else {
      std::printf("%-46s not supported: %s\n", e.name.c_str(), e.unsupported.c_str());
    }
    first = false;
  }
  if (json) std::printf("\n]\n");
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

int cmd_explain(const Args& a, const CliOptions& o) {
  if (a.positional().size() != 1) throw Error("explain takes one FORMAT, e.g. clreorder explain b_fs_yx_fsv16 --shape 2,2,2,2");
  Layout l = layout_from(a, a.positional()[0], a.get("dtype", "f32"), parse_dims(a.need("shape")), "");
  const int64_t limit = a.count("limit", std::min<int64_t>(4096, o.max_explain_lines), 0, o.max_explain_lines);
  const Format& f = l.format();
  std::printf("%s: %s, axes %s, order %s, blocks %s\n", l.describe().c_str(), to_string(f.kind()), f.axes().c_str(),
              f.order().c_str(), f.blocks_string().c_str());
  std::printf("%lld elements (%lld logical), %lld bytes\n", static_cast<long long>(l.elements()),
              static_cast<long long>(l.logical_elements()), static_cast<long long>(l.bytes()));
  // A layout given another way (strides, a spelling) that a registered format describes.
  const std::string same = named_equivalent(l);
  if (!same.empty() && format_from_name(same.substr(0, same.find(' '))) != f) std::printf("same elements as %s\n", same.c_str());
  if (!l.overlap().empty()) std::printf("overlapping: %s (a source only)\n", l.overlap().c_str());
  if (a.has("at")) {
    Dims c = parse_dims(a.get("at"));
    int64_t off = l.offset(c);
    const int64_t byte = off * static_cast<int64_t>(size_of(l.data_type()));
    std::printf("%s -> offset %lld (byte %lld)", coord_text(f, c.data()).c_str(), static_cast<long long>(off),
                static_cast<long long>(byte));
    if (const TpuPlacement* t = f.tpu())
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
  for (const MemorySlot& s : slots) {
    if (s.offset > next)
      std::printf("i = %lld..%lld => gap (not this tensor's)\n", static_cast<long long>(next), static_cast<long long>(s.offset - 1));
    next = s.offset + 1;
    std::printf("i = %lld => %s\n", static_cast<long long>(s.offset),
                s.kind == SlotKind::element ? coord_text(f, s.coord.data()).c_str()
                : s.kind == SlotKind::pad   ? "pad"
                                            : "another tensor's slot");
  }
  if (static_cast<int64_t>(slots.size()) < total)
    std::printf("... %lld more slots (raise --limit)\n", static_cast<long long>(total - static_cast<int64_t>(slots.size())));
  return 0;
}

struct Pair {
  Layout src, dst;
};

Pair pair_from(const Args& a) {
  Dims shape = parse_dims(a.need("shape"));
  std::string dt = a.get("dtype", "f32");
  Layout src = layout_from(a, a.need("from"), dt, shape, "src-");
  Layout dst = layout_from(a, a.need("to"), a.get("to-dtype", dt), a.has("to-shape") ? parse_dims(a.get("to-shape")) : shape, "dst-");
  check_compatible(src, dst);
  const KernelSelector& ks = KernelSelector::instance();
  if (a.has("impl") && !ks.find(a.get("impl")))
    throw Error("--impl '" + a.get("impl") + "' names no implementation (known: " + ks.names() + ")");
  return {src, dst};
}

// The raw source of `run --input`: exactly `layout.bytes()` bytes. It reads one byte more than that at most,
// so an endless file (/dev/zero) is refused instead of read until memory runs out.
std::vector<uint8_t> read_input(const std::string& path, const Layout& layout) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) throw Error("cannot read --input file '" + path + "': " + errno_text());
  if (S_ISDIR(st.st_mode)) throw Error("--input '" + path + "' is a directory, not a file");
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot read --input file '" + path + "': " + errno_text());
  const size_t need = static_cast<size_t>(layout.bytes());
  std::vector<uint8_t> buf(need + 1);
  size_t got = 0;
  while (got < buf.size()) {
    const ssize_t n = read(fd, buf.data() + got, buf.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = errno_text();
      close(fd);
      throw Error("cannot read --input file '" + path + "': " + why);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  if (got > need)
    throw Error("--input file '" + path + "' holds more than the " + std::to_string(need) + " bytes " +
                layout.describe() + " needs");
  if (got < need)
    throw Error("--input file '" + path + "' holds " + std::to_string(got) + " bytes but " + layout.describe() +
                " needs " + std::to_string(need));
  buf.resize(need);
  return buf;
}

// The reorder of `run` and `demo`: lines of text, or with `json` one object at the end (ready_ms: the first
// reorder from the call to its result on the host, kernel lookup or compile, upload and download included).
int run_reorder(const Engine& engine, const Pair& pr, const std::string& input, OutputFile* output, bool check,
                const std::string& impl, bool json = false, CompilePolicy policy = CompilePolicy::wait) {
  for (const Layout* l : {&pr.src, &pr.dst}) check_fits_device(engine.info(), *l);  // before allocating the source
  const std::vector<uint8_t> src = input.empty() ? make_pattern(pr.src) : read_input(input, pr.src);
  auto say = [json](const char* fmt, auto... args) {
    if (!json) std::printf(fmt, args...);
  };
  say("device: %s / %s (%s)\n", engine.info().platform.c_str(), engine.info().name.c_str(), engine.info().version.c_str());
  say("reorder: %s -> %s\n", pr.src.describe().c_str(), pr.dst.describe().c_str());
  ReorderOptions opt;
  opt.force_impl = impl;
  opt.policy = policy;
  ReorderResult res;
  const CacheStats mem_before = ProgramCache::instance().stats();
  const DiskCacheStats disk_before = DiskCache::instance().stats();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<uint8_t> out = reorder(engine, src, pr.src, pr.dst, opt, &res);
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
  size_t bad = 0, first = 0;
  if (check) {
    std::vector<uint8_t> want = sentinel;
    reference_reorder(pr.src, src.data(), pr.dst, want.data());
    for (size_t i = 0; i < checked.size(); ++i)
      if (checked[i] != want[i] && bad++ == 0) first = i;
    if (bad)
      say("check: FAILED, %zu of %zu bytes differ from the host reference; first at byte %zu (got 0x%02x, want 0x%02x)\n",
          bad, checked.size(), first, checked[first], want[first]);
    else
      say("check: OK, all %zu destination bytes (padding included) match the host reference\n", checked.size());
  }
  if (json)
    std::printf("{\"device\": \"%s\", \"from\": \"%s\", \"to\": \"%s\", \"impl\": \"%s\", \"entry\": \"%s\", "
                "\"cache\": \"%s\", \"ready_ms\": %.3f, \"compile_ms\": %.3f, \"kernel_ms\": %.4f, \"check\": \"%s\"}\n",
                json_escape(engine.info().name).c_str(), json_escape(pr.src.describe()).c_str(),
                json_escape(pr.dst.describe()).c_str(), res.impl.c_str(), res.entry.c_str(), json_escape(cache).c_str(),
                ready_ms, compile_ms, res.kernel_ms, !check ? "not run" : bad ? "FAILED" : "OK");
  return bad ? 1 : 0;
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
  Engine engine = Engine::open(a.get("device"));
  return run_reorder(engine, pr, a.get("input"), output.get(), a.has("check"), a.get("impl"), a.has("json"),
                     policy);
}

int cmd_bench(const Args& a, const CliOptions& o) {
  Pair pr = pair_from(a);
  const int runs = static_cast<int>(a.count("runs", 25, 1, 100000));
  if (o.dry_run) return 0;
  Engine engine = Engine::open(a.get("device"));
  BenchResult r = bench_reorder(engine, pr.src, pr.dst, a.get("impl"), runs);
  if (a.has("json")) {
    std::printf("%s\n", r.json(pr.src, pr.dst).c_str());
    return 0;
  }
  std::printf("device: %s / %s\n", engine.info().platform.c_str(), engine.info().name.c_str());
  std::printf("reorder: %s -> %s\n", pr.src.describe().c_str(), pr.dst.describe().c_str());
  std::printf("impl: %s, %d runs (medians)\n", r.impl.c_str(), r.runs);
  std::printf("reorder: %.4f ms (kernel %.4f ms), %.2f GB/s logical, %.2f GB/s physical\n", r.median_ms, r.kernel_ms,
              r.gbps_logical, r.gbps_physical);
  std::printf("copy:    %.4f ms, %.2f GB/s (clEnqueueCopyBuffer of %lld bytes)\n", r.copy_ms, r.copy_gbps,
              static_cast<long long>(pr.dst.bytes()));
  std::printf("ratio:   %.3f of copy bandwidth\n", r.ratio);
  std::printf("host:    %.2f us per cached reorder() call, %.2f us per bare clEnqueueNDRangeKernel (overhead %.2f us)\n",
              r.enqueue_us, r.bare_enqueue_us, r.enqueue_us - r.bare_enqueue_us);
  return 0;
}

// `cache info [--json]`, `cache clear`: the persistent kernel cache's directory and files.
int cmd_cache(const Args& a) {
  if (a.positional().size() != 1 || (a.positional()[0] != "info" && a.positional()[0] != "clear"))
    throw Error("cache takes 'info' or 'clear', e.g. clreorder cache info");
  DiskCache& cache = DiskCache::instance();
  if (a.positional()[0] == "clear") {
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
    std::printf("{\"directory\": \"%s\", \"source\": \"%s\", \"enabled\": %s, \"programs\": %llu, \"indexes\": %llu, "
                "\"bytes\": %llu}\n",
                json_escape(info.directory).c_str(), info.source.c_str(), info.directory.empty() ? "false" : "true",
                static_cast<unsigned long long>(info.programs), static_cast<unsigned long long>(info.indexes),
                static_cast<unsigned long long>(info.bytes));
    return 0;
  }
  if (info.directory.empty()) {
    std::printf("kernel cache: off (CLREORDER_CACHE_DIR=off)\n");
    return 0;
  }
  std::printf("kernel cache: %s (from %s)\n", info.directory.c_str(), info.source.c_str());
  std::printf("%llu programs, %llu kernel indexes, %.1f KiB\n", static_cast<unsigned long long>(info.programs),
              static_cast<unsigned long long>(info.indexes), static_cast<double>(info.bytes) / 1024.0);
  return 0;
}

// `precompile FILE`: every reorder listed (one per line, the layout options of `run`; '#' starts a comment)
// compiled ahead of use, one program per implementation forced, into the persistent cache.
int cmd_precompile(const Args& a, const CliOptions& o, const std::set<std::string>& layout_opts) {
  if (a.positional().size() != 1) throw Error("precompile takes one FILE of reorders, one per line (the options of run)");
  const std::string path = a.positional()[0];
  std::ifstream in(path);
  if (!in) throw Error("cannot read precompile file '" + path + "': " + std::strerror(errno));
  std::map<std::string, std::vector<std::pair<Layout, Layout>>> by_impl;
  size_t count = 0, line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::vector<std::string> tokens = {"clreorder", "run"};
    for (std::string w; words >> w;) tokens.push_back(w);
    if (tokens.size() == 2) continue;
    std::vector<const char*> argv;
    for (const std::string& t : tokens) argv.push_back(t.c_str());
    try {
      std::set<std::string> opts = layout_opts;
      opts.erase("device");
      const Args line_args(static_cast<int>(argv.size()), argv.data(), 2, opts, {});
      Pair pr = pair_from(line_args);
      by_impl[line_args.get("impl")].emplace_back(pr.src, pr.dst);
      ++count;
    } catch (const std::exception& e) {
      throw Error(path + ":" + std::to_string(line_no) + ": " + e.what());
    }
  }
  if (count == 0) throw Error("precompile file '" + path + "' lists no reorder");
  if (o.dry_run) return 0;
  Engine engine = Engine::open(a.get("device"));
  const CacheStats before = ProgramCache::instance().stats();
  for (const auto& [impl, pairs] : by_impl) prepare(engine, pairs, impl);
  const CacheStats after = ProgramCache::instance().stats();
  const std::string dir = DiskCache::instance().directory();
  std::printf("precompiled %zu reorders from %s on %s: %llu programs compiled, %llu loaded, %s\n", count, path.c_str(),
              engine.info().name.c_str(), static_cast<unsigned long long>(after.programs_built - before.programs_built),
              static_cast<unsigned long long>(after.programs_loaded - before.programs_loaded),
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
  DeviceInfo dev = typical_device();
  if (!o.dry_run) {
    try {
      dev = choose_device(a.get("device"));
    } catch (const Error&) {
      // no device: print what a typical device would get
    }
  }
  for (const auto& [impl, reason] : KernelSelector::instance().explain(ReorderParams{pr.src, pr.dst, dev}))
    std::printf("// selector: %-8s %s\n", impl.c_str(), reason.empty() ? "accepts" : ("declines: " + reason).c_str());
  KernelData kd = plan_reorder(dev, pr.src, pr.dst, a.get("impl"));
  std::printf("// %s -> %s\n// impl %s, entry %s, options '%s', global %s, local %s\n", pr.src.describe().c_str(),
              pr.dst.describe().c_str(), kd.impl.c_str(), kd.source.entry.c_str(), kd.source.options.c_str(),
              dims_to_string(Dims(kd.global.begin(), kd.global.end()), ",").c_str(),
              dims_to_string(Dims(kd.local.begin(), kd.local.end()), ",").c_str());
  std::printf("%s", kd.source.code.c_str());
  return 0;
}

int cmd_demo(const CliOptions& o) {
  std::printf("== clreorder demo: bfyx -> b_fs_yx_fsv16 (nChw16c) on an odd shape, checked on the device ==\n\n");
  std::printf("-- the layout: clreorder explain b_fs_yx_fsv16 --shape 1,3,1,2 --\n");
  const char* explain_argv[] = {"clreorder", "explain", "b_fs_yx_fsv16", "--shape", "1,3,1,2", "--limit", "20"};
  int rc = cmd_explain(Args(7, explain_argv, 2, {"shape", "limit"}, {}, 1), o);
  if (rc || o.dry_run) return rc;
  std::printf("\n-- the reorder: clreorder run --from bfyx --to b_fs_yx_fsv16 --shape 3,19,5,7 --check --\n");
  Engine engine = Engine::open();
  Dims shape = {3, 19, 5, 7};
  Pair pr{Layout(Format::parse("bfyx"), DataType::f32, shape), Layout(Format::parse("b_fs_yx_fsv16"), DataType::f32, shape)};
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

int dispatch(int argc, const char* const* argv, const CliOptions& o) {
  const std::string cmd = argv[1];
  const std::set<std::string> layout_opts = {"from", "to", "shape", "dtype", "to-dtype", "src-pad-lower", "src-pad-upper",
                                             "dst-pad-lower", "dst-pad-upper", "src-strides", "dst-strides",
                                             "src-offset", "dst-offset", "to-shape", "device", "impl"};
  if (cmd == "version" || cmd == "--version") {
    Args(argc, argv, 2, {}, {});
    std::printf("clreorder %s\n", version());
    return 0;
  }
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    Args(argc, argv, 2, {}, {});
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "devices") {
    Args(argc, argv, 2, {}, {});
    return o.dry_run ? 0 : cmd_devices();
  }
  if (cmd == "formats") return cmd_formats(Args(argc, argv, 2, {}, {"json"}));
  if (cmd == "explain") return cmd_explain(Args(argc, argv, 2, {"shape", "dtype", "pad-lower", "pad-upper", "strides", "offset", "at", "limit", "svg", "color-by", "columns"}, {}, 1), o);
  if (cmd == "source") return cmd_source(Args(argc, argv, 2, layout_opts, {}), o);
  if (cmd == "run") {
    std::set<std::string> opts = layout_opts;
    opts.insert({"input", "output", "policy"});
    const Args a(argc, argv, 2, opts, {"check", "json", "verbose"});
    return with_cache_report(a, o, cmd_run(a, o));
  }
  if (cmd == "bench") {
    std::set<std::string> opts = layout_opts;
    opts.insert("runs");
    const Args a(argc, argv, 2, opts, {"json", "verbose"});
    return with_cache_report(a, o, cmd_bench(a, o));
  }
  if (cmd == "demo") {
    Args(argc, argv, 2, {}, {});
    return cmd_demo(o);
  }
  if (cmd == "cache") return cmd_cache(Args(argc, argv, 2, {}, {"json"}, 1));
  if (cmd == "precompile") {
    const Args a(argc, argv, 2, {"device"}, {"verbose"}, 1);
    return with_cache_report(a, o, cmd_precompile(a, o, layout_opts));
  }
  throw Error("unknown command '" + cmd + "' (clreorder help lists them)");
}

}  // namespace

int run_cli(int argc, const char* const* argv, const CliOptions& options) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
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
