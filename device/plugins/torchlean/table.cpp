// The kernel ABI v1 table of the TorchLean plugin: what TorchLean's CUDA tape provides
// (tape_order.h), null for what it does not (topKMask and crossEntropy have no CUDA tape
// operation in TorchLean).
//
// TorchLean launches every kernel on the legacy default stream. The ABI hands each call a
// stream; when it is another one, the call is ordered after the work already queued on it, and
// the work queued on it afterwards after the call, with an event each way.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

#include "tape_order.h"
#include "tapecheck/kernels_v1.h"

#ifndef TAPECHECK_TORCHLEAN_VERSION
#error "TAPECHECK_TORCHLEAN_VERSION must be defined by the build (the TorchLean revision)"
#endif

namespace tapecheck::torchlean {
namespace {

using u32 = std::uint32_t;

bool isLegacyDefault(cudaStream_t stream) {
  return stream == nullptr || stream == cudaStreamLegacy;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Makes `waiter` wait for everything queued on `signaller` so far.
void order(cudaStream_t signaller, cudaStream_t waiter) {
  cudaEvent_t event = nullptr;
  check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  cudaError_t e = cudaEventRecord(event, signaller);
  if (e == cudaSuccess) e = cudaStreamWaitEvent(waiter, event, 0);
  cudaEventDestroy(event);  // released once the wait is satisfied
  check(e, "ordering TorchLean's default stream with the caller's stream");
}

// Runs `body`: 0, or 1 with the reason on stderr.
template <class Body>
int run(Body&& body) noexcept {
  try {
    body();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tapecheck-torchlean: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "tapecheck-torchlean: unknown exception\n");
  }
  return 1;
}

// Runs `body` (TorchLean's launches, on the legacy default stream) in the order of `stream`.
// Returns 0, or 1 with the reason on stderr: a CUDA error, or a check of TorchLean's that would
// have stopped the Lean process (lean/lean.h). Whatever `body` queued is ordered before the
// caller's later work even when it failed part way.
template <class Body>
int onStream(void* stream, Body&& body) noexcept {
  const cudaStream_t caller = static_cast<cudaStream_t>(stream);
  if (isLegacyDefault(caller)) return run(body);
  if (run([&] { order(caller, nullptr); }) != 0) return 1;
  const int status = run(body);
  const int after = run([&] { order(nullptr, caller); });
  return status != 0 ? status : after;
}

int softmaxFwd(void* stream, u32 rows, u32 cols, const float* x, float* y) {
  return onStream(stream, [&] { rowSoftmaxForward(x, y, rows, cols); });
}

int softmaxBwd(void* stream, u32 rows, u32 cols, const float* y, const float* dy, float* dx) {
  return onStream(stream, [&] { rowSoftmaxBwd(y, dy, dx, rows, cols); });
}

int logSoftmaxFwd(void* stream, u32 rows, u32 cols, const float* x, float* y) {
  return onStream(stream, [&] { rowLogSoftmaxForward(x, y, rows, cols); });
}

int logSoftmaxBwd(void* stream, u32 rows, u32 cols, const float* y, const float* dy,
                  float* dx) {
  return onStream(stream, [&] { rowLogSoftmaxBwd(y, dy, dx, rows, cols); });
}

int layerNormFwd(void* stream, u32 rows, u32 cols, float epsilon, const float* x,
                 const float* gamma, const float* beta, float* y, float* xhat, float* invStd) {
  return onStream(stream, [&] {
    layerNormForward(x, gamma, beta, y, xhat, invStd, rows, cols, epsilon);
  });
}

int layerNormBwd(void* stream, u32 rows, u32 cols, const float* dy, const float* xhat,
                 const float* invStd, const float* gamma, float* dx, float* dgamma,
                 float* dbeta) {
  return onStream(stream, [&] {
    layerNormBackward(dy, xhat, invStd, gamma, dx, dgamma, dbeta, rows, cols);
  });
}

int batchNormFwd(void* stream, u32 channels, u32 spatial, float epsilon, const float* x,
                 const float* gamma, const float* beta, float* y, float* xhat, float* invStd) {
  return onStream(stream, [&] {
    batchNormForward(x, gamma, beta, y, xhat, invStd, channels, spatial, epsilon);
  });
}

int batchNormBwd(void* stream, u32 channels, u32 spatial, const float* dy, const float* xhat,
                 const float* invStd, const float* gamma, float* dx, float* dgamma,
                 float* dbeta) {
  return onStream(stream, [&] {
    batchNormBackward(dy, xhat, invStd, gamma, dx, dgamma, dbeta, channels, spatial);
  });
}

const tapecheck_kernels_v1 kTable = {
    1u,
    "torchlean-cuda",
    TAPECHECK_TORCHLEAN_VERSION,
    1u,  // CUDA device memory
    softmaxFwd,
    softmaxBwd,
    logSoftmaxFwd,
    logSoftmaxBwd,
    nullptr,  // topk_mask: not provided
    layerNormFwd,
    layerNormBwd,
    batchNormFwd,
    batchNormBwd,
    nullptr,  // cross_entropy_fwd: not provided
    nullptr,  // cross_entropy_bwd: not provided
};

}  // namespace
}  // namespace tapecheck::torchlean

extern "C" __attribute__((visibility("default"))) const tapecheck_kernels_v1*
tapecheck_kernels_v1_get(void) {
  return &tapecheck::torchlean::kTable;
}
