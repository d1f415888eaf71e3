// Writing one case as a golden vector (DESIGN.md section 4: tensors as binary64 bit patterns), so
// that a failing case found by `tapecheck run` can be kept, read, and rerun with
// `tapecheck vectors check --target device`. Chained programs are not docs/spec.md operations: their
// files use the same layout under the schema name "tapecheck-program-case-v1".
#pragma once

#include <string>
#include <vector>

#include "tapecheck/conformance/test_case.h"
#include "tapecheck/result.h"

namespace tapecheck::conformance {

struct VectorFileInfo {
  std::string comment;                 // what the case is and why it was written
  std::vector<std::string> flags;      // e.g. the fill's name
  std::string provenance;              // who computed the expected values
  bool program = false;                // a chained program, not a docs/spec.md op
};

// The JSON text of a one-test vector file for case `c` with `expected` as its expected outcome.
std::string caseVectorJson(const TestCase& c, const Outcome& expected, const VectorFileInfo& info);

// Writes `text` to `path`, creating the parent folders.
tapecheck::Status writeTextFile(const std::string& path, const std::string& text);

}  // namespace tapecheck::conformance
