// clreorder command-line tool: the commands, callable from main() and from the argument-handling fuzzer.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace clreorder {

/// How run_cli() may act.
struct CliOptions {
  /// Validate every argument (options, formats, shapes, types, paddings, file names as text) and generate
  /// kernel source, but open no device and no file: what a fuzzer drives.
  bool dry_run = false;
  /// Most lines `explain` prints (its --limit may not ask for more).
  int64_t max_explain_lines = 1000000;
  /// Where the error line goes (stderr when null); the fuzzer sends it away, keeping stderr for the sanitizers.
  std::FILE* errors = nullptr;
};

/// While a compile runs longer than `after`, one line on a terminal saying what it is and how long it has
/// taken so far, rewritten in place; when that line was shown, it ends with the total time. Nothing when the
/// stream is not a terminal (logs stay clean) or the work ends sooner. Used by one thread.
class CompileProgress {
 public:
  /// Starts the clock; `stream` null means stderr, `terminal` -1 means whether `stream` is a terminal.
  explicit CompileProgress(std::string what, std::FILE* stream = nullptr, int terminal = -1,
                           std::chrono::milliseconds after = std::chrono::milliseconds(1000));
  /// Stops the line (with the total time, if it was shown).
  ~CompileProgress();
  CompileProgress(const CompileProgress&) = delete;
  CompileProgress& operator=(const CompileProgress&) = delete;

 private:
  double seconds() const;
  std::string what_;
  std::FILE* stream_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false, shown_ = false;
  std::thread thread_;
};

/// Runs `clreorder argv[1] ...`; returns the exit status (0 ok, 1 a failed --check, 2 bad input or an error,
/// printed as one line on stderr naming the value). Never throws.
int run_cli(int argc, const char* const* argv, const CliOptions& options = {});

}  // namespace clreorder
