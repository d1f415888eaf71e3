// Judging a device outcome against the oracle by the conformance judge (conformance::judgeCase:
// each op's floors and budgets from the registry, the same policy as `tapecheck run`).
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>

#include "support.h"
#include "tapecheck/conformance/format.h"
#include "tapecheck/conformance/judge.h"
#include "tapecheck/device/plugin_gallery.h"

namespace tapecheck::device::testing {

namespace {

// Mistrust is not a failure here: a correct table's outcome on an all-zero case is mistrusted
// (agreement proves little) but not wrong.
bool failed(const conformance::PassVerdict& p) { return p.status == conformance::Status::Failed; }

// The largest finite element error of a pass (a mismatch of kind is infinite and fails anyway).
double worstFinite(const conformance::PassVerdict& p) {
  double w = 0;
  for (const conformance::OutputVerdict& o : p.outputs)
    if (std::isfinite(o.maxUlps)) w = std::max(w, o.maxUlps);
  return w;
}

}  // namespace

Verdict judge(const TestCase& c, const Outcome& actual, const Outcome& expected) {
  Verdict v;
  const conformance::OpInfo* op = conformance::findOp(c.op);
  if (!op) {
    v.ok = false;
    v.detail = "no operation '" + c.op + "' in the registry";
    return v;
  }
  const conformance::CaseVerdict cv = conformance::judgeCase(*op, c, actual, expected);
  if (cv.errorCase) {
    v.ok = !failed(cv.errors);
    v.detail = cv.errors.reason;
    return v;
  }
  v.worstForward = worstFinite(cv.fwd);
  if (cv.bwd) v.worstBackward = worstFinite(*cv.bwd);
  if (failed(cv.fwd)) {
    v.ok = false;
    v.detail = "fwd: " + cv.fwd.reason;
  } else if (cv.bwd && failed(*cv.bwd)) {
    v.ok = false;
    v.detail = "bwd: " + cv.bwd->reason;
  }
  return v;
}

const Outcome& oracleOutcome(const NamedCase& nc) {
  static std::map<std::string, Outcome> cache;
  auto it = cache.find(nc.name);
  if (it == cache.end()) {
    auto oracle = conformance::makeReferenceTapeOracle();
    it = cache.emplace(nc.name, conformance::evaluate(*oracle, nc.c)).first;
  }
  return it->second;
}

Verdict runAgainstOracle(const KernelTable& kernels, const NamedCase& nc) {
  auto tape = conformance::makeDeviceTape(kernels);
  const Outcome actual = conformance::evaluate(*tape, nc.c);
  return judge(nc.c, actual, oracleOutcome(nc));
}

namespace {
std::map<std::string, std::pair<double, double>>& worstTable() {
  static std::map<std::string, std::pair<double, double>> table;
  return table;
}
}  // namespace

void recordWorst(const std::string& kernels, const std::string& op, const Verdict& v) {
  auto& w = worstTable()[kernels + " " + op];
  w.first = std::max(w.first, v.worstForward);
  w.second = std::max(w.second, v.worstBackward);
}

const KernelTable& atenCpu() {
  static const KernelTable table = [] {
    auto t = loadKernelTable("aten", DeviceKind::Cpu);
    if (!t) FAIL("cannot load the aten table: " << t.message());
    return t.value();
  }();
  return table;
}

const KernelTable& hostReference() {
  static const KernelTable table = [] {
    auto t = loadKernelTable(plugins::kHostReference, DeviceKind::Cpu);
    if (!t) FAIL("cannot load the host reference plugin: " << t.message());
    return t.value();
  }();
  return table;
}

namespace {
// Prints the worst errors seen, when TAPECHECK_DEVICE_TEST_REPORT is set.
struct WorstErrorReport : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testRunEnded(const Catch::TestRunStats&) override {
    if (!std::getenv("TAPECHECK_DEVICE_TEST_REPORT")) return;
    std::cout << "worst errors (units of 2^-23 x floor): kernels op forward backward\n";
    for (const auto& [key, w] : worstTable())
      std::cout << "  " << key << " " << conformance::formatNumber(w.first) << " "
                << conformance::formatNumber(w.second) << "\n";
  }
};
CATCH_REGISTER_LISTENER(WorstErrorReport)
}  // namespace

}  // namespace tapecheck::device::testing
