/* A runtime's model load through the C API: the weights of a few convolutions are reordered from the
 * framework's oiyx into the blocked layout the convolution kernels read (os_is_yx_isv16_osv16), compiled
 * together ahead of use, then enqueued back to back, each after its upload, the host waiting once at the end.
 *   model_load_c [DEVICE]      (DEVICE: an index or name substring as in `clreorder devices`)
 * Exit 0 when every reordered weight matches its source, 1 otherwise, 2 when there is no device. */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <stdio.h>
#include <stdlib.h>

#include "clreorder/clreorder.h"

enum { LAYERS = 4 };

static int fail(const char* what) {
  fprintf(stderr, "model_load_c: %s: %s\n", what, clreorder_last_error());
  return 1;
}

int main(int argc, char** argv) {
  const int64_t shapes[LAYERS][4] = {{64, 3, 3, 3}, {64, 64, 3, 3}, {128, 64, 1, 1}, {40, 128, 3, 3}};
  clreorder_context ctx = NULL;
  if (clreorder_context_create_default(argc > 1 ? argv[1] : NULL, &ctx) != CLREORDER_SUCCESS) {
    fprintf(stderr, "model_load_c: no device: %s\n", clreorder_last_error());
    return 2;
  }
  cl_context cl_ctx;
  cl_command_queue queue;
  clreorder_context_info(ctx, &cl_ctx, NULL, &queue);
  clreorder_layout from[LAYERS], to[LAYERS];
  for (int l = 0; l < LAYERS; ++l) {
    if (clreorder_layout_create("oiyx", "f32", 4, shapes[l], NULL, NULL, NULL, 0, &from[l]) != CLREORDER_SUCCESS ||
        clreorder_layout_create("os_is_yx_isv16_osv16", "f32", 4, shapes[l], NULL, NULL, NULL, 0, &to[l]) != CLREORDER_SUCCESS)
      return fail("layout");
  }
  if (clreorder_precompile(ctx, LAYERS, from, to) != CLREORDER_SUCCESS) return fail("precompile");

  cl_mem src[LAYERS], dst[LAYERS];
  float* weights[LAYERS];
  float* blocked[LAYERS];
  size_t src_bytes[LAYERS], dst_bytes[LAYERS];
  cl_event done[LAYERS];
  for (int l = 0; l < LAYERS; ++l) {
    cl_int err;
    clreorder_layout_bytes(from[l], &src_bytes[l]);
    clreorder_layout_bytes(to[l], &dst_bytes[l]);
    weights[l] = malloc(src_bytes[l]);
    blocked[l] = malloc(dst_bytes[l]);
    for (size_t i = 0; i < src_bytes[l] / sizeof(float); ++i) weights[l][i] = (float)(i % 1000) * 0.25f + (float)l;
    src[l] = clCreateBuffer(cl_ctx, CL_MEM_READ_ONLY, src_bytes[l], NULL, &err);
    dst[l] = clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE, dst_bytes[l], NULL, &err);
    if (err != CL_SUCCESS) return fail("clCreateBuffer");
    cl_event uploaded;
    clEnqueueWriteBuffer(queue, src[l], CL_FALSE, 0, src_bytes[l], weights[l], 0, NULL, &uploaded);
    if (clreorder_reorder(ctx, src[l], 0, from[l], dst[l], 0, to[l], 1, &uploaded, &done[l]) != CLREORDER_SUCCESS)
      return fail("reorder");
    clReleaseEvent(uploaded);
  }
  for (int l = 0; l < LAYERS; ++l) clEnqueueReadBuffer(queue, dst[l], CL_FALSE, 0, dst_bytes[l], blocked[l], 1, &done[l], NULL);
  clFinish(queue);

  /* os_is_yx_isv16_osv16: [o/16][i/16][y][x][i%16][o%16], both blocks padded with zeros. */
  int bad = 0;
  for (int l = 0; l < LAYERS; ++l) {
    const int64_t O = shapes[l][0], I = shapes[l][1], Y = shapes[l][2], X = shapes[l][3], IS = (I + 15) / 16;
    for (int64_t o = 0; o < (O + 15) / 16 * 16; ++o)
      for (int64_t i = 0; i < IS * 16; ++i)
        for (int64_t y = 0; y < Y; ++y)
          for (int64_t x = 0; x < X; ++x) {
            const float want = o < O && i < I ? weights[l][((o * I + i) * Y + y) * X + x] : 0.0f;
            bad += blocked[l][((((o / 16) * IS + i / 16) * Y + y) * X + x) * 256 + (i % 16) * 16 + o % 16] != want;
          }
    clReleaseEvent(done[l]);
    clReleaseMemObject(src[l]);
    clReleaseMemObject(dst[l]);
    clreorder_layout_release(from[l]);
    clreorder_layout_release(to[l]);
    free(weights[l]);
    free(blocked[l]);
  }
  clreorder_context_release(ctx);
  printf("model_load_c: %d layers reordered, %s\n", LAYERS, bad ? "MISMATCH" : "every weight in place");
  return bad ? 1 : 0;
}
