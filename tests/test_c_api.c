/* The C API from C99: versions, layouts, a reorder with a wait list and an event checked element by element,
 * a round trip, precompile, cache settings and statistics, and bad inputs, each refused with a status and a
 * message naming the value, with the destination left as it was. Exit 0 on success, 1 on a failure, 77 when
 * there is no OpenCL device (a failure under CI=true, as in every device test). */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include "clreorder/clreorder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      fprintf(stderr, "%s:%d: failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, \
              clreorder_last_error());                                              \
      ++failures;                                                                   \
    }                                                                               \
  } while (0)

/* The call failed with `status` and its message contains `text`. */
static void expect_error(clreorder_status got, clreorder_status want, const char* text, int line) {
  if (got != want || strstr(clreorder_last_error(), text) == NULL) {
    fprintf(stderr, "test_c_api.c:%d: expected status %d naming '%s', got %d: '%s'\n", line, (int)want, text, (int)got,
            clreorder_last_error());
    ++failures;
  }
}
#define EXPECT_ERROR(call, status, text) expect_error((call), (status), (text), __LINE__)

int main(void) {
  CHECK(strcmp(clreorder_version(), CLREORDER_VERSION_STRING) == 0);
  CHECK(strcmp(clreorder_last_error(), "") == 0);
  CHECK(clreorder_set_cache_directory("off") == CLREORDER_SUCCESS);
  char dir[64];
  size_t dir_length = 99;
  CHECK(clreorder_cache_directory(dir, sizeof dir, &dir_length) == CLREORDER_SUCCESS && dir_length == 0 && dir[0] == 0);

  clreorder_context ctx = NULL;
  if (clreorder_context_create_default(NULL, &ctx) != CLREORDER_SUCCESS) {
    const char* ci = getenv("CI");
    fprintf(stderr, "no OpenCL device: %s\n", clreorder_last_error());
    return ci && strcmp(ci, "true") == 0 ? 1 : 77;
  }
  cl_context cl_ctx = NULL;
  cl_device_id device = NULL;
  cl_command_queue queue = NULL;
  CHECK(clreorder_context_info(ctx, &cl_ctx, &device, &queue) == CLREORDER_SUCCESS && cl_ctx && device && queue);
  CHECK(clreorder_context_set_policy(ctx, CLREORDER_POLICY_WAIT) == CLREORDER_SUCCESS);

  /* bfyx f32 2x19x3x5 -> b_fs_yx_fsv16 (oneDNN's nChw16c spelling) */
  enum { B = 2, F = 19, Y = 3, X = 5, FS = (F + 15) / 16 };
  const int64_t dims[4] = {B, F, Y, X};
  clreorder_layout plain = NULL, blocked = NULL;
  CHECK(clreorder_layout_create("bfyx", "f32", 4, dims, NULL, NULL, NULL, 0, &plain) == CLREORDER_SUCCESS);
  CHECK(clreorder_layout_create("nChw16c", "f32", 4, dims, NULL, NULL, NULL, 0, &blocked) == CLREORDER_SUCCESS);
  size_t plain_bytes = 0, blocked_bytes = 0, length = 0;
  CHECK(clreorder_layout_bytes(plain, &plain_bytes) == CLREORDER_SUCCESS && plain_bytes == sizeof(float) * B * F * Y * X);
  CHECK(clreorder_layout_bytes(blocked, &blocked_bytes) == CLREORDER_SUCCESS &&
        blocked_bytes == sizeof(float) * B * FS * 16 * Y * X);
  char text[16];
  CHECK(clreorder_layout_describe(plain, text, sizeof text, &length) == CLREORDER_SUCCESS && length > 15 &&
        strlen(text) == 15 && strncmp(text, "bfyx f32 2x19x3", 15) == 0);

  float host[B * F * Y * X];
  for (int i = 0; i < B * F * Y * X; ++i) host[i] = (float)i + 0.5f;
  cl_int err = CL_SUCCESS;
  cl_mem src = clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE, plain_bytes, NULL, &err);
  cl_mem dst = clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE, blocked_bytes, NULL, &err);
  cl_mem back = clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE, plain_bytes, NULL, &err);
  CHECK(err == CL_SUCCESS);
  cl_event written = NULL, reordered = NULL, returned = NULL;
  CHECK(clEnqueueWriteBuffer(queue, src, CL_FALSE, 0, plain_bytes, host, 0, NULL, &written) == CL_SUCCESS);
  CHECK(clreorder_reorder(ctx, src, 0, plain, dst, 0, blocked, 1, &written, &reordered) == CLREORDER_SUCCESS);
  CHECK(reordered != NULL);
  CHECK(clreorder_reorder(ctx, dst, 0, blocked, back, 0, plain, 1, &reordered, &returned) == CLREORDER_SUCCESS);
  float out[B * FS * 16 * Y * X], round[B * F * Y * X];
  CHECK(clEnqueueReadBuffer(queue, dst, CL_TRUE, 0, blocked_bytes, out, 1, &reordered, NULL) == CL_SUCCESS);
  CHECK(clEnqueueReadBuffer(queue, back, CL_TRUE, 0, plain_bytes, round, 1, &returned, NULL) == CL_SUCCESS);
  int wrong = 0;
  for (int b = 0; b < B; ++b)
    for (int f = 0; f < FS * 16; ++f)
      for (int y = 0; y < Y; ++y)
        for (int x = 0; x < X; ++x) {
          const float want = f < F ? host[((b * F + f) * Y + y) * X + x] : 0.0f; /* the block's tail is zero */
          wrong += out[(((b * FS + f / 16) * Y + y) * X + x) * 16 + f % 16] != want;
        }
  CHECK(wrong == 0);
  CHECK(memcmp(round, host, sizeof host) == 0);
  clReleaseEvent(written);
  clReleaseEvent(reordered);
  clReleaseEvent(returned);

  /* A batch: the source twice into one buffer, one launch, both copies as the single reorder wrote them. */
  cl_mem pair = clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE, 2 * blocked_bytes, NULL, &err);
  CHECK(err == CL_SUCCESS);
  clreorder_batch_item items[2] = {{src, 0, plain, pair, 0, blocked}, {src, 0, plain, pair, blocked_bytes, blocked}};
  cl_event batched = NULL;
  size_t launches = 0;
  CHECK(clreorder_reorder_batch(ctx, 2, items, 0, NULL, &batched, &launches) == CLREORDER_SUCCESS);
  CHECK(batched != NULL && launches == 1);
  float twice[2 * B * FS * 16 * Y * X];
  CHECK(clEnqueueReadBuffer(queue, pair, CL_TRUE, 0, 2 * blocked_bytes, twice, 1, &batched, NULL) == CL_SUCCESS);
  CHECK(memcmp(twice, out, sizeof out) == 0 && memcmp(twice + B * FS * 16 * Y * X, out, sizeof out) == 0);
  clReleaseEvent(batched);
  /* Refused: overlapping destinations, a NULL layout, no items; the buffer keeps its bytes. */
  items[1].dst_offset = 4;
  cl_event refused = NULL;
  EXPECT_ERROR(clreorder_reorder_batch(ctx, 2, items, 0, NULL, &refused, NULL), CLREORDER_INVALID_VALUE,
               "batch item 0's destination");
  items[1].dst_offset = blocked_bytes;
  items[1].src_layout = NULL;
  EXPECT_ERROR(clreorder_reorder_batch(ctx, 2, items, 0, NULL, &refused, NULL), CLREORDER_INVALID_VALUE,
               "batch item 1 holds a NULL layout");
  EXPECT_ERROR(clreorder_reorder_batch(ctx, 2, NULL, 0, NULL, &refused, NULL), CLREORDER_INVALID_ARGUMENT, "items");
  CHECK(refused == NULL);
  float after_refusal[2 * B * FS * 16 * Y * X];
  CHECK(clEnqueueReadBuffer(queue, pair, CL_TRUE, 0, 2 * blocked_bytes, after_refusal, 0, NULL, NULL) == CL_SUCCESS);
  CHECK(memcmp(after_refusal, twice, sizeof twice) == 0);
  clReleaseMemObject(pair);

  /* Precompile a pair of another shape, then the counters. */
  const int64_t other_dims[4] = {1, 33, 2, 2};
  clreorder_layout a = NULL, b = NULL;
  CHECK(clreorder_layout_create("bfyx", "f16", 4, other_dims, NULL, NULL, NULL, 0, &a) == CLREORDER_SUCCESS);
  CHECK(clreorder_layout_create("b_fs_yx_fsv32", "f16", 4, other_dims, NULL, NULL, NULL, 0, &b) == CLREORDER_SUCCESS);
  clreorder_cache_stats before, after;
  CHECK(clreorder_get_cache_stats(&before) == CLREORDER_SUCCESS);
  CHECK(clreorder_precompile(ctx, 1, &a, &b) == CLREORDER_SUCCESS);
  CHECK(clreorder_get_cache_stats(&after) == CLREORDER_SUCCESS && after.kernels_built == before.kernels_built + 1);

  /* Tuning keeps one of the implementations (the cache is off: for this process); bad runs are refused. */
  char kept[32] = "";
  size_t kept_length = 0;
  CHECK(clreorder_tune(ctx, a, b, NULL, 2, kept, sizeof kept, &kept_length) == CLREORDER_SUCCESS);
  CHECK(kept_length > 0 && kept_length == strlen(kept));
  CHECK(strcmp(kept, "local") == 0 || strcmp(kept, "tiled") == 0 || strcmp(kept, "staged") == 0 ||
        strcmp(kept, "lanes") == 0 || strcmp(kept, "generic") == 0 || strcmp(kept, "agnostic") == 0);
  EXPECT_ERROR(clreorder_tune(ctx, a, b, NULL, 0, NULL, 0, NULL), CLREORDER_INVALID_VALUE, "runs must be at least 1, got 0");
  EXPECT_ERROR(clreorder_tune(ctx, NULL, b, NULL, 2, NULL, 0, NULL), CLREORDER_INVALID_ARGUMENT, "src_layout");

  /* Attributes: OpenVINO's truncating f32 -> u8 (toward zero, wrapped), alone and in a batch, and precompiled. */
  {
    const float values[9] = {1.0f, -2.5f, 3.1f, -4.0f, 5.03f, -6.99f, 7.0f, -8.0f, 9.0f};
    const unsigned char want[9] = {1, 254, 3, 252, 5, 250, 7, 248, 9};
    const int64_t row[4] = {1, 1, 1, 9};
    clreorder_layout f32_row = NULL, u8_row = NULL;
    clreorder_attr attr = NULL;
    CHECK(clreorder_layout_create("bfyx", "f32", 4, row, NULL, NULL, NULL, 0, &f32_row) == CLREORDER_SUCCESS);
    CHECK(clreorder_layout_create("bfyx", "u8", 4, row, NULL, NULL, NULL, 0, &u8_row) == CLREORDER_SUCCESS);
    CHECK(clreorder_attr_create(&attr) == CLREORDER_SUCCESS);
    CHECK(clreorder_attr_set_rounding(attr, "toward-zero") == CLREORDER_SUCCESS);
    CHECK(clreorder_attr_set_overflow(attr, "wrap") == CLREORDER_SUCCESS);
    EXPECT_ERROR(clreorder_attr_set_rounding(attr, "upward"), CLREORDER_INVALID_VALUE, "'upward'");
    EXPECT_ERROR(clreorder_attr_set_overflow(attr, "clip"), CLREORDER_INVALID_VALUE, "'clip'");
    EXPECT_ERROR(clreorder_attr_set_overflow(NULL, "wrap"), CLREORDER_INVALID_ARGUMENT, "attr");
    CHECK(clreorder_precompile_attr(ctx, 1, &f32_row, &u8_row, attr) == CLREORDER_SUCCESS);
    cl_mem in = clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof values, (void*)values, &err);
    cl_mem bytes = clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE, 2 * sizeof want, NULL, &err);
    CHECK(err == CL_SUCCESS);
    unsigned char got[2 * 9];
    CHECK(clreorder_reorder_attr(ctx, in, 0, f32_row, bytes, 0, u8_row, attr, 0, NULL, NULL) == CLREORDER_SUCCESS);
    CHECK(clEnqueueReadBuffer(queue, bytes, CL_TRUE, 0, sizeof want, got, 0, NULL, NULL) == CL_SUCCESS);
    CHECK(memcmp(got, want, sizeof want) == 0);
    /* The defaults (NULL attributes): rounded to nearest even and saturated, negatives become 0. */
    CHECK(clreorder_reorder_attr(ctx, in, 0, f32_row, bytes, 0, u8_row, NULL, 0, NULL, NULL) == CLREORDER_SUCCESS);
    CHECK(clEnqueueReadBuffer(queue, bytes, CL_TRUE, 0, sizeof want, got, 0, NULL, NULL) == CL_SUCCESS);
    CHECK(got[1] == 0 && got[2] == 3 && got[5] == 0);
    clreorder_batch_item two[2] = {{in, 0, f32_row, bytes, 0, u8_row}, {in, 0, f32_row, bytes, sizeof want, u8_row}};
    CHECK(clreorder_reorder_batch_attr(ctx, 2, two, attr, 0, NULL, NULL, NULL) == CLREORDER_SUCCESS);
    CHECK(clEnqueueReadBuffer(queue, bytes, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL) == CL_SUCCESS);
    CHECK(memcmp(got, want, sizeof want) == 0 && memcmp(got + 9, want, sizeof want) == 0);
    /* i4, two to a byte, low nibble first: {1, -2, 3, -4, 5, -6, 7, -8, -7 (9 wrapped)}; the last byte's high
       half is no element's and keeps its 0x50, alone and as a batch's second item. */
    {
      const unsigned char want4[5] = {0xe1, 0xc3, 0xa5, 0x87, 0x59};
      unsigned char init4[10] = {0, 0, 0, 0, 0x50, 0, 0, 0, 0, 0x50}, got4[10];
      clreorder_layout i4_row = NULL;
      size_t i4_bytes = 0;
      CHECK(clreorder_layout_create("bfyx", "i4", 4, row, NULL, NULL, NULL, 0, &i4_row) == CLREORDER_SUCCESS);
      CHECK(clreorder_layout_bytes(i4_row, &i4_bytes) == CLREORDER_SUCCESS && i4_bytes == 5);
      cl_mem nibbles = clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof init4, init4, &err);
      CHECK(err == CL_SUCCESS);
      CHECK(clreorder_reorder_attr(ctx, in, 0, f32_row, nibbles, 0, i4_row, attr, 0, NULL, NULL) == CLREORDER_SUCCESS);
      clreorder_batch_item mixed[2] = {{in, 0, f32_row, bytes, 0, u8_row}, {in, 0, f32_row, nibbles, 5, i4_row}};
      CHECK(clreorder_reorder_batch_attr(ctx, 2, mixed, attr, 0, NULL, NULL, NULL) == CLREORDER_SUCCESS);
      CHECK(clEnqueueReadBuffer(queue, nibbles, CL_TRUE, 0, sizeof got4, got4, 0, NULL, NULL) == CL_SUCCESS);
      CHECK(memcmp(got4, want4, 5) == 0 && memcmp(got4 + 5, want4, 5) == 0);
      clReleaseMemObject(nibbles);
      clreorder_layout_release(i4_row);
    }
    clReleaseMemObject(in);
    clReleaseMemObject(bytes);
    clreorder_attr_release(attr);
    clreorder_attr_release(NULL);
    clreorder_layout_release(f32_row);
    clreorder_layout_release(u8_row);
  }

  /* The padding policy: "keep" leaves a blocked tail's lanes as they were; the default zeroes them. */
  {
    const int64_t small_dims[4] = {1, 3, 1, 2};
    const float three[6] = {1, 2, 3, 4, 5, 6};
    float lanes[32];
    clreorder_layout plain = NULL, blocked = NULL;
    clreorder_attr keep = NULL;
    CHECK(clreorder_layout_create("bfyx", "f32", 4, small_dims, NULL, NULL, NULL, 0, &plain) == CLREORDER_SUCCESS);
    CHECK(clreorder_layout_create("b_fs_yx_fsv16", "f32", 4, small_dims, NULL, NULL, NULL, 0, &blocked) == CLREORDER_SUCCESS);
    CHECK(clreorder_attr_create(&keep) == CLREORDER_SUCCESS);
    CHECK(clreorder_attr_set_padding(keep, "keep") == CLREORDER_SUCCESS);
    EXPECT_ERROR(clreorder_attr_set_padding(keep, "ones"), CLREORDER_INVALID_VALUE, "'ones'");
    for (int i = 0; i < 32; ++i) lanes[i] = -7.0f;
    cl_mem in = clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof three, (void*)three, &err);
    cl_mem out = clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof lanes, lanes, &err);
    CHECK(err == CL_SUCCESS);
    CHECK(clreorder_reorder_attr(ctx, in, 0, plain, out, 0, blocked, keep, 0, NULL, NULL) == CLREORDER_SUCCESS);
    CHECK(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof lanes, lanes, 0, NULL, NULL) == CL_SUCCESS);
    /* x = 0 then x = 1, 16 lanes each: features 0..2 are the values, the 13 tail lanes still -7. */
    CHECK(lanes[0] == 1 && lanes[1] == 3 && lanes[2] == 5 && lanes[16] == 2 && lanes[18] == 6);
    CHECK(lanes[3] == -7.0f && lanes[15] == -7.0f && lanes[19] == -7.0f && lanes[31] == -7.0f);
    CHECK(clreorder_reorder_attr(ctx, in, 0, plain, out, 0, blocked, NULL, 0, NULL, NULL) == CLREORDER_SUCCESS);
    CHECK(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof lanes, lanes, 0, NULL, NULL) == CL_SUCCESS);
    CHECK(lanes[0] == 1 && lanes[3] == 0.0f && lanes[31] == 0.0f);
    /* Fused arithmetic: (x - sub[f]) * 10, per feature and per tensor; a list that does not fit the axis is
     * refused when the reorder runs, naming its count, and writes nothing. */
    const float sub[3] = {1, 2, 3}, ten = 10;
    CHECK(clreorder_attr_set_param(keep, "sub", sub, 3, 1) == CLREORDER_SUCCESS);
    CHECK(clreorder_attr_set_param(keep, "mul", &ten, 1, -1) == CLREORDER_SUCCESS);
    EXPECT_ERROR(clreorder_attr_set_param(keep, "scale", &ten, 1, -1), CLREORDER_INVALID_VALUE, "'scale'");
    CHECK(clreorder_reorder_attr(ctx, in, 0, plain, out, 0, blocked, keep, 0, NULL, NULL) == CLREORDER_SUCCESS);
    CHECK(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof lanes, lanes, 0, NULL, NULL) == CL_SUCCESS);
    CHECK(lanes[0] == 0 && lanes[1] == 10 && lanes[2] == 20 && lanes[16] == 10 && lanes[17] == 20 && lanes[18] == 30);
    CHECK(clreorder_attr_set_param(keep, "sub", sub, 2, 1) == CLREORDER_SUCCESS);
    lanes[0] = -7.0f;
    CHECK(clEnqueueWriteBuffer(queue, out, CL_TRUE, 0, sizeof lanes, lanes, 0, NULL, NULL) == CL_SUCCESS);
    EXPECT_ERROR(clreorder_reorder_attr(ctx, in, 0, plain, out, 0, blocked, keep, 0, NULL, NULL), CLREORDER_INVALID_VALUE,
                 "2 values on axis f of extent 3");
    CHECK(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof lanes, lanes, 0, NULL, NULL) == CL_SUCCESS);
    CHECK(lanes[0] == -7.0f);
    /* Groups: x * mul, one value per group of 2 features (f 0-1, then f 2) for each x; then the same values,
     * and a zero point of 5, from device buffers (i32 for the zero point); a batch refuses them. */
    const float groups[4] = {1, 2, 3, 4};
    const int32_t five = 5;
    CHECK(clreorder_attr_set_param(keep, "sub", NULL, 0, 1) == CLREORDER_SUCCESS);
    CHECK(clreorder_attr_set_param_groups(keep, "mul", groups, 4, 1, 2, 3) == CLREORDER_SUCCESS);
    CHECK(clreorder_reorder_attr(ctx, in, 0, plain, out, 0, blocked, keep, 0, NULL, NULL) == CLREORDER_SUCCESS);
    CHECK(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof lanes, lanes, 0, NULL, NULL) == CL_SUCCESS);
    CHECK(lanes[0] == 1 && lanes[1] == 3 && lanes[2] == 10 && lanes[16] == 6 && lanes[17] == 12 && lanes[18] == 24);
    cl_mem mul = clCreateBuffer(cl_ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof groups, (void*)groups, &err);
    cl_mem zp = clCreateBuffer(cl_ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof five, (void*)&five, &err);
    CHECK(err == CL_SUCCESS);
    CHECK(clreorder_attr_set_param_buffer(keep, "mul", mul, 1, 2, 3) == CLREORDER_SUCCESS);
    CHECK(clreorder_attr_set_param_buffer(keep, "dst-zero-point", zp, -1, 1, -1) == CLREORDER_SUCCESS);
    clReleaseMemObject(mul); /* the attribute holds its own reference */
    clReleaseMemObject(zp);
    CHECK(clreorder_reorder_attr(ctx, in, 0, plain, out, 0, blocked, keep, 0, NULL, NULL) == CLREORDER_SUCCESS);
    CHECK(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof lanes, lanes, 0, NULL, NULL) == CL_SUCCESS);
    CHECK(lanes[0] == 6 && lanes[1] == 8 && lanes[2] == 15 && lanes[16] == 11 && lanes[17] == 17 && lanes[18] == 29);
    clreorder_batch_item item = {in, 0, plain, out, 0, blocked};
    EXPECT_ERROR(clreorder_reorder_batch_attr(ctx, 1, &item, keep, 0, NULL, NULL, NULL), CLREORDER_INVALID_VALUE,
                 "a batch takes no parameter from a device buffer (mul)");
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clreorder_attr_release(keep);
    clreorder_layout_release(plain);
    clreorder_layout_release(blocked);
  }

  /* Compensation sums: oiyx f32 2x3x1x1 to i8 at dst-scale 0.5 gives 2 4 6 | 8 10 12, whose sums per o are
   * 12 and 30 (the buffer's stale contents are zeroed first); a read-only buffer, a float destination and a
   * batch are refused, naming why. */
  {
    const int64_t w_dims[4] = {2, 3, 1, 1};
    const float w[6] = {1, 2, 3, 4, 5, 6}, half = 0.5f;
    int32_t sums[2] = {-1, -1};
    clreorder_layout wf = NULL, wi = NULL;
    clreorder_attr comp = NULL;
    CHECK(clreorder_layout_create("oiyx", "f32", 4, w_dims, NULL, NULL, NULL, 0, &wf) == CLREORDER_SUCCESS);
    CHECK(clreorder_layout_create("oiyx", "i8", 4, w_dims, NULL, NULL, NULL, 0, &wi) == CLREORDER_SUCCESS);
    cl_mem in = clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof w, (void*)w, &err);
    cl_mem out = clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE, 6, NULL, &err);
    cl_mem sum_buf = clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof sums, sums, &err);
    cl_mem read_only = clCreateBuffer(cl_ctx, CL_MEM_READ_ONLY, sizeof sums, NULL, &err);
    CHECK(err == CL_SUCCESS);
    CHECK(clreorder_attr_create(&comp) == CLREORDER_SUCCESS);
    CHECK(clreorder_attr_set_param(comp, "dst-scale", &half, 1, -1) == CLREORDER_SUCCESS);
    CHECK(clreorder_attr_set_compensation(comp, sum_buf, 0, -1) == CLREORDER_SUCCESS);
    CHECK(clreorder_reorder_attr(ctx, in, 0, wf, out, 0, wi, comp, 0, NULL, NULL) == CLREORDER_SUCCESS);
    CHECK(clEnqueueReadBuffer(queue, sum_buf, CL_TRUE, 0, sizeof sums, sums, 0, NULL, NULL) == CL_SUCCESS);
    CHECK(sums[0] == 12 && sums[1] == 30);
    clreorder_batch_item item = {in, 0, wf, out, 0, wi};
    EXPECT_ERROR(clreorder_reorder_batch_attr(ctx, 1, &item, comp, 0, NULL, NULL, NULL), CLREORDER_INVALID_VALUE,
                 "a batch writes no compensation sums");
    EXPECT_ERROR(clreorder_reorder_attr(ctx, out, 0, wi, in, 0, wf, comp, 0, NULL, NULL), CLREORDER_INVALID_VALUE,
                 "f32 is not an integer type");
    CHECK(clreorder_attr_set_compensation(comp, read_only, 0, -1) == CLREORDER_SUCCESS);
    EXPECT_ERROR(clreorder_reorder_attr(ctx, in, 0, wf, out, 0, wi, comp, 0, NULL, NULL), CLREORDER_INVALID_VALUE,
                 "compensation buffer was created CL_MEM_READ_ONLY");
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseMemObject(sum_buf);
    clReleaseMemObject(read_only);
    clreorder_attr_release(comp);
    clreorder_layout_release(wf);
    clreorder_layout_release(wi);
  }

  /* Bad inputs: a status, a message naming the value, nothing written. */
  clreorder_layout bad = NULL;
  EXPECT_ERROR(clreorder_layout_create("bfyx_nonsense", "f32", 4, dims, NULL, NULL, NULL, 0, &bad), CLREORDER_INVALID_VALUE,
               "bfyx_nonsense");
  EXPECT_ERROR(clreorder_layout_create("bfyx", "f33", 4, dims, NULL, NULL, NULL, 0, &bad), CLREORDER_INVALID_VALUE, "f33");
  EXPECT_ERROR(clreorder_layout_create("bfyx", "f32", 9, dims, NULL, NULL, NULL, 0, &bad), CLREORDER_INVALID_VALUE, "rank 9");
  const int64_t negative[4] = {2, -19, 3, 5};
  EXPECT_ERROR(clreorder_layout_create("bfyx", "f32", 4, negative, NULL, NULL, NULL, 0, &bad), CLREORDER_INVALID_VALUE, "-19");
  EXPECT_ERROR(clreorder_layout_create(NULL, "f32", 4, dims, NULL, NULL, NULL, 0, &bad), CLREORDER_INVALID_ARGUMENT, "format");
  EXPECT_ERROR(clreorder_layout_create("bfyx", "f32", 4, dims, NULL, NULL, NULL, 0, NULL), CLREORDER_INVALID_ARGUMENT, "out");
  CHECK(bad == NULL);
  EXPECT_ERROR(clreorder_layout_bytes(NULL, &length), CLREORDER_INVALID_ARGUMENT, "layout");
  EXPECT_ERROR(clreorder_context_create(cl_ctx, device, NULL, &ctx), CLREORDER_INVALID_ARGUMENT, "queue");
  cl_context foreign = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  clreorder_context mismatched = NULL;
  EXPECT_ERROR(clreorder_context_create(foreign, device, queue, &mismatched), CLREORDER_INVALID_VALUE, "another cl_context");
  CHECK(mismatched == NULL);
  EXPECT_ERROR(clreorder_context_set_policy(ctx, (clreorder_policy)7), CLREORDER_INVALID_VALUE, "policy 7");
  EXPECT_ERROR(clreorder_context_set_policy(ctx, (clreorder_policy)-3), CLREORDER_INVALID_VALUE, "policy -3");

  /* A too-small destination, a shape mismatch, a null buffer, a foreign buffer: the destination stays. */
  float sentinel[B * FS * 16 * Y * X];
  for (size_t i = 0; i < sizeof sentinel / sizeof sentinel[0]; ++i) sentinel[i] = -7.0f;
  CHECK(clEnqueueWriteBuffer(queue, dst, CL_TRUE, 0, blocked_bytes, sentinel, 0, NULL, NULL) == CL_SUCCESS);
  cl_mem small = clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE, 100, NULL, &err);
  cl_mem other = clCreateBuffer(foreign, CL_MEM_READ_WRITE, blocked_bytes, NULL, &err);
  cl_event none = NULL;
  EXPECT_ERROR(clreorder_reorder(ctx, src, 0, plain, small, 0, blocked, 0, NULL, &none), CLREORDER_INVALID_VALUE,
               "destination buffer holds 100 bytes");
  EXPECT_ERROR(clreorder_reorder(ctx, src, 0, plain, dst, 0, a, 0, NULL, &none), CLREORDER_INVALID_VALUE, "cannot reorder");
  EXPECT_ERROR(clreorder_reorder(ctx, NULL, 0, plain, dst, 0, blocked, 0, NULL, &none), CLREORDER_INVALID_VALUE,
               "source buffer is null");
  EXPECT_ERROR(clreorder_reorder(ctx, src, 0, plain, other, 0, blocked, 0, NULL, &none), CLREORDER_INVALID_VALUE,
               "another OpenCL context");
  EXPECT_ERROR(clreorder_reorder(ctx, src, 2, plain, dst, 0, blocked, 0, NULL, &none), CLREORDER_INVALID_VALUE, "byte offset 2");
  EXPECT_ERROR(clreorder_reorder(ctx, src, 0, plain, dst, 0, blocked, 1, NULL, &none), CLREORDER_INVALID_ARGUMENT, "wait_list");
  CHECK(none == NULL);
  CHECK(clFinish(queue) == CL_SUCCESS);
  CHECK(clEnqueueReadBuffer(queue, dst, CL_TRUE, 0, blocked_bytes, out, 0, NULL, NULL) == CL_SUCCESS);
  CHECK(memcmp(out, sentinel, sizeof out) == 0);
  CHECK(clreorder_layout_describe(plain, text, sizeof text, NULL) == CLREORDER_SUCCESS);
  CHECK(strcmp(clreorder_last_error(), "") == 0); /* a success clears the message */

  clReleaseMemObject(small);
  clReleaseMemObject(other);
  clReleaseContext(foreign);
  clReleaseMemObject(src);
  clReleaseMemObject(dst);
  clReleaseMemObject(back);
  clreorder_layout_release(plain);
  clreorder_layout_release(blocked);
  clreorder_layout_release(a);
  clreorder_layout_release(b);
  clreorder_layout_release(NULL);
  clreorder_context_release(ctx);
  clreorder_context_release(NULL);
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  else printf("C API: all checks passed\n");
  return failures ? 1 : 0;
}
