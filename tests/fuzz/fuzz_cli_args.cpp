// libFuzzer target: the CLI's argument handling. The input is split into argument words at '\n'; run_cli()
// takes them in its dry run (every argument validated, layouts built, kernel source generated, no device and no
// file opened) and must return 0, 1 or 2 without crashing or throwing. Its output and error line go to
// /dev/null; stderr stays open for the sanitizers' reports.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "fuzz_support.hpp"

namespace {
std::FILE* null_sink = nullptr;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  null_sink = std::fopen("/dev/null", "w");
  return std::freopen("/dev/null", "w", stdout) && null_sink ? 0 : 1;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1024) return 0;
  std::vector<std::string> words = {"clreorder"};
  std::string word;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      words.push_back(word);
      word.clear();
    } else {
      word += static_cast<char>(data[i]);
    }
  }
  words.push_back(word);
  if (words.size() > 32) return 0;
  std::vector<const char*> argv;
  for (const std::string& w : words) argv.push_back(w.c_str());
  clreorder::CliOptions options;
  options.dry_run = true;
  options.max_explain_lines = 64;
  options.errors = null_sink;
  const int rc = clreorder::run_cli(static_cast<int>(argv.size()), argv.data(), options);
  fuzz_require(rc == 0 || rc == 1 || rc == 2, "run_cli returned " + std::to_string(rc));
  return 0;
}
