/* tapecheck kernel ABI, version 1.
 *
 * This header is a contract that kernel authors build against (DESIGN.md section 3): the field
 * order and the signatures below never change within version 1. A kernel table is a struct of
 * function pointers; a plugin is a shared library exporting tapecheck_kernels_v1_get().
 *
 * Every function returns 0 on success and nonzero on failure. Buffers are float32, contiguous,
 * row-major. `stream` is a cudaStream_t when memory == 1 and is ignored when memory == 0.
 * The tape validates every argument and handles empty and scalar cases itself, so a kernel is
 * only called with rows, cols (channels, spatial, outer, n, inner) all > 0.
 *
 * A null function pointer means "not provided": a library under development may fill in only
 * the entries it implements. The operations that need a missing entry are reported NOT PROVIDED
 * and are not certified; the rest are. An operation's forward pass needs its *_fwd entries
 * (topk_mask for topKMask; cross_entropy_fwd for crossEntropy and distill), its backward pass
 * those and its *_bwd entries. A table whose every entry is null is refused.
 *
 * Outputs are written within their extent only: the harness surrounds every output buffer with
 * guard regions and reports a kernel that writes outside them, as it reports a nonzero return.
 */
#ifndef TAPECHECK_KERNELS_V1_H
#define TAPECHECK_KERNELS_V1_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tapecheck_kernels_v1 {
  uint32_t abi_version;   /* == 1 */
  const char* name;       /* e.g. "tapecheck-cuda" */
  const char* version;    /* the kernel version being certified, e.g. "1.0.0" */
  uint32_t memory;        /* 0 = host memory, 1 = CUDA device memory */
  /* every function: 0 on success, nonzero on failure; float32, contiguous, row-major;
     `stream` is a cudaStream_t for memory == 1 and ignored for memory == 0 */
  int (*softmax_fwd)(void* stream, uint32_t rows, uint32_t cols, const float* x, float* y);
  int (*softmax_bwd)(void* stream, uint32_t rows, uint32_t cols,
                     const float* y, const float* dy, float* dx);
  int (*log_softmax_fwd)(void* stream, uint32_t rows, uint32_t cols, const float* x, float* y);
  int (*log_softmax_bwd)(void* stream, uint32_t rows, uint32_t cols,
                         const float* y, const float* dy, float* dx);
  int (*topk_mask)(void* stream, uint32_t rows, uint32_t cols, uint32_t k,
                   const float* x, float* mask);
  int (*layer_norm_fwd)(void* stream, uint32_t rows, uint32_t cols, float epsilon,
                        const float* x, const float* gamma, const float* beta,
                        float* y, float* xhat, float* inv_std /* [rows] */);
  int (*layer_norm_bwd)(void* stream, uint32_t rows, uint32_t cols,
                        const float* dy, const float* xhat, const float* inv_std,
                        const float* gamma, float* dx, float* dgamma, float* dbeta);
  int (*batch_norm_fwd)(void* stream, uint32_t channels, uint32_t spatial, float epsilon,
                        const float* x, const float* gamma, const float* beta,
                        float* y, float* xhat, float* inv_std /* [channels] */);
  int (*batch_norm_bwd)(void* stream, uint32_t channels, uint32_t spatial,
                        const float* dy, const float* xhat, const float* inv_std,
                        const float* gamma, float* dx, float* dgamma, float* dbeta);
  int (*cross_entropy_fwd)(void* stream, uint32_t outer, uint32_t n, uint32_t inner,
                           uint32_t mean, const float* logits, const float* target,
                           float* loss /* 1 element */, float* logp /* saved, same size */);
  int (*cross_entropy_bwd)(void* stream, uint32_t outer, uint32_t n, uint32_t inner,
                           uint32_t mean, const float* dloss /* 1 element */,
                           const float* logp, const float* target,
                           float* dlogits /* may be NULL */, float* dtarget /* may be NULL */);
};

/* Exported by plugins. Returns a pointer to a table that lives as long as the library. */
const struct tapecheck_kernels_v1* tapecheck_kernels_v1_get(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TAPECHECK_KERNELS_V1_H */
