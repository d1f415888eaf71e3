// device::KernelBackend: the device tape's arithmetic, one kernel table call per primitive.
#include "tapecheck/device/kernel_backend.h"

#include <exception>
#include <functional>
#include <initializer_list>
#include <limits>
#include <new>
#include <string>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/detail/CUDAHooksInterface.h>

#include "aten_kernels.h"
#include "aten_softmax.h"

namespace tapecheck::device {
namespace {

// The stream passed to memory == 1 kernels: the legacy default stream, which is LibTorch's
// current stream unless a caller installs another one (tapecheck never does).
void* const kDefaultStream = nullptr;

std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

// Every exception at the boundary becomes an error naming the kernel entry; nothing escapes.
template <class T, class Body>
Result<T> guarded(const char* entry, Body&& body) {
  const std::string where = std::string("tapecheck: ") + entry + ": ";
  try {
    return body();
  } catch (const c10::OutOfMemoryError& e) {
    return Error{where + "out of memory: " + firstLine(e.what_without_backtrace())};
  } catch (const c10::Error& e) {
    return Error{where + firstLine(e.what_without_backtrace())};
  } catch (const std::bad_alloc&) {
    return Error{where + "out of memory"};
  } catch (const std::exception& e) {
    return Error{where + e.what()};
  } catch (...) {
    return Error{where + "unknown exception"};
  }
}

at::Device deviceOf(const KernelTable& k) {
  return k.device == DeviceKind::Cuda ? at::Device(at::kCUDA) : at::Device(at::kCPU);
}

at::TensorOptions optionsOf(const KernelTable& k) {
  return at::TensorOptions().dtype(at::kFloat).device(deviceOf(k));
}

// A kernel output, pre-filled with NaN: an element the kernel does not write stays NaN.
at::Tensor allocate(std::int64_t n, const at::Tensor& like) {
  return at::full({n}, std::numeric_limits<float>::quiet_NaN(), like.options());
}

const float* in(const at::Tensor& t) { return t.data_ptr<float>(); }
float* out(at::Tensor& t) { return t.data_ptr<float>(); }

using Inputs = std::initializer_list<std::reference_wrapper<const at::Tensor>>;

// Checks the inputs, lets `call` allocate the outputs into `result` and call the kernel,
// synchronizes a CUDA device (so an asynchronous CUDA error is reported here, by the entry
// that caused it) and maps a nonzero return to an error.
template <class T, class Call>
Result<T> launch(const KernelTable& k, const char* entry, Inputs inputs, Call&& call) {
  return guarded<T>(entry, [&]() -> Result<T> {
    const at::DeviceType type = deviceOf(k).type();
    for (const at::Tensor& t : inputs)
      if (!t.defined() || t.scalar_type() != at::kFloat || !t.is_contiguous() ||
          t.device().type() != type)
        return Error{std::string("tapecheck: ") + entry +
                     ": internal error: an input is not a contiguous float32 tensor on " +
                     deviceName(k.device)};
    T result{};
    const int rc = call(result);
    if (k.table->memory == 1)
      at::detail::getCUDAHooks().deviceSynchronize(inputs.begin()->get().device().index());
    if (rc != 0) {
      std::string message = std::string("tapecheck: ") + entry + ": kernel " + k.table->name +
                            " returned " + std::to_string(rc);
      if (k.table == detail::atenKernels(k.device) && !detail::atenLastError().empty())
        message += " (" + firstLine(detail::atenLastError()) + ")";
      return Error{message};
    }
    return result;
  });
}

}  // namespace

KernelBackend::KernelBackend(KernelTable kernels) : kernels_(std::move(kernels)) {}

Dim KernelBackend::count(const Buffer& b) const {
  return b.defined() ? static_cast<Dim>(b.numel()) : 0;
}

Result<at::Tensor> KernelBackend::copy(const Buffer& b) const {
  return guarded<Buffer>("copy", [&]() -> Result<Buffer> {
    return b.clone(at::MemoryFormat::Contiguous);
  });
}

Result<at::Tensor> KernelBackend::filled(Dim n, double value) const {
  return guarded<Buffer>("fill", [&]() -> Result<Buffer> {
    const double rounded = static_cast<float>(value);
    return at::full({static_cast<std::int64_t>(n)}, rounded, optionsOf(kernels_));
  });
}

Result<at::Tensor> KernelBackend::add(const Buffer& a, const Buffer& b) const {
  return guarded<Buffer>("add", [&]() -> Result<Buffer> { return a + b; });
}

Result<at::Tensor> KernelBackend::fromHost(const std::vector<double>& values) const {
  return guarded<Buffer>("upload", [&]() -> Result<Buffer> {
    at::Tensor host = at::empty({static_cast<std::int64_t>(values.size())},
                                at::TensorOptions().dtype(at::kFloat));
    float* p = host.data_ptr<float>();
    for (std::size_t i = 0; i < values.size(); ++i) p[i] = static_cast<float>(values[i]);
    if (kernels_.device == DeviceKind::Cpu) return host;
    return host.to(deviceOf(kernels_));
  });
}

std::vector<double> KernelBackend::toHost(const Buffer& b) const {
  const std::size_t n = static_cast<std::size_t>(count(b));
  try {
    const at::Tensor host = b.to(at::kCPU).contiguous();
    const float* p = host.data_ptr<float>();
    std::vector<double> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = p[i];
    return values;
  } catch (...) {
    return std::vector<double>(n, std::numeric_limits<double>::quiet_NaN());
  }
}

std::string KernelBackend::description() const {
  return std::string("device-") + kernels_.table->name + "-" + kernels_.table->version + "@" +
         deviceName(kernels_.device);
}

Result<at::Tensor> KernelBackend::softmaxFwd(RowFold f, const Buffer& x) const {
  return launch<Buffer>(kernels_, "softmax_fwd", {x}, [&](Buffer& y) {
    y = allocate(x.numel(), x);
    return kernels_.table->softmax_fwd(kDefaultStream, f.rows, f.cols, in(x), out(y));
  });
}

Result<at::Tensor> KernelBackend::softmaxBwd(RowFold f, const Buffer& y, const Buffer& dy) const {
  return launch<Buffer>(kernels_, "softmax_bwd", {y, dy}, [&](Buffer& dx) {
    dx = allocate(y.numel(), y);
    return kernels_.table->softmax_bwd(kDefaultStream, f.rows, f.cols, in(y), in(dy), out(dx));
  });
}

Result<at::Tensor> KernelBackend::logSoftmaxFwd(RowFold f, const Buffer& x) const {
  return launch<Buffer>(kernels_, "log_softmax_fwd", {x}, [&](Buffer& y) {
    y = allocate(x.numel(), x);
    return kernels_.table->log_softmax_fwd(kDefaultStream, f.rows, f.cols, in(x), out(y));
  });
}

Result<at::Tensor> KernelBackend::logSoftmaxBwd(RowFold f, const Buffer& y,
                                                const Buffer& dy) const {
  return launch<Buffer>(kernels_, "log_softmax_bwd", {y, dy}, [&](Buffer& dx) {
    dx = allocate(y.numel(), y);
    return kernels_.table->log_softmax_bwd(kDefaultStream, f.rows, f.cols, in(y), in(dy),
                                           out(dx));
  });
}

Result<at::Tensor> KernelBackend::topkMask(RowFold f, std::uint32_t k, const Buffer& x) const {
  return launch<Buffer>(kernels_, "topk_mask", {x}, [&](Buffer& mask) {
    mask = allocate(x.numel(), x);
    return kernels_.table->topk_mask(kDefaultStream, f.rows, f.cols, k, in(x), out(mask));
  });
}

Result<NormForward<at::Tensor>> KernelBackend::layerNormFwd(RowFold f, double eps,
                                                            const Buffer& x, const Buffer& gamma,
                                                            const Buffer& beta) const {
  // SPEC.md section 1: epsilon arrives as binary64 and the device rounds it to binary32.
  const float eps32 = static_cast<float>(eps);
  return launch<NormForward<Buffer>>(kernels_, "layer_norm_fwd", {x, gamma, beta},
                                     [&](NormForward<Buffer>& r) {
    r.y = allocate(x.numel(), x);
    r.xhat = allocate(x.numel(), x);
    r.invStd = allocate(f.rows, x);
    return kernels_.table->layer_norm_fwd(kDefaultStream, f.rows, f.cols, eps32, in(x),
                                          in(gamma), in(beta), out(r.y), out(r.xhat),
                                          out(r.invStd));
  });
}

Result<NormBackward<at::Tensor>> KernelBackend::layerNormBwd(RowFold f, const Buffer& dy,
                                                             const Buffer& xhat,
                                                             const Buffer& invStd,
                                                             const Buffer& gamma) const {
  return launch<NormBackward<Buffer>>(kernels_, "layer_norm_bwd", {dy, xhat, invStd, gamma},
                                      [&](NormBackward<Buffer>& r) {
    r.dx = allocate(dy.numel(), dy);
    r.dgamma = allocate(f.cols, dy);
    r.dbeta = allocate(f.cols, dy);
    return kernels_.table->layer_norm_bwd(kDefaultStream, f.rows, f.cols, in(dy), in(xhat),
                                          in(invStd), in(gamma), out(r.dx), out(r.dgamma),
                                          out(r.dbeta));
  });
}

Result<NormForward<at::Tensor>> KernelBackend::batchNormFwd(RowFold f, double eps,
                                                            const Buffer& x, const Buffer& gamma,
                                                            const Buffer& beta) const {
  const float eps32 = static_cast<float>(eps);
  return launch<NormForward<Buffer>>(kernels_, "batch_norm_fwd", {x, gamma, beta},
                                     [&](NormForward<Buffer>& r) {
    r.y = allocate(x.numel(), x);
    r.xhat = allocate(x.numel(), x);
    r.invStd = allocate(f.rows, x);
    return kernels_.table->batch_norm_fwd(kDefaultStream, f.rows, f.cols, eps32, in(x),
                                          in(gamma), in(beta), out(r.y), out(r.xhat),
                                          out(r.invStd));
  });
}

Result<NormBackward<at::Tensor>> KernelBackend::batchNormBwd(RowFold f, const Buffer& dy,
                                                             const Buffer& xhat,
                                                             const Buffer& invStd,
                                                             const Buffer& gamma) const {
  return launch<NormBackward<Buffer>>(kernels_, "batch_norm_bwd", {dy, xhat, invStd, gamma},
                                      [&](NormBackward<Buffer>& r) {
    r.dx = allocate(dy.numel(), dy);
    r.dgamma = allocate(f.rows, dy);
    r.dbeta = allocate(f.rows, dy);
    return kernels_.table->batch_norm_bwd(kDefaultStream, f.rows, f.cols, in(dy), in(xhat),
                                          in(invStd), in(gamma), out(r.dx), out(r.dgamma),
                                          out(r.dbeta));
  });
}

Result<CrossEntropyForward<at::Tensor>> KernelBackend::crossEntropyFwd(
    AxisFold f, bool mean, const Buffer& logits, const Buffer& target) const {
  return launch<CrossEntropyForward<Buffer>>(kernels_, "cross_entropy_fwd", {logits, target},
                                             [&](CrossEntropyForward<Buffer>& r) {
    r.loss = allocate(1, logits);
    r.logp = allocate(logits.numel(), logits);
    return kernels_.table->cross_entropy_fwd(kDefaultStream, f.outer, f.n, f.inner,
                                             mean ? 1u : 0u, in(logits), in(target),
                                             out(r.loss), out(r.logp));
  });
}

Result<CrossEntropyBackward<at::Tensor>> KernelBackend::crossEntropyBwd(
    AxisFold f, bool mean, const Buffer& dloss, const Buffer& logp, const Buffer& target) const {
  return launch<CrossEntropyBackward<Buffer>>(kernels_, "cross_entropy_bwd",
                                              {dloss, logp, target},
                                              [&](CrossEntropyBackward<Buffer>& r) {
    r.dlogits = allocate(logp.numel(), logp);
    r.dtarget = allocate(logp.numel(), logp);
    return kernels_.table->cross_entropy_bwd(kDefaultStream, f.outer, f.n, f.inner,
                                             mean ? 1u : 0u, in(dloss), in(logp), in(target),
                                             out(r.dlogits), out(r.dtarget));
  });
}

Result<at::Tensor> KernelBackend::softmaxAxis(AxisFold f, const Buffer& x) const {
  return guarded<Buffer>("distill teacher softmax", [&]() -> Result<Buffer> {
    const at::Tensor p = detail::specSoftmax(
        x.view({static_cast<std::int64_t>(f.outer), static_cast<std::int64_t>(f.n),
                static_cast<std::int64_t>(f.inner)}),
        1);
    return p.reshape({-1}).contiguous();
  });
}

}  // namespace tapecheck::device

namespace tapecheck {
template class Tape<device::KernelBackend>;
}  // namespace tapecheck
