// clreorder: timing a reorder against the device's copy bandwidth, measured in the same run.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "clreorder/layout.hpp"
#include "clreorder/runtime.hpp"

namespace clreorder {

/// Medians of one reorder and of two copies of the destination's bytes (clEnqueueCopyBuffer and our copy
/// kernel, copy_kernel()), timed in turn in the same run.
struct BenchResult {
  std::string impl;            ///< implementation that ran
  int runs = 0;                ///< timed runs of each (after warm-up)
  double median_ms = 0;        ///< reorder, enqueue to clFinish
  double kernel_ms = 0;        ///< reorder, event-profiled kernel time (median)
  double copy_ms = 0;          ///< clEnqueueCopyBuffer of dst.bytes(), enqueue to clFinish
  double copy_kernel_ms = 0;   ///< copy_kernel() of dst.bytes(), enqueue to clFinish
  double gbps_logical = 0;     ///< logical elements x (src + dst element size) / median_ms
  double gbps_physical = 0;    ///< (src.bytes() + dst.bytes()) / median_ms
  double copy_gbps = 0;        ///< 2 x dst.bytes() / copy_ms
  double copy_kernel_gbps = 0; ///< 2 x dst.bytes() / copy_kernel_ms
  double best_copy_gbps = 0;   ///< the faster of the two copies
  /// To the best copy this device has: the median over rounds of that round's gbps_physical over the GB/s of
  /// the faster copy, the one of the lower median (ratio_to_faster_copy(): each round's reorder against the
  /// copy timed beside it, so the machine's speed changing between rounds cancels; close to gbps_physical /
  /// best_copy_gbps where it does not change)
  double ratio = 0;
  double ratio_copy_buffer = 0;  ///< the same to clEnqueueCopyBuffer alone
  double enqueue_us = 0;       ///< host time of one cached reorder() call without waiting (lookup, args, enqueue)
  double bare_enqueue_us = 0;  ///< host time of one bare clEnqueueNDRangeKernel of the same kernel
  /// One JSON object with every field and both layouts.
  std::string json(const Layout& src, const Layout& dst) const;
};

/// The median over timed rounds of scale x copy time / reorder time, against whichever of the two copies has
/// the lower median (`copy` for both: against that one alone); scale is the reorder's bytes over the copy's.
/// Throws clreorder::Error unless the three hold the same number of rounds, at least one.
double ratio_to_faster_copy(double scale, const std::vector<double>& wall, const std::vector<double>& copy,
                            const std::vector<double>& copy_kernel);

/// Times reorder(src -> dst) on the engine's queue: warm-up, then `runs` rounds of reorder, clEnqueueCopyBuffer
/// and copy kernel.
BenchResult bench_reorder(const Engine& engine, const Layout& src, const Layout& dst, const std::string& force = "",
                          int runs = 25, const Conversion& conv = {});

/// The same pair under several conversions (a plain one beside its fused forms), interleaved launch by launch
/// in every round and each against the same copies: their ratios differ by what the conversions cost, not by
/// when the machine was busy. One result per conversion, in order.
std::vector<BenchResult> bench_reorders(const Engine& engine, const Layout& src, const Layout& dst, const std::string& force,
                                        int runs, const std::vector<Conversion>& convs);

/// One form of a reorder for bench_variants(): the implementation forced ("": the selector's choice) and the
/// conversion.
struct BenchVariant {
  std::string force;      ///< implementation name, or "" for the selector's choice
  Conversion conversion;  ///< the element conversion (fused arithmetic, modes)
};

/// bench_reorders() over any forms of the pair, implementations as well as conversions, interleaved the same
/// way: what tells whether the selector's choice is the fastest implementation on this device.
std::vector<BenchResult> bench_variants(const Engine& engine, const Layout& src, const Layout& dst, int runs,
                                        const std::vector<BenchVariant>& variants);

/// Every implementation that accepts a pair, timed side by side (compare_impls()), and what tune_reorder()
/// kept of it.
struct TuneResult {
  std::vector<BenchResult> results;  ///< each accepting implementation (BenchResult::impl), in the selector's order
  std::string ranked;                ///< the accepting implementation of lowest rank: the choice with none kept
  std::string chosen;                ///< what the selector ran before: the kept choice where one was, else `ranked`
  std::string fastest;               ///< the highest ratio to copy (BenchResult::ratio)
  std::string kept;                  ///< tune_reorder(): the pair's choice from now on; compare_impls(): ""
  bool stored = false;               ///< tune_reorder(): also in the persistent kernel cache (false when it is off)
};

/// Times every implementation that accepts the pair on the engine's device, forced, interleaved launch by
/// launch against the same copies (bench_variants()); changes nothing.
TuneResult compare_impls(const Engine& engine, const Layout& src, const Layout& dst, const Conversion& conv = {}, int runs = 9);

/// compare_impls(), then keeps the fastest as the pair's choice on this device (keep_choice(): this process
/// and the persistent cache) where its ratio to copy beats the ranked choice's by `margin` (1.1: 10%, so that a
/// noisy run does not move a choice), else the ranked one. What a runtime calls once per pair at install or
/// first load on a device the fixed ranks fit badly; later reorders of the pair compile and run the kept one.
TuneResult tune_reorder(const Engine& engine, const Layout& src, const Layout& dst, const Conversion& conv = {},
                        int runs = 9, double margin = 1.1);

/// Medians of a list of reorders run one launch each and as one batch (reorder_batch()), timed alternately.
struct BatchBenchResult {
  size_t reorders = 0;        ///< items in the list
  size_t launches = 0;        ///< kernel launches of the batch
  int runs = 0;               ///< timed runs of each form (after warm-up)
  int64_t bytes = 0;          ///< source and destination bytes of all items
  double one_by_one_ms = 0;   ///< every item by reorder(), enqueue of the first to clFinish
  double batched_ms = 0;      ///< reorder_batch() of the list, enqueue to clFinish
  double speedup = 0;         ///< one_by_one_ms / batched_ms
  /// clEnqueueCopyBuffer of the destinations' bytes (one blob), timed alongside: the bandwidth floor that
  /// bounds the batch once launches no longer count.
  double copy_ms = 0;
  /// Where the batched time goes (medians of rounds after the timed ones, each form run blocking with its
  /// events profiled): the batch's kernel time summed over its launches, the items' own kernels summed one
  /// launch each, and the host's time in reorder_batch() until it returns (keys, checks, setting the
  /// arguments, the enqueue). -1 where the queue keeps no profiling.
  double batched_kernel_ms = -1;
  double one_by_one_kernel_ms = -1;  ///< the items' own kernels, summed (see batched_kernel_ms)
  double batched_enqueue_ms = 0;     ///< reorder_batch()'s host time until it returns (see batched_kernel_ms)
  bool exact = false;         ///< every item's destination bytes equal the host reference's, in both forms
  std::string mismatch;       ///< the first difference when not exact
  std::vector<std::string> impls;  ///< per item, the implementation inside the batch
  /// One JSON object with every field.
  std::string json() const;
};

/// Times `pairs` as a model load runs them: every source packed into one buffer and every destination into
/// another (offsets 64-byte aligned), run one reorder() per item then as one reorder_batch(), `runs` times
/// each after warm-up; checks every destination byte of both forms against the host reference. launch_items:
/// the batch's most items per launch (ReorderOptions::batch_launch_items).
BatchBenchResult bench_batch(const Engine& engine, const std::vector<std::pair<Layout, Layout>>& pairs,
                             const std::string& force = "", int runs = 25, const Conversion& conv = {},
                             size_t launch_items = 0);

}  // namespace clreorder
