// Partial kernel tables and kernel faults in a run, in this process: what a partial table lacks
// is NOT PROVIDED and the rest runs; a kernel that returns an error or writes past its output
// fails its case in the pass of the entry point, not the errors pass. (Crashes and hangs need the
// worker processes: conformance/tests/CMakeLists.txt checks them through `tapecheck run`.)
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>
#include <string>

#include "tapecheck/conformance/runner.h"
#include "tapecheck/device/plugin_gallery.h"

using namespace tapecheck::conformance;
namespace plugins = tapecheck::device::plugins;

namespace {

RunOptions quick(const std::string& kernels, std::uint64_t cases) {
  RunOptions o;
  o.kernels = kernels;
  o.device = tapecheck::device::DeviceKind::Cpu;
  o.casesPerOp = cases;
  o.progressSeconds = 1e9;
  o.jobs = 2;
  o.valuesDir = (std::filesystem::temp_directory_path() / "tapecheck-coverage-tests").string();
  return o;
}

RunReport runOk(const RunOptions& o) {
  std::ostringstream progress;
  auto r = runConformance(o, progress);
  INFO(progress.str());
  if (!r) FAIL(r.message());
  return std::move(r).value();
}

const PassStats* passOf(const RunReport& r, const std::string& op, const std::string& pass) {
  for (const PassStats& p : r.passes)
    if (p.op == op && p.pass == pass) return &p;
  return nullptr;
}

}  // namespace

TEST_CASE("a partial table runs what it provides and reports the rest NOT PROVIDED",
          "[coverage]") {
  RunOptions o = quick(plugins::kPartialSoftmax, 8);
  o.ops = {"softmaxLast", "layerNorm", "crossEntropy"};  // and the program softmaxLast-crossEntropy
  const RunReport r = runOk(o);
  CHECK(r.failed == 0);
  REQUIRE(passOf(r, "softmaxLast", "fwd"));
  CHECK(passStatus(*passOf(r, "softmaxLast", "fwd")) != Status::NotProvided);
  CHECK(passOf(r, "softmaxLast", "bwd")->cases > 0);
  const PassStats* lnBwd = passOf(r, "layerNorm", "bwd");
  REQUIRE(lnBwd);
  CHECK(passStatus(*lnBwd) == Status::NotProvided);
  CHECK(lnBwd->cases == 0);
  CHECK(lnBwd->missingEntries == std::vector<std::string>{"layer_norm_fwd", "layer_norm_bwd"});
  CHECK(notProvidedLine(*lnBwd) ==
        "NOT PROVIDED layerNorm bwd missing:layer_norm_fwd,layer_norm_bwd");
  CHECK(passOf(r, "layerNorm", "errors")->missingEntries ==
        std::vector<std::string>{"layer_norm_fwd"});
  const PassStats* program = passOf(r, "softmaxLast-crossEntropy", "fwd");
  REQUIRE(program);
  CHECK(program->missingEntries == std::vector<std::string>{"cross_entropy_fwd"});
  for (const GroupStats& g : r.groups) CHECK(g.op == "softmaxLast");  // no case of the others
  // softmaxLast's fwd and bwd ran (8 cases hold no malformed call, so no errors pass, and no
  // vectors were asked for); layerNorm's and crossEntropy's fwd, bwd, errors and the program's
  // fwd, bwd are not provided.
  CHECK(coverageLine(r) == "coverage: passes:10 provided:2 not-provided:8 "
                           "missing:layer_norm_fwd,layer_norm_bwd,cross_entropy_fwd,"
                           "cross_entropy_bwd");
  std::ostringstream printed;
  printReport(r, printed);
  CHECK(printed.str().find("\nNOT PROVIDED layerNorm fwd missing:layer_norm_fwd\n") !=
        std::string::npos);
  const std::string json = reportJson(r);
  CHECK(json.find("\"coverage\"") != std::string::npos);
  CHECK(json.find("\"status\": \"NOT PROVIDED\"") != std::string::npos);
}

TEST_CASE("a full table's report has no coverage or fault members", "[coverage]") {
  RunOptions o = quick(plugins::kHostReference, 6);
  o.ops = {"softmaxLast"};
  const RunReport r = runOk(o);
  CHECK_FALSE(partialCoverage(r));
  CHECK(coverageLine(r).empty());
  const std::string json = reportJson(r);
  CHECK(json.find("\"coverage\"") == std::string::npos);
  CHECK(json.find("missingEntries") == std::string::npos);
  CHECK(json.find("faults") == std::string::npos);
}

TEST_CASE("a kernel's error return fails its case in the forward pass, named with its sizes",
          "[coverage]") {
  RunOptions o = quick(plugins::kFaultErrorReturn, 24);
  o.ops = {"layerNorm"};
  o.shrink = false;
  const RunReport r = runOk(o);
  CHECK(r.failed == 1);
  const PassStats* fwd = passOf(r, "layerNorm", "fwd");
  REQUIRE(fwd);
  CHECK(fwd->failures == 1);
  CHECK(fwd->faults == 1);
  CHECK(fwd->firstFault == "layer_norm_fwd returned 3 on [5, 13] (case 5)");
  CHECK(passOf(r, "layerNorm", "errors")->failures == 0);
  REQUIRE_FALSE(fwd->examples.empty());
  CHECK(fwd->examples[0].reason.find(": layer_norm_fwd returned 3 on [5, 13]") !=
        std::string::npos);
  CHECK(fwd->examples[0].reproducer.find("--ops layerNorm --seed 0 --case 5") !=
        std::string::npos);
}

TEST_CASE("a kernel writing past its output fails its case even in this process",
          "[coverage]") {
  RunOptions o = quick(plugins::kFaultOverrun, 24);
  o.ops = {"layerNorm"};
  o.shrink = false;
  const RunReport r = runOk(o);
  const PassStats* fwd = passOf(r, "layerNorm", "fwd");
  REQUIRE(fwd);
  CHECK(fwd->failures == 1);
  CHECK(fwd->firstFault ==
        "layer_norm_fwd wrote past its output y (3 floats after the end) on [5, 13] (case 5)");
}
