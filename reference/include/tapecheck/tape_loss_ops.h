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
    auto checked = foldAxisChecked(s, static_cast<std::size_t>(axis));
    if (!checked) return checked.error();
    fold = checked.value();
  }
  auto lNode = lookup(logits, s);
  if (!lNode) return lNode.error();
  auto tNode = lookup(target, s);
  if (!tNode) return tNode.error();

  Node n;
  n.name = "cross_entropy";
  n.parents = {logits, target};
  n.requiresGrad = lNode.value()->requiresGrad || tNode.value()->requiresGrad;

  if (isEmptyTensor(s)) {
    // The zero-seeded total of no terms is +0, so the loss -total is -0.0
    // (docs/spec.md#cross-entropy); the gradients are empty.
    auto loss = backend_.filled(1, -0.0);
    if (!loss) return loss.error();
    n.value = Value{Shape{}, std::move(loss).value()};
    n.pullback = [](const Backend& b, const Buffer&) -> Result<std::vector<Buffer>> {
      auto e1 = b.filled(0, 0.0), e2 = b.filled(0, 0.0);
      if (!e1) return e1.error();
      if (!e2) return e2.error();
      return std::vector<Buffer>{std::move(e1).value(), std::move(e2).value()};
    };
    return append(std::move(n));
  }

  const Buffer& t = tNode.value()->value.data;
  auto fwd = backend_.crossEntropyFwd(fold, mean, lNode.value()->value.data, t);
  if (!fwd) return fwd.error();
  n.value = Value{Shape{}, fwd.value().loss};
  n.pullback = [fold, mean, logp = fwd.value().logp, t](
                   const Backend& b, const Buffer& dy) -> Result<std::vector<Buffer>> {
    auto g = b.crossEntropyBwd(fold, mean, dy, logp, t);
    if (!g) return g.error();
    return std::vector<Buffer>{std::move(g.value().dlogits), std::move(g.value().dtarget)};
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
    auto checked = foldAxisChecked(s, static_cast<std::size_t>(axis));
    if (!checked) return checked.error();
    fold = checked.value();
  }
  auto sNode = lookup(student, s);
  if (!sNode) return sNode.error();
  auto tNode = lookup(teacher, s);
  if (!tNode) return tNode.error();

  Node n;
  n.name = "distill";
  n.parents = {student};  // the teacher is a constant: it never receives a contribution
  n.requiresGrad = sNode.value()->requiresGrad;

  if (isEmptyTensor(s)) {
    auto loss = backend_.filled(1, -0.0);  // as crossEntropy's: -(+0)
    if (!loss) return loss.error();
    n.value = Value{Shape{}, std::move(loss).value()};
    n.pullback = [](const Backend& b, const Buffer&) { return detail::single(b.filled(0, 0.0)); };
    return append(std::move(n));
  }

  auto p = backend_.softmaxAxis(fold, tNode.value()->value.data);
  if (!p) return p.error();
  auto fwd = backend_.crossEntropyFwd(fold, /*mean=*/true, sNode.value()->value.data, p.value());
  if (!fwd) return fwd.error();
  n.value = Value{Shape{}, fwd.value().loss};
  n.pullback = [fold, logp = fwd.value().logp, p = std::move(p).value()](
                   const Backend& b, const Buffer& dy) -> Result<std::vector<Buffer>> {
    auto g = b.crossEntropyBwd(fold, /*mean=*/true, dy, logp, p);
    if (!g) return g.error();
    return std::vector<Buffer>{std::move(g.value().dlogits)};
  };
  return append(std::move(n));
}

}  // namespace tapecheck
