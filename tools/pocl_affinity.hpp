// Pinning PoCL's worker threads in our own programs (the CLI and the perf drivers), never in the library: a
// library inside someone else's process leaves its environment alone.
//
// Why: PoCL's CPU driver starts one worker thread per core and lets the scheduler place them. On this
// project's 2-vCPU hosts about half of all `clreorder bench` processes ran both workers on one core throughout
// (likely the scheduler placing a woken worker beside the thread that woke it), and in a longer process the
// placement changed from one stretch to the next: the copy kernel of 6.4 MB then ran at 24-25 GB/s instead of
// 42-47, reorders likewise, so a benchmark's figures, and its ratios where a case is bound by something else
// than the copy is, depended on the process (NOTES, "PoCL's workers on one core"). POCL_AFFINITY=1 (PoCL's
// own switch) pins worker i to CPU i: 6 of 6 processes then ran at 42-48 GB/s.
#pragma once

#include <cstdlib>

#if defined(__linux__)
#include <sched.h>
#include <unistd.h>
#endif

namespace clreorder_tools {

/// Sets POCL_AFFINITY=1 for this process unless it is set already (a caller's 0 keeps the scheduler's
/// placement), where pinning worker i to CPU i is valid: Linux, and the process may run on exactly CPUs
/// 0..n-1 of n online ones (PoCL starts a worker per online CPU by default, and a worker pinned outside the
/// process's CPUs would fail). Call before the first OpenCL call, while the process has one thread: PoCL reads it when
/// its workers start, and setenv() is not safe beside other threads.
inline void pin_pocl_workers() {
#if defined(__linux__)
  if (std::getenv("POCL_AFFINITY")) return;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online < 1 || online > CPU_SETSIZE || CPU_COUNT(&allowed) != online) return;
  for (long c = 0; c < online; ++c)
    if (!CPU_ISSET(static_cast<int>(c), &allowed)) return;
  setenv("POCL_AFFINITY", "1", 0);
#endif
}

}  // namespace clreorder_tools
