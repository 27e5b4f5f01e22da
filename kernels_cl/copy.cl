// A copy launched like a reorder, with the access forms the reorders use: the benchmarks' baseline beside
// clEnqueueCopyBuffer (which on PoCL is one thread's memcpy), so that "ratio to copy" is to the best copy the
// device has. Whole vectors of COPY_T, then the bytes past the last one.
// Generated: KERNEL_NAME, COPY_T (a vector of uints: the access width), CHUNK (vectors per work-item, walked
// in order: CPUs; 0: work-items take every global-size-th vector, so neighbours touch neighbouring memory:
// GPUs), STREAM (1: streaming stores, when the bytes outgrow the cache).
__kernel void KERNEL_NAME(__global const uchar* restrict src, __global uchar* restrict dst, ulong bytes) {
  const ulong vecs = bytes / sizeof(COPY_T), id = get_global_id(0);
  __global const COPY_T* s = (__global const COPY_T*)src;
  __global COPY_T* d = (__global COPY_T*)dst;
#if CHUNK
  const ulong first = id * CHUNK, end = min(first + CHUNK, vecs), step = 1;
#else
  const ulong first = id, end = vecs, step = get_global_size(0);
#endif
#if STREAM
  if (((ulong)dst & (sizeof(COPY_T) - 1)) == 0) {
    for (ulong i = first; i < end; i += step) CR_STREAM_STORE(COPY_T, s[i], d + i);
  } else
#endif
  {
    for (ulong i = first; i < end; i += step) d[i] = s[i];
  }
  if (id == 0)
    for (ulong b = vecs * sizeof(COPY_T); b < bytes; ++b) dst[b] = src[b];
}
