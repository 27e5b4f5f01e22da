// clreorder_ab: interleaved A/B timing of variants of one generated kernel. On a shared, noisy machine two
// separate benchmark runs of the same kernel differ by up to 2x, so comparing a code-generation idea needs
// both kernels timed in the same run, launch after launch. Variant 0 is the kernel as the selector
// generates it (or as --impl forces); each --variant 'FIND=>REPLACE[;;FIND=>REPLACE..]' makes one more by text substitution in
// its source (a piece '@global=N' launches it with N work-items: a variant of another grid), each --vs IMPL adds the kernel another implementation generates for the same reorder, and each
// --env VAR=VALUE the kernel generated with that environment variable set (e.g. CLREORDER_INDEX_BITS=64), and
// each --options TEXT variant 0 built with more build options (e.g. '-D CR_SOFTWARE_F16': common.cl's choices).
// Each --param NAME[:AXIS[:GROUP[:OUTER]]] fuses a parameter into every variant (constants, baked into the kernel):
// one value, or a value per index (per group of GROUP indices) of canonical axis AXIS, for each index of OUTER
// (with --param-buffers read from device buffers at run time instead, as past 8192 indexed values);
// --vs-plain then adds the same reorder's plain conversion (the fused arithmetic's own cost, without the host's).
// --compensation AXIS[:OUTER] makes every variant write compensation sums per index of canonical axis AXIS (for
// each index of OUTER) into a buffer of their own, as the int8 weights reorders do; --vs-plain is then the
// same reorder without them (nor the --param values).
// Each --cache BYTES adds the kernel planned for a device reporting that cache (whether its stores stream: past a
// quarter of BYTES, without the bound per compute unit), and
// --consumer times each launch together with a copy of its destination after it: a streamed destination is no
// longer in cache for whoever reads it next, so a streaming choice is judged by the pair. --vs-copy adds the
// benchmarks' copy kernel over the destination's bytes: how far a kernel is from the copy, cold and --warm.
//
//   clreorder_ab --from bfyx --to b_fs_yx_fsv16 --shape 8,256,56,56 --to-dtype f16 --variant 'if (dst_wide)=>if (0)'
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "clreorder/error.hpp"
#include "clreorder/format.hpp"
#include "clreorder/reference.hpp"
#include "clreorder/reorder.hpp"
#include "clreorder/runtime.hpp"
#include "../tools/pocl_affinity.hpp"
#include "kernel_times.hpp"

using namespace clreorder;

namespace {

std::string replace_all(std::string s, const std::string& find, const std::string& repl) {
  for (size_t p = 0; !find.empty() && (p = s.find(find, p)) != std::string::npos; p += repl.size()) s.replace(p, find.size(), repl);
  return s;
}

// --param NAME[:AXIS[:GROUP[:OUTER]]]: values that vary by index (zero points small integers, the others
// positive and not powers of two), so no kernel folds them away.
void add_param(Conversion& c, const std::string& text, const Dims& dims) {
  std::vector<std::string> parts;
  for (size_t at = 0;;) {
    const size_t colon = text.find(':', at);
    parts.push_back(text.substr(at, colon == std::string::npos ? std::string::npos : colon - at));
    if (colon == std::string::npos) break;
    at = colon + 1;
  }
  if (parts.size() > 4) throw Error("--param '" + text + "': NAME[:AXIS[:GROUP[:OUTER]]]");
  const Param q = parse_param(parts[0]);
  ParamValues v;
  auto number = [&](size_t k) {
    try {
      return std::stoi(parts[k]);
    } catch (const std::exception&) {
      throw Error("--param '" + text + "': '" + parts[k] + "' is not a number");
    }
  };
  if (parts.size() > 1) v.axis = number(1);
  if (parts.size() > 2) v.group = number(2);
  if (parts.size() > 3) v.outer_axis = number(3);
  v.values = {0};
  if (v.axis >= 0) v.values.resize(static_cast<size_t>(v.count(dims)));
  for (size_t k = 0; k < v.values.size(); ++k)
    v.values[k] = is_zero_point(q) ? static_cast<float>(static_cast<int>(k % 7) - 3) : 0.013f + 0.0007f * static_cast<float>(k % 97);
  c.param(q) = v;
}

}  // namespace

int main(int argc, char** argv) {
  clreorder_tools::pin_pocl_workers();  // before any OpenCL call (tools/pocl_affinity.hpp says why)
  std::string from, to, shape, dtype = "f32", to_dtype, impl, src_lo, src_hi, dst_lo, dst_hi, compensation;
  std::vector<std::string> variants, others, envs, options, params;
  std::vector<uint64_t> caches;
  int runs = 100;
  bool warm = false, consumer = false, keep = false, random_bits = false, vs_plain = false, vs_copy = false, param_buffers = false;
  CLI::App app("clreorder_ab: interleaved A/B timing of variants of one generated kernel (event kernel time)",
               "clreorder_ab");
  app.add_option("--from", from, "source format")->required();
  app.add_option("--to", to, "destination format")->required();
  app.add_option("--shape", shape, "logical dims, canonical order")->required();
  app.add_option("--dtype", dtype, "source data type")->capture_default_str();
  app.add_option("--to-dtype", to_dtype, "destination data type (default: --dtype)");
  app.add_option("--src-pad-lower", src_lo, "source padding before each axis");
  app.add_option("--src-pad-upper", src_hi, "source padding after each axis");
  app.add_option("--dst-pad-lower", dst_lo, "destination padding before each axis");
  app.add_option("--dst-pad-upper", dst_hi, "destination padding after each axis");
  app.add_option("--impl", impl, "implementation of variant 0 (default: the selector's)");
  app.add_option("--runs", runs, "interleaved runs of each variant")->capture_default_str()->check(CLI::Range(5, 1000000));
  app.add_flag("--keep-padding", keep, "the destination's padding left unwritten (Padding::keep)");
  app.add_flag("--consumer", consumer, "time each launch with a clEnqueueCopyBuffer of its destination after it (from the "
               "kernel's start to the copy's end): what a store form costs the next reader");
  app.add_flag("--warm", warm, "leave the working set in cache between launches");
  app.add_flag("--random-bits", random_bits, "the source filled with arbitrary bits (NaNs, subnormals), not the suite's pattern");
  app.add_option("--variant", variants, "'FIND=>REPLACE[;;FIND=>REPLACE..]': variant 0's source, substituted ('@global=N' "
                 "as one of the pieces: launched with N work-items)");
  app.add_option("--vs", others, "the kernel another implementation generates");
  app.add_option("--env", envs, "VAR=VALUE: the kernel generated with this environment variable set");
  app.add_option("--cache", caches, "the kernel planned for a device reporting this global memory cache in bytes "
                 "(whether its stores stream: past a quarter of it, no bound per compute unit)");
  app.add_option("--options", options, "variant 0 built with these build options too (e.g. '-D CR_SOFTWARE_F16')");
  app.add_flag("--vs-plain", vs_plain, "with --param: the same reorder's plain conversion (no parameters) beside it");
  app.add_flag("--vs-copy", vs_copy, "our copy kernel over the destination's bytes beside the variants (the benchmarks' "
               "baseline, buffers of its own; with --consumer timed alone)");
  app.add_option("--param", params, "NAME[:AXIS[:GROUP[:OUTER]]]: a fused parameter (src-scale, dst-zero-point ...) in "
                 "every variant, one value or one per index (group) of canonical axis AXIS");
  app.add_flag("--param-buffers", param_buffers, "the --param values read from device buffers at run time (as past 8192 "
               "indexed values, or ReorderOptions::param_buffers), not compiled in");
  app.add_option("--compensation", compensation, "AXIS[:OUTER]: compensation sums in every variant, per index of canonical "
                 "axis AXIS (for each index of OUTER)");
  CLI11_PARSE(app, argc, argv);
  try {
    const Dims dims = parse_dims(shape);
    auto pads = [](const std::string& text) { return text.empty() ? Dims{} : parse_dims(text); };
    Layout src(format_from_name(from), parse_data_type(dtype), dims, pads(src_lo), pads(src_hi));
    Layout dst(format_from_name(to), parse_data_type(to_dtype.empty() ? dtype : to_dtype), dims, pads(dst_lo), pads(dst_hi));
    Engine engine = Engine::open();
    Conversion conversion;
    conversion.padding = keep ? Padding::keep : Padding::zero;
    for (const std::string& text : params) add_param(conversion, text, dims);
    if (param_buffers)
      for (int q = 0; q < kParams; ++q)
        if (conversion.param(static_cast<Param>(q)).present()) conversion.param(static_cast<Param>(q)).from_buffer = true;
    if (!compensation.empty()) {
      const size_t colon = compensation.find(':');
      try {
        conversion.compensation.axis = std::stoi(compensation.substr(0, colon));
        if (colon != std::string::npos) conversion.compensation.outer_axis = std::stoi(compensation.substr(colon + 1));
      } catch (const std::exception&) {
        throw Error("--compensation '" + compensation + "': AXIS[:OUTER], canonical axis numbers");
      }
    }
    const KernelData kd = plan_reorder(engine.info(), src, dst, impl, conversion);
    std::vector<KernelData> kernels_data = {kd};
    std::vector<std::string> labels = {"(as generated, " + kd.impl + ")"};
    for (size_t k = 0; k < variants.size(); ++k) {
      KernelSource s = kd.source;
      KernelData v = kd;
      // 'A=>B;;C=>D' applies both substitutions, in order; '@global=N' launches N work-items instead (rounded up
      // to the work-group size), for a variant whose grid is another size: fewer work-items under the same
      // launch would leave whole work-groups empty, and PoCL's threads would split the busy ones unevenly.
      for (size_t at = 0; at <= variants[k].size();) {
        size_t end = variants[k].find(";;", at);
        if (end == std::string::npos) end = variants[k].size();
        const std::string sub = variants[k].substr(at, end - at);
        at = end + 2;
        if (sub.rfind("@global=", 0) == 0) {
          const size_t l = v.local.empty() ? 1 : v.local[0];
          const size_t n = static_cast<size_t>(std::stoull(sub.substr(8)));
          if (n == 0 || v.global.size() != 1) throw Error("variant '" + variants[k] + "': '" + sub + "' needs a 1-D launch and N > 0");
          v.global = {(n + l - 1) / l * l};
          continue;
        }
        const size_t arrow = sub.find("=>");
        if (arrow == std::string::npos) throw Error("variant '" + variants[k] + "': '" + sub + "' has no '=>'");
        s.code = replace_all(s.code, sub.substr(0, arrow), sub.substr(arrow + 2));
      }
      if (s.code == kd.source.code && v.global == kd.global)
        throw Error("variant '" + variants[k] + "' changes nothing in the kernel source or its launch");
      s.entry = kd.source.entry + "_v" + std::to_string(k + 1);
      s.code = replace_all(s.code, kd.source.entry, s.entry);
      v.source = s;
      kernels_data.push_back(v);
      labels.push_back(variants[k]);
    }
    size_t plain_at = 0;
    if (vs_plain) {
      if (params.empty() && compensation.empty())
        throw Error("--vs-plain compares with the kernel --param or --compensation fuses: give one");
      Conversion plain;
      plain.padding = conversion.padding;
      plain_at = kernels_data.size();
      kernels_data.push_back(plan_reorder(engine.info(), src, dst, impl, plain));
      labels.push_back("plain conversion (" + kernels_data.back().impl + ")");
    }
    for (const std::string& other : others) {
      kernels_data.push_back(plan_reorder(engine.info(), src, dst, other, conversion));
      labels.push_back("implementation " + other);
    }
    // A variant that plans the same kernel and launch as variant 0 would time nothing: refused by name.
    auto add_planned = [&](const KernelData& v, const std::string& what, const std::string& label) {
      if (v.source.code == kd.source.code && v.global == kd.global && v.local == kd.local)
        throw Error(what + " changes nothing in the kernel source or its launch");
      kernels_data.push_back(v);
      labels.push_back(label);
    };
    for (const std::string& env : envs) {
      const size_t eq = env.find('=');
      if (eq == std::string::npos || eq == 0) throw Error("--env '" + env + "' is not VAR=VALUE");
      const std::string var = env.substr(0, eq);
      const char* old = std::getenv(var.c_str());
      const std::string saved = old ? old : "";
      setenv(var.c_str(), env.substr(eq + 1).c_str(), 1);
      KernelData v = plan_reorder(engine.info(), src, dst, impl, conversion);
      if (old) setenv(var.c_str(), saved.c_str(), 1);
      else unsetenv(var.c_str());
      add_planned(v, "--env '" + env + "'", "with " + env);
    }
    for (uint64_t bytes : caches) {
      DeviceInfo device = engine.info();
      device.cache_bytes = bytes;
      device.compute_units = 0;  // the quarter of BYTES alone decides (stream_threshold())
      const KernelData v = plan_reorder(device, src, dst, impl, conversion);
      add_planned(v, "--cache " + std::to_string(bytes),
                  "planned for a cache of " + std::to_string(bytes) + " bytes" + (v.streams ? " (streams)" : " (does not stream)"));
    }
    for (const std::string& opt : options) {
      KernelData v = kd;
      v.source.options += " " + opt;
      kernels_data.push_back(v);
      labels.push_back("built with " + opt);
    }
    clreorder_perf::KernelTiming timing;
    timing.runs = runs;
    timing.warm = warm;
    timing.consumer = consumer;
    timing.random_bits = random_bits;
    timing.copy = vs_copy;
    // Every kernel but the plain conversion (--vs-plain's, which drops the sums too) writes the sums.
    const std::array<cl::Buffer, kParams> values = upload_param_values(engine.context(), conversion);
    for (size_t k = 0; k < kernels_data.size(); ++k) {
      timing.sums.push_back(vs_plain && k == plain_at ? Compensation{} : conversion.compensation);
      timing.values.push_back(vs_plain && k == plain_at ? std::array<cl::Buffer, kParams>{} : values);
    }
    if (vs_copy) labels.push_back("copy kernel of the destination's " + std::to_string(dst.bytes()) + " bytes (as the benchmarks')");
    const std::vector<std::vector<double>> ms = clreorder_perf::interleaved_kernel_ms(engine, src, dst, kernels_data, timing);
    std::printf("%s -> %s, impl %s, %d interleaved runs each (event %s time, %s caches)\n", src.describe().c_str(),
                dst.describe().c_str(), kd.impl.c_str(), runs, consumer ? "kernel and consumer copy" : "kernel",
                warm ? "warm" : "cold");
    for (size_t k = 0; k < ms.size(); ++k) {
      const double med = ms[k][ms[k].size() / 2], base = ms[0][ms[0].size() / 2];
      std::printf("variant %zu: median %.4f ms, p10 %.4f ms, %.2fx variant 0  %s\n", k, med, ms[k][ms[k].size() / 10],
                  med / base, labels[k].c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "clreorder_ab: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
