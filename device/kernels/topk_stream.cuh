// topKMask of rows too long for a block's registers: one block per row, which reads the row
// about once and writes it once.
//   1. Read the row's first S entries (the sample, S from cols and k: stream_sample_cols):
//      per-thread maxima of kChunks interleaved chunks and the smallest key, then `low`, a
//      lower bound of T (topk_select.cuh's bound_from_maxima). The k-th largest of a part of
//      the row is at most the k-th largest of the row, so a sample's bound is one too.
//   2. Read the whole row (the sample again, from L2): the candidates, every key >= low with
//      its index, appended to shared memory (a warp reserves its slots with one atomic; slots
//      are in no particular order, which no result depends on: counts are exact and ties are
//      ranked by index), and the row's maximum.
//   3. T from the candidates alone (for c > low they are every key >= c), then the row is
//      written as zeros and the kept candidates, which are all of the kept entries, as ones.
// Where the sample's bound lets more than kStreamCapacity candidates through (rows whose large
// entries all lie past the sample), steps 1 and 2 run again with the whole row as the sample.
// Rows whose candidates still overflow (heavy ties, or k close to the capacity) search T over
// the re-read row instead, one pass per bit, and rank ties by index tile by tile.
//
// Up to kernels 1.9.1 the sample was the whole row, so step 2 re-read all of it, and ncu on an
// H200 showed the re-read missing L2 at 64K columns (2.13 GB read from DRAM for 1.07 GB of
// input): two blocks a multiprocessor hold 264 rows of 256 KiB in flight, more than L2 holds.
#pragma once

#include "topk_select.cuh"

namespace tapecheck_cuda {

// Blocks of 512 threads, four a multiprocessor (32 registers a thread): eight rows in flight
// where 1024-thread blocks had four, so that one row's loads overlap the others' searches. With
// the gather below, 512 ran 0.05-0.15 of copy bandwidth faster than 1024 at 32K-64K columns
// and 0.00-0.06 faster than 256 (six a multiprocessor, the most their shared memory allows).
constexpr unsigned kStreamThreads = 512;
constexpr int kStreamBlocksPerSM = 4;
constexpr int kStreamChunks = 4;
constexpr uint32_t kStreamCapacity = 4096;
// Above this k the candidates would often overflow: the launcher uses the histogram kernels.
constexpr uint32_t kStreamMaxK = kStreamCapacity / 2;
static_assert(kStreamMaxK <= kStreamThreads * kStreamChunks, "k within the bound's reach");
// The sample's length: a multiple of kStreamSampleStep, at least one step and k, and long
// enough that on data in random order about k * cols / S <= kStreamCapacity / 4 keys pass its
// bound. From cols and k alone (no result depends on it: only the work does).
constexpr uint32_t kStreamSampleStep = 4096;
// The bound from the threads' maxima only for k <= T / kStreamPerThreadBoundK, else from their
// chunks' maxima.
constexpr uint32_t kStreamPerThreadBoundK = 4;

__device__ __forceinline__ uint32_t stream_sample_cols(uint32_t cols, uint32_t k) {
  const uint64_t want = 4ull * k * cols / kStreamCapacity;
  const uint64_t steps = want / kStreamSampleStep + 1;
  const uint64_t s = steps * kStreamSampleStep;
  return s < cols ? static_cast<uint32_t>(s) : cols;
}

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
  if (cols % 4 == 0 && aligned16(xr)) {
    // Units of 4: thread t's units u = t + n * T, chunk c taking n % kStreamChunks == c.
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    const uint32_t units = cols / 4;
    for (uint32_t u0 = threadIdx.x; u0 < units; u0 += kStreamChunks * T) {
#pragma unroll
      for (int c = 0; c < kStreamChunks; ++c) {
        const uint32_t u = u0 + static_cast<uint32_t>(c) * T;
        if (u < units) {
          const float4 q = __ldg(x4 + u);
          const uint32_t a = rank_key(q.x), b = rank_key(q.y);
          const uint32_t e = rank_key(q.z), f = rank_key(q.w);
          chunk_max[c] = ::max(chunk_max[c], ::max(::max(a, b), ::max(e, f)));
          mine_min = ::min(mine_min, ::min(::min(a, b), ::min(e, f)));
        }
      }
    }
    return;
  }
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
// are in all (possibly more than kStreamCapacity), and in mine_max the largest key this thread
// read. Warp-uniform loops: each warp walks its tiles of 32 entries (32 units of 4 when the row
// allows 16-byte loads), and a tile without a candidate costs no shared memory at all.

// Appends this lane's entries i with bit i of `take` set (all lanes of the warp call it).
template <int N>
__device__ __forceinline__ void stream_append(StreamScratch& sh, uint32_t lane, uint32_t take,
                                              const uint32_t (&key)[N],
                                              const uint32_t (&index)[N]) {
  // The lane's first slot: the warp's reservation plus the lanes below it (a scan).
  const uint32_t taken = static_cast<uint32_t>(__popc(take));
  const uint32_t upto = warp_inclusive_sum(taken, lane);
  uint32_t base = 0;
  if (lane == 31) base = atomicAdd(&sh.count, upto);
  uint32_t pos = __shfl_sync(kFullWarp, base, 31) + upto - taken;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    if (take & (1u << i)) {
      if (pos < kStreamCapacity) {
        sh.key[pos] = key[i];
        sh.index[pos] = index[i];
      }
      ++pos;
    }
  }
}

// The keys of entries 4u .. 4u + 3 from one 16-byte load.
__device__ __forceinline__ void stream_load_unit(const float4* x4, uint32_t u, uint32_t (&key)[4]) {
  const float4 q = __ldg(x4 + u);
  key[0] = rank_key(q.x);
  key[1] = rank_key(q.y);
  key[2] = rank_key(q.z);
  key[3] = rank_key(q.w);
}

__device__ uint32_t stream_gather(const float* xr, uint32_t cols, uint32_t low, StreamScratch& sh,
                                  uint32_t& mine_max) {
  const uint32_t T = blockDim.x;
  const uint32_t lane = threadIdx.x & 31u;
  mine_max = 0u;
  if (threadIdx.x == 0) sh.count = 0u;
  __syncthreads();
  if (cols % 4 == 0 && aligned16(xr)) {
    // One 16-byte unit a lane an iteration: with one 4-byte load a thread in flight (up to
    // 1.9.2) this pass kept DRAM far from busy. Two units a lane spilled at 32 registers and
    // lost 0.01-0.05 of copy bandwidth.
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    const uint32_t units = cols / 4;
    for (uint32_t u0 = threadIdx.x - lane; u0 < units; u0 += T) {
      const uint32_t u = u0 + lane;
      const bool in = u < units;
      uint32_t key[4] = {0u, 0u, 0u, 0u};
      if (in) stream_load_unit(x4, u, key);
      uint32_t take = 0;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        mine_max = ::max(mine_max, key[i]);
        take |= (in && key[i] >= low) ? 1u << i : 0u;
      }
      if (__ballot_sync(kFullWarp, take != 0u) == 0u) continue;
      const uint32_t index[4] = {4u * u, 4u * u + 1u, 4u * u + 2u, 4u * u + 3u};
      stream_append(sh, lane, take, key, index);
    }
  } else {
    for (uint32_t j0 = threadIdx.x - lane; j0 < cols; j0 += T) {
      const uint32_t j = j0 + lane;
      const uint32_t key[1] = {j < cols ? rank_key(xr[j]) : 0u};
      mine_max = ::max(mine_max, key[0]);
      const uint32_t take = (j < cols && key[0] >= low) ? 1u : 0u;
      if (__ballot_sync(kFullWarp, take != 0u) == 0u) continue;
      const uint32_t index[1] = {j};
      stream_append(sh, lane, take, key, index);
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

__global__ void __launch_bounds__(kStreamThreads, kStreamBlocksPerSM)
    topk_by_stream(size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  __shared__ StreamScratch sh;
  BlockTeam team(&sh.team);
  const uint32_t T = blockDim.x;
  const uint32_t sample = stream_sample_cols(cols, k);
  for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* xr = x + row * cols;
    float* mr = mask + row * cols;
    uint32_t low = 0u, total = 0u, mine_max = 0u;
    for (uint32_t span = sample; ; span = cols) {  // the sample, then the row if it overflowed
      uint32_t chunk_max[kStreamChunks], mine_min;
      stream_stats(xr, span, chunk_max, mine_min);
      uint32_t sample_max = 0u;
#pragma unroll
      for (int c = 0; c < kStreamChunks; ++c) sample_max = ::max(sample_max, chunk_max[c]);
      const uint32_t high = team.max(sample_max);
      low = team.min(mine_min);  // span >= k entries are >= it
      // The chunks' bound unless k is well below the threads: at k = 1024 the threads' bound
      // (their smallest maximum) let the candidates overflow at 32K-64K columns, and the rows
      // went to stream_fallback (0.07-0.12 of copy bandwidth against 0.36-0.40).
      if (k <= T * kStreamChunks) {
        low = bound_from_maxima(team, chunk_max, sample_max, high, low, k, true,
                                kStreamPerThreadBoundK * k <= T);
      }
      total = stream_gather(xr, cols, low, sh, mine_max);
      if (total <= kStreamCapacity || span == cols) break;
    }
    const uint32_t high = team.max(mine_max);
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
    // Streaming stores (the mask is not read again here; L2 is kept for the row's re-read).
    if (cols % 4 == 0 && aligned16(mr)) {
      float4* m4 = reinterpret_cast<float4*>(mr);
      for (uint32_t u = threadIdx.x; u < cols / 4; u += T) __stcs(m4 + u, make_float4(0.f, 0.f, 0.f, 0.f));
    } else {
      for (uint32_t j = threadIdx.x; j < cols; j += T) __stcs(mr + j, 0.0f);
    }
    __syncthreads();  // the ones below land after every zero of the row
    for (uint32_t i = threadIdx.x; i < total; i += T) {
      const uint32_t key = sh.key[i];
      bool keep = key >= t;
      if (!done && key == t) {
        uint32_t before = 0;
        for (uint32_t q = 0; q < total; ++q) before += (sh.key[q] == t && sh.index[q] < sh.index[i]) ? 1u : 0u;
        keep = before < need;
      }
      if (keep) __stcs(mr + sh.index[i], 1.0f);
    }
    __syncthreads();  // sh.key/index are rewritten by the next row
  }
}

}  // namespace tapecheck_cuda
