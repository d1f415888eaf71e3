// topKMask along the last axis (docs/spec.md): 1 for the k largest entries of a row, 0 elsewhere.
// Order: larger value first; equal values, lower index first; NaN below every number (-inf
// included), NaNs among themselves by index.
//
// Plans, by row length: a group of lanes (up to a warp) per row up to kGroupMaxCols, for k > 16
// (and some k <= 16: whole_warps_take) a whole warp per row up to kWarpRowMaxCols, taking its
// next row through shared memory (topk_warp_stage.cuh), for 5 <= k <= 64 two warps per row up
// to 8192 columns and for 2 <= k <= 64 four warps per row up to 16384 (topk_warp_groups.cu),
// one block per row below kStreamMinCols, all holding the row in registers and selecting with
// topk_select.cuh, and for 2 <= k <= 16 the sorting-network plans of topk_sorted.cu first where
// they are faster. Rows of kStreamMinCols and more stream through one block each
// (topk_stream.cuh) for 2 <= k <= kStreamMaxK (but 16384 columns with k <= 64: the groups of
// four warps); beyond kStreamMaxK, and for a few very long rows, they go to the histogram
// kernels of topk_histogram.cu, which re-read the row once per pass. k = 1 streams its rows
// through lane groups or blocks (topk_first.cuh), but for the split of a few very long rows.
#include "common/common.cuh"
#include "entry.h"
#include "topk/topk_first.cuh"
#include "topk/topk_histogram.h"
#include "topk/topk_select.cuh"
#include "topk/topk_sorted.h"
#include "topk/topk_stream.cuh"
#include "topk/topk_warp_groups.h"
#include "topk/topk_warp_stage.cuh"

namespace tapecheck_cuda {
namespace {

// The shortcut of topk_select.cuh that bounds T by the members' maxima pays for its own search
// only when each member holds several entries.
constexpr int kBoundMinSlots = 8;

// Rows of at most kGroupMaxCols: G lanes per row, VPT keys per lane. A search step costs a
// lane a few instructions per key plus a reduction across its group, so more keys a lane spread
// the reduction's cost; past 512 columns a warp of 32-key lanes (110 registers) is slower than a
// block per row, so longer rows go to topk_by_block (but for k > 16, where whole warps pack
// their candidates: kWarpRowMaxCols).
// At 128-512 columns 16 keys a lane beat 8 and 32 (CHANGELOG 1.2.0).
constexpr uint32_t kGroupMaxCols = 512;
constexpr uint32_t kGroupSlots = 16;
// Rows of at most 32 columns: 8 keys a lane (4 lanes at 32 columns).
// 32 columns: 0.46 (k = 1) and 0.33 (k = 8) of copy speed, against 0.24 and 0.27 with 16 keys
// (CHANGELOG 1.2.0).
constexpr uint32_t kShortRowMaxCols = 32;
constexpr uint32_t kShortRowSlots = 8;

template <unsigned G, int VPT, unsigned kThreads = kBlock>
__global__ void __launch_bounds__(kThreads)
    topk_by_group(size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  LaneTeam<G, (VPT >= 64)> team;
  const unsigned group = threadIdx.x / G;
  constexpr size_t kRowsPerBlock = kThreads / G;
  // A whole warp of 32 keys a lane or more packs the candidates of large k in shared memory by
  // the chunks' bound (topk_select.cuh).
  constexpr bool kPacks = G == 32 && VPT > 16;
  __shared__ uint32_t candidates[kPacks ? kThreads / 32 : 1][kSharedSlots * 32];
  uint32_t* const store = kPacks ? candidates[threadIdx.x / 32] : nullptr;
  // Uniform over the block, so every lane of a warp takes the same trips.
  for (size_t first = blockIdx.x * kRowsPerBlock; first < rows;
       first += static_cast<size_t>(gridDim.x) * kRowsPerBlock) {
    const size_t row = first + group;
    const bool live = row < rows;
    const float* xr = x + (live ? row * cols : 0);
    uint32_t key[VPT];
    load_keys<VPT>(key, xr, team.member, G, live ? cols : 0u);
    topk_row<VPT>(team, key, cols, k, VPT >= kBoundMinSlots, live, mask + (live ? row * cols : 0),
                  store);
  }
}

// topk_by_group's whole warps on 16-byte rows, each warp's next row copied into shared memory
// while it searches the current one (topk_warp_stage.cuh).
template <int VPT, unsigned kThreads>
__global__ void __launch_bounds__(kThreads)
    topk_by_staged_warp(size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  LaneTeam<32, (VPT >= 64)> team;
  constexpr unsigned kWarps = kThreads / 32;
  const unsigned warp = threadIdx.x / 32;
  __shared__ uint32_t candidates[kWarps][kSharedSlots * 32];
  __shared__ uint64_t full[kWarps];
  extern __shared__ __align__(128) float stage_rows[];  // [kWarps][32 * VPT]
  WarpRowStage stage{stage_rows + static_cast<size_t>(warp) * 32 * VPT, &full[warp]};
  const size_t step = static_cast<size_t>(gridDim.x) * kWarps;
  size_t row = blockIdx.x * static_cast<size_t>(kWarps) + warp;
  if (team.member == 0) {
    stage.init();
    if (row < rows) stage.fill(x + row * cols, cols);
  }
  __syncwarp();
  // A warp's trips are its own (no block-wide collective), so each stops at its last row.
  for (; row < rows; row += step) {
    uint32_t key[VPT];
    stage.take(key, team.member, cols);
    __syncwarp();
    if (team.member == 0 && row + step < rows) stage.fill(x + (row + step) * cols, cols);
    topk_row<VPT>(team, key, cols, k, true, true, mask + row * cols, candidates[warp]);
  }
}

// For k > kRegisterCandidatesMaxK, rows of kGroupMaxCols + 1 to kWarpRowMaxCols: a whole warp
// a row, 32, 64 or 128 keys a lane, its candidates packed in shared memory (topk_select.cuh),
// where a block row's search steps each wait on a barrier. Rows of more than 2048 columns
// (128 keys a lane, 160 registers: blocks of kWideWarpRowThreads, 12 warps a multiprocessor)
// only for k <= kWideWarpRowMaxK: beyond, its candidates would outgrow the 128 slots (about 170
// at k = 128 on data in random order, an estimate) and each search step count 128 keys a lane.
// Rows of 8K columns take other plans: a warp cannot hold them in registers.
// k = 64 at 1K / 2K / 4K: 0.520 / 0.578 / 0.584 -> 0.853 / 0.845 / 0.781 of copy speed
// (CHANGELOG 1.9.5).
constexpr uint32_t kWarpRowMaxCols = 4096;
// The whole warps take their rows through a stage of shared memory that the copy engine fills
// with the next row (topk_by_staged_warp). false: they load their rows from global memory into
// registers, and k <= 16 keeps the sorting networks.
// k = 17-64 at 2K: 0.851-0.864 -> 0.954-0.965 of copy speed (CHANGELOG 1.9.9).
constexpr bool kStageWideWarpRows = true;
constexpr uint32_t kWideWarpRowMaxK = 64;
constexpr unsigned kWideWarpRowThreads = 128;

// Rows up to kBlockRowMaxCols: one block per row, kBlockRowSlots keys per thread.
// 4K-16K columns: 0.50-0.72 of copy speed, the histogram kernels 0.30-0.49 (CHANGELOG 1.2.0).
constexpr int kBlockRowSlots = 16;
constexpr unsigned kBlockRowMaxThreads = 1024;
constexpr uint32_t kBlockRowMaxCols = 16384;
// From kStreamMinCols on, rows stream (topk_stream.cuh) for 2 <= k <= kStreamMaxK; the groups of
// four warps of topk_warp_groups.cu take 16384 columns for k <= 64 ahead of the stream. Below
// 16K a row's fixed cost, its block-wide searches and barriers, makes the stream slower.
// 16K: stream 0.71-0.86 of copy speed, block plans 0.53-0.85; 1K-8K: stream slower
// (CHANGELOG 1.9.3).
constexpr uint32_t kStreamMinCols = 16384;
static_assert(kBlockRowMaxCols <= kBlockRowMaxThreads * kBlockRowSlots, "a row fits a block");

__global__ void __launch_bounds__(kBlockRowMaxThreads)
    topk_by_block(size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  __shared__ BlockTeamScratch scratch;
  BlockTeam team(&scratch);
  for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* xr = x + row * cols;
    uint32_t key[kBlockRowSlots];
    load_keys<kBlockRowSlots>(key, xr, threadIdx.x, blockDim.x, cols);
    topk_row<kBlockRowSlots>(team, key, cols, k, true, true, mask + row * cols);
  }
}

__global__ void __launch_bounds__(kBlock) fill_kernel(float* out, size_t n, float value) {
  for (size_t i = static_cast<size_t>(blockIdx.x) * kBlock + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * kBlock) {
    out[i] = value;
  }
}

template <unsigned G, int VPT, unsigned kThreads = kBlock>
void launch_group(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x,
                  float* mask) {
  topk_by_group<G, VPT, kThreads>
      <<<grid_for(rows, kThreads / G), kThreads, 0, s>>>(rows, cols, k, x, mask);
}

// The whole warps of VPT keys a lane: staged (topk_by_staged_warp) where the rows allow it.
template <int VPT, unsigned kThreads>
void launch_staged_warps(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x,
                         float* mask) {
  if (!kStageWideWarpRows || cols % 4 != 0 || !aligned16(x)) {
    launch_group<32, VPT, kThreads>(s, rows, cols, k, x, mask);
    return;
  }
  constexpr int kStageBytes = static_cast<int>(kThreads / 32 * 32 * VPT * sizeof(float));
  if (!allow_dynamic_shared(topk_by_staged_warp<VPT, kThreads>, kStageBytes)) {
    launch_group<32, VPT, kThreads>(s, rows, cols, k, x, mask);
    return;
  }
  topk_by_staged_warp<VPT, kThreads>
      <<<grid_for(rows, kThreads / 32), kThreads, kStageBytes, s>>>(rows, cols, k, x, mask);
}

// k > 16 on rows of 513-2048 columns, and 2049-4096 for k <= kWideWarpRowMaxK: whole warps, as
// their search packs the candidates in shared memory (topk_select.cuh).
bool whole_warps_take_large_k(uint32_t cols, uint32_t k) {
  return k > kRegisterCandidatesMaxK && cols > kGroupMaxCols &&
         (cols <= 32 * 64 || (cols <= kWarpRowMaxCols && k <= kWideWarpRowMaxK));
}

// 2 <= k <= 16 on rows of 2049-4096 columns, and 9 <= k <= 16 on 1025-2048, where the staged
// warps can take them: ahead of the sorting networks, whose block rows (k <= 8 past 2K) and
// chunked warps (k = 9-16, topk_sorted_warp.cuh) read their rows without overlapping the search.
// k = 8 at 4K: 0.78 -> 0.94 of copy speed (CHANGELOG 1.10.0).
bool whole_warps_take(uint32_t cols, uint32_t k, const float* x) {
  if (!kStageWideWarpRows || k < 2 || k > kRegisterCandidatesMaxK || cols % 4 != 0 || !aligned16(x))
    return false;
  return (cols > 32 * 64 && cols <= kWarpRowMaxCols) || (cols > 32 * 32 && cols <= 32 * 64 && k > 8);
}

// G = the lanes that give each `slots` keys (at most 32); a row of at most `slots` columns is
// one thread's, with the next power of two of slots.
int launch_group_plan(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x,
                      float* mask) {
  static_assert(kGroupMaxCols == 32 * kGroupSlots, "a warp of kGroupSlots at most");
  const uint32_t slots = cols <= kShortRowMaxCols ? kShortRowSlots : kGroupSlots;
  const unsigned g = next_pow2(static_cast<unsigned>(ceil_div(cols, slots)));
  const unsigned vpt = next_pow2(static_cast<unsigned>(ceil_div(cols, g)));
  switch (g * 100 + vpt) {  // the (G, VPT) pairs the slots above produce
    case 102: launch_group<1, 2>(s, rows, cols, k, x, mask); return 0;
    case 104: launch_group<1, 4>(s, rows, cols, k, x, mask); return 0;
    case 108: launch_group<1, 8>(s, rows, cols, k, x, mask); return 0;
    case 208: launch_group<2, 8>(s, rows, cols, k, x, mask); return 0;
    case 408: launch_group<4, 8>(s, rows, cols, k, x, mask); return 0;
    case 416: launch_group<4, 16>(s, rows, cols, k, x, mask); return 0;
    case 816: launch_group<8, 16>(s, rows, cols, k, x, mask); return 0;
    case 1616: launch_group<16, 16>(s, rows, cols, k, x, mask); return 0;
    case 3216: launch_group<32, 16>(s, rows, cols, k, x, mask); return 0;
    default: return 1;
  }
}

// k = 1 (topk_first.cuh): rows of up to kGroupMaxCols to lane groups (those of one unit a lane
// or less, several rows a trip), longer ones to blocks.
template <bool kVec>
int launch_first(cudaStream_t s, size_t rows, uint32_t cols, const float* x, float* mask) {
  const uint32_t units = kVec ? cols / 4 : cols;
  if (cols > kGroupMaxCols) {
    // A block a row (common.cuh): faster than kMaxGrid blocks at 1K-16K columns by 0.015-0.065
    // of copy speed (CHANGELOG 1.9.0).
    topk_first_rows<kVec><<<grid_covering(rows, 1), first_rows_threads(units), 0, s>>>(rows, cols, x, mask);
    return launch_status();
  }
  const unsigned g = first_group_lanes(units);
  auto grid = [&](unsigned lanes) { return grid_for(rows, kBlock / lanes); };
  if (units <= g) {  // then g = next_pow2(units) <= 8 (first_group_lanes)
    auto trip_grid = [&](unsigned lanes) { return grid_for(rows, kBlock / lanes * kFirstRowsAtOnce); };
    switch (g) {
      case 1: topk_first_unit_rows<1, kVec><<<trip_grid(1), kBlock, 0, s>>>(rows, cols, x, mask); break;
      case 2: topk_first_unit_rows<2, kVec><<<trip_grid(2), kBlock, 0, s>>>(rows, cols, x, mask); break;
      case 4: topk_first_unit_rows<4, kVec><<<trip_grid(4), kBlock, 0, s>>>(rows, cols, x, mask); break;
      default: topk_first_unit_rows<8, kVec><<<trip_grid(8), kBlock, 0, s>>>(rows, cols, x, mask); break;
    }
    return launch_status();
  }
  switch (g) {  // g >= 8 here: rows of more than 8 units
    case 8: topk_first_groups<8, kVec><<<grid(8), kBlock, 0, s>>>(rows, cols, x, mask); break;
    case 16: topk_first_groups<16, kVec><<<grid(16), kBlock, 0, s>>>(rows, cols, x, mask); break;
    default: topk_first_groups<32, kVec><<<grid(32), kBlock, 0, s>>>(rows, cols, x, mask); break;
  }
  return launch_status();
}

}  // namespace

int topk_mask(void* stream, uint32_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  const cudaStream_t s = as_stream(stream);
  const size_t total = static_cast<size_t>(rows) * cols;
  if (k == 0 || k >= cols) {
    const float v = k == 0 ? 0.0f : 1.0f;
    fill_kernel<<<grid_for(total, kBlock), kBlock, 0, s>>>(mask, total, v);
    return launch_status();
  }
  const bool split = rows < kSplitMaxRows && cols >= kSplitMinCols;
  if (k == 1 && !split) {
    const bool vec = cols % 4 == 0 && aligned16(x) && aligned16(mask);
    return vec ? launch_first<true>(s, rows, cols, x, mask) : launch_first<false>(s, rows, cols, x, mask);
  }
  if (split) return topk_split(s, rows, cols, k, x, mask);
  int status = 0;
  // Ahead of the stream, which it beats at 16384 columns (topk_warp_groups.cu).
  if (topk_warp_group_plan(s, rows, cols, k, x, mask, status)) return status;
  if (cols >= kStreamMinCols && k <= kStreamMaxK) {
    if (cols <= kStreamPrefetchMaxCols) {  // the kernel prefetches only on 16-byte rows
      topk_by_stream<true><<<grid_for(rows, 1), kStreamThreads, 0, s>>>(rows, cols, k, x, mask);
    } else {
      topk_by_stream<false><<<grid_for(rows, 1), kStreamThreads, 0, s>>>(rows, cols, k, x, mask);
    }
    return launch_status();
  }
  const bool small_k_warps = whole_warps_take(cols, k, x);
  if (!small_k_warps && topk_sorted_plan(s, rows, cols, k, x, mask, status)) return status;
  if (small_k_warps || whole_warps_take_large_k(cols, k)) {
    if (cols <= 32 * 32) {
      launch_staged_warps<32, kBlock>(s, rows, cols, k, x, mask);
    } else if (cols <= 32 * 64) {
      launch_staged_warps<64, kBlock>(s, rows, cols, k, x, mask);
    } else {
      launch_staged_warps<128, kWideWarpRowThreads>(s, rows, cols, k, x, mask);
    }
    return launch_status();
  }
  if (cols <= kGroupMaxCols) {
    if (launch_group_plan(s, rows, cols, k, x, mask) != 0) return 1;
  } else if (cols <= kBlockRowMaxCols) {
    const unsigned threads = static_cast<unsigned>(ceil_div(ceil_div(cols, kBlockRowSlots), 32) * 32);
    topk_by_block<<<grid_for(rows, 1), threads, 0, s>>>(rows, cols, k, x, mask);
  } else {
    return topk_histogram_rows(s, rows, cols, k, x, mask);
  }
  return launch_status();
}

}  // namespace tapecheck_cuda
