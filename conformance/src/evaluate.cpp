#include "tapecheck/conformance/op_registry.h"

namespace tapecheck::conformance {

Outcome evaluate(AnyTape& tape, const TestCase& c) {
  Outcome out;
  const OpInfo* op = findSubject(c.op);
  if (!op) {
    out.error = "tapecheck: unknown operation '" + c.op + "'";
    return out;
  }
  for (const Leaf& l : c.leaves) {
    auto id = tape.leaf(l.value, l.requiresGrad);
    if (!id) {
      out.error = id.message();
      return out;
    }
  }
  auto node = op->call(tape, c);
  if (!node) {
    out.error = node.message();
    return out;
  }
  auto value = tape.value(node.value());
  if (!value) {
    out.error = value.message();
    return out;
  }
  out.value = std::move(value).value();
  if (c.upstream) {
    auto grads = tape.backward(node.value(), *c.upstream);
    if (!grads) {
      out.error = grads.message();
      return out;
    }
    grads.value().resize(c.leaves.size());  // one gradient per leaf
    out.grads = std::move(grads).value();
  }
  return out;
}

}  // namespace tapecheck::conformance
