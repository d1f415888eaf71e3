// The op registry, in the spirit of PyTorch's OpInfo: one entry per SPEC.md operation, the single
// place that says how the operation is called. Golden-vector checks, property runs and
// certification all iterate this list; nothing else lists the operations.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tapecheck/conformance/any_tape.h"
#include "tapecheck/conformance/test_case.h"

namespace tapecheck::conformance {

struct OpInfo {
  std::string name;                     // SPEC.md name: "softmaxLast"
  std::string nodeName;                 // the node's name on the tape: "softmax"
  std::vector<std::string> tensorArgs;  // SPEC.md tensor arguments, in call order
  std::vector<std::string> attrNames;   // non-tensor arguments the op requires
  std::vector<std::string> optionalAttrNames;  // non-tensor arguments with a default
  // Calls the op on a tape whose leaves are already in place.
  std::function<Result<NodeId>(AnyTape&, const TestCase&)> call;
};

const std::vector<OpInfo>& opRegistry();
const OpInfo* findOp(std::string_view name);

// Adds the case's leaves to a fresh tape, calls the op and, when the case has an upstream
// gradient, runs backward. Any error (from a leaf, the call or backward) is the outcome.
Outcome evaluate(AnyTape& tape, const TestCase& c);

}  // namespace tapecheck::conformance
