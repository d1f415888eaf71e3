// topKMask of one row held in registers by a team (topk_teams.cuh), k in [1, cols).
//
// Let T be the k-th largest key of the row (topk_key.cuh). The kept entries are the keys > T
// and, of the keys == T, the first (k - count(key > T)) by index. T is the largest t with
// count(key >= t) >= k, found one bit at a time from the top, with three shortcuts:
//   - T lies between a lower bound `low` and the row's largest key, so it shares their leading
//     bits and the search starts below them. `low` is the row's smallest key or, when each
//     member holds many entries, the k-th largest of the members' maxima (of their chunks'
//     maxima when k exceeds the members): those are k distinct entries, so T is at least that,
//     and usually within a few bits of it.
//   - With that bound, only the keys >= low (the candidates, usually a few more than k) can
//     change a count the search makes, so each member gathers its candidates into kCandidates
//     registers and the search counts those instead of every key, unless some member has more.
//   - As soon as count(key >= t) == k, the keys >= t are exactly the kept entries (each is
//     beaten only by keys >= t, fewer than k of them), whatever T's remaining bits are. On rows
//     without a tie at T this ends the search a few bits after the keys at rank k and k + 1
//     part.
// Lane teams of up to 16 keys a member search by interpolation instead for k > 16, and
// wherever their search would count every key (topk_interpolate.cuh, topk_row), with the same
// early end.
// Keys are integers, so every count is exact and the result does not depend on any order.
#pragma once

#include "topk/topk_interpolate.cuh"
#include "topk/topk_key.cuh"
#include "topk/topk_teams.cuh"

namespace tapecheck_cuda {

// Two registers of candidates a thread: four are up to 5% slower at k = 1 and 8 and no faster at
// k = 64, where both overflow often and the search counts every key (CHANGELOG 1.2.0).
constexpr int kCandidates = 2;
// Above kRegisterCandidatesMaxK (for every k in a warp group: topk_teams.cuh, kPacksEveryK), a
// whole warp given shared memory packs the row's candidates together there instead, kSharedSlots
// a lane, so that how they fall among the lanes does not matter: by an estimate for data in
// random order, about 70-90 keys pass the chunks' bound at k = 64, a few a lane on average but
// more than two on some lane of most rows, whose search then counts every key. Block teams keep
// theirs in registers: their search steps wait on barriers more than on the counting.
// k = 17-64 at 1K-2K: a warp packing 0.82-0.86 of copy speed, block rows 0.52-0.69
// (CHANGELOG 1.9.5).
constexpr uint32_t kRegisterCandidatesMaxK = 16;
constexpr int kSharedSlots = 4;

// t holds the bits above `bit` that every value in [low, high] shares; the search goes on from
// `bit` (-1: low == high, nothing left to find).
struct SearchStart {
  uint32_t t;
  int bit;
};

__device__ __forceinline__ SearchStart common_prefix(uint32_t low, uint32_t high) {
  if (low >= high) return SearchStart{low, -1};
  const int h = 31 - __clz(low ^ high);
  const uint32_t above = h == 31 ? 0u : (~0u << (h + 1));
  return SearchStart{low & above, h};
}

// Raises t bit by bit while count_at_least(t) >= k holds (it must hold at the start); sets
// `done` and stops when the count is exactly k. Without `done`, the result is the largest such t.
// high: the team's largest key, where the caller passes it: a cand above it counts no key, so
// it is refused without counting. It must be uniform over every thread that joins the team's
// collectives (the whole warp for lane groups, which therefore do not pass it).
template <class Team, class CountAtLeast>
__device__ uint32_t search_down(Team& team, SearchStart start, uint32_t k, bool& done,
                                CountAtLeast count_at_least, uint32_t part_from = 0u,
                                bool stop_at_parting = false, uint32_t high = ~0u) {
  uint32_t t = start.t;
  // A team that starts below the warp's highest bit re-checks bits it already knows: a set one
  // gives cand == t (count >= k), a clear one cand > T (count < k). Neither changes t wrongly.
  for (int b = team.uniform_bit(start.bit); b >= 0; --b) {
    if (team.all(done)) break;
    const uint32_t cand = t | (1u << b);
    if (cand > high) continue;
    const uint32_t n = count_at_least(cand);
    if (!done && n >= k) {
      t = cand;
      done = n == k;
    }
    // t has a 0 where part_from has a 1: t's bits below can no longer change where t and
    // part_from part, which is all a caller that asks this wants of t.
    if (stop_at_parting && ((t ^ part_from) >> b & 1u)) done = true;
  }
  return t;
}

// A lower bound of T: the k-th largest of the members' maxima (per_member, k <= team.size) or of
// their chunks' maxima (k <= team.size * kChunks). The chunks' bound is the tighter one, most of
// all as k nears team.size, where the members' is their smallest maximum; the members' costs
// less to search (a count of one key a member). Maxima of padding and NaN are 0, below every
// candidate, so they are never counted.
//
// prefix_only: the caller wants only the bits the bound shares with `high` (where a search
// starts), not a filter of candidates: the search stops where the two part, its lower bits 0.
template <int kChunks, class Team>
__device__ uint32_t bound_from_maxima(Team& team, const uint32_t (&chunk_max)[kChunks],
                                      uint32_t mine_max, uint32_t high, uint32_t low, uint32_t k,
                                      bool live, bool per_member, bool prefix_only = false) {
  // The k-th largest maximum lies between the smallest maximum and the row's maximum: on most
  // data these share the sign and exponent, which the search then skips.
  uint32_t least_chunk_max = ~0u;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) least_chunk_max = ::min(least_chunk_max, chunk_max[c]);
  uint32_t least = team.min(per_member ? mine_max : least_chunk_max);
  if (!live) least = 0u;
  bool done = !live;
  const uint32_t bound = search_down(team, common_prefix(least, high), k, done, [&](uint32_t c) {
    if (per_member) return team.count(mine_max >= c);
    return team.sum(count_keys_at_least<Team::kCarryCount>(chunk_max, c));
  }, high, prefix_only);
  return ::max(low, bound);
}

// Packs the team's keys >= low into store (kSharedSlots * team.size entries, in no particular
// order: only counts are taken from them) and loads member m's share, the entries m, m + size,
// ... (0 past the last). `mine`: this member's count of keys >= low. False, uniform over the
// team, when they do not fit.
template <int VPT, class Team>
__device__ bool pack_candidates(Team& team, const uint32_t (&key)[VPT], uint32_t low, uint32_t mine,
                                uint32_t* store, uint32_t (&cand)[kSharedSlots]) {
  uint32_t total;
  uint32_t pos = team.exclusive_sum(mine, total);
  if (total > kSharedSlots * team.size) return false;
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    if (key[i] >= low) store[pos++] = key[i];
  }
  team.sync();
#pragma unroll
  for (int c = 0; c < kSharedSlots; ++c) {
    const uint32_t at = team.member + static_cast<uint32_t>(c) * team.size;
    cand[c] = at < total ? store[at] : 0u;
  }
  team.sync();  // the team's next row rewrites the store
  return true;
}

template <int VPT, class Team>
__device__ bool gather_shared(Team& team, const uint32_t (&key)[VPT], uint32_t low, uint32_t* store,
                              uint32_t (&cand)[kSharedSlots]) {
  return pack_candidates(team, key, low, count_keys_at_least<Team::kCarryCount>(key, low), store,
                         cand);
}

// Writes the mask of one row, given t and `done` from a search: with `done`, exactly k keys are
// >= t; without it, t == T (the k-th largest key). key[i] is entry member + i * team.size (0
// past the row's end); `live` is false for a team without a row (it still joins the
// collectives).
template <int VPT, class Team>
__device__ void write_row_mask(Team& team, const uint32_t (&key)[VPT], uint32_t cols, uint32_t k,
                               uint32_t t, bool done, bool live, float* mask_row) {
  const bool full = live && team.member + static_cast<uint32_t>(VPT - 1) * team.size < cols;
  auto in_row = [&](int i) {
    return full || (live && team.member + static_cast<uint32_t>(i) * team.size < cols);
  };
  // Without `done`, t == T and more than k keys are >= T: ties at T (NaNs, when fewer than k
  // entries are numbers). The keys == T are then kept in index order, `need` of them.
  uint32_t need = 0, equal = 0;
  if (!team.all(done)) {
    uint32_t mine_equal = 0;
#pragma unroll
    for (int i = 0; i < VPT; ++i) mine_equal += (in_row(i) && key[i] == t) ? 1u : 0u;
    equal = team.sum(mine_equal);
    need = k - team.count_at_least(key, t + 1u);  // t <= 0xff800000: no overflow
  }
  const bool keep_all_equal = done || need == equal;  // then the kept keys are those >= t
  if (team.all(keep_all_equal)) {
    // Full rows without the bounds' checks (9 instructions an entry with them, at 512 columns).
    // Only up to 16 keys a member: with 64, the second copy of the loop takes the whole warps
    // from 97 registers to 128.
    if constexpr (VPT <= 16) {
      if (full) {
#pragma unroll
        for (int i = 0; i < VPT; ++i) {
          mask_row[team.member + static_cast<uint32_t>(i) * team.size] = key[i] >= t ? 1.0f : 0.0f;
        }
        return;
      }
    }
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      if (in_row(i)) mask_row[team.member + static_cast<uint32_t>(i) * team.size] = key[i] >= t ? 1.0f : 0.0f;
    }
    return;
  }
  // Some team of the warp (or the block) ranks its keys == t by index; all join the collectives.
  uint32_t equal_before = 0;
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const bool in = in_row(i);
    const bool eq = in && key[i] == t;
    const uint32_t r = equal_before + team.rank(eq);
    equal_before += team.count(eq);
    const bool keep = key[i] > t || (eq && (keep_all_equal || r < need));
    if (in) mask_row[team.member + static_cast<uint32_t>(i) * team.size] = keep ? 1.0f : 0.0f;
  }
}

// Searches T and writes the mask of one row (arguments as write_row_mask's). `store`: shared
// memory for kSharedSlots candidates a member of a whole warp, or nullptr (then they stay in
// registers).
template <int VPT, class Team>
__device__ void topk_row(Team& team, const uint32_t (&key)[VPT], uint32_t cols, uint32_t k,
                         bool bound_allowed, bool live, float* mask_row,
                         uint32_t* store = nullptr) {
  // Maxima of kChunks interleaved chunks of each member's slots (0 for a chunk of padding), and
  // the smallest key: T is at least that (k < cols). Padding (key 0) leaves the maxima alone
  // and can only lower the smallest key, which stays a bound.
  // Lanes of 128 keys (a warp a row of 4K columns) take 8 chunks of 16: by an estimate for data
  // in random order, 4 chunks of 32 would let about 90 keys through at k = 64, near the 128 a
  // warp packs, and 8 of 16 about 75.
  constexpr int kChunks = VPT >= 128 ? 8 : (VPT >= 4 ? 4 : VPT);
  uint32_t chunk_max[kChunks];
  uint32_t mine_min = ~0u;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) chunk_max[c] = 0u;
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    chunk_max[i % kChunks] = ::max(chunk_max[i % kChunks], key[i]);
    mine_min = ::min(mine_min, key[i]);
  }
  uint32_t mine_max = 0u;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) mine_max = ::max(mine_max, chunk_max[c]);
  // Every thread joins each collective, live or not; a team without a row searches [0, 0].
  const uint32_t high = team.max(mine_max);
  uint32_t low = team.min(mine_min);
  if (!live) low = 0u;
  const bool bounded = bound_allowed && k <= team.size * kChunks;  // uniform over the team
  // Not for up to 16 keys a member: packing by the chunks' bound is slower there.
  const bool shared = Team::kPacksCandidates && VPT > 16 && bounded && store != nullptr &&
                      (k > kRegisterCandidatesMaxK || Team::kPacksEveryK);
  // Registers hold kCandidates keys a member, so a tighter bound would rarely gather them all
  // where the members' is weak (the chunks' bound at k = 64 on 1K-2K columns is 0.07-0.12 of
  // copy speed slower). Packed candidates take the chunks' bound: k > 16 keys would pass a
  // warp's weaker one.
  const bool per_member = !shared && k <= team.size;
  // At least k keys pass the bound, so registers of kCandidates a member hold them only for
  // k < kCandidates * team.size: beyond (k = 64 at 512 columns), the bound serves the search's
  // start alone, which needs only its bits down to where it parts from the row's maximum (block
  // rows; lane teams interpolate there instead, below). Only for up to 16 keys a member (lane
  // groups, the 512-column warps, block rows): with this check the packing warps and groups are
  // slower (k = 64 at 1K columns: 0.03 of copy speed).
  const bool register_gather = !shared && (VPT > 16 || k < kCandidates * team.size);
  // Lane teams of up to 16 keys a member (lane groups, the 512-column warps) search by
  // interpolation (topk_interpolate.cuh) for k > kRegisterCandidatesMaxK, and wherever they would
  // count every key at each step (no bound, or one whose candidates their registers cannot
  // hold): its steps, about 4-6 a warp on data in random order whatever k is, count every key,
  // where the bit search's 12-16 did, or the maxima's bound took a search of its own.
  if constexpr (Team::kInterpolates && VPT <= 16) {
    if (k > kRegisterCandidatesMaxK || !(bounded && register_gather)) {
      bool done = !live;
      const uint32_t t = search_interpolating(team, low, high, cols, k, done,
                                              [&](uint32_t c) { return team.count_at_least(key, c); });
      write_row_mask(team, key, cols, k, t, done, live, mask_row);
      return;
    }
  }
  if (bounded) {
    low = bound_from_maxima(team, chunk_max, mine_max, high, low, k, live, per_member,
                            !shared && !register_gather);
  }

  // The candidates of this member, kept while there is room; empty slots hold 0.
  uint32_t cand_key[kCandidates];
  uint32_t cand_count = 0;
#pragma unroll
  for (int c = 0; c < kCandidates; ++c) cand_key[c] = 0u;
  if (bounded && register_gather) {
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      if (key[i] >= low) {
#pragma unroll
        for (int c = kCandidates - 1; c > 0; --c) cand_key[c] = cand_key[c - 1];
        cand_key[0] = key[i];
        ++cand_count;
      }
    }
  }
  const bool gathered = bounded && register_gather && team.every(cand_count <= kCandidates);
  uint32_t shared_key[kSharedSlots];
  bool gathered_shared = false;
  if constexpr (Team::kPacksCandidates) {
    if (shared) gathered_shared = gather_shared(team, key, low, store, shared_key);
  }

  bool done = !live;
  const SearchStart start = common_prefix(low, high);
  // Where the search counts every key, whole warps and groups of warps refuse the cands above
  // the row's largest key uncounted. Not over the gathered candidates, whose steps cost little,
  // nor for lane groups, whose `high` differs across the warp, nor for block rows: the check is
  // slower there.
  // Whole warps at k = 128, 1K-2K columns: 0.72-0.73 -> 0.85-0.89 of copy speed (CHANGELOG 1.19.0).
  const uint32_t refuse_above = Team::kPacksCandidates ? high : ~0u;
  uint32_t t;
  // For c > low the candidates are every key >= c. For c <= low the count is at least k
  // (T >= low) but not known exactly, so it must not end the search: k + 1 stands for it.
  auto search_candidates = [&](const auto& cand) {
    return search_down(team, start, k, done, [&](uint32_t c) {
      const uint32_t n = team.count_at_least(cand, c);
      return c <= low ? k + 1u : n;
    });
  };
  if (gathered_shared) {
    t = search_candidates(shared_key);
  } else if (gathered) {
    t = search_candidates(cand_key);
  } else {
    t = search_down(team, start, k, done, [&](uint32_t c) { return team.count_at_least(key, c); },
                    0u, false, refuse_above);
  }

  write_row_mask(team, key, cols, k, t, done, live, mask_row);
}

}  // namespace tapecheck_cuda
