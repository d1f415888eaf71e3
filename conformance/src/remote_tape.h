// RemoteTape: a device tape whose every call runs in a worker process (isolation.h). It holds
// one worker for its lifetime -- the evaluation of one case or one golden vector -- and gives it
// back when destroyed, unless the kernels crashed it or ran past the case's time limit: then the
// worker is stopped and reaped, the call and every later one return an error, and fault() says
// which entry point did what on which sizes.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "tapecheck/conformance/any_tape.h"
#include "tapecheck/device/kernel_fault.h"
#include "worker_process.h"

namespace tapecheck::conformance {

class RemoteTape final : public AnyTape {
 public:
  explicit RemoteTape(std::shared_ptr<WorkerPool> pool);
  ~RemoteTape() override;

  std::string description() const override;
  std::size_t size() const override;
  Result<NodeId> leaf(const TensorData& value, bool requiresGrad) override;
  Result<TensorData> value(NodeId id) const override;
  Result<NodeId> softmaxLast(const Shape& s, NodeId x) override;
  Result<NodeId> logSoftmaxLast(const Shape& s, NodeId x) override;
  Result<NodeId> topKMask(const Shape& s, std::uint64_t k, NodeId x) override;
  Result<NodeId> layerNorm(std::uint64_t seqLen, std::uint64_t embedDim, NodeId x, NodeId gamma,
                           NodeId beta, double epsilon) override;
  Result<NodeId> batchNorm(std::uint64_t channels, const Shape& spatial, NodeId x, NodeId gamma,
                           NodeId beta, double epsilon) override;
  Result<NodeId> crossEntropy(const Shape& s, std::uint64_t axis, NodeId logits, NodeId target,
                              bool mean) override;
  Result<NodeId> distill(const Shape& s, std::uint64_t axis, NodeId student,
                         NodeId teacher) override;
  Result<std::vector<TensorData>> backward(NodeId out, const TensorData& seed) const override;

  // The first kernel fault of this tape: reported by the worker's backend, or the worker lost.
  const std::optional<device::KernelFault>& fault() const { return fault_; }

 private:
  struct LastCall {
    std::string entry, dims;
    bool returned = false;
  };
  // Sends a request and waits for its reply (the body after the reply's status byte), within
  // the case's deadline. `backwardRequest` attributes a lost worker to the backward pass when no
  // kernel call can be blamed.
  Result<std::string> exchange(const wire::Writer& request, bool backwardRequest) const;
  Error lose(bool timedOut, bool backwardRequest) const;
  Result<NodeId> nodeReply(const wire::Writer& request);

  std::shared_ptr<WorkerPool> pool_;
  mutable std::unique_ptr<WorkerProcess> worker_;
  std::chrono::steady_clock::time_point deadline_;
  mutable LastCall last_;
  mutable std::optional<device::KernelFault> fault_;
  mutable std::optional<std::string> lost_;  // the error every call returns once the worker is gone
};

}  // namespace tapecheck::conformance
