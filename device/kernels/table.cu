// The kernel table of the built-in CUDA kernels and the one symbol the library exports.
#include "entry.h"
#include "tapecheck/kernels_v1.h"

namespace {

const tapecheck_kernels_v1 kTable = {
    /*abi_version=*/1u,
    /*name=*/"tapecheck-cuda",
    // The version of this table; CHANGELOG.md at the repository root says what each one changed.
    /*version=*/"1.28.0",
    /*memory=*/1u,
    &tapecheck_cuda::softmax_fwd,
    &tapecheck_cuda::softmax_bwd,
    &tapecheck_cuda::log_softmax_fwd,
    &tapecheck_cuda::log_softmax_bwd,
    &tapecheck_cuda::topk_mask,
    &tapecheck_cuda::layer_norm_fwd,
    &tapecheck_cuda::layer_norm_bwd,
    &tapecheck_cuda::batch_norm_fwd,
    &tapecheck_cuda::batch_norm_bwd,
    &tapecheck_cuda::cross_entropy_fwd,
    &tapecheck_cuda::cross_entropy_bwd,
};

}  // namespace

// Everything else in the library is hidden (CUDA_VISIBILITY_PRESET hidden).
extern "C" __attribute__((visibility("default"))) const tapecheck_kernels_v1* tapecheck_kernels_v1_get(void) {
  return &kTable;
}
