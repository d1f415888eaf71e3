// topKMask of long rows in groups of warps (WarpGroupTeam, topk_teams.cuh), 128 keys a thread in
// registers, each group's next row copied into shared memory during the current row's search
// (topk_warp_stage.cuh): two warps a row ("warp pairs", since 1.11.0) for 4097-8192 columns and
// 5 <= k <= 64, four warps a row (since 1.12.0) for 8193-16384 columns and 2 <= k <= 64.
//
// Why pairs: at 8K columns the plans before (topk_sorted.cu's block rows for k <= 8, its chunked
// warp for 9-16, topk_mask.cu's block rows for k > 16) ran at 0.57-0.76 of copy bandwidth on the
// H200 for k >= 5 (tools/bench/results/2026-12-02-h200-1.11.0-same-session/): each step of a
// block's search waits on a barrier of all its warps. A warp cannot hold 8K keys in registers,
// and a warp holding the row in shared memory ran at 0.29-0.63, its passes over the stage too
// slow with 3-6 such warps a multiprocessor
// (tools/bench/results/2026-12-02-h200-1.10.0-candidates/).
// Two warps of 128 keys a thread are the 4K warps' layout twice: a search step's count is each
// warp's reduction plus one named barrier of 64 threads, and the candidates are packed in
// shared memory (topk_select.cuh), so the search runs over four keys a thread.
// k <= 4 keep the sorting networks' block rows (0.91-0.95 at 8K). Measured against 1.10.0 in one
// session (ours/copy, two runs each), k = 5-64 at 8K went from 0.57-0.76 to 0.94, and at 6144
// columns (one run, a quarter of each thread's slots padding) from 0.52-0.70 to 0.80-0.81
// (tools/bench/results/2026-12-02-h200-1.11.0-same-session/).
//
// Why groups of four: the same layout twice again. At 16384 columns the stream of
// topk_stream.cuh (one block of 512 threads a row, its candidates gathered in shared memory) ran
// at 0.71-0.85 of copy bandwidth for 2 <= k <= 64, and at 12288 columns the block rows (of
// topk_sorted.cu for k = 2 and 8, of topk_mask.cu for 64) at 0.48-0.81. Groups of four warps ran
// at 0.90-0.94 and 0.82-0.83 (measured against 1.11.0 in one session, two runs at 16K, one at 12K:
// tools/bench/results/2026-12-02-h200-1.12.0-same-session/).
#include "topk/topk_select.cuh"
#include "topk/topk_teams.cuh"
#include "topk/topk_warp_groups.h"
#include "topk/topk_warp_stage.cuh"

namespace tapecheck_cuda {
namespace {

constexpr uint32_t kPairRowMinCols = 4097;
constexpr uint32_t kPairRowMaxCols = 8192;
constexpr uint32_t kPairRowMinK = 5;
constexpr uint32_t kQuadRowMaxCols = 16384;
constexpr uint32_t kQuadRowMinK = 2;
// As the 4K warps' kWideWarpRowMaxK: beyond, the candidates (about 74 at k = 64 on data in
// random order) near the 256 slots a pair packs. Groups of four were measured up to 64 too.
constexpr uint32_t kGroupRowMaxK = 64;
constexpr int kGroupSlots = 128;  // keys a thread: kPairRowMaxCols / 64, kQuadRowMaxCols / 128
// Blocks of 128 threads (two pairs or one group of four) at three blocks a multiprocessor: 168
// registers a thread (without that bound the four-warp kernel took 249), and three blocks'
// stages (64 KiB each) fit its shared memory.
constexpr unsigned kGroupThreads = 128;
constexpr unsigned kBlocksPerMultiprocessor = 3;

// Group g of the block takes rows blockIdx.x * kGroups + g, + gridDim.x * kGroups, ... through
// its stage, with named barrier 1 + g.
template <unsigned kWarps>
__global__ void __launch_bounds__(kGroupThreads, kBlocksPerMultiprocessor)
    topk_by_warp_group(size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  constexpr unsigned kSize = 32 * kWarps;
  constexpr unsigned kGroups = kGroupThreads / kSize;
  constexpr size_t kStageFloats = static_cast<size_t>(kSize) * kGroupSlots;
  const unsigned group = threadIdx.x / kSize;
  __shared__ WarpGroupScratch<kWarps> scratch[kGroups];
  __shared__ uint32_t candidates[kGroups][kSharedSlots * kSize];
  __shared__ uint64_t full[kGroups];
  extern __shared__ __align__(128) float stage_rows[];  // [kGroups][kStageFloats]
  WarpGroupTeam<kWarps, true> team(&scratch[group], 1 + group);
  WarpRowStage stage{stage_rows + group * kStageFloats, &full[group]};
  const size_t step = static_cast<size_t>(gridDim.x) * kGroups;
  size_t row = blockIdx.x * static_cast<size_t>(kGroups) + group;
  if (team.member == 0) {
    stage.init();
    if (row < rows) stage.fill(x + row * cols, cols);
  }
  team.sync();
  // A group's trips are its own (its barrier has its own id), so each stops at its last row.
  for (; row < rows; row += step) {
    uint32_t key[kGroupSlots];
    stage.take<kSize>(key, team.member, cols);
    team.sync();  // every warp has read the stage
    if (team.member == 0 && row + step < rows) stage.fill(x + (row + step) * cols, cols);
    topk_row<kGroupSlots>(team, key, cols, k, true, true, mask + row * cols, candidates[group]);
  }
}

template <unsigned kWarps>
bool launch_warp_groups(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x,
                        float* mask, int& status) {
  constexpr unsigned kGroups = kGroupThreads / (32 * kWarps);
  constexpr int kBytes = static_cast<int>(kGroupThreads * kGroupSlots * sizeof(float));
  // Refused: the other plans take the rows.
  if (!allow_dynamic_shared(topk_by_warp_group<kWarps>, kBytes)) return false;
  topk_by_warp_group<kWarps><<<grid_for(rows, kGroups), kGroupThreads, kBytes, s>>>(rows, cols, k,
                                                                                     x, mask);
  status = launch_status();
  return true;
}

}  // namespace

bool topk_warp_group_plan(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x,
                          float* mask, int& status) {
  if (cols < kPairRowMinCols || cols > kQuadRowMaxCols || k > kGroupRowMaxK || cols % 4 != 0 ||
      !aligned16(x)) {
    return false;
  }
  if (cols <= kPairRowMaxCols) {
    return k >= kPairRowMinK && launch_warp_groups<2>(s, rows, cols, k, x, mask, status);
  }
  return k >= kQuadRowMinK && launch_warp_groups<4>(s, rows, cols, k, x, mask, status);
}

}  // namespace tapecheck_cuda
