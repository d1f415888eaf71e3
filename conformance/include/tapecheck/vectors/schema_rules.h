// The v1 rules of vectors/schema/tapecheck-vectors-v1.schema.json as C++ tables: which keys each
// object may hold and which it must hold. The loader (src/load.cpp) checks every object against
// its row here, and a test compares these rows with the schema file, so the two cannot drift.
#pragma once

#include <string>
#include <vector>

namespace tapecheck::vectors::schema {

struct ObjectRule {
  const char* name;                   // the schema's name for it: "file", "$defs/test", ...
  std::vector<std::string> allowed;   // `properties` (additionalProperties: false)
  std::vector<std::string> required;  // `required`
};

inline const ObjectRule kFile{
    "file",
    {"schema", "op", "generator", "specRules", "torchleanCommit", "header", "notes",
     "numberOfTests", "tests"},
    {"schema", "op", "generator", "header", "notes", "numberOfTests", "tests"}};
inline const ObjectRule kGenerator{
    "generator", {"name", "version", "provenance"}, {"name", "version", "provenance"}};
inline const ObjectRule kNote{"note", {"description"}, {"description"}};
inline const ObjectRule kTest{
    "test",
    {"tcId", "comment", "flags", "leaves", "call", "attrs", "upstream", "expected", "result"},
    {"tcId", "comment", "flags", "leaves", "call", "attrs", "expected", "result"}};
inline const ObjectRule kTensor{"tensor", {"shape", "values"}, {"shape", "values"}};
inline const ObjectRule kLeaf{
    "leaf", {"shape", "requiresGrad", "values"}, {"shape", "requiresGrad", "values"}};
inline const ObjectRule kAttrs{
    "attrs",
    {"s", "k", "axis", "mean", "epsilon", "seqLen", "embedDim", "channels", "spatial"},
    {}};
inline const ObjectRule kExpectedValue{"expectedValue", {"value", "grads"}, {"value"}};
inline const ObjectRule kExpectedError{"expectedError", {"error"}, {"error"}};

// Every tensor argument name any op takes (`call`'s propertyNames).
inline const std::vector<std::string> kCallNames{"x",      "gamma",  "beta",   "logits",
                                                 "target", "student", "teacher"};
inline const std::vector<std::string> kResultNames{"valid", "invalid", "acceptable"};

inline const std::vector<const ObjectRule*> kAllRules{
    &kFile, &kGenerator, &kNote, &kTest, &kTensor, &kLeaf, &kAttrs, &kExpectedValue,
    &kExpectedError};

// specRules entries: ^docs/spec\.md#[a-z0-9]+(-[a-z0-9]+)*$ (an anchor of docs/spec.md).
inline bool isSpecRule(const std::string& s) {
  const std::string prefix = "docs/spec.md#";
  if (s.compare(0, prefix.size(), prefix) != 0 || s.size() == prefix.size()) return false;
  bool afterDash = true;  // the anchor may not start or end with '-', nor hold "--"
  for (std::size_t i = prefix.size(); i < s.size(); ++i) {
    const char c = s[i];
    if (c == '-') {
      if (afterDash) return false;
      afterDash = true;
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      afterDash = false;
    } else {
      return false;
    }
  }
  return !afterDash;
}

// torchleanCommit: ^[0-9a-f]{40}$
inline bool isCommitHash(const std::string& s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// Flag names: ^[A-Za-z][A-Za-z0-9]*$
inline bool isFlagName(const std::string& s) {
  if (s.empty()) return false;
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); };
  if (!alpha(s[0])) return false;
  for (char c : s)
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

}  // namespace tapecheck::vectors::schema
