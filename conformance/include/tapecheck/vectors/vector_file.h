// A golden-vector file in memory: DESIGN.md section 4, after validation. Each test holds the
// conformance::TestCase it describes plus what is expected of it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tapecheck/conformance/test_case.h"

namespace tapecheck::vectors {

inline constexpr const char* kSchemaName = "tapecheck-vectors-v1";
// A chained program's case (conformance/values_file.h): the same layout, its `op` a program of
// the registry, its call and attrs the program's arguments.
inline constexpr const char* kProgramCaseSchemaName = "tapecheck-program-case-v1";

// `result` of a test.
enum class Expectation { Valid, Invalid, Acceptable };
const char* expectationName(Expectation e);  // "valid" | "invalid" | "acceptable"

// `expected`: either a value (with one gradient per leaf when the test has an upstream) or an
// error string.
struct Expected {
  std::optional<std::string> error;
  std::optional<conformance::TensorData> value;
  std::optional<std::vector<conformance::TensorData>> grads;
};

struct VectorTest {
  std::uint64_t tcId = 0;
  std::string comment;
  std::vector<std::string> flags;
  conformance::TestCase testCase;  // op, leaves, call, attrs, upstream
  Expected expected;
  Expectation result = Expectation::Valid;
};

struct Generator {
  std::string name;
  std::string version;
  std::string provenance;
};

struct VectorFile {
  std::string path;  // where it was read from (for messages); empty for generated files
  std::string op;
  Generator generator;
  // Provenance, both optional: the rules of docs/spec.md the tests exercise, as
  // "docs/spec.md#anchor", and the TorchLean commit those rules were checked against (40 hex
  // digits).
  std::vector<std::string> specRules;
  std::optional<std::string> torchleanCommit;
  std::vector<std::string> header;
  std::vector<std::pair<std::string, std::string>> notes;  // flag -> description, file order
  std::vector<VectorTest> tests;
};

}  // namespace tapecheck::vectors
