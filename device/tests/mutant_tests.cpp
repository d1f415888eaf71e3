// The mutant gallery is what it claims: each mutant plugin loads, fails at least one case of
// the operation mutants.txt says it breaks, and passes every case of every other operation.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <set>

#include "support.h"
#include "tapecheck/device/plugin_gallery.h"

using namespace tapecheck;
using namespace tapecheck::device;
using namespace tapecheck::device::testing;

TEST_CASE("Each mutant plugin breaks exactly the operation it names", "[mutants]") {
  const std::vector<NamedCase> cases = allCases();
  std::set<std::string> names;
  for (const plugins::Mutant& m : plugins::kMutants) {
    INFO("mutant " << m.name << " (" << m.op << ")");
    CHECK(names.insert(m.name).second);
    REQUIRE(conformance::findOp(m.op) != nullptr);
    auto kernels = loadKernelTable(m.path, DeviceKind::Cpu);
    REQUIRE(kernels);
    CHECK(std::string(kernels.value().table->name) == std::string("tapecheck-mutant-") + m.name);
    std::size_t caught = 0, ofOp = 0;
    std::string example;
    for (const NamedCase& nc : cases) {
      const Verdict v = runAgainstOracle(kernels.value(), nc);
      if (nc.c.op == m.op) {
        ++ofOp;
        if (!v.ok && caught++ == 0) example = nc.name + ": " + v.detail;
      } else {
        INFO(nc.name << ": " << v.detail);
        CHECK(v.ok);
      }
    }
    CHECK(caught > 0);
    if (std::getenv("TAPECHECK_DEVICE_TEST_REPORT"))
      std::cout << "mutant " << m.name << ": fails " << caught << " of " << ofOp << " " << m.op
                << " cases, e.g. " << example << "\n";
  }
  CHECK(names.size() >= 12);
}
