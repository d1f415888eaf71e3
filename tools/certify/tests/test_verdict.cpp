#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "fixtures.h"
#include "tapecheck/certify/verdict.h"

using namespace tapecheck::certify;
using namespace tapecheck::certify::testing;

namespace {

bool anyReasonHas(const Certificate& c, const std::string& a, const std::string& b = "") {
  for (const std::string& r : c.reasons)
    if (r.find(a) != std::string::npos && r.find(b) != std::string::npos) return true;
  return false;
}

const double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("summarizeErrors gives max, nearest-rank p99 and mean", "[stats]") {
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  ErrorSummary s = summarizeErrors(hundred);
  CHECK(s.maxUlps == 100);
  CHECK(s.p99Ulps == 99);
  CHECK(s.meanUlps == Approx(50.5));
  std::vector<double> reversed(hundred.rbegin(), hundred.rend());
  ErrorSummary r = summarizeErrors(reversed);
  CHECK(r.p99Ulps == s.p99Ulps);
  CHECK(r.meanUlps == s.meanUlps);  // exactly: summed in sorted order
  CHECK(summarizeErrors({3.0}).p99Ulps == 3.0);
  CHECK(summarizeErrors({}).maxUlps == 0);
  ErrorSummary n = summarizeErrors({1.0, std::numeric_limits<double>::quiet_NaN()});
  CHECK(n.maxUlps == kInf);
}

TEST_CASE("a report with no failure within budget is certified", "[verdict]") {
  Certificate c = certificateOf(cleanReport());
  judge(c, JudgeOptions{{"softmaxLast", "topKMask"}});
  CHECK(c.verdict == Verdict::Certified);
  CHECK(c.reasons.empty());
  for (const OpRecord& op : c.ops) CHECK(op.verdict == Verdict::Certified);
  CHECK(c.identity.kernelsName == "test-kernels");
  CHECK(c.findPass("softmaxLast", "fwd")->maxUlps == 2.0);
}

TEST_CASE("one failing pass rejects and names its op and pass", "[verdict]") {
  auto report = cleanReport();
  report.passes[1].failures = 3;
  report.passes[1].errorsUlps.back() = 40;  // over the budget of 16
  report.passes[1].maxUlps = 40;
  Certificate c = certificateOf(report);
  judge(c, JudgeOptions{});
  CHECK(c.verdict == Verdict::Rejected);
  CHECK(anyReasonHas(c, "softmaxLast bwd", "3 of 40 cases failed"));
  CHECK(c.reasons.size() == 1);  // the failure line already gives the max and the budget
  CHECK(c.findOp("softmaxLast")->verdict == Verdict::Rejected);
  CHECK(c.findPass("softmaxLast", "fwd")->verdict == Verdict::Certified);
  CHECK(c.findPass("softmaxLast", "bwd")->verdict == Verdict::Rejected);
  CHECK(c.findOp("topKMask")->verdict == Verdict::Certified);
}

TEST_CASE("every reason is recorded, not just the first", "[verdict]") {
  auto report = cleanReport();
  report.passes[0].failures = 1;
  report.passes[2].failures = 2;
  report.passes[2].mistrusted = 30;
  Certificate c = certificateOf(report);
  judge(c, JudgeOptions{{"softmaxLast", "topKMask", "layerNorm"}});
  CHECK(anyReasonHas(c, "softmaxLast fwd", "1 of 40"));
  CHECK(anyReasonHas(c, "topKMask fwd", "2 of 40"));
  CHECK(anyReasonHas(c, "topKMask fwd", "30 of 40 cases mistrusted"));
  CHECK(anyReasonHas(c, "layerNorm", "not tested"));
  CHECK(c.reasons.size() == 4);
  CHECK(c.findOp("layerNorm")->verdict == Verdict::Rejected);
}

TEST_CASE("a max error over a nonzero budget rejects even without failures", "[verdict]") {
  auto report = cleanReport();
  report.passes[0].errorsUlps[3] = 4.5;
  Certificate c = certificateOf(report);
  judge(c, JudgeOptions{});
  CHECK(c.verdict == Verdict::Rejected);
  CHECK(anyReasonHas(c, "softmaxLast fwd: max error 4.5 ulps exceeds the budget of 4 ulps"));
}

TEST_CASE("a budget of 0 leaves judging to the failure count", "[verdict]") {
  auto report = cleanReport();
  report.passes[2].errorsUlps[0] = 1.0;  // exact pass, not counted as a failure by the runner
  Certificate c = certificateOf(report);
  judge(c, JudgeOptions{});
  CHECK(c.verdict == Verdict::Certified);
}

TEST_CASE("mistrusted cases reject only past the fraction, and no evidence rejects", "[verdict]") {
  auto report = cleanReport();
  report.passes[2].mistrusted = 20;  // exactly half: allowed
  Certificate half = certificateOf(report);
  judge(half, JudgeOptions{});
  CHECK(half.verdict == Verdict::Certified);

  report.passes[2].mistrusted = 21;
  Certificate over = certificateOf(report);
  judge(over, JudgeOptions{});
  CHECK(over.verdict == Verdict::Rejected);
  CHECK(anyReasonHas(over, "topKMask fwd", "21 of 40 cases mistrusted"));

  auto skipped = cleanReport();
  skipped.passes[2].skipped = 40;
  Certificate none = certificateOf(skipped);
  judge(none, JudgeOptions{});
  CHECK(none.verdict == Verdict::Rejected);
  CHECK(anyReasonHas(none, "topKMask fwd", "no trusted passing case"));
}

TEST_CASE("a pass without cases is not judged, but an op without any case is not tested",
          "[verdict]") {
  auto report = cleanReport();
  report.passes.push_back(passStats("topKMask", "bwd", {}, 0.0));  // an op without gradient
  Certificate c = certificateOf(report);
  judge(c, JudgeOptions{{"softmaxLast", "topKMask"}});
  CHECK(c.verdict == Verdict::Certified);

  report.passes[2].cases = 0;
  report.passes[2].errorsUlps.clear();
  Certificate none = certificateOf(report);
  judge(none, JudgeOptions{{"softmaxLast", "topKMask"}});
  CHECK(none.verdict == Verdict::Rejected);
  CHECK(anyReasonHas(none, "topKMask: not tested"));
  CHECK(none.reasons.size() == 1);
}

TEST_CASE("a shard is not rejected for the ops it does not hold", "[verdict]") {
  Certificate c = certificateOf(cleanReport());
  c.shard = ShardInfo{1, 3};
  judge(c, JudgeOptions{{"softmaxLast", "topKMask", "layerNorm"}});
  CHECK(c.verdict == Verdict::Certified);
  CHECK(c.findOp("layerNorm") == nullptr);
}

TEST_CASE("error growth rejects past the factor and the slack together", "[baseline]") {
  const double f = kGrowthFactor, s = kGrowthSlackUlps;
  CHECK(errorGrew(1.0, 2.5, f, s));         // 2.5x and +1.5
  CHECK_FALSE(errorGrew(1.0, 2.0, f, s));   // exactly 2x: not more
  CHECK_FALSE(errorGrew(0.2, 1.1, f, s));   // 5.5x but only +0.9 ulp
  CHECK_FALSE(errorGrew(4.0, 8.0, f, s));
  CHECK(errorGrew(4.0, 8.5, f, s));
  CHECK(errorGrew(0.0, 1.5, f, s));
  CHECK_FALSE(errorGrew(0.0, 1.0, f, s));
  CHECK_FALSE(errorGrew(3.0, 1.0, f, s));   // shrinking never rejects
  CHECK(errorGrew(1.0, kInf, f, s));
  CHECK_FALSE(errorGrew(kInf, kInf, f, s));
  CHECK(errorGrew(1.0, std::numeric_limits<double>::quiet_NaN(), f, s));
}

TEST_CASE("a version whose error grew past the baseline's is rejected within budget",
          "[baseline]") {
  Certificate base = certificateOf(cleanReport());  // softmaxLast bwd max 6 ulps
  judge(base, JudgeOptions{});
  auto report = cleanReport();
  report.passes[1].errorsUlps[5] = 13.5;  // within the budget of 16, but > 2 x 6 and > 6 + 1
  Certificate c = certificateOf(report);
  judge(c, JudgeOptions{}, &base, std::string(64, 'c'));
  CHECK(c.verdict == Verdict::Rejected);
  CHECK(anyReasonHas(c, "softmaxLast bwd: max error grew from 6 ulps", "to 13.5 ulps"));
  CHECK(c.findPass("softmaxLast", "bwd")->verdict == Verdict::Rejected);
  REQUIRE(c.baseline);
  CHECK(c.baseline->sha256 == std::string(64, 'c'));
  CHECK(c.baseline->growthFactor == kGrowthFactor);
  bool sawGrowth = false;
  for (const BaselineChange& ch : c.changes)
    if (ch.op == "softmaxLast" && ch.pass == "bwd") {
      sawGrowth = ch.kind == "error-growth" && ch.rejects && ch.baselineMaxUlps == 6.0;
    }
  CHECK(sawGrowth);

  // The same growth without a baseline is certified.
  Certificate alone = certificateOf(report);
  judge(alone, JudgeOptions{});
  CHECK(alone.verdict == Verdict::Certified);
}

TEST_CASE("small growth, new passes and improvements keep the certificate", "[baseline]") {
  Certificate base = certificateOf(cleanReport());
  judge(base, JudgeOptions{});
  auto report = cleanReport();
  report.passes[1].errorsUlps[5] = 11.5;  // < 2 x 6
  report.passes.push_back(passStats("layerNorm", "fwd", ramp(40, 1.0), 8.0));
  Certificate c = certificateOf(report);
  judge(c, JudgeOptions{}, &base, std::string(64, 'c'));
  CHECK(c.verdict == Verdict::Certified);
  bool sawNew = false;
  for (const BaselineChange& ch : c.changes)
    sawNew = sawNew || (ch.kind == "new-pass" && ch.op == "layerNorm");
  CHECK(sawNew);
}

TEST_CASE("a pass the baseline tested and this run lacks is rejected", "[baseline]") {
  Certificate base = certificateOf(cleanReport());
  judge(base, JudgeOptions{});
  auto report = cleanReport();
  report.passes.erase(report.passes.begin() + 1);  // no softmaxLast bwd
  Certificate c = certificateOf(report);
  judge(c, JudgeOptions{}, &base, std::string(64, 'c'));
  CHECK(c.verdict == Verdict::Rejected);
  CHECK(anyReasonHas(c, "softmaxLast bwd", "not by this run"));
  CHECK(c.findOp("softmaxLast")->verdict == Verdict::Rejected);
}

TEST_CASE("new failures since the baseline are reported as such", "[baseline]") {
  Certificate base = certificateOf(cleanReport());
  judge(base, JudgeOptions{});
  auto report = cleanReport();
  report.passes[2].failures = 1;
  Certificate c = certificateOf(report);
  judge(c, JudgeOptions{}, &base, std::string(64, 'c'));
  CHECK(c.verdict == Verdict::Rejected);
  bool saw = false;
  for (const BaselineChange& ch : c.changes)
    saw = saw || (ch.op == "topKMask" && ch.kind == "new-failures" && ch.failures == 1);
  CHECK(saw);
}

TEST_CASE("judging twice gives the same reasons", "[verdict]") {
  auto report = cleanReport();
  report.passes[0].failures = 1;
  Certificate c = certificateOf(report);
  judge(c, JudgeOptions{{"softmaxLast", "topKMask", "layerNorm"}});
  const auto first = c.reasons;
  judge(c, JudgeOptions{{"softmaxLast", "topKMask", "layerNorm"}});
  CHECK(c.reasons == first);
}

TEST_CASE("examples are kept worst first, a NaN error before every number", "[verdict]") {
  auto report = cleanReport();
  report.passes[0].failures = 4;
  for (double e : {1.0, std::numeric_limits<double>::quiet_NaN(), 5.0, kInf}) {
    tapecheck::conformance::CaseExample ex;
    ex.group = "softmaxLast fwd cols-warp";
    ex.errorUlps = e;
    report.passes[0].examples.push_back(ex);
  }
  const Certificate c = certificateOf(report);
  const auto& examples = c.findPass("softmaxLast", "fwd")->examples;
  REQUIRE(examples.size() == 4);
  CHECK(std::isnan(examples[0].errorUlps));  // no number at all: the worst
  CHECK(examples[1].errorUlps == kInf);
  CHECK(examples[2].errorUlps == 5.0);
  CHECK(examples[3].errorUlps == 1.0);
}
