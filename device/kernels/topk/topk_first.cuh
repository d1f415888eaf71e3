// topKMask for k = 1: the row's first largest entry (docs/spec.md's order: the largest key of
// topk_key.cuh, and of equal keys the lowest index) is kept, every other entry is 0.
//
// k = 1 needs no search: the row's largest key and the lowest index holding it are two
// reductions, exact on integers, so no result depends on an order of evaluation. The search
// of topk_select.cuh costs tens of instructions an entry (0.46-0.92 of copy speed at k = 1:
// CHANGELOG 1.5.0).
//
// All-NaN rows: every key is 0, so the largest key is 0 and the first index holding it is the
// row's first NaN, which docs/spec.md keeps (NaNs among themselves by index). A thread that sees no
// entry of the row keeps index ~0u, above every entry's, so it is never the first.
#pragma once

#include "topk/topk_key.cuh"
#include "topk/topk_teams.cuh"

namespace tapecheck_cuda {

// Streaming teams (topk_teams.cuh): each thread keeps the largest key it has seen and the first
// index holding it, visiting its entries in increasing index order; the team combines them
// (largest key, then lowest index), and the row is written without being read again. A lane
// group of a warp takes rows of up to kGroupMaxCols (topk_mask.cu), one unit or a few a lane;
// a block, longer rows. Rows are read in units of 4 floats (kVec: cols % 4 == 0 and 16-byte
// aligned pointers) or of 1.
constexpr unsigned kFirstMaxThreads = 1024;
constexpr unsigned kFirstUnitsPerThread = 4;  // loads a thread has in flight

// Thread state: the largest key seen and the lowest index holding it (~0u: nothing seen yet).
struct FirstLargest {
  uint32_t key = 0u, index = ~0u;
  __device__ void see(uint32_t k, uint32_t j) {
    if (index == ~0u || k > key) {  // strictly larger: an equal key at a later index loses
      key = k;
      index = j;
    }
  }
};

// Units start, start + step, ... of a row of `units` units, kFirstUnitsPerThread loads at once.
template <bool kVec>
__device__ __forceinline__ FirstLargest scan_units(const float* __restrict__ xr, uint32_t units,
                                                   uint32_t start, uint32_t step) {
  constexpr int W = kVec ? 4 : 1;
  FirstLargest f;
  for (uint32_t u0 = start; u0 < units; u0 += step * kFirstUnitsPerThread) {
    float v[kFirstUnitsPerThread][W];
#pragma unroll
    for (unsigned b = 0; b < kFirstUnitsPerThread; ++b) {  // the loads first, all in flight
      const uint32_t u = u0 + b * step;
      if (u < units) {
        if constexpr (kVec) {
          const float4 q = __ldg(reinterpret_cast<const float4*>(xr) + u);
          v[b][0] = q.x;
          v[b][1] = q.y;
          v[b][2] = q.z;
          v[b][3] = q.w;
        } else {
          v[b][0] = __ldg(xr + u);
        }
      }
    }
#pragma unroll
    for (unsigned b = 0; b < kFirstUnitsPerThread; ++b) {
      const uint32_t u = u0 + b * step;
      if (u < units) {
#pragma unroll
        for (int c = 0; c < W; ++c) f.see(rank_key(v[b][c]), W * u + c);
      }
    }
  }
  return f;
}

template <bool kVec>
__device__ __forceinline__ void write_units(float* __restrict__ mr, uint32_t units, uint32_t start,
                                            uint32_t step, uint32_t first) {
  for (uint32_t u = start; u < units; u += step) {
    if constexpr (kVec) {
      const uint32_t j = 4u * u;
      __stcs(reinterpret_cast<float4*>(mr) + u,
             make_float4(j == first ? 1.0f : 0.0f, j + 1 == first ? 1.0f : 0.0f,
                         j + 2 == first ? 1.0f : 0.0f, j + 3 == first ? 1.0f : 0.0f));
    } else {
      __stcs(mr + u, u == first ? 1.0f : 0.0f);
    }
  }
}

// G lanes a row (G a power of two, at most 32), kBlock threads a block.
template <unsigned G, bool kVec>
__global__ void __launch_bounds__(kBlock)
    topk_first_groups(size_t rows, uint32_t cols, const float* __restrict__ x, float* __restrict__ mask) {
  const LaneTeam<G> team;
  const uint32_t units = kVec ? cols / 4 : cols;
  constexpr size_t kRowsPerBlock = kBlock / G;
  // Uniform over the block: every lane of a warp takes the same trips and joins the shuffles.
  for (size_t first_row = blockIdx.x * kRowsPerBlock; first_row < rows;
       first_row += static_cast<size_t>(gridDim.x) * kRowsPerBlock) {
    const size_t row = first_row + threadIdx.x / G;
    const bool live = row < rows;
    const FirstLargest f =
        scan_units<kVec>(x + (live ? row * cols : 0), live ? units : 0u, team.member, G);
    const uint32_t best = team.max(f.key);
    const uint32_t first = team.min(f.key == best ? f.index : ~0u);
    if (live) write_units<kVec>(mask + row * cols, units, team.member, G, first);
  }
}

// Rows of at most G units (one a lane or none; rows of up to 32 columns), kFirstRowsAtOnce of
// them a lane a trip, so that a lane has all their loads in flight before the first
// reduction: with one row a trip, a lane has one 16-byte load in flight at 32 columns, and the
// kernel waits on its loads. A launch bound for full occupancy instead (32 registers) spills.
// k = 1 at 32 columns: 0.891-0.897 -> 0.905-0.913 of copy speed (CHANGELOG 1.9.4).
constexpr int kFirstRowsAtOnce = 2;

template <unsigned G, bool kVec>
__global__ void __launch_bounds__(kBlock)
    topk_first_unit_rows(size_t rows, uint32_t cols, const float* __restrict__ x,
                         float* __restrict__ mask) {
  constexpr int W = kVec ? 4 : 1;
  const LaneTeam<G> team;
  const uint32_t units = kVec ? cols / 4 : cols;
  constexpr size_t kRowsPerPass = kBlock / G;
  constexpr size_t kRowsPerTrip = kRowsPerPass * kFirstRowsAtOnce;
  const bool has_unit = team.member < units;
  for (size_t first_row = blockIdx.x * kRowsPerTrip; first_row < rows;
       first_row += static_cast<size_t>(gridDim.x) * kRowsPerTrip) {
    float v[kFirstRowsAtOnce][W];
    bool live[kFirstRowsAtOnce];
#pragma unroll
    for (int r = 0; r < kFirstRowsAtOnce; ++r) {
      const size_t row = first_row + r * kRowsPerPass + threadIdx.x / G;
      live[r] = row < rows;
      if (live[r] && has_unit) {
        if constexpr (kVec) {
          const float4 q = __ldg(reinterpret_cast<const float4*>(x + row * cols) + team.member);
          v[r][0] = q.x;
          v[r][1] = q.y;
          v[r][2] = q.z;
          v[r][3] = q.w;
        } else {
          v[r][0] = __ldg(x + row * cols + team.member);
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kFirstRowsAtOnce; ++r) {
      FirstLargest f;
      if (live[r] && has_unit) {
#pragma unroll
        for (int c = 0; c < W; ++c) f.see(rank_key(v[r][c]), W * team.member + c);
      }
      const uint32_t best = team.max(f.key);
      const uint32_t first = team.min(f.key == best ? f.index : ~0u);
      const size_t row = first_row + r * kRowsPerPass + threadIdx.x / G;
      if (live[r]) write_units<kVec>(mask + row * cols, units, team.member, G, first);
    }
  }
}

// One block a row.
template <bool kVec>
__global__ void __launch_bounds__(kFirstMaxThreads)
    topk_first_rows(size_t rows, uint32_t cols, const float* __restrict__ x, float* __restrict__ mask) {
  __shared__ BlockTeamScratch scratch;
  BlockTeam team(&scratch);
  const uint32_t units = kVec ? cols / 4 : cols;
  for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const FirstLargest f = scan_units<kVec>(x + row * cols, units, threadIdx.x, blockDim.x);
    const uint32_t best = team.max(f.key);
    const uint32_t first = team.min(f.key == best ? f.index : ~0u);
    write_units<kVec>(mask + row * cols, units, threadIdx.x, blockDim.x, first);
  }
}

// Threads a row for topk_first_rows: kFirstUnitsPerThread units each, whole warps, at most
// kFirstMaxThreads. From cols alone.
inline unsigned first_rows_threads(uint32_t units) {
  const size_t want = ceil_div(ceil_div(units, kFirstUnitsPerThread), 32) * 32;
  return static_cast<unsigned>(want < kFirstMaxThreads ? want : kFirstMaxThreads);
}

// Lanes a row for topk_first_groups, from cols alone: enough for kFirstUnitsPerThread units a
// lane, but at least 8 (or one a unit, for rows of fewer), and at most a warp.
// 32 columns: 8 lanes of one unit 0.89-0.90 of copy speed, 2 lanes of 4 units 0.83
// (CHANGELOG 1.5.1).
inline unsigned first_group_lanes(uint32_t units) {
  const unsigned by_load = next_pow2(static_cast<unsigned>(ceil_div(units, kFirstUnitsPerThread)));
  const unsigned floor = next_pow2(units) < 8 ? next_pow2(units) : 8;
  const unsigned g = by_load > floor ? by_load : floor;
  return g < 32 ? g : 32;
}

}  // namespace tapecheck_cuda
