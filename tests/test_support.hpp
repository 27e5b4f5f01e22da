// Shared helpers for the test suite: the device (a failure under CI=true, a skip elsewhere), a
// deterministic byte generator, and a check that two buffers match byte for byte with a useful message.
// The helpers that walk whole buffers are defined in test_support.cpp, compiled once with optimisation:
// under the sanitizers the test drivers themselves are built without (tests/CMakeLists.txt).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "clreorder/error.hpp"
#include "clreorder/reorder.hpp"

namespace clreorder_test {

/// A conversion of these modes and no fused arithmetic.
inline clreorder::Conversion modes(clreorder::Rounding r, clreorder::Overflow o,
                                   clreorder::Padding p = clreorder::Padding::zero) {
  clreorder::Conversion c;
  c.rounding = r;
  c.overflow = o;
  c.padding = p;
  return c;
}

inline bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}

/// The device every test uses, opened once; nullptr with `why` when there is none.
/// Never destroyed, like the library's caches: releasing OpenCL objects after main returns is what makes
/// a process abort at exit under Oclgrind.
inline clreorder::Engine* engine(std::string* why) {
  static clreorder::Engine* e = nullptr;
  static std::string error;
  static bool tried = false;
  if (!tried) {
    tried = true;
    try {
      e = new clreorder::Engine(clreorder::Engine::open());
    } catch (const std::exception& ex) {
      error = ex.what();
    }
  }
  *why = error;
  return e;
}

/// Device tests start with this: no OpenCL device fails under CI=true and skips, saying why, elsewhere.
#define REQUIRE_DEVICE(var)                                                                       \
  std::string why_no_device_;                                                             \
  clreorder::Engine* var = clreorder_test::engine(&why_no_device_);                       \
  if (!var) {                                                                             \
    if (clreorder_test::in_ci()) FAIL() << "CI=true but no OpenCL device: " << why_no_device_; \
    GTEST_SKIP() << "no OpenCL device (" << why_no_device_ << "); install pocl-opencl-icd"; \
  }

/// The message of the clreorder::Error that `f` throws, or "" when it throws none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const clreorder::Error& e) {
    return e.what();
  }
  return "";
}

/// Sets an environment variable for a scope (the selector reads CLREORDER_TUNING, CLREORDER_INDEX_BITS, ...),
/// restoring the old value, so a failing assertion cannot leak it into the next test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_.c_str(), old_.c_str(), 1);
    else unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_, old_;
  bool had_ = false;
};

/// A whole file's bytes ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// A new directory /tmp/<prefix>.XXXXXX, removed with everything in it when the owner goes, so that runs of the
/// suite leave nothing behind; path() is "" when none could be made.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix) {
    std::string tmpl = "/tmp/" + prefix + ".XXXXXX";
    if (const char* d = mkdtemp(&tmpl[0])) path_ = d;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Deterministic bytes (xorshift), so failures reproduce.
std::vector<uint8_t> random_bytes(size_t n, uint64_t seed);

/// Empty when equal, else where the first difference is and how many bytes differ.
std::string compare_bytes(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want);

}  // namespace clreorder_test
