#include <catch2/catch.hpp>

#include "fixtures.h"
#include "tapecheck/certify/certificate_json.h"
#include "tapecheck/certify/merge.h"
#include "tapecheck/certify/verdict.h"

using namespace tapecheck::certify;
using namespace tapecheck::certify::testing;
using tapecheck::conformance::PassStats;
using tapecheck::conformance::RunReport;

namespace {

// Splits a report the way a runner shards it: case i of every pass goes to shard i % count.
RunReport shardOf(const RunReport& full, std::uint32_t index, std::uint32_t count) {
  RunReport part = full;
  part.passes.clear();
  part.tests = part.passed = part.failed = part.mistrusted = part.skipped = 0;
  for (const PassStats& p : full.passes) {
    PassStats q = p;
    q.errorsUlps.clear();
    q.examples.clear();
    q.cases = q.failures = q.mistrusted = 0;
    q.maxUlps = 0;
    for (std::size_t i = index; i < p.errorsUlps.size(); i += count) {
      q.errorsUlps.push_back(p.errorsUlps[i]);
      q.maxUlps = std::max(q.maxUlps, p.errorsUlps[i]);
      ++q.cases;
      if (p.errorsUlps[i] > p.budgetUlps && p.budgetUlps > 0) ++q.failures;
    }
    if (index == 0) q.mistrusted = p.mistrusted;
    if (q.cases == 0) continue;
    part.tests += q.cases;
    part.failed += q.failures;
    part.passed += q.cases - q.failures;
    part.passes.push_back(q);
  }
  return part;
}

RunReport unevenReport() {
  RunReport r = cleanReport();
  r.passes[0].errorsUlps[7] = 5.0;  // one failure over the budget of 4
  r.passes[0].failures = 1;
  r.passes[1].errorsUlps.resize(37);  // counts that do not divide evenly
  r.passes[1].cases = 37;
  r.passes[1].mistrusted = 2;
  for (std::size_t i = 0; i < r.passes[1].errorsUlps.size(); ++i)
    r.passes[1].errorsUlps[i] = 0.1 * double((i * 7919) % 101);
  r.tests = 0;
  for (const auto& p : r.passes) r.tests += p.cases;
  r.failed = 1;
  r.passed = r.tests - 1;
  return r;
}

void checkSameCounts(const Certificate& a, const Certificate& b) {
  CHECK(a.totals.tests == b.totals.tests);
  CHECK(a.totals.passed == b.totals.passed);
  CHECK(a.totals.failed == b.totals.failed);
  CHECK(a.totals.mistrusted == b.totals.mistrusted);
  CHECK(a.totals.skipped == b.totals.skipped);
  CHECK(a.verdict == b.verdict);
  CHECK(a.reasons == b.reasons);
  REQUIRE(a.ops.size() == b.ops.size());
  for (const OpRecord& op : a.ops) {
    const OpRecord* other = b.findOp(op.op);
    REQUIRE(other);
    REQUIRE(op.passes.size() == other->passes.size());
    for (const PassRecord& p : op.passes) {
      const PassRecord* q = b.findPass(op.op, p.pass);
      REQUIRE(q);
      INFO(op.op << " " << p.pass);
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

std::vector<Certificate> shardCertificates(const RunReport& full, std::uint32_t count) {
  std::vector<Certificate> shards;
  for (std::uint32_t i = 0; i < count; ++i) {
    Certificate s = certificateOf(shardOf(full, i, count));
    s.shard = ShardInfo{i, count};
    judge(s, JudgeOptions{});
    // Through JSON, as `certify merge` reads them.
    auto back = certificateFromJson(certificateToJson(s));
    REQUIRE(back);
    shards.push_back(std::move(back).value());
  }
  return shards;
}

}  // namespace

TEST_CASE("merging shards equals the unsharded certificate in every count", "[merge]") {
  const RunReport full = unevenReport();
  const JudgeOptions options{{"softmaxLast", "topKMask"}};
  Certificate whole = certificateOf(full);
  judge(whole, options);
  REQUIRE(whole.verdict == Verdict::Rejected);
  for (std::uint32_t count : {1u, 2u, 3u, 5u}) {
    INFO("shards: " << count);
    auto shards = shardCertificates(full, count);
    std::reverse(shards.begin(), shards.end());  // the order given does not matter
    auto merged = mergeShards(shards);
    REQUIRE(merged);
    judge(merged.value(), options);
    CHECK(merged.value().mergedShards == count);
    CHECK_FALSE(merged.value().shard);
    checkSameCounts(merged.value(), whole);
  }
}

TEST_CASE("merge adds counts, takes the max and recomputes p99 and mean", "[merge]") {
  RunReport a = cleanReport(), b = cleanReport();
  a.passes = {passStats("softmaxLast", "fwd", {1, 2, 3}, 4, 0, 1)};
  b.passes = {passStats("softmaxLast", "fwd", {0.5, 3.5}, 4, 1, 0)};
  a.tests = 3, b.tests = 2;
  Certificate sa = certificateOf(a), sb = certificateOf(b);
  sa.shard = ShardInfo{0, 2};
  sb.shard = ShardInfo{1, 2};
  auto merged = mergeShards({sa, sb});
  REQUIRE(merged);
  const PassRecord* p = merged.value().findPass("softmaxLast", "fwd");
  REQUIRE(p);
  CHECK(p->cases == 5);
  CHECK(p->failures == 1);
  CHECK(p->mistrusted == 1);
  CHECK(p->maxUlps == 3.5);
  CHECK(p->meanUlps == Approx(10.0 / 5));
  CHECK(p->p99Ulps == 3.5);
  CHECK(p->errorsUlps.size() == 5);
  CHECK(merged.value().totals.tests == 5);
}

TEST_CASE("merge refuses sets that are not one run's shards 0..N-1", "[merge]") {
  const RunReport full = unevenReport();
  auto shards = shardCertificates(full, 3);

  auto missing = mergeShards({shards[0], shards[2]});
  REQUIRE_FALSE(missing);
  CHECK(missing.message().find("missing") != std::string::npos);

  auto duplicate = mergeShards({shards[0], shards[1], shards[1]});
  REQUIRE_FALSE(duplicate);
  CHECK(duplicate.message().find("repeats shard 1/3") != std::string::npos);

  auto other = shards;
  other[1].identity.seed = 99;
  auto mixed = mergeShards(other);
  REQUIRE_FALSE(mixed);
  CHECK(mixed.message().find("seed") != std::string::npos);

  auto otherKernels = shards;
  otherKernels[2].identity.kernelsSha256 = std::string(64, 'f');
  CHECK_FALSE(mergeShards(otherKernels));

  auto notShard = shards;
  notShard[0].shard.reset();
  CHECK_FALSE(mergeShards(notShard));

  auto otherCount = shards;
  otherCount[2].shard = ShardInfo{2, 4};
  CHECK_FALSE(mergeShards(otherCount));

  CHECK_FALSE(mergeShards({}));
}

TEST_CASE("merged examples keep the worst few", "[merge]") {
  RunReport a = cleanReport(), b = cleanReport();
  a.passes = {passStats("softmaxLast", "fwd", {9, 9, 9, 9}, 4, 4)};
  b.passes = {passStats("softmaxLast", "fwd", {9, 9, 9, 9}, 4, 4)};
  for (int i = 0; i < 4; ++i) {
    tapecheck::conformance::CaseExample e;
    e.group = "a" + std::to_string(i);
    e.errorUlps = 5 + i;
    a.passes[0].examples.push_back(e);
    e.group = "b" + std::to_string(i);
    e.errorUlps = 10 + i;
    b.passes[0].examples.push_back(e);
  }
  Certificate sa = certificateOf(a), sb = certificateOf(b);
  sa.shard = ShardInfo{0, 2};
  sb.shard = ShardInfo{1, 2};
  auto merged = mergeShards({sa, sb});
  REQUIRE(merged);
  const auto& ex = merged.value().findPass("softmaxLast", "fwd")->examples;
  REQUIRE(ex.size() == kMaxExamplesPerPass);
  CHECK(ex[0].group == "b3");
  CHECK(ex[4].group == "a3");
}

TEST_CASE("a report that lists a pass twice is combined as shards are", "[merge]") {
  RunReport r = cleanReport();
  r.passes = {passStats("softmaxLast", "fwd", {1, 2}, 4),
              passStats("softmaxLast", "fwd", {3}, 4, 1)};
  Certificate c = certificateOf(r);
  REQUIRE(c.ops.size() == 1);
  REQUIRE(c.ops[0].passes.size() == 1);
  const PassRecord& p = c.ops[0].passes[0];
  CHECK(p.cases == 3);
  CHECK(p.failures == 1);
  CHECK(p.maxUlps == 3);
  CHECK(p.meanUlps == 2);
  CHECK(p.errorsUlps.size() == 3);
}
