// Fuzz target `tape`: bytes -> a small tape program (tape_program.h), run through
// conformance::evaluate on the binary64 reference tape and on the device tape with the `aten`
// kernel table on the CPU. The two must agree: the same error string (and the tape stopped at
// the same node), or both succeed with outputs of the same shapes whose values the conformance
// judge accepts (conformance::judgeWithOracle: the op's budgets and floors against binary64, and
// the multi-precision oracle when binary64 says FAILED). MISTRUSTED is not a disagreement.
#include <exception>
#include <memory>
#include <optional>

#include "fuzz_entry.h"
#include "tape_program.h"
#include "tapecheck/conformance/device_tapes.h"
#include "tapecheck/conformance/judge.h"
#include "tapecheck/conformance/reference_tapes.h"
#include "tapecheck/device/kernel_table.h"

namespace tapecheck::fuzz {
namespace {

const device::KernelTable& atenTable() {
  static const device::KernelTable table = [] {
    auto t = device::loadKernelTable("aten", device::DeviceKind::Cpu);
    if (!t) violated("the aten kernel table does not load: " + t.message());
    return std::move(t).value();
  }();
  return table;
}

std::string outcomeText(const conformance::Outcome& o) {
  if (o.error) return "error '" + *o.error + "'";
  return "value of shape " + toString(o.value.shape) + ", " + std::to_string(o.grads.size()) +
         " gradients";
}

void disagree(const Program& p, const std::string& why, const conformance::Outcome& ref,
              const conformance::Outcome& dev) {
  violated("reference-binary64 and device-aten disagree: " + why + "\n  reference: " +
           outcomeText(ref) + "\n  device:    " + outcomeText(dev) + "\n" +
           describeProgram(p.testCase));
}

void runProgram(const Program& p) {
  const conformance::TestCase& c = p.testCase;
  const conformance::OpInfo* op = conformance::findOp(c.op);
  if (!op) violated("decoded an unknown op " + c.op);

  auto ref = conformance::makeReferenceTapeDouble();
  auto dev = conformance::makeDeviceTape(atenTable());
  const conformance::Outcome r = conformance::evaluate(*ref, c);
  const conformance::Outcome d = conformance::evaluate(*dev, c);

  if (ref->size() != dev->size())
    disagree(p, "the tapes hold " + std::to_string(ref->size()) + " and " +
                    std::to_string(dev->size()) + " nodes",
             r, d);
  if (r.error || d.error) {
    if (!r.error || !d.error || *r.error != *d.error) disagree(p, "errors differ", r, d);
    return;
  }
  if (r.value.shape != d.value.shape || r.value.values.size() != d.value.values.size())
    disagree(p, "value shapes differ", r, d);
  if (r.grads.size() != d.grads.size()) disagree(p, "gradient counts differ", r, d);
  for (std::size_t i = 0; i < r.grads.size(); ++i)
    if (r.grads[i].shape != d.grads[i].shape ||
        r.grads[i].values.size() != d.grads[i].values.size())
      disagree(p, "gradient " + std::to_string(i) + " shapes differ", r, d);
  if (!p.judgeValues) return;

  const conformance::ReferencedVerdict v =
      conformance::judgeWithOracle(*op, c, d, r, conformance::makeReferenceTapeOracle);
  const auto failed = [](const conformance::PassVerdict& pass) {
    return pass.status == conformance::Status::Failed;
  };
  if (v.verdict.errorCase) {
    if (failed(v.verdict.errors)) disagree(p, v.verdict.errors.reason, r, d);
    return;
  }
  if (failed(v.verdict.fwd)) disagree(p, "forward FAILED: " + v.verdict.fwd.reason, r, d);
  if (v.verdict.bwd && failed(*v.verdict.bwd))
    disagree(p, "backward FAILED: " + v.verdict.bwd->reason, r, d);
}

}  // namespace
}  // namespace tapecheck::fuzz

TAPECHECK_FUZZ_TARGET(tape) {
  using namespace tapecheck::fuzz;
  const Program p = decodeProgram(data, size);
  try {
    runProgram(p);
  } catch (const std::exception& e) {
    violated(std::string("an exception escaped: ") + e.what() + "\n" +
             describeProgram(p.testCase));
  }
  return 0;
}
