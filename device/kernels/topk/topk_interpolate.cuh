// The search for T (topk_select.cuh) by interpolation instead of bit by bit, over every key of
// the row, from its smallest key to its largest (lane teams of up to 16 keys a member: topk_row
// says when).
//
// A step of the bit search halves the range of keys T may take; on rows whose k-th largest
// entry lies near 0 (half the row at k = cols / 2, on data centred on 0) the sign and most of
// the exponent bits each cost a step that leaves nearly every key where it was. This search
// keeps a bracket instead: count(key >= lo) >= k > count(key >= hi). Each step guesses the value
// at which k keys would be at or above it by interpolating the counts at the bracket's ends
// linearly in value (regula falsi on the row's counting function, with the Illinois rule: an end
// kept twice has its count moved halfway to k), counts the keys >= that guess, and moves one end
// to it. The guesses only choose where to count: every threshold strictly inside the bracket
// keeps the invariant, so they may be approximate (a reciprocal, no -0 handling). After
// kInterpolatedSteps steps the search bisects the bracket in key order, so the steps are at
// most kInterpolatedSteps + 32 whatever the data (32 for the bit search).
//
// It ends as the bit search does: as soon as exactly k keys are >= lo (`done`; those are the kept
// entries), or when hi == lo + 1 (then lo == T, and the caller ranks the ties at T by index).
//
// Simulated on rows of 128 keys, k = 64, four rows a warp (the warp steps until its last row
// ends): uniform(-4, 4) data 6.0 steps a warp against 12.6 for the bit search, normal data 7.4
// against 12.8; log-uniform positive data over e^-80..e^80, where value interpolation guesses
// badly, 17 against 9.5.
// k = 64 at 128 columns: 0.84 -> 0.94-0.95 of copy speed (CHANGELOG 1.24.0).
//
// This header is plain C++ as well (no CUDA header): the host tests run the same search against
// counts made by brute force (device/tests/topk_interpolate_tests.cpp), so CI checks it without
// a GPU.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define TAPECHECK_TOPK_HD __host__ __device__ __forceinline__
#else
#define TAPECHECK_TOPK_HD inline
#endif

namespace tapecheck_cuda {

// Chosen by the simulation above, not measured on a GPU: with no limit the Illinois guesses took
// 25 steps a warp on the log-uniform rows, 21 with a limit of 12 and 17 with 8; uniform rows took
// 6.0 with 8 or none, normal rows 7.4 with 8 and 7.2 with none.
constexpr int kInterpolatedSteps = 8;

// The bits of one 32-bit type as another (memcpy, which the device compiles to a move).
template <class To, class From>
TAPECHECK_TOPK_HD To bits_as(From from) {
  static_assert(sizeof(To) == sizeof(From), "same size");
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}

// a / b for the guesses, which may be approximate: the device's fast division.
TAPECHECK_TOPK_HD float approximate_quotient(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fdividef(a, b);
#else
  return a / b;
#endif
}

// The value a key stands for (rank_key's inverse; rank_key makes no key of -0). The keys
// rank_key never makes below -inf's (0 for NaN, 1..0x007ffffe) give NaN.
TAPECHECK_TOPK_HD float key_value(uint32_t key) {
  return bits_as<float>(key ^ (~static_cast<uint32_t>(static_cast<int32_t>(key) >> 31) | 0x80000000u));
}

// rank_key for a finite value, without its NaN and -0 cases: -0 gives 0x7fffffff, which lies
// between every negative key and +0's, so it is still a threshold in the right place.
TAPECHECK_TOPK_HD uint32_t value_key(float v) {
  const uint32_t u = bits_as<uint32_t>(v);
  return u ^ (static_cast<uint32_t>(static_cast<int32_t>(u) >> 31) | 0x80000000u);
}

// low, high: the team's smallest and largest key; n_low: an estimate of count(key >= low) (the
// row's length). count_at_least(c): the team's count of keys >= c, a collective. Returns lo, with
// `done` as search_down sets it: done, exactly k keys are >= lo; otherwise lo == T.
template <class Team, class CountAtLeast>
TAPECHECK_TOPK_HD uint32_t search_interpolating(Team& team, uint32_t low, uint32_t high,
                                                uint32_t n_low, uint32_t k, bool& done,
                                                CountAtLeast count_at_least) {
  // high <= 0xff800000 (+inf's key), so hi does not overflow.
  uint32_t lo = low, hi = high + 1u;
  float n_lo = static_cast<float>(n_low), n_hi = 0.0f;
  float v_lo = key_value(lo), v_hi = key_value(high);
  const float kf = static_cast<float>(k);
  int kept = 0;  // which end the last step kept: 1 lo moved (hi kept), -1 hi moved
  // Uniform over the warp: every lane of a lane group's warp takes the same steps.
  for (int step = 0;; ++step) {
    const bool ended = done || hi - lo <= 1u;
    if (team.all(ended)) break;
    // n_lo > n_hi while the bracket is open; a guess that is not finite (NaN ends, a zero
    // difference of counts) bisects instead.
    const float guess = std::fma(v_hi - v_lo, approximate_quotient(n_lo - kf, n_lo - n_hi), v_lo);
    uint32_t c = lo + ((hi - lo) >> 1);
    if (step < kInterpolatedSteps && std::fabs(guess) <= 3.402823466e38f) c = value_key(guess);
    // Strictly inside an open bracket.
    if (c < lo + 1u) c = lo + 1u;
    if (c > hi - 1u) c = hi - 1u;
    const uint32_t n = count_at_least(c);   // every thread joins, ended or not
    if (ended) continue;
    if (n >= k) {
      lo = c;
      v_lo = key_value(c);
      n_lo = static_cast<float>(n);
      if (kept > 0) n_hi = kf - 0.5f * (kf - n_hi);
      kept = 1;
      done = n == k;
    } else {
      hi = c;
      v_hi = key_value(c);
      n_hi = static_cast<float>(n);
      if (kept < 0) n_lo = kf + 0.5f * (n_lo - kf);
      kept = -1;
    }
  }
  return lo;
}

}  // namespace tapecheck_cuda
