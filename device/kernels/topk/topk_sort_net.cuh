// Bitonic sorting networks over keys in registers, for topk_sorted.cuh: every index below is a
// compile-time constant (the loops unroll), so the keys never leave registers, and the work
// does not depend on the data. Lists are sorted in descending order: v[0] is the largest.
#pragma once

#include "common/common.cuh"

namespace tapecheck_cuda {

// Afterwards a >= b.
__device__ __forceinline__ void order_pair(uint32_t& a, uint32_t& b) {
  const uint32_t high = ::max(a, b);
  b = ::min(a, b);
  a = high;
}

// v bitonic (rising then falling, or the reverse) -> v descending.
template <int N>
__device__ __forceinline__ void bitonic_merge_desc(uint32_t (&v)[N]) {
  static_assert(N >= 1 && (N & (N - 1)) == 0, "a power of two");
#pragma unroll
  for (int stride = N / 2; stride > 0; stride /= 2) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      if ((i & stride) == 0) order_pair(v[i], v[i + stride]);
    }
  }
}

// v -> v descending. Runs of `size` alternate direction, so that each pair of runs is a bitonic
// sequence for the next, wider stage; the last stage sorts all of v descending.
template <int N>
__device__ __forceinline__ void sort_desc(uint32_t (&v)[N]) {
  static_assert(N >= 1 && (N & (N - 1)) == 0, "a power of two");
#pragma unroll
  for (int size = 2; size <= N; size *= 2) {
#pragma unroll
    for (int stride = size / 2; stride > 0; stride /= 2) {
#pragma unroll
      for (int i = 0; i < N; ++i) {
        if ((i & stride) != 0) continue;
        if ((i & size) == 0) {
          order_pair(v[i], v[i + stride]);
        } else {
          order_pair(v[i + stride], v[i]);
        }
      }
    }
  }
}

// a, b descending -> c holds the K largest of a and b together, as a bitonic sequence. (Of a
// descending and an ascending sequence, the larger at each position: a[j] beats b[K-1-j] up to
// the point where the two cross, and every key dropped is beaten by K others.)
template <int K>
__device__ __forceinline__ void top_of_two(const uint32_t (&a)[K], const uint32_t (&b)[K],
                                           uint32_t (&c)[K]) {
#pragma unroll
  for (int j = 0; j < K; ++j) c[j] = ::max(a[j], b[K - 1 - j]);
}

// a, b descending -> a: the K largest of both, descending.
template <int K>
__device__ __forceinline__ void keep_top(uint32_t (&a)[K], const uint32_t (&b)[K]) {
  uint32_t c[K];
  top_of_two(a, b, c);
  bitonic_merge_desc(c);
#pragma unroll
  for (int j = 0; j < K; ++j) a[j] = c[j];
}

// v[k - 1] of a descending list, k in [1, K] (k is not a compile-time constant, and indexing
// registers with it would move the list to local memory).
template <int K>
__device__ __forceinline__ uint32_t kth_of_sorted(const uint32_t (&v)[K], uint32_t k) {
  uint32_t t = v[0];
#pragma unroll
  for (int j = 1; j < K; ++j) t = k == static_cast<uint32_t>(j + 1) ? v[j] : t;
  return t;
}

// The k-th largest of a and b together (a, b descending, k in [1, K]). For k == K it is the
// smallest of the K largest, which needs no sort.
template <int K>
__device__ __forceinline__ uint32_t kth_of_two(const uint32_t (&a)[K], const uint32_t (&b)[K],
                                               uint32_t k) {
  uint32_t c[K];
  top_of_two(a, b, c);
  if (k == static_cast<uint32_t>(K)) {
    uint32_t least = c[0];
#pragma unroll
    for (int j = 1; j < K; ++j) least = ::min(least, c[j]);
    return least;
  }
  bitonic_merge_desc(c);
  return kth_of_sorted(c, k);
}

// list: the K largest of key[0 .. VPT - kLastGroup * K), descending, where kLastGroup is 1 when
// the caller merges the last group of K itself (kth_of_two) and 0 otherwise.
template <int K, int VPT, int kLastGroup>
__device__ __forceinline__ void top_of_slots(const uint32_t (&key)[VPT], uint32_t (&list)[K]) {
  static_assert(VPT % K == 0 && VPT / K > kLastGroup, "whole groups of K, at least one merged here");
#pragma unroll
  for (int j = 0; j < K; ++j) list[j] = key[j];
  sort_desc(list);
#pragma unroll
  for (int g = 1; g < VPT / K - kLastGroup; ++g) {
    uint32_t group[K];
#pragma unroll
    for (int j = 0; j < K; ++j) group[j] = key[g * K + j];
    sort_desc(group);
    keep_top(list, group);
  }
}

// The last group of K slots, sorted descending.
template <int K, int VPT>
__device__ __forceinline__ void last_group_sorted(const uint32_t (&key)[VPT], uint32_t (&group)[K]) {
#pragma unroll
  for (int j = 0; j < K; ++j) group[j] = key[VPT - K + j];
  sort_desc(group);
}

}  // namespace tapecheck_cuda
