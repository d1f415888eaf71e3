// The golden-vector suite: the v1 validator (against the schema file and the malformed files),
// judging, generation, the committed corpus's coverage and determinism, ParamIO import.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tapecheck/conformance/epsilon_abi.h"
#include "tapecheck/conformance/op_registry.h"
#include "tapecheck/conformance/reference_tapes.h"
#include "tapecheck/errors.h"
#include "tapecheck/vectors/bits.h"
#include "tapecheck/vectors/check.h"
#include "tapecheck/vectors/corpus.h"
#include "tapecheck/vectors/judge.h"
#include "tapecheck/vectors/load.h"
#include "tapecheck/vectors/paramio.h"
#include "tapecheck/vectors/schema_rules.h"
#include "tapecheck/vectors/write.h"

using namespace tapecheck;
using namespace tapecheck::vectors;
using Json = nlohmann::ordered_json;

namespace {

const std::string kDir = TAPECHECK_VECTORS_DIR;  // the source folder vectors/
const std::string kData = kDir + "/tests/data";
const std::string kGolden = kDir + "/golden";

std::string readAll(const std::string& path) {
  auto t = readTextFile(path);
  REQUIRE(t.ok());
  return t.value();
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> keysOf(const nlohmann::json& o) {
  std::vector<std::string> k;
  for (const auto& [key, v] : o.items()) {
    (void)v;
    k.push_back(key);
  }
  return sorted(k);
}

std::vector<std::string> stringsOf(const nlohmann::json& a) {
  std::vector<std::string> s;
  for (const auto& x : a) s.push_back(x.get<std::string>());
  return sorted(s);
}

Result<VectorCheckResult> checkReference(const std::vector<std::string>& paths) {
  std::ostringstream log;
  return checkVectorPaths(paths, Target::Reference, {}, log);
}

// A JSON document and a pointer into it; returns the loader's message for the mutated text.
std::string loaderMessage(const Json& doc) {
  auto r = parseVectorText(doc.dump(2), "mutated.json");
  return r.ok() ? std::string("<accepted>") : r.message();
}

}  // namespace

// ---- The schema file and the C++ validator --------------------------------------------------

TEST_CASE("the C++ rule tables state exactly what the schema file states") {
  const auto schema =
      nlohmann::json::parse(readAll(kDir + "/schema/tapecheck-vectors-v1.schema.json"));
  const auto& defs = schema.at("$defs");
  const std::map<std::string, const nlohmann::json*> where = {
      {"file", &schema},
      {"generator", &defs.at("generator")},
      {"note", &defs.at("note")},
      {"test", &defs.at("test")},
      {"tensor", &defs.at("tensor")},
      {"leaf", &defs.at("leaf")},
      {"attrs", &defs.at("attrs")},
      {"expectedValue", &defs.at("expectedValue")},
      {"expectedError", &defs.at("expectedError")}};
  for (const schema::ObjectRule* rule : schema::kAllRules) {
    INFO("object " << rule->name);
    const nlohmann::json& o = *where.at(rule->name);
    CHECK(o.at("additionalProperties") == false);
    CHECK(keysOf(o.at("properties")) == sorted(rule->allowed));
    const std::vector<std::string> required =
        o.contains("required") ? stringsOf(o.at("required")) : std::vector<std::string>{};
    CHECK(required == sorted(rule->required));
  }
  CHECK(stringsOf(defs.at("call").at("propertyNames").at("enum")) == sorted(schema::kCallNames));
  CHECK(stringsOf(defs.at("test").at("properties").at("result").at("enum")) ==
        sorted(schema::kResultNames));
  // The op enum and the per-op call/attrs clauses follow the registry.
  std::vector<std::string> ops;
  for (const auto& op : conformance::opRegistry()) ops.push_back(op.name);
  CHECK(stringsOf(schema.at("properties").at("op").at("enum")) == sorted(ops));
  std::size_t clauses = 0;
  for (const auto& clause : schema.at("allOf")) {
    const std::string name = clause.at("if").at("properties").at("op").at("const");
    const conformance::OpInfo* op = conformance::findOp(name);
    REQUIRE(op != nullptr);
    const auto& item = clause.at("then").at("properties").at("tests").at("items").at("properties");
    INFO("op " << name);
    CHECK(stringsOf(item.at("call").at("required")) == sorted(op->tensorArgs));
    CHECK(stringsOf(item.at("call").at("propertyNames").at("enum")) == sorted(op->tensorArgs));
    CHECK(stringsOf(item.at("attrs").at("required")) == sorted(op->attrNames));
    std::vector<std::string> takes = op->attrNames;
    takes.insert(takes.end(), op->optionalAttrNames.begin(), op->optionalAttrNames.end());
    CHECK(stringsOf(item.at("attrs").at("propertyNames").at("enum")) == sorted(takes));
    ++clauses;
  }
  CHECK(clauses == ops.size());
}

TEST_CASE("a missing required field or an extra field is rejected at every object level") {
  const Json base = Json::parse(readAll(kData + "/pass/softmaxLast-hand.json"));
  // Where each object of the rule table sits in the hand-written file.
  const std::map<std::string, std::string> at = {
      {"file", ""},
      {"generator", "/generator"},
      {"note", "/notes/Hand"},
      {"test", "/tests/0"},
      {"tensor", "/tests/0/upstream"},
      {"leaf", "/tests/0/leaves/0"},
      {"attrs", "/tests/0/attrs"},
      {"expectedValue", "/tests/0/expected"},
      {"expectedError", "/tests/3/expected"}};
  for (const schema::ObjectRule* rule : schema::kAllRules) {
    const Json::json_pointer ptr(at.at(rule->name));
    for (const std::string& key : rule->required) {
      Json doc = base;
      doc[ptr].erase(key);
      const std::string m = loaderMessage(doc);
      INFO(rule->name << " without " << key << ": " << m);
      CHECK(m.find("mutated.json: ") == 0);
      // An expected object left empty is reported as lacking its value (either form would do).
      if (rule->name == std::string("expectedError"))
        CHECK(m.find("missing required field") != std::string::npos);
      else
        CHECK(m.find(key + ": missing required field") != std::string::npos);
    }
    Json doc = base;
    doc[ptr]["bogus"] = 1;
    const std::string m = loaderMessage(doc);
    INFO(rule->name << " with an extra field: " << m);
    CHECK(m.find("bogus: unexpected field") != std::string::npos);
    if (rule->name != std::string("file") && rule->name != std::string("generator") &&
        rule->name != std::string("note"))
      CHECK(m.find("tcId ") != std::string::npos);
  }
}

TEST_CASE("every malformed file is rejected with its file, tcId and field named") {
  std::ifstream manifest(kData + "/malformed/expected-messages.txt");
  std::string line;
  std::size_t count = 0;
  while (std::getline(manifest, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '*') line.erase(0, 1);  // also checked through the command line
    std::vector<std::string> parts;
    std::stringstream ss(line);
    for (std::string p; std::getline(ss, p, '\t');) parts.push_back(p);
    const std::string path = kData + "/" + parts.at(0);
    auto f = loadVectorFile(path);
    INFO(parts[0] << ": " << (f.ok() ? std::string("<accepted>") : f.message()));
    REQUIRE_FALSE(f.ok());
    CHECK(f.message().find(path + ": ") == 0);
    for (std::size_t i = 1; i < parts.size(); ++i)
      CHECK(f.message().find(parts[i]) != std::string::npos);
    // A malformed file means no results at all, even beside good files.
    auto r = checkReference({kData + "/pass", path});
    CHECK_FALSE(r.ok());
    ++count;
  }
  CHECK(count >= 30);
}

TEST_CASE("values must be unsigned 64-bit integers: 2^64 is rejected, 2^64 - 1 accepted") {
  Json doc = Json::parse(readAll(kData + "/pass/softmaxLast-hand.json"));
  std::string text = doc.dump();
  const std::string needle = "\"values\":[0,0]";
  REQUIRE(text.find(needle) != std::string::npos);
  std::string big = text;
  big.replace(big.find(needle), needle.size(), "\"values\":[0,18446744073709551616]");
  auto r = parseVectorText(big, "big.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.message().find("tests[0].leaves[0].values[1]: expected an unsigned integer") !=
        std::string::npos);
  // 2^64 - 1 is a NaN bit pattern, representable in binary32 as a NaN: accepted.
  std::string max = text;
  max.replace(max.find(needle), needle.size(), "\"values\":[0,18446744073709551615]");
  CHECK(parseVectorText(max, "max.json").ok());
}

// ---- Judging on the reference -----------------------------------------------------------

TEST_CASE("the hand-written vectors pass on the reference") {
  auto r = checkReference({kData + "/pass"});
  REQUIRE(r.ok());
  CHECK(r.value().files == 3);
  CHECK(r.value().tests == 11);
  CHECK(r.value().failed == 0);
  CHECK(r.value().passed == 11);
}

TEST_CASE("an expected value 5 units off fails, 4 units off passes; errors must match exactly") {
  auto r = checkReference({kData + "/fail/softmaxLast-off.json"});
  REQUIRE(r.ok());
  const VectorCheckResult& v = r.value();
  CHECK(v.tests == 7);
  CHECK(v.passed == 1);  // tcId 1: 4 units, at the budget
  REQUIRE(v.failures.size() == 6);
  std::map<std::uint64_t, std::string> reasons;
  for (const auto& f : v.failures) reasons[f.tcId] = f.reason;
  CHECK(reasons.count(1) == 0);
  CHECK(reasons[2].find("value[1]") != std::string::npos);
  CHECK(reasons[2].find("5 ulps of 2^-52 > budget 4") != std::string::npos);
  CHECK(reasons[3] ==
        "expected error \"autograd: shape mismatch\", got \"autograd: invalid node id\"");
  CHECK(reasons[4] == "expected a value, got error \"autograd: invalid node id\"");
  CHECK(reasons[5].find("but the call succeeded") != std::string::npos);
  CHECK(reasons[6].find("gradient of leaf 0[1]") != std::string::npos);
  CHECK(reasons[7].find("value[0] = 0.5, expected nan") != std::string::npos);
  REQUIRE(v.perOp.size() == 1);
  CHECK(v.perOp[0].op == "softmaxLast");
  CHECK(v.perOp[0].failed == 6);
  std::ostringstream out;
  printVectorCheckReport(v, Target::Reference, out);
  CHECK(out.str().find("FAILED " + kData + "/fail/softmaxLast-off.json tcId 2 (softmaxLast): ") !=
        std::string::npos);
  CHECK(out.str().find("vectors: files:1 tests:7 passed:1 failed:6\n") != std::string::npos);
}

TEST_CASE("vectors from the Lean exporter get the binary64 evaluation allowance") {
  std::string text = readAll(kData + "/fail/softmaxLast-off.json");
  const std::string hand = "written by hand: expected values derived in each comment";
  REQUIRE(text.find(hand) != std::string::npos);
  text.replace(text.find(hand), hand.size(), "lean:TorchLean@0123abc");
  auto f = parseVectorText(text, "lean.json");
  REQUIRE(f.ok());
  CHECK(isLeanProvenance(f.value().generator.provenance));
  // Rows of 2: 4 + 2*2 = 8 units, so tcId 2 (5 units off) passes now.
  CHECK(referenceBudgetUlps(f.value().generator.provenance, f.value().tests[1].testCase) == 8);
  std::ostringstream log;
  auto r = checkVectorFiles({f.value()}, VectorCheckOptions{}, log);
  REQUIRE(r.ok());
  for (const auto& failure : r.value().failures) CHECK(failure.tcId != 2);
}

TEST_CASE("the Lean allowance counts the op's longest reduction, as the conformance budgets do") {
  conformance::TestCase ln;
  ln.op = "layerNorm";
  ln.attrs.seqLen = 5;
  ln.attrs.embedDim = 3;
  // The column sums of dgamma/dbeta run over the 5 rows: 4 + 2 * 5.
  CHECK(referenceBudgetUlps("lean:TorchLean@0123abc", ln) == 14);
  CHECK(referenceBudgetUlps("tapecheck vectors generate", ln) == 4);
  conformance::TestCase ce;
  ce.op = "crossEntropy";
  ce.attrs.s = Shape{2, 3};
  ce.attrs.axis = 1;
  // One sum over every element forward: 4 + 2 * 6.
  CHECK(referenceBudgetUlps("lean:TorchLean@0123abc", ce) == 16);
}

TEST_CASE("the device path judges with the conformance judge: the binary32 reference tape "
          "passes the hand-written vectors") {
  VectorCheckOptions options;
  options.target = Target::Device;
  options.deviceTape = [] { return conformance::makeReferenceTapeFloat(); };
  std::ostringstream log;
  auto r = checkVectorPaths({kData + "/pass"}, options, log);
  REQUIRE(r.ok());
  for (const auto& f : r.value().failures) FAIL_CHECK("tcId " << f.tcId << ": " << f.reason);
  CHECK(r.value().passed == r.value().tests);
  // Without a factory the device target is an error, not a crash.
  VectorCheckOptions none;
  none.target = Target::Device;
  CHECK_FALSE(checkVectorPaths({kData + "/pass"}, none, log).ok());
}

// ---- The committed corpus -------------------------------------------------------------------

TEST_CASE("the committed corpus has at least 25 explained tests per op") {
  auto files = collectVectorFiles({kGolden});
  REQUIRE(files.ok());
  std::map<std::string, std::size_t> perOp;
  std::map<std::string, std::set<std::string>> flags;
  std::map<std::string, std::size_t> results;
  for (const auto& path : files.value()) {
    auto f = loadVectorFile(path);
    REQUIRE(f.ok());
    CHECK(f.value().generator.provenance == kOracleProvenance);
    for (const auto& t : f.value().tests) {
      ++perOp[f.value().op];
      CHECK_FALSE(t.comment.empty());
      CHECK_FALSE(t.flags.empty());
      for (const auto& fl : t.flags) flags[f.value().op].insert(fl);
      ++results[expectationName(t.result)];
    }
  }
  for (const auto& op : conformance::opRegistry()) {
    INFO(op.name);
    CHECK(perOp[op.name] >= 25);
  }
  CHECK(results["invalid"] > 0);
  CHECK(results["acceptable"] > 0);
  // The docs/spec.md edge cases and known failure classes each op must cover, and a vector for each
  // of docs/spec.md's known divergences of TorchLean's own tape (section 7).
  const std::map<std::string, std::vector<std::string>> must = {
      {"softmaxLast", {"Empty", "Scalar", "RowOfOne", "NaN", "PosInf", "AllNegInf", "SomeNegInf",
                       "ExpOverflow", "OddWidth", "InvalidId", "ShapeMismatch", "TooLarge",
                       "ErrorOrder", "SeedMismatch"}},
      {"logSoftmaxLast", {"Empty", "Scalar", "RowOfOne", "NaN", "AllNegInf", "SomeNegInf",
                          "LargeNegative", "OddWidth", "TooLarge", "SeedMismatch"}},
      {"topKMask", {"KZero", "KAtLeastCols", "Ties", "NaN", "Scalar", "Empty", "NoGradient",
                    "OddWidth", "TooLarge", "SeedMismatch"}},
      {"layerNorm", {"MeanShifted", "ZeroVariance", "NegativeEpsilon", "BadDims", "InvalidId",
                     "ShapeMismatch", "TooLarge", "ErrorOrder", "OddWidth", "SeedMismatch",
                     "TorchLeanTapeDiverges"}},
      {"batchNorm", {"SpatialScalar", "SpatialRank", "ZeroVariance", "OneValuePerChannel",
                     "NegativeEpsilon", "IllFormed", "TooLarge", "ErrorOrder", "SeedMismatch",
                     "TorchLeanTapeDiverges", "EpsilonAbiUnsafe"}},
      {"crossEntropy", {"TargetNotNormalized", "MeanFalse", "LargeLogits", "Empty",
                        "AxisOutOfBounds", "InvalidId", "ShapeMismatch", "SeedMismatch"}},
      {"distill", {"TeacherRequiresGrad", "Empty", "LargeLogits", "AxisOutOfBounds",
                   "InvalidId", "ShapeMismatch", "SeedMismatch"}}};
  for (const auto& [op, needed] : must)
    for (const auto& flag : needed) {
      INFO(op << " needs flag " << flag);
      CHECK(flags[op].count(flag) == 1);
    }
}

TEST_CASE("every committed file names docs/spec.md anchors that exist and the TorchLean commit") {
  const std::string spec = readAll(kDir + "/../docs/spec.md");
  auto files = collectVectorFiles({kGolden});
  REQUIRE(files.ok());
  for (const auto& path : files.value()) {
    INFO(path);
    auto f = loadVectorFile(path);
    REQUIRE(f.ok());
    CHECK_FALSE(f.value().specRules.empty());
    REQUIRE(f.value().torchleanCommit);
    CHECK(*f.value().torchleanCommit == kTorchLeanCommit);
    for (const auto& rule : f.value().specRules) {
      INFO(rule);
      const std::string anchor = rule.substr(rule.find('#') + 1);
      CHECK(spec.find("<a id=\"" + anchor + "\"></a>") != std::string::npos);
    }
  }
}

TEST_CASE("every committed file reads back and formats to the same bytes") {
  auto files = collectVectorFiles({kGolden});
  REQUIRE(files.ok());
  CHECK(files.value().size() == corpusFiles().size());
  for (const auto& path : files.value()) {
    INFO(path);
    const std::string text = readAll(path);
    auto f = parseVectorText(text, path);
    REQUIRE(f.ok());
    auto again = formatVectorFile(f.value());
    REQUIRE(again.ok());
    CHECK(again.value() == text);
  }
}

// ---- Generation -----------------------------------------------------------------------------

namespace {
CorpusFile oneCase(CaseDef c, const std::string& op = "softmaxLast") {
  CorpusFile f{op, "test", {"h"}, {}, {"docs/spec.md#softmax-last"}};
  f.cases.push_back(std::move(c));
  return f;
}
}  // namespace

TEST_CASE("generation takes expected errors from the case, and fails when the oracle "
          "disagrees") {
  auto good = generateVectorFile(oneCase(
      CaseDef("invalid id", {"InvalidId"}).arg("x", 0).s({2}).invalid(errors::kInvalidNodeId)));
  REQUIRE(good.ok());
  CHECK(*good.value().tests[0].expected.error == errors::kInvalidNodeId);

  auto wrong = generateVectorFile(oneCase(
      CaseDef("invalid id", {"InvalidId"}).arg("x", 0).s({2}).invalid(errors::kShapeMismatch)));
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.message().find("but the oracle says \"autograd: invalid node id\"") !=
        std::string::npos);

  auto noError = generateVectorFile(oneCase(CaseDef("fine", {"Normal"})
                                                .leaf({2}, {0, 1})
                                                .arg("x", 0)
                                                .s({2})
                                                .invalid(errors::kShapeMismatch)));
  REQUIRE_FALSE(noError.ok());
  CHECK(noError.message().find("the oracle returned a value") != std::string::npos);

  auto failsValid = generateVectorFile(oneCase(CaseDef("bad", {"Normal"}).arg("x", 0).s({2})));
  REQUIRE_FALSE(failsValid.ok());
  CHECK(failsValid.message().find("on a case that expects a value") != std::string::npos);
}

TEST_CASE("generation rejects inputs that are not binary32 and undocumented flags") {
  auto b64 = generateVectorFile(
      oneCase(CaseDef("0.1", {"Normal"}).leaf({1}, {0.1}).arg("x", 0).s({1})));
  REQUIRE_FALSE(b64.ok());
  CHECK(b64.message().find("not representable in binary32") != std::string::npos);
  auto flag = generateVectorFile(
      oneCase(CaseDef("flag", {"NoSuchFlag"}).leaf({1}, {1}).arg("x", 0).s({1})));
  REQUIRE_FALSE(flag.ok());
  CHECK(flag.message().find("flag 'NoSuchFlag' has no description") != std::string::npos);
  auto upstream = generateVectorFile(
      oneCase(CaseDef("up", {"Normal"}).leaf({1}, {1}).arg("x", 0).s({1}).upstream({1}, {0.1})));
  REQUIRE_FALSE(upstream.ok());
}

TEST_CASE("generation is deterministic and records the oracle's provenance") {
  const CorpusFile def = conformance::findOp("softmaxLast")->corpus().at(0);
  auto a = generateVectorFile(def);
  auto b = generateVectorFile(def);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(formatVectorFile(a.value()).value() == formatVectorFile(b.value()).value());
  CHECK(a.value().generator.name == kGeneratorName);
  CHECK(a.value().generator.provenance == kOracleProvenance);
  for (const auto& [flag, text] : a.value().notes) CHECK(flagDescription(flag) == text);
}

TEST_CASE("generated files name their docs/spec.md rules and the TorchLean commit") {
  auto f = generateVectorFile(oneCase(
      CaseDef("invalid id", {"InvalidId"}).arg("x", 0).s({2}).invalid(errors::kInvalidNodeId)));
  REQUIRE(f.ok());
  CHECK(f.value().specRules == std::vector<std::string>{"docs/spec.md#softmax-last"});
  REQUIRE(f.value().torchleanCommit);
  CHECK(*f.value().torchleanCommit == "3447b74f6bf43f83ad50885851caf0bc01b4c53d");
  const std::string text = formatVectorFile(f.value()).value();
  CHECK(text.find("  \"specRules\": [\"docs/spec.md#softmax-last\"],\n") != std::string::npos);
  CHECK(text.find("  \"torchleanCommit\": \"3447b74f6bf43f83ad50885851caf0bc01b4c53d\",\n") !=
        std::string::npos);
  // A corpus file without rules, or with a rule that is not an anchor, is not generated.
  CorpusFile none = oneCase(CaseDef("x", {"InvalidId"}).arg("x", 0).s({2}).invalid(
      errors::kInvalidNodeId));
  none.specRules.clear();
  auto noRules = generateVectorFile(none);
  REQUIRE_FALSE(noRules.ok());
  CHECK(noRules.message().find("must name the docs/spec.md rules") != std::string::npos);
  none.specRules = {"SPEC.md section 3"};
  CHECK_FALSE(generateVectorFile(none).ok());
}

TEST_CASE("provenance fields are optional: files without them load, files with them round-trip") {
  const std::string text = readAll(kData + "/pass/softmaxLast-hand.json");
  auto plain = parseVectorText(text, "plain.json");
  REQUIRE(plain.ok());
  CHECK(plain.value().specRules.empty());
  CHECK_FALSE(plain.value().torchleanCommit);
  Json doc = Json::parse(text);
  Json with;
  for (const auto& [key, value] : doc.items()) {
    with[key] = value;
    if (key == "generator") {
      with["specRules"] = {"docs/spec.md#softmax-last", "docs/spec.md#row-op-last"};
      with["torchleanCommit"] = "3447b74f6bf43f83ad50885851caf0bc01b4c53d";
    }
  }
  auto f = parseVectorText(with.dump(2), "with.json");
  REQUIRE(f.ok());
  CHECK(f.value().specRules ==
        std::vector<std::string>{"docs/spec.md#softmax-last", "docs/spec.md#row-op-last"});
  CHECK(*f.value().torchleanCommit == "3447b74f6bf43f83ad50885851caf0bc01b4c53d");
  auto again = parseVectorText(formatVectorFile(f.value()).value(), "again.json");
  REQUIRE(again.ok());
  CHECK(again.value().specRules == f.value().specRules);
  CHECK(again.value().torchleanCommit == f.value().torchleanCommit);
}

TEST_CASE("malformed provenance fields are rejected with the field named") {
  const Json base = Json::parse(readAll(kData + "/pass/softmaxLast-hand.json"));
  struct Bad {
    const char* key;
    Json value;
    const char* message;
  };
  const std::vector<Bad> bad = {
      {"specRules", "docs/spec.md#softmax-last", "specRules: expected an array"},
      {"specRules", Json::array({"SPEC.md section 3"}), "specRules[0]: 'SPEC.md section 3' is not"},
      {"specRules", Json::array({"docs/spec.md#"}), "specRules[0]"},
      {"specRules", Json::array({"docs/spec.md#Softmax"}), "specRules[0]"},
      {"specRules", Json::array({"docs/spec.md#a--b"}), "specRules[0]"},
      {"specRules", Json::array({"docs/spec.md#uint32", "docs/spec.md#uint32"}),
       "specRules[1]: 'docs/spec.md#uint32' is listed twice"},
      {"specRules", Json::array({7}), "specRules[0]: expected a string"},
      {"torchleanCommit", "3447b74", "torchleanCommit: '3447b74' is not a commit hash"},
      {"torchleanCommit", "3447B74F6BF43F83AD50885851CAF0BC01B4C53D", "torchleanCommit"},
      {"torchleanCommit", 3447, "torchleanCommit: expected a string"},
  };
  for (const Bad& b : bad) {
    Json doc = base;
    doc[b.key] = b.value;
    const std::string m = loaderMessage(doc);
    INFO(b.key << " = " << b.value.dump() << ": " << m);
    CHECK(m.find(b.message) != std::string::npos);
  }
}

TEST_CASE("doubles are written in the shortest form that reads back") {
  CHECK(formatDouble(1e-5).value() == "1e-05");
  CHECK(formatDouble(0.1).value() == "0.1");
  CHECK(formatDouble(-0.5).value() == "-0.5");
  CHECK(formatDouble(1.0).value() == "1");
  CHECK_FALSE(formatDouble(std::nan("")).ok());
  CHECK(isBinary32(0.5));
  CHECK_FALSE(isBinary32(0.1));
  CHECK_FALSE(isBinary32(1e300));
  CHECK(isBinary32(-std::numeric_limits<double>::infinity()));
  CHECK(fromBits(toBits(-0.0)) == 0.0);
  CHECK(toBits(-0.0) == 9223372036854775808ULL);
}

// ---- Epsilon and kernel ABI v1 (docs/spec.md#epsilon-abi-safe) ----------------------------

namespace {
conformance::TestCase normCase(const std::string& op, std::size_t rows, std::size_t cols,
                               std::vector<double> x, double epsilon) {
  conformance::TestCase c;
  c.op = op;
  c.leaves.push_back({{{rows, cols}, std::move(x)}, true});
  c.leaves.push_back({{{op == "layerNorm" ? cols : rows}, std::vector<double>(
                           op == "layerNorm" ? cols : rows, 1.0)}, true});
  c.leaves.push_back(c.leaves.back());
  c.call = {{"x", 0}, {"gamma", 1}, {"beta", 2}};
  if (op == "layerNorm") {
    c.attrs.seqLen = rows;
    c.attrs.embedDim = cols;
  } else {
    c.attrs.channels = rows;
    c.attrs.spatial = Shape{cols};
  }
  c.attrs.epsilon = epsilon;
  return c;
}
}  // namespace

TEST_CASE("rounding epsilon to binary32 is classified per row: exact, safe or unsafe") {
  using conformance::EpsilonAbi;
  using conformance::classifyEpsilonAbi;
  for (const char* op : {"layerNorm", "batchNorm"}) {
    INFO(op);
    // A binary32 epsilon, or NaN: nothing changes.
    CHECK(classifyEpsilonAbi(normCase(op, 1, 3, {1, 2, 3}, 0.25)) == EpsilonAbi::Exact);
    CHECK(classifyEpsilonAbi(normCase(op, 1, 3, {1, 2, 3}, -2)) == EpsilonAbi::Exact);
    CHECK(classifyEpsilonAbi(normCase(op, 1, 3, {1, 2, 3}, std::nan(""))) == EpsilonAbi::Exact);
    // 0.1 on var 2/3: std changes by about 1e-9 relative.
    CHECK(classifyEpsilonAbi(normCase(op, 1, 3, {1, 2, 3}, 0.1)) == EpsilonAbi::Safe);
    // 1e-3 on a constant row: std = sqrt(e) changes by 2.4e-8 < 2^-25: still safe.
    CHECK(classifyEpsilonAbi(normCase(op, 1, 3, {5, 5, 5}, 1e-3)) == EpsilonAbi::Safe);
    // -2.1 on var 1: var + e and var + fl32(e) are both negative, std = 0 either way.
    CHECK(classifyEpsilonAbi(normCase(op, 1, 2, {1, 3}, -2.1)) == EpsilonAbi::Exact);
    // A NaN row is NaN either way; the other row decides.
    CHECK(classifyEpsilonAbi(normCase(op, 2, 2, {std::nan(""), 1, 1, 3}, -2.1)) ==
          EpsilonAbi::Exact);
    // 1e-50 rounds to 0: a constant row gives xhat 0 at e and NaN at 0.
    CHECK(classifyEpsilonAbi(normCase(op, 2, 2, {1, 3, 4, 4}, 1e-50)) == EpsilonAbi::Unsafe);
    // -(1 - 2^-30) rounds to -1: var 1 gives std 2^-15 at e and 0 at fl32(e).
    CHECK(classifyEpsilonAbi(normCase(op, 1, 2, {-1, 1}, -(1 - 0x1p-30))) == EpsilonAbi::Unsafe);
    // x = [-1 - 2^-19, 1]: var = (1 + 2^-20)^2; e = -(1 - 2^-20) - 2^-30 rounds to
    // -(1 - 2^-20): both sums near 3 * 2^-20 and positive, but they differ by 2^-30, so std
    // changes by about 2^-11 / 3 relative, far more than 2^-25.
    CHECK(classifyEpsilonAbi(normCase(op, 1, 2, {-1 - 0x1p-19, 1}, -(1 - 0x1p-20) - 0x1p-30)) ==
          EpsilonAbi::Unsafe);
    // 1e39 rounds to +inf.
    CHECK(classifyEpsilonAbi(normCase(op, 1, 2, {1, 3}, 1e39)) == EpsilonAbi::Unsafe);
  }
  // Other operations have no epsilon.
  conformance::TestCase softmax;
  softmax.op = "softmaxLast";
  softmax.attrs.epsilon = 1e-50;
  CHECK(classifyEpsilonAbi(softmax) == EpsilonAbi::Exact);
}

TEST_CASE("an ABI-unsafe case is judged on the reference and not judged on a device target") {
  // batchNorm x = [-1, 1], epsilon -(1 - 2^-30): the oracle's std is 2^-15 (y = [-32768,
  // 32768]); through ABI v1 epsilon is -1 and std 0. The binary32 reference tape stands in for
  // a kernel (it rounds epsilon as the ABI does) and would fail if it were judged.
  CaseDef d("epsilon -(1 - 2^-30) rounds to -1", {"NegativeEpsilon", "EpsilonAbiUnsafe"});
  d.leaf({1, 2}, {-1, 1}).leaf({1}, {1}).leaf({1}, {0})
      .arg("x", 0).arg("gamma", 1).arg("beta", 2)
      .channels(1).spatial({2}).epsilon(-(1 - 0x1p-30)).upstream({1, 2}, {1, 1});
  CorpusFile def = oneCase(d, "batchNorm");
  def.specRules = {"docs/spec.md#batch-norm"};
  auto f = generateVectorFile(def);
  REQUIRE(f.ok());
  const auto& value = f.value().tests[0].expected.value->values;
  CHECK(value == std::vector<double>{-32768, 32768});
  std::ostringstream log;
  auto ref = checkVectorFiles({f.value()}, VectorCheckOptions{}, log);
  REQUIRE(ref.ok());
  CHECK(ref.value().passed == 1);
  VectorCheckOptions device;
  device.target = Target::Device;
  device.deviceTape = [] { return conformance::makeReferenceTapeFloat(); };
  device.verbose = true;
  auto dev = checkVectorFiles({f.value()}, device, log);
  REQUIRE(dev.ok());
  CHECK(dev.value().notJudged == 1);
  CHECK(dev.value().passed == 0);
  CHECK(dev.value().failed == 0);
  REQUIRE(dev.value().notJudgedTests.size() == 1);
  CHECK(dev.value().notJudgedTests[0].tcId == f.value().tests[0].tcId);
  CHECK(dev.value().notJudgedTests[0].reason.find("docs/spec.md#epsilon-abi-safe") !=
        std::string::npos);
  CHECK(log.str().find("NOT JUDGED") != std::string::npos);
  std::ostringstream report;
  printVectorCheckReport(dev.value(), Target::Device, report);
  CHECK(report.str().find("failed:0 not-judged:1") != std::string::npos);
  // Generation insists on the flag exactly when the classification says unsafe.
  def.cases[0].flags = {"NegativeEpsilon"};
  auto unflagged = generateVectorFile(def);
  REQUIRE_FALSE(unflagged.ok());
  CHECK(unflagged.message().find("flag it EpsilonAbiUnsafe") != std::string::npos);
  def.cases[0].flags = {"NegativeEpsilon", "EpsilonAbiUnsafe"};
  def.cases[0].tc.attrs.epsilon = -0.5;
  auto overflagged = generateVectorFile(def);
  REQUIRE_FALSE(overflagged.ok());
  CHECK(overflagged.message().find("the flag EpsilonAbiUnsafe is set") != std::string::npos);
}

// ---- ParamIO ------------------------------------------------------------------------------

TEST_CASE("ParamIO files import as leaves; other formats and malformed files are rejected") {
  auto params = parseParamIO(readAll(kData + "/paramio/params.json"), "params.json");
  REQUIRE(params.ok());
  REQUIRE(params.value().size() == 2);
  CHECK(params.value()[0].shape == Shape{2, 2});
  CHECK(params.value()[0].values == std::vector<double>{1, 2, -1, 0});
  CHECK(params.value()[1].shape == Shape{});
  auto leaves = paramsAsLeavesJson(params.value(), "params.json");
  REQUIRE(leaves.ok());
  CHECK(leaves.value() ==
        "[\n"
        "  {\"shape\": [2, 2], \"requiresGrad\": false, \"values\": [4607182418800017408, "
        "4611686018427387904, 13830554455654793216, 0]},\n"
        "  {\"shape\": [], \"requiresGrad\": false, \"values\": [4602678819172646912]}\n"
        "]\n");
  // The output pastes into a vector: it is a valid `leaves` array.
  const Json pasted = Json::parse(leaves.value());
  CHECK(pasted.size() == 2);

  auto other = parseParamIO(readAll(kData + "/paramio/wrong-format.json"), "w.json");
  REQUIRE_FALSE(other.ok());
  CHECK(other.message().find("unsupported format 'torchlean_paramlist_v0'") != std::string::npos);
  auto count = parseParamIO(readAll(kData + "/paramio/count-mismatch.json"), "c.json");
  REQUIRE_FALSE(count.ok());
  CHECK(count.message().find("params[0].values: holds 2 values but shape [3] needs 3") !=
        std::string::npos);
  auto notB32 = parseParamIO(readAll(kData + "/paramio/not-binary32.json"), "n.json");
  REQUIRE(notB32.ok());
  CHECK_FALSE(paramsAsLeavesJson(notB32.value(), "n.json").ok());
  CHECK_FALSE(parseParamIO("{\"format\": 1}", "x").ok());
  CHECK_FALSE(parseParamIO("[", "x").ok());
}
