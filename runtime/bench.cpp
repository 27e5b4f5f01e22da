// Timing a reorder against clEnqueueCopyBuffer of the same bytes, alternating the two so that both see the
// same machine load (the machine is shared and noisy; the median of each round's ratio is what we report).
#include "clreorder/bench.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "clreorder/cache.hpp"
#include "clreorder/error.hpp"
#include "clreorder/reference.hpp"
#include "clreorder/reorder.hpp"
#include "clreorder/kernel_selector.hpp"

namespace clreorder {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

size_t round_up64(size_t n) { return (n + 63) / 64 * 64; }

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string BenchResult::json(const Layout& src, const Layout& dst) const {
  const nlohmann::ordered_json out = {
      {"from", src.format().name()}, {"to", dst.format().name()}, {"shape", src.dims()}, {"to_shape", dst.dims()},
      {"dtype", to_string(src.data_type())}, {"to_dtype", to_string(dst.data_type())},
      {"source", src.describe()}, {"destination", dst.describe()}, {"impl", impl}, {"runs", runs},
      {"median_ms", median_ms}, {"kernel_ms", kernel_ms}, {"copy_ms", copy_ms}, {"copy_kernel_ms", copy_kernel_ms},
      {"gbps_logical", gbps_logical}, {"gbps_physical", gbps_physical}, {"copy_gbps", copy_gbps},
      {"copy_kernel_gbps", copy_kernel_gbps}, {"best_copy_gbps", best_copy_gbps}, {"ratio", ratio},
      {"ratio_copy_buffer", ratio_copy_buffer}, {"enqueue_us", enqueue_us},
      {"bare_enqueue_us", bare_enqueue_us}};
  return out.dump();
}

std::vector<BenchResult> bench_reorders(const Engine& engine, const Layout& src, const Layout& dst, const std::string& force,
                                       int runs, const std::vector<Conversion>& convs) {
  if (convs.empty()) throw Error("bench: no conversion to time");
  std::vector<BenchVariant> variants;
  for (const Conversion& c : convs) variants.push_back(BenchVariant{force, c});
  return bench_variants(engine, src, dst, runs, variants);
}

std::vector<BenchResult> bench_variants(const Engine& engine, const Layout& src, const Layout& dst, int runs,
                                        const std::vector<BenchVariant>& variants) {
  if (runs < 1) throw Error("bench: runs must be at least 1, got " + std::to_string(runs));
  if (variants.empty()) throw Error("bench: no variant to time");
  check_compatible(src, dst);
  for (const Layout* l : {&src, &dst}) check_fits_device(engine.info(), *l);
  std::vector<BenchResult> rs(variants.size());
  // Bytes a reorder moves, and a copy of the destination's (read and written).
  const double physical = static_cast<double>(src.bytes() + dst.bytes()), copied = 2.0 * static_cast<double>(dst.bytes());
  try {
    const cl::Context& ctx = engine.context();
    const cl::CommandQueue& q = engine.queue();
    std::vector<uint8_t> pattern = make_pattern(src);
    cl::Buffer s(ctx, CL_MEM_READ_WRITE, pattern.size()), d(ctx, CL_MEM_READ_WRITE, static_cast<size_t>(dst.bytes()));
    // Each of the three timed operations has buffers of its own, last touched a round before with the other
    // two's traffic between. On clEnqueueCopyBuffer's buffers the copy kernel found them in cache wherever both
    // fit: an identity reorder (the copy kernel's access forms) ran at 0.47-0.85 of it at 0.8-12.8 MB, and at
    // 0.76-0.96 with these (NOTES, "The copy kernel's own buffers").
    cl::Buffer copy_src(ctx, CL_MEM_READ_WRITE, static_cast<size_t>(dst.bytes()));
    cl::Buffer copy_dst(ctx, CL_MEM_READ_WRITE, static_cast<size_t>(dst.bytes()));
    cl::Buffer kernel_src(ctx, CL_MEM_READ_WRITE, static_cast<size_t>(dst.bytes()));
    cl::Buffer kernel_dst(ctx, CL_MEM_READ_WRITE, static_cast<size_t>(dst.bytes()));
    q.enqueueWriteBuffer(s, CL_TRUE, 0, pattern.size(), pattern.data());
    for (const cl::Buffer* b : {&copy_src, &kernel_src}) q.enqueueFillBuffer(*b, cl_uchar(1), 0, static_cast<size_t>(dst.bytes()));
    for (const cl::Buffer* b : {&copy_dst, &kernel_dst}) q.enqueueFillBuffer(*b, cl_uchar(0), 0, static_cast<size_t>(dst.bytes()));
    q.enqueueFillBuffer(d, cl_uchar(0), 0, static_cast<size_t>(dst.bytes()));
    q.finish();
    std::vector<ReorderOptions> opts(variants.size());
    for (size_t k = 0; k < variants.size(); ++k) {
      ReorderOptions& opt = opts[k];
      const Conversion& conv = variants[k].conversion;
      opt.force_impl = variants[k].force;
      opt.conversion = conv;
      opt.param_buffers = upload_param_values(ctx, conv);
      if (conv.compensation.present())
        opt.compensation = cl::Buffer(ctx, CL_MEM_READ_WRITE, static_cast<size_t>(conv.compensation.count(dst.dims())) * 4);
      opt.wait = false;
      opt.make_event = false;  // launched as the copy kernel is: an event costs some drivers more than the launch
      opt.policy = CompilePolicy::wait;  // time the selector's kernel, never the shape-agnostic one meanwhile
    }
    for (int i = 0; i < 3; ++i) {  // warm-up: compile, first launch, page faults
      for (size_t k = 0; k < variants.size(); ++k) rs[k].impl = reorder(engine, s, 0, src, d, 0, dst, opts[k]).impl;
      q.enqueueCopyBuffer(copy_src, copy_dst, 0, 0, static_cast<size_t>(dst.bytes()));
      q.finish();
    }
    // Our copy kernel over as many bytes, launched as a reorder is.
    const size_t bytes = static_cast<size_t>(dst.bytes());
    const KernelData copy_kd = copy_kernel(engine.info(), bytes);
    KernelHandle copy_h = ProgramCache::instance().handle(ctx, engine.device(), copy_kd.source);
    auto copy_kernel_run = [&] {
      LockedKernel k(copy_h);
      k.kernel.setArg(0, kernel_src);
      k.kernel.setArg(1, kernel_dst);
      k.kernel.setArg(2, static_cast<cl_ulong>(bytes));
      q.enqueueNDRangeKernel(k.kernel, cl::NullRange, copy_kd.global_range(), copy_kd.local_range());
      q.finish();
    };
    for (int i = 0; i < 3; ++i) copy_kernel_run();
    const bool profiling = q.getInfo<CL_QUEUE_PROPERTIES>() & CL_QUEUE_PROFILING_ENABLE;
    std::vector<std::vector<double>> wall(variants.size()), kernel(variants.size());
    std::vector<double> copy, copy_k;
    // Each round runs the variants and both copies in an order of its own, drawn from a fixed seed, never
    // starting with the operation the round before ended with (each one's buffers last touched with another's
    // traffic between). A fixed order tied the operations' times together: this host's launches alternate
    // between about 20 and 100 us (PoCL, 2 vCPUs), so in the old order (variants, clEnqueueCopyBuffer, copy
    // kernel) the reorder and the copy kernel always drew the same phase and clEnqueueCopyBuffer the other, and
    // a 1 KB reorder read 0.2 or 1.4 of copy by the run (NOTES, "Rounds in an order of their own").
    const size_t n_ops = variants.size() + 2, op_copy = variants.size(), op_kernel = variants.size() + 1;
    std::vector<size_t> order(n_ops);
    for (size_t j = 0; j < n_ops; ++j) order[j] = j;
    std::mt19937 shuffler(20261204u);
    for (int i = 0; i < runs; ++i) {
      const size_t last = order.back();
      do std::shuffle(order.begin(), order.end(), shuffler);
      while (i > 0 && order.front() == last);
      for (size_t op : order) {
        const double t0 = now_ms();
        if (op == op_copy) {
          q.enqueueCopyBuffer(copy_src, copy_dst, 0, 0, bytes);
          q.finish();
          copy.push_back(now_ms() - t0);
        } else if (op == op_kernel) {
          copy_kernel_run();
          copy_k.push_back(now_ms() - t0);
        } else {
          reorder(engine, s, 0, src, d, 0, dst, opts[op]);
          q.finish();
          wall[op].push_back(now_ms() - t0);
        }
      }
    }
    // The kernels' own time, from launches of their own with events (the timed rounds make none).
    for (int i = 0; profiling && i < std::min(runs, 9); ++i)
      for (size_t k = 0; k < variants.size(); ++k) {
        ReorderOptions timed = opts[k];
        timed.wait = true;
        kernel[k].push_back(reorder(engine, s, 0, src, d, 0, dst, timed).kernel_ms);
      }
    for (size_t k = 0; k < variants.size(); ++k) {
      // Host overhead: the same number of cached reorder() calls and bare enqueues of its kernel, not waited for.
      const int n_enqueue = 50;
      std::vector<double> ours, bare;
      KernelData kd = plan_reorder(engine.info(), src, dst, variants[k].force, variants[k].conversion);
      KernelHandle h = ProgramCache::instance().handle(ctx, engine.device(), kd.source);
      const cl::Buffer plans = plans_buffer(ctx, kd);
      {
        LockedKernel lk(h);
        set_reorder_args(lk.kernel, s, 0, d, 0, plans, opts[k].param_buffers, opts[k].compensation);
      }
      for (int i = 0; i < n_enqueue; ++i) {
        double t0 = now_ms();
        reorder(engine, s, 0, src, d, 0, dst, opts[k]);
        double t1 = now_ms();
        q.enqueueNDRangeKernel(h.kernel, cl::NullRange, kd.global_range(), kd.local_range());
        double t2 = now_ms();
        ours.push_back((t1 - t0) * 1e3);
        bare.push_back((t2 - t1) * 1e3);
      }
      q.finish();
      BenchResult& r = rs[k];
      r.runs = runs;
      r.enqueue_us = median(ours);
      r.bare_enqueue_us = median(bare);
      r.median_ms = median(wall[k]);
      r.kernel_ms = profiling ? median(kernel[k]) : -1;
      r.copy_ms = median(copy);
      r.copy_kernel_ms = median(copy_k);
      r.ratio = ratio_to_faster_copy(physical / copied, wall[k], copy, copy_k);
      r.ratio_copy_buffer = ratio_to_faster_copy(physical / copied, wall[k], copy, copy);
    }
  } catch (...) {
    rethrow_cl("bench " + src.describe() + " -> " + dst.describe());
  }
  const double logical = static_cast<double>(src.logical_elements()) * (bits_of(src.data_type()) + bits_of(dst.data_type())) / 8;
  for (BenchResult& r : rs) {
    r.gbps_logical = logical / (r.median_ms * 1e6);
    r.gbps_physical = physical / (r.median_ms * 1e6);
    r.copy_gbps = copied / (r.copy_ms * 1e6);
    r.copy_kernel_gbps = copied / (r.copy_kernel_ms * 1e6);
    r.best_copy_gbps = std::max(r.copy_gbps, r.copy_kernel_gbps);
  }
  return rs;
}

double ratio_to_faster_copy(double scale, const std::vector<double>& wall, const std::vector<double>& copy,
                            const std::vector<double>& copy_kernel) {
  if (wall.empty() || copy.size() != wall.size() || copy_kernel.size() != wall.size())
    throw Error("bench: " + std::to_string(wall.size()) + " timed rounds of the reorder against " + std::to_string(copy.size()) +
                " and " + std::to_string(copy_kernel.size()) + " of the copies");
  // Each round's ratio: the reorder and the copies beside it ran within milliseconds, where the medians of
  // each may come from different phases of a machine whose speed changes by 2x for seconds. The faster copy
  // is the one of the lower median, not the faster of each round: the least of two noisy times is below
  // either one's typical time, and three operations of one typical time read about 0.8 round by round
  // (tests/test_format.cpp, BenchRatios; NOTES, "Rounds in an order of their own").
  const std::vector<double>& faster = median(copy_kernel) < median(copy) ? copy_kernel : copy;
  std::vector<double> ratios;
  for (size_t i = 0; i < wall.size(); ++i) ratios.push_back(scale * faster[i] / wall[i]);
  return median(ratios);
}

BenchResult bench_reorder(const Engine& engine, const Layout& src, const Layout& dst, const std::string& force, int runs,
                          const Conversion& conv) {
  return bench_reorders(engine, src, dst, force, runs, {conv}).front();
}

std::string BatchBenchResult::json() const {
  const nlohmann::ordered_json out = {{"reorders", reorders}, {"launches", launches}, {"runs", runs}, {"bytes", bytes},
                                      {"one_by_one_ms", one_by_one_ms}, {"batched_ms", batched_ms}, {"speedup", speedup},
                                      {"copy_ms", copy_ms}, {"batched_kernel_ms", batched_kernel_ms},
                                      {"one_by_one_kernel_ms", one_by_one_kernel_ms},
                                      {"batched_enqueue_ms", batched_enqueue_ms}, {"exact", exact}, {"mismatch", mismatch},
                                      {"impls", impls}};
  return out.dump();
}

BatchBenchResult bench_batch(const Engine& engine, const std::vector<std::pair<Layout, Layout>>& pairs,
                             const std::string& force, int runs, const Conversion& conv, size_t launch_items) {
  if (runs < 1) throw Error("bench: runs must be at least 1, got " + std::to_string(runs));
  if (pairs.empty()) throw Error("bench: the batch lists no reorder");
  BatchBenchResult r;
  r.reorders = pairs.size();
  r.runs = runs;
  // Packed as a model's weights are: one blob of sources, one of destinations.
  std::vector<std::pair<size_t, size_t>> at;
  size_t s_end = 0, d_end = 0;
  for (const auto& [src, dst] : pairs) {
    check_compatible(src, dst);
    for (const Layout* l : {&src, &dst}) check_fits_device(engine.info(), *l);
    at.emplace_back(s_end, d_end);
    s_end = round_up64(s_end + static_cast<size_t>(src.bytes()));
    d_end = round_up64(d_end + static_cast<size_t>(dst.bytes()));
    r.bytes += src.bytes() + dst.bytes();
  }
  std::vector<uint8_t> sources(std::max<size_t>(s_end, 1)), want(std::max<size_t>(d_end, 1), 0);
  for (size_t k = 0; k < pairs.size(); ++k) {
    const std::vector<uint8_t> p = make_pattern(pairs[k].first);
    std::copy(p.begin(), p.end(), sources.begin() + static_cast<std::ptrdiff_t>(at[k].first));
    reference_reorder(pairs[k].first, p.data(), pairs[k].second, want.data() + at[k].second, conv);
  }
  try {
    const cl::Context& ctx = engine.context();
    const cl::CommandQueue& q = engine.queue();
    cl::Buffer s(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sources.size(), sources.data());
    cl::Buffer d(ctx, CL_MEM_READ_WRITE, want.size());
    std::vector<BatchItem> items;
    for (size_t k = 0; k < pairs.size(); ++k)
      items.push_back(BatchItem{s, at[k].first, pairs[k].first, d, at[k].second, pairs[k].second});
    ReorderOptions opt;
    opt.force_impl = force;
    opt.conversion = conv;
    opt.policy = CompilePolicy::wait;  // both forms on their specialised kernels
    opt.make_event = false;             // ordered by the in-order queue, as a model's load would be
    opt.batch_launch_items = launch_items;
    // Each form under `o`: one by one returns its kernels' profiled times summed (meaningful where `o` waits).
    auto one_by_one = [&](const ReorderOptions& o) {
      double kernel_ms = 0;
      for (const BatchItem& it : items)
        kernel_ms += reorder(engine, it.src, it.src_offset, it.src_layout, it.dst, it.dst_offset, it.dst_layout, o).kernel_ms;
      q.finish();
      return kernel_ms;
    };
    auto batched = [&](const ReorderOptions& o) {
      BatchResult b = reorder_batch(engine, items, o);
      q.finish();
      return b;
    };
    // Each form checked on a destination that starts as zeros: every byte it must write is compared.
    auto check = [&](const char* form) {
      std::vector<uint8_t> got(want.size());
      q.enqueueReadBuffer(d, CL_TRUE, 0, got.size(), got.data());
      for (size_t k = 0; k < items.size() && r.mismatch.empty(); ++k)
        for (size_t i = at[k].second; i < at[k].second + static_cast<size_t>(pairs[k].second.bytes()); ++i)
          if (got[i] != want[i]) {
            r.mismatch = std::string(form) + ": item " + std::to_string(k) + " (" + pairs[k].first.describe() + " -> " +
                         pairs[k].second.describe() + ") differs at byte " + std::to_string(i - at[k].second);
            break;
          }
    };
    q.enqueueFillBuffer(d, cl_uchar(0), 0, want.size());
    one_by_one(opt);
    check("one launch each");
    q.enqueueFillBuffer(d, cl_uchar(0), 0, want.size());
    const BatchResult first = batched(opt);
    check("batched");
    r.exact = r.mismatch.empty();
    r.launches = first.launches;
    r.impls = first.impls;
    for (int i = 0; i < 2; ++i) {  // warm-up: first launches, page faults
      one_by_one(opt);
      batched(opt);
    }
    cl::Buffer copy_src(ctx, CL_MEM_READ_WRITE, want.size()), copy_dst(ctx, CL_MEM_READ_WRITE, want.size());
    q.enqueueFillBuffer(copy_src, cl_uchar(1), 0, want.size());
    q.enqueueFillBuffer(copy_dst, cl_uchar(0), 0, want.size());
    q.finish();
    std::vector<double> each, batch, copy;
    for (int i = 0; i < runs; ++i) {
      const double t0 = now_ms();
      one_by_one(opt);
      const double t1 = now_ms();
      batched(opt);
      const double t2 = now_ms();
      q.enqueueCopyBuffer(copy_src, copy_dst, 0, 0, want.size());
      q.finish();
      const double t3 = now_ms();
      each.push_back(t1 - t0);
      batch.push_back(t2 - t1);
      copy.push_back(t3 - t2);
    }
    r.one_by_one_ms = median(each);
    r.batched_ms = median(batch);
    r.copy_ms = median(copy);
    r.speedup = r.one_by_one_ms / r.batched_ms;
    // Apart from the timed rounds: the host's share of a batched call, then each form's kernels alone.
    const bool profiling = q.getInfo<CL_QUEUE_PROPERTIES>() & CL_QUEUE_PROFILING_ENABLE;
    ReorderOptions timed = opt;
    timed.make_event = true;
    timed.wait = true;
    std::vector<double> enqueue, batch_k, each_k;
    for (int i = 0; i < runs; ++i) {
      const double t0 = now_ms();
      reorder_batch(engine, items, opt);
      enqueue.push_back(now_ms() - t0);
      q.finish();
      if (!profiling) continue;
      batch_k.push_back(batched(timed).kernel_ms);
      each_k.push_back(one_by_one(timed));
    }
    r.batched_enqueue_ms = median(enqueue);
    if (profiling) {
      r.batched_kernel_ms = median(batch_k);
      r.one_by_one_kernel_ms = median(each_k);
    }
  } catch (...) {
    rethrow_cl("bench of a batch of " + std::to_string(pairs.size()) + " reorders");
  }
  return r;
}

TuneResult compare_impls(const Engine& engine, const Layout& src, const Layout& dst, const Conversion& conv, int runs) {
  if (runs < 1) throw Error("compare_impls: runs must be at least 1, got " + std::to_string(runs));
  TuneResult t;
  const ReorderParams params{src, dst, engine.info(), conv};
  std::vector<BenchVariant> variants;
  for (const Verdict& v : KernelSelector::instance().explain(params)) {
    if (!v.declines.empty()) continue;
    variants.push_back(BenchVariant{v.impl, conv});
    if (v.chosen) t.ranked = v.impl;
  }
  if (variants.empty()) throw Error("no implementation accepts " + src.describe() + " -> " + dst.describe());
  t.chosen = plan_reorder(engine.info(), src, dst, "", conv).impl;
  for (const BenchVariant& v : variants) prepare(engine, {{src, dst}}, v.force, conv);  // compiles apart from the runs
  t.results = bench_variants(engine, src, dst, runs, variants);
  // The fastest by the ratio to copy (the median of each round's ratio), not by the median time: times taken
  // apart mix the machine's speed phases, and the ratios are what the choice is reported against.
  size_t fastest = 0;
  for (size_t k = 0; k < t.results.size(); ++k) {
    t.results[k].impl = variants[k].force;
    if (t.results[k].ratio > t.results[fastest].ratio) fastest = k;
  }
  t.fastest = variants[fastest].force;
  return t;
}

TuneResult tune_reorder(const Engine& engine, const Layout& src, const Layout& dst, const Conversion& conv, int runs,
                        double margin) {
  if (!(margin >= 1.0)) throw Error("tune: margin must be at least 1, got " + std::to_string(margin));
  TuneResult t = compare_impls(engine, src, dst, conv, runs);
  auto ratio_of = [&](const std::string& impl) {
    for (const BenchResult& r : t.results)
      if (r.impl == impl) return r.ratio;
    return 0.0;
  };
  t.kept = ratio_of(t.fastest) > ratio_of(t.ranked) * margin ? t.fastest : t.ranked;
  keep_choice(engine.info(), src, dst, conv, t.kept);
  t.stored = !DiskCache::instance().directory().empty();
  return t;
}

}  // namespace clreorder
