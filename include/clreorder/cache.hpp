// clreorder: the persistent program cache. Compiled OpenCL program binaries are kept in a directory, so a
// new process loads the kernels an earlier one built instead of compiling them again.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace clreorder {

/// Counters of the persistent cache since the process started (or since reset_stats()).
struct DiskCacheStats {
  uint64_t hits = 0;            ///< kernels loaded from a stored binary
  uint64_t misses = 0;          ///< kernels looked up and not found (then compiled and stored)
  uint64_t rejected = 0;        ///< stored files found unusable (truncated, corrupt, stale, refused by the driver)
  uint64_t stored = 0;          ///< program binaries (and implementation choices) written
  uint64_t write_failures = 0;  ///< stores that failed (the cache then stops writing, with one warning)
};

/// What the cache directory holds.
struct DiskCacheInfo {
  std::string directory;  ///< "" when the cache is disabled
  std::string source;     ///< where the directory came from: "api", "CLREORDER_CACHE_DIR", "XDG_CACHE_HOME", "HOME"
  uint64_t programs = 0;  ///< program binary files
  uint64_t indexes = 0;   ///< kernel index files (each names the program holding the kernel)
  uint64_t choices = 0;   ///< implementation choices measured by tune_reorder() or set by keep_choice()
  uint64_t bytes = 0;     ///< bytes of all three
};

/// The directory of stored program binaries. The directory is set_directory()'s, else CLREORDER_CACHE_DIR,
/// else $XDG_CACHE_HOME/clreorder, else ~/.cache/clreorder; "off" (API or variable) disables the cache.
/// A file's name is a hash of its key; the file holds the whole key (library version, platform name and
/// version, device name, driver version, build options, program source) and a checksum, both checked on
/// load, so a collision or a stale or damaged file is rebuilt and replaced, never loaded. Files are written
/// under a temporary name and renamed, so processes sharing the directory never read a partial file. A
/// directory that cannot be written degrades to no stores, with one warning.
/// Thread-safe: every member may be called from any thread.
class DiskCache {
 public:
  /// The process-wide cache.
  static DiskCache& instance();
  /// Uses `dir` ("off" or "" disables the cache) instead of the environment.
  void set_directory(const std::string& dir);
  /// Back to the environment's choice (CLREORDER_CACHE_DIR, XDG_CACHE_HOME, HOME), read again now.
  void use_environment();
  /// The directory in use, "" when disabled.
  std::string directory() const;
  /// Where warnings go (default: one line on stderr, "clreorder: warning: ..."); a runtime routes them to
  /// its log. Called without any lock of the cache held.
  void set_warning_handler(std::function<void(const std::string&)> handler);
  /// Counters.
  DiskCacheStats stats() const;
  /// Sets the counters to zero.
  void reset_stats();
  /// Files and bytes in the directory.
  DiskCacheInfo info() const;
  /// Removes the cache's files (programs, indexes, choices) from the directory, nothing else; returns how many.
  uint64_t clear();

  /// A stored program: its kernels (entry name and the code each was generated as) and the binary.
  struct Program {
    std::vector<std::pair<std::string, std::string>> kernels;  ///< (entry, code)
    std::vector<unsigned char> binary;
  };
  /// The program holding kernel (`entry`, `code`) built with `options` for the device `device_key` names,
  /// whose whole source is common + the codes of its kernels. False on a miss or a rejected file (counted,
  /// removed so the next store replaces it, and warned about unless it is only stale: built with another
  /// `common` of the same library version, or its program already removed).
  bool load(const std::string& device_key, const std::string& options, const std::string& common,
            const std::string& entry, const std::string& code, Program* out);
  /// Whether an index file for that kernel is there (not checked: load() may still reject it). Cheap, so a
  /// caller can choose between loading a stored binary now and compiling in the background.
  bool has(const std::string& device_key, const std::string& options, const std::string& entry,
           const std::string& code) const;
  /// Stores a program's binary and an index for each of its kernels. Failures are counted and warned
  /// about once; they never throw.
  void store(const std::string& device_key, const std::string& options, const std::string& common, const Program& program);
  /// The implementation stored for the reorder `key` names (keep_choice()), or "" when none is; a damaged
  /// or colliding file is removed.
  std::string load_choice(const std::string& key);
  /// Stores an implementation choice for the reorder `key` names. Failures are counted and warned about
  /// once, as store()'s; they never throw.
  void store_choice(const std::string& key, const std::string& impl);
  /// Counts a stored program that the driver refused to build from its binary (then compiled from source).
  void count_driver_rejection(const std::string& why);

 private:
  DiskCache();
  void warn(const std::string& message);
  void note_write(bool ok, const std::string& dir, const std::string& why);
  mutable std::mutex mutex_;
  std::string dir_, source_;
  bool writes_failed_ = false, reads_failed_ = false;  // each warned about once
  DiskCacheStats stats_;
  std::function<void(const std::string&)> warning_;
};

}  // namespace clreorder
