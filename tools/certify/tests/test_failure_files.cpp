// Failure files travel with the certificate: copied into its folder, and every example and
// reproducer that named them names the copies.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "fixtures.h"
#include "tapecheck/certify/failure_files.h"

using namespace tapecheck::certify;
using namespace tapecheck::certify::testing;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("tapecheck-failure-files-" + name);
  fs::remove_all(p);
  return p;
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

}  // namespace

TEST_CASE("failure files are copied and the certificate points at the copies", "[files]") {
  const fs::path run = scratch("run"), out = scratch("out");
  write(run / "softmaxLast-fwd-cols-warp-case3.json", "{\"a\": 1}\n");
  write(run / "softmaxLast-fwd-cols-warp-case3-shrunk.json", "{\"b\": 2}\n");
  auto report = cleanReport();
  report.passes[0].failures = 1;
  tapecheck::conformance::CaseExample failing;
  failing.group = "softmaxLast fwd cols-warp";
  failing.valuesFile = (run / "softmaxLast-fwd-cols-warp-case3-shrunk.json").string();
  failing.reproducer = "tapecheck vectors check --target device --device cpu --kernels aten " +
                       failing.valuesFile;
  tapecheck::conformance::CaseExample golden;
  golden.group = "softmaxLast vectors golden";
  golden.valuesFile = "/src/vectors/golden/softmax.json";
  golden.reproducer = "tapecheck vectors check --tcid 3 /src/vectors/golden/softmax.json";
  report.passes[0].examples = {failing, golden};
  Certificate c = certificateOf(report);

  auto names = copyFailureFiles(run.string(), (out / kFailuresDir).string());
  REQUIRE(names);
  CHECK(names.value() == std::vector<std::string>{"softmaxLast-fwd-cols-warp-case3-shrunk.json",
                                                  "softmaxLast-fwd-cols-warp-case3.json"});
  CHECK(fs::exists(out / "failures" / "softmaxLast-fwd-cols-warp-case3.json"));
  relocateFailureFiles(c, run.string(), (out / kFailuresDir).string(), names.value());
  const PassRecord* fwd = c.findPass("softmaxLast", "fwd");
  const std::string moved = (out / "failures" / "softmaxLast-fwd-cols-warp-case3-shrunk.json").string();
  bool sawMoved = false, sawGolden = false;
  for (const auto& e : fwd->examples) {
    if (e.group == failing.group) {
      sawMoved = true;
      CHECK(e.valuesFile == moved);
      CHECK(e.reproducer == "tapecheck vectors check --target device --device cpu --kernels aten " +
                                moved);
    } else {
      sawGolden = true;
      CHECK(e.valuesFile == golden.valuesFile);  // not a failure file: left alone
      CHECK(e.reproducer == golden.reproducer);
    }
  }
  CHECK(sawMoved);
  CHECK(sawGolden);
  fs::remove_all(run);
  fs::remove_all(out);
}

TEST_CASE("a run that wrote no failure file copies nothing", "[files]") {
  const fs::path out = scratch("nothing");
  auto names = copyFailureFiles("", (out / kFailuresDir).string());
  REQUIRE(names);
  CHECK(names.value().empty());
  CHECK_FALSE(fs::exists(out));
  auto missing = copyFailureFiles((out / "no-such-folder").string(), (out / "x").string());
  REQUIRE(missing);
  CHECK(missing.value().empty());
}
