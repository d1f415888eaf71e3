#include "remote_tape.h"

#include <algorithm>
#include <cstdio>

#include "tapecheck/device/kernel_entries.h"

namespace tapecheck::conformance {
namespace {

using wire::Kind;
using wire::OpCode;

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", s);
  return text;
}

wire::Writer opRequest(OpCode op) {
  wire::Writer w(Kind::Op);
  w.u8(static_cast<std::uint8_t>(op));
  return w;
}

}  // namespace

RemoteTape::RemoteTape(std::shared_ptr<WorkerPool> pool) : pool_(std::move(pool)) {
  auto worker = pool_->acquire();
  if (!worker) {
    const std::string message = "the kernel worker did not start: " + worker.message();
    fault_ = device::KernelFault{"", message, false, device::FaultKind::Crashed};
    lost_ = "tapecheck: " + message;
    return;
  }
  worker_ = std::move(worker).value();
  // The time limit counts from here: starting a worker is not the case's time.
  deadline_ = std::chrono::steady_clock::now() +
              std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(pool_->spec().caseTimeoutSeconds));
  if (!wire::sendFrame(worker_->socket(), wire::Writer(Kind::Reset).body())) lose(false, false);
}

RemoteTape::~RemoteTape() {
  // A worker whose memory a kernel wrote into where it should not have is not trusted with
  // another case: it is replaced.
  if (worker_ && !(fault_ && device::spoilsWorker(fault_->kind)))
    pool_->release(std::move(worker_));
}

Error RemoteTape::lose(bool timedOut, bool backwardRequest) const {
  const std::string how = worker_->stop(timedOut);
  worker_.reset();
  const std::string limit = seconds(pool_->spec().caseTimeoutSeconds);
  std::string message;
  if (!last_.entry.empty() && !last_.returned) {
    message = last_.entry + (timedOut ? " did not return within " + limit + " s"
                             : how.rfind("crashed", 0) == 0 ? " " + how
                                                            : " ended the process: it " + how) +
              " on " + last_.dims;
  } else {
    const std::string after = last_.entry.empty()
                                  ? " before any kernel call"
                                  : " after " + last_.entry + " returned on " + last_.dims;
    message = timedOut ? "the device tape did not finish within " + limit + " s" + after
                       : "the kernel worker " + how + after;
  }
  const bool backward =
      last_.entry.empty() ? backwardRequest : device::isBackwardEntry(last_.entry);
  const auto kind = timedOut ? device::FaultKind::TimedOut : device::FaultKind::Crashed;
  if (!fault_) fault_ = device::KernelFault{last_.entry, message, backward, kind};
  lost_ = "tapecheck: " + message;
  return Error{*lost_};
}

Result<std::string> RemoteTape::exchange(const wire::Writer& request, bool backwardRequest) const {
  if (lost_) return Error{*lost_};
  if (!wire::sendFrame(worker_->socket(), request.body())) return lose(false, backwardRequest);
  std::string body;
  for (;;) {
    const auto status = worker_->reader().next(body, deadline_);
    if (status == wire::FrameReader::Status::TimedOut) return lose(true, backwardRequest);
    if (status == wire::FrameReader::Status::Closed) return lose(false, backwardRequest);
    wire::Reader r(body);
    const auto kind = static_cast<Kind>(r.u8());
    if (kind == Kind::Call) {
      last_.entry = r.str();
      last_.dims = r.str();
      last_.returned = r.u8() != 0;
      continue;
    }
    if (kind != Kind::Reply || !r.ok()) return lose(false, backwardRequest);
    return body.substr(1);
  }
}

namespace {

// A reply: the status byte, the result or the error message, then the fault flag and fault.
template <class Decode>
auto decodeReply(const std::string& body, std::optional<device::KernelFault>& fault,
                 Decode decode) -> Result<decltype(decode(std::declval<wire::Reader&>()))> {
  wire::Reader r(body);
  const bool ok = r.u8() != 0;
  using T = decltype(decode(r));
  std::optional<T> value;
  std::string error;
  if (ok)
    value = decode(r);
  else
    error = r.str();
  if (r.u8() != 0) {
    device::KernelFault f;
    f.entry = r.str();
    f.message = r.str();
    f.backward = r.u8() != 0;
    f.kind = static_cast<device::FaultKind>(r.u8());
    if (!fault) fault = f;
  }
  if (!r.ok()) return Error{"tapecheck: a malformed reply from the kernel worker"};
  if (!ok) return Error{error};
  return std::move(*value);
}

NodeId readNode(wire::Reader& r) { return r.u64(); }

}  // namespace

Result<NodeId> RemoteTape::nodeReply(const wire::Writer& request) {
  auto body = exchange(request, false);
  if (!body) return body.error();
  return decodeReply(body.value(), fault_, readNode);
}

std::string RemoteTape::description() const {
  return worker_ ? worker_->description() : "device (no kernel worker)";
}

std::size_t RemoteTape::size() const {
  auto body = exchange(wire::Writer(Kind::Size), false);
  if (!body) return 0;
  auto n = decodeReply(body.value(), fault_, readNode);
  return n ? static_cast<std::size_t>(n.value()) : 0;
}

Result<NodeId> RemoteTape::leaf(const TensorData& value, bool requiresGrad) {
  wire::Writer w(Kind::Leaf);
  w.tensor(value).u8(requiresGrad ? 1 : 0);
  return nodeReply(w);
}

Result<TensorData> RemoteTape::value(NodeId id) const {
  wire::Writer w(Kind::Value);
  w.u64(id);
  auto body = exchange(w, false);
  if (!body) return body.error();
  return decodeReply(body.value(), fault_, [](wire::Reader& r) { return r.tensor(); });
}

Result<NodeId> RemoteTape::softmaxLast(const Shape& s, NodeId x) {
  return nodeReply(opRequest(OpCode::SoftmaxLast).shape(s).u64(x));
}

Result<NodeId> RemoteTape::logSoftmaxLast(const Shape& s, NodeId x) {
  return nodeReply(opRequest(OpCode::LogSoftmaxLast).shape(s).u64(x));
}

Result<NodeId> RemoteTape::topKMask(const Shape& s, std::uint64_t k, NodeId x) {
  return nodeReply(opRequest(OpCode::TopKMask).shape(s).u64(k).u64(x));
}

Result<NodeId> RemoteTape::layerNorm(std::uint64_t seqLen, std::uint64_t embedDim, NodeId x,
                                     NodeId gamma, NodeId beta, double epsilon) {
  return nodeReply(
      opRequest(OpCode::LayerNorm).u64(seqLen).u64(embedDim).u64(x).u64(gamma).u64(beta).f64(
          epsilon));
}

Result<NodeId> RemoteTape::batchNorm(std::uint64_t channels, const Shape& spatial, NodeId x,
                                     NodeId gamma, NodeId beta, double epsilon) {
  return nodeReply(
      opRequest(OpCode::BatchNorm).u64(channels).shape(spatial).u64(x).u64(gamma).u64(beta).f64(
          epsilon));
}

Result<NodeId> RemoteTape::crossEntropy(const Shape& s, std::uint64_t axis, NodeId logits,
                                        NodeId target, bool mean) {
  return nodeReply(
      opRequest(OpCode::CrossEntropy).shape(s).u64(axis).u64(logits).u64(target).u8(mean ? 1 : 0));
}

Result<NodeId> RemoteTape::distill(const Shape& s, std::uint64_t axis, NodeId student,
                                   NodeId teacher) {
  return nodeReply(opRequest(OpCode::Distill).shape(s).u64(axis).u64(student).u64(teacher));
}

Result<std::vector<TensorData>> RemoteTape::backward(NodeId out, const TensorData& seed) const {
  wire::Writer w(Kind::Backward);
  w.u64(out).tensor(seed);
  auto body = exchange(w, true);
  if (!body) return body.error();
  return decodeReply(body.value(), fault_, [](wire::Reader& r) {
    // A count beyond what the body can hold leaves the reader failed, not a huge allocation.
    const std::uint64_t n = std::min<std::uint64_t>(r.u64(), 1u << 20);
    std::vector<TensorData> grads(static_cast<std::size_t>(n));
    for (TensorData& g : grads) g = r.tensor();
    return grads;
  });
}

}  // namespace tapecheck::conformance
