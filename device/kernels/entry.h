// The eleven entry points of the built-in CUDA kernel table (signatures of kernels_v1.h).
#pragma once

#include <cstdint>

namespace tapecheck_cuda {

int softmax_fwd(void* stream, uint32_t rows, uint32_t cols, const float* x, float* y);
int softmax_bwd(void* stream, uint32_t rows, uint32_t cols, const float* y, const float* dy,
                float* dx);
int log_softmax_fwd(void* stream, uint32_t rows, uint32_t cols, const float* x, float* y);
int log_softmax_bwd(void* stream, uint32_t rows, uint32_t cols, const float* y, const float* dy,
                    float* dx);
int topk_mask(void* stream, uint32_t rows, uint32_t cols, uint32_t k, const float* x, float* mask);
int layer_norm_fwd(void* stream, uint32_t rows, uint32_t cols, float epsilon, const float* x,
                   const float* gamma, const float* beta, float* y, float* xhat, float* inv_std);
int layer_norm_bwd(void* stream, uint32_t rows, uint32_t cols, const float* dy, const float* xhat,
                   const float* inv_std, const float* gamma, float* dx, float* dgamma,
                   float* dbeta);
int batch_norm_fwd(void* stream, uint32_t channels, uint32_t spatial, float epsilon,
                   const float* x, const float* gamma, const float* beta, float* y, float* xhat,
                   float* inv_std);
int batch_norm_bwd(void* stream, uint32_t channels, uint32_t spatial, const float* dy,
                   const float* xhat, const float* inv_std, const float* gamma, float* dx,
                   float* dgamma, float* dbeta);
int cross_entropy_fwd(void* stream, uint32_t outer, uint32_t n, uint32_t inner, uint32_t mean,
                      const float* logits, const float* target, float* loss, float* logp);
int cross_entropy_bwd(void* stream, uint32_t outer, uint32_t n, uint32_t inner, uint32_t mean,
                      const float* dloss, const float* logp, const float* target, float* dlogits,
                      float* dtarget);

}  // namespace tapecheck_cuda
