// Partial kernel tables and kernel faults in certificates: a pass the kernels do not provide is
// NOT PROVIDED (not judged, not a reason), the rest is certified; a fault is named in the
// reason; the certificate, its schema, the report, a merge and a baseline all keep the coverage.
#include <catch2/catch.hpp>

#include <string>

#include "fixtures.h"
#include "tapecheck/certify/certificate_json.h"
#include "tapecheck/certify/html_report.h"
#include "tapecheck/certify/merge.h"
#include "tapecheck/certify/schema_check.h"
#include "tapecheck/certify/verdict.h"

using namespace tapecheck::certify;
using namespace tapecheck::certify::testing;
using tapecheck::conformance::PassStats;
using tapecheck::conformance::RunReport;

namespace {

PassStats notProvided(const std::string& op, const std::string& pass,
                      std::vector<std::string> missing) {
  PassStats s;
  s.op = op;
  s.pass = pass;
  s.missingEntries = std::move(missing);
  return s;
}

// cleanReport's softmaxLast (provided) and topKMask fwd, plus layerNorm not provided at all.
RunReport partialReport() {
  RunReport r = cleanReport();
  r.passes.push_back(notProvided("layerNorm", "fwd", {"layer_norm_fwd"}));
  r.passes.push_back(notProvided("layerNorm", "bwd", {"layer_norm_fwd", "layer_norm_bwd"}));
  return r;
}

const JudgeOptions kOptions{{"softmaxLast", "topKMask", "layerNorm"}};

}  // namespace

TEST_CASE("a partial table is certified for what it provides; the rest is NOT PROVIDED",
          "[coverage]") {
  Certificate c = certificateOf(partialReport());
  judge(c, kOptions);
  CHECK(c.verdict == Verdict::Certified);
  CHECK(c.reasons.empty());
  CHECK(c.findOp("softmaxLast")->verdict == Verdict::Certified);
  const OpRecord* ln = c.findOp("layerNorm");
  REQUIRE(ln);
  CHECK(ln->verdict == Verdict::NotProvided);
  CHECK(ln->reasons.empty());  // not "not tested": the kernels say they do not provide it
  CHECK(c.findPass("layerNorm", "bwd")->verdict == Verdict::NotProvided);
  CHECK(c.findPass("layerNorm", "bwd")->missingEntries ==
        std::vector<std::string>{"layer_norm_fwd", "layer_norm_bwd"});
  CHECK(coverageSummary(c) ==
        "coverage: 3 of 5 passes provided; not provided: layerNorm (fwd, bwd)");
  Certificate full = certificateOf(cleanReport());
  judge(full, JudgeOptions{{"softmaxLast", "topKMask"}});
  CHECK(coverageSummary(full).empty());
}

TEST_CASE("an op only partly provided keeps its provided passes' verdict", "[coverage]") {
  RunReport r = cleanReport();
  r.passes[1] = notProvided("softmaxLast", "bwd", {"softmax_bwd"});
  r.passes[0].failures = 1;
  Certificate c = certificateOf(r);
  judge(c, JudgeOptions{{"softmaxLast", "topKMask"}});
  CHECK(c.verdict == Verdict::Rejected);
  CHECK(c.findOp("softmaxLast")->verdict == Verdict::Rejected);
  CHECK(c.findPass("softmaxLast", "bwd")->verdict == Verdict::NotProvided);
  CHECK(c.reasons.size() == 1);
}

TEST_CASE("a failure reason names the first kernel fault", "[coverage]") {
  RunReport r = cleanReport();
  r.passes[0].failures = 2;
  r.passes[0].faults = 1;
  r.passes[0].firstFault = "softmax_fwd crashed with SIGSEGV on [3, 30] (case 4)";
  Certificate c = certificateOf(r);
  judge(c, JudgeOptions{});
  REQUIRE(c.reasons.size() == 1);
  CHECK(c.reasons[0] ==
        "softmaxLast fwd: 2 of 40 cases failed (max error 2 ulps, budget 4 ulps); the kernels "
        "faulted on 1 case: softmax_fwd crashed with SIGSEGV on [3, 30] (case 4)");
}

TEST_CASE("coverage and faults are written, validated and read back", "[coverage][json]") {
  RunReport r = partialReport();
  r.passes[0].failures = 3;
  r.passes[0].faults = 3;
  r.passes[0].firstFault = "softmax_fwd returned 1 on [2, 5] (case 0)";
  Certificate c = certificateOf(r);
  judge(c, kOptions);
  const nlohmann::json doc = certificateToJson(c);
  for (const auto& v : validateAgainstSchema(doc, certificateSchema())) UNSCOPED_INFO(v);
  CHECK(validateAgainstSchema(doc, certificateSchema()).empty());
  CHECK(doc.at("ops").at(2).at("verdict") == "not provided");
  CHECK(doc.at("ops").at(2).at("passes").at(0).at("missingEntries") ==
        nlohmann::json::array({"layer_norm_fwd"}));
  CHECK(doc.at("ops").at(0).at("passes").at(0).at("faults") == 3);
  CHECK_FALSE(doc.at("ops").at(0).at("passes").at(1).contains("faults"));
  CHECK_FALSE(doc.at("ops").at(0).at("passes").at(1).contains("missingEntries"));
  const std::string text = certificateText(c);
  auto back = certificateFromJson(nlohmann::json::parse(text));
  REQUIRE(back);
  CHECK(certificateText(back.value()) == text);
  CHECK(back.value().findPass("softmaxLast", "fwd")->firstFault ==
        "softmax_fwd returned 1 on [2, 5] (case 0)");
}

TEST_CASE("a pass the baseline certified and these kernels do not provide rejects",
          "[coverage][baseline]") {
  Certificate base = certificateOf(cleanReport());
  judge(base, JudgeOptions{});
  RunReport r = cleanReport();
  r.passes[1] = notProvided("softmaxLast", "bwd", {"softmax_bwd"});
  Certificate c = certificateOf(r);
  judge(c, JudgeOptions{}, &base, std::string(64, 'd'));
  CHECK(c.verdict == Verdict::Rejected);
  bool named = false;
  for (const std::string& reason : c.reasons)
    named = named || reason == "softmaxLast bwd: tested by the baseline (test-kernels 1.2.3) but "
                               "not provided by these kernels";
  CHECK(named);

  // The other way round: what the baseline lacked is new now, not a loss.
  Certificate partial = certificateOf(r);
  judge(partial, JudgeOptions{});
  Certificate full = certificateOf(cleanReport());
  judge(full, JudgeOptions{}, &partial, std::string(64, 'e'));
  CHECK(full.verdict == Verdict::Certified);
  bool newPass = false;
  for (const BaselineChange& ch : full.changes)
    newPass = newPass || (ch.op == "softmaxLast" && ch.pass == "bwd" && ch.kind == "new-pass");
  CHECK(newPass);
}

TEST_CASE("merged shards keep the coverage and add the faults", "[coverage][merge]") {
  RunReport a = partialReport(), b = partialReport();
  a.passes[0].faults = 1;
  a.passes[0].failures = 1;
  a.passes[0].firstFault = "softmax_fwd returned 1 on [1, 3] (case 0)";
  b.passes[0].faults = 2;
  b.passes[0].failures = 2;
  b.passes[0].firstFault = "softmax_fwd returned 1 on [1, 7] (case 1)";
  Certificate s0 = certificateOf(a), s1 = certificateOf(b);
  s0.shard = ShardInfo{0, 2};
  s1.shard = ShardInfo{1, 2};
  auto merged = mergeShards({s1, s0});
  REQUIRE(merged);
  judge(merged.value(), kOptions);
  const PassRecord* fwd = merged.value().findPass("softmaxLast", "fwd");
  CHECK(fwd->faults == 3);
  CHECK(fwd->firstFault == "softmax_fwd returned 1 on [1, 3] (case 0)");
  CHECK(merged.value().findPass("layerNorm", "fwd")->verdict == Verdict::NotProvided);
  CHECK(merged.value().findOp("layerNorm")->verdict == Verdict::NotProvided);
}

TEST_CASE("the report shows the coverage and marks what is not provided", "[coverage][html]") {
  Certificate c = certificateOf(partialReport());
  judge(c, kOptions);
  const std::string html = renderHtmlReport(c);
  CHECK(html.find("class=\"verdict ok\"") != std::string::npos);
  CHECK(html.find("A partial kernel table") != std::string::npos);
  CHECK(html.find("coverage: 3 of 5 passes provided; not provided: layerNorm (fwd, bwd)") !=
        std::string::npos);
  CHECK(html.find("NOT PROVIDED") != std::string::npos);
  CHECK(html.find("not provided by the kernels: <code>layer_norm_fwd</code>, "
                  "<code>layer_norm_bwd</code>") != std::string::npos);
}
