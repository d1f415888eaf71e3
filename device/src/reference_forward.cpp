// The reference forward entries of withReferenceForward (reference_forward.h): docs/spec.md's
// formulas in binary64 through ATen on the pointers' own device, each output rounded once to
// binary32 when it is copied into the kernel's output buffer.
#include "tapecheck/device/reference_forward.h"

#include <algorithm>
#include <cstdint>
#include <memory>

#include <ATen/ATen.h>

#include "aten_softmax.h"
#include "aten_standardize.h"

namespace tapecheck::device {
namespace {

std::int64_t i64(std::uint32_t v) { return static_cast<std::int64_t>(v); }

// Every exception becomes a nonzero return, as the ABI asks of a kernel.
template <class Body>
int guarded(Body&& body) noexcept {
  try {
    body();
    return 0;
  } catch (...) {
    return 1;
  }
}

template <bool Cuda>
at::TensorOptions floatOptions() {
  return at::TensorOptions().dtype(at::kFloat).device(Cuda ? at::kCUDA : at::kCPU);
}

// An input, widened to binary64 (exact).
template <bool Cuda>
at::Tensor in64(const float* p, at::IntArrayRef sizes) {
  return at::from_blob(const_cast<float*>(p), sizes, floatOptions<Cuda>()).to(at::kDouble);
}

// An output buffer; copy_ from a binary64 tensor rounds each element to nearest.
template <bool Cuda>
at::Tensor out(float* p, at::IntArrayRef sizes) {
  return at::from_blob(p, sizes, floatOptions<Cuda>());
}

template <bool Cuda>
int softmaxFwd(void*, std::uint32_t rows, std::uint32_t cols, const float* x, float* y) {
  return guarded([&] {
    const std::int64_t sizes[] = {i64(rows), i64(cols)};
    out<Cuda>(y, sizes).copy_(detail::specSoftmax(in64<Cuda>(x, sizes), 1));
  });
}

template <bool Cuda>
int logSoftmaxFwd(void*, std::uint32_t rows, std::uint32_t cols, const float* x, float* y) {
  return guarded([&] {
    const std::int64_t sizes[] = {i64(rows), i64(cols)};
    out<Cuda>(y, sizes).copy_(detail::specLogSoftmax(in64<Cuda>(x, sizes), 1));
  });
}

// The spec's standardization (aten_standardize.h) in binary64; y = xhat * gamma + beta, with
// gamma and beta shaped to broadcast ([1, cols] for layerNorm, [channels, 1] for batchNorm).
template <bool Cuda>
void normForward(std::uint32_t rows, std::uint32_t cols, float eps, bool centerTwice,
                 const float* x, const at::Tensor& gamma, const at::Tensor& beta, float* y,
                 float* xhat, float* invStd) {
  const std::int64_t sizes[] = {i64(rows), i64(cols)};
  const std::int64_t perRow[] = {i64(rows), 1};
  const detail::Standardized s = detail::specStandardize(in64<Cuda>(x, sizes), eps, centerTwice);
  out<Cuda>(y, sizes).copy_(s.xhat * gamma + beta);
  out<Cuda>(xhat, sizes).copy_(s.xhat);
  out<Cuda>(invStd, perRow).copy_(s.invStd);
}

template <bool Cuda>
int layerNormFwd(void*, std::uint32_t rows, std::uint32_t cols, float eps, const float* x,
                 const float* gamma, const float* beta, float* y, float* xhat, float* invStd) {
  return guarded([&] {
    const std::int64_t row[] = {1, i64(cols)};
    normForward<Cuda>(rows, cols, eps, /*centerTwice=*/true, x, in64<Cuda>(gamma, row),
                      in64<Cuda>(beta, row), y, xhat, invStd);
  });
}

template <bool Cuda>
int batchNormFwd(void*, std::uint32_t channels, std::uint32_t spatial, float eps, const float* x,
                 const float* gamma, const float* beta, float* y, float* xhat, float* invStd) {
  return guarded([&] {
    const std::int64_t column[] = {i64(channels), 1};
    normForward<Cuda>(channels, spatial, eps, /*centerTwice=*/false, x, in64<Cuda>(gamma, column),
                      in64<Cuda>(beta, column), y, xhat, invStd);
  });
}

// logp = logSoftmax along n; loss = -(sum of target * logp) / denom (denom: the slice count for
// a mean, else 1). The spec's sum is a fold from +0 (docs/spec.md#zero-seeded-sum): adding +0
// gives a zero total that sign whatever order ATen adds in.
template <bool Cuda>
int crossEntropyFwd(void*, std::uint32_t outer, std::uint32_t n, std::uint32_t inner,
                    std::uint32_t mean, const float* logits, const float* target, float* loss,
                    float* logp) {
  return guarded([&] {
    const std::int64_t sizes[] = {i64(outer), i64(n), i64(inner)};
    const std::int64_t one[] = {1};
    const double slices = static_cast<double>(outer) * static_cast<double>(inner);
    const double denom = mean ? std::max(slices, 1.0) : 1.0;
    const at::Tensor lp = detail::specLogSoftmax(in64<Cuda>(logits, sizes), 1);
    const at::Tensor total = (in64<Cuda>(target, sizes) * lp).sum() + 0.0;
    out<Cuda>(loss, one).copy_((total.neg() / denom).reshape(one));
    out<Cuda>(logp, sizes).copy_(lp);
  });
}

// The table with its forward entries replaced, owned together with the library it came from.
struct IsolatedTable {
  tapecheck_kernels_v1 table{};
  std::shared_ptr<void> library;
};

template <bool Cuda>
void replaceForward(tapecheck_kernels_v1& t) {
  if (t.softmax_fwd) t.softmax_fwd = &softmaxFwd<Cuda>;
  if (t.log_softmax_fwd) t.log_softmax_fwd = &logSoftmaxFwd<Cuda>;
  if (t.layer_norm_fwd) t.layer_norm_fwd = &layerNormFwd<Cuda>;
  if (t.batch_norm_fwd) t.batch_norm_fwd = &batchNormFwd<Cuda>;
  if (t.cross_entropy_fwd) t.cross_entropy_fwd = &crossEntropyFwd<Cuda>;
}

}  // namespace

KernelTable withReferenceForward(const KernelTable& underTest) {
  auto owned = std::make_shared<IsolatedTable>();
  owned->table = *underTest.table;
  owned->library = underTest.library;
  if (underTest.table->memory == 1)
    replaceForward<true>(owned->table);
  else
    replaceForward<false>(owned->table);
  KernelTable isolated = underTest;
  isolated.table = &owned->table;
  isolated.library = owned;
  return isolated;
}

}  // namespace tapecheck::device
