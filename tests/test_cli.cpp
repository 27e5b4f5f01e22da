// The CLI binary on malformed arguments: each exits with status 2 and prints one line naming the offending
// value, and a `run` given --output leaves no file behind. The binary runs as a subprocess (its path comes
// from CMake), so exit statuses, streams and files are what a user sees.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "clreorder/format.hpp"
#include "clreorder/runtime.hpp"
#include "clreorder/version.h"
#include "test_support.hpp"

namespace {

using Json = nlohmann::json;

struct Result {
  int status = -1;
  std::string out, err;
};

std::string quote(const std::string& a) {
  std::string q = "'";
  for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

using clreorder_test::slurp;

std::string temp_dir() {
  static const clreorder_test::TempDir made("clreorder-cli-test");
  return made.path().empty() ? "/tmp" : made.path();
}

// Runs the CLI with `args` (and `env`, "VAR=value" words) in a shell, capturing both streams.
Result run(const std::vector<std::string>& args, const std::string& env = "") {
  const std::string out = temp_dir() + "/stdout", err = temp_dir() + "/stderr";
  std::string cmd = (env.empty() ? "" : "env " + env + " ") + quote(CLREORDER_CLI_PATH);
  for (const std::string& a : args) cmd += " " + quote(a);
  cmd += " >" + out + " 2>" + err + " </dev/null";
  const int rc = std::system(cmd.c_str());
  return Result{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(out), slurp(err)};
}

// Lines of stderr that are ours: an OpenCL compiler may add its own ("N warnings generated.").
std::vector<std::string> our_lines(const std::string& err) {
  std::vector<std::string> out;
  std::stringstream s(err);
  for (std::string line; std::getline(s, line);)
    if (line.find("warnings generated") == std::string::npos && line.find("warning generated") == std::string::npos)
      out.push_back(line);
  return out;
}

struct Bad {
  std::vector<std::string> args;
  std::string says;  // expected in the one error line
  std::string env = "";
};

}  // namespace

TEST(Cli, EveryMalformedArgumentIsNamedOnOneLineAndWritesNothing) {
  REQUIRE_DEVICE(e);  // some messages name the device's limits
  const std::string dir = temp_dir(), small = dir + "/three_bytes", sub = dir + "/a_directory";
  std::ofstream(small) << "abc";
  mkdir(sub.c_str(), 0755);
  const std::vector<std::string> pair = {"--from", "bfyx", "--to", "byxf", "--shape", "1,2,3,4"};
  auto run_with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = {"run"};
    a.insert(a.end(), pair.begin(), pair.end());
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const std::vector<Bad> bad = {
      {{"explain", "b_fs_yx_fsq16", "--shape", "1,2,3,4"}, "bad format name 'b_fs_yx_fsq16': unknown part 'fsq16'"},
      {{"explain", "b_fs_yx_fsv65536_fsv65536_fsv65536_fsv65536", "--shape", "1,1,1,1"}, "multiply to more than 2^31"},
      {{"explain", "os_iyx_osv16__ao999999999__ao999999999", "--shape", "1,1,1,1"}, "'__ao999999999'"},
      {{"explain", "os_iyx_osv16_swizzled_by_3", "--shape", "1,1,1,1"}, "swizzle factor 3 does not divide"},
      {{"explain", "bfyx", "--shape", "1,2,3,4", "--at", "9,9,9,9"}, "coordinate 9,9,9,9 is outside shape 1,2,3,4"},
      {{"explain", "bfyx", "--shape", "1,2,3,4", "--limit", "x"}, "--limit 'x'"},
      {{"explain", "bfyx", "--shape", "1,2,3,4", "--limit", "99999999"}, "--limit '99999999'"},
      {{"explain", "--shape", "1,2,3,4"}, "explain takes one FORMAT"},
      {{"explain", "bfyx", "byxf", "--shape", "1,2,3,4"}, "not expected: byxf"},
      {{"explain", "winograd_2x3_s1_data", "--shape", "1,2,3,4"}, "format 'winograd_2x3_s1_data' is not supported"},
      {{"explain", "bfyx", "--shape", "1,2,3,4", "--svg", dir + "/p.svg", "--color-by", "q"},
       "--color-by 'q' is not an axis of bfyx (its axes: bfyx)"},
      {{"explain", "oiyx", "--shape", "1,2,3,4", "--svg", dir + "/p.svg", "--color-by", "fy"}, "--color-by 'fy'"},
      {{"explain", "bfyx", "--shape", "1,2,3,4", "--color-by", "f"}, "give --svg FILE too"},
      {{"explain", "bfyx", "--shape", "1,2,3,4", "--svg", dir + "/p.svg", "--columns", "0"}, "--columns '0'"},
      {{"explain", "bfyx", "--shape", "1,2,3,4", "--svg", sub}, "--svg '" + sub + "' is a directory"},
      {{"explain", "bfyx", "--shape", "1,2,3,4", "--svg", dir + "/missing/p.svg"}, "cannot write --svg file '" + dir + "/missing/p.svg'"},
      {{"explain", "bfyx", "--shape", "1,2,3,4", "--svg", "/dev/full"}, "cannot write --svg file '/dev/full'"},
      {run_with({"--policy", "later"}), "--policy 'later': expected wait, background or agnostic"},
      {{"cache"}, "cache takes 'info' or 'clear'"},
      {{"cache", "purge"}, "cache takes 'info' or 'clear'"},
      {{"cache", "info", "extra"}, "not expected: extra"},
      {{"cache", "clear", "--json"}, "--json goes with cache info"},
      {{"precompile"}, "precompile takes one FILE"},
      {{"precompile", dir + "/missing"}, "cannot read precompile file '" + dir + "/missing'"},
      {{"precompile", small}, small + ":1: --from is required"},
      {{"precompile", sub}, "precompile file '" + sub + "' is a directory"},
      {{"frobnicate"}, "unknown command 'frobnicate'"},
      {{"devices", "--jsn"}, "not expected: --jsn"},
      {{"run", "--from", "bfyx", "--to", "byxf", "--shape", "2,3,4"}, "shape 2,3,4 has 3 dims but format bfyx has rank 4"},
      {{"run", "--from", "bfyx", "--to", "byxf", "--shape", "1,2,,4"}, "part '' is not a non-negative integer"},
      {{"run", "--from", "bfyx", "--to", "byxf", "--shape", "1,2,3,9999999999999999"}, "part '9999999999999999'"},
      {{"run", "--from", "bfyx", "--to", "byxf", "--shape", "2,0,4,5"}, "dim 1 (f) is 0"},
      {{"run", "--from", "bfyx", "--to", "byxf", "--shape", "4096,4096,256,256"}, "over the largest buffer device"},
      {{"run", "--from", "goiyx", "--to", "bfyx", "--shape", "1,2,3,4"}, "shape 1,2,3,4 has 4 dims but format goiyx"},
      {{"run", "--from", "goiyx", "--to", "bfzyx", "--shape", "1,2,3,4,5"}, "cannot reorder goiyx"},
      {{"run", "--from", "bfyx", "--to", "byxf"}, "--shape is required"},
      {{"run", "--to", "byxf", "--shape", "1,2,3,4"}, "--from is required"},
      {{"run", "--from", "bfyx", "--to", "byxf", "--shape"}, "--shape: needs a value, not the option '--output'"},
      {{"run", "--from", "bfyx", "--to", "byxf", "--shape", "--check"}, "--shape: needs a value, not the option '--check'"},
      {{"run", "--from", "bfyx", "--to", "byxf", "--output", dir + "/o.bin", "--shape="}, "--shape: 1 required D0,D1,.. missing"},
      {{"explain", "bfyx", "--shape", "1,2,3,4", "--json", "--svg", dir + "/p.svg"}, "--json and --svg: give one of them"},
      {run_with({"--shape", "1,2,3,4"}), "--shape: At Most 1 required but received 2"},
      {run_with({"--shpe", "1,2,3,4"}), "were not expected: 1,2,3,4 --shpe"},
      {run_with({"extra"}), "not expected: extra"},
      {run_with({"--dtype", "f128"}), "unknown data type 'f128'"},
      {run_with({"--to-dtype", "bf17"}), "unknown data type 'bf17'"},
      {run_with({"--round", "up"}), "unknown rounding 'up' (expected nearest-even or toward-zero)"},
      {run_with({"--padding", "ones"}), "unknown padding policy 'ones' (expected zero or keep)"},
      {run_with({"--overflow", "clip"}), "unknown overflow mode 'clip' (expected saturate or wrap)"},
      {run_with({"--src-scale", "0.5,x"}), "--src-scale '0.5,x': 'x' is not a finite f32 number"},
      {run_with({"--div", "1e39"}), "--div '1e39': '1e39' is not a finite f32 number"},
      {run_with({"--dst-scale", "0.5,2"}), "--dst-scale lists 2 values: name the axis they index with --quant-axis"},
      {run_with({"--dst-scale", "0.5,2", "--quant-axis", "q"}), "--quant-axis 'q' is not an axis of"},
      {run_with({"--quant-axis", "f"}), "--quant-axis 'f' without a list of scales or zero points"},
      {run_with({"--sub", "1,2,3"}), "sub of byxf f32 1x2x3x4: 3 values on axis f of extent 2"},
      {run_with({"--dst-zero-point", "1.5"}), "is not an integer (zero points are)"},
      {run_with({"--div", "0"}), "divides by zero"},
      {run_with({"--dst-strides", "0,1,0,0"}), "strides 0,1,0,0 repeat elements"},
      {run_with({"--src-strides", "1,2"}), "strides 1,2 must have 4 values"},
      {run_with({"--src-offset", "-1"}), "--src-offset '-1'"},
      {run_with({"--to-shape", "2,2,3,4"}), "hold 24 and 48 elements"},
      {{"run", "--from", "bfyx", "--to", "tpu_aligned(npus=4,npu_bytes=1024,addr=100)", "--shape", "1,2,3,4"},
       "addr=100 is not divisible by 128"},
      {{"run", "--from", "aBcd16e", "--to", "byxf", "--shape", "1,2,3,4"}, "bad oneDNN format tag 'aBcd16e'"},
      {run_with({"--dtype", ""}), "--dtype: empty value"},
      {run_with({"--src-pad-lower", "-1,0,0,0"}), "part '-1' is not a non-negative integer"},
      {run_with({"--dst-pad-upper", "0,1"}), "must have 4 values"},
      {run_with({"--dst-pad-upper", "0,999999999999999,0,0"}), "with padding lower 0,0,0,0 upper 0,999999999999999,0,0"},
      {run_with({"--dst-pad-upper", "0,99999999999999,99999999999999,0"}), "upper 0,99999999999999,99999999999999,0"},
      {run_with({"--impl", ""}), "--impl: empty value"},
      {run_with({"--impl", "nope"}), "--impl 'nope' names no implementation"},
      {run_with({"--impl", "lanes"}), "implementation 'lanes' declines"},
      {run_with({"--device", "no-such-device"}), "'no-such-device' matches no OpenCL device"},
      {run_with({"--device", "999"}), "'999' matches no OpenCL device"},
      {run_with({"--input", "/dev/zero"}), "--input file '/dev/zero' holds more than the 96 bytes"},
      {run_with({"--input", sub}), "--input '" + sub + "' is a directory"},
      {run_with({"--input", dir + "/missing"}), "cannot read --input file '" + dir + "/missing'"},
      {run_with({"--input", small}), "--input file '" + small + "' holds 3 bytes but"},
      {run_with({"--output", "/dev/full"}), "cannot write --output file '/dev/full'"},
      {run_with({"--output", dir + "/missing/out.bin"}), "cannot write --output file '" + dir + "/missing/out.bin'"},
      {run_with({"--output", sub}), "--output '" + sub + "' is a directory"},
      {run_with({}), "CLREORDER_INDEX_BITS='13'", "CLREORDER_INDEX_BITS=13"},
      {run_with({}), "CLREORDER_TUNING='fast'", "CLREORDER_TUNING=fast"},
      {run_with({}), "CLREORDER_BUILD_OPTIONS='-O3'", "CLREORDER_BUILD_OPTIONS=-O3"},
      {run_with({}), "CLREORDER_BUILD_LOG='yes'", "CLREORDER_BUILD_LOG=yes"},
      {run_with({}), "unknown reorder implementation 'nope'", "CLREORDER_FORCE_IMPL=nope"},
      {run_with({}), "CLREORDER_DEVICE 'nope' matches no OpenCL device", "CLREORDER_DEVICE=nope"},
      {{"bench", "--from", "bfyx", "--to", "byxf", "--shape", "1,2,3,4", "--runs", "0"}, "--runs '0'"},
      {{"bench", "--from", "bfyx", "--to", "byxf", "--shape", "1,2,3,4", "--runs", "99999999999999999999"},
       "--runs '99999999999999999999'"},
      {{"source", "--from", "bfyx", "--to", "b_fs_yx_fsv16", "--shape", "2,19,3,3", "--impl", "staged"},
       "implementation 'staged' declines"},
      // A device choice that matches nothing fails for source as for run, instead of a made-up device.
      {{"source", "--from", "bfyx", "--to", "byxf", "--shape", "1,2,3,4", "--device", "no-such-device"},
       "'no-such-device' matches no OpenCL device"},
      {{"source", "--from", "bfyx", "--to", "byxf", "--shape", "1,2,3,4"}, "CLREORDER_DEVICE 'nope' matches no OpenCL device",
       "CLREORDER_DEVICE=nope"},
  };
  int n = 0;
  for (const Bad& b : bad) {
    std::vector<std::string> args = b.args;
    // Every run also names an output file: nothing may appear there.
    const std::string out = dir + "/out_" + std::to_string(n++) + ".bin";
    const bool has_output = std::find(args.begin(), args.end(), "--output") != args.end();
    if (args.front() == "run" && !has_output) args.insert(args.end(), {"--output", out});
    const Result r = run(args, b.env);
    std::string cmd;
    for (const std::string& a : args) cmd += " " + a;
    EXPECT_EQ(r.status, 2) << cmd << "\n" << r.err;
    const std::vector<std::string> lines = our_lines(r.err);
    ASSERT_EQ(lines.size(), 1u) << cmd << "\n" << r.err;
    EXPECT_EQ(lines[0].rfind("clreorder: error: ", 0), 0u) << cmd << ": " << lines[0];
    EXPECT_NE(lines[0].find(b.says), std::string::npos) << cmd << ": expected '" << b.says << "' in: " << lines[0];
    struct stat st;
    EXPECT_NE(stat(out.c_str(), &st), 0) << cmd << ": wrote " << out;
  }
  std::printf("cli: %zu malformed invocations\n", bad.size());
  struct stat st;
  EXPECT_NE(stat((dir + "/p.svg").c_str(), &st), 0) << "a refused explain --svg wrote its picture";
  // An unwritable --output is reported before any device work: no kernel ran (no "impl:" line).
  const Result early = run(run_with({"--output", dir + "/missing/out.bin", "--check"}));
  EXPECT_EQ(early.status, 2);
  EXPECT_EQ(early.out.find("impl:"), std::string::npos) << early.out;
  EXPECT_EQ(early.out.find("device:"), std::string::npos) << early.out;
  // An existing --output file keeps its bytes when the run fails.
  const std::string keep = dir + "/keep.bin";
  std::ofstream(keep) << "kept";
  EXPECT_EQ(run(run_with({"--impl", "lanes", "--output", keep})).status, 2);
  EXPECT_EQ(slurp(keep), "kept");
}

// The same invocations that must fail, done right, succeed; so the failures above are about the value named.
TEST(Cli, WellFormedInvocationsSucceed) {
  REQUIRE_DEVICE(e);
  const std::string dir = temp_dir(), out = dir + "/good.bin", in = dir + "/input.bin";
  Result r = run({"run", "--from", "bfyx", "--to", "byxf", "--shape", "1,2,3,4", "--output", out, "--check"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("check: OK"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(out).size(), 96u);
  std::ofstream(in, std::ios::binary) << std::string(96, '\x01');
  r = run({"run", "--from", "bfyx", "--to", "byxf", "--shape", "1,2,3,4", "--input", in, "--check"});
  EXPECT_EQ(r.status, 0) << r.err;
  r = run({"explain", "bfyx", "--shape", "1,2,3,4", "--limit", "3"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("... 21 more"), std::string::npos) << r.out;
  // The version, from project() in CMakeLists.txt through version.h and the library.
  r = run({"--version"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, std::string("clreorder ") + CLREORDER_VERSION_STRING + "\n");
  EXPECT_EQ(std::string(clreorder::version()), CLREORDER_VERSION_STRING);
  EXPECT_EQ(std::string(clreorder::version()), std::to_string(CLREORDER_VERSION_MAJOR) + "." + std::to_string(CLREORDER_VERSION_MINOR) +
                                        "." + std::to_string(CLREORDER_VERSION_PATCH));
  // The kernel cache: precompile a model's reorders into an empty directory, then a run loads its kernel.
  const std::string cache = dir + "/kernel-cache", model = dir + "/model.txt", env = "CLREORDER_CACHE_DIR=" + cache;
  std::ofstream(model) << "# two reorders of a model\n--from oiyx --to os_is_yx_isv16_osv16 --shape 20,18,3,3\n\n"
                          "--from bfyx --to b_fs_yx_fsv16 --shape 1,19,5,5 --dtype f16 --impl generic  # forced\n";
  r = run({"precompile", model}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("precompiled 2 reorders"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kept in " + cache), std::string::npos) << r.out;
  r = run({"cache", "info", "--json"}, env);
  EXPECT_EQ(Json::parse(r.out)["programs"], 2) << r.out;
  EXPECT_EQ(Json::parse(r.out)["indexes"], 2) << r.out;
  r = run({"run", "--from", "oiyx", "--to", "os_is_yx_isv16_osv16", "--shape", "20,18,3,3", "--check", "--verbose"}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("cache: loaded from the kernel cache " + cache), std::string::npos) << r.out;
  // --verbose: the caches' counts after the run, on stderr.
  EXPECT_NE(r.err.find("kernel cache, memory: 0 programs compiled, 1 loaded from disk"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kernel cache, disk (" + cache + "): 1 hits, 0 misses, 0 rejected, 0 stored, 0 write failures"),
            std::string::npos)
      << r.err;
  r = run({"cache", "clear"}, env);
  EXPECT_NE(r.out.find("removed 4 files from " + cache), std::string::npos) << r.out;
  // The binary of a kernel compiled for the first result is written off that result's path, at the latest when
  // the run's engine is released, so the directory holds it after the process.
  r = run({"run", "--from", "oiyx", "--to", "os_is_yx_isv16_osv16", "--shape", "20,18,3,3"}, env);
  EXPECT_TRUE(r.out.find("cache: compiled, stored in " + cache) != std::string::npos ||
              r.out.find("cache: compiled, to be stored in " + cache) != std::string::npos)
      << r.out;
  r = run({"cache", "info", "--json"}, env);
  EXPECT_GT(Json::parse(r.out)["programs"].get<int>(), 0) << r.out;
  r = run({"cache", "info"}, "CLREORDER_CACHE_DIR=off");
  EXPECT_NE(r.out.find("kernel cache: off"), std::string::npos) << r.out;
}

// Every command has --help; options take --key=value; the --json outputs parse and carry typed fields.
TEST(Cli, HelpEverywhereKeyEqualsValueAndTypedJson) {
  for (const char* cmd : {"devices", "formats", "explain", "run", "bench", "source", "precompile", "cache", "demo",
                          "version", "help"}) {
    const Result r = run({cmd, "--help"});
    EXPECT_EQ(r.status, 0) << cmd << ": " << r.err;
    EXPECT_NE(r.out.find(std::string("Usage: clreorder ") + cmd), std::string::npos) << r.out;
  }
  Result r = run({"--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* cmd : {"devices", "formats", "explain", "run", "bench", "source", "precompile", "cache", "demo"})
    EXPECT_NE(r.out.find(std::string("\n  ") + cmd + " "), std::string::npos) << cmd << " missing from:\n" << r.out;

  // formats: every registry row, aliases as arrays, blocks as data, null where a field has no value.
  r = run({"formats", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json formats = Json::parse(r.out);
  ASSERT_EQ(formats.size(), clreorder::registry().size());
  bool blocked_seen = false, unsupported_seen = false;
  for (const Json& f : formats) {
    ASSERT_TRUE(f["aliases"].is_array()) << f.dump();
    if (f["name"] == "b_fs_yx_fsv16") {
      blocked_seen = true;
      EXPECT_EQ(f["rank"], 4);
      EXPECT_EQ(f["blocks"], Json::parse(R"([{"axes": "f", "size": 16}])"));
      EXPECT_NE(std::find(f["aliases"].begin(), f["aliases"].end(), "nChw16c"), f["aliases"].end()) << f.dump();
    }
    if (f["supported"] == false) {
      unsupported_seen = true;
      EXPECT_TRUE(f["kind"].is_null() && f["rank"].is_null() && f["reason"].is_string()) << f.dump();
    }
  }
  EXPECT_TRUE(blocked_seen && unsupported_seen);
  // The text listing names the aliases too.
  r = run({"formats"});
  EXPECT_NE(r.out.find("aka nChw16c"), std::string::npos);

  // explain: the layout, its first slots and the count left; one coordinate's offset.
  r = run({"explain", "b_fs_yx_fsv16", "--shape=1,3,1,2", "--limit=3", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json e = Json::parse(r.out);
  EXPECT_EQ(e["shape"], Json::parse("[1, 3, 1, 2]"));
  EXPECT_EQ(e["elements"], 32);
  EXPECT_EQ(e["slots"].size(), 3u);
  EXPECT_EQ(e["slots"][1]["coord"], Json::parse("[0, 1, 0, 0]"));
  EXPECT_EQ(e["more_slots"], 29);
  EXPECT_TRUE(e["strides"].is_null());
  r = run({"explain", "bfyx", "--shape", "1,2,3,4", "--at", "0,1,0,0", "--json"});
  EXPECT_EQ(Json::parse(r.out)["at"]["offset"], 12) << r.out;
  EXPECT_TRUE(Json::parse(r.out)["at"]["npu"].is_null()) << r.out;

  // Strings with characters JSON must escape come back intact (the cache directory is the user's).
  const std::string weird = temp_dir() + "/a \"quoted\\ dir\ttab";
  r = run({"cache", "info", "--json"}, quote("CLREORDER_CACHE_DIR=" + weird));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["directory"], weird) << r.out;
}

TEST(Cli, JsonOfDeviceCommands) {
  REQUIRE_DEVICE(dev);
  Result r = run({"devices", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json devs = Json::parse(r.out);
  ASSERT_FALSE(devs.empty());
  int defaults = 0;
  for (const Json& d : devs) {
    EXPECT_TRUE(d["index"].is_number_integer() && d["fp16"].is_boolean() && d["max_alloc_bytes"].is_number()) << d.dump();
    defaults += d["default"] == true;
  }
  EXPECT_EQ(defaults, 1);
  r = run({"run", "--from=oiyx", "--to=os_is_yx_isv16_osv16", "--shape=20,18,3,3", "--dtype=f16", "--check", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json run_json = Json::parse(r.out);
  EXPECT_EQ(run_json["check"], true);
  EXPECT_EQ(run_json["mismatched_bytes"], 0);
  EXPECT_EQ(run_json["from"]["shape"], Json::parse("[20, 18, 3, 3]"));
  EXPECT_EQ(run_json["to"]["dtype"], "f16");
  EXPECT_TRUE(run_json["ready_ms"].is_number() && run_json["impl"].is_string() && run_json["output_bytes"].is_null());
  r = run({"run", "--from", "bfyx", "--to", "byxf", "--shape", "1,2,3,4", "--json"});
  EXPECT_TRUE(Json::parse(r.out)["check"].is_null()) << r.out;
  r = run({"bench", "--from", "bfyx", "--to", "b_fs_yx_fsv16", "--shape", "2,19,5,7", "--runs=2", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json bench = Json::parse(r.out);
  EXPECT_EQ(bench["shape"], Json::parse("[2, 19, 5, 7]"));
  EXPECT_EQ(bench["runs"], 2);
  EXPECT_GT(bench["ratio"].get<double>(), 0.0);
  // A batch file: one launch, every item checked; the layout options go in the file's lines.
  const clreorder_test::TempDir batch_dir("clreorder-cli-batch");
  const std::string list = batch_dir.path() + "/model.txt";
  std::ofstream(list) << "# two weights and a depthwise one\n--from oiyx --to os_is_yx_isv16_osv16 --shape 20,18,3,3\n"
                         "--from oiyx --to os_iyx_osv16 --shape 17,5,1,1 --dtype f16\n"
                         "--from goiyx --to gs_oiyx_gsv16 --shape 19,1,1,3,3 --dtype i8\n";
  r = run({"bench", "--batch", list, "--runs=2", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json batch = Json::parse(r.out);
  EXPECT_EQ(batch["reorders"], 3);
  EXPECT_EQ(batch["launches"], 1);
  EXPECT_EQ(batch["exact"], true);
  EXPECT_EQ(batch["impls"].size(), 3u);
  EXPECT_GT(batch["speedup"].get<double>(), 0.0);
  // At most two items per launch: two launches, each item still exact; the bound refused outside 1..64 and
  // without a list.
  r = run({"bench", "--batch", list, "--runs=1", "--json", "--launch-items", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["launches"], 2);
  EXPECT_EQ(Json::parse(r.out)["exact"], true);
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"bench", "--batch", list, "--launch-items", "0"}, "--launch-items '0': expected a whole number from 1 to 64"},
           {{"bench", "--batch", list, "--launch-items", "65"}, "--launch-items '65': expected a whole number from 1 to 64"},
           {{"bench", "--from", "bfyx", "--to", "byxf", "--shape", "1,2,3,4", "--launch-items", "2"},
            "--launch-items splits a --batch list's launches: give --batch FILE"}}) {
    r = run(args);
    EXPECT_EQ(r.status, 2) << message;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  r = run({"bench", "--batch", list, "--shape", "1,2,3,4"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--shape goes in the --batch file's lines"), std::string::npos) << r.err;
  // One conversion for the whole batch, on the command line: checked against the host reference under it.
  r = run({"bench", "--batch", list, "--runs=1", "--json", "--round", "toward-zero", "--overflow", "wrap"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["exact"], true);
  const std::string per_line = batch_dir.path() + "/modes.txt";
  std::ofstream(per_line) << "--from oiyx --to os_iyx_osv16 --shape 17,5,1,1 --to-dtype i8 --overflow wrap\n";
  r = run({"bench", "--batch", per_line});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("a conversion option (--round, --padding, --sub ...) in a batch file"), std::string::npos) << r.err;
  // run: the mode is printed and the check uses it.
  r = run({"run", "--from", "bfyx", "--to", "b_fs_yx_fsv16", "--shape", "2,19,5,7", "--to-dtype", "i8", "--round",
           "toward-zero", "--overflow", "wrap", "--check"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("conversion: round=toward-zero,overflow=wrap"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("check: OK"), std::string::npos) << r.out;
  r = run({"bench", "--from", "bfyx", "--to", "byxf"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("bench needs --from, --to and --shape (or --batch FILE)"), std::string::npos) << r.err;
  // Fused beside plain, launch by launch: both timed, their ratio the fused one's over the plain one's.
  r = run({"bench", "--from", "bfyx", "--to", "b_fs_yx_fsv16", "--shape", "2,19,5,7", "--to-dtype", "i8", "--dst-scale", "0.5",
           "--runs=3", "--beside-plain", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json beside = Json::parse(r.out);
  EXPECT_GT(beside["plain"]["ratio"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(beside["fused_over_plain"].get<double>(), beside["ratio"].get<double>() / beside["plain"]["ratio"].get<double>());
  EXPECT_EQ(beside["plain"]["runs"], 3);
  r = run({"bench", "--from", "bfyx", "--to", "byxf", "--shape", "1,2,3,4", "--round", "toward-zero", "--beside-plain"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--beside-plain compares fused arithmetic or --compensation with the plain conversion"), std::string::npos) << r.err;
  r = run({"bench", "--batch", list, "--beside-plain"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--beside-plain times one reorder, not a --batch list"), std::string::npos) << r.err;
  // Every implementation that accepts, side by side: each ran as forced, one of them the selector's choice,
  // the fastest the one of the highest ratio. generic and the shape-agnostic kernel accept every pair.
  r = run({"bench", "--from", "bfyx", "--to", "b_fs_yx_fsv16", "--shape", "2,19,5,7", "--to-dtype", "f16", "--runs=2",
           "--every-impl", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json every = Json::parse(r.out);
  std::set<std::string> timed;
  int chosen = 0;
  double best = 0;
  for (const Json& one : every["impls"]) {
    timed.insert(one["impl"].get<std::string>());
    chosen += one["chosen"].get<bool>();
    if (one["chosen"].get<bool>()) {
      EXPECT_EQ(one["impl"], every["chosen"]);
    }
    best = std::max(best, one["ratio"].get<double>());
    EXPECT_EQ(one["runs"], 2);
  }
  EXPECT_EQ(timed.size(), every["impls"].size()) << r.out;
  EXPECT_TRUE(timed.count("generic") && timed.count("agnostic") && timed.count("tiled")) << r.out;
  EXPECT_EQ(chosen, 1) << r.out;
  for (const Json& one : every["impls"]) {
    if (one["impl"] == every["fastest"]) {
      EXPECT_EQ(one["ratio"].get<double>(), best) << r.out;
    }
  }
  EXPECT_LE(every["chosen_over_fastest"].get<double>(), 1.0);
  r = run({"bench", "--from", "bfyx", "--to", "byxf", "--shape", "1,2,3,4", "--every-impl", "--runs=1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("(the selector's choice)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fastest: "), std::string::npos) << r.out;
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--impl", "tiled"}, "--every-impl times every implementation that accepts the reorder: drop --impl"},
           {{"--dst-scale", "0.5", "--beside-plain"}, "--every-impl and --beside-plain are two comparisons: give one"}}) {
    std::vector<std::string> cmd = {"bench", "--from", "bfyx", "--to", "byxf", "--shape", "1,2,3,4", "--every-impl"};
    cmd.insert(cmd.end(), args.begin(), args.end());
    r = run(cmd);
    EXPECT_EQ(r.status, 2) << message;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  r = run({"bench", "--batch", list, "--every-impl"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--every-impl and --keep time one reorder, not a --batch list"), std::string::npos) << r.err;
  // --keep: what it kept (the fastest, or the ranked choice within 10%) is the pair's choice in the kernel
  // cache the environment names, which source, run and cache info then show; refused without --every-impl.
  const std::string env = "CLREORDER_CACHE_DIR=" + temp_dir() + "/kept-cache";
  const std::vector<std::string> pair = {"--from", "bfyx", "--to", "yxfb", "--shape", "4,16,5,7", "--dtype", "f16"};
  auto with = [&](std::vector<std::string> head, const std::vector<std::string>& tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  r = run(with({"bench", "--every-impl", "--keep", "--runs=2", "--json"}, pair), env);
  ASSERT_EQ(r.status, 0) << r.err;
  const Json kept = Json::parse(r.out);
  EXPECT_TRUE(kept["kept"] == kept["fastest"] || kept["kept"] == kept["ranked"]) << r.out;
  EXPECT_EQ(kept["stored"], true) << r.out;
  r = run(with({"run", "--check"}, pair), env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("impl: " + kept["kept"].get<std::string>() + " "), std::string::npos) << r.out;
  r = run(with({"source"}, pair), env);
  EXPECT_NE(r.out.find("// selector: kept for this device (bench --every-impl --keep): " + kept["kept"].get<std::string>()),
            std::string::npos) << r.out;
  r = run({"cache", "info", "--json"}, env);
  EXPECT_EQ(Json::parse(r.out)["choices"], 1) << r.out;
  r = run(with({"bench", "--keep"}, pair), env);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--keep keeps the fastest of --every-impl: give --every-impl too"), std::string::npos) << r.err;
}

// Issue 16's fused arithmetic from the command line: OpenVINO's mean values on an image (per channel, on the
// feature axis), oneDNN's scales and zero points per output channel (--quant-axis), printed and checked.
TEST(Cli, FusedArithmeticOptions) {
  Result r = run({"run", "--from", "byxf", "--to", "b_fs_yx_fsv16", "--shape", "1,3,4,5", "--dtype", "u8", "--to-dtype",
                  "f16", "--sub", "123.7,116.3,103.5", "--div", "58.4,57.1,57.4", "--check", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["conversion"], "sub@1=0x1.eeccccp+6/0x1.d13334p+6/0x1.9ep+6,div@1=0x1.d33334p+5/0x1.c8ccccp+5/0x1.cb3334p+5");
  EXPECT_EQ(j["check"], true) << r.out;
  r = run({"run", "--from", "oiyx", "--to", "os_is_yx_isv16_osv16", "--shape", "3,17,3,3", "--to-dtype", "i8",
           "--dst-scale", "0.5,0.25,2", "--quant-axis", "o", "--dst-zero-point=-4", "--check"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("conversion: dst-scale@0=0x1p-1/0x1p-2/0x1p+1,dst-zero-point=-0x1p+2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("impl: tiled"), std::string::npos) << r.out;  // per index: tiled follows the o coordinate
  EXPECT_NE(r.out.find("check: OK"), std::string::npos) << r.out;
  // @FILE: raw f32 scales and raw i32 zero points, one per index; the same result as the lists.
  const clreorder_test::TempDir params_dir("clreorder-cli-params");
  const std::string& dir = params_dir.path();
  const float scales[3] = {0.5f, 0.25f, 2};
  const int32_t zero_points[3] = {-4, 7, 1 << 25};
  std::ofstream(dir + "/scales.f32", std::ios::binary).write(reinterpret_cast<const char*>(scales), sizeof scales);
  std::ofstream(dir + "/zp.i32", std::ios::binary).write(reinterpret_cast<const char*>(zero_points), 8);
  std::ofstream(dir + "/zp_far.i32", std::ios::binary).write(reinterpret_cast<const char*>(zero_points), sizeof zero_points);
  r = run({"run", "--from", "oiyx", "--to", "os_is_yx_isv16_osv16", "--shape", "3,17,3,3", "--to-dtype", "i8",
           "--dst-scale", "@" + dir + "/scales.f32", "--quant-axis", "o", "--dst-zero-point=-4", "--check"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("conversion: dst-scale@0=0x1p-1/0x1p-2/0x1p+1,dst-zero-point=-0x1p+2"), std::string::npos) << r.out;
  r = run({"run", "--from", "oiyx", "--to", "os_is_yx_isv16_osv16", "--shape", "2,17,3,3", "--to-dtype", "i8",
           "--src-zero-point", "@" + dir + "/zp.i32", "--quant-axis", "o", "--check"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("conversion: src-zero-point@0=-0x1p+2/0x1.cp+2"), std::string::npos) << r.out;
  r = run({"run", "--from", "oiyx", "--to", "os_is_yx_isv16_osv16", "--shape", "3,17,3,3", "--src-zero-point",
           "@" + dir + "/zp.i32", "--quant-axis", "o"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("holds 8 bytes but 3 i32 values (one per index of o) needs 12"), std::string::npos) << r.err;
  r = run({"run", "--from", "oiyx", "--to", "os_is_yx_isv16_osv16", "--shape", "3,17,3,3", "--src-zero-point",
           "@" + dir + "/zp_far.i32", "--quant-axis", "o"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("zero point 33554432 (index 2) is beyond 2^24"), std::string::npos) << r.err;
  r = run({"run", "--from", "oiyx", "--to", "oiyx", "--shape", "100000,1,1,1", "--dst-scale", "@/dev/zero", "--quant-axis", "o"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("holds more than the 400000 bytes 100000 f32 values (one per index of o) needs"), std::string::npos) << r.err;
  // Groups: 3 scales per o (i in groups of 4: 0-3, 4-7, 8-9), compiled in, or from a device buffer, which
  // the CLI also takes past the 8192 indexed values a kernel holds.
  std::vector<float> many(9000);
  for (size_t k = 0; k < many.size(); ++k) many[k] = 0.25f * static_cast<float>(k % 13 + 1);
  std::ofstream(dir + "/many.f32", std::ios::binary).write(reinterpret_cast<const char*>(many.data()), 4 * 9000);
  std::ofstream(dir + "/twelve.f32", std::ios::binary).write(reinterpret_cast<const char*>(many.data()), 4 * 12);
  const std::vector<std::string> grouped = {"run", "--from", "oiyx", "--to", "os_is_yx_osv16_isv4", "--shape", "4,10,1,1",
                                            "--to-dtype", "i8", "--quant-axis", "o,i", "--quant-group", "4", "--check", "--json"};
  auto with = [](std::vector<std::string> v, const std::vector<std::string>& more) {
    v.insert(v.end(), more.begin(), more.end());
    return v;
  };
  r = run(with(grouped, {"--dst-scale", "@" + dir + "/twelve.f32"}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["conversion"].get<std::string>().substr(0, 27), "dst-scale@0/1g4=0x1p-2/0x1p") << r.out;
  EXPECT_EQ(Json::parse(r.out)["check"], true) << r.out;
  r = run(with(grouped, {"--dst-scale", "@" + dir + "/twelve.f32", "--param-buffers", "--dst-zero-point", "3"}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["conversion"], "dst-scale@0/1g4=buffer,dst-zero-point=buffer") << r.out;
  EXPECT_EQ(Json::parse(r.out)["check"], true) << r.out;
  r = run({"run", "--from", "oiyx", "--to", "oiyx", "--shape", "9000,1,1,1", "--src-scale", "@" + dir + "/many.f32", "--quant-axis",
           "o", "--check", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["conversion"], "src-scale@0=buffer") << r.out;
  EXPECT_EQ(Json::parse(r.out)["check"], true) << r.out;
  r = run(with(grouped, {"--dst-scale", "@" + dir + "/scales.f32"}));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("holds 12 bytes but 12 f32 values (one per group of 4 of i, for each index of o) needs 48"), std::string::npos) << r.err;
  r = run({"run", "--from", "oiyx", "--to", "oiyx", "--shape", "4,10,1,1", "--dst-scale", "1", "--quant-group", "4"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--quant-group 4 without --quant-axis"), std::string::npos) << r.err;
  r = run({"run", "--from", "bfyx", "--to", "byxf", "--shape", "1,3,2,2", "--src-scale", "@" + dir + "/scales.f32"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--src-scale reads a file of values: name the axis they index with --quant-axis"), std::string::npos) << r.err;
  // A list on an axis of another extent is refused naming the counts, before any device work.
  r = run({"run", "--from", "bfyx", "--to", "byxf", "--shape", "1,4,2,2", "--mul", "1,2,3"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("mul of byxf f32 1x4x2x2: 3 values on axis f of extent 4"), std::string::npos) << r.err;
  // Compensation sums: the pattern 0..5 of oiyx 2x3x1x1 halved into i8 is 0 2 4 | 6 8 10, summed per o 6
  // and 24, on the screen, in the JSON and (raw i32) in the file; refused into floats, and a file without sums.
  r = run({"run", "--from", "oiyx", "--to", "oiyx", "--shape", "2,3,1,1", "--to-dtype", "i8", "--dst-scale", "0.5",
           "--compensation", "o", "--compensation-output", dir + "/sums.i32", "--check"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("compensation: 2 i32 sums: 6 24\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("check: OK, all 2 compensation sums match the host's"), std::string::npos) << r.out;
  int32_t sums[3] = {0, 0, -1};
  std::ifstream(dir + "/sums.i32", std::ios::binary).read(reinterpret_cast<char*>(sums), sizeof sums);
  EXPECT_TRUE(sums[0] == 6 && sums[1] == 24 && sums[2] == -1) << sums[0] << " " << sums[1] << " " << sums[2];
  r = run({"run", "--from", "goiyx", "--to", "gs_oiyx_gsv16", "--shape", "2,2,3,1,1", "--to-dtype", "u8", "--compensation", "g,o",
           "--check", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["compensation"], Json::parse("[3, 12, 21, 30]")) << r.out;
  EXPECT_EQ(Json::parse(r.out)["check"], true) << r.out;
  r = run({"run", "--from", "oiyx", "--to", "oiyx", "--shape", "2,3,1,1", "--compensation", "o"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("compensation of oiyx f32 2x3x1x1: the sums are of integer values, and f32 is not an integer type"),
            std::string::npos) << r.err;
  r = run({"run", "--from", "oiyx", "--to", "oiyx", "--shape", "2,3,1,1", "--to-dtype", "i8", "--compensation", "f"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--compensation 'f' is not an axis of oiyx (axes oiyx)"), std::string::npos) << r.err;
  r = run({"run", "--from", "oiyx", "--to", "oiyx", "--shape", "2,3,1,1", "--compensation-output", dir + "/x.i32"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--compensation-output '" + dir + "/x.i32' without --compensation"), std::string::npos) << r.err;
}

// A compile that outlasts the threshold is announced on a terminal, with its time at the end; nothing on a
// stream that is not a terminal, nor when the work ends first.
TEST(Cli, LongCompileProgressOnATerminalOnly) {
  auto shown = [](int terminal, std::chrono::milliseconds after, std::chrono::milliseconds work) {
    std::FILE* f = std::tmpfile();
    {
      const clreorder::CompileProgress progress("compiling the test's kernel", f, terminal, after);
      std::this_thread::sleep_for(work);
    }
    std::string text(4096, '\0');
    std::rewind(f);
    text.resize(std::fread(&text[0], 1, text.size(), f));
    std::fclose(f);
    return text;
  };
  const std::string long_one = shown(1, std::chrono::milliseconds(0), std::chrono::milliseconds(300));
  EXPECT_EQ(long_one.rfind("\rclreorder: compiling the test's kernel: 0.", 0), 0u) << long_one;
  EXPECT_EQ(long_one.back(), '\n');
  EXPECT_NE(long_one.find(" s\n"), std::string::npos) << long_one;
  EXPECT_EQ(shown(0, std::chrono::milliseconds(0), std::chrono::milliseconds(100)), "");
  EXPECT_EQ(shown(1, std::chrono::milliseconds(5000), std::chrono::milliseconds(10)), "");
}
