// Writing golden-vector files deterministically: fixed key order (the order of DESIGN.md
// section 4), tensors on one line, binary64 bit patterns as unsigned integers, doubles such as
// epsilon in the shortest form that reads back to the same double, a newline at the end. The
// same VectorFile always gives the same bytes.
#pragma once

#include <string>
#include <vector>

#include "tapecheck/result.h"
#include "tapecheck/vectors/vector_file.h"

namespace tapecheck::vectors {

Result<std::string> formatVectorFile(const VectorFile& file);

// One tensor as `{"shape": [..], "values": [..]}`; a leaf adds "requiresGrad" after the shape.
std::string formatTensor(const conformance::TensorData& t);
std::string formatLeaf(const conformance::Leaf& leaf);

// Shortest decimal that reads back to `v` (std::to_chars); an Error for NaN and infinities,
// which JSON cannot hold.
Result<std::string> formatDouble(double v);

// A JSON string literal (quoted, escaped).
std::string quote(const std::string& s);

}  // namespace tapecheck::vectors
