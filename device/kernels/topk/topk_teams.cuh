// The threads that hold one row of topKMask between them: a group of lanes of a warp, a whole
// warp, a group of whole warps, or a whole block. Member m holds the row's entries m, m + size,
// m + 2 size, ... so (slot, member) order is index order.
//
// Every method is a collective: all threads of the warp (lane teams), of the group's warps
// (warp group teams) or of the block (block team) call it together, and it returns a value
// uniform over the team.
#pragma once

#include "common/common.cuh"
#include "topk/topk_key.cuh"

namespace tapecheck_cuda {

constexpr uint32_t kFullWarp = 0xffffffffu;

// The sum of v over lanes 0..lane of the warp (every lane calls it).
__device__ __forceinline__ uint32_t warp_inclusive_sum(uint32_t v, unsigned lane) {
#pragma unroll
  for (unsigned off = 1; off < 32; off <<= 1) {
    const uint32_t w = __shfl_up_sync(kFullWarp, v, off);
    if (lane >= off) v += w;
  }
  return v;
}

// G lanes of one warp, G a power of two (1: a thread per row); a warp holds 32 / G rows. A
// whole warp (G == 32) uses the warp-wide reduction instructions; smaller groups combine by
// shuffles within the group. G is a compile-time constant so that slot offsets are immediates.
template <unsigned G, bool kCarry = false>
struct LaneTeam {
  static constexpr bool kCarryCount = kCarry;
  static constexpr bool kWholeWarp = G == 32;
  static constexpr unsigned size = G;
  // topk_row may pack this team's candidates in shared memory (exclusive_sum): whole warps,
  // for k > kRegisterCandidatesMaxK (topk_select.cuh).
  static constexpr bool kPacksCandidates = kWholeWarp;
  static constexpr bool kPacksEveryK = false;
  // topk_row searches T by interpolation (topk_interpolate.cuh) for this team at up to 16 keys
  // a lane (topk_row says for which k).
  static constexpr bool kInterpolates = true;
  unsigned member;  // this lane's index in its group
  uint32_t bits;    // the group's lanes within the warp
  uint32_t below;   // the group's lanes below this one

  __device__ LaneTeam() {
    const unsigned lane = threadIdx.x & 31u;
    member = lane & (G - 1u);
    bits = kWholeWarp ? kFullWarp : (((1u << G) - 1u) << (lane & ~(G - 1u)));
    below = bits & ((1u << lane) - 1u);
  }

  __device__ uint32_t count(bool p) const { return __popc(__ballot_sync(kFullWarp, p) & bits); }

  __device__ uint32_t sum(uint32_t v) const {
    return reduce(v, [](uint32_t a) { return __reduce_add_sync(kFullWarp, a); },
                  [](uint32_t a, uint32_t b) { return a + b; });
  }
  __device__ uint32_t max(uint32_t v) const {
    return reduce(v, [](uint32_t a) { return __reduce_max_sync(kFullWarp, a); },
                  [](uint32_t a, uint32_t b) { return ::max(a, b); });
  }
  __device__ uint32_t min(uint32_t v) const {
    return reduce(v, [](uint32_t a) { return __reduce_min_sync(kFullWarp, a); },
                  [](uint32_t a, uint32_t b) { return ::min(a, b); });
  }

  // A whole warp reduces in one instruction (`whole`); a smaller group by a butterfly of
  // shuffles within the group, combining with `op`.
  template <class Whole, class Op>
  __device__ uint32_t reduce(uint32_t v, Whole whole, Op op) const {
    if constexpr (kWholeWarp) {
      return whole(v);
    } else {
      for (unsigned off = 1; off < G; off <<= 1) v = op(v, __shfl_xor_sync(kFullWarp, v, off));
      return v;
    }
  }

  // How many of the team's keys are >= c. With one or two slots a ballot per slot counts 32
  // keys in one instruction; with more, each lane counts its own and one reduction follows.
  template <int VPT>
  __device__ uint32_t count_at_least(const uint32_t (&key)[VPT], uint32_t c) const {
    if constexpr (VPT <= 2) {
      uint32_t n = 0;
#pragma unroll
      for (int i = 0; i < VPT; ++i) n += count(key[i] >= c);
      return n;
    } else {
      return sum(count_keys_at_least<kCarry>(key, c));
    }
  }

  // Loops over the warp's groups must run the same number of times (the collectives take every
  // lane): a loop ends when all groups of the warp are done, and starts at the warp's highest
  // starting bit. all(p): p uniform over the team; every(p): any p. Both are warp-wide here.
  __device__ bool all(bool p) const { return __all_sync(kFullWarp, p); }
  __device__ bool every(bool p) const { return __all_sync(kFullWarp, p); }
  __device__ int uniform_bit(int bit) const {
    if constexpr (kWholeWarp) {
      return bit;
    } else {
      return static_cast<int>(__reduce_max_sync(kFullWarp, static_cast<uint32_t>(bit + 1))) - 1;
    }
  }

  // How many members below this one have p.
  __device__ uint32_t rank(bool p) const { return __popc(__ballot_sync(kFullWarp, p) & below); }

  // The sum of v over the members below this one, and in `total` over the team (whole warps).
  __device__ uint32_t exclusive_sum(uint32_t v, uint32_t& total) const {
    static_assert(kWholeWarp, "lane groups have no prefix sums");
    const uint32_t upto = warp_inclusive_sum(v, member);
    total = __shfl_sync(kFullWarp, upto, 31);
    return upto - v;
  }
  // Orders the team's shared-memory writes before its reads.
  __device__ void sync() const { __syncwarp(); }
};

// Shared memory of a block team: two buffers of per-warp partials, used alternately so that
// one barrier per reduction suffices (a buffer is rewritten only after the next reduction's
// barrier, which every reader of the previous use has passed).
struct BlockTeamScratch {
  uint32_t partial[2][32];
  uint32_t warp_counts[32];
};

// All threads of a block (a multiple of 32, at most 1024).
struct BlockTeam {
  // The candidates stay in registers: packing a block's candidates in shared memory, or handing
  // its searches to one warp, is slower (topk_select.cuh, kRegisterCandidatesMaxK).
  static constexpr bool kPacksCandidates = false;
  static constexpr bool kPacksEveryK = false;
  static constexpr bool kCarryCount = false;
  static constexpr bool kInterpolates = false;
  BlockTeamScratch* s;
  unsigned size, member, lane, warp, warps;
  unsigned phase = 0;

  __device__ explicit BlockTeam(BlockTeamScratch* scratch)
      : s(scratch), size(blockDim.x), member(threadIdx.x), lane(threadIdx.x & 31u),
        warp(threadIdx.x >> 5), warps(blockDim.x >> 5) {}

  __device__ uint32_t count(bool p) const { return static_cast<uint32_t>(__syncthreads_count(p)); }

  template <class WarpOp>
  __device__ uint32_t across(uint32_t v, uint32_t identity, WarpOp op) {
    v = op(v);
    uint32_t* buf = s->partial[phase];
    phase ^= 1u;
    if (lane == 0) buf[warp] = v;
    __syncthreads();
    return op(lane < warps ? buf[lane] : identity);
  }
  __device__ uint32_t sum(uint32_t v) {
    return across(v, 0u, [](uint32_t a) { return __reduce_add_sync(kFullWarp, a); });
  }
  __device__ uint32_t max(uint32_t v) {
    return across(v, 0u, [](uint32_t a) { return __reduce_max_sync(kFullWarp, a); });
  }
  __device__ uint32_t min(uint32_t v) {
    return across(v, ~0u, [](uint32_t a) { return __reduce_min_sync(kFullWarp, a); });
  }

  template <int VPT>
  __device__ uint32_t count_at_least(const uint32_t (&key)[VPT], uint32_t c) {
    return sum(count_keys_at_least<false>(key, c));
  }

  __device__ bool all(bool p) const { return p; }  // for p already uniform over the block
  __device__ bool every(bool p) const { return __syncthreads_and(p) != 0; }  // any p
  __device__ int uniform_bit(int bit) const { return bit; }

  __device__ uint32_t rank(bool p) {
    const uint32_t ballot = __ballot_sync(kFullWarp, p);
    if (lane == 0) s->warp_counts[warp] = __popc(ballot);
    __syncthreads();
    uint32_t before = 0;
    for (unsigned w = 0; w < warp; ++w) before += s->warp_counts[w];
    __syncthreads();  // warp_counts is rewritten by the next call
    return before + __popc(ballot & ((1u << lane) - 1u));
  }
};

// Shared memory of a warp group team: its warps' partials, in two sets used alternately, as
// BlockTeamScratch's.
template <unsigned kWarps>
struct WarpGroupScratch {
  uint32_t partial[2][kWarps];
};

// kWarps warps of a block holding one row between them (32 kWarps members, member m in warp
// m / 32), for rows too long for one warp's registers. Each collective reduces within each warp
// in one instruction and combines the kWarps partials through shared memory behind one named
// barrier (bar.sync with the group's own id and 32 kWarps threads), so the block's other groups
// go on.
template <unsigned kWarps, bool kCarry>
struct WarpGroupTeam {
  static_assert(kWarps >= 2 && 32 * kWarps <= 1024, "a group is 2 to 32 warps of one block");
  static constexpr bool kCarryCount = kCarry;
  // For every k: with two candidate registers a thread, about 18 candidates at k = 16 (an
  // estimate for data in random order) would overflow some thread of about one row in five,
  // whose search then counts all of its keys.
  static constexpr bool kPacksCandidates = true;
  static constexpr bool kPacksEveryK = true;
  static constexpr bool kInterpolates = false;
  static constexpr unsigned size = 32 * kWarps;
  WarpGroupScratch<kWarps>* s;
  unsigned barrier;  // the group's named barrier, 1-15 (0 is __syncthreads')
  unsigned member, lane, warp;
  unsigned phase = 0;

  __device__ WarpGroupTeam(WarpGroupScratch<kWarps>* scratch, unsigned barrier_id)
      : s(scratch), barrier(barrier_id), member(threadIdx.x % size), lane(threadIdx.x & 31u),
        warp((threadIdx.x % size) / 32) {}

  // Orders the group's shared-memory writes before its reads.
  __device__ void sync() const {
    asm volatile("bar.sync %0, %1;" ::"r"(barrier), "r"(size) : "memory");
  }

  // The kWarps partials (each uniform over its warp), after one barrier. They stay readable
  // until the next call but one, which writes the same set.
  __device__ const uint32_t* partials(uint32_t mine) {
    uint32_t* buf = s->partial[phase];
    phase ^= 1u;
    if (lane == 0) buf[warp] = mine;
    sync();
    return buf;
  }

  template <class Op>
  __device__ uint32_t combine(uint32_t mine, Op op) {
    const uint32_t* p = partials(mine);
    uint32_t v = p[0];
#pragma unroll
    for (unsigned w = 1; w < kWarps; ++w) v = op(v, p[w]);
    return v;
  }

  __device__ uint32_t sum(uint32_t v) {
    return combine(__reduce_add_sync(kFullWarp, v),
                   [](uint32_t a, uint32_t b) { return a + b; });
  }
  __device__ uint32_t max(uint32_t v) {
    return combine(__reduce_max_sync(kFullWarp, v),
                   [](uint32_t a, uint32_t b) { return ::max(a, b); });
  }
  __device__ uint32_t min(uint32_t v) {
    return combine(__reduce_min_sync(kFullWarp, v),
                   [](uint32_t a, uint32_t b) { return ::min(a, b); });
  }
  __device__ uint32_t count(bool p) { return sum(p ? 1u : 0u); }

  template <int VPT>
  __device__ uint32_t count_at_least(const uint32_t (&key)[VPT], uint32_t c) {
    return sum(count_keys_at_least<kCarry>(key, c));
  }

  __device__ bool all(bool p) const { return p; }  // for p already uniform over the group
  __device__ bool every(bool p) { return min(p ? 1u : 0u) != 0; }  // any p
  __device__ int uniform_bit(int bit) const { return bit; }

  // How many members below this one have p.
  __device__ uint32_t rank(bool p) {
    const uint32_t ballot = __ballot_sync(kFullWarp, p);
    const uint32_t* p_warps = partials(__popc(ballot));
    uint32_t before = 0;
#pragma unroll
    for (unsigned w = 0; w + 1 < kWarps; ++w) before += w < warp ? p_warps[w] : 0u;
    return before + __popc(ballot & ((1u << lane) - 1u));
  }

  // The sum of v over the members below this one, and in `total` over the group.
  __device__ uint32_t exclusive_sum(uint32_t v, uint32_t& total) {
    const uint32_t upto = warp_inclusive_sum(v, lane);
    const uint32_t* p = partials(__shfl_sync(kFullWarp, upto, 31));
    uint32_t before = 0, all = 0;
#pragma unroll
    for (unsigned w = 0; w < kWarps; ++w) {
      before += w < warp ? p[w] : 0u;
      all += p[w];
    }
    total = all;
    return upto - v + before;
  }
};

}  // namespace tapecheck_cuda
