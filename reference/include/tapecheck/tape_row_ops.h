// softmaxLast, logSoftmaxLast and topKMask: docs/spec.md's rowOpLast dispatch (empty, then scalar,
// then fold-before-lookup) and the pullbacks of section 3.
#pragma once

#include "tapecheck/tape.h"

namespace tapecheck {

namespace detail {
template <class Buffer>
Result<std::vector<Buffer>> single(Result<Buffer> r) {
  if (!r) return r.error();
  return std::vector<Buffer>{std::move(r).value()};
}
}  // namespace detail

template <class Backend>
template <class Forward, class MakePullback, class ScalarValue>
Result<NodeId> Tape<Backend>::rowOpLast(const char* name, const Shape& s, NodeId x,
                                        bool gradFlows, ScalarValue scalarValue,
                                        Forward forward, MakePullback makePullback) {
  Node n;
  n.name = name;
  n.parents = {x};

  if (!isScalar(s) && isEmptyTensor(s)) {
    // Empty: the value is a copy of x and the pullback copies the upstream gradient. The lookup
    // still validates x: an empty shape with a dimension of 2^32 or more is too large.
    TAPECHECK_TRY(xNode, lookup(x, s));
    TAPECHECK_TRY(y, backend_.copy(xNode->value.data));
    n.value = Value{s, std::move(y)};
    n.requiresGrad = gradFlows && xNode->requiresGrad;
    n.pullback = [](const Backend& b, const Buffer& up) { return detail::single(b.copy(up)); };
    return append(std::move(n));
  }

  if (isScalar(s)) {
    // Scalar: a constant, computed only after x has been validated; zero gradient.
    TAPECHECK_TRY(xNode, lookup(x, s));
    TAPECHECK_TRY(y, backend_.filled(1, static_cast<double>(scalarValue)));
    n.value = Value{s, std::move(y)};
    n.requiresGrad = gradFlows && xNode->requiresGrad;
    n.pullback = [](const Backend& b, const Buffer&) { return detail::single(b.filled(1, 0.0)); };
    return append(std::move(n));
  }

  // rows and cols are each checked against UInt32 before the lookup of x; the element count
  // is checked by the lookup (docs/spec.md#row-op-last).
  TAPECHECK_TRY(fold, foldRows(s));
  TAPECHECK_TRY(xNode, lookup(x, s));
  TAPECHECK_TRY(y, forward(fold, xNode->value.data));
  n.requiresGrad = gradFlows && xNode->requiresGrad;
  n.pullback = makePullback(fold, y);
  n.value = Value{s, std::move(y)};
  return append(std::move(n));
}

template <class Backend>
Result<NodeId> Tape<Backend>::softmaxLast(const Shape& s, NodeId x) {
  return rowOpLast(
      "softmax", s, x, /*gradFlows=*/true, /*scalarValue=*/1.0,
      [this](RowFold f, const Buffer& xs) { return backend_.softmaxFwd(f, xs); },
      [](RowFold f, const Buffer& y) -> Pullback {
        return [f, y](const Backend& b, const Buffer& dy) {
          return detail::single(b.softmaxBwd(f, y, dy));
        };
      });
}

template <class Backend>
Result<NodeId> Tape<Backend>::logSoftmaxLast(const Shape& s, NodeId x) {
  return rowOpLast(
      "log_softmax", s, x, /*gradFlows=*/true, /*scalarValue=*/0.0,
      [this](RowFold f, const Buffer& xs) { return backend_.logSoftmaxFwd(f, xs); },
      [](RowFold f, const Buffer& y) -> Pullback {
        return [f, y](const Backend& b, const Buffer& dy) {
          return detail::single(b.logSoftmaxBwd(f, y, dy));
        };
      });
}

template <class Backend>
Result<NodeId> Tape<Backend>::topKMask(const Shape& s, std::uint64_t k, NodeId x) {
  // k >= cols keeps everything, so clamping k to cols is exact and fits the ABI's UInt32.
  return rowOpLast(
      "topk_mask", s, x, /*gradFlows=*/false, /*scalarValue=*/k > 0 ? 1.0 : 0.0,
      [this, k](RowFold f, const Buffer& xs) {
        const auto kept = static_cast<std::uint32_t>(k < f.cols ? k : f.cols);
        return backend_.topkMask(f, kept, xs);
      },
      [](RowFold, const Buffer&) -> Pullback { return {}; });
}

}  // namespace tapecheck
