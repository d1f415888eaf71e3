// A tensor as the harness moves it between tapes, files and reports: a shape and binary64
// values (binary32 inputs are exactly representable, and every tape result rounds to binary64).
#pragma once

#include <vector>

#include "tapecheck/shape.h"

namespace tapecheck::conformance {

struct TensorData {
  Shape shape;
  std::vector<double> values;

  friend bool operator==(const TensorData& a, const TensorData& b) {
    return a.shape == b.shape && a.values == b.values;
  }
};

}  // namespace tapecheck::conformance
