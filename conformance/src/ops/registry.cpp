// The registry: every operation and chained program, each defined in its own file (ops.h).
#include "ops.h"

namespace tapecheck::conformance {

// In docs/spec.md order.
const std::vector<OpInfo>& opRegistry() {
  static const std::vector<OpInfo> registry = {
      ops::softmaxLast(),
      ops::logSoftmaxLast(),
      ops::topKMask(),
      ops::layerNorm(),
      ops::batchNorm(),
      ops::crossEntropy(),
      ops::distill(),
  };
  return registry;
}

const std::vector<OpInfo>& programRegistry() {
  static const std::vector<OpInfo> registry = {
      ops::softmaxCrossEntropy(),
      ops::layerNormLogSoftmaxDistill(),
      ops::batchNormSoftmaxCrossEntropy(),
  };
  return registry;
}

const OpInfo* findOp(std::string_view name) {
  for (const OpInfo& op : opRegistry())
    if (op.name == name) return &op;
  return nullptr;
}

const OpInfo* findSubject(std::string_view name) {
  if (const OpInfo* op = findOp(name)) return op;
  for (const OpInfo& p : programRegistry())
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace tapecheck::conformance
