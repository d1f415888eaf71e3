// TorchLean's CUDA buffer primitives as the plugin launches them.
//
// Each function runs one of TorchLean's kernels with the launch configuration of the exported
// function behind the Lean operation of the same name (`Buffer.sub` is
// torchlean_cuda_buffer_sub, `Buffer.layerNormFwd` is torchlean_cuda_buffer_layer_norm_fwd, ...)
// and does what that function does between unboxing its Lean arguments and boxing its results.
// Buffers are device pointers the caller owns, inputs first, outputs last; every kernel runs on
// the legacy default stream, as TorchLean's do. A failed launch throws (TorchLean's own check,
// through lean_internal_panic: see lean/lean.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tapecheck::torchlean::buffer {

// torchlean_cuda_tensor.cu: elementwise over n values.
void full(float* out, std::uint32_t n, double value);
void add(const float* a, const float* b, float* out, std::size_t n);
void sub(const float* a, const float* b, float* out, std::size_t n);
void mul(const float* a, const float* b, float* out, std::size_t n);
void div(const float* a, const float* b, float* out, std::size_t n);
void scale(const float* in, float* out, std::size_t n, double c);
void exp(const float* in, float* out, std::size_t n);
void log(const float* in, float* out, std::size_t n);
void sqrt(const float* in, float* out, std::size_t n);
void inv(const float* in, float* out, std::size_t n);

// torchlean_cuda_kernels.cu: a row-major [rows, cols] matrix, rows > 0 and cols > 0.
void reduceMaxByRow(const float* in, float* out, std::uint32_t rows, std::uint32_t cols);
void reduceSumByRow(const float* in, float* out, std::uint32_t rows, std::uint32_t cols);
void broadcastVecToCols(const float* vec, float* out, std::uint32_t rows, std::uint32_t cols);
void layerNormFwd(const float* x, const float* gamma, const float* beta, float* out,
                  float* normalized, float* invStd, std::uint32_t rows, std::uint32_t cols,
                  double invCols, double epsilon);
void layerNormBwd(const float* dOut, const float* normalized, const float* invStd,
                  const float* gamma, float* dX, float* dGamma, float* dBeta, std::uint32_t rows,
                  std::uint32_t cols, double colsScale, double invCols);

// torchlean_cuda_kernels_flush_scratch_cache: frees the blocks TorchLean's scratch allocator keeps
// for reuse (layerNormBwd's workspace), as TorchLean's allocator-collection hook does between
// training steps. The cache is keyed by exact size, so over thousands of differently sized cases
// it would only grow.
void flushScratch();

}  // namespace tapecheck::torchlean::buffer
