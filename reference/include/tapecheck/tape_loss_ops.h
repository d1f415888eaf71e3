// crossEntropy and distill on the tape. Both are the same weighted cross-entropy primitive;
// distill feeds it softmax(teacher) as the target and keeps only the student's gradient.
#pragma once

#include "tapecheck/tape.h"

namespace tapecheck {

template <class Backend>
Result<NodeId> Tape<Backend>::crossEntropy(const Shape& s, std::uint64_t axis, NodeId logits,
                                           NodeId target, bool mean) {
  if (axis >= s.size()) return Error{errors::kCrossEntropyAxis};
  // outer, n and inner each fit UInt32 before the lookups; the element count (and, for an empty
  // s, every dimension) is checked by the lookups (docs/spec.md#cross-entropy-validation).
  AxisFold fold{0, 0, 0};
  if (!isEmptyTensor(s)) {
    TAPECHECK_TRY(checked, foldAxisChecked(s, static_cast<std::size_t>(axis)));
    fold = checked;
  }
  TAPECHECK_TRY(lNode, lookup(logits, s));
  TAPECHECK_TRY(tNode, lookup(target, s));

  Node n;
  n.name = "cross_entropy";
  n.parents = {logits, target};
  n.requiresGrad = lNode->requiresGrad || tNode->requiresGrad;

  if (isEmptyTensor(s)) {
    // The zero-seeded total of no terms is +0, so the loss -total is -0.0
    // (docs/spec.md#cross-entropy); the gradients are empty.
    TAPECHECK_TRY(loss, backend_.filled(1, -0.0));
    n.value = Value{Shape{}, std::move(loss)};
    n.pullback = [](const Backend& b, const Buffer&) -> Result<std::vector<Buffer>> {
      TAPECHECK_TRY(e1, b.filled(0, 0.0));
      TAPECHECK_TRY(e2, b.filled(0, 0.0));
      return std::vector<Buffer>{std::move(e1), std::move(e2)};
    };
    return append(std::move(n));
  }

  const Buffer& t = tNode->value.data;
  TAPECHECK_TRY(fwd, backend_.crossEntropyFwd(fold, mean, lNode->value.data, t));
  n.value = Value{Shape{}, fwd.loss};
  n.pullback = [fold, mean, logp = fwd.logp, t](
                   const Backend& b, const Buffer& dy) -> Result<std::vector<Buffer>> {
    TAPECHECK_TRY(g, b.crossEntropyBwd(fold, mean, dy, logp, t));
    return std::vector<Buffer>{std::move(g.dlogits), std::move(g.dtarget)};
  };
  return append(std::move(n));
}

template <class Backend>
Result<NodeId> Tape<Backend>::distill(const Shape& s, std::uint64_t axis, NodeId student,
                                      NodeId teacher) {
  if (axis >= s.size()) return Error{errors::kDistillAxis};
  // outer, n and inner each fit UInt32 before the lookups; the element count (and, for an empty
  // s, every dimension) is checked by the lookups (docs/spec.md#cross-entropy-validation).
  AxisFold fold{0, 0, 0};
  if (!isEmptyTensor(s)) {
    TAPECHECK_TRY(checked, foldAxisChecked(s, static_cast<std::size_t>(axis)));
    fold = checked;
  }
  TAPECHECK_TRY(sNode, lookup(student, s));
  TAPECHECK_TRY(tNode, lookup(teacher, s));

  Node n;
  n.name = "distill";
  n.parents = {student};  // the teacher is a constant: it never receives a contribution
  n.requiresGrad = sNode->requiresGrad;

  if (isEmptyTensor(s)) {
    TAPECHECK_TRY(loss, backend_.filled(1, -0.0));  // as crossEntropy's: -(+0)
    n.value = Value{Shape{}, std::move(loss)};
    n.pullback = [](const Backend& b, const Buffer&) { return detail::single(b.filled(0, 0.0)); };
    return append(std::move(n));
  }

  TAPECHECK_TRY(p, backend_.softmaxAxis(fold, tNode->value.data));
  TAPECHECK_TRY(fwd, backend_.crossEntropyFwd(fold, /*mean=*/true, sNode->value.data, p));
  n.value = Value{Shape{}, fwd.loss};
  n.pullback = [fold, logp = fwd.logp, p = std::move(p)](
                   const Backend& b, const Buffer& dy) -> Result<std::vector<Buffer>> {
    TAPECHECK_TRY(g, b.crossEntropyBwd(fold, /*mean=*/true, dy, logp, p));
    return std::vector<Buffer>{std::move(g.dlogits)};
  };
  return append(std::move(n));
}

}  // namespace tapecheck
