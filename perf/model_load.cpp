// How soon a new process has its reorders' results: the first reorder after device set-up, and a model load
// of 50 weight reorders (distinct shapes, oiyx -> os_is_yx_isv16_osv16), batched with prepare() or one by
// one. Run in a fresh process per measurement by perf/model_load.sh, with the caches cold or warm.
//   clreorder_model_load first|batched|one-by-one [background|wait|agnostic] [--settle]
// The policy (default background, the library's) applies to the reorders; `batched` compiles first anyway.
// --settle: after measuring, wait for the background compiles and stores, as a runtime that keeps running
// would (perf/model_load.sh warms the caches so).
// Prints one JSON line: the mode, milliseconds from the end of device set-up to the last result on the host,
// how many programs were compiled (by then, background compiles included) and loaded from the kernel cache,
// the time spent loading or compiling them (all threads), and how many results the shape-agnostic kernel made.
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "clreorder/error.hpp"
#include "clreorder/format.hpp"
#include "clreorder/reference.hpp"
#include "clreorder/reorder.hpp"
#include "../tools/pocl_affinity.hpp"

using namespace clreorder;

namespace {

// 50 distinct convolution weight shapes, 1x1 and 3x3, 16 to 512 channels.
std::vector<std::pair<Layout, Layout>> model() {
  std::vector<std::pair<Layout, Layout>> pairs;
  const Format from = format_from_name("oiyx"), to = format_from_name("os_is_yx_isv16_osv16");
  for (int k = 0; k < 50; ++k) {
    const int64_t o = 16 * (1 + k % 8) * (1 + k / 25), i = 16 * (1 + (k * 3) % 7), ks = k % 2 ? 3 : 1;
    pairs.emplace_back(Layout(from, DataType::f32, {o, i, ks, ks}), Layout(to, DataType::f32, {o, i, ks, ks}));
  }
  return pairs;
}

}  // namespace

int main(int argc, char** argv) {
  clreorder_tools::pin_pocl_workers();  // before any OpenCL call (tools/pocl_affinity.hpp says why)
  std::string mode, policy = "background";
  bool settle = false;
  const std::map<std::string, CompilePolicy> policies = {
      {"background", CompilePolicy::background}, {"wait", CompilePolicy::wait}, {"agnostic", CompilePolicy::agnostic}};
  CLI::App app("clreorder_model_load: a new process's time to its reorders' results (one JSON line)",
               "clreorder_model_load");
  app.add_option("mode", mode, "first, batched or one-by-one")->required()->check(CLI::IsMember({"first", "batched", "one-by-one"}));
  app.add_option("policy", policy, "background (default), wait or agnostic")->capture_default_str()
      ->check(CLI::IsMember(policies));
  app.add_flag("--settle", settle, "afterwards, wait for the background compiles and stores");
  CLI11_PARSE(app, argc, argv);
  try {
    const Engine engine = Engine::open().with_policy(policies.at(policy));
    std::vector<std::pair<Layout, Layout>> pairs;
    if (mode == "first") {
      const Format from = format_from_name("bfyx"), to = format_from_name("b_fs_yx_fsv16");
      pairs.emplace_back(Layout(from, DataType::f32, {1, 64, 56, 56}), Layout(to, DataType::f32, {1, 64, 56, 56}));
    } else {
      pairs = model();
    }
    std::vector<std::vector<uint8_t>> sources;
    for (const auto& p : pairs) sources.push_back(make_pattern(p.first));
    const auto t0 = std::chrono::steady_clock::now();
    if (mode == "batched") prepare(engine, pairs);
    size_t bytes = 0, agnostic_runs = 0;
    for (size_t k = 0; k < pairs.size(); ++k) {
      ReorderResult r;
      bytes += reorder(engine, sources[k], pairs[k].first, pairs[k].second, {}, &r).size();
      agnostic_runs += r.impl == "agnostic";
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const CacheStats s = ProgramCache::instance().stats();
    const nlohmann::ordered_json line = {
        {"mode", mode}, {"policy", policy}, {"reorders", pairs.size()}, {"ms", ms},
        {"programs_compiled", s.programs_built}, {"programs_loaded", s.programs_loaded}, {"compile_ms", s.compile_ms},
        {"agnostic_runs", agnostic_runs}, {"bytes", bytes}};
    std::printf("%s\n", line.dump().c_str());
    if (settle) wait_for_background_compiles();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "clreorder_model_load: %s\n", e.what());
    return 2;
  }
  return 0;
}
