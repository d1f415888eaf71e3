// topKMask for lists of 16 (9 <= k <= 16) on rows past the lane groups of topk_sorted.cu
// (from 1025 columns), one warp a row:
//   1. The row passes through the warp a chunk of kWarpChunkSlots keys a lane at a time; each
//      lane keeps the K = next_pow2(k) largest keys it has seen (topk_sort_net.cuh: sort the
//      chunk's slots in groups of K, keep the K largest with the lane's list).
//   2. T, the k-th largest key, is the k-th of the lanes' lists together (the warp tournament
//      of topk_sorted.cuh): every key of a lane that can rank among the row's k largest is in
//      the lane's list.
//   3. The row is read again (from L2, as long as it still holds the row: the warp read it
//      just before) and the mask written as key >= T, counting those keys. Exactly k of them: that is the mask. More
//      (ties at T): the row is written once more, the keys == T kept in index order, `need`
//      of them (the stores of step 3 are then overwritten). x and mask must not overlap.
// A block's warps take rows independently: no barrier, no shared memory.
//
// Why for lists of 16 only: the lane groups hold a whole row in registers and read it once,
// but a list of 16 costs them 128-221 registers a thread, and the block rows stop at lists of 8
// (topk_sorted.cu). Reading in chunks, this kernel needs 80 registers at K = 16. For shorter
// lists it is slower than both (topk_sorted.cu, kSortedWarpMinCols): its second read of a row
// misses L2 once the warps' rows in flight outgrow it.
#pragma once

#include "topk/topk_sorted.cuh"

namespace tapecheck_cuda {

// Keys a lane a chunk: 32 entries, the lane groups' width at 1K columns (80 registers at K = 16).
constexpr int kWarpChunkSlots = 32;
constexpr uint32_t kWarpChunk = 32u * kWarpChunkSlots;

// The keys of chunk c0 (entries c0 .. c0 + kWarpChunk - 1) this lane holds, 0 past the row's end.
// kVec (cols % 4 == 0, 16-byte aligned row): units of 4, lane l taking units l, l + 32, ... of
// the chunk; otherwise entries l, l + 32, ... Any assignment serves steps 1 and 3, as long as
// both use the same one.
template <bool kVec>
__device__ __forceinline__ void load_warp_chunk(const float* __restrict__ xr, uint32_t cols,
                                                uint32_t c0, uint32_t lane,
                                                uint32_t (&key)[kWarpChunkSlots]) {
  if constexpr (kVec) {
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    const uint32_t units = cols / 4;
#pragma unroll
    for (int q = 0; q < kWarpChunkSlots / 4; ++q) {
      const uint32_t u = c0 / 4 + lane + 32u * static_cast<uint32_t>(q);
      float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
      const bool in = u < units;
      if (in) v = __ldg(x4 + u);
      key[4 * q] = in ? rank_key(v.x) : 0u;
      key[4 * q + 1] = in ? rank_key(v.y) : 0u;
      key[4 * q + 2] = in ? rank_key(v.z) : 0u;
      key[4 * q + 3] = in ? rank_key(v.w) : 0u;
    }
  } else {
    load_keys<kWarpChunkSlots>(key, xr + c0, lane, 32u, cols - c0);
  }
}

// Step 3's fast path: writes key >= t for this lane's entries of chunk c0 (load_warp_chunk's
// assignment), adding to `kept` those >= t and to `equal` those == t (entries of the row only).
template <bool kVec>
__device__ __forceinline__ void write_warp_chunk(float* __restrict__ mr, uint32_t cols, uint32_t c0,
                                                 uint32_t lane, const uint32_t (&key)[kWarpChunkSlots],
                                                 uint32_t t, uint32_t& kept, uint32_t& equal) {
  if constexpr (kVec) {
    float4* m4 = reinterpret_cast<float4*>(mr);
    const uint32_t units = cols / 4;
#pragma unroll
    for (int q = 0; q < kWarpChunkSlots / 4; ++q) {
      const uint32_t u = c0 / 4 + lane + 32u * static_cast<uint32_t>(q);
      if (u < units) {
        float o[4];
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          o[c] = key[4 * q + c] >= t ? 1.f : 0.f;
          kept += key[4 * q + c] >= t ? 1u : 0u;
          equal += key[4 * q + c] == t ? 1u : 0u;
        }
        __stcs(m4 + u, make_float4(o[0], o[1], o[2], o[3]));
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < kWarpChunkSlots; ++i) {
      const uint32_t j = c0 + lane + 32u * static_cast<uint32_t>(i);
      if (j < cols) {
        kept += key[i] >= t ? 1u : 0u;
        equal += key[i] == t ? 1u : 0u;
        __stcs(mr + j, key[i] >= t ? 1.f : 0.f);
      }
    }
  }
}

// Step 3's tie path (rare): the whole row again in index order, 32 entries a step; the keys
// == t are ranked by index and the first `need` kept.
__device__ __forceinline__ void write_warp_row_ties(const LaneTeam<32>& team, const float* __restrict__ xr,
                                                    float* __restrict__ mr, uint32_t cols, uint32_t t,
                                                    uint32_t need) {
  uint32_t equal_before = 0;
  for (uint32_t j0 = 0; j0 < cols; j0 += 32u) {
    const uint32_t j = j0 + team.member;
    const bool in = j < cols;
    const uint32_t key = in ? rank_key(xr[j]) : 0u;
    const bool eq = in && key == t;
    const uint32_t r = equal_before + team.rank(eq);
    equal_before += team.count(eq);
    if (in) mr[j] = (key > t || (eq && r < need)) ? 1.f : 0.f;
  }
}

template <int K, bool kVec>
__global__ void __launch_bounds__(kBlock)
    topk_sorted_by_warp(size_t rows, uint32_t cols, uint32_t k, const float* __restrict__ x,
                        float* __restrict__ mask) {
  const LaneTeam<32> team;
  constexpr size_t kWarps = kBlock / 32;
  // A warp a row: every loop bound below is uniform over the warp.
  for (size_t row = blockIdx.x * kWarps + threadIdx.x / 32; row < rows;
       row += static_cast<size_t>(gridDim.x) * kWarps) {
    const float* xr = x + row * cols;
    float* mr = mask + row * cols;
    uint32_t list[K];
#pragma unroll
    for (int j = 0; j < K; ++j) list[j] = 0u;
    for (uint32_t c0 = 0; c0 < cols; c0 += kWarpChunk) {
      uint32_t key[kWarpChunkSlots], top[K];
      load_warp_chunk<kVec>(xr, cols, c0, team.member, key);
      top_of_slots<K, kWarpChunkSlots, 0>(key, top);
      keep_top(list, top);
    }
    const uint32_t t = kth_by_tournament(list, k);
    uint32_t kept = 0, equal = 0;
    for (uint32_t c0 = 0; c0 < cols; c0 += kWarpChunk) {
      uint32_t key[kWarpChunkSlots];
      load_warp_chunk<kVec>(xr, cols, c0, team.member, key);
      write_warp_chunk<kVec>(mr, cols, c0, team.member, key, t, kept, equal);
    }
    const uint32_t at_least = team.sum(kept);  // >= k, as T is the k-th largest
    if (at_least == k) continue;
    const uint32_t greater = at_least - team.sum(equal);  // < k
    __syncwarp();  // the tie pass's stores land after the fast path's, whichever lane made those
    write_warp_row_ties(team, xr, mr, cols, t, k - greater);
  }
}

}  // namespace tapecheck_cuda
