// ATen operators on the benchmark's device buffers (native_aten.h). Inputs are wrapped with
// from_blob (no copy); outputs are allocated by ATen's caching allocator, which after the
// warm-up calls reuses its blocks, as in a training loop. Batch norm runs in training mode on
// [1, channels, spatial], the layout the `aten` table and our kernels use.
#include "native_aten.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <tuple>
#include <vector>

namespace tapecheck::bench {
namespace {

constexpr double kEpsilon = 1e-5;

at::Tensor onDevice(float* p, std::vector<std::int64_t> sizes) {
  return at::from_blob(p, sizes, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA));
}

}  // namespace

std::optional<NativeCall> prepareNativeAten(Op op, const Shape& shape,
                                            const DeviceBuffers& b) {
  const std::int64_t rows = shape.rows, cols = shape.cols;
  const std::vector<std::int64_t> matrix = {rows, cols};
  auto big = [&](int i) { return onDevice(b.big[i], matrix); };
  switch (op) {
    case Op::SoftmaxFwd: {
      at::Tensor x = big(0);
      return NativeCall{"at::_softmax", [x] { (void)at::_softmax(x, 1, false); }};
    }
    case Op::LogSoftmaxFwd: {
      at::Tensor x = big(0);
      return NativeCall{"at::_log_softmax", [x] { (void)at::_log_softmax(x, 1, false); }};
    }
    case Op::SoftmaxBwd: {
      at::Tensor y = big(0), dy = big(1);
      return NativeCall{"at::_softmax_backward_data", [y, dy] {
                          (void)at::_softmax_backward_data(dy, y, 1, at::kFloat);
                        }};
    }
    case Op::LogSoftmaxBwd: {
      at::Tensor y = big(0), dy = big(1);
      return NativeCall{"at::_log_softmax_backward_data", [y, dy] {
                          (void)at::_log_softmax_backward_data(dy, y, 1, at::kFloat);
                        }};
    }
    case Op::TopkMask: {
      at::Tensor x = big(0);
      const std::int64_t k = shape.k;
      return NativeCall{"at::topk + zeros + scatter_", [x, k] {
                          const at::Tensor index = std::get<1>(at::topk(x, k, 1));
                          (void)at::zeros_like(x).scatter_(1, index, 1.0);
                        }};
    }
    case Op::LayerNormFwd: {
      at::Tensor x = big(0), gamma = onDevice(b.gamma, {cols}), beta = onDevice(b.beta, {cols});
      return NativeCall{"at::native_layer_norm", [x, gamma, beta, cols] {
                          (void)at::native_layer_norm(x, {cols}, gamma, beta, kEpsilon);
                        }};
    }
    case Op::LayerNormBwd: {
      at::Tensor dy = big(0), x = big(1), gamma = onDevice(b.gamma, {cols}),
                 beta = onDevice(b.beta, {cols});
      const auto saved = at::native_layer_norm(x, {cols}, gamma, beta, kEpsilon);
      const at::Tensor mean = std::get<1>(saved), rstd = std::get<2>(saved);
      return NativeCall{"at::native_layer_norm_backward", [=] {
                          (void)at::native_layer_norm_backward(dy, x, {cols}, mean, rstd, gamma,
                                                               beta, {true, true, true});
                        }};
    }
    case Op::BatchNormFwd: {
      at::Tensor x = onDevice(b.big[0], {1, rows, cols}), gamma = onDevice(b.gamma, {rows}),
                 beta = onDevice(b.beta, {rows});
      return NativeCall{"at::native_batch_norm (training)", [x, gamma, beta] {
                          (void)at::native_batch_norm(x, gamma, beta, {}, {}, true, 0.1, kEpsilon);
                        }};
    }
    case Op::BatchNormBwd: {
      at::Tensor dy = onDevice(b.big[0], {1, rows, cols}), x = onDevice(b.big[1], {1, rows, cols}),
                 gamma = onDevice(b.gamma, {rows}), beta = onDevice(b.beta, {rows});
      const auto saved = at::native_batch_norm(x, gamma, beta, {}, {}, true, 0.1, kEpsilon);
      const at::Tensor mean = std::get<1>(saved), invstd = std::get<2>(saved);
      return NativeCall{"at::native_batch_norm_backward", [=] {
                          (void)at::native_batch_norm_backward(dy, x, gamma, {}, {}, mean, invstd,
                                                               true, kEpsilon, {true, true, true});
                        }};
    }
    case Op::CrossEntropyFwd: {
      at::Tensor logits = big(0), target = big(1);
      return NativeCall{"at::cross_entropy_loss (probability targets)", [logits, target] {
                          (void)at::cross_entropy_loss(logits, target, {}, at::Reduction::Mean,
                                                       -100, 0.0);
                        }};
    }
    case Op::CrossEntropyBwd:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace tapecheck::bench
