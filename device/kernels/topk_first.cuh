// topKMask for k = 1: the row's first largest entry (SPEC.md's order: the largest key of
// topk_key.cuh, and of equal keys the lowest index) is kept, every other entry is 0.
//
// k = 1 needs no search: the row's largest key and the lowest index holding it are two
// reductions, exact on integers, so no result depends on an order of evaluation. The search
// of topk_select.cuh costs tens of instructions an entry; at k = 1 it ran at 0.46-0.92 of copy
// bandwidth on the H200 (tools/bench, kernels 1.4.1).
//
// All-NaN rows: every key is 0, so the largest key is 0 and the first index holding it is the
// row's first NaN, which SPEC.md keeps (NaNs among themselves by index). Slots past the row's
// end hold key 0 too but an index >= cols, above every entry's, so they are never the first.
#pragma once

#include "topk_key.cuh"
#include "topk_teams.cuh"

namespace tapecheck_cuda {

// A team holding a row in registers (key[i]: entry member + i * team.size, 0 past the row's
// end; `live` false for a team without a row, which still joins the collectives).
template <int VPT, class Team>
__device__ void first_largest_row(Team& team, const uint32_t (&key)[VPT], uint32_t cols, bool live,
                                  float* mask_row) {
  uint32_t mine = 0u;
#pragma unroll
  for (int i = 0; i < VPT; ++i) mine = ::max(mine, key[i]);
  const uint32_t best = team.max(mine);
  uint32_t first = ~0u;
#pragma unroll
  for (int i = VPT - 1; i >= 0; --i) {  // downwards: the lowest slot holding `best` stays
    if (key[i] == best) first = team.member + static_cast<uint32_t>(i) * team.size;
  }
  first = team.min(first);
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const uint32_t j = team.member + static_cast<uint32_t>(i) * team.size;
    if (live && j < cols) mask_row[j] = j == first ? 1.0f : 0.0f;
  }
}

// Longer rows: one block a row, streaming. Each thread keeps the largest key it has seen and the
// first index holding it, visiting its entries in increasing index order; the block combines
// them (largest key, then lowest index), and the row is written without being read again.
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

// kVec: cols % 4 == 0 and 16-byte aligned rows, read as float4 units; otherwise floats.
template <bool kVec>
__global__ void __launch_bounds__(kFirstMaxThreads)
    topk_first_rows(size_t rows, uint32_t cols, const float* __restrict__ x, float* __restrict__ mask) {
  __shared__ uint32_t warp_part[2][32];  // by phase: one barrier per reduction
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  unsigned phase = 0;
  // Warp reduction in one instruction, then the warps' values through shared memory.
  auto block_reduce = [&](uint32_t v, bool take_max) {
    v = take_max ? __reduce_max_sync(0xffffffffu, v) : __reduce_min_sync(0xffffffffu, v);
    if (lane == 0) warp_part[phase][warp] = v;
    __syncthreads();
    uint32_t r = take_max ? 0u : ~0u;
    for (unsigned w = 0; w < warps; ++w) r = take_max ? ::max(r, warp_part[phase][w]) : ::min(r, warp_part[phase][w]);
    phase ^= 1u;  // rewritten two reductions later, after a barrier every reader has passed
    return r;
  };
  const uint32_t units = kVec ? cols / 4 : cols;
  const uint32_t stride = blockDim.x * kFirstUnitsPerThread;
  for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* xr = x + row * cols;
    float* mr = mask + row * cols;
    FirstLargest f;
    for (uint32_t u0 = threadIdx.x; u0 < units; u0 += stride) {
      float v[kFirstUnitsPerThread][kVec ? 4 : 1];
#pragma unroll
      for (unsigned b = 0; b < kFirstUnitsPerThread; ++b) {  // the loads first, all in flight
        const uint32_t u = u0 + b * blockDim.x;
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
        const uint32_t u = u0 + b * blockDim.x;
        if (u < units) {
#pragma unroll
          for (int c = 0; c < (kVec ? 4 : 1); ++c) f.see(rank_key(v[b][c]), kVec ? 4u * u + c : u);
        }
      }
    }
    const uint32_t best = block_reduce(f.key, true);
    const uint32_t first = block_reduce(f.key == best ? f.index : ~0u, false);
    for (uint32_t u = threadIdx.x; u < units; u += blockDim.x) {
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
}

// Threads a row for topk_first_rows: kFirstUnitsPerThread units each, whole warps, at most
// kFirstMaxThreads. From cols alone.
inline unsigned first_rows_threads(uint32_t units) {
  const size_t want = ceil_div(ceil_div(units, kFirstUnitsPerThread), 32) * 32;
  return static_cast<unsigned>(want < kFirstMaxThreads ? want : kFirstMaxThreads);
}

}  // namespace tapecheck_cuda
