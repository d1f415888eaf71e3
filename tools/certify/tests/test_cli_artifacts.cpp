// Hidden checks ([.cli]) on files written by `tapecheck certify`; the CLI driver scripts run them
// with TAPECHECK_CERT_FILES (and TAPECHECK_CERT_COMPARE) in the environment. They are not part of
// the unit run: they need the CLI's output.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tapecheck/certify/certificate_json.h"
#include "tapecheck/certify/schema_check.h"

using namespace tapecheck::certify;

namespace {

std::vector<std::string> splitList(const char* text) {
  std::vector<std::string> out;
  if (!text) return out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ':');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

TEST_CASE("certificates written by the CLI validate against the schema", "[.cli][schema]") {
  const auto files = splitList(std::getenv("TAPECHECK_CERT_FILES"));
  REQUIRE_FALSE(files.empty());
  for (const std::string& path : files) {
    INFO(path);
    auto text = readCertificateFile(path);  // validates against the compiled-in schema
    if (!text) FAIL(text.message());
    // And against the committed schema file, independently of the compiled-in copy.
    std::ifstream schemaFile(TAPECHECK_CERT_SCHEMA_PATH);
    std::ifstream doc(path);
    const auto violations = validateAgainstSchema(nlohmann::json::parse(doc),
                                                  nlohmann::json::parse(schemaFile));
    for (const auto& v : violations) UNSCOPED_INFO(v);
    CHECK(violations.empty());
  }
}

TEST_CASE("a merged certificate equals the unsharded one in every count", "[.cli][merge]") {
  const auto files = splitList(std::getenv("TAPECHECK_CERT_COMPARE"));
  REQUIRE(files.size() == 2);
  auto a = readCertificateFile(files[0]);
  auto b = readCertificateFile(files[1]);
  if (!a) FAIL(a.message());
  if (!b) FAIL(b.message());
  const Certificate& x = a.value();
  const Certificate& y = b.value();
  CHECK_FALSE(x.shard);
  CHECK_FALSE(y.shard);
  CHECK(x.verdict == y.verdict);
  CHECK(x.reasons == y.reasons);
  CHECK(x.totals.tests == y.totals.tests);
  CHECK(x.totals.passed == y.totals.passed);
  CHECK(x.totals.failed == y.totals.failed);
  CHECK(x.totals.mistrusted == y.totals.mistrusted);
  CHECK(x.totals.skipped == y.totals.skipped);
  CHECK(x.identity.kernelsSha256 == y.identity.kernelsSha256);
  CHECK(x.identity.corpusSha256 == y.identity.corpusSha256);
  REQUIRE(x.ops.size() == y.ops.size());
  for (const OpRecord& op : x.ops) {
    const OpRecord* other = y.findOp(op.op);
    REQUIRE(other);
    CHECK(op.verdict == other->verdict);
    REQUIRE(op.passes.size() == other->passes.size());
    for (const PassRecord& p : op.passes) {
      const PassRecord* q = y.findPass(op.op, p.pass);
      INFO(op.op << " " << p.pass);
      REQUIRE(q);
      CHECK(p.cases == q->cases);
      CHECK(p.failures == q->failures);
      CHECK(p.mistrusted == q->mistrusted);
      CHECK(p.skipped == q->skipped);
      CHECK(p.maxUlps == q->maxUlps);
      CHECK(p.p99Ulps == q->p99Ulps);
      CHECK(p.meanUlps == q->meanUlps);
      CHECK(p.budgetUlps == q->budgetUlps);
      CHECK(p.verdict == q->verdict);
    }
  }
}

TEST_CASE("a rejected certificate names the broken op", "[.cli][verdict]") {
  const auto files = splitList(std::getenv("TAPECHECK_CERT_FILES"));
  const char* op = std::getenv("TAPECHECK_CERT_EXPECT_OP");
  REQUIRE(files.size() == 1);
  REQUIRE(op);
  auto cert = readCertificateFile(files[0]);
  if (!cert) FAIL(cert.message());
  CHECK(cert.value().verdict == Verdict::Rejected);
  bool named = false;
  for (const std::string& reason : cert.value().reasons) {
    UNSCOPED_INFO(reason);
    named = named || reason.rfind(std::string(op) + " ", 0) == 0 ||
            reason.rfind(std::string(op) + ":", 0) == 0;
  }
  CHECK(named);
  const OpRecord* record = cert.value().findOp(op);
  REQUIRE(record);
  CHECK(record->verdict == Verdict::Rejected);
}

// The partial plugin (device/plugins: softmax_fwd and softmax_bwd only) as `certify` wrote it:
// every op and pass listed; softmaxLast's passes certified, every other op's not provided, with
// the entry points each pass lacks.
TEST_CASE("a partial certificate lists provided and not provided passes", "[.cli][coverage]") {
  const auto files = splitList(std::getenv("TAPECHECK_CERT_FILES"));
  REQUIRE(files.size() == 1);
  auto read = readCertificateFile(files[0]);
  if (!read) FAIL(read.message());
  const Certificate& c = read.value();
  CHECK(c.verdict == Verdict::Certified);
  REQUIRE(c.findOp("softmaxLast"));
  CHECK(c.findOp("softmaxLast")->verdict == Verdict::Certified);
  for (const char* pass : {"fwd", "bwd", "errors", "vectors"}) {
    INFO(pass);
    REQUIRE(c.findPass("softmaxLast", pass));
    CHECK(c.findPass("softmaxLast", pass)->verdict == Verdict::Certified);
    CHECK(c.findPass("softmaxLast", pass)->cases > 0);
  }
  for (const OpRecord& op : c.ops) {
    if (op.op == "softmaxLast") continue;
    INFO(op.op);
    CHECK(op.verdict == Verdict::NotProvided);
    CHECK_FALSE(op.passes.empty());
    for (const PassRecord& p : op.passes) {
      CHECK(p.verdict == Verdict::NotProvided);
      CHECK(p.cases == 0);
      CHECK_FALSE(p.missingEntries.empty());
    }
  }
  REQUIRE(c.findPass("layerNorm", "bwd"));
  CHECK(c.findPass("layerNorm", "bwd")->missingEntries ==
        std::vector<std::string>{"layer_norm_fwd", "layer_norm_bwd"});
  CHECK(c.findPass("topKMask", "fwd")->missingEntries == std::vector<std::string>{"topk_mask"});
}
