// topKMask of rows of 4097-8192 columns, 5 <= k <= 64: two warps a row (WarpPairTeam,
// topk_teams.cuh), 128 keys a thread in registers, the next row copied into shared memory
// during the current row's search (topk_warp_stage.cuh).
//
// Why: at 8K columns the plans before (topk_sorted.cu's block rows for k <= 8, its chunked warp
// for 9-16, topk_mask.cu's block rows for k > 16) ran at 0.57-0.76 of copy bandwidth on the H200
// for k >= 5 (tools/bench/results/2026-12-02-h200-1.11.0-same-session/): each step of a block's
// search waits on a barrier of all its warps. A warp cannot hold 8K keys in registers, and a
// warp holding the row in shared memory ran at 0.29-0.63, its passes over the stage too slow
// with 3-6 such warps a multiprocessor (tools/bench/results/2026-12-02-h200-1.10.0-candidates/).
// Two warps of 128 keys a thread are the 4K warps' layout twice: a search step's count is each
// warp's reduction plus one named barrier of 64 threads, and the candidates are packed in
// shared memory (topk_select.cuh), so the search runs over four keys a thread.
// k <= 4 keep the sorting networks' block rows (0.91-0.95 at 8K). Measured against 1.10.0 in one
// session (ours/copy, two runs each), k = 5-64 at 8K went from 0.57-0.76 to 0.94, and at 6144
// columns (one run, a quarter of each thread's slots padding) from 0.52-0.70 to 0.80-0.81
// (tools/bench/results/2026-12-02-h200-1.11.0-same-session/).
#include "topk_select.cuh"
#include "topk_teams.cuh"
#include "topk_warp_pair.h"
#include "topk_warp_stage.cuh"

namespace tapecheck_cuda {
namespace {

constexpr uint32_t kPairRowMinCols = 4097;
constexpr uint32_t kPairRowMaxCols = 8192;
constexpr uint32_t kPairRowMinK = 5;
// As the 4K warps' kWideWarpRowMaxK: beyond, the candidates (about 74 at k = 64 on data in
// random order) near the 256 slots a pair packs.
constexpr uint32_t kPairRowMaxK = 64;
constexpr int kPairSlots = static_cast<int>(kPairRowMaxCols / 64);  // 128 keys a thread
// Blocks of two pairs: 160 registers a thread leave room for 12 warps a multiprocessor, and
// three blocks' stages (2 x 32 KiB each) fit its shared memory.
constexpr unsigned kPairThreads = 128;
constexpr unsigned kPairs = kPairThreads / 64;

// Pair p of the block takes rows blockIdx.x * kPairs + p, + gridDim.x * kPairs, ... through its
// stage, with named barrier 1 + p.
__global__ void __launch_bounds__(kPairThreads)
    topk_by_warp_pair(size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  const unsigned pair = threadIdx.x / 64;
  __shared__ WarpPairScratch scratch[kPairs];
  __shared__ uint32_t candidates[kPairs][kSharedSlots * 64];
  __shared__ uint64_t full[kPairs];
  extern __shared__ __align__(128) float stage_rows[];  // [kPairs][kPairRowMaxCols]
  WarpPairTeam<true> team(&scratch[pair], 1 + pair);
  WarpRowStage stage{stage_rows + static_cast<size_t>(pair) * kPairRowMaxCols, &full[pair]};
  const size_t step = static_cast<size_t>(gridDim.x) * kPairs;
  size_t row = blockIdx.x * static_cast<size_t>(kPairs) + pair;
  if (team.member == 0) {
    stage.init();
    if (row < rows) stage.fill(x + row * cols, cols);
  }
  team.sync();
  // A pair's trips are its own (its barrier has its own id), so each stops at its last row.
  for (; row < rows; row += step) {
    uint32_t key[kPairSlots];
    stage.take<64>(key, team.member, cols);
    team.sync();  // both warps have read the stage
    if (team.member == 0 && row + step < rows) stage.fill(x + (row + step) * cols, cols);
    topk_row<kPairSlots>(team, key, cols, k, true, true, mask + row * cols, candidates[pair]);
  }
}

}  // namespace

bool topk_warp_pair_plan(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x,
                         float* mask, int& status) {
  if (cols < kPairRowMinCols || cols > kPairRowMaxCols || k < kPairRowMinK || k > kPairRowMaxK ||
      cols % 4 != 0 || !aligned16(x)) {
    return false;
  }
  constexpr int kBytes = static_cast<int>(kPairs * kPairRowMaxCols * sizeof(float));
  if (!allow_dynamic_shared(topk_by_warp_pair, kBytes)) return false;  // the other plans take them
  topk_by_warp_pair<<<grid_for(rows, kPairs), kPairThreads, kBytes, s>>>(rows, cols, k, x, mask);
  status = launch_status();
  return true;
}

}  // namespace tapecheck_cuda
