// clreorder command-line tool: thin argument parsing over the library (all logic lives there, so the CLI,
// the C++ API and tests behave the same). See `clreorder help`.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "clreorder/bench.hpp"
#include "clreorder/error.hpp"
#include "clreorder/format.hpp"
#include "clreorder/reference.hpp"
#include "clreorder/reorder.hpp"

using namespace clreorder;

namespace {

const char* kUsage = R"(usage: clreorder COMMAND [options]

commands:
  devices                      list OpenCL platforms and devices; '*' marks the default
  formats [--json]             list every registered format (kind, rank, order, blocks)
  explain FORMAT --shape D0,D1,... [--dtype T] [--pad-lower ..] [--pad-upper ..] [--at C0,C1,..] [--limit N]
                               print the memory map: each offset with its logical coordinate, or pad
  run --from FMT --to FMT --shape D0,D1,... [--dtype T] [--to-dtype T]
      [--src-pad-lower ..] [--src-pad-upper ..] [--dst-pad-lower ..] [--dst-pad-upper ..]
      [--input FILE] [--output FILE] [--check] [--device SPEC] [--impl NAME]
                               reorder on the device; prints the implementation, kernel time and GB/s
  bench --from FMT --to FMT --shape ... [same layout options] [--impl NAME] [--runs N] [--json]
                               time the reorder (median of N runs, default 25, after warm-up) against
                               clEnqueueCopyBuffer of the destination's bytes in the same run
  source --from FMT --to FMT --shape ... [same layout options] [--impl NAME]
                               print the generated OpenCL C
  demo                         bfyx -> b_fs_yx_fsv16 on a small odd shape, checked, with a short explain
  help                         this text

Shapes and paddings are in the formats' canonical logical order: data b,f,[v,u,w,z],y,x; weights
o,i,[z],y,x; grouped weights g,o,i,[z],y,x. Data types: f32 f16 bf16 i8 u8 i32 i64 (default f32).
Without --input the source holds each element's logical linear index (wrapped to the type) and zero
padding. --check compares every destination byte, padding included, with the host reference.
Environment: CLREORDER_DEVICE (index or name substring), CLREORDER_FORCE_IMPL (implementation name).
)";

// --key value options and bare flags, with every key checked against what the command accepts.
class Args {
 public:
  Args(int argc, char** argv, int first, const std::set<std::string>& valued, const std::set<std::string>& flags) {
    for (int i = first; i < argc; ++i) {
      std::string a = argv[i];
      if (a.rfind("--", 0) != 0) {
        positional_.push_back(a);
        continue;
      }
      std::string key = a.substr(2);
      if (flags.count(key)) {
        values_[key] = "1";
      } else if (valued.count(key)) {
        if (i + 1 >= argc) throw Error("option --" + key + " needs a value");
        values_[key] = argv[++i];
      } else {
        throw Error("unknown option '" + a + "'");
      }
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
    std::printf("     global memory %.1f MiB, max allocation %.1f MiB, cache %.1f MiB, max work-group %zu, fp16 %s\n",
                d.global_mem / 1048576.0, d.max_alloc / 1048576.0, d.cache_bytes / 1048576.0, d.max_work_group,
                d.fp16 ? "yes" : "no");
  }
  return 0;
}

int cmd_formats(const Args& a) {
  const bool json = a.has("json");
  if (json) std::printf("[\n");
  bool first = true;
  for (const FormatEntry& e : registry()) {
    std::string kind = "-", order = "-", blocks = "-", axes = "-";
    int rank = 0;
    bool blocked = false;
    if (e.unsupported.empty()) {
      Format f = Format::parse(e.name);
      kind = to_string(f.kind());
      order = f.order();
      blocks = f.blocks_string();
      axes = f.axes();
      rank = f.rank();
      blocked = f.is_blocked();
    }
    if (json) {
      std::printf("%s  {\"name\": \"%s\", \"supported\": %s, \"kind\": \"%s\", \"rank\": %d, \"axes\": \"%s\", "
                  "\"order\": \"%s\", \"blocks\": \"%s\", \"blocked\": %s, \"reason\": \"%s\"}",
                  first ? "" : ",\n", e.name.c_str(), e.unsupported.empty() ? "true" : "false", kind.c_str(), rank,
                  axes.c_str(), order.c_str(), blocks.c_str(), blocked ? "true" : "false",
                  json_escape(e.unsupported).c_str());
    } else if (e.unsupported.empty()) {
      std::printf("%-46s %-16s rank %d  order %-8s blocks %s\n", e.name.c_str(), kind.c_str(), rank, order.c_str(),
                  blocks.c_str());
    } else {
      std::printf("%-46s not supported: %s\n", e.name.c_str(), e.unsupported.c_str());
    }
    first = false;
  }
  if (json) std::printf("\n]\n");
  return 0;
}

Layout layout_from(const std::string& fmt, const std::string& dtype, const Dims& shape, const Dims& lo, const Dims& up) {
  return Layout(format_from_name(fmt), parse_data_type(dtype), shape, lo, up);
}

int cmd_explain(const Args& a) {
  if (a.positional().size() != 1) throw Error("explain takes one FORMAT, e.g. clreorder explain b_fs_yx_fsv16 --shape 2,2,2,2");
  Layout l = layout_from(a.positional()[0], a.get("dtype", "f32"), parse_dims(a.need("shape")),
                         optional_dims(a, "pad-lower"), optional_dims(a, "pad-upper"));
  const Format& f = l.format();
  std::printf("%s: %s, axes %s, order %s, blocks %s\n", l.describe().c_str(), to_string(f.kind()), f.axes().c_str(),
              f.order().c_str(), f.blocks_string().c_str());
  std::printf("%lld elements (%lld logical), %lld bytes\n", static_cast<long long>(l.elements()),
              static_cast<long long>(l.logical_elements()), static_cast<long long>(l.bytes()));
  if (a.has("at")) {
    Dims c = parse_dims(a.get("at"));
    int64_t off = l.offset(c);
    std::printf("%s -> offset %lld (byte %lld)\n", coord_text(f, c.data()).c_str(), static_cast<long long>(off),
                static_cast<long long>(off * static_cast<int64_t>(size_of(l.data_type()))));
    return 0;
  }
  const int64_t limit = a.has("limit") ? parse_dims(a.get("limit")).at(0) : 4096;
  // Dense plans store digit tuple p at offset p, so only the printed lines are decoded, whatever the size.
  if (!l.plan().dense()) throw Error("explain: " + l.describe() + " is not a dense layout");
  int64_t c[8], off;
  const int64_t shown = std::min(limit, l.elements());
  for (int64_t p = 0; p < shown; ++p) {
    bool valid = l.plan().decode(p, &off, c);
    std::printf("i = %lld => %s\n", static_cast<long long>(off), valid ? coord_text(f, c).c_str() : "pad");
  }
  if (l.elements() > shown) std::printf("... %lld more (raise --limit)\n", static_cast<long long>(l.elements() - shown));
  return 0;
}

struct Pair {
  Layout src, dst;
};

Pair pair_from(const Args& a) {
  Dims shape = parse_dims(a.need("shape"));
  std::string dt = a.get("dtype", "f32");
  Layout src = layout_from(a.need("from"), dt, shape, optional_dims(a, "src-pad-lower"), optional_dims(a, "src-pad-upper"));
  Layout dst = layout_from(a.need("to"), a.get("to-dtype", dt), shape, optional_dims(a, "dst-pad-lower"),
                           optional_dims(a, "dst-pad-upper"));
  check_compatible(src, dst);
  return {src, dst};
}

int run_reorder(const Engine& engine, const Pair& pr, const std::string& input, const std::string& output, bool check,
                const std::string& impl) {
  for (const Layout* l : {&pr.src, &pr.dst}) check_fits_device(engine.info(), *l);  // before allocating the pattern
  std::vector<uint8_t> src;
  if (!input.empty()) {
    std::ifstream in(input, std::ios::binary);
    if (!in) throw Error("cannot read --input file '" + input + "'");
    src.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (static_cast<int64_t>(src.size()) != pr.src.bytes())
      throw Error("--input file '" + input + "' holds " + std::to_string(src.size()) + " bytes but " +
                  pr.src.describe() + " needs " + std::to_string(pr.src.bytes()));
  } else {
    src = make_pattern(pr.src);
  }
  std::printf("device: %s / %s (%s)\n", engine.info().platform.c_str(), engine.info().name.c_str(),
              engine.info().version.c_str());
  std::printf("reorder: %s -> %s\n", pr.src.describe().c_str(), pr.dst.describe().c_str());
  ReorderOptions opt;
  opt.force_impl = impl;
  ReorderResult res;
  std::vector<uint8_t> out = reorder(engine, src, pr.src, pr.dst, opt, &res);
  // A second run: the first paid for the kernel's first launch; this one shows the steady state.
  reorder(engine, src, pr.src, pr.dst, opt, &res);
  const double bytes = static_cast<double>(pr.src.bytes() + pr.dst.bytes());
  std::printf("impl: %s (kernel %s)\n", res.impl.c_str(), res.entry.c_str());
  std::printf("bytes: source %lld, destination %lld (%lld logical elements)\n", static_cast<long long>(pr.src.bytes()),
              static_cast<long long>(pr.dst.bytes()), static_cast<long long>(pr.src.logical_elements()));
  if (res.kernel_ms >= 0)
    std::printf("kernel: %.4f ms, %.2f GB/s (source + destination bytes / kernel time)\n", res.kernel_ms,
                bytes / (res.kernel_ms * 1e-3) / 1e9);
  if (!output.empty()) {
    std::ofstream o(output, std::ios::binary);
    o.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
    if (!o) throw Error("cannot write --output file '" + output + "'");
    std::printf("output: %zu bytes written to %s\n", out.size(), output.c_str());
  }
  if (!check) return 0;
  std::vector<uint8_t> want(out.size(), 0xAB);
  reference_reorder(pr.src, src.data(), pr.dst, want.data());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] != want[i] && bad++ == 0) first = i;
  if (bad) {
    std::printf("check: FAILED, %zu of %zu bytes differ from the host reference; first at byte %zu (got 0x%02x, "
                "want 0x%02x)\n", bad, out.size(), first, out[first], want[first]);
    return 1;
  }
  std::printf("check: OK, all %zu destination bytes (padding included) match the host reference\n", out.size());
  return 0;
}

int cmd_run(const Args& a) {
  Pair pr = pair_from(a);
  Engine engine = Engine::open(a.get("device"));
  return run_reorder(engine, pr, a.get("input"), a.get("output"), a.has("check"), a.get("impl"));
}

int cmd_bench(const Args& a) {
  Pair pr = pair_from(a);
  Engine engine = Engine::open(a.get("device"));
  int runs = a.has("runs") ? static_cast<int>(parse_dims(a.get("runs")).at(0)) : 25;
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

int cmd_source(const Args& a) {
  Pair pr = pair_from(a);
  DeviceInfo dev;
  try {
    dev = choose_device(a.get("device"));
  } catch (const Error&) {
    dev.max_work_group = 256;  // no device: print what a typical device would get
    dev.type = "gpu";
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

int cmd_demo() {
  std::printf("== clreorder demo: bfyx -> b_fs_yx_fsv16 (nChw16c) on an odd shape, checked on the device ==\n\n");
  std::printf("-- the layout: clreorder explain b_fs_yx_fsv16 --shape 1,3,1,2 --\n");
  const char* explain_argv[] = {"clreorder", "explain", "b_fs_yx_fsv16", "--shape", "1,3,1,2", "--limit", "20"};
  int rc = cmd_explain(Args(7, const_cast<char**>(explain_argv), 2, {"shape", "limit"}, {}));
  if (rc) return rc;
  std::printf("\n-- the reorder: clreorder run --from bfyx --to b_fs_yx_fsv16 --shape 3,19,5,7 --check --\n");
  Engine engine = Engine::open();
  Dims shape = {3, 19, 5, 7};
  Pair pr{Layout(Format::parse("bfyx"), DataType::f32, shape), Layout(Format::parse("b_fs_yx_fsv16"), DataType::f32, shape)};
  rc = run_reorder(engine, pr, "", "", true, "");
  if (rc == 0) std::printf("\ndemo: OK\n");
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string cmd = argv[1];
  const std::set<std::string> layout_opts = {"from", "to", "shape", "dtype", "to-dtype", "src-pad-lower", "src-pad-upper",
                                             "dst-pad-lower", "dst-pad-upper", "device", "impl"};
  try {
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (cmd == "devices") return cmd_devices();
    if (cmd == "formats") return cmd_formats(Args(argc, argv, 2, {}, {"json"}));
    if (cmd == "explain") return cmd_explain(Args(argc, argv, 2, {"shape", "dtype", "pad-lower", "pad-upper", "at", "limit"}, {}));
    if (cmd == "source") return cmd_source(Args(argc, argv, 2, layout_opts, {}));
    if (cmd == "run") {
      std::set<std::string> opts = layout_opts;
      opts.insert({"input", "output"});
      return cmd_run(Args(argc, argv, 2, opts, {"check"}));
    }
    if (cmd == "bench") {
      std::set<std::string> opts = layout_opts;
      opts.insert("runs");
      return cmd_bench(Args(argc, argv, 2, opts, {"json"}));
    }
    if (cmd == "demo") return cmd_demo();
    std::fprintf(stderr, "clreorder: unknown command '%s'\n\n%s", cmd.c_str(), kUsage);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "clreorder: error: %s\n", e.what());
    return 2;
  }
}
