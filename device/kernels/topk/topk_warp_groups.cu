// topKMask of long rows in groups of warps (WarpGroupTeam, topk_teams.cuh), 128 keys a thread in
// registers, each group's next row copied into shared memory during the current row's search
// (topk_warp_stage.cuh): two warps a row ("warp pairs") for 4097-8192 columns and 5 <= k <= 64,
// four warps a row for 8193-16384 columns and 2 <= k <= 64.
//
// Why: a warp cannot hold 8K keys in registers, and each step of a block row's search waits on
// a barrier of all its warps. Two warps of 128 keys a thread are the 4K warps' layout twice: a
// search step's count is each warp's reduction plus one named barrier of 64 threads, and the
// candidates are packed in shared memory (topk_select.cuh), so the search runs over four keys a
// thread. Groups of four are the same layout twice again, for rows the stream (topk_stream.cuh)
// and the block rows take more slowly. k <= 4 at 4097-8192 columns keep the sorting networks'
// block rows, which are as fast there.
// Pairs: k = 5-64 at 8K, 0.57-0.76 -> 0.94 of copy speed (CHANGELOG 1.11.0).
// Groups of four: k = 8 / 64 at 16K, 0.827 / 0.712 -> 0.912 / 0.911 (CHANGELOG 1.12.0).
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
// random order) near the 256 slots a pair packs. Groups of four are held to the same k.
constexpr uint32_t kGroupRowMaxK = 64;
constexpr int kGroupSlots = 128;  // keys a thread: kPairRowMaxCols / 64, kQuadRowMaxCols / 128
// Blocks of 128 threads (two pairs or one group of four) at three blocks a multiprocessor: 168
// registers a thread (without that bound the four-warp kernel takes 249), and three blocks'
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
