// One call of one operation: the unit that golden vectors store and property runs generate.
// The field names follow the golden-vector schema (DESIGN.md section 4).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tapecheck/conformance/tensor_data.h"

namespace tapecheck::conformance {

struct Leaf {
  TensorData value;
  bool requiresGrad = false;
};

// Every non-tensor argument by its docs/spec.md name; an op reads the ones it takes.
struct Attrs {
  std::optional<Shape> s;
  std::optional<std::uint64_t> k;
  std::optional<std::uint64_t> axis;
  std::optional<bool> mean;
  std::optional<double> epsilon;
  std::optional<std::uint64_t> seqLen;
  std::optional<std::uint64_t> embedDim;
  std::optional<std::uint64_t> channels;
  std::optional<Shape> spatial;
};

struct TestCase {
  std::string op;                        // docs/spec.md name, e.g. "layerNorm"
  std::vector<Leaf> leaves;              // leaf i gets node id i
  std::map<std::string, NodeId> call;    // docs/spec.md tensor argument -> node id
  Attrs attrs;
  std::optional<TensorData> upstream;    // seed for backward; absent: no backward
};

// What a tape did with a TestCase: an error string, or the value and one gradient per leaf.
struct Outcome {
  std::optional<std::string> error;
  TensorData value;
  std::vector<TensorData> grads;  // empty when the case has no upstream
};

}  // namespace tapecheck::conformance
