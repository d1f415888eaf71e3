// T, the k-th largest key of a row held in registers by a team (topk_teams.cuh), by sorting
// networks (topk_sort_net.cuh), for small k: 2 <= k <= kSortedMaxK.
//
// Each member sorts its slots in groups of K = next_pow2(k) and keeps the K largest, which
// hold every key of the member that can be among the row's k largest. The members' lists are
// then merged, K largest kept: within a group of lanes by a butterfly of shuffles; within a
// block's warps by a tournament, and once more across the warps' lists in shared memory. The
// k-th of the team's list is T. The cost is fixed by VPT, K and the team's size: about
// VPT log^2 K / 2 comparisons a member, then (K + K log K) a butterfly level or K + 6 a
// tournament round, against a bit search's comparison per key and step over up to 32 steps,
// each with a team reduction (topk_select.cuh).
//
// Keys past the row's end are 0 (as NaN's), the smallest key: they can rank among the K
// largest of a member only after its keys of the row, and as the row holds more than k
// entries, the k-th largest of row and padding together is the row's.
//
// write_row_mask (topk_select.cuh) then keeps the keys >= T when exactly k of them are, and
// ranks the ties at T by index otherwise.
#pragma once

#include "topk/topk_select.cuh"
#include "topk/topk_sort_net.cuh"

namespace tapecheck_cuda {

constexpr uint32_t kSortedMaxK = 16;

// The list length for k: the smallest power of two >= k.
inline uint32_t sorted_list_length(uint32_t k) { return next_pow2(k); }

// Calls launch(Int<K>) for K = the list length of k, when K <= kMaxK; false when there is none.
template <int kMaxK, class Launch>
bool with_list_length(uint32_t k, Launch launch) {
  auto go = [&](auto list_length) {
    if constexpr (decltype(list_length)::value <= kMaxK) {
      launch(list_length);
      return true;
    } else {
      return false;
    }
  };
  switch (sorted_list_length(k)) {
    case 2: return go(Int<2>{});
    case 4: return go(Int<4>{});
    case 8: return go(Int<8>{});
    case 16: return go(Int<16>{});
    default: return false;
  }
}

// Lists of K (descending) merged by a butterfly of shuffles: afterwards each lane holds the K
// largest of the lists of its aligned run of `lanes` lanes (a power of two, uniform over the
// warp).
template <int K>
__device__ __forceinline__ void merge_across_lanes(uint32_t (&list)[K], unsigned lanes) {
  for (unsigned off = 1; off < lanes; off <<= 1) {
    uint32_t other[K];
#pragma unroll
    for (int j = 0; j < K; ++j) other[j] = __shfl_xor_sync(kFullWarp, list[j], off);
    keep_top(list, other);
  }
}

// The k-th largest of a lane group's lists (kLanes >= 2 lanes, a power of two): the butterfly up
// to its last level, where only the k-th is needed.
template <unsigned kLanes, int K>
__device__ __forceinline__ uint32_t kth_across_lanes(uint32_t (&list)[K], uint32_t k) {
  static_assert(kLanes >= 2 && (kLanes & (kLanes - 1)) == 0, "a group of lanes to merge");
  merge_across_lanes(list, kLanes / 2);
  uint32_t other[K];
#pragma unroll
  for (int j = 0; j < K; ++j) other[j] = __shfl_xor_sync(kFullWarp, list[j], kLanes / 2);
  return kth_of_two(list, other, k);
}

// A k-way merge of a whole warp's lists (descending) by tournament: each round takes the
// largest head of the warp (one reduction instruction) from the lowest lane holding it, which
// drops it from its list. Round r yields the (r + 1)-th largest key of all the lists together,
// on every lane. A round costs about K + 6 instructions where a butterfly level of
// merge_across_lanes costs 2K + K log K, and a warp needs k rounds against 5 levels.
// Block rows of 1K-16K, k = 8: 0.64-0.77 of copy speed, butterflies 0.54-0.74 (CHANGELOG 1.7.0).
//
// Callers run all K rounds and select the first k results, never `if (r < k) pop_largest`:
// with that branch around the warp reduction, ptxas (CUDA 13.0, sm_90) can if-convert a round
// into a reduction predicated on a register written only later in a row's code, so that some
// lanes skip it and the kernel hangs or stops on an illegal instruction.
template <int K>
__device__ __forceinline__ uint32_t pop_largest(uint32_t (&list)[K]) {
  const uint32_t m = __reduce_max_sync(kFullWarp, list[0]);
  const uint32_t holders = __ballot_sync(kFullWarp, list[0] == m);
  const bool mine = (threadIdx.x & 31u) == static_cast<unsigned>(__ffs(holders) - 1);
#pragma unroll
  for (int j = 0; j + 1 < K; ++j) list[j] = mine ? list[j + 1] : list[j];
  list[K - 1] = mine ? 0u : list[K - 1];
  return m;
}

// The k-th largest of a whole warp's lists together (k <= K), by K rounds of pop_largest: the
// k-th round's key. Every lane of the warp calls it; the lists are used up.
template <int K>
__device__ __forceinline__ uint32_t kth_by_tournament(uint32_t (&list)[K], uint32_t k) {
  uint32_t t = 0;
#pragma unroll
  for (int r = 0; r < K; ++r) {  // every round, whatever k (pop_largest: why)
    const uint32_t m = pop_largest(list);
    if (static_cast<uint32_t>(r) + 1u == k) t = m;
  }
  return t;
}

// T of a lane team's row (uniform over the team). Every lane of the warp calls it.
template <int K, int VPT, unsigned G>
__device__ __forceinline__ uint32_t kth_largest_sorted(const LaneTeam<G>&, const uint32_t (&key)[VPT],
                                                       uint32_t k) {
  static_assert(K <= VPT, "a member's list fits its slots");
  uint32_t list[K];
  if constexpr (G == 1 && VPT == K) {
#pragma unroll
    for (int j = 0; j < K; ++j) list[j] = key[j];
    sort_desc(list);
    return kth_of_sorted(list, k);
  } else if constexpr (G == 1) {
    top_of_slots<K, VPT, 1>(key, list);  // the last group's merge is the last one
    uint32_t last[K];
    last_group_sorted<K>(key, last);
    return kth_of_two(list, last, k);
  } else if constexpr (G == 32) {
    // A whole warp: the tournament, K rounds of one reduction each, where the butterfly
    // would take five levels.
    top_of_slots<K, VPT, 0>(key, list);
    return kth_by_tournament(list, k);
  } else {
    top_of_slots<K, VPT, 0>(key, list);
    return kth_across_lanes<G>(list, k);
  }
}

// The warps' lists of a block team, two sets used by row parity: a set is rewritten two rows
// later, after a barrier that every reader of it has passed. [j][warp]: the warps' j-th keys
// are consecutive, so lane w reads warp w's list without bank conflicts.
struct SortedBlockScratch {
  uint32_t list[2][kSortedMaxK][32];
};

// The warps' lists of a block team's row, gathered: afterwards lane w of every warp holds warp
// w's k largest keys (descending, zeros past k; lanes past the last warp all zeros). Every
// thread of the block calls it; `parity` alternates by row.
template <int K, int VPT>
__device__ __forceinline__ void gather_warp_lists(const BlockTeam& team, SortedBlockScratch& s,
                                                  unsigned parity, const uint32_t (&key)[VPT],
                                                  uint32_t k, uint32_t (&list)[K]) {
  static_assert(K <= VPT && K <= static_cast<int>(kSortedMaxK), "lists fit");
  top_of_slots<K, VPT, 0>(key, list);
  // The warp's k largest (the rest of its K largest cannot rank in the row's k: zeros).
  uint32_t top[K];
#pragma unroll
  for (int r = 0; r < K; ++r) {  // every round, whatever k (pop_largest: why)
    const uint32_t m = pop_largest(list);
    top[r] = static_cast<uint32_t>(r) < k ? m : 0u;
  }
  if (team.lane == 0) {
#pragma unroll
    for (int j = 0; j < K; ++j) s.list[parity][j][team.warp] = top[j];
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < K; ++j) list[j] = team.lane < team.warps ? s.list[parity][j][team.lane] : 0u;
}

// T of a block team's row. Every thread of the block calls it; `parity` alternates by row.
template <int K, int VPT>
__device__ __forceinline__ uint32_t kth_largest_sorted(const BlockTeam& team, SortedBlockScratch& s,
                                                       unsigned parity, const uint32_t (&key)[VPT],
                                                       uint32_t k) {
  uint32_t list[K];
  gather_warp_lists<K>(team, s, parity, key, k, list);
  return kth_by_tournament(list, k);
}

}  // namespace tapecheck_cuda
