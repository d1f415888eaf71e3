// layerNorm and batchNorm on the tape: argument checks, lookups in docs/spec.md's order (x, gamma,
// beta), and pullbacks that reuse the xhat and invStd saved by forward.
#pragma once

#include "tapecheck/tape.h"

namespace tapecheck {

namespace detail {
template <class Backend>
typename Tape<Backend>::Pullback normPullback(
    RowFold fold, NormForward<typename Backend::Buffer> saved,
    typename Backend::Buffer gamma, bool perRowGamma) {
  using Buffer = typename Backend::Buffer;
  return [fold, saved = std::move(saved), gamma = std::move(gamma), perRowGamma](
             const Backend& b, const Buffer& dy) -> Result<std::vector<Buffer>> {
    TAPECHECK_TRY(g, perRowGamma ? b.batchNormBwd(fold, dy, saved.xhat, saved.invStd, gamma)
                                 : b.layerNormBwd(fold, dy, saved.xhat, saved.invStd, gamma));
    return std::vector<Buffer>{std::move(g.dx), std::move(g.dgamma), std::move(g.dbeta)};
  };
}
}  // namespace detail

template <class Backend>
Result<NodeId> Tape<Backend>::layerNorm(std::uint64_t seqLen, std::uint64_t embedDim, NodeId x,
                                        NodeId gamma, NodeId beta, double epsilon) {
  if (seqLen == 0 || embedDim == 0) return Error{errors::kLayerNormDims};
  // seqLen and embedDim each fit UInt32 before the lookups; their product is checked at x's
  // lookup (docs/spec.md#layer-norm-validation).
  if (seqLen > kUInt32Max || embedDim > kUInt32Max) return Error{errors::kTooLarge};
  const Shape xs{seqLen, embedDim};
  const RowFold fold{static_cast<std::uint32_t>(seqLen), static_cast<std::uint32_t>(embedDim)};
  TAPECHECK_TRY(xNode, lookup(x, xs));
  TAPECHECK_TRY(gNode, lookup(gamma, Shape{embedDim}));
  TAPECHECK_TRY(bNode, lookup(beta, Shape{embedDim}));

  TAPECHECK_TRY(fwd, backend_.layerNormFwd(fold, epsilon, xNode->value.data, gNode->value.data,
                                           bNode->value.data));
  Node n;
  n.name = "layer_norm";
  n.parents = {x, gamma, beta};
  n.requiresGrad = xNode->requiresGrad || gNode->requiresGrad || bNode->requiresGrad;
  n.value = Value{xs, fwd.y};
  n.pullback = detail::normPullback<Backend>(fold, std::move(fwd), gNode->value.data,
                                             /*perRowGamma=*/false);
  return append(std::move(n));
}

template <class Backend>
Result<NodeId> Tape<Backend>::batchNorm(std::uint64_t channels, const Shape& spatial, NodeId x,
                                        NodeId gamma, NodeId beta, double epsilon) {
  Shape xs{channels};
  xs.insert(xs.end(), spatial.begin(), spatial.end());
  if (!wellFormed(xs)) return Error{errors::kBatchNormShape};
  // The spatial shape is a view of S = size(spatial) values per channel (S = 1 for []).
  // channels and S each fit UInt32 before the lookups; every dimension and the element count
  // are checked at x's lookup (docs/spec.md#batch-norm-validation).
  const Dim S = sizeOf(spatial);
  if (channels > kUInt32Max || S > kUInt32Max) return Error{errors::kTooLarge};
  const RowFold fold{static_cast<std::uint32_t>(channels), static_cast<std::uint32_t>(S)};
  TAPECHECK_TRY(xNode, lookup(x, xs));
  TAPECHECK_TRY(gNode, lookup(gamma, Shape{channels}));
  TAPECHECK_TRY(bNode, lookup(beta, Shape{channels}));

  TAPECHECK_TRY(fwd, backend_.batchNormFwd(fold, epsilon, xNode->value.data, gNode->value.data,
                                           bNode->value.data));
  Node n;
  n.name = "batch_norm";
  n.parents = {x, gamma, beta};
  n.requiresGrad = xNode->requiresGrad || gNode->requiresGrad || bNode->requiresGrad;
  n.value = Value{xs, fwd.y};
  n.pullback = detail::normPullback<Backend>(fold, std::move(fwd), gNode->value.data,
                                             /*perRowGamma=*/true);
  return append(std::move(n));
}

}  // namespace tapecheck
