// A baseline compared case by case: what a certificate keeps of its cases, when two runs' cases
// can be paired, growth judged per shape class over the same cases, and reasons that say where.
#include <catch2/catch.hpp>

#include <limits>
#include <random>

#include "fixtures.h"
#include "tapecheck/certify/certificate_json.h"
#include "tapecheck/certify/merge.h"
#include "tapecheck/certify/verdict.h"

using namespace tapecheck::certify;
using namespace tapecheck::certify::testing;
using nlohmann::json;

namespace {

bool anyReasonHas(const Certificate& c, const std::string& a, const std::string& b = "") {
  for (const std::string& r : c.reasons)
    if (r.find(a) != std::string::npos && r.find(b) != std::string::npos) return true;
  return false;
}

JudgeOptions paired() {
  JudgeOptions o;
  o.caseShape = [](const std::string&, std::uint64_t index) {
    return "[2," + std::to_string(100 + index) + "]";
  };
  return o;
}

Certificate judgedBaseline(const tapecheck::conformance::RunReport& r) {
  Certificate base = certificateOf(r);
  judge(base, JudgeOptions{});
  return base;
}

}  // namespace

TEST_CASE("a certificate keeps each case's class, error and status, and a digest of its cases",
          "[baseline]") {
  const Certificate c = certificateOf(withCases(cleanReport()));
  const OpRecord* op = c.findOp("softmaxLast");
  REQUIRE(op);
  REQUIRE(op->caseLog);
  CHECK(op->caseLog->cases == 40);
  CHECK(op->caseLog->shapeClasses == std::vector<std::string>{"cols-short", "cols-long"});
  CHECK(op->caseLog->caseShapeClass[3] == 0);
  CHECK(op->caseLog->caseShapeClass[33] == 1);
  CHECK(op->caseLog->digest.size() == 64);
  const PassRecord* bwd = c.findPass("softmaxLast", "bwd");
  REQUIRE(bwd->caseStatus == std::string(40, 'P'));
  CHECK(bwd->caseUlps[16] == 6.0);  // ramp(40, 6): 6 * (16 % 17) / 16
  CHECK(c.identity.deviceKind == "cpu");
  // Another seed, other fingerprints, another digest.
  CHECK(certificateOf(withCases(cleanReport(), 8)).findOp("softmaxLast")->caseLog->digest !=
        op->caseLog->digest);
}

TEST_CASE("the same kernels on the same cases never grow, whatever the summaries say",
          "[baseline]") {
  const Certificate base = judgedBaseline(withCases(cleanReport()));
  Certificate again = certificateOf(withCases(cleanReport()));
  REQUIRE(pairingProblems(base, again).empty());
  judge(again, paired(), &base, std::string(64, 'c'));
  CHECK(again.verdict == Verdict::Certified);
  REQUIRE(again.baseline);
  CHECK(again.baseline->comparison == kCompareCases);
  for (const BaselineChange& ch : again.changes) {
    CHECK(ch.kind == "unchanged");
    CHECK(ch.pairedCases == 40);
  }
}

TEST_CASE("a baseline of another seed, case count or device cannot be paired", "[baseline]") {
  const Certificate base = judgedBaseline(withCases(cleanReport(), 0));
  const Certificate seven = certificateOf(withCases(cleanReport(), 7));
  const auto problems = pairingProblems(base, seven);
  REQUIRE_FALSE(problems.empty());
  bool seed = false, cases = false;
  for (const std::string& p : problems) {
    seed = seed || p == "the baseline ran seed 0, this run seed 7";
    cases = cases || p.find("the cases of softmaxLast differ from the baseline's") == 0;
  }
  CHECK(seed);
  CHECK(cases);

  auto more = withCases(cleanReport(), 0);
  more.casesPerOp = 200;
  bool count = false;
  for (const std::string& p : pairingProblems(base, certificateOf(more)))
    count = count || p == "the baseline ran 40 cases per op, this run 200";
  CHECK(count);

  auto gpu = withCases(cleanReport(), 0);
  gpu.device = "cuda:0 (a GPU)";
  bool device = false;
  for (const std::string& p : pairingProblems(base, certificateOf(gpu)))
    device = device || p == "the baseline's cases were drawn for cpu, this run's for cuda";
  CHECK(device);
}

TEST_CASE("a certificate without case logs cannot be paired; its summaries can be compared",
          "[baseline]") {
  const Certificate old = judgedBaseline(cleanReport());  // no case logs
  const auto before = replayProblems(old, std::string(64, 'b'), {"softmaxLast", "topKMask"});
  REQUIRE(before.size() == 1);
  CHECK(before[0].find("keeps no per-case errors") != std::string::npos);
  CHECK(replayProblems(old, std::string(64, 'e'), {"softmaxLast"}).size() == 3);  // + corpus,
                                                                                    // topKMask
  Certificate c = certificateOf(withCases(cleanReport()));
  JudgeOptions o = paired();
  o.comparison = kCompareSummaries;
  o.notPaired = pairingProblems(old, c);
  REQUIRE_FALSE(o.notPaired.empty());
  judge(c, o, &old, std::string(64, 'c'));
  REQUIRE(c.baseline);
  CHECK(c.baseline->comparison == kCompareSummaries);
  CHECK(c.baseline->notPaired == o.notPaired);
  // What the baseline ran is recorded, so the comparison can be told apart from a replay.
  CHECK(c.baseline->seed == 7);
  CHECK(c.baseline->casesPerOp == 40);
  CHECK(c.baseline->device == "cpu (test)");
  const json doc = certificateToJson(c);
  CHECK(doc.at("baseline").at("comparison") == "summaries");
  CHECK(doc.at("baseline").at("seed") == 7);
  CHECK(doc.at("baseline").at("casesPerOp") == 40);
  CHECK(doc.at("baseline").at("device") == "cpu (test)");
}

TEST_CASE("growth is judged per shape class over the same cases and says where", "[baseline]") {
  // Baseline: the long class of softmaxLast bwd never above 1 ulp.
  auto before = withCases(cleanReport());
  for (std::size_t i = 20; i < 40; ++i) before.passes[1].errorsUlps[i] = 0.5;
  for (std::size_t i = 20; i < 40; ++i) before.passes[1].caseRecords[i].ulps = 0.5;
  const Certificate base = judgedBaseline(before);
  // Now case 25 is at 3 ulps: far below the pass's max of 6 (no summary growth), but 6x its
  // class's 0.5 and 2.5 ulp above it.
  auto after = before;
  after.passes[1].errorsUlps[25] = 3.0;
  after.passes[1].caseRecords[25].ulps = 3.0;
  Certificate c = certificateOf(after);
  REQUIRE(pairingProblems(base, c).empty());
  judge(c, paired(), &base, std::string(64, 'c'));
  CHECK(c.verdict == Verdict::Rejected);
  CHECK(anyReasonHas(c, "softmaxLast bwd cols-long: max error grew from 0.5 ulps",
                     "to 3 ulps on the same 20 cases"));
  CHECK(anyReasonHas(c, "worst: case 25 [2,125] at 3 ulps (0.5 in the baseline)",
                     "reproduce: tapecheck run --device cpu --kernels aten --ops softmaxLast "
                     "--seed 7 --case 25"));
  const BaselineChange* change = nullptr;
  for (const BaselineChange& ch : c.changes)
    if (ch.op == "softmaxLast" && ch.pass == "bwd") change = &ch;
  REQUIRE(change);
  CHECK(change->kind == "error-growth");
  REQUIRE(change->grown.size() == 1);
  CHECK(change->grown[0].shapeClass == "cols-long");
  CHECK(change->grown[0].worstCase == 25);
  CHECK(change->grown[0].growthBoundUlps == 1.5);  // max(2 x 0.5, 0.5 + 1)
  CHECK(change->grown[0].shape == "[2,125]");

  // Compared by summaries, the pass's max (6 ulps) did not grow.
  Certificate summary = certificateOf(after);
  JudgeOptions o = paired();
  o.comparison = kCompareSummaries;
  judge(summary, o, &base, std::string(64, 'c'));
  CHECK(summary.verdict == Verdict::Certified);
}

TEST_CASE("a summary growth reason names the worst case and how to rerun it", "[baseline]") {
  const Certificate base = judgedBaseline(withCases(cleanReport()));
  auto after = withCases(cleanReport());
  after.passes[1].errorsUlps[5] = 13.5;
  after.passes[1].caseRecords[5].ulps = 13.5;
  Certificate c = certificateOf(after);
  JudgeOptions o = paired();
  o.comparison = kCompareSummaries;
  judge(c, o, &base, std::string(64, 'c'));
  CHECK(anyReasonHas(c, "softmaxLast bwd: max error grew from 6 ulps", "to 13.5 ulps"));
  CHECK(anyReasonHas(c, "(summary figures, not the same cases); worst: case 5 [2,105] at 13.5",
                     "reproduce: tapecheck run --device cpu --kernels aten --ops softmaxLast "
                     "--seed 7 --case 5"));
}

TEST_CASE("case logs survive writing and reading, compactly", "[baseline][json]") {
  auto r = withCases(cleanReport());
  r.passes[0].errorsUlps[3] = 1.0 / 3.0;
  r.passes[0].caseRecords[3].ulps = 1.0 / 3.0;
  r.passes[0].caseRecords[4].status = tapecheck::conformance::Status::Mistrusted;
  Certificate c = certificateOf(r);
  judge(c, JudgeOptions{});
  const std::string text = certificateText(c);
  const json doc = json::parse(text);
  const json& pass = doc.at("ops").at(0).at("passes").at(0);
  CHECK(pass.at("caseUlps").at(3) == 0.3333);  // 4 significant digits
  CHECK(pass.at("caseStatus").get<std::string>().substr(0, 6) == "PPPPMP");
  CHECK_FALSE(doc.at("ops").at(0).at("caseLog").contains("fingerprints"));  // shards only
  auto back = certificateFromJson(doc);
  INFO((back ? std::string() : back.message()));
  REQUIRE(back);
  CHECK(certificateText(back.value()) == text);
  CHECK(back.value().findOp("softmaxLast")->caseLog->digest ==
        c.findOp("softmaxLast")->caseLog->digest);
}

TEST_CASE("merged shards keep every case, and their digest is the unsharded run's",
          "[baseline][merge]") {
  const auto full = withCases(cleanReport());
  std::vector<Certificate> shards;
  for (std::uint32_t s = 0; s < 2; ++s) {
    auto part = full;
    for (auto& subject : part.subjects) {
      tapecheck::conformance::SubjectCases kept = subject;
      kept.indices.clear();
      kept.fingerprints.clear();
      kept.shapeClasses.clear();
      for (std::size_t k = 0; k < subject.indices.size(); ++k)
        if (subject.indices[k] % 2 == s) {
          kept.indices.push_back(subject.indices[k]);
          kept.fingerprints.push_back(subject.fingerprints[k]);
          kept.shapeClasses.push_back(subject.shapeClasses[k]);
        }
      subject = kept;
    }
    for (auto& p : part.passes) {
      std::vector<tapecheck::conformance::CaseRecord> kept;
      for (const auto& cr : p.caseRecords)
        if (cr.index % 2 == s) kept.push_back(cr);
      p.caseRecords = kept;
    }
    Certificate shard = certificateOf(part);
    shard.shard = ShardInfo{s, 2};
    CHECK(shard.findOp("softmaxLast")->caseLog->digest.empty());  // a part: no digest
    // Through JSON, as merge reads them.
    auto back = certificateFromJson(json::parse(certificateText(shard)));
    INFO((back ? std::string() : back.message()));
    REQUIRE(back);
    shards.push_back(back.value());
  }
  auto merged = mergeShards(shards);
  REQUIRE(merged);
  const Certificate whole = certificateOf(full);
  for (const OpRecord& op : whole.ops) {
    const OpRecord* m = merged.value().findOp(op.op);
    REQUIRE(m);
    REQUIRE(m->caseLog);
    CHECK(m->caseLog->digest == op.caseLog->digest);
    for (const PassRecord& p : op.passes) {
      const PassRecord* q = merged.value().findPass(op.op, p.pass);
      REQUIRE(q);
      CHECK(q->caseStatus == p.caseStatus);
    }
  }
}

TEST_CASE("a certificate of 2000 cases per op stays small", "[baseline][json]") {
  // Ten subjects of 2000 cases, fwd and bwd each, errors spread over many magnitudes.
  tapecheck::conformance::RunReport r;
  r.kernelsName = "k";
  r.kernelsVersion = "1";
  r.kernelsSource = "cuda";
  r.device = "cuda:0 (test)";
  r.casesPerOp = 2000;
  std::mt19937_64 random(1);
  std::uniform_real_distribution<double> exponent(-8, 12);
  for (int op = 0; op < 10; ++op) {
    const std::string name = "op" + std::to_string(op);
    tapecheck::conformance::SubjectCases s;
    s.op = name;
    s.cases = 2000;
    for (std::uint64_t i = 0; i < 2000; ++i) {
      s.indices.push_back(i);
      s.fingerprints.push_back(random());
      s.shapeClasses.push_back("class-" + std::to_string(i % 17));
    }
    r.subjects.push_back(s);
    for (const char* pass : {"fwd", "bwd"}) {
      std::vector<double> errors;
      for (int i = 0; i < 2000; ++i) errors.push_back(std::exp2(exponent(random)));
      auto p = passStats(name, pass, errors, 1e6);
      for (std::uint64_t i = 0; i < 2000; ++i)
        p.caseRecords.push_back({i, errors[i], tapecheck::conformance::Status::Passed});
      r.passes.push_back(p);
    }
  }
  Certificate c = certificateOf(r);
  judge(c, JudgeOptions{});
  const std::size_t bytes = certificateText(c).size();
  INFO(bytes << " bytes");
  CHECK(bytes < 2'000'000);
}
