// Whole runs: the aten table passes, a seed reproduces a run, shards split it, a broken kernel is
// reported with what reproduces it, and the reference itself satisfies the dot-product identity.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tapecheck/conformance/generators.h"
#include "tapecheck/conformance/judge.h"
#include "tapecheck/conformance/reference_tapes.h"
#include "tapecheck/conformance/runner.h"
#include "tapecheck/device/plugin_gallery.h"

using tapecheck::Dim;
using tapecheck::Shape;
using tapecheck::sizeOf;
using tapecheck::Error;
using namespace tapecheck::conformance;

namespace {

RunOptions quick(const std::string& kernels, std::uint64_t cases, std::uint64_t seed) {
  RunOptions o;
  o.kernels = kernels;
  o.device = tapecheck::device::DeviceKind::Cpu;
  o.casesPerOp = cases;
  o.seed = seed;
  o.progressSeconds = 1e9;
  o.valuesDir = (std::filesystem::temp_directory_path() / "tapecheck-conformance-tests").string();
  return o;
}

RunReport runOk(const RunOptions& o) {
  std::ostringstream progress;
  auto r = runConformance(o, progress);
  INFO(progress.str());
  REQUIRE(r);
  return std::move(r).value();
}

}  // namespace

TEST_CASE("the aten table passes a short run of every op and program", "[runner]") {
  const RunReport r = runOk(quick("aten", 12, 0));
  CHECK(r.failed == 0);
  CHECK(r.tests > 0);
  CHECK(r.passed + r.mistrusted + r.skipped == r.tests);
  std::set<std::string> ops;
  for (const GroupStats& g : r.groups) ops.insert(g.op);
  for (const std::string& name : selectableNames()) CHECK(ops.count(name) == 1);
}

TEST_CASE("two runs with the same seed write the same report", "[runner]") {
  const std::string a = reportJson(runOk(quick("aten", 10, 5)));
  const std::string b = reportJson(runOk(quick("aten", 10, 5)));
  CHECK(a == b);
  CHECK(a != reportJson(runOk(quick("aten", 10, 6))));
}

TEST_CASE("shards split the cases without changing any", "[runner]") {
  RunOptions o = quick("aten", 10, 2);
  o.ops = {"softmaxLast", "layerNorm"};
  const RunReport whole = runOk(o);
  std::uint64_t tests = 0, failed = 0;
  for (std::uint32_t s = 0; s < 3; ++s) {
    o.shardIndex = s;
    o.shardCount = 3;
    const RunReport part = runOk(o);
    tests += part.tests;
    failed += part.failed;
  }
  CHECK(tests == whole.tests);
  CHECK(failed == whole.failed);
}

TEST_CASE("an unknown op is a usage error", "[runner]") {
  CHECK_FALSE(selectSubjects({"softmax"}));
  RunOptions o = quick("aten", 1, 0);
  o.ops = {"nope"};
  std::ostringstream progress;
  CHECK_FALSE(runConformance(o, progress));
  CHECK(selectSubjects({"softmaxLast", "crossEntropy"}).value().size() == 3);  // + the program
}

TEST_CASE("a broken kernel fails its op with the worst case, its values and a reproducer",
          "[runner]") {
  const tapecheck::device::plugins::Mutant* mutant = nullptr;
  for (const auto& m : tapecheck::device::plugins::kMutants)
    if (std::string(m.name) == "no-max-subtraction") mutant = &m;
  REQUIRE(mutant);
  RunOptions o = quick(mutant->path, 6, 0);
  o.ops = {"softmaxLast"};
  const RunReport r = runOk(o);
  CHECK(r.failed > 0);
  const GroupStats* failing = nullptr;
  for (const GroupStats& g : r.groups)
    if (groupStatus(g) == tapecheck::conformance::Status::Failed && !failing) failing = &g;
  REQUIRE(failing);
  CHECK(failing->op == "softmaxLast");
  REQUIRE_FALSE(failing->examples.empty());
  const CaseExample& worst = failing->examples.front();
  CHECK(worst.reproducer.find("--ops softmaxLast --seed 0 --case ") != std::string::npos);
  REQUIRE_FALSE(worst.valuesFile.empty());
  std::ifstream in(worst.valuesFile);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  REQUIRE_FALSE(doc.is_discarded());
  CHECK(doc["schema"] == "tapecheck-vectors-v1");
  CHECK(doc["op"] == "softmaxLast");
  CHECK(doc["tests"].size() == 1);

  // The reproducer's --case reruns exactly that case, and it fails again.
  const auto at = worst.reproducer.find("--case ");
  RunOptions one = o;
  one.onlyCase = std::stoull(worst.reproducer.substr(at + 7));
  one.shrink = false;
  const RunReport again = runOk(one);
  CHECK(again.failed > 0);
}

TEST_CASE("the reference satisfies the dot-product identity on every op and program",
          "[runner]") {
  const GenConfig config;
  const TapeFactory ref = [] { return makeReferenceTapeDouble(); };
  const std::vector<const OpInfo*> subjects = selectSubjects({}).value();
  for (const OpInfo* op : subjects) {
    if (!op->hasBackward) continue;
    int applied = 0;
    for (std::uint64_t i = 0; i < 30; ++i) {
      const CaseParams p = drawCase(*op, config, 8, i).value();
      if (sizeOf(p.shape) > 4096) continue;
      const TestCase c = buildCase(*op, p);
      auto tape = ref();
      const Outcome e = evaluate(*tape, c);
      const DotCheck d = dotProductCheck(*op, c, e, e, ref, i);
      if (!d.applicable) continue;
      ++applied;
      INFO(op->name << " case " << i << ": " << describe(p) << " lhs " << d.lhs << " rhs "
                    << d.rhs);
      CHECK(d.passed);
    }
    INFO(op->name);
    CHECK(applied > 5);
  }
}
