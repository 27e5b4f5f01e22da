// A kernel that reads one element past its buffer and races on another: tests/oclgrind_check.sh must fail on
// it (ctest runs it with WILL_FAIL), which proves that the Oclgrind runs of the suite can fail at all.
#include <cstdio>

#include "clreorder/cl.hpp"

int main() {
  cl::Context ctx(CL_DEVICE_TYPE_ALL);
  const cl::Device dev = ctx.getInfo<CL_CONTEXT_DEVICES>().front();
  cl::CommandQueue queue(ctx, dev);
  cl::Program program(ctx, "__kernel void past_the_end(__global float* a) { a[get_global_id(0)] = a[get_global_id(0) + 1]; }");
  program.build({dev}, "-cl-std=CL1.2");
  cl::Buffer buf(ctx, CL_MEM_READ_WRITE, 4 * sizeof(float));
  cl::Kernel kernel(program, "past_the_end");
  kernel.setArg(0, buf);
  queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(4));
  queue.finish();
  std::printf("ran a kernel that reads past its buffer\n");
  return 0;
}
