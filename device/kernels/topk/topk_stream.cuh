// topKMask of rows too long for a block's registers: one block per row, which reads the row
// about once and writes it once.
//   1. Read the row's first S entries (the sample, S from cols and k: stream_sample_cols):
//      per-thread maxima of kChunks interleaved chunks and the smallest key, then `low`, the
//      sample's r-th largest key or a lower bound of it (topk_select.cuh's bound_from_maxima),
//      r <= k (stream_estimate_rank). For r = k, a lower bound of T: the k-th largest of a part
//      of the row is at most the k-th largest of the row. For r < k, an estimate that step 2
//      checks: if fewer than k keys pass it, the row goes on as if its candidates overflowed.
//   2. Read the whole row (the sample again, from L2): the candidates, every key >= low with
//      its index, appended to its warp's region of shared memory (a lane's slots from ballots
//      of the warp: no atomic, no scan; slots are in no particular order, which no result
//      depends on: counts are exact and ties are ranked by index), and the row's maximum.
//   3. T from the candidates alone (for c > low they are every key >= c), then the row is
//      written as zeros and the kept candidates, which are all of the kept entries, as ones.
// Where the sample's bound lets more candidates through than a warp's region holds (rows whose
// large entries all lie past the sample), or an estimate lets fewer than k through (rows whose
// large entries all lie in the sample), steps 1 and 2 run again with the whole row as the
// sample and r = k.
// Rows whose candidates still overflow (heavy ties, or k close to the capacity) search T over
// the re-read row instead, one pass per bit, and rank ties by index tile by tile.
//
// The sample is a part of the row, not all of it, because step 2 re-reads it: a whole row
// re-read misses L2 at 64K columns, where the blocks in flight hold more rows than L2 does.
#pragma once

#include "topk/topk_select.cuh"
#include "common/row_tiles.cuh"  // prefetch_l2

namespace tapecheck_cuda {

// Blocks of 512 threads, four a multiprocessor (32 registers a thread): eight rows in flight,
// so that one row's loads overlap the others' searches; 256-thread blocks (six a
// multiprocessor, the most their shared memory allows) are slower.
// 32K-64K columns: 0.05-0.15 of copy speed faster than blocks of 1024 (CHANGELOG 1.9.3).
constexpr unsigned kStreamThreads = 512;
constexpr int kStreamBlocksPerSM = 4;
// A block a row (grid_for: 4096 / 8192 blocks at 64K / 32K columns); a grid of one wave, each
// block looping over its rows, is slower.
constexpr int kStreamChunks = 4;
constexpr uint32_t kStreamCapacity = 4096;
// __launch_bounds__(kStreamThreads) keeps blocks at most this wide: every warp has a region.
constexpr unsigned kStreamWarps = kStreamThreads / 32;
// Each warp appends the candidates of its own tiles to its own region of the store
// (stream_append says why). A warp's tiles are spread evenly over the row, so on data in random
// order the regions fill about equally; a row whose candidates nearly fill the whole store can
// overflow one region, and takes the paths below for overflowing rows.
constexpr uint32_t kStreamRegion = kStreamCapacity / kStreamWarps;
// Rows of 16-byte units up to this length have the gather ask L2 for the block's tile
// kStreamPrefetchAhead iterations ahead (one bulk prefetch of T units by thread 0 an
// iteration), so that each thread's one 16-byte load in flight mostly hits L2. The sample's
// part of the row is in L2 already (the first pass read it). Longer rows, and four iterations
// ahead, are slower with it.
// 32K, k = 8 / 64: 0.891-0.901 / 0.870-0.876 -> 0.922-0.928 / 0.904-0.907 of copy speed;
// 64K, k = 64: 0.877-0.882 -> 0.865-0.869 (CHANGELOG 1.23.0).
constexpr uint32_t kStreamPrefetchMaxCols = 32768;
constexpr uint32_t kStreamPrefetchAhead = 2;
// Above this k the candidates would often overflow: the launcher uses the histogram kernels.
constexpr uint32_t kStreamMaxK = kStreamCapacity / 2;
static_assert(kStreamMaxK <= kStreamThreads * kStreamChunks, "k within the bound's reach");
// The sample's length: the fewest steps of kStreamSampleStep (at least one, which is at least
// k) that are long enough that on data in random order about k * cols / S <= kStreamCapacity / 4
// keys pass its bound. From cols and k alone (no result depends on it: only the work does).
// Longer samples (fewer candidates) and shorter steps are slower.
// k = 64 at 64K: 4096 entries 0.886-0.889 of copy speed, 8192 0.876-0.878 (CHANGELOG 1.27.0).
constexpr uint32_t kStreamSampleStep = 4096;
// The bound from the threads' maxima only for k <= T / kStreamPerThreadBoundK, else from their
// chunks' maxima.
constexpr uint32_t kStreamPerThreadBoundK = 4;

// The rank r of the sample's key that bounds the first pass: r < k where the r-th largest of S
// sampled keys still lets about 3k of the row's through on data in random order (r about
// 3k * S / cols), but at least kStreamEstimateMinRank, so that the sample's spread rarely lets
// fewer than k through (at r = 24 with one entry in eight sampled, about 192 keys pass on
// average, with a standard deviation of about 40, by an estimate); else k. From cols and k
// alone, as the sample (no result depends on it: only the work does). With r = k, about 8k keys
// would pass at k = 64 at 32K and 64K columns, a candidate in most tiles of the gather.
// k = 64 at 32K: 0.849-0.854 -> 0.876-0.878 of copy speed (CHANGELOG 1.19.0).
constexpr uint32_t kStreamEstimateMinRank = 24;

__device__ __forceinline__ uint32_t stream_estimate_rank(uint32_t cols, uint32_t sample,
                                                         uint32_t k) {
  const uint64_t r = (3ull * k * sample + cols - 1) / cols;
  const uint64_t want = r > kStreamEstimateMinRank ? r : kStreamEstimateMinRank;
  return want < k ? static_cast<uint32_t>(want) : k;
}

__device__ __forceinline__ uint32_t stream_sample_cols(uint32_t cols, uint32_t k) {
  // 4k * cols / S <= capacity
  const size_t whole = ceil_div(4ull * k * cols, size_t{kStreamCapacity} * kStreamSampleStep);
  const uint64_t steps = whole > 0 ? whole : 1;
  const uint64_t s = steps * kStreamSampleStep;
  return s < cols ? static_cast<uint32_t>(s) : cols;
}

struct StreamScratch {
  BlockTeamScratch team;
  uint32_t warp_count[kStreamWarps];  // candidates found by each warp (some may be dropped)
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

// Pass 2: appends every key >= low (and its index) to the warp's region while there is room;
// returns whether every warp's region held its candidates, and sets `found` to this warp's count
// (possibly more than kStreamRegion) and mine_max to the largest key this thread read.
// Warp-uniform loops: each warp walks its tiles of 32 entries (32 units of 4 when the row allows
// 16-byte loads), and a tile without a candidate costs no shared memory at all.

// Appends this lane's entries first_index + i with bit i of `take` set to the warp's region,
// which holds `n` (warp-uniform); returns the new count. All lanes of the warp call it. A lane's
// slot is n plus the candidates of the lanes below it: when no lane has two (most tiles), one
// ballot gives them all; otherwise one ballot per entry of the tile. No scan of the lanes'
// counts and no shared atomic a tile: at k = 64 a candidate falls in most tiles, and those
// would cost more instructions than the loads leave time for.
// k = 64 at 32K: 0.856-0.857 of copy speed, one store a block 0.807-0.811 (CHANGELOG 1.18.0).
template <int N>
__device__ __forceinline__ uint32_t stream_append(uint32_t* region_key, uint32_t* region_index,
                                                  uint32_t n, uint32_t take,
                                                  const uint32_t (&key)[N], uint32_t first_index) {
  const uint32_t below = (1u << (threadIdx.x & 31u)) - 1u;
  // Most tiles give a lane at most one candidate: then one ballot places the warp's.
  if (!__any_sync(kFullWarp, (take & (take - 1u)) != 0u)) {
    const uint32_t voters = __ballot_sync(kFullWarp, take != 0u);
    if (take != 0u) {
      const uint32_t pos = n + static_cast<uint32_t>(__popc(voters & below));
      const int at = __ffs(static_cast<int>(take)) - 1;
      uint32_t v = key[0];
#pragma unroll
      for (int i = 1; i < N; ++i) v = at == i ? key[i] : v;
      if (pos < kStreamRegion) {
        region_key[pos] = v;
        region_index[pos] = first_index + static_cast<uint32_t>(at);
      }
    }
    return n + static_cast<uint32_t>(__popc(voters));
  }
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const bool mine = (take >> i) & 1u;
    const uint32_t voters = __ballot_sync(kFullWarp, mine);
    const uint32_t pos = n + static_cast<uint32_t>(__popc(voters & below));
    if (mine && pos < kStreamRegion) {
      region_key[pos] = key[i];
      region_index[pos] = first_index + static_cast<uint32_t>(i);
    }
    n += static_cast<uint32_t>(__popc(voters));
  }
  return n;
}

// The keys of entries 4u .. 4u + 3 from one 16-byte load.
__device__ __forceinline__ void stream_load_unit(const float4* x4, uint32_t u, uint32_t (&key)[4]) {
  const float4 q = __ldg(x4 + u);
  key[0] = rank_key(q.x);
  key[1] = rank_key(q.y);
  key[2] = rank_key(q.z);
  key[3] = rank_key(q.w);
}

// The block's earlier collectives (team.max before each gather, the barrier ending each row)
// order this pass's writes after every read of the previous candidates.
template <bool kPrefetch>
__device__ bool stream_gather(const float* xr, uint32_t cols, uint32_t low, StreamScratch& sh,
                              uint32_t& found, uint32_t& mine_max) {
  const uint32_t T = blockDim.x;
  const uint32_t lane = threadIdx.x & 31u;
  const uint32_t warp = threadIdx.x / 32u;
  uint32_t* const region_key = sh.key + warp * kStreamRegion;
  uint32_t* const region_index = sh.index + warp * kStreamRegion;
  uint32_t n = 0;
  mine_max = 0u;
  if (cols % 4 == 0 && aligned16(xr)) {
    // One 16-byte unit a lane an iteration: 4-byte loads keep DRAM far from busy, and two
    // units a lane spill at 32 registers (0.01-0.05 of copy speed slower).
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    const uint32_t units = cols / 4;
    for (uint32_t u0 = threadIdx.x - lane; u0 < units; u0 += T) {
      const uint32_t u = u0 + lane;
      if constexpr (kPrefetch) {
        // Thread 0 (u == u0). In units of kStreamThreads, the launch's block size, not T: a
        // constant offset from the load's address costs no register (T did spill).
        constexpr uint32_t kAhead = kStreamPrefetchAhead * kStreamThreads;
        if (threadIdx.x == 0 && u + kAhead < units) {
          const uint32_t left = units - (u + kAhead);
          prefetch_l2(reinterpret_cast<const float*>(x4 + u + kAhead),
                      (left < kStreamThreads ? left : kStreamThreads) * 16u);
        }
      }
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
      n = stream_append(region_key, region_index, n, take, key, 4u * u);
    }
  } else {
    for (uint32_t j0 = threadIdx.x - lane; j0 < cols; j0 += T) {
      const uint32_t j = j0 + lane;
      const uint32_t key[1] = {j < cols ? rank_key(xr[j]) : 0u};
      mine_max = ::max(mine_max, key[0]);
      const uint32_t take = (j < cols && key[0] >= low) ? 1u : 0u;
      if (__ballot_sync(kFullWarp, take != 0u) == 0u) continue;
      n = stream_append(region_key, region_index, n, take, key, j);
    }
  }
  if (lane == 0) sh.warp_count[warp] = n;
  found = n;
  return __syncthreads_or(lane == 0 && n > kStreamRegion) == 0;
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

// kPrefetch: rows up to kStreamPrefetchMaxCols (the launcher decides); it acts only in the
// gather's 16-byte path.
template <bool kPrefetch>
__global__ void __launch_bounds__(kStreamThreads, kStreamBlocksPerSM)
    topk_by_stream(size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  __shared__ StreamScratch sh;
  BlockTeam team(&sh.team);
  const uint32_t T = blockDim.x;
  const uint32_t sample = stream_sample_cols(cols, k);
  for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* xr = x + row * cols;
    float* mr = mask + row * cols;
    uint32_t low = 0u, found = 0u, mine_max = 0u;
    bool held = false;
    for (uint32_t span = sample; ; span = cols) {  // the sample, then the row if it overflowed
      uint32_t chunk_max[kStreamChunks], mine_min;
      stream_stats(xr, span, chunk_max, mine_min);
      uint32_t sample_max = 0u;
#pragma unroll
      for (int c = 0; c < kStreamChunks; ++c) sample_max = ::max(sample_max, chunk_max[c]);
      const uint32_t high = team.max(sample_max);
      low = team.min(mine_min);  // span >= k entries are >= it
      // The chunks' bound unless k is well below the threads: at k = 1024 the threads' bound
      // (their smallest maximum) lets the candidates overflow at 32K-64K columns, and the rows
      // go to stream_fallback (0.07-0.12 of copy speed against 0.36-0.40: CHANGELOG 1.9.3).
      const uint32_t rank = span == cols ? k : stream_estimate_rank(cols, span, k);
      if (rank <= T * kStreamChunks) {
        low = bound_from_maxima(team, chunk_max, sample_max, high, low, rank, true,
                                kStreamPerThreadBoundK * rank <= T);
      }
      held = stream_gather<kPrefetch>(xr, cols, low, sh, found, mine_max);
      // An estimate is a bound of T only when at least k keys passed it.
      if (held && rank < k) held = team.sum((threadIdx.x & 31u) == 0u ? found : 0u) >= k;
      if (held || span == cols) break;
    }
    const uint32_t high = team.max(mine_max);
    if (!held) {
      stream_fallback(team, xr, mr, cols, k, low, high);
      continue;
    }
    // Each warp counts the candidates of its own region.
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t region = threadIdx.x / 32u * kStreamRegion;
    // As in topk_row: for c <= low the count is at least k but not exact (k + 1 stands for it).
    auto candidates_at_least = [&](uint32_t c) {
      uint32_t local = 0;
      for (uint32_t i = lane; i < found; i += 32u) local += sh.key[region + i] >= c ? 1u : 0u;
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
      for (uint32_t i = lane; i < found; i += 32u) mine_greater += sh.key[region + i] > t ? 1u : 0u;
      need = k - team.sum(mine_greater);
    }
    // Streaming stores (the mask is not read again here; L2 is kept for the row's re-read). The
    // zeros are written here, not in the gather right after each unit's load, which spills.
    if (cols % 4 == 0 && aligned16(mr)) {
      float4* m4 = reinterpret_cast<float4*>(mr);
      for (uint32_t u = threadIdx.x; u < cols / 4; u += T) __stcs(m4 + u, make_float4(0.f, 0.f, 0.f, 0.f));
    } else {
      for (uint32_t j = threadIdx.x; j < cols; j += T) __stcs(mr + j, 0.0f);
    }
    __syncthreads();  // the ones below land after every zero of the row
    for (uint32_t i = region + lane; i < region + found; i += 32u) {
      const uint32_t key = sh.key[i];
      bool keep = key >= t;
      if (!done && key == t) {
        uint32_t before = 0;
        for (uint32_t w = 0; w < kStreamWarps; ++w) {
          for (uint32_t q = w * kStreamRegion; q < w * kStreamRegion + sh.warp_count[w]; ++q) {
            before += (sh.key[q] == t && sh.index[q] < sh.index[i]) ? 1u : 0u;
          }
        }
        keep = before < need;
      }
      if (keep) __stcs(mr + sh.index[i], 1.0f);
    }
    __syncthreads();  // sh.key/index are rewritten by the next row
  }
}

}  // namespace tapecheck_cuda
