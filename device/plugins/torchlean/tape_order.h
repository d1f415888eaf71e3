// The operations of kernel ABI v1 that TorchLean's CUDA tape provides, each composed from
// TorchLean's primitives (primitives.h) in the order the tape composes them. Every function runs
// on the legacy default stream and throws on failure; table.cpp turns both into the ABI's terms.
#pragma once

#include <cstdint>

namespace tapecheck::torchlean {

// Tape.softmax / Tape.logSoftmax (NormSoftmax.lean) through rowSoftmaxForward, rowSoftmaxBwd,
// rowLogSoftmaxForward, rowLogSoftmaxBwd (Ops/Core.lean).
void rowSoftmaxForward(const float* x, float* y, std::uint32_t rows, std::uint32_t cols);
void rowSoftmaxBwd(const float* y, const float* dLdy, float* dx, std::uint32_t rows,
                   std::uint32_t cols);
void rowLogSoftmaxForward(const float* x, float* y, std::uint32_t rows, std::uint32_t cols);
void rowLogSoftmaxBwd(const float* y, const float* dLdy, float* dx, std::uint32_t rows,
                      std::uint32_t cols);

// Tape.layerNorm (NormSoftmax.lean): the fused Buffer.layerNormFwd / Buffer.layerNormBwd.
void layerNormForward(const float* x, const float* gamma, const float* beta, float* y,
                      float* xHat, float* invStd, std::uint32_t rows, std::uint32_t cols,
                      float epsilon);
void layerNormBackward(const float* dLdy, const float* xHat, const float* invStd,
                       const float* gamma, float* dx, float* dGamma, float* dBeta,
                       std::uint32_t rows, std::uint32_t cols);

// Tape.batchnormChannelFirst (NormSoftmax.lean) on the (channels, spatial) view. The ABI hands
// the backward pass invStd where the tape keeps std and inverts it there; the forward pass
// computes invStd with that same Buffer.inv, so the backward pass sees the same values.
void batchNormForward(const float* x, const float* gamma, const float* beta, float* y,
                      float* xHat, float* invStd, std::uint32_t channels, std::uint32_t spatial,
                      float epsilon);
void batchNormBackward(const float* dLdy, const float* xHat, const float* invStd,
                       const float* gamma, float* dx, float* dGamma, float* dBeta,
                       std::uint32_t channels, std::uint32_t spatial);

}  // namespace tapecheck::torchlean
