// AnyTape: one interface over every tape the harness drives (the reference tape at each scalar,
// the device tape with any kernel table), in the harness's neutral TensorData. The op registry,
// golden-vector checks and property runs are written against this, once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tapecheck/conformance/tensor_data.h"
#include "tapecheck/result.h"
#include "tapecheck/tape.h"

namespace tapecheck::conformance {

class AnyTape {
 public:
  virtual ~AnyTape() = default;
  virtual std::string description() const = 0;
  virtual std::size_t size() const = 0;
  virtual Result<NodeId> leaf(const TensorData& value, bool requiresGrad) = 0;
  virtual Result<TensorData> value(NodeId id) const = 0;

  virtual Result<NodeId> softmaxLast(const Shape& s, NodeId x) = 0;
  virtual Result<NodeId> logSoftmaxLast(const Shape& s, NodeId x) = 0;
  virtual Result<NodeId> topKMask(const Shape& s, std::uint64_t k, NodeId x) = 0;
  virtual Result<NodeId> layerNorm(std::uint64_t seqLen, std::uint64_t embedDim, NodeId x,
                                   NodeId gamma, NodeId beta, double epsilon) = 0;
  virtual Result<NodeId> batchNorm(std::uint64_t channels, const Shape& spatial, NodeId x,
                                   NodeId gamma, NodeId beta, double epsilon) = 0;
  virtual Result<NodeId> crossEntropy(const Shape& s, std::uint64_t axis, NodeId logits,
                                      NodeId target, bool mean) = 0;
  virtual Result<NodeId> distill(const Shape& s, std::uint64_t axis, NodeId student,
                                 NodeId teacher) = 0;
  // Dense backward: one gradient per node of the tape.
  virtual Result<std::vector<TensorData>> backward(NodeId out, const TensorData& seed) const = 0;
};

// Adapts Tape<Backend> to AnyTape through the backend's fromHost/toHost conversions.
template <class Backend>
class TapeAdapter final : public AnyTape {
 public:
  explicit TapeAdapter(Backend backend) : tape_(std::move(backend)) {}

  std::string description() const override { return tape_.backend().description(); }
  std::size_t size() const override { return tape_.size(); }
  Tape<Backend>& tape() { return tape_; }
  const Tape<Backend>& tape() const { return tape_; }

  Result<NodeId> leaf(const TensorData& v, bool requiresGrad) override {
    TAPECHECK_TRY(buffer, tape_.backend().fromHost(v.values));
    return tape_.leaf(v.shape, std::move(buffer), requiresGrad);
  }
  Result<TensorData> value(NodeId id) const override {
    if (id >= tape_.size()) return Error{errors::kInvalidNodeId};
    const auto& n = tape_.node(id);
    return TensorData{n.value.shape, tape_.backend().toHost(n.value.data)};
  }
  Result<NodeId> softmaxLast(const Shape& s, NodeId x) override { return tape_.softmaxLast(s, x); }
  Result<NodeId> logSoftmaxLast(const Shape& s, NodeId x) override {
    return tape_.logSoftmaxLast(s, x);
  }
  Result<NodeId> topKMask(const Shape& s, std::uint64_t k, NodeId x) override {
    return tape_.topKMask(s, k, x);
  }
  Result<NodeId> layerNorm(std::uint64_t seqLen, std::uint64_t embedDim, NodeId x, NodeId gamma,
                           NodeId beta, double epsilon) override {
    return tape_.layerNorm(seqLen, embedDim, x, gamma, beta, epsilon);
  }
  Result<NodeId> batchNorm(std::uint64_t channels, const Shape& spatial, NodeId x, NodeId gamma,
                           NodeId beta, double epsilon) override {
    return tape_.batchNorm(channels, spatial, x, gamma, beta, epsilon);
  }
  Result<NodeId> crossEntropy(const Shape& s, std::uint64_t axis, NodeId logits, NodeId target,
                              bool mean) override {
    return tape_.crossEntropy(s, axis, logits, target, mean);
  }
  Result<NodeId> distill(const Shape& s, std::uint64_t axis, NodeId student,
                         NodeId teacher) override {
    return tape_.distill(s, axis, student, teacher);
  }
  Result<std::vector<TensorData>> backward(NodeId out, const TensorData& seed) const override {
    TAPECHECK_TRY(seedBuffer, tape_.backend().fromHost(seed.values));
    TAPECHECK_TRY(grads, tape_.backward(out, {seed.shape, std::move(seedBuffer)}));
    std::vector<TensorData> out2;
    out2.reserve(grads.size());
    for (std::size_t i = 0; i < grads.size(); ++i)
      out2.push_back({tape_.node(i).value.shape, tape_.backend().toHost(grads[i])});
    return out2;
  }

 private:
  Tape<Backend> tape_;
};

// Factory for a fresh, empty tape of one kind. Each evaluation starts from an empty tape.
using TapeFactory = std::function<std::unique_ptr<AnyTape>()>;

}  // namespace tapecheck::conformance
