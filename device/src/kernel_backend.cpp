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
#include "output_guards.h"
#include "tapecheck/device/kernel_entries.h"

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

const float* in(const at::Tensor& t) { return t.data_ptr<float>(); }
float* out(at::Tensor& t) { return t.data_ptr<float>(); }

using Inputs = std::initializer_list<std::reference_wrapper<const at::Tensor>>;

std::string dims(std::initializer_list<std::uint32_t> sizes) {
  std::string text = "[";
  for (std::uint32_t s : sizes) text += (text.size() > 1 ? ", " : "") + std::to_string(s);
  return text + "]";
}
std::string dimsOf(RowFold f) { return dims({f.rows, f.cols}); }
std::string dimsOf(AxisFold f) { return dims({f.outer, f.n, f.inner}); }

using FaultSlot = std::optional<KernelFault>;
using Guards = detail::GuardedOutputs;

void recordFault(FaultSlot& slot, FaultKind kind, const char* entry, std::string message) {
  if (slot) return;  // the first fault ends an evaluation; later ones follow from it
  slot = KernelFault{entry, std::move(message), isBackwardEntry(entry), kind};
}

// One kernel call: refuses an entry point the table does not provide, checks the inputs, lets
// `allocate` create the (guarded) outputs into the result, tells the observer, calls the kernel,
// synchronizes a CUDA device (so an asynchronous CUDA error is reported here, by the entry that
// caused it), then checks the return status and the guards. What the kernel did wrong is
// recorded as the tape's fault as well as returned as an error.
template <class T, class Entry, class Allocate, class Invoke>
Result<T> launch(const KernelTable& kernels, FaultSlot& fault, const char* entry, Entry fn,
                 const std::string& callDims, Inputs inputs, Allocate&& allocate,
                 Invoke&& invoke) {
  return guarded<T>(entry, [&]() -> Result<T> {
    const std::string named = std::string("tapecheck: ") + entry + ": ";
    if (fn == nullptr)
      return Error{named + "not provided by the kernel table " + kernels.table->name + " " +
                   kernels.table->version};
    const at::DeviceType type = deviceOf(kernels).type();
    for (const at::Tensor& t : inputs)
      if (!t.defined() || t.scalar_type() != at::kFloat || !t.is_contiguous() ||
          t.device().type() != type)
        return Error{named + "internal error: an input is not a contiguous float32 tensor on " +
                     deviceName(kernels.device)};
    T result{};
    Guards outputs;
    allocate(result, outputs);
    if (kernels.observer) kernels.observer(entry, callDims, false);
    int rc = 0;
    std::string thrown;
    try {
      rc = invoke(result);
      if (kernels.table->memory == 1)
        at::detail::getCUDAHooks().deviceSynchronize(inputs.begin()->get().device().index());
    } catch (const c10::Error& e) {
      thrown = firstLine(e.what_without_backtrace());
    } catch (const std::exception& e) {
      thrown = e.what();
    } catch (...) {
      thrown = "unknown exception";
    }
    if (kernels.observer) kernels.observer(entry, callDims, true);
    if (!thrown.empty()) {
      const FaultKind kind = kernels.table->memory == 1 ? FaultKind::DeviceError : FaultKind::Threw;
      recordFault(fault, kind, entry, std::string(entry) + " threw on " + callDims + ": " + thrown);
      return Error{named + thrown};
    }
    if (rc != 0) {
      recordFault(fault, FaultKind::Returned, entry,
                  std::string(entry) + " returned " + std::to_string(rc) + " on " + callDims);
      std::string message =
          named + "kernel " + kernels.table->name + " returned " + std::to_string(rc);
      if (kernels.table == detail::atenKernels(kernels.device) &&
          !detail::atenLastError().empty())
        message += " (" + firstLine(detail::atenLastError()) + ")";
      return Error{message};
    }
    if (const std::optional<std::string> outside = outputs.violation()) {
      recordFault(fault, FaultKind::WroteOutside, entry,
                  std::string(entry) + " " + *outside + " on " + callDims);
      return Error{named + *outside + " on " + callDims};
    }
    return result;
  });
}

}  // namespace

std::optional<KernelFault> KernelBackend::fault() const { return *fault_; }

KernelBackend::KernelBackend(KernelTable kernels)
    : kernels_(std::move(kernels)), fault_(std::make_shared<std::optional<KernelFault>>()) {}

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
  const auto fn = kernels_.table->softmax_fwd;
  return launch<Buffer>(
      kernels_, *fault_, "softmax_fwd", fn, dimsOf(f), {x},
      [&](Buffer& y, Guards& g) { y = g.add("y", x.numel(), x); },
      [&](Buffer& y) { return fn(kDefaultStream, f.rows, f.cols, in(x), out(y)); });
}

Result<at::Tensor> KernelBackend::softmaxBwd(RowFold f, const Buffer& y, const Buffer& dy) const {
  const auto fn = kernels_.table->softmax_bwd;
  return launch<Buffer>(
      kernels_, *fault_, "softmax_bwd", fn, dimsOf(f), {y, dy},
      [&](Buffer& dx, Guards& g) { dx = g.add("dx", y.numel(), y); },
      [&](Buffer& dx) { return fn(kDefaultStream, f.rows, f.cols, in(y), in(dy), out(dx)); });
}

Result<at::Tensor> KernelBackend::logSoftmaxFwd(RowFold f, const Buffer& x) const {
  const auto fn = kernels_.table->log_softmax_fwd;
  return launch<Buffer>(
      kernels_, *fault_, "log_softmax_fwd", fn, dimsOf(f), {x},
      [&](Buffer& y, Guards& g) { y = g.add("y", x.numel(), x); },
      [&](Buffer& y) { return fn(kDefaultStream, f.rows, f.cols, in(x), out(y)); });
}

Result<at::Tensor> KernelBackend::logSoftmaxBwd(RowFold f, const Buffer& y,
                                                const Buffer& dy) const {
  const auto fn = kernels_.table->log_softmax_bwd;
  return launch<Buffer>(
      kernels_, *fault_, "log_softmax_bwd", fn, dimsOf(f), {y, dy},
      [&](Buffer& dx, Guards& g) { dx = g.add("dx", y.numel(), y); },
      [&](Buffer& dx) { return fn(kDefaultStream, f.rows, f.cols, in(y), in(dy), out(dx)); });
}

Result<at::Tensor> KernelBackend::topkMask(RowFold f, std::uint32_t k, const Buffer& x) const {
  const auto fn = kernels_.table->topk_mask;
  return launch<Buffer>(
      kernels_, *fault_, "topk_mask", fn, dimsOf(f), {x},
      [&](Buffer& mask, Guards& g) { mask = g.add("mask", x.numel(), x); },
      [&](Buffer& mask) { return fn(kDefaultStream, f.rows, f.cols, k, in(x), out(mask)); });
}

Result<NormForward<at::Tensor>> KernelBackend::layerNormFwd(RowFold f, double eps,
                                                            const Buffer& x, const Buffer& gamma,
                                                            const Buffer& beta) const {
  // docs/spec.md#shapes: epsilon arrives as binary64 and the device rounds it to binary32.
  const float eps32 = static_cast<float>(eps);
  const auto fn = kernels_.table->layer_norm_fwd;
  return launch<NormForward<Buffer>>(
      kernels_, *fault_, "layer_norm_fwd", fn, dimsOf(f), {x, gamma, beta},
      [&](NormForward<Buffer>& r, Guards& g) {
        r.y = g.add("y", x.numel(), x);
        r.xhat = g.add("xhat", x.numel(), x);
        r.invStd = g.add("inv_std", f.rows, x);
      },
      [&](NormForward<Buffer>& r) {
        return fn(kDefaultStream, f.rows, f.cols, eps32, in(x), in(gamma), in(beta), out(r.y),
                  out(r.xhat), out(r.invStd));
      });
}

Result<NormBackward<at::Tensor>> KernelBackend::layerNormBwd(RowFold f, const Buffer& dy,
                                                             const Buffer& xhat,
                                                             const Buffer& invStd,
                                                             const Buffer& gamma) const {
  const auto fn = kernels_.table->layer_norm_bwd;
  return launch<NormBackward<Buffer>>(
      kernels_, *fault_, "layer_norm_bwd", fn, dimsOf(f), {dy, xhat, invStd, gamma},
      [&](NormBackward<Buffer>& r, Guards& g) {
        r.dx = g.add("dx", dy.numel(), dy);
        r.dgamma = g.add("dgamma", f.cols, dy);
        r.dbeta = g.add("dbeta", f.cols, dy);
      },
      [&](NormBackward<Buffer>& r) {
        return fn(kDefaultStream, f.rows, f.cols, in(dy), in(xhat), in(invStd), in(gamma),
                  out(r.dx), out(r.dgamma), out(r.dbeta));
      });
}

Result<NormForward<at::Tensor>> KernelBackend::batchNormFwd(RowFold f, double eps,
                                                            const Buffer& x, const Buffer& gamma,
                                                            const Buffer& beta) const {
  const float eps32 = static_cast<float>(eps);
  const auto fn = kernels_.table->batch_norm_fwd;
  return launch<NormForward<Buffer>>(
      kernels_, *fault_, "batch_norm_fwd", fn, dimsOf(f), {x, gamma, beta},
      [&](NormForward<Buffer>& r, Guards& g) {
        r.y = g.add("y", x.numel(), x);
        r.xhat = g.add("xhat", x.numel(), x);
        r.invStd = g.add("inv_std", f.rows, x);
      },
      [&](NormForward<Buffer>& r) {
        return fn(kDefaultStream, f.rows, f.cols, eps32, in(x), in(gamma), in(beta), out(r.y),
                  out(r.xhat), out(r.invStd));
      });
}

Result<NormBackward<at::Tensor>> KernelBackend::batchNormBwd(RowFold f, const Buffer& dy,
                                                             const Buffer& xhat,
                                                             const Buffer& invStd,
                                                             const Buffer& gamma) const {
  const auto fn = kernels_.table->batch_norm_bwd;
  return launch<NormBackward<Buffer>>(
      kernels_, *fault_, "batch_norm_bwd", fn, dimsOf(f), {dy, xhat, invStd, gamma},
      [&](NormBackward<Buffer>& r, Guards& g) {
        r.dx = g.add("dx", dy.numel(), dy);
        r.dgamma = g.add("dgamma", f.rows, dy);
        r.dbeta = g.add("dbeta", f.rows, dy);
      },
      [&](NormBackward<Buffer>& r) {
        return fn(kDefaultStream, f.rows, f.cols, in(dy), in(xhat), in(invStd), in(gamma),
                  out(r.dx), out(r.dgamma), out(r.dbeta));
      });
}

Result<CrossEntropyForward<at::Tensor>> KernelBackend::crossEntropyFwd(
    AxisFold f, bool mean, const Buffer& logits, const Buffer& target) const {
  const auto fn = kernels_.table->cross_entropy_fwd;
  return launch<CrossEntropyForward<Buffer>>(
      kernels_, *fault_, "cross_entropy_fwd", fn, dimsOf(f), {logits, target},
      [&](CrossEntropyForward<Buffer>& r, Guards& g) {
        r.loss = g.add("loss", 1, logits);
        r.logp = g.add("logp", logits.numel(), logits);
      },
      [&](CrossEntropyForward<Buffer>& r) {
        return fn(kDefaultStream, f.outer, f.n, f.inner, mean ? 1u : 0u, in(logits), in(target),
                  out(r.loss), out(r.logp));
      });
}

Result<CrossEntropyBackward<at::Tensor>> KernelBackend::crossEntropyBwd(
    AxisFold f, bool mean, const Buffer& dloss, const Buffer& logp, const Buffer& target) const {
  const auto fn = kernels_.table->cross_entropy_bwd;
  return launch<CrossEntropyBackward<Buffer>>(
      kernels_, *fault_, "cross_entropy_bwd", fn, dimsOf(f), {dloss, logp, target},
      [&](CrossEntropyBackward<Buffer>& r, Guards& g) {
        r.dlogits = g.add("dlogits", logp.numel(), logp);
        r.dtarget = g.add("dtarget", logp.numel(), logp);
      },
      [&](CrossEntropyBackward<Buffer>& r) {
        return fn(kDefaultStream, f.outer, f.n, f.inner, mean ? 1u : 0u, in(dloss), in(logp),
                  in(target), out(r.dlogits), out(r.dtarget));
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
