// topKMask for 2 <= k <= kSortedMaxK on rows held in registers: T by sorting networks
// (topk_sorted.cuh), then the mask (topk_select.cuh's write_row_mask).
//
// Plans, by row length (each faster than the bit search where it is used):
//   - up to kSoloMaxCols, cols % 4 == 0 and 16-byte aligned buffers: one thread a row, its keys
//     in next_pow2(cols) registers, so T needs no exchange; a warp's rows pass through shared
//     memory so that its loads and stores stay coalesced (topk_sorted_staged; at 32 columns,
//     0.77-0.98 of copy speed staged, 0.27-0.35 with each thread loading its own units:
//     CHANGELOG 1.7.0);
//   - up to kSortedGroupMaxCols: a group of G lanes of a warp a row, 16 to 64 keys a lane
//     (launch_groups), merged by a butterfly of shuffles, or in a whole warp by a tournament
//     (k <= kSortedWideGroupMaxK past 1024 columns);
//   - from kSortedWarpMinCols, 9 <= k <= 16: a warp a row, the row read in chunks and once
//     more to write the mask (topk_sorted_warp.cuh);
//   - up to kSortedMaxCols, k <= kSortedBlockMaxK: a block a row, kSortedBlockSlots keys a
//     thread, merged by a tournament within each warp and once more across the warps' lists,
//     through shared memory.
// Other rows go to topk_mask.cu's search plans.
#include "topk/topk_sorted.cuh"
#include "topk/topk_sorted.h"
#include "topk/topk_sorted_warp.cuh"

namespace tapecheck_cuda {
namespace {

constexpr uint32_t kSoloMaxCols = 32;
constexpr uint32_t kSortedGroupMaxCols = 2048;
// Rows of 1025-2048 columns take a warp of 64 keys a lane for lists of up to this length; with
// lists of 16 (221 registers) they are slower than the search. At 4K a warp of 128 keys a lane
// (172 registers) is slower than the block rows, so 4K keeps the blocks.
// k = 8 at 1K / 2K: block rows 0.77 / 0.78-0.79 of copy speed, warps 0.96-0.99 / 0.93-0.95
// (CHANGELOG 1.9.4).
constexpr uint32_t kSortedWideGroupMaxK = 8;
constexpr uint32_t kSortedMaxCols = 16384;
// Block rows: 16 keys a thread; 32 are slower. Lists of 16 (k > 8) cost more than the bit
// search there, so those k keep it.
// k > 8: 0.45-0.52 of copy speed against the search's 0.52-0.70 (CHANGELOG 1.7.0).
constexpr int kSortedBlockSlots = 16;
constexpr uint32_t kSortedBlockMaxK = 8;
// Rows past kSortedWarpMinCols with lists longer than kSortedWideGroupMaxK (9 <= k <= 16): a
// warp a row, read in chunks (topk_sorted_warp.cuh). For k <= 8 it is slower than the lane
// groups and the block rows: its second read of a row misses L2 once the rows in flight outgrow
// it.
// k = 16 at 2K / 4K / 8K: search 0.67-0.68 / 0.63 / 0.57-0.58, this warp 0.80 / 0.68-0.69 / 0.60
// (CHANGELOG 1.9.4).
constexpr uint32_t kSortedWarpMinCols = 1025;
constexpr uint32_t kSortedWarpMaxK = 16;
constexpr unsigned kSortedBlockMaxThreads = kSortedMaxCols / kSortedBlockSlots;
static_assert(kSortedBlockMaxThreads <= 1024 && kSortedBlockMaxThreads % 32 == 0, "a block a row");

// topk_sorted_staged: a warp's 32 rows are one run of 32 * cols floats, loaded in 16-byte units
// into shared memory with rows cols + 1 floats apart: an odd pitch (cols is even), so that the
// 32 threads reading the j-th entries of their own rows hit 32 distinct banks.
constexpr uint32_t kStagedMaxPitch = kSoloMaxCols + 1;

// e / units without a division, for the units e of a warp's run (e < 32 * kSoloMaxCols / 4):
// floor(e * ceil(2^32 / units) / 2^32), exact for e * units < 2^32.
struct UnitDivider {
  uint64_t magic;
  __device__ explicit UnitDivider(uint32_t units) : magic(((uint64_t{1} << 32) + units - 1) / units) {}
  __device__ uint32_t quotient(uint32_t e) const { return static_cast<uint32_t>((e * magic) >> 32); }
};

template <int VPT, int K>
__global__ void __launch_bounds__(kBlock)
    topk_sorted_staged(size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  __shared__ float stage[kBlock / 32][32 * kStagedMaxPitch];
  const LaneTeam<1> team;
  const unsigned lane = threadIdx.x & 31u;
  float* st = stage[threadIdx.x >> 5];
  const uint32_t pitch = cols + 1;
  const uint32_t units = cols / 4;  // a row's 16-byte units
  const UnitDivider by_units(units);
  // Uniform over the block, so every lane of a warp takes the same trips.
  for (size_t first = static_cast<size_t>(blockIdx.x) * kBlock; first < rows;
       first += static_cast<size_t>(gridDim.x) * kBlock) {
    const size_t warp_first = first + (threadIdx.x - lane);
    const uint32_t live_rows =
        warp_first < rows ? static_cast<uint32_t>(rows - warp_first < 32 ? rows - warp_first : 32) : 0u;
    const uint32_t warp_units = live_rows * units;
    const size_t warp_offset = live_rows > 0 ? warp_first * cols : 0;
    const float4* src = reinterpret_cast<const float4*>(x + warp_offset);
    for (uint32_t e = lane; e < warp_units; e += 32) {
      const float4 v = __ldg(src + e);
      const uint32_t r = by_units.quotient(e);
      float* d = st + r * pitch + 4u * (e - r * units);
      d[0] = v.x;
      d[1] = v.y;
      d[2] = v.z;
      d[3] = v.w;
    }
    __syncwarp();
    const bool live = lane < live_rows;
    uint32_t key[VPT];
#pragma unroll
    for (int j = 0; j < VPT; ++j) key[j] = live && j < cols ? rank_key(st[lane * pitch + j]) : 0u;
    __syncwarp();  // the warp's next rows overwrite the stage

    const uint32_t t = kth_largest_sorted<K>(team, key, k);
    const bool done = team.count_at_least(key, t) == k || !live;
    if (!team.all(done)) {  // ties at T: ranked by index, entry by entry
      write_row_mask(team, key, cols, k, t, done, live, mask + (live ? (warp_first + lane) * cols : 0));
      continue;
    }
    // Each lane's row as bits (entry j: bit j), then each unit of the warp's run from its row's.
    uint32_t kept = 0;
#pragma unroll
    for (int j = 0; j < VPT; ++j) kept |= (j < cols && key[j] >= t ? 1u : 0u) << j;
    float4* dst = reinterpret_cast<float4*>(mask + warp_offset);
    for (uint32_t e0 = 0; e0 < warp_units; e0 += 32) {  // every lane: the shuffle takes them all
      const uint32_t e = e0 + lane;
      const uint32_t r = by_units.quotient(e);
      const uint32_t bits = __shfl_sync(kFullWarp, kept, r & 31u) >> (4u * (e - r * units));
      if (e < warp_units) {
        dst[e] = make_float4(static_cast<float>(bits & 1u), static_cast<float>((bits >> 1) & 1u),
                             static_cast<float>((bits >> 2) & 1u), static_cast<float>((bits >> 3) & 1u));
      }
    }
  }
}

// G lanes a row, VPT keys a lane, lists of K; kBlock threads a block.
template <unsigned G, int VPT, int K>
__global__ void __launch_bounds__(kBlock)
    topk_sorted_by_group(size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  const LaneTeam<G> team;
  constexpr size_t kRowsPerBlock = kBlock / G;
  // Uniform over the block, so every lane of a warp takes the same trips.
  for (size_t first = blockIdx.x * kRowsPerBlock; first < rows;
       first += static_cast<size_t>(gridDim.x) * kRowsPerBlock) {
    const size_t row = first + threadIdx.x / G;
    const bool live = row < rows;
    const float* xr = x + (live ? row * cols : 0);
    float* mr = mask + (live ? row * cols : 0);
    uint32_t key[VPT];
    load_keys<VPT>(key, xr, team.member, G, live ? cols : 0u);
    const uint32_t t = kth_largest_sorted<K>(team, key, k);
    const bool done = team.count_at_least(key, t) == k || !live;
    write_row_mask(team, key, cols, k, t, done, live, mr);
  }
}

template <int VPT, int K>
__global__ void __launch_bounds__(kSortedBlockMaxThreads)
    topk_sorted_by_block(size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  __shared__ BlockTeamScratch scratch;
  __shared__ SortedBlockScratch lists;
  BlockTeam team(&scratch);
  unsigned parity = 0;
  for (size_t row = blockIdx.x; row < rows; row += gridDim.x, parity ^= 1u) {
    uint32_t key[VPT];
    load_keys<VPT>(key, x + row * cols, threadIdx.x, blockDim.x, cols);
    const uint32_t t = kth_largest_sorted<K, VPT>(team, lists, parity, key, k);
    const bool done = team.count_at_least(key, t) == k;
    write_row_mask(team, key, cols, k, t, done, true, mask + row * cols);
  }
}

// Lists of up to kMaxK (VPT: every length a member's slots hold).
template <unsigned G, int VPT, int kMaxK = VPT>
bool launch_group(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  return with_list_length<kMaxK>(k, [&](auto list_length) {
    constexpr int K = decltype(list_length)::value;
    topk_sorted_by_group<G, VPT, K><<<grid_for(rows, kBlock / G), kBlock, 0, s>>>(rows, cols, k, x, mask);
  });
}

template <int VPT>
bool launch_staged_vpt(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  return with_list_length<VPT>(k, [&](auto list_length) {
    constexpr int K = decltype(list_length)::value;
    topk_sorted_staged<VPT, K><<<grid_for(rows, kBlock), kBlock, 0, s>>>(rows, cols, k, x, mask);
  });
}

// One thread a row: VPT = next_pow2(cols), which is at least K as k < cols.
bool launch_staged(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  if (cols % 4 != 0 || !aligned16(x) || !aligned16(mask)) return false;
  switch (next_pow2(cols)) {
    case 4: return launch_staged_vpt<4>(s, rows, cols, k, x, mask);
    case 8: return launch_staged_vpt<8>(s, rows, cols, k, x, mask);
    case 16: return launch_staged_vpt<16>(s, rows, cols, k, x, mask);
    case 32: return launch_staged_vpt<32>(s, rows, cols, k, x, mask);
    default: return false;
  }
}

// Keys a lane: 16 up to 128 columns, 32 up to 1024 (G = 4 to 32 lanes), 64 beyond (a warp).
// 128 columns: 8 lanes of 16 keys 0.80-0.95 of copy speed, 4 lanes of 32 0.45-0.71
// (CHANGELOG 1.7.0).
bool launch_groups(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  const unsigned g16 = next_pow2(static_cast<unsigned>(ceil_div(cols, 16)));
  const unsigned g32 = next_pow2(static_cast<unsigned>(ceil_div(cols, 32)));
  if (cols <= 128) {
    switch (g16) {
      case 4: return launch_group<4, 16>(s, rows, cols, k, x, mask);
      case 8: return launch_group<8, 16>(s, rows, cols, k, x, mask);
      default: return false;
    }
  }
  if (cols > 1024) {
    if (k > kSortedWideGroupMaxK) return false;
    return launch_group<32, 64, kSortedWideGroupMaxK>(s, rows, cols, k, x, mask);
  }
  switch (g32) {
    case 8: return launch_group<8, 32>(s, rows, cols, k, x, mask);
    case 16: return launch_group<16, 32>(s, rows, cols, k, x, mask);
    case 32: return launch_group<32, 32>(s, rows, cols, k, x, mask);
    default: return false;
  }
}

bool launch_block(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  constexpr int VPT = kSortedBlockSlots;
  const unsigned threads = static_cast<unsigned>(ceil_div(ceil_div(cols, VPT), 32) * 32);
  return with_list_length<static_cast<int>(kSortedBlockMaxK)>(k, [&](auto list_length) {
    constexpr int K = decltype(list_length)::value;
    topk_sorted_by_block<VPT, K><<<grid_for(rows, 1), threads, 0, s>>>(rows, cols, k, x, mask);
  });
}

// A warp a row, the row read in chunks (topk_sorted_warp.cuh), for the lists of 16:
// kSortedWideGroupMaxK < k <= kSortedWarpMaxK.
bool launch_warp(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  static_assert(kSortedWarpMaxK == 2 * kSortedWideGroupMaxK, "one list length");
  if (k <= kSortedWideGroupMaxK || k > kSortedWarpMaxK) return false;
  constexpr int K = static_cast<int>(kSortedWarpMaxK);
  const unsigned grid = grid_for(rows, kBlock / 32);
  if (cols % 4 == 0 && aligned16(x) && aligned16(mask)) {
    topk_sorted_by_warp<K, true><<<grid, kBlock, 0, s>>>(rows, cols, k, x, mask);
  } else {
    topk_sorted_by_warp<K, false><<<grid, kBlock, 0, s>>>(rows, cols, k, x, mask);
  }
  return true;
}

}  // namespace

bool topk_sorted_plan(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x,
                      float* mask, int& status) {
  if (k < 2 || k > kSortedMaxK || k >= cols || cols > kSortedMaxCols) return false;
  bool launched = false;
  if (cols <= kSoloMaxCols) {
    launched = launch_staged(s, rows, cols, k, x, mask);
  } else if (cols >= kSortedWarpMinCols && k > kSortedWideGroupMaxK) {
    launched = launch_warp(s, rows, cols, k, x, mask);
  } else if (cols <= kSortedGroupMaxCols) {
    launched = launch_groups(s, rows, cols, k, x, mask);
  } else {
    launched = launch_block(s, rows, cols, k, x, mask);
  }
  if (launched) status = launch_status();
  return launched;
}

}  // namespace tapecheck_cuda
