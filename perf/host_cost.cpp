// clreorder_host_cost: where a cached reorder() call's host time goes, step by step, on one device. A small
// reorder's wall time on a fast device is its host path plus the launch latency (an H100 ran a 288-element
// reorder in 21 us where the copy kernel took 11), so each step the call makes is timed alone, in blocks of
// calls between clFinish()es, and reported as the median microseconds per call:
//
//   clreorder_host_cost [--from bfyx --to byxf --shape 1,16,4,4 --dtype f32 --blocks 40 --per-block 100 --step NAME]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "clreorder/error.hpp"
#include "clreorder/format.hpp"
#include "clreorder/kernel_selector.hpp"
#include "clreorder/reference.hpp"
#include "clreorder/reorder.hpp"
#include "clreorder/runtime.hpp"
#include "../tools/pocl_affinity.hpp"

#include "median.hpp"

using namespace clreorder;

namespace {

using clreorder_perf::median;

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  clreorder_tools::pin_pocl_workers();  // before any OpenCL call (tools/pocl_affinity.hpp says why)
  std::string from = "bfyx", to = "byxf", shape = "1,16,4,4", dtype = "f32", device;
  int blocks = 40, per_block = 100;
  CLI::App app("clreorder_host_cost: a cached reorder() call's host time, step by step", "clreorder_host_cost");
  app.add_option("--from", from, "source format");
  app.add_option("--to", to, "destination format");
  app.add_option("--shape", shape, "logical dims, comma separated");
  app.add_option("--dtype", dtype, "element type of both sides");
  app.add_option("--device", device, "device choice (as CLREORDER_DEVICE)");
  app.add_option("--blocks", blocks, "timed blocks (the median is reported)")->check(CLI::PositiveNumber);
  app.add_option("--per-block", per_block, "calls per block")->check(CLI::PositiveNumber);
  std::string only;
  app.add_option("--step", only, "time only the steps whose name contains this (e.g. under perf record)");
  CLI11_PARSE(app, argc, argv);
  try {
    const Engine engine = Engine::open(device);
    const DataType t = parse_data_type(dtype);
    const Layout src(format_from_name(from), t, parse_dims(shape)), dst(format_from_name(to), t, parse_dims(shape));
    const cl::Context& ctx = engine.context();
    const cl::CommandQueue& q = engine.queue();
    const std::vector<uint8_t> pattern = make_pattern(src);
    cl::Buffer s(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, pattern.size(), const_cast<uint8_t*>(pattern.data()));
    cl::Buffer d(ctx, CL_MEM_READ_WRITE, static_cast<size_t>(dst.bytes()));
    ReorderOptions opt;
    opt.wait = false;
    opt.policy = CompilePolicy::wait;
    const std::string impl = reorder(engine, s, 0, src, d, 0, dst, opt).impl;
    q.finish();
    ReorderOptions quiet = opt;
    quiet.make_event = false;
    const KernelData kd = plan_reorder(engine.info(), src, dst, impl);
    KernelHandle h = ProgramCache::instance().handle(ctx, engine.device(), kd.source);
    const cl::Buffer plans = plans_buffer(ctx, kd);
    {
      LockedKernel lk(h);
      set_reorder_args(lk.kernel, s, 0, d, 0, plans, opt.param_buffers, opt.compensation);
    }
    const KernelData copy_kd = copy_kernel(engine.info(), static_cast<size_t>(dst.bytes()));
    KernelHandle ch = ProgramCache::instance().handle(ctx, engine.device(), copy_kd.source);
    {
      LockedKernel lk(ch);
      lk.kernel.setArg(0, s);
      lk.kernel.setArg(1, d);
      lk.kernel.setArg(2, static_cast<cl_ulong>(dst.bytes()));
    }
    // Each step: `per_block` calls timed together, then clFinish() outside the time (unless the step is a
    // finished launch itself, timed call by call).
    struct Step {
      const char* name;
      std::function<void()> call;
      bool finish_each;
    };
    // The same kernel on a second queue of the context without profiling: whether an event's cost is the
    // timestamps' or the event's own.
    const cl::CommandQueue plain_q(ctx, engine.device(), 0);
    cl_context qc = nullptr;
    size_t size = 0;
    const std::vector<Step> steps = {
        {"clGetCommandQueueInfo(CONTEXT)", [&] { clGetCommandQueueInfo(q(), CL_QUEUE_CONTEXT, sizeof qc, &qc, nullptr); }, false},
        {"clGetMemObjectInfo(SIZE)", [&] { clGetMemObjectInfo(s(), CL_MEM_SIZE, sizeof size, &size, nullptr); }, false},
        {"clSetKernelArg(buffer)", [&] { clSetKernelArg(h.kernel(), 0, sizeof(cl_mem), &s()); }, false},
        {"lock + 4 arguments", [&] {
           LockedKernel lk(h);
           set_reorder_args(lk.kernel, s, 0, d, 0, plans, opt.param_buffers, opt.compensation);
         }, false},
        {"enqueue, no event", [&] { q.enqueueNDRangeKernel(h.kernel, cl::NullRange, kd.global_range(), kd.local_range()); }, false},
        {"enqueue with an event", [&] {
           cl::Event e;
           q.enqueueNDRangeKernel(h.kernel, cl::NullRange, kd.global_range(), kd.local_range(), nullptr, &e);
         }, false},
        {"enqueue with an event, no profiling", [&] {
           cl::Event e;
           plain_q.enqueueNDRangeKernel(h.kernel, cl::NullRange, kd.global_range(), kd.local_range(), nullptr, &e);
         }, false},
        {"enqueue, no event, no profiling", [&] {
           plain_q.enqueueNDRangeKernel(h.kernel, cl::NullRange, kd.global_range(), kd.local_range());
         }, false},
        {"reorder(), not waited", [&] { reorder(engine, s, 0, src, d, 0, dst, opt); }, false},
        {"reorder(), no event", [&] { reorder(engine, s, 0, src, d, 0, dst, quiet); }, false},
        {"enqueue + clFinish", [&] {
           q.enqueueNDRangeKernel(h.kernel, cl::NullRange, kd.global_range(), kd.local_range());
           q.finish();
         }, true},
        {"copy kernel + clFinish", [&] {
           LockedKernel lk(ch);
           lk.kernel.setArg(0, s);
           lk.kernel.setArg(1, d);
           lk.kernel.setArg(2, static_cast<cl_ulong>(dst.bytes()));
           q.enqueueNDRangeKernel(lk.kernel, cl::NullRange, copy_kd.global_range(), copy_kd.local_range());
           q.finish();
         }, true},
        {"reorder() + clFinish", [&] {
           reorder(engine, s, 0, src, d, 0, dst, opt);
           q.finish();
         }, true},
        {"reorder(), no event + clFinish", [&] {
           reorder(engine, s, 0, src, d, 0, dst, quiet);
           q.finish();
         }, true},
    };
    std::printf("%s: %s -> %s %s %s (%s), %d blocks of %d calls; median us per call\n", engine.info().name.c_str(),
                src.describe().c_str(), dst.describe().c_str(), shape.c_str(), dtype.c_str(), impl.c_str(), blocks, per_block);
    // Steps interleaved block by block: a phase of a noisy machine touches all of them alike.
    std::vector<std::vector<double>> us(steps.size());
    auto chosen = [&](size_t k) { return only.empty() || std::string(steps[k].name).find(only) != std::string::npos; };
    for (int b = 0; b < blocks; ++b)
      for (size_t k = 0; k < steps.size(); ++k) {
        if (!chosen(k)) continue;
        const double t0 = now_us();
        for (int i = 0; i < per_block; ++i) steps[k].call();
        us[k].push_back((now_us() - t0) / per_block);
        if (!steps[k].finish_each) {
          q.finish();
          plain_q.finish();
        }
      }
    for (size_t k = 0; k < steps.size(); ++k)
      if (chosen(k)) std::printf("  %-36s %8.2f\n", steps[k].name, median(us[k]));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "clreorder_host_cost: %s\n", e.what());
    return 1;
  }
}
