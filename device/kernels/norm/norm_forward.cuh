// The forward pass of layer norm and of batch norm (kPerRow: gamma and beta per row, a channel;
// otherwise per column), which differ only in where gamma and beta come from: the row tiles
// (norm_tiles.cuh), or the generic row engine where those have no kernel for the tile.
#pragma once

#include "common/row_engine.cuh"
#include "norm/norm_math.cuh"
#include "norm/norm_tiles.cuh"

namespace tapecheck_cuda {

template <bool kPerRow>
int norm_forward(void* stream, uint32_t rows, uint32_t cols, float epsilon, const float* x,
                 const float* gamma, const float* beta, float* y, float* xhat, float* inv_std) {
  const cudaStream_t s = as_stream(stream);
  if (norm_fwd_tiled<kPerRow>(s, rows, cols, epsilon, x, gamma, beta, y, xhat, inv_std)) {
    return launch_status();
  }
  NormFwd<kPerRow> op{};
  op.x = x;
  op.gamma = gamma;
  op.beta = beta;
  op.y = y;
  op.xhat = xhat;
  op.inv_std = inv_std;
  op.cols = cols;
  op.eps = epsilon;
  Scratch scratch(s);
  return run_rows(op, rows, cols, 1, s, scratch);
}

}  // namespace tapecheck_cuda
