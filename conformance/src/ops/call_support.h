// Reading a case's call: its tensor arguments and attributes, each lookup turning a malformed
// case into an error value, never an exception. Used by every op's call function, with
// TAPECHECK_TRY (result.h).
#pragma once

#include <optional>
#include <string>

#include "tapecheck/conformance/test_case.h"
#include "tapecheck/result.h"

namespace tapecheck::conformance::ops {

inline Error missing(const char* what, const std::string& name) {
  return Error{std::string("tapecheck: test case lacks ") + what + " '" + name + "'"};
}

// The node id of tensor argument `name`.
inline Result<NodeId> argument(const TestCase& c, const std::string& name) {
  auto it = c.call.find(name);
  if (it == c.call.end()) return missing("call argument", name);
  return it->second;
}

// A required attribute.
template <class T>
Result<T> need(const std::optional<T>& v, const char* name) {
  if (!v) return missing("attribute", name);
  return *v;
}

}  // namespace tapecheck::conformance::ops
