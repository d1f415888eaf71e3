// TorchLean's torchlean_cuda_kernels.cu, compiled as it is from the checkout named by
// TAPECHECK_TORCHLEAN_DIR, and the launchers of primitives.h that use it. Each launcher is the
// body of the exported function named beside it, without the Lean objects: the same checks, the
// same kernel, grid and block (kBlockSize = 256 threads, which the kernels require), the same
// scratch allocator and the same launch check.
#include "torchlean_cuda_kernels.cu"

#include "primitives.h"

namespace tapecheck::torchlean::buffer {

// torchlean_cuda_buffer_reduce_max_by_row
void reduceMaxByRow(const float* in, float* out, uint32_t rows, uint32_t cols) {
  check_axis_grid_size((size_t)rows,
                       "torchlean_cuda_buffer_reduce_max_by_row: rows exceed CUDA x-grid range");
  reduce_max_by_row_f32<<<dim3((unsigned int)rows), dim3(kBlockSize)>>>(in, out, rows, cols);
  checkCuda(cudaGetLastError(), "cuda reduceMaxByRow kernel launch failed");
}

// torchlean_cuda_buffer_reduce_sum_by_row
void reduceSumByRow(const float* in, float* out, uint32_t rows, uint32_t cols) {
  check_axis_grid_size((size_t)rows,
                       "torchlean_cuda_buffer_reduce_sum_by_row: rows exceed CUDA x-grid range");
  reduce_sum_by_row_f32<<<dim3((unsigned int)rows), dim3(kBlockSize)>>>(in, out, rows, cols);
  checkCuda(cudaGetLastError(), "cuda reduceSumByRow kernel launch failed");
}

// torchlean_cuda_buffer_broadcast_vec_to_cols
void broadcastVecToCols(const float* vec, float* out, uint32_t rows, uint32_t cols) {
  const size_t total = (size_t)rows * (size_t)cols;
  broadcast_vec_to_cols_f32<<<blocks_for(total), dim3(kBlockSize)>>>(vec, rows, cols, out);
  checkCuda(cudaGetLastError(), "cuda broadcastVecToCols kernel launch failed");
}

// torchlean_cuda_buffer_layer_norm_fwd
void layerNormFwd(const float* x, const float* gamma, const float* beta, float* out,
                  float* normalized, float* invStd, uint32_t rows, uint32_t cols, double invCols,
                  double epsilon) {
  check_axis_grid_size(
      (size_t)rows, "torchlean_cuda_buffer_layer_norm_fwd: rows exceed CUDA x-grid range");
  layer_norm_fwd_f32<<<dim3((unsigned int)rows), dim3(kBlockSize)>>>(
      x, gamma, beta, out, normalized, invStd, rows, cols, (float)invCols, (float)epsilon);
  checkCuda(cudaGetLastError(), "cuda layerNorm forward kernel launch failed");
}

// torchlean_cuda_buffer_layer_norm_bwd
void layerNormBwd(const float* dOut, const float* normalized, const float* invStd,
                  const float* gamma, float* dX, float* dGamma, float* dBeta, uint32_t rows,
                  uint32_t cols, double colsScale, double invCols) {
  const size_t total = checked_mul_size(
      (size_t)rows, (size_t)cols, "torchlean_cuda_buffer_layer_norm_bwd: size overflow");
  check_axis_grid_size(
      (size_t)rows, "torchlean_cuda_buffer_layer_norm_bwd: rows exceed CUDA x-grid range");
  float* dGammaPointwise = torchlean_cuda_scratch_alloc<float>(
      total, "cudaMalloc layerNorm dGamma workspace failed");
  layer_norm_bwd_rows_f32<<<dim3((unsigned int)rows), dim3(kBlockSize)>>>(
      dOut, normalized, invStd, gamma, dX, dGammaPointwise, rows, cols, (float)colsScale,
      (float)invCols);
  checkCuda(cudaGetLastError(), "cuda layerNorm backward row kernel launch failed");
  launch_reduce_sum_by_column(dGammaPointwise, dGamma, rows, cols,
                              "torchlean_cuda_buffer_layer_norm_bwd: dGamma grid overflow",
                              "cuda layerNorm dGamma reduction launch failed");
  launch_reduce_sum_by_column(dOut, dBeta, rows, cols,
                              "torchlean_cuda_buffer_layer_norm_bwd: dBeta grid overflow",
                              "cuda layerNorm dBeta reduction launch failed");
  torchlean_cuda_scratch_free(&dGammaPointwise, total,
                              "cudaFree layerNorm dGamma workspace failed");
}

// torchlean_cuda_kernels_flush_scratch_cache
void flushScratch() { torchlean_cuda_kernels_flush_scratch_cache(); }

}  // namespace tapecheck::torchlean::buffer
