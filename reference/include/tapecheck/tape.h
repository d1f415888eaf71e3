// Tape<Backend>: docs/spec.md#tape, written once for both tapes.
//
// An operation either appends one node and returns its id, or returns an error and leaves the
// tape exactly as it was (every check and every computation happens before the append).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tapecheck/backend.h"
#include "tapecheck/errors.h"
#include "tapecheck/result.h"
#include "tapecheck/shape.h"

namespace tapecheck {

inline constexpr double kNormalizationEpsilon = 1.0 / 100000.0;  // TorchLean's default

template <class Backend>
class Tape {
 public:
  using Buffer = typename Backend::Buffer;
  // Maps the node's upstream gradient to one contribution per parent (same order as parents).
  using Pullback =
      std::function<Result<std::vector<Buffer>>(const Backend&, const Buffer& upstream)>;

  struct Value {
    Shape shape;
    Buffer data;
  };

  struct Node {
    std::string name;
    Value value;
    bool requiresGrad = false;
    std::vector<NodeId> parents;
    Pullback pullback;  // empty for leaves
  };

  explicit Tape(Backend backend = Backend()) : backend_(std::move(backend)) {}

  const Backend& backend() const { return backend_; }
  std::size_t size() const { return nodes_.size(); }
  const Node& node(NodeId id) const { return nodes_.at(id); }

  // A leaf whose buffer holds sizeOf(shape) elements (checked: a wrong count is an error).
  Result<NodeId> leaf(Shape shape, Buffer data, bool requiresGrad);

  Result<NodeId> softmaxLast(const Shape& s, NodeId x);
  Result<NodeId> logSoftmaxLast(const Shape& s, NodeId x);
  Result<NodeId> topKMask(const Shape& s, std::uint64_t k, NodeId x);
  Result<NodeId> layerNorm(std::uint64_t seqLen, std::uint64_t embedDim, NodeId x, NodeId gamma,
                           NodeId beta, double epsilon = kNormalizationEpsilon);
  Result<NodeId> batchNorm(std::uint64_t channels, const Shape& spatial, NodeId x, NodeId gamma,
                           NodeId beta, double epsilon = kNormalizationEpsilon);
  Result<NodeId> crossEntropy(const Shape& s, std::uint64_t axis, NodeId logits, NodeId target,
                              bool mean = true);
  Result<NodeId> distill(const Shape& s, std::uint64_t axis, NodeId student, NodeId teacher);

  // Dense backward: one gradient per node, zeros where nothing flowed.
  Result<std::vector<Buffer>> backward(NodeId out, const Value& seed) const;

 private:
  // docs/spec.md#lookup: the id, the declared shape, numelU32 of that shape, the buffer length.
  Result<const Node*> lookup(NodeId id, const Shape& declared) const {
    if (id >= nodes_.size()) return Error{errors::kInvalidNodeId};
    const Node& n = nodes_[id];
    if (n.value.shape != declared) return Error{errors::kShapeMismatch};
    TAPECHECK_TRY_STATUS(numelU32(declared));
    if (backend_.count(n.value.data) != sizeOf(declared))
      return Error{errors::bufferSizeMismatch(sizeOf(declared), backend_.count(n.value.data))};
    return &n;
  }

  NodeId append(Node n) {
    nodes_.push_back(std::move(n));
    return nodes_.size() - 1;
  }

  // rowOpLast of docs/spec.md: the dispatch shared by softmax, log-softmax and topKMask.
  template <class Forward, class MakePullback, class ScalarValue>
  Result<NodeId> rowOpLast(const char* name, const Shape& s, NodeId x, bool gradFlows,
                           ScalarValue scalarValue, Forward forward, MakePullback makePullback);

  Backend backend_;
  std::vector<Node> nodes_;
};

template <class Backend>
Result<NodeId> Tape<Backend>::leaf(Shape shape, Buffer data, bool requiresGrad) {
  if (!fitsUInt32(shape) && !isEmptyTensor(shape)) return Error{errors::kTooLarge};
  if (backend_.count(data) != sizeOf(shape))
    return Error{"tapecheck: leaf buffer holds " + std::to_string(backend_.count(data)) +
                 " elements but shape " + toString(shape) + " needs " +
                 std::to_string(sizeOf(shape))};
  Node n;
  n.name = "leaf";
  n.value = Value{std::move(shape), std::move(data)};
  n.requiresGrad = requiresGrad;
  return append(std::move(n));
}

template <class Backend>
Result<std::vector<typename Backend::Buffer>> Tape<Backend>::backward(NodeId out,
                                                                      const Value& seed) const {
  if (out >= nodes_.size()) return Error{errors::kInvalidOutputId};
  if (seed.shape != nodes_[out].value.shape) return Error{errors::kSeedMismatch};
  TAPECHECK_TRY_STATUS(numelU32(seed.shape));
  if (backend_.count(seed.data) != sizeOf(seed.shape))
    return Error{errors::bufferSizeMismatch(sizeOf(seed.shape), backend_.count(seed.data))};

  // Every node's gradient is allocated through numelU32 (docs/spec.md#backward, step 5): a tape
  // holding an empty leaf with a dimension of 2^32 or more cannot be differentiated.
  for (const Node& n : nodes_) TAPECHECK_TRY_STATUS(numelU32(n.value.shape));

  std::vector<Buffer> grads;
  grads.reserve(nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (i == out) {
      TAPECHECK_TRY(seedCopy, backend_.copy(seed.data));
      grads.push_back(std::move(seedCopy));
      continue;
    }
    TAPECHECK_TRY(zeros, backend_.filled(sizeOf(nodes_[i].value.shape), 0.0));
    grads.push_back(std::move(zeros));
  }

  // TorchLean's backwardDenseAll: only nodes reached from `out` run their pullbacks; the others
  // (above `out`, or below it on no path to it) keep zero gradients and never run, so a NaN
  // that a pullback would make of a zero upstream cannot appear.
  std::vector<bool> reached(nodes_.size(), false);
  reached[out] = true;
  for (std::size_t i = nodes_.size(); i-- > 0;) {
    const Node& n = nodes_[i];
    if (!reached[i] || !n.requiresGrad || !n.pullback) continue;
    TAPECHECK_TRY(contributions, n.pullback(backend_, grads[i]));
    if (contributions.size() != n.parents.size())
      return Error{"tapecheck: internal error: pullback of " + n.name + " returned " +
                   std::to_string(contributions.size()) + " contributions for " +
                   std::to_string(n.parents.size()) + " parents"};
    for (std::size_t p = 0; p < n.parents.size(); ++p) {
      const NodeId parent = n.parents[p];
      reached[parent] = true;
      if (!nodes_[parent].requiresGrad) continue;
      const Buffer& g = contributions[p];
      if (backend_.count(g) != sizeOf(nodes_[parent].value.shape))
        return Error{errors::kContributionShape};
      TAPECHECK_TRY(sum, backend_.add(grads[parent], g));
      grads[parent] = std::move(sum);
    }
  }
  return grads;
}

}  // namespace tapecheck

#include "tapecheck/tape_row_ops.h"
#include "tapecheck/tape_norm_ops.h"
#include "tapecheck/tape_loss_ops.h"
