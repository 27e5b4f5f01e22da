// The persistent program cache: program binaries and per-kernel index files in one directory.
// File layout (all integers little-endian as the host writes them; a file from another byte order fails
// its checks and is rebuilt):
//   magic "CLREORDR", u32 format version, u32 kind (1 program, 2 index), u64 key length, key,
//   u64 payload length, payload, u64 XXH3-64 checksum of everything before it.
// A program's payload lists its kernels (entry and code) and the binary; an index's payload names the
// program file holding its kernel. Names are the XXH3-128 hash of the key, in hex.
#include "clreorder/cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "env.hpp"

namespace clreorder {

namespace {

constexpr char kMagic[8] = {'C', 'L', 'R', 'E', 'O', 'R', 'D', 'R'};
constexpr uint32_t kFormatVersion = 1, kProgram = 1, kIndex = 2, kChoice = 3;
const char* const kProgramExt = ".clrp";
const char* const kIndexExt = ".clri";
const char* const kChoiceExt = ".clrc";

std::string hex_name(const std::string& key) {
  const XXH128_hash_t h = XXH3_128bits(key.data(), key.size());
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

void put_u32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
void put_u64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
void put_bytes(std::string& out, const std::string& s) {
  put_u64(out, s.size());
  out += s;
}

// Reads fields in order; any read past the end sets `bad` and yields zeros.
struct Reader {
  const std::string& data;
  size_t pos = 0;
  bool bad = false;
  bool take(void* dst, size_t n) {
    if (bad || n > data.size() - pos) return !(bad = true);
    std::memcpy(dst, data.data() + pos, n);
    pos += n;
    return true;
  }
  uint32_t u32() {
    uint32_t v = 0;
    take(&v, 4);
    return v;
  }
  uint64_t u64() {
    uint64_t v = 0;
    take(&v, 8);
    return v;
  }
  std::string bytes() {
    const uint64_t n = u64();
    if (bad || n > data.size() - pos) {
      bad = true;
      return "";
    }
    std::string s = data.substr(pos, n);
    pos += n;
    return s;
  }
};

std::string frame(uint32_t kind, const std::string& key, const std::string& payload) {
  std::string out(kMagic, sizeof kMagic);
  put_u32(out, kFormatVersion);
  put_u32(out, kind);
  put_bytes(out, key);
  put_bytes(out, payload);
  put_u64(out, XXH3_64bits(out.data(), out.size()));
  return out;
}

// The payload of a framed file when it is whole, of `kind` and for `key`; else "" with `why` set.
bool unframe(const std::string& file, uint32_t kind, const std::string& key, std::string* payload, std::string* why) {
  if (file.size() < sizeof kMagic + 8 + 8 + 8 + 8 || std::memcmp(file.data(), kMagic, sizeof kMagic) != 0) {
    *why = "not a clreorder cache file (bad magic or truncated)";
    return false;
  }
  uint64_t sum = 0;
  std::memcpy(&sum, file.data() + file.size() - 8, 8);
  if (sum != XXH3_64bits(file.data(), file.size() - 8)) {
    *why = "checksum mismatch (truncated or corrupt)";
    return false;
  }
  Reader r{file, sizeof kMagic};
  const uint32_t version = r.u32(), k = r.u32();
  const std::string stored_key = r.bytes();
  *payload = r.bytes();
  if (r.bad || r.pos + 8 != file.size()) *why = "malformed lengths";
  else if (version != kFormatVersion) *why = "format version " + std::to_string(version) + ", not " + std::to_string(kFormatVersion);
  else if (k != kind) *why = "wrong kind of file";
  else if (stored_key != key) *why = "its key differs (another device, driver, version or source with the same hash)";
  else return true;
  return false;
}

// The whole file; false when it does not exist (or cannot be read: `why` says).
bool read_file(const std::string& path, std::string* out, std::string* why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT && errno != ENOTDIR) *why = std::strerror(errno);
    return false;
  }
  out->clear();
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *why = std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

// mkdir -p.
bool make_dirs(const std::string& dir) {
  if (dir.empty()) return false;
  std::string path;
  size_t i = 0;
  while (i != std::string::npos) {
    i = dir.find('/', i + 1);
    path = dir.substr(0, i);
    if (path.empty()) continue;
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  struct stat st;
  return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Writes under a name no other writer uses, then renames over the final name: readers see the old file or
// the new one, never a part.
bool write_atomically(const std::string& dir, const std::string& name, const std::string& data, std::string* why) {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = dir + "/.tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + name;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    *why = std::strerror(errno);
    return false;
  }
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *why = n < 0 ? std::strerror(errno) : "short write";
      ::close(fd);
      ::unlink(tmp.c_str());
      return false;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), (dir + "/" + name).c_str()) != 0) {
    *why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

std::string index_key(const std::string& device_key, const std::string& options, const std::string& entry,
                      const std::string& code) {
  return "clreorder kernel index\n" + device_key + "\n" + options + "\n" + entry + "\n" + code;
}

std::string program_key(const std::string& device_key, const std::string& options, const std::string& common,
                        const std::vector<std::pair<std::string, std::string>>& kernels) {
  std::string text = common;
  for (const auto& k : kernels) text += "\n" + k.second;
  return "clreorder program\n" + device_key + "\n" + options + "\n" + text;
}

}  // namespace

DiskCache& DiskCache::instance() {
  // Never destroyed (holds no OpenCL object, but may be used from other statics' destructors' threads).
  static DiskCache& cache = *new DiskCache;
  return cache;
}

DiskCache::DiskCache() { use_environment(); }

void DiskCache::set_directory(const std::string& dir) {
  std::lock_guard<std::mutex> guard(mutex_);
  dir_ = dir == "off" ? "" : dir;
  source_ = dir_.empty() ? "" : "api";
  writes_failed_ = reads_failed_ = false;
}

void DiskCache::use_environment() {
  std::string dir, source;
  if (const char* v = std::getenv("CLREORDER_CACHE_DIR")) {
    dir = v;
    source = "CLREORDER_CACHE_DIR";
    if (dir == "off") dir.clear();
  } else if (!env_value("XDG_CACHE_HOME").empty()) {
    dir = env_value("XDG_CACHE_HOME") + "/clreorder";
    source = "XDG_CACHE_HOME";
  } else if (!env_value("HOME").empty()) {
    dir = env_value("HOME") + "/.cache/clreorder";
    source = "HOME";
  }
  std::lock_guard<std::mutex> guard(mutex_);
  dir_ = dir;
  source_ = dir.empty() ? "" : source;
  writes_failed_ = reads_failed_ = false;
}

std::string DiskCache::directory() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return dir_;
}

void DiskCache::set_warning_handler(std::function<void(const std::string&)> handler) {
  std::lock_guard<std::mutex> guard(mutex_);
  warning_ = std::move(handler);
}

void DiskCache::warn(const std::string& message) {
  std::function<void(const std::string&)> handler;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    handler = warning_;
  }
  if (handler) handler(message);
  else std::fprintf(stderr, "clreorder: warning: %s\n", message.c_str());
}

DiskCacheStats DiskCache::stats() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return stats_;
}

void DiskCache::reset_stats() {
  std::lock_guard<std::mutex> guard(mutex_);
  stats_ = DiskCacheStats{};
}

DiskCacheInfo DiskCache::info() const {
  DiskCacheInfo info;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    info.directory = dir_;
    info.source = source_;
  }
  if (info.directory.empty()) return info;
  if (DIR* d = ::opendir(info.directory.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      const bool program = ends_with(name, kProgramExt), index = ends_with(name, kIndexExt), choice = ends_with(name, kChoiceExt);
      if ((!program && !index && !choice) || name[0] == '.') continue;
      struct stat st;
      if (::stat((info.directory + "/" + name).c_str(), &st) != 0) continue;
      info.programs += program;
      info.indexes += index;
      info.choices += choice;
      info.bytes += static_cast<uint64_t>(st.st_size);
    }
    ::closedir(d);
  }
  return info;
}

uint64_t DiskCache::clear() {
  const std::string dir = directory();
  uint64_t removed = 0;
  if (dir.empty()) return 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      const bool ours = ends_with(name, kProgramExt) || ends_with(name, kIndexExt) || ends_with(name, kChoiceExt);
      if (ours && name[0] != '.' && ::unlink((dir + "/" + name).c_str()) == 0) ++removed;  // not a writer's temporary
    }
    ::closedir(d);
  }
  return removed;
}

bool DiskCache::has(const std::string& device_key, const std::string& options, const std::string& entry,
                    const std::string& code) const {
  const std::string dir = directory();
  return !dir.empty() && ::access((dir + "/" + hex_name(index_key(device_key, options, entry, code)) + kIndexExt).c_str(), R_OK) == 0;
}

bool DiskCache::load(const std::string& device_key, const std::string& options, const std::string& common,
                     const std::string& entry, const std::string& code, Program* out) {
  const std::string dir = directory();
  if (dir.empty()) return false;
  auto count = [&](uint64_t DiskCacheStats::*field) {
    std::lock_guard<std::mutex> guard(mutex_);
    ++(stats_.*field);
  };
  auto reject = [&](const std::string& path, const std::string& why) {
    count(&DiskCacheStats::rejected);
    count(&DiskCacheStats::misses);
    ::unlink(path.c_str());  // so the store after the rebuild replaces it
    if (!why.empty()) warn("cache file " + path + " is unusable (" + why + "); rebuilding it");
    return false;
  };
  const std::string ikey = index_key(device_key, options, entry, code);
  const std::string ipath = dir + "/" + hex_name(ikey) + kIndexExt;
  std::string file, payload, why;
  if (!read_file(ipath, &file, &why)) {
    count(&DiskCacheStats::misses);
    bool first = false;
    if (!why.empty()) {
      std::lock_guard<std::mutex> guard(mutex_);
      first = !reads_failed_;
      reads_failed_ = true;
    }
    if (first) warn("cannot read the kernel cache directory " + dir + " (" + why + "); compiling what it may hold");
    return false;
  }
  if (!unframe(file, kIndex, ikey, &payload, &why)) return reject(ipath, why);
  const std::string ppath = dir + "/" + payload + kProgramExt;
  if (payload.size() != 32 || payload.find_first_not_of("0123456789abcdef") != std::string::npos)
    return reject(ipath, "it names no program file");
  why.clear();
  // Gone is no damage: another kernel of the program found it stale first (below), or another process
  // cleared the directory.
  if (!read_file(ppath, &file, &why)) return reject(ipath, why);
  // The program's key is checked against its own kernel list and today's common code: a program built from
  // an older common.cl, or a collision, is not this kernel's.
  std::string body;
  Reader head{file, sizeof kMagic + 8};
  const std::string stored_key = head.bytes();
  if (!unframe(file, kProgram, stored_key, &body, &why)) return reject(ppath, why);
  Reader r{body};
  Program p;
  const uint32_t n = r.u32();
  for (uint32_t i = 0; i < n && !r.bad; ++i) {
    std::string e = r.bytes(), c = r.bytes();
    p.kernels.emplace_back(std::move(e), std::move(c));
  }
  const std::string binary = r.bytes();
  if (r.bad || r.pos != body.size()) return reject(ppath, "malformed kernel list");
  // The index matched (library version, device, driver, options, this kernel's code), so the program was
  // built with another common.cl of the same version: a build between releases, which every such rebuild
  // leaves behind. Replaced without a warning, which would come once per kernel and is no fault of the
  // directory.
  if (stored_key != program_key(device_key, options, common, p.kernels)) return reject(ppath, "");
  bool has = false;
  for (const auto& k : p.kernels) has = has || (k.first == entry && k.second == code);
  if (!has) return reject(ppath, "it does not hold kernel " + entry);
  p.binary.assign(binary.begin(), binary.end());
  count(&DiskCacheStats::hits);
  *out = std::move(p);
  return true;
}

void DiskCache::store(const std::string& device_key, const std::string& options, const std::string& common,
                      const Program& program) {
  std::string dir;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (dir_.empty() || writes_failed_) return;
    dir = dir_;
  }
  std::string payload;
  put_u32(payload, static_cast<uint32_t>(program.kernels.size()));
  for (const auto& k : program.kernels) {
    put_bytes(payload, k.first);
    put_bytes(payload, k.second);
  }
  put_bytes(payload, std::string(program.binary.begin(), program.binary.end()));
  const std::string pkey = program_key(device_key, options, common, program.kernels);
  const std::string pname = hex_name(pkey);
  std::string why;
  bool ok = make_dirs(dir);
  if (!ok) why = std::string("cannot create it: ") + std::strerror(errno);
  ok = ok && write_atomically(dir, pname + kProgramExt, frame(kProgram, pkey, payload), &why);
  for (const auto& k : program.kernels) {
    if (!ok) break;
    const std::string ikey = index_key(device_key, options, k.first, k.second);
    ok = write_atomically(dir, hex_name(ikey) + kIndexExt, frame(kIndex, ikey, pname), &why);
  }
  note_write(ok, dir, why);
}

void DiskCache::note_write(bool ok, const std::string& dir, const std::string& why) {
  bool first_failure = false;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (ok) {
      ++stats_.stored;
    } else {
      ++stats_.write_failures;
      first_failure = !writes_failed_;
      writes_failed_ = true;
    }
  }
  if (first_failure)
    warn("cannot write the kernel cache directory " + dir + " (" + why + "); continuing without storing kernels");
}

std::string DiskCache::load_choice(const std::string& key) {
  const std::string dir = directory();
  if (dir.empty()) return "";
  const std::string path = dir + "/" + hex_name(key) + kChoiceExt;
  std::string file, payload, why;
  if (!read_file(path, &file, &why)) return "";
  if (!unframe(file, kChoice, key, &payload, &why)) {
    ::unlink(path.c_str());
    warn("cache file " + path + " is unusable (" + why + "); removed");
    return "";
  }
  return payload;
}

void DiskCache::store_choice(const std::string& key, const std::string& impl) {
  std::string dir;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (dir_.empty() || writes_failed_) return;
    dir = dir_;
  }
  std::string why;
  bool ok = make_dirs(dir);
  if (!ok) why = std::string("cannot create it: ") + std::strerror(errno);
  ok = ok && write_atomically(dir, hex_name(key) + kChoiceExt, frame(kChoice, key, impl), &why);
  note_write(ok, dir, why);
}

void DiskCache::count_driver_rejection(const std::string& why) {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    ++stats_.rejected;
    if (stats_.hits) --stats_.hits;
    ++stats_.misses;
  }
  warn("the driver refused a stored kernel binary (" + why + "); compiling it from source");
}

}  // namespace clreorder
