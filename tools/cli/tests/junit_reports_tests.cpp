// Results as JUnit suites: which test cases fail, skip or pass, and what a failure says.
#include <catch2/catch.hpp>

#include "junit_reports.h"

using namespace tapecheck;
using namespace tapecheck::cli;

namespace {

conformance::GroupStats group(const std::string& op, const std::string& pass,
                              const std::string& cls, std::uint64_t cases) {
  conformance::GroupStats g;
  g.op = op;
  g.pass = pass;
  g.shapeClass = cls;
  g.cases = cases;
  return g;
}

conformance::RunReport handMadeRun() {
  conformance::RunReport r;
  r.groups.push_back(group("softmaxLast", "fwd", "cols-warp", 10));
  conformance::GroupStats failing = group("softmaxLast", "bwd", "rows-odd", 5);
  failing.failures = 1;
  conformance::CaseExample worst;
  worst.group = "softmaxLast bwd rows-odd";
  worst.shape = "[3,5]";
  worst.reason = "dx: 40 ulps > budget 16 <&\"'";
  worst.reproducer = "tapecheck run --kernels 'a&b.so' --case 4";
  worst.valuesFile = "/tmp/values.json";
  failing.examples.push_back(worst);
  r.groups.push_back(failing);
  conformance::GroupStats skipped = group("topKMask", "errors", "invalid", 3);
  skipped.skipped = 3;
  r.groups.push_back(skipped);
  conformance::GroupStats mistrusted = group("layerNorm", "fwd", "rows", 4);
  mistrusted.mistrusted = 4;
  r.groups.push_back(mistrusted);
  return r;
}

}  // namespace

TEST_CASE("a run gives a suite per op and a test case per status group", "[junit]") {
  const std::vector<JunitSuite> suites = runJunitSuites(handMadeRun());
  REQUIRE(suites.size() == 3);
  CHECK(suites[0].name == "softmaxLast");
  CHECK(suites[1].name == "topKMask");
  CHECK(suites[2].name == "layerNorm");
  REQUIRE(suites[0].cases.size() == 2);
  const JunitCase& passed = suites[0].cases[0];
  CHECK(passed.name == "fwd cols-warp");
  CHECK(passed.classname == "softmaxLast");
  CHECK(passed.outcome == JunitOutcome::Passed);
  CHECK(passed.assertions == std::optional<std::uint64_t>(10));
  const JunitCase& failed = suites[0].cases[1];
  CHECK(failed.outcome == JunitOutcome::Failed);
  CHECK(failed.message ==
        "dx: 40 ulps > budget 16 <&\"'; reproduce: tapecheck run --kernels 'a&b.so' --case 4");
  CHECK_THAT(failed.detail,
             Catch::Contains("case [3,5]: dx: 40 ulps > budget 16 <&\"'\n"
                             "values: /tmp/values.json\n"
                             "reproduce: tapecheck run --kernels 'a&b.so' --case 4\n"));
  CHECK(suites[1].cases[0].outcome == JunitOutcome::Skipped);
  CHECK_THAT(suites[1].cases[0].message, Catch::StartsWith("SKIPPED topKMask errors invalid"));
  CHECK(suites[2].cases[0].outcome == JunitOutcome::Skipped);
  CHECK_THAT(suites[2].cases[0].message, Catch::StartsWith("MISTRUSTED layerNorm fwd rows"));
}

TEST_CASE("a failing group's reason and reproducer reach the XML escaped", "[junit]") {
  const std::string xml = junitXml("tapecheck run", runJunitSuites(handMadeRun()));
  CHECK_THAT(xml, Catch::Contains(
                      "<failure message=\"dx: 40 ulps &gt; budget 16 &lt;&amp;&quot;&apos;; "
                      "reproduce: tapecheck run --kernels &apos;a&amp;b.so&apos; --case 4\""));
  CHECK_THAT(xml, Catch::Contains("tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"2\""));
}

TEST_CASE("a vector check gives a suite per file and a test case per vector", "[junit]") {
  vectors::VectorFile file;
  file.path = "/data/my vectors.json";
  file.op = "softmaxLast";
  file.tests.resize(2);
  file.tests[0].tcId = 1;
  file.tests[1].tcId = 2;
  file.tests[1].comment = "one ulp off";
  vectors::VectorCheckResult result;
  result.failures.push_back({file.path, "softmaxLast", 2, "value[1]: 3 ulps > 2"});
  const std::vector<JunitSuite> suites =
      vectorJunitSuites({file}, result, "tapecheck vectors check --target device --kernels aten");
  REQUIRE(suites.size() == 1);
  CHECK(suites[0].name == "/data/my vectors.json");
  REQUIRE(suites[0].cases.size() == 2);
  CHECK(suites[0].cases[0].name == "tcId 1");
  CHECK(suites[0].cases[0].classname == "softmaxLast");
  CHECK(suites[0].cases[0].outcome == JunitOutcome::Passed);
  CHECK(suites[0].cases[1].name == "tcId 2");
  CHECK(suites[0].cases[1].outcome == JunitOutcome::Failed);
  CHECK(suites[0].cases[1].message ==
        "value[1]: 3 ulps > 2; reproduce: tapecheck vectors check --target device --kernels aten "
        "'/data/my vectors.json'");
  CHECK_THAT(suites[0].cases[1].detail, Catch::Contains("one ulp off\n"));
}

TEST_CASE("a vector left unjudged on the device is skipped, not passed", "[junit]") {
  vectors::VectorFile file;
  file.path = "layerNorm.json";
  file.op = "layerNorm";
  file.tests.resize(2);
  file.tests[0].tcId = 7;
  file.tests[1].tcId = 8;
  vectors::VectorCheckResult result;
  result.notJudgedTests.push_back({file.path, "layerNorm", 8, "not judged: epsilon", 0});
  const std::vector<JunitSuite> suites =
      vectorJunitSuites({file}, result, "tapecheck vectors check --target device --kernels aten");
  REQUIRE(suites.size() == 1);
  REQUIRE(suites[0].cases.size() == 2);
  CHECK(suites[0].cases[0].outcome == JunitOutcome::Passed);
  CHECK(suites[0].cases[1].outcome == JunitOutcome::Skipped);
  CHECK(suites[0].cases[1].message == "not judged: epsilon");
}

TEST_CASE("a rejected certificate fails its verdict and the rejected pass", "[junit]") {
  certify::Certificate cert;
  cert.verdict = certify::Verdict::Rejected;
  cert.reasons = {"softmaxLast bwd: 1 of 5 cases failed", "layerNorm: not tested"};
  certify::OpRecord softmax;
  softmax.op = "softmaxLast";
  certify::PassRecord fwd;
  fwd.pass = "fwd";
  fwd.cases = 5;
  certify::PassRecord bwd;
  bwd.pass = "bwd";
  bwd.cases = 5;
  bwd.failures = 1;
  bwd.verdict = certify::Verdict::Rejected;
  bwd.reasons = {cert.reasons[0]};
  conformance::CaseExample worst;
  worst.shape = "[2,2]";
  worst.reason = "dx off";
  worst.reproducer = "tapecheck run --case 1";
  bwd.examples = {worst};
  softmax.passes = {fwd, bwd};
  certify::OpRecord layerNorm;
  layerNorm.op = "layerNorm";
  layerNorm.reasons = {cert.reasons[1]};
  certify::PassRecord none;
  none.pass = "fwd";
  layerNorm.passes = {none};
  cert.ops = {softmax, layerNorm};

  const std::vector<JunitSuite> suites = certificateJunitSuites(cert);
  REQUIRE(suites.size() == 3);
  CHECK(suites[0].name == "certificate");
  REQUIRE(suites[0].cases.size() == 1);
  CHECK(suites[0].cases[0].outcome == JunitOutcome::Failed);
  CHECK(suites[0].cases[0].message == "REJECTED: 2 reasons");
  CHECK(suites[0].cases[0].detail ==
        "softmaxLast bwd: 1 of 5 cases failed\nlayerNorm: not tested\n");
  REQUIRE(suites[1].cases.size() == 2);
  CHECK(suites[1].cases[0].outcome == JunitOutcome::Passed);
  CHECK(suites[1].cases[1].outcome == JunitOutcome::Failed);
  CHECK(suites[1].cases[1].message ==
        "softmaxLast bwd: 1 of 5 cases failed; reproduce: tapecheck run --case 1");
  REQUIRE(suites[2].cases.size() == 2);
  CHECK(suites[2].cases[0].name == "op");
  CHECK(suites[2].cases[0].outcome == JunitOutcome::Failed);
  CHECK(suites[2].cases[1].outcome == JunitOutcome::Skipped);
}

TEST_CASE("a certified certificate has no failing test case", "[junit]") {
  certify::Certificate cert;
  certify::OpRecord op;
  op.op = "softmaxLast";
  certify::PassRecord fwd;
  fwd.pass = "fwd";
  fwd.cases = 3;
  op.passes = {fwd};
  cert.ops = {op};
  const std::string xml = junitXml("c", certificateJunitSuites(cert));
  CHECK_THAT(xml, Catch::Contains("<testsuites name=\"c\" tests=\"2\" failures=\"0\""));
}

TEST_CASE("shell words are quoted only when they need it", "[junit]") {
  CHECK(shellWord("vectors/golden/a-b_c.json") == "vectors/golden/a-b_c.json");
  CHECK(shellWord("my file") == "'my file'");
  CHECK(shellWord("it's") == "'it'\\''s'");
  CHECK(shellWord("") == "''");
}
