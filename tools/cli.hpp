// clreorder command-line tool: the commands, callable from main() and from the argument-handling fuzzer.
#pragma once

#include <cstdint>
#include <cstdio>

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

/// Runs `clreorder argv[1] ...`; returns the exit status (0 ok, 1 a failed --check, 2 bad input or an error,
/// printed as one line on stderr naming the value). Never throws.
int run_cli(int argc, const char* const* argv, const CliOptions& options = {});

}  // namespace clreorder
