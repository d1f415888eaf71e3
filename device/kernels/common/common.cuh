// Host and device helpers shared by every kernel file of the built-in CUDA table.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "common/scratch_pool.h"

namespace tapecheck_cuda {

// Every launch uses blocks of this size: reductions and register caches are written for it.
constexpr unsigned kBlock = 256;

// Grids are a function of the problem's sizes alone, never of the device, so the partition of
// work (and with it every order of summation) is too. Every kernel loops grid-stride, so any
// grid is correct; two sizes are in use:
// - grid_for caps the grid at kMaxGrid blocks, each looping over several items. Kernels that
//   write a partial per block keep it (cross-entropy's loss: the partials stay few), and so do
//   the kernels where it is faster.
// - grid_covering gives every block one iteration (up to the hardware's limit): a capped grid
//   leaves a partial last wave (softmax forward at 128 columns fits 6 blocks of 256 threads a
//   multiprocessor, so 8192 blocks are 10.3 waves).
// Covering: register tiles up to +0.08 of copy speed, cross-entropy forward -0.26 (CHANGELOG 1.9.0).
constexpr size_t kMaxGrid = 8192;
constexpr size_t kMaxCoveringGrid = 0x7fffffff;  // gridDim.x's limit

// The H200's 132 multiprocessors: a tuning constant for grids that must be a function of the
// shape alone (ln_bwd_fused.cuh's G, row_cluster.cuh's cluster_count), never a device query.
// Other GPUs get the same grids and the same bits, only another speed.
constexpr size_t kAssumedSMs = 132;

inline cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

// Compile-time values handed to the generic lambdas of the launch helpers, which pick a kernel
// instantiation from runtime facts (a unit's width, whether the pointers allow 16-byte access).
template <int N>
using Int = std::integral_constant<int, N>;
template <bool B>
using Bool = std::integral_constant<bool, B>;

// Launches are asynchronous: this reports only whether they were accepted. A fault inside a
// kernel surfaces at the caller's next synchronization, as with any stream-ordered API.
inline int launch_status() { return cudaGetLastError() == cudaSuccess ? 0 : 1; }

// Lets `kernel` take `bytes` of dynamic shared memory, above the default 48 KiB a block (set at
// every launch: the current device may have changed). False when the device refuses, with the
// error cleared, so that the status of the plan launched instead is that plan's own.
template <class Kernel>
inline bool allow_dynamic_shared(Kernel kernel, int bytes) {
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) ==
      cudaSuccess) {
    return true;
  }
  (void)cudaGetLastError();
  return false;
}

// Blocks for `items` at `items_per_block` each (at least one), at most `cap`.
inline unsigned grid_capped(size_t items, size_t items_per_block, size_t cap) {
  size_t g = (items + items_per_block - 1) / items_per_block;
  if (g == 0) g = 1;
  return static_cast<unsigned>(g < cap ? g : cap);
}

inline unsigned grid_for(size_t items, size_t items_per_block) {
  return grid_capped(items, items_per_block, kMaxGrid);
}

inline unsigned grid_covering(size_t items, size_t items_per_block) {
  return grid_capped(items, items_per_block, kMaxCoveringGrid);
}

__host__ __device__ constexpr unsigned next_pow2(unsigned v) {
  unsigned p = 1;
  while (p < v) p <<= 1;
  return p;
}

__host__ __device__ constexpr size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// Whether p allows 16-byte vector loads and stores.
__host__ __device__ inline bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

// Stream-ordered scratch memory, from the library's pool (scratch_pool.h). Freed on the same
// stream after the kernels that use it, so no synchronization is needed and the caller's
// stream semantics are kept.
class Scratch {
 public:
  explicit Scratch(cudaStream_t s) : stream_(s) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    for (int i = 0; i < count_; ++i) cudaFreeAsync(ptrs_[i], stream_);
  }
  // nullptr when the allocation fails (or the four slots are used up).
  template <class T>
  T* get(size_t n) {
    if (count_ == kSlots) return nullptr;
    void* p = nullptr;
    const cudaMemPool_t pool = scratch_pool();
    const cudaError_t e = pool != nullptr ? cudaMallocFromPoolAsync(&p, n * sizeof(T), pool, stream_)
                                          : cudaMallocAsync(&p, n * sizeof(T), stream_);
    if (e != cudaSuccess) {
      cudaGetLastError();  // not sticky: the caller falls back or reports the failure
      return nullptr;
    }
    ptrs_[count_++] = p;
    return static_cast<T*>(p);
  }

 private:
  static constexpr int kSlots = 4;
  cudaStream_t stream_;
  void* ptrs_[kSlots] = {};
  int count_ = 0;
};

}  // namespace tapecheck_cuda
