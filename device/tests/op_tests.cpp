// The device tape, with the `aten` table and with the host reference plugin, against the
// multi-precision oracle on every op and docs/spec.md edge case (cases.cpp), judged by the
// conformance judge (judge.cpp).
#include <catch2/catch.hpp>

#include "support.h"

using namespace tapecheck;
using namespace tapecheck::device;
using namespace tapecheck::device::testing;

namespace {

void checkEveryOp(const KernelTable& kernels, const std::string& label) {
  std::size_t checked = 0;
  for (const auto& op : conformance::opRegistry())
    for (const NamedCase& nc : casesFor(op.name)) {
      const Verdict v = runAgainstOracle(kernels, nc);
      recordWorst(label, op.name, v);
      INFO(nc.name << ": " << v.detail);
      CHECK(v.ok);
      ++checked;
    }
  CHECK(checked >= 100);
}

}  // namespace

TEST_CASE("The device tape with the aten table matches the oracle on every op and edge case",
          "[aten]") {
  checkEveryOp(atenCpu(), "aten@cpu");
}

TEST_CASE("The device tape with the host reference plugin matches the oracle on every op and "
          "edge case",
          "[host]") {
  checkEveryOp(hostReference(), "host-reference@cpu");
}

TEST_CASE("The device tape describes its kernels and device", "[aten][host]") {
  auto aten = conformance::makeDeviceTape(atenCpu());
  CHECK(aten->description().rfind("device-tapecheck-aten-", 0) == 0);
  CHECK(aten->description().size() > std::string("device-tapecheck-aten-@cpu").size());
  CHECK(aten->description().substr(aten->description().size() - 4) == "@cpu");
  auto host = conformance::makeDeviceTape(hostReference());
  CHECK(host->description() == "device-tapecheck-host-reference-1.0.0@cpu");
}

TEST_CASE("The device tape rounds leaves to binary32", "[aten][host]") {
  for (const KernelTable* k : {&atenCpu(), &hostReference()}) {
    auto tape = conformance::makeDeviceTape(*k);
    auto id = tape->leaf(tensor({3}, {0.1, 1e300, -1e-300}), false);
    REQUIRE(id);
    auto v = tape->value(id.value());
    REQUIRE(v);
    CHECK(v.value().values[0] == static_cast<double>(0.1f));
    CHECK(v.value().values[1] == kInf);
    CHECK(v.value().values[2] == 0.0);
    CHECK(std::signbit(v.value().values[2]));
  }
}
