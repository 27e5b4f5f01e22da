// What this machine's memory gives a transpose, without OpenCL: `bfyx -> byxf` f32 (each batch's C x P matrix
// to P x C) written by hand in AVX2 on the host's threads, in the forms our tiled kernel uses (8 x 8 register
// transposes of 16 channels, 64-byte destination lines, streaming stores, a prefetch two lines ahead along
// each source row; and strips: 16 channels at a time along all positions, the form tiled's CPU tiles took
// after it, with at most 32 rows), against a streaming copy of the same bytes on the same threads. Rounds
// interleave the copy and every form, caches evicted before each; a form's ratio is the median of its rounds'
// copy time over its time, as `clreorder bench` reports a reorder's. If a hand-written form is no closer to
// the copy than the generated kernel, the gap is the machine's, not the generator's (NOTES, "A transpose by
// hand", "Fewer source streams per tile").
//   clreorder_host_transpose [--shape 8,256,3136] [--rounds 15] [--threads N]
#include <immintrin.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "median.hpp"

namespace {

using clreorder_perf::median;

// Only these functions use AVX2 (the rest of the program runs anywhere, so it can say when the CPU lacks it).
#define CR_AVX2 __attribute__((target("avx2")))

struct Shape {
  int64_t b = 8, c = 256, p = 3136;
};

// 8 x 8 floats in r[0..7] (rows) to its transpose (r[k] = column k).
CR_AVX2 inline void transpose8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

// 16 channels x 8 positions: 8 floats of each of 16 source rows (s.p apart) from `row0`, as two 8 x 8
// transposes, into 8 destination rows of 16 floats (one 64-byte line each, s.c apart) from `out0`; with
// `ahead`, a prefetch that many floats on along each source row.
template <bool Stream>
CR_AVX2 inline void transpose_16x8(const Shape& s, const float* row0, float* out0, int64_t ahead) {
  __m256 r[2][8];
  for (int g = 0; g < 2; ++g) {
    for (int k = 0; k < 8; ++k) {
      const float* row = row0 + (g * 8 + k) * s.p;
      if (ahead) _mm_prefetch(reinterpret_cast<const char*>(row + ahead), _MM_HINT_T0);
      r[g][k] = _mm256_loadu_ps(row);
    }
    transpose8(r[g]);
  }
  for (int k = 0; k < 8; ++k) {
    float* out = out0 + k * s.c;
    if (Stream) {
      _mm256_stream_ps(out, r[0][k]);
      _mm256_stream_ps(out + 8, r[1][k]);
    } else {
      _mm256_storeu_ps(out, r[0][k]);
      _mm256_storeu_ps(out + 8, r[1][k]);
    }
  }
}

// Blocks [first, last) of 8 positions (all batches' blocks in one numbering): for each block, every 16
// channels in turn, so a block reads all the channels' rows for half a line each.
template <bool Stream, bool Prefetch>
CR_AVX2 void transpose_blocks(const Shape& s, const float* src, float* dst, int64_t first, int64_t last) {
  const int64_t per_batch = s.p / 8;
  for (int64_t blk = first; blk < last; ++blk) {
    const int64_t b = blk / per_batch, p = (blk % per_batch) * 8;
    for (int64_t c = 0; c < s.c; c += 16)
      transpose_16x8<Stream>(s, src + (b * s.c + c) * s.p + p, dst + (b * s.p + p) * s.c + c, Prefetch ? 32 : 0);
  }
  if (Stream) _mm_sfence();
}

// Units [first, last) of 16 channels x 8 positions, numbered along each (batch, 16 channels) strip: a thread
// walks its strips' positions in order, so the source is read as 16 sequential streams (where the blocks
// above read all the channels' rows for half a line each) and each destination line is written whole.
template <bool Prefetch>
CR_AVX2 void transpose_strips(const Shape& s, const float* src, float* dst, int64_t first, int64_t last) {
  const int64_t per_strip = s.p / 8;
  for (int64_t u = first; u < last; ++u) {
    const int64_t strip = u / per_strip, p = (u % per_strip) * 8;
    const int64_t b = strip / (s.c / 16), c = (strip % (s.c / 16)) * 16;
    transpose_16x8<true>(s, src + (b * s.c + c) * s.p + p, dst + (b * s.p + p) * s.c + c, Prefetch ? 64 : 0);
  }
  _mm_sfence();
}

CR_AVX2 void copy_range(const float* src, float* dst, int64_t first, int64_t last) {
  for (int64_t i = first; i < last; i += 16) {
    _mm256_stream_ps(dst + i, _mm256_load_ps(src + i));
    _mm256_stream_ps(dst + i + 8, _mm256_load_ps(src + i + 8));
  }
  _mm_sfence();
}

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float, FreeDeleter>;

Buffer aligned_floats(int64_t n) {
  const size_t bytes = (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64;
  auto* p = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (!p) throw std::runtime_error("out of memory for " + std::to_string(bytes) + " bytes");
  return Buffer(p);
}

// Runs part(t, threads) on `threads` threads (the calling one included); milliseconds of wall time.
double timed(int threads, const std::function<void(int, int)>& part) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> others;
  for (int t = 1; t < threads; ++t) others.emplace_back(part, t, threads);
  part(0, threads);
  for (std::thread& th : others) th.join();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"A hand-written AVX2 transpose (bfyx -> byxf f32) against a streaming copy on the host's threads"};
  std::vector<int64_t> dims{8, 256, 3136};
  int rounds = 15;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  app.add_option("--shape", dims, "B,C,P: batches, channels (a multiple of 16), positions (a multiple of 8)")->delimiter(',')->expected(3);
  app.add_option("--rounds", rounds, "interleaved rounds (medians)")->check(CLI::Range(3, 1000));
  app.add_option("--threads", threads, "threads (default: the host's)")->check(CLI::Range(1, 1024));
  CLI11_PARSE(app, argc, argv);
  if (!__builtin_cpu_supports("avx2")) {
    std::fprintf(stderr, "clreorder_host_transpose: this CPU has no AVX2, which the hand-written forms use\n");
    return 2;
  }
  const Shape s{dims[0], dims[1], dims[2]};
  // Each bound before the product that uses it: b * c is at most 2^40, so the last test cannot overflow.
  if (s.b < 1 || s.c < 16 || s.c % 16 != 0 || s.p < 8 || s.p % 8 != 0 || s.b > (int64_t{1} << 20) || s.c > (int64_t{1} << 20) ||
      s.b * s.c > (int64_t{1} << 31) / s.p) {
    std::fprintf(stderr, "clreorder_host_transpose: shape %lld,%lld,%lld: channels must be a multiple of 16, positions of 8, "
                         "at most 2^31 elements\n", static_cast<long long>(s.b), static_cast<long long>(s.c), static_cast<long long>(s.p));
    return 2;
  }
  const int64_t n = s.b * s.c * s.p, blocks = n / s.c / 8, units = n / 128;  // blocks of 8 positions; strips' 16 x 8 units
  Buffer src, dst;
  try {
    src = aligned_floats(n);
    dst = aligned_floats(n);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "clreorder_host_transpose: %s\n", e.what());
    return 2;
  }
  for (int64_t i = 0; i < n; ++i) src.get()[i] = static_cast<float>(i % 16777216);
  std::vector<char> evict(256u << 20);  // past any L3 this runs on

  struct Form {
    const char* name;
    void (*fn)(const Shape&, const float*, float*, int64_t, int64_t);
    int64_t parts;  // what fn's [first, last) count: blocks or units
    std::vector<double> ms, ratio;
  };
  std::vector<Form> forms{{"plain stores", transpose_blocks<false, false>, blocks, {}, {}},
                          {"streaming stores", transpose_blocks<true, false>, blocks, {}, {}},
                          {"streaming stores, prefetch 128 B ahead", transpose_blocks<true, true>, blocks, {}, {}},
                          {"strips of 16 channels, streaming", transpose_strips<false>, units, {}, {}},
                          {"strips, streaming, prefetch 256 B ahead", transpose_strips<true>, units, {}, {}}};
  std::vector<double> copy_ms;
  auto evict_caches = [&] {
    for (size_t i = 0; i < evict.size(); i += 64) evict[i] = static_cast<char>(evict[i] + 1);
  };
  for (int round = 0; round < rounds; ++round) {
    evict_caches();
    copy_ms.push_back(timed(threads, [&](int t, int k) {
      const int64_t lines = n / 16;
      copy_range(src.get(), dst.get(), lines * t / k * 16, lines * (t + 1) / k * 16);
    }));
    for (Form& f : forms) {
      evict_caches();
      f.ms.push_back(timed(threads, [&](int t, int k) { f.fn(s, src.get(), dst.get(), f.parts * t / k, f.parts * (t + 1) / k); }));
      f.ratio.push_back(copy_ms.back() / f.ms.back());
    }
  }
  // Each form's result, computed once more on one thread, every element checked.
  for (Form& f : forms) {
    f.fn(s, src.get(), dst.get(), 0, f.parts);
    for (int64_t b = 0; b < s.b; ++b)
      for (int64_t c = 0; c < s.c; ++c)
        for (int64_t p = 0; p < s.p; ++p)
          if (dst.get()[(b * s.p + p) * s.c + c] != src.get()[(b * s.c + c) * s.p + p]) {
            std::fprintf(stderr, "clreorder_host_transpose: %s: wrong value at batch %lld, channel %lld, position %lld\n", f.name,
                         static_cast<long long>(b), static_cast<long long>(c), static_cast<long long>(p));
            return 1;
          }
  }
  const double mb = static_cast<double>(n) * sizeof(float) / 1e6;
  std::printf("bfyx -> byxf f32 %lld,%lld,%lld (%.1f MB each way), %d threads, %d rounds, caches evicted (medians)\n",
              static_cast<long long>(s.b), static_cast<long long>(s.c), static_cast<long long>(s.p), mb, threads, rounds);
  std::printf("  %-40s %8.3f ms\n", "copy (streaming stores)", median(copy_ms));
  for (const Form& f : forms) std::printf("  %-40s %8.3f ms, ratio to copy %.3f\n", f.name, median(f.ms), median(f.ratio));
  return 0;
}
