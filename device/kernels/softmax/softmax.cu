// softmax / log-softmax along the last axis, forward and backward (docs/spec.md, softmaxLast and
// logSoftmaxLast). Rows are contiguous: row r is x[r * cols, (r + 1) * cols).
//
// These four are pure streaming ops, so they have their own row-tiled kernels
// (softmax_fwd.cuh, softmax_bwd.cuh) instead of the generic row engine: 16-byte loads, rows
// held in registers up to 32K (fwd) / 16K (bwd) floats a block and 8 times that across a
// thread-block cluster (softmax_cluster.cuh), several short rows per warp, float
// arithmetic per element with double sums per 4 elements. The tile depends only on cols, so a
// row's result does not depend on the number of rows (batch invariance).
#include "entry.h"
#include "softmax/softmax_bwd.cuh"
#include "softmax/softmax_cluster.cuh"
#include "softmax/softmax_fwd.cuh"

namespace tapecheck_cuda {
namespace {

// Units of 4 per thread held in registers: 32 floats for the forward pass (one array), 16 of
// each input for the backward pass (two arrays), about 64 registers of data at most.
constexpr int kFwdUnits = 8;
constexpr int kBwdUnits = 4;

// Warp tiles (row_tiles.cuh, WarpTileChoice): 2 units of 4 floats a lane where the default
// aims for 4 (at 128 columns 16 lanes of 2 units, not 8 of 4), in blocks of 128 threads, not
// 256; the forward pass takes blocks of 256 where a lane holds more than 2 units (rows of more
// than 256 columns), which read faster there.
// At 128 columns: softmax forward 0.973-0.975 -> 0.998-1.001 of copy speed (CHANGELOG 1.25.0).
constexpr WarpTileChoice kFwdWarpTiles = kTwoUnitWarpTiles;
constexpr WarpTileChoice kBwdWarpTiles{2, 128, 128};

template <bool kLog>
int softmax_forward(void* stream, uint32_t rows, uint32_t cols, const float* x, float* y) {
  const cudaStream_t s = as_stream(stream);
  const Tile t = plan_tile(cols, kFwdUnits, kFwdWarpTiles);
  const bool vec = t.V == 4 && aligned16(x) && aligned16(y);
  // Rows of more than 512 threads' registers, up to 8 blocks': held across a cluster.
  if (t.mode != Tile::Warp && softmax_fwd_clustered<kLog, kFwdUnits>(s, rows, cols, x, y)) {
    return launch_status();
  }
  if (t.mode == Tile::Stream) {
    const unsigned grid = tile_grid(t, rows);
    launch_stream_form(t, vec, [&](auto v, auto kvec) {
      softmax_fwd_stream<kLog, v, kvec><<<grid, t.threads, 0, s>>>(x, y, rows, cols);
    });
  } else if (!dispatch_regs<kFwdUnits>(t, vec, [&](auto block_row, auto n, auto v, auto kvec) {
               softmax_fwd_regs<kLog, block_row, n, v, kvec>
                   <<<tile_grid(t, rows), t.threads, 0, s>>>(x, y, rows, cols, t.T);
             })) {
    return 1;
  }
  return launch_status();
}

template <bool kLog>
int softmax_backward(void* stream, uint32_t rows, uint32_t cols, const float* y, const float* dy,
                     float* dx) {
  const cudaStream_t s = as_stream(stream);
  const Tile t = plan_tile(cols, kBwdUnits, kBwdWarpTiles);
  const bool vec = t.V == 4 && aligned16(y) && aligned16(dy) && aligned16(dx);
  if (t.mode != Tile::Warp && softmax_bwd_clustered<kLog, kBwdUnits>(s, rows, cols, y, dy, dx)) {
    return launch_status();
  }
  if (t.mode == Tile::Stream) {
    const unsigned grid = tile_grid(t, rows);
    launch_stream_form(t, vec, [&](auto v, auto kvec) {
      softmax_bwd_stream<kLog, v, kvec><<<grid, t.threads, 0, s>>>(y, dy, dx, rows, cols);
    });
  } else if (!dispatch_regs<kBwdUnits>(t, vec, [&](auto block_row, auto n, auto v, auto kvec) {
               softmax_bwd_regs<kLog, block_row, n, v, kvec>
                   <<<tile_grid(t, rows), t.threads, 0, s>>>(y, dy, dx, rows, cols, t.T);
             })) {
    return 1;
  }
  return launch_status();
}

}  // namespace

int softmax_fwd(void* stream, uint32_t rows, uint32_t cols, const float* x, float* y) {
  return softmax_forward<false>(stream, rows, cols, x, y);
}

int log_softmax_fwd(void* stream, uint32_t rows, uint32_t cols, const float* x, float* y) {
  return softmax_forward<true>(stream, rows, cols, x, y);
}

int softmax_bwd(void* stream, uint32_t rows, uint32_t cols, const float* y, const float* dy,
                float* dx) {
  return softmax_backward<false>(stream, rows, cols, y, dy, dx);
}

int log_softmax_bwd(void* stream, uint32_t rows, uint32_t cols, const float* y, const float* dy,
                    float* dx) {
  return softmax_backward<true>(stream, rows, cols, y, dy, dx);
}

}  // namespace tapecheck_cuda
