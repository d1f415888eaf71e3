#include <catch2/catch.hpp>

#include <fstream>
#include <limits>
#include <sstream>

#include "fixtures.h"
#include "tapecheck/certify/certificate_json.h"
#include "tapecheck/certify/schema_check.h"
#include "tapecheck/certify/verdict.h"

using namespace tapecheck::certify;
using namespace tapecheck::certify::testing;
using nlohmann::json;

namespace {

Certificate judgedWithEverything() {
  auto report = cleanReport();
  report.passes[0].failures = 1;
  tapecheck::conformance::CaseExample ex;
  ex.group = "softmaxLast fwd rows-odd";
  ex.shape = "[3,1025]";
  ex.reason = "y[2,7]: 9 ulps > 4";
  ex.reproducer = "tapecheck run --ops softmaxLast --seed 7 --case 12";
  ex.errorUlps = 9;
  report.passes[0].examples.push_back(ex);
  report.passes[1].errorsUlps[0] = std::numeric_limits<double>::infinity();
  Certificate base = certificateOf(cleanReport());
  judge(base, JudgeOptions{});
  Certificate c = certificateOf(report);
  judge(c, JudgeOptions{{"softmaxLast", "topKMask", "layerNorm"}}, &base, std::string(64, 'd'));
  return c;
}

}  // namespace

TEST_CASE("a certificate validates against its own schema", "[json][schema]") {
  Certificate c = judgedWithEverything();
  const json doc = certificateToJson(c);
  CHECK(doc.at("format") == "tapecheck-certificate-v1");
  CHECK(doc.at("kind") == "certificate");
  CHECK_FALSE(doc.at("ops").at(0).at("passes").at(0).contains("errorsUlps"));
  const auto violations = validateAgainstSchema(doc, certificateSchema());
  INFO(doc.dump(2));
  for (const auto& v : violations) UNSCOPED_INFO(v);
  CHECK(violations.empty());
}

TEST_CASE("a shard certificate carries its error lists and validates", "[json][schema]") {
  Certificate c = certificateOf(cleanReport());
  c.shard = ShardInfo{0, 2};
  judge(c, JudgeOptions{});
  const json doc = certificateToJson(c);
  CHECK(doc.at("kind") == "shard");
  CHECK(doc.at("shard").at("count") == 2);
  CHECK(doc.at("ops").at(0).at("passes").at(0).at("errorsUlps").size() == 40);
  CHECK(validateAgainstSchema(doc, certificateSchema()).empty());
}

TEST_CASE("a certificate survives writing and reading back", "[json]") {
  Certificate c = judgedWithEverything();
  const std::string text = certificateText(c);
  auto back = certificateFromJson(json::parse(text));
  REQUIRE(back);
  CHECK(certificateText(back.value()) == text);
  CHECK(back.value().findPass("softmaxLast", "bwd")->maxUlps ==
        std::numeric_limits<double>::infinity());
  CHECK(back.value().changes.size() == c.changes.size());
}

TEST_CASE("non-finite errors are written as strings", "[json]") {
  CHECK(ulpsToJson(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(ulpsToJson(std::numeric_limits<double>::quiet_NaN()) == "nan");
  CHECK(ulpsToJson(2.5) == 2.5);
  CHECK(std::isnan(ulpsFromJson("nan")));
  CHECK(ulpsFromJson("inf") == std::numeric_limits<double>::infinity());
}

TEST_CASE("the schema catches what a malformed certificate gets wrong", "[schema]") {
  Certificate c = judgedWithEverything();
  const json good = certificateToJson(c);
  const json& schema = certificateSchema();

  json missing = good;
  missing.erase("kernels");
  CHECK_FALSE(validateAgainstSchema(missing, schema).empty());

  json extra = good;
  extra["surprise"] = 1;
  CHECK_FALSE(validateAgainstSchema(extra, schema).empty());

  json badSha = good;
  badSha["kernels"]["sha256"] = "ABC";
  CHECK_FALSE(validateAgainstSchema(badSha, schema).empty());

  json badCount = good;
  badCount["ops"][0]["passes"][0]["cases"] = -1;
  CHECK_FALSE(validateAgainstSchema(badCount, schema).empty());

  json badVerdict = good;
  badVerdict["verdict"] = "maybe";
  CHECK_FALSE(validateAgainstSchema(badVerdict, schema).empty());

  json badUlps = good;
  badUlps["ops"][0]["passes"][0]["maxUlps"] = "big";
  CHECK_FALSE(validateAgainstSchema(badUlps, schema).empty());

  json shardWithoutInfo = good;
  shardWithoutInfo["kind"] = "shard";
  shardWithoutInfo.erase("baseline");
  CHECK_FALSE(validateAgainstSchema(shardWithoutInfo, schema).empty());

  json fullWithShardInfo = good;
  fullWithShardInfo["shard"] = {{"index", 0}, {"count", 2}};
  CHECK_FALSE(validateAgainstSchema(fullWithShardInfo, schema).empty());

  auto refused = certificateFromJson(badSha);
  REQUIRE_FALSE(refused);
  CHECK(refused.message().find("/kernels/sha256") != std::string::npos);
  CHECK_FALSE(certificateFromJson(json{{"format", "something-else"}}));
  CHECK_FALSE(certificateFromJson(json::array()));
}

TEST_CASE("the validator reports keywords it does not support", "[schema]") {
  const json schema = {{"type", "object"}, {"patternProperties", json::object()}};
  const auto errors = validateAgainstSchema(json::object(), schema);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("unsupported schema keyword \"patternProperties\"") != std::string::npos);
}

TEST_CASE("the validator's keywords behave as JSON Schema says", "[schema]") {
  const json schema = json::parse(R"({
    "$defs": { "small": { "type": "integer", "minimum": 0, "maximum": 9 } },
    "type": "object",
    "required": ["a"],
    "properties": {
      "a": { "$ref": "#/$defs/small" },
      "b": { "oneOf": [ { "type": "string" }, { "type": "number" } ] },
      "c": { "type": "array", "items": { "enum": [1, 2] }, "minItems": 1, "maxItems": 2 },
      "d": { "type": "string", "minLength": 2, "pattern": "^x" }
    },
    "additionalProperties": false
  })");
  CHECK(validateAgainstSchema(json::parse(R"({"a": 3})"), schema).empty());
  CHECK(validateAgainstSchema(json::parse(R"({"a": 3.0})"), schema).empty());
  CHECK_FALSE(validateAgainstSchema(json::parse(R"({"a": 3.5})"), schema).empty());
  CHECK_FALSE(validateAgainstSchema(json::parse(R"({"a": 10})"), schema).empty());
  CHECK_FALSE(validateAgainstSchema(json::parse(R"({"b": "x"})"), schema).empty());
  CHECK(validateAgainstSchema(json::parse(R"({"a": 1, "b": "x", "c": [1, 2], "d": "xy"})"),
                              schema).empty());
  CHECK_FALSE(validateAgainstSchema(json::parse(R"({"a": 1, "b": true})"), schema).empty());
  CHECK_FALSE(validateAgainstSchema(json::parse(R"({"a": 1, "c": []})"), schema).empty());
  CHECK_FALSE(validateAgainstSchema(json::parse(R"({"a": 1, "c": [1, 2, 1]})"), schema).empty());
  CHECK_FALSE(validateAgainstSchema(json::parse(R"({"a": 1, "c": [3]})"), schema).empty());
  CHECK_FALSE(validateAgainstSchema(json::parse(R"({"a": 1, "d": "yy"})"), schema).empty());
  CHECK_FALSE(validateAgainstSchema(json::parse(R"({"a": 1, "d": "x"})"), schema).empty());
}

TEST_CASE("the compiled-in schema is the committed schema file", "[schema]") {
  std::ifstream in(TAPECHECK_CERT_SCHEMA_PATH);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(json::parse(text.str()) == certificateSchema());
}

TEST_CASE("reading a certificate file names the file in every error", "[json]") {
  const std::string path = "cert_json_test_malformed.json";
  {
    std::ofstream out(path);
    out << "{ not json";
  }
  auto bad = readCertificateFile(path);
  REQUIRE_FALSE(bad);
  CHECK(bad.message().find(path) != std::string::npos);
  std::remove(path.c_str());
  CHECK_FALSE(readCertificateFile("no-such-certificate.json"));
}

TEST_CASE("a certificate written before case logs existed still loads as a baseline", "[json]") {
  // The certificate of the CUDA kernels 1.27.0 (tests/data): no deviceKind, no case logs.
  auto old = readCertificateFile(TAPECHECK_OLD_CERTIFICATE);
  INFO((old ? std::string() : old.message()));
  REQUIRE(old);
  CHECK(old.value().identity.kernelsVersion == "1.27.0");
  CHECK(old.value().identity.deviceKind == "cuda");  // read from its device line
  CHECK(deviceKindOf("cpu (LibTorch 1.13.0)") == "cpu");
  CHECK(deviceKindOf("host: the reference tape at binary32 (a stand-in, not a kernel)").empty());
}
