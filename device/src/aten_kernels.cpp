// The built-in `aten` kernel table: kernel ABI v1 implemented with ATen tensor operations on the
// buffers' own device, through at::from_blob views of the raw pointers. PyTorch wrote this math,
// not us, so it is an implementation independent of the Eigen reference; where ATen has the
// operation (softmax, log-softmax, their backward, stable sort) it is ATen's, and where docs/spec.md
// fixes an order of operations ATen does not have (the twice-centered variance clamped at 0) the
// formula is spelled out with ATen ops in float32.
//
// Two tables: memory 0 (CPU tensors) and memory 1 (CUDA tensors on the pointer's device). The
// `stream` argument is not used: ATen runs on LibTorch's current stream, which is the default
// stream the tape passes (nullptr) unless a caller installs another one, which tapecheck never
// does. Inputs are only read; outputs are written with copy_ into views of the output pointers.
// Every entry catches every exception and returns nonzero (1 LibTorch error, 2 out of memory,
// 3 other exception), keeping the message for atenLastError().
#include "aten_kernels.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <new>
#include <string>

#include <ATen/ATen.h>
#include <torch/version.h>

#include "aten_softmax.h"
#include "aten_standardize.h"

namespace tapecheck::device::detail {
namespace {

thread_local std::string lastError;

void remember(const char* what) noexcept {
  try {
    lastError = what;
  } catch (...) {
  }
}

template <class Body>
int guarded(Body&& body) noexcept {
  try {
    body();
    return 0;
  } catch (const c10::OutOfMemoryError& e) {
    remember(e.what_without_backtrace());
    return 2;
  } catch (const c10::Error& e) {
    remember(e.what_without_backtrace());
    return 1;
  } catch (const std::bad_alloc&) {
    remember("out of memory");
    return 2;
  } catch (const std::exception& e) {
    remember(e.what());
    return 3;
  } catch (...) {
    remember("unknown exception");
    return 3;
  }
}

std::int64_t i64(std::uint32_t v) { return static_cast<std::int64_t>(v); }

template <bool Cuda>
at::TensorOptions floatOptions() {
  return at::TensorOptions().dtype(at::kFloat).device(Cuda ? at::kCUDA : at::kCPU);
}

// A view of a kernel input; it is only ever read.
template <bool Cuda>
at::Tensor in(const float* p, at::IntArrayRef sizes) {
  return at::from_blob(const_cast<float*>(p), sizes, floatOptions<Cuda>());
}

// A view of a kernel output, written once with copy_.
template <bool Cuda>
at::Tensor out(float* p, at::IntArrayRef sizes) {
  return at::from_blob(p, sizes, floatOptions<Cuda>());
}

// ---- softmax and log-softmax along the last axis of [rows, cols] --------------------------------

template <bool Cuda>
int softmaxFwd(void*, std::uint32_t rows, std::uint32_t cols, const float* x, float* y) {
  return guarded([&] {
    const std::int64_t sizes[] = {i64(rows), i64(cols)};
    out<Cuda>(y, sizes).copy_(specSoftmax(in<Cuda>(x, sizes), 1));
  });
}

// dx = y * (dy - sum(dy * y)): ATen's own softmax backward.
template <bool Cuda>
int softmaxBwd(void*, std::uint32_t rows, std::uint32_t cols, const float* y, const float* dy,
               float* dx) {
  return guarded([&] {
    const std::int64_t sizes[] = {i64(rows), i64(cols)};
    out<Cuda>(dx, sizes).copy_(
        at::_softmax_backward_data(in<Cuda>(dy, sizes), in<Cuda>(y, sizes), 1, at::kFloat));
  });
}

template <bool Cuda>
int logSoftmaxFwd(void*, std::uint32_t rows, std::uint32_t cols, const float* x, float* y) {
  return guarded([&] {
    const std::int64_t sizes[] = {i64(rows), i64(cols)};
    out<Cuda>(y, sizes).copy_(specLogSoftmax(in<Cuda>(x, sizes), 1));
  });
}

// dx = dy - exp(y) * sum(dy): ATen's own log-softmax backward.
template <bool Cuda>
int logSoftmaxBwd(void*, std::uint32_t rows, std::uint32_t cols, const float* y, const float* dy,
                  float* dx) {
  return guarded([&] {
    const std::int64_t sizes[] = {i64(rows), i64(cols)};
    out<Cuda>(dx, sizes).copy_(
        at::_log_softmax_backward_data(in<Cuda>(dy, sizes), in<Cuda>(y, sizes), 1, at::kFloat));
  });
}

// ---- topKMask ----------------------------------------------------------------------------------

// docs/spec.md's order: larger first, equal values by lower index, NaN below every number (-inf
// included) and NaNs among themselves by index. at::topk promises none of that, so the order is
// built from two stable sorts (least significant key first):
//   1. descending by value, NaN read as -inf: ties -- including -0 against +0, which compare
//      equal -- keep index order;
//   2. ascending by "is NaN": numbers before NaNs, each group keeping the order of step 1.
// A plain descending sort would not do: ATen sorts NaN as the largest value.
template <bool Cuda>
int topkMask(void*, std::uint32_t rows, std::uint32_t cols, std::uint32_t k, const float* x,
             float* mask) {
  return guarded([&] {
    const std::int64_t sizes[] = {i64(rows), i64(cols)};
    const at::Tensor xs = in<Cuda>(x, sizes);
    const at::Tensor isNaN = at::isnan(xs);
    const at::Tensor key = xs.masked_fill(isNaN, -std::numeric_limits<float>::infinity());
    const at::Tensor byValue = std::get<1>(at::sort(key, /*stable=*/true, /*dim=*/1,
                                                    /*descending=*/true));
    const at::Tensor nanFlags = isNaN.gather(1, byValue).to(at::kFloat);
    const at::Tensor byNaN = std::get<1>(at::sort(nanFlags, /*stable=*/true, /*dim=*/1,
                                                  /*descending=*/false));
    const at::Tensor order = byValue.gather(1, byNaN);
    at::Tensor result = at::zeros(sizes, floatOptions<Cuda>());
    const std::int64_t kept = std::min<std::int64_t>(k, cols);
    if (kept > 0) result.scatter_(1, order.narrow(1, 0, kept), 1.0);
    out<Cuda>(mask, sizes).copy_(result);
  });
}

// ---- layerNorm and batchNorm: rows of a [rows, cols] view ---------------------------------------

// y = xhat * gamma + beta, with gamma and beta shaped to broadcast ([1, cols] for layerNorm,
// [channels, 1] for batchNorm).
template <bool Cuda>
void normForward(std::uint32_t rows, std::uint32_t cols, float eps, bool centerTwice,
                 const float* x, const at::Tensor& gamma, const at::Tensor& beta, float* y,
                 float* xhat, float* invStd) {
  const std::int64_t sizes[] = {i64(rows), i64(cols)};
  const std::int64_t perRow[] = {i64(rows), 1};
  const Standardized s = specStandardize(in<Cuda>(x, sizes), eps, centerTwice);
  out<Cuda>(y, sizes).copy_(s.xhat * gamma + beta);
  out<Cuda>(xhat, sizes).copy_(s.xhat);
  out<Cuda>(invStd, perRow).copy_(s.invStd);
}

// g = dy * gamma; dx = invStd * (g - mean(g) - xhat * mean(g * xhat)) along dim 1;
// dgamma = sum of dy * xhat and dbeta = sum of dy along `paramDim` (0 for layerNorm's columns,
// 1 for batchNorm's channels).
template <bool Cuda>
void normBackward(std::uint32_t rows, std::uint32_t cols, const float* dy, const float* xhat,
                  const float* invStd, const at::Tensor& gamma, std::int64_t paramDim, float* dx,
                  float* dgamma, float* dbeta) {
  const std::int64_t sizes[] = {i64(rows), i64(cols)};
  const std::int64_t perRow[] = {i64(rows), 1};
  const std::int64_t rowDim[] = {1};
  const std::int64_t params[] = {paramDim == 0 ? i64(cols) : i64(rows)};
  const std::int64_t sumDim[] = {paramDim};
  const at::Tensor dys = in<Cuda>(dy, sizes);
  const at::Tensor xh = in<Cuda>(xhat, sizes);
  const at::Tensor g = dys * gamma;
  const at::Tensor meanG = g.mean(at::IntArrayRef(rowDim), /*keepdim=*/true);
  const at::Tensor meanGX = (g * xh).mean(at::IntArrayRef(rowDim), /*keepdim=*/true);
  out<Cuda>(dx, sizes).copy_(in<Cuda>(invStd, perRow) * ((g - meanG) - xh * meanGX));
  out<Cuda>(dgamma, params).copy_((dys * xh).sum(at::IntArrayRef(sumDim)));
  out<Cuda>(dbeta, params).copy_(dys.sum(at::IntArrayRef(sumDim)));
}

template <bool Cuda>
int layerNormFwd(void*, std::uint32_t rows, std::uint32_t cols, float eps, const float* x,
                 const float* gamma, const float* beta, float* y, float* xhat, float* invStd) {
  return guarded([&] {
    const std::int64_t row[] = {1, i64(cols)};
    normForward<Cuda>(rows, cols, eps, /*centerTwice=*/true, x, in<Cuda>(gamma, row),
                      in<Cuda>(beta, row), y, xhat, invStd);
  });
}

template <bool Cuda>
int layerNormBwd(void*, std::uint32_t rows, std::uint32_t cols, const float* dy,
                 const float* xhat, const float* invStd, const float* gamma, float* dx,
                 float* dgamma, float* dbeta) {
  return guarded([&] {
    const std::int64_t row[] = {1, i64(cols)};
    normBackward<Cuda>(rows, cols, dy, xhat, invStd, in<Cuda>(gamma, row), 0, dx, dgamma,
                       dbeta);
  });
}

template <bool Cuda>
int batchNormFwd(void*, std::uint32_t channels, std::uint32_t spatial, float eps, const float* x,
                 const float* gamma, const float* beta, float* y, float* xhat, float* invStd) {
  return guarded([&] {
    const std::int64_t column[] = {i64(channels), 1};
    normForward<Cuda>(channels, spatial, eps, /*centerTwice=*/false, x, in<Cuda>(gamma, column),
                      in<Cuda>(beta, column), y, xhat, invStd);
  });
}

template <bool Cuda>
int batchNormBwd(void*, std::uint32_t channels, std::uint32_t spatial, const float* dy,
                 const float* xhat, const float* invStd, const float* gamma, float* dx,
                 float* dgamma, float* dbeta) {
  return guarded([&] {
    const std::int64_t column[] = {i64(channels), 1};
    normBackward<Cuda>(channels, spatial, dy, xhat, invStd, in<Cuda>(gamma, column), 1, dx,
                       dgamma, dbeta);
  });
}

// ---- crossEntropy: along dim 1 of [outer, n, inner] ---------------------------------------------

double denominator(std::uint32_t outer, std::uint32_t inner, std::uint32_t mean) {
  const double slices = static_cast<double>(outer) * static_cast<double>(inner);
  return mean ? std::max(slices, 1.0) : 1.0;
}

// logp = logSoftmax along n; loss = -(sum of target * logp) / denom. Plain IEEE products, so a
// zero weight on a -inf log-probability gives NaN, as the formula does. The Spec's sum is a fold
// from +0, so a zero total is +0 (docs/spec.md#zero-seeded-sum); adding +0 to ATen's sum gives
// that sign whatever order ATen adds in, and the loss of a zero total is -0.0.
template <bool Cuda>
int crossEntropyFwd(void*, std::uint32_t outer, std::uint32_t n, std::uint32_t inner,
                    std::uint32_t mean, const float* logits, const float* target, float* loss,
                    float* logp) {
  return guarded([&] {
    const std::int64_t sizes[] = {i64(outer), i64(n), i64(inner)};
    const std::int64_t one[] = {1};
    const at::Tensor lp = specLogSoftmax(in<Cuda>(logits, sizes), 1);
    const at::Tensor total = (in<Cuda>(target, sizes) * lp).sum() + 0.0;
    out<Cuda>(loss, one).copy_((total.neg() / denominator(outer, inner, mean)).reshape(one));
    out<Cuda>(logp, sizes).copy_(lp);
  });
}

// dlogits = dy * (exp(logp) * T - target) / denom, T the slice's total weight;
// dtarget = -dy * logp / denom. Either output may be NULL (not wanted).
template <bool Cuda>
int crossEntropyBwd(void*, std::uint32_t outer, std::uint32_t n, std::uint32_t inner,
                    std::uint32_t mean, const float* dloss, const float* logp,
                    const float* target, float* dlogits, float* dtarget) {
  return guarded([&] {
    const std::int64_t sizes[] = {i64(outer), i64(n), i64(inner)};
    const std::int64_t one[] = {1};
    const std::int64_t sliceDim[] = {1};
    const double denom = denominator(outer, inner, mean);
    const at::Tensor dy = in<Cuda>(dloss, one);  // broadcasts; stays on the device
    const at::Tensor lp = in<Cuda>(logp, sizes);
    const at::Tensor t = in<Cuda>(target, sizes);
    if (dlogits) {
      const at::Tensor total = t.sum(at::IntArrayRef(sliceDim), /*keepdim=*/true);
      out<Cuda>(dlogits, sizes).copy_(dy * (lp.exp() * total - t) / denom);
    }
    if (dtarget) out<Cuda>(dtarget, sizes).copy_(dy.neg() * lp / denom);
  });
}

template <bool Cuda>
tapecheck_kernels_v1 makeTable() {
  return tapecheck_kernels_v1{
      1u,
      "tapecheck-aten",
      TORCH_VERSION,
      Cuda ? 1u : 0u,
      &softmaxFwd<Cuda>,
      &softmaxBwd<Cuda>,
      &logSoftmaxFwd<Cuda>,
      &logSoftmaxBwd<Cuda>,
      &topkMask<Cuda>,
      &layerNormFwd<Cuda>,
      &layerNormBwd<Cuda>,
      &batchNormFwd<Cuda>,
      &batchNormBwd<Cuda>,
      &crossEntropyFwd<Cuda>,
      &crossEntropyBwd<Cuda>,
  };
}

const tapecheck_kernels_v1 kCpuTable = makeTable<false>();
const tapecheck_kernels_v1 kCudaTable = makeTable<true>();

}  // namespace

const tapecheck_kernels_v1* atenKernels(DeviceKind device) {
  return device == DeviceKind::Cuda ? &kCudaTable : &kCpuTable;
}

const std::string& atenLastError() { return lastError; }

}  // namespace tapecheck::device::detail
