// Whole runs: the aten table passes, a seed reproduces a run, shards split it, a broken kernel is
// reported with what reproduces it (a forward bug once, as a forward failure), failing inputs go
// to a folder of the run's own, and the reference itself satisfies the dot-product identity.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tapecheck/conformance/case_fingerprint.h"
#include "tapecheck/conformance/device_tapes.h"
#include "tapecheck/conformance/generators.h"
#include "tapecheck/conformance/judge.h"
#include "tapecheck/conformance/reference_tapes.h"
#include "tapecheck/conformance/runner.h"
#include "tapecheck/conformance/values_file.h"
#include "tapecheck/device/plugin_gallery.h"
#include "tapecheck/device/reference_forward.h"
#include "tapecheck/vectors/check.h"
#include "tapecheck/vectors/load.h"

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

namespace {

const tapecheck::device::plugins::Mutant& mutantNamed(const std::string& name) {
  for (const auto& m : tapecheck::device::plugins::kMutants)
    if (std::string(m.name) == name) return m;
  FAIL("no mutant " << name);
  throw std::logic_error("unreachable");
}

const PassStats* passOf(const RunReport& r, const std::string& op, const std::string& pass) {
  for (const PassStats& p : r.passes)
    if (p.op == op && p.pass == pass) return &p;
  return nullptr;
}

}  // namespace

TEST_CASE("a forward bug fails the forward only: the pullback is judged on the reference forward",
          "[runner]") {
  // skip-last-row leaves the last row of softmax's forward unwritten (NaN); its pullback is
  // right, and on the kernel's own forward output it would fail too.
  RunOptions o = quick(mutantNamed("skip-last-row").path, 24, 0);
  o.ops = {"softmaxLast"};
  o.shrink = false;
  const RunReport r = runOk(o);
  const PassStats* fwd = passOf(r, "softmaxLast", "fwd");
  const PassStats* bwd = passOf(r, "softmaxLast", "bwd");
  REQUIRE(fwd);
  REQUIRE(bwd);
  CHECK(fwd->failures > 0);
  CHECK(bwd->failures == 0);
  CHECK(bwd->cases > 0);
}

TEST_CASE("a backward bug still fails the backward", "[runner]") {
  RunOptions o = quick(mutantNamed("softmax-bwd-missing-term").path, 24, 0);
  o.ops = {"softmaxLast"};
  o.shrink = false;
  const RunReport r = runOk(o);
  REQUIRE(passOf(r, "softmaxLast", "bwd"));
  CHECK(passOf(r, "softmaxLast", "fwd")->failures == 0);
  CHECK(passOf(r, "softmaxLast", "bwd")->failures > 0);
}

TEST_CASE("the reference forward hands the pullbacks binary64 results rounded once", "[runner]") {
  auto aten = tapecheck::device::loadKernelTable("aten", tapecheck::device::DeviceKind::Cpu);
  REQUIRE(aten);
  const auto isolated = tapecheck::device::withReferenceForward(aten.value());
  CHECK(std::string(isolated.table->name) == aten.value().table->name);
  CHECK(isolated.table->softmax_bwd == aten.value().table->softmax_bwd);
  CHECK(isolated.table->softmax_fwd != aten.value().table->softmax_fwd);
  const GenConfig config;
  for (const char* name : {"softmaxLast", "logSoftmaxLast", "layerNorm", "batchNorm",
                           "crossEntropy"}) {
    const OpInfo& op = *findOp(name);
    for (std::uint64_t i = 0; i < 12; ++i) {
      const CaseParams p = drawCase(op, config, 3, i).value();
      if (p.invalid != Invalid::None || p.fill == Fill::NonFinite) continue;
      const TestCase c = buildCase(op, p);
      auto device = makeDeviceTape(isolated);
      auto reference = makeReferenceTapeDouble();
      const Outcome got = evaluate(*device, c), want = evaluate(*reference, c);
      REQUIRE_FALSE(got.error);
      REQUIRE_FALSE(want.error);
      // Rounding to binary32 once is at most half an ulp of each value.
      // Judged as the runner judges, at the op's floors: the reference tape takes epsilon in
      // binary64, the kernel ABI in binary32, a difference far below an ulp of the floor.
      const Floors floors = op.floors(c, want);
      const OutputVerdict v = judgeOutput("value", got.value, want.value,
                                          floors.empty() ? std::vector<double>{} : floors[0]);
      INFO(name << " case " << i << ": " << describe(p));
      CHECK(v.maxUlps <= 0.5 + 1e-3);
    }
  }
}

TEST_CASE("without a folder given, failing inputs go to a new folder of the run's own",
          "[runner]") {
  RunOptions o = quick(mutantNamed("no-max-subtraction").path, 6, 0);
  o.ops = {"softmaxLast"};
  o.shrink = false;
  o.valuesDir.clear();
  const RunReport first = runOk(o);
  const RunReport second = runOk(o);
  REQUIRE(first.failed > 0);
  CHECK_FALSE(first.valuesDir.empty());
  CHECK(first.valuesDir != second.valuesDir);  // never shared between runs
  namespace fs = std::filesystem;
  for (const RunReport* r : {&first, &second}) {
    const fs::path dir(r->valuesDir);
    CHECK(dir.parent_path() == fs::temp_directory_path());
    CHECK(dir.filename().string().rfind("tapecheck-run-tapecheck-mutant-no-max-subtraction-cpu-"
                                        "seed0-",
                                        0) == 0);
    // Private to the user who ran it.
    CHECK((fs::status(dir).permissions() & (fs::perms::group_all | fs::perms::others_all)) ==
          fs::perms::none);
    bool inside = false;
    for (const GroupStats& g : r->groups)
      for (const CaseExample& e : g.examples)
        inside = inside || fs::path(e.valuesFile).parent_path() == dir;
    CHECK(inside);
    std::ostringstream printed;
    printReport(*r, printed);
    CHECK(printed.str().find("failing inputs written to " + r->valuesDir) != std::string::npos);
    fs::remove_all(dir);
  }
  // A passing run makes no folder.
  RunOptions clean = quick("aten", 4, 0);
  clean.ops = {"softmaxLast"};
  clean.valuesDir.clear();
  CHECK(runOk(clean).valuesDir.empty());
}

TEST_CASE("a failing golden vector's example carries its error, and examples come worst first",
          "[runner]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "tapecheck-runner-vector-errors";
  fs::remove_all(dir);
  const OpInfo& op = *findOp("softmaxLast");
  const CaseParams p = drawCase(op, GenConfig{}, 1, 3).value();
  const TestCase c = buildCase(op, p);
  auto reference = makeReferenceTapeDouble();
  const Outcome exact = evaluate(*reference, c);
  REQUIRE_FALSE(exact.error);
  // Two files whose expected value[0] is off by 2^-10 and 2^-4: at least 2^13 and 2^19 units
  // of 2^-23 of a floor of at most 1, far past any budget.
  for (int shift : {10, 4}) {
    Outcome wrong = exact;
    wrong.value.values[0] += std::ldexp(1.0, -shift);
    VectorFileInfo info;
    info.comment = "off by 2^-" + std::to_string(shift);
    info.flags = {"Normal"};
    info.provenance = "a test";
    REQUIRE(writeTextFile((dir / ("off-" + std::to_string(shift) + ".json")).string(),
                          caseVectorJson(c, wrong, info)));
  }
  RunOptions o = quick("aten", 1, 0);
  o.ops = {"softmaxLast"};
  o.vectorPaths = {dir.string()};
  const RunReport r = runOk(o);
  const PassStats* vectors = passOf(r, "softmaxLast", "vectors");
  REQUIRE(vectors);
  CHECK(vectors->failures == 2);
  REQUIRE(vectors->examples.size() == 2);
  const CaseExample& worst = vectors->examples[0];
  const CaseExample& next = vectors->examples[1];
  CHECK(worst.errorUlps > next.errorUlps);
  CHECK(worst.valuesFile.find("off-4.json") != std::string::npos);
  CHECK(next.errorUlps > 1000);
  CHECK(worst.reproducer.find("vectors check --target device --device cpu --kernels aten "
                              "--tcid 1 ") != std::string::npos);
  CHECK(vectors->failedErrorsUlps.size() == 2);
  fs::remove_all(dir);
}

TEST_CASE("a chained program's shrunk failure has a reproducer that checks its values file",
          "[runner]") {
  // layernorm-dbeta-zero breaks layerNorm's pullback, which the program's gradient runs through.
  const auto& mutant = mutantNamed("layernorm-dbeta-zero");
  RunOptions o = quick(mutant.path, 12, 0);
  o.ops = {"layerNorm-logSoftmaxLast-distill"};
  o.shrinkEvaluations = 24;
  const RunReport r = runOk(o);
  const CaseExample* shrunk = nullptr;
  for (const GroupStats& g : r.groups)
    for (const CaseExample& e : g.examples)
      if (g.op == "layerNorm-logSoftmaxLast-distill" &&
          e.group.find("(shrunk)") != std::string::npos && !shrunk)
        shrunk = &e;
  REQUIRE(shrunk);
  CHECK(shrunk->reproducer.find("vectors check --target device --device cpu --kernels ") !=
        std::string::npos);
  REQUIRE_FALSE(shrunk->valuesFile.empty());
  auto file = tapecheck::vectors::loadVectorFile(shrunk->valuesFile);
  INFO((file ? std::string() : file.message()));
  REQUIRE(file);
  CHECK(file.value().op == "layerNorm-logSoftmaxLast-distill");
  auto table = tapecheck::device::loadKernelTable(mutant.path, tapecheck::device::DeviceKind::Cpu);
  REQUIRE(table);
  tapecheck::vectors::VectorCheckOptions check;
  check.target = tapecheck::vectors::Target::Device;
  check.deviceTape = [t = table.value()] { return makeDeviceTape(t); };
  std::ostringstream log;
  auto checked = tapecheck::vectors::checkVectorFiles({file.value()}, check, log);
  REQUIRE(checked);
  CHECK(checked.value().failed == 1);
}

TEST_CASE("explaining a case writes it out and shrinks it while its error stays above the bound",
          "[runner]") {
  RunOptions o = quick("aten", 40, 0);
  o.ops = {"softmaxLast"};
  const RunReport r = runOk(o);
  // The case with the largest forward error, and a bound just below it.
  const PassStats* fwd = passOf(r, "softmaxLast", "fwd");
  REQUIRE(fwd);
  const CaseRecord* worst = nullptr;
  for (const CaseRecord& c : fwd->caseRecords)
    if (!worst || c.ulps > worst->ulps) worst = &c;
  REQUIRE(worst);
  REQUIRE(worst->ulps > 0.5);
  CaseToExplain q;
  q.op = "softmaxLast";
  q.pass = "fwd";
  q.shapeClass = "some-class";
  q.index = worst->index;
  q.aboveUlps = worst->ulps / 2;
  q.label = "error growth";
  std::ostringstream progress;
  auto explained = explainCases(o, {q}, progress);
  REQUIRE(explained);
  REQUIRE(explained.value().examples.size() == 1);
  const std::vector<CaseExample>& examples = explained.value().examples[0];
  REQUIRE_FALSE(examples.empty());
  CHECK(examples[0].group == "softmaxLast fwd some-class (error growth)");
  CHECK(examples[0].errorUlps == worst->ulps);
  CHECK(examples[0].reproducer.find("--case " + std::to_string(worst->index)) !=
        std::string::npos);
  CHECK(std::filesystem::exists(examples[0].valuesFile));
  for (const CaseExample& e : examples) CHECK(e.errorUlps > q.aboveUlps);
}

TEST_CASE("a report lists every evaluated case with its fingerprint and class", "[runner]") {
  RunOptions o = quick("aten", 8, 4);
  o.ops = {"layerNorm"};
  const RunReport r = runOk(o);
  REQUIRE(r.subjects.size() == 1);
  const SubjectCases& s = r.subjects[0];
  CHECK(s.op == "layerNorm");
  CHECK(s.cases == 8);
  CHECK(s.indices == std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  REQUIRE(s.fingerprints.size() == 8);
  const OpInfo& op = *findOp("layerNorm");
  for (std::uint64_t i = 0; i < 8; ++i) {
    const CaseParams p = drawCase(op, GenConfig{}, 4, i).value();
    CHECK(s.fingerprints[i] == caseFingerprint(buildCase(op, p)));
    CHECK(s.shapeClasses[i] == shapeClass(op, p));
  }
  // Another seed draws other cases.
  RunOptions other = o;
  other.seed = 5;
  CHECK(runOk(other).subjects[0].fingerprints != s.fingerprints);
  const PassStats* fwd = passOf(r, "layerNorm", "fwd");
  REQUIRE(fwd);
  CHECK(fwd->caseRecords.size() == fwd->cases);
}
