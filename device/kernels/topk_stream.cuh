// topKMask of rows too long for a block's registers: one block per row, which reads the row
// twice and writes it once.
//   1. Read: per-thread maxima of kChunks interleaved chunks and the smallest key, then `low`,
//      a lower bound of T (topk_select.cuh's bound_from_maxima).
//   2. Read again (mostly from L2): the candidates, every key >= low with its index, appended
//      to shared memory (a warp reserves its slots with one atomic; slots are in no particular
//      order, which no result depends on: counts are exact and ties are ranked by index).
//   3. T from the candidates alone (for c > low they are every key >= c), then the row is
//      written as zeros and the kept candidates, which are all of the kept entries, as ones.
// Rows whose candidates overflow kStreamCapacity (heavy ties, or k close to the capacity)
// search T over the re-read row instead, one pass per bit, and rank ties by index tile by tile.
#pragma once

#include "topk_select.cuh"

namespace tapecheck_cuda {

constexpr unsigned kStreamThreads = 1024;
constexpr int kStreamChunks = 4;
constexpr uint32_t kStreamCapacity = 4096;
// Above this k the candidates would often overflow: the launcher uses the histogram kernels.
constexpr uint32_t kStreamMaxK = kStreamCapacity / 2;
static_assert(kStreamMaxK <= kStreamThreads * kStreamChunks, "k within the bound's reach");

struct StreamScratch {
  BlockTeamScratch team;
  uint32_t count;
  uint32_t key[kStreamCapacity];
  uint32_t index[kStreamCapacity];
};

// Pass 1: the chunk maxima and the smallest key of this thread's entries j = tid + n * T;
// chunk c takes n % kStreamChunks == c.
__device__ __forceinline__ void stream_stats(const float* xr, uint32_t cols,
                                             uint32_t (&chunk_max)[kStreamChunks],
                                             uint32_t& mine_min) {
  const uint32_t T = blockDim.x;
#pragma unroll
  for (int c = 0; c < kStreamChunks; ++c) chunk_max[c] = 0u;
  mine_min = ~0u;
  for (uint32_t j0 = threadIdx.x; j0 < cols; j0 += kStreamChunks * T) {
#pragma unroll
    for (int c = 0; c < kStreamChunks; ++c) {
      const uint32_t j = j0 + static_cast<uint32_t>(c) * T;
      if (j < cols) {
        const uint32_t key = rank_key(xr[j]);
        chunk_max[c] = ::max(chunk_max[c], key);
        mine_min = ::min(mine_min, key);
      }
    }
  }
}

// Pass 2: appends every key >= low (and its index) while there is room; returns how many there
// are in all (possibly more than kStreamCapacity). Warp-uniform loop: each warp walks its
// 32-entry tiles j0 + lane.
__device__ uint32_t stream_gather(const float* xr, uint32_t cols, uint32_t low, StreamScratch& sh) {
  const uint32_t T = blockDim.x;
  const unsigned lane = threadIdx.x & 31u;
  if (threadIdx.x == 0) sh.count = 0u;
  __syncthreads();
  for (uint32_t j0 = threadIdx.x - lane; j0 < cols; j0 += T) {
    const uint32_t j = j0 + lane;
    const uint32_t key = j < cols ? rank_key(xr[j]) : 0u;
    const bool take = j < cols && key >= low;
    const uint32_t ballot = __ballot_sync(kFullWarp, take);
    if (ballot == 0u) continue;
    uint32_t base = 0;
    if (lane == 0) base = atomicAdd(&sh.count, static_cast<uint32_t>(__popc(ballot)));
    base = __shfl_sync(kFullWarp, base, 0);
    if (take) {
      const uint32_t pos = base + __popc(ballot & ((1u << lane) - 1u));
      if (pos < kStreamCapacity) {
        sh.key[pos] = key;
        sh.index[pos] = j;
      }
    }
  }
  __syncthreads();
  return sh.count;
}

// Rows whose candidates overflowed: T by re-reading the row for every bit, then the mask with
// ties ranked by index one tile of T entries at a time.
__device__ void stream_fallback(BlockTeam& team, const float* xr, float* mr, uint32_t cols,
                                uint32_t k, uint32_t low, uint32_t high) {
  const uint32_t T = blockDim.x;
  auto count_at_least = [&](uint32_t c) {
    uint32_t local = 0;
    for (uint32_t j = threadIdx.x; j < cols; j += T) local += rank_key(xr[j]) >= c ? 1u : 0u;
    return team.sum(local);
  };
  bool done = false;
  const uint32_t t = search_down(team, common_prefix(low, high), k, done, count_at_least);
  uint32_t need = 0;
  bool keep_all_equal = done;
  if (!done) {
    uint32_t mine_equal = 0;
    for (uint32_t j = threadIdx.x; j < cols; j += T) mine_equal += rank_key(xr[j]) == t ? 1u : 0u;
    const uint32_t equal = team.sum(mine_equal);
    need = k - count_at_least(t + 1u);
    keep_all_equal = need == equal;
  }
  uint32_t equal_before = 0;
  for (uint32_t j0 = 0; j0 < cols; j0 += T) {  // block-uniform trips
    const uint32_t j = j0 + threadIdx.x;
    const bool in = j < cols;
    const uint32_t key = in ? rank_key(xr[j]) : 0u;
    bool keep = key >= t;
    if (!keep_all_equal) {
      const bool eq = in && key == t;
      const uint32_t r = equal_before + team.rank(eq);
      equal_before += team.count(eq);
      keep = key > t || (eq && r < need);
    }
    if (in) mr[j] = keep ? 1.0f : 0.0f;
  }
}

__global__ void __launch_bounds__(kStreamThreads, 2)
    topk_by_stream(size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  __shared__ StreamScratch sh;
  BlockTeam team(&sh.team);
  const uint32_t T = blockDim.x;
  for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* xr = x + row * cols;
    float* mr = mask + row * cols;
    uint32_t chunk_max[kStreamChunks], mine_min;
    stream_stats(xr, cols, chunk_max, mine_min);
    uint32_t mine_max = 0u;
#pragma unroll
    for (int c = 0; c < kStreamChunks; ++c) mine_max = ::max(mine_max, chunk_max[c]);
    const uint32_t high = team.max(mine_max);
    uint32_t low = team.min(mine_min);
    if (k <= T * kStreamChunks) low = bound_from_maxima(team, chunk_max, mine_max, high, low, k, true);

    const uint32_t total = stream_gather(xr, cols, low, sh);
    if (total > kStreamCapacity) {
      stream_fallback(team, xr, mr, cols, k, low, high);
      continue;
    }
    // As in topk_row: for c <= low the count is at least k but not exact (k + 1 stands for it).
    auto candidates_at_least = [&](uint32_t c) {
      uint32_t local = 0;
      for (uint32_t i = threadIdx.x; i < total; i += T) local += sh.key[i] >= c ? 1u : 0u;
      const uint32_t n = team.sum(local);
      return c <= low ? k + 1u : n;
    };
    bool done = false;
    const uint32_t t = search_down(team, common_prefix(low, high), k, done, candidates_at_least);
    // Ties at T (t == T without `done`): every key == T is a candidate; the first `need` of
    // them by index are kept. A candidate's rank among them is counted directly (rare path).
    uint32_t need = 0;
    if (!done) {
      uint32_t mine_greater = 0;
      for (uint32_t i = threadIdx.x; i < total; i += T) mine_greater += sh.key[i] > t ? 1u : 0u;
      need = k - team.sum(mine_greater);
    }
    for (uint32_t j = threadIdx.x; j < cols; j += T) mr[j] = 0.0f;
    __syncthreads();  // the ones below land after every zero of the row
    for (uint32_t i = threadIdx.x; i < total; i += T) {
      const uint32_t key = sh.key[i];
      bool keep = key >= t;
      if (!done && key == t) {
        uint32_t before = 0;
        for (uint32_t q = 0; q < total; ++q) before += (sh.key[q] == t && sh.index[q] < sh.index[i]) ? 1u : 0u;
        keep = before < need;
      }
      if (keep) mr[sh.index[i]] = 1.0f;
    }
    __syncthreads();  // sh.key/index are rewritten by the next row
  }
}

}  // namespace tapecheck_cuda
