// Judging golden vectors on a tape (check.h). The rules, in one place:
//   invalid     the call must fail with exactly the expected error string;
//   acceptable  either outcome passes (a value is not compared);
//   valid       the call must succeed; its value and every gradient must match the expected
//               tensors: on the reference, within judge.h's budget in binary64 units (the
//               multi-precision oracle is the tape under test); on the device, by the
//               conformance judge (conformance::judgeCase: budgets.h, per-element floors).
//               A layerNorm or batchNorm case whose result rounding epsilon to binary32 can
//               change beyond the oracle's (ABI-unsafe, docs/spec.md#epsilon-abi-safe) is not
//               judged on the device: kernel ABI v1 cannot express it.
#include "tapecheck/vectors/check.h"

#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <ostream>

#include "tapecheck/conformance/epsilon_abi.h"
#include "tapecheck/conformance/format.h"
#include "tapecheck/conformance/judge.h"
#include "tapecheck/conformance/op_registry.h"
#include "tapecheck/conformance/reference_tapes.h"
#include "tapecheck/vectors/judge.h"
#include "tapecheck/vectors/load.h"

namespace tapecheck::vectors {
namespace {

using conformance::Outcome;
using conformance::TensorData;

using conformance::formatExact;
using conformance::formatSignificant;

constexpr int kReportDigits = 3;  // significant digits of a distance in reports

struct Scale {
  double unit;
  double floorFactor;
  const char* unitName;  // for messages
};

constexpr Scale kReferenceScale{kReferenceUnit, kReferenceFloorFactor, "ulps of 2^-52"};
constexpr const char* kDeviceUnitName = "units of 2^-23";

struct Comparison {
  bool ok = true;
  std::string reason;           // the first tensor over budget
  double maxUlps = 0;
  std::vector<double> groups;   // one distance per tensor
  double valueUlps = 0, gradUlps = 0;
};

// Compares an outcome that has a value with the expected value and gradients. A negative
// budget means "measure only".
// `floors`: the op's per-element floors (floors[0] the value, floors[1 + i] leaf i's gradient).
Comparison compare(const Outcome& o, const Expected& e, const Scale& scale, double fwdBudget,
                   double bwdBudget, const conformance::Floors& floors) {
  Comparison c;
  std::size_t output = 0;
  auto judge = [&](const TensorData& actual, const TensorData& expected, const std::string& what,
                   double budget, double& slot) {
    const std::vector<double>* fl = output < floors.size() ? &floors[output] : nullptr;
    ++output;
    const TensorDistance d = tensorDistance(actual, expected, scale.unit, scale.floorFactor, fl);
    c.groups.push_back(d.maxUlps);
    c.maxUlps = std::max(c.maxUlps, d.maxUlps);
    slot = std::max(slot, d.maxUlps);
    if (!c.ok) return;
    if (!d.shapeMatches) {
      c.ok = false;
      c.reason = what + " has shape " + toString(actual.shape) + " (" +
                 std::to_string(actual.values.size()) + " values), expected " +
                 toString(expected.shape);
    } else if (budget >= 0 && d.maxUlps > budget) {
      c.ok = false;
      c.reason = what + "[" + std::to_string(d.worst) + "] = " + formatExact(d.actual) +
                 ", expected " + formatExact(d.expected) + ": " +
                 formatSignificant(d.maxUlps, kReportDigits) + " " + scale.unitName +
                 " > budget " + formatSignificant(budget, kReportDigits);
    }
  };
  if (e.value) judge(o.value, *e.value, "value", fwdBudget, c.valueUlps);
  if (e.grads) {
    if (o.grads.size() != e.grads->size()) {
      if (c.ok) {
        c.ok = false;
        c.reason = std::to_string(o.grads.size()) + " gradients, expected " +
                   std::to_string(e.grads->size()) + " (one per leaf)";
      }
      c.maxUlps = std::numeric_limits<double>::infinity();
      return c;
    }
    for (std::size_t i = 0; i < e.grads->size(); ++i)
      judge(o.grads[i], (*e.grads)[i], "gradient of leaf " + std::to_string(i), bwdBudget,
            c.gradUlps);
  }
  return c;
}

// The op's floor rule on the expected outcome (empty when the op has none).
conformance::Floors opFloors(const VectorTest& t) {
  const conformance::OpInfo* op = conformance::findSubject(t.testCase.op);
  if (!op || !op->floors || !t.expected.value) return {};
  Outcome expected;
  expected.value = *t.expected.value;
  if (t.expected.grads) expected.grads = *t.expected.grads;
  try {
    return op->floors(t.testCase, expected);
  } catch (const std::exception&) {
    return {};  // a rule that cannot read the case: judge against the tensor's scale alone
  }
}

Outcome evaluateSafely(conformance::AnyTape& tape, const conformance::TestCase& c) {
  try {
    return conformance::evaluate(tape, c);
  } catch (const std::exception& ex) {
    Outcome o;
    o.error = std::string("tapecheck: the tape threw an exception: ") + ex.what();
    return o;
  }
}

struct Verdict {
  bool passed = true;
  bool notJudged = false;
  bool mistrusted = false;
  std::string reason;
  std::string detail;           // for --verbose
  std::vector<double> groups;
  double maxUlps = 0;
};

// The device: the conformance judge with the vector's expected outcome as the reference.
Verdict judgeOnDevice(const VectorTest& t, const Outcome& o) {
  Verdict v;
  const conformance::OpInfo* op = conformance::findSubject(t.testCase.op);
  Outcome expected;
  expected.value = *t.expected.value;
  if (t.expected.grads) expected.grads = *t.expected.grads;
  if (o.grads.size() != expected.grads.size()) {
    v.passed = false;
    v.maxUlps = std::numeric_limits<double>::infinity();
    v.reason = std::to_string(o.grads.size()) + " gradients, expected " +
               std::to_string(expected.grads.size()) + " (one per leaf)";
    return v;
  }
  conformance::CaseVerdict cv;
  try {
    cv = conformance::judgeCase(*op, t.testCase, o, expected);
  } catch (const std::exception& ex) {
    v.passed = false;
    v.reason = std::string("the conformance judge could not read this case: ") + ex.what();
    return v;
  }
  std::vector<const conformance::PassVerdict*> passes{&cv.fwd};
  if (cv.bwd) passes.push_back(&*cv.bwd);
  const char* names[] = {"fwd", "bwd"};
  for (std::size_t i = 0; i < passes.size(); ++i) {
    const conformance::PassVerdict& p = *passes[i];
    for (const auto& out : p.outputs) v.groups.push_back(out.maxUlps);
    v.maxUlps = std::max(v.maxUlps, p.maxUlps);
    v.detail += std::string(i ? ", " : "") + names[i] + " " + conformance::formatUlps(p.maxUlps) +
                (p.status == conformance::Status::Mistrusted ? " (MISTRUSTED: " + p.reason + ")"
                                                             : "");
    if (p.status == conformance::Status::Failed && v.passed) {
      v.passed = false;
      v.reason = std::string(names[i]) + ": " + p.reason;
    }
    if (p.status == conformance::Status::Mistrusted) v.mistrusted = true;
  }
  v.detail += std::string(" ") + kDeviceUnitName;
  return v;
}

Verdict judgeTest(const VectorFile& f, const VectorTest& t, const Outcome& o, Target target) {
  Verdict v;
  const Expected& e = t.expected;
  switch (t.result) {
    case Expectation::Invalid:
      if (!o.error) {
        v.passed = false;
        v.maxUlps = std::numeric_limits<double>::infinity();
        v.reason = "expected error \"" + *e.error + "\", but the call succeeded";
      } else if (*o.error != *e.error) {
        v.passed = false;
        v.maxUlps = std::numeric_limits<double>::infinity();
        v.reason = "expected error \"" + *e.error + "\", got \"" + *o.error + "\"";
      } else {
        v.detail = "error as expected";
      }
      return v;
    case Expectation::Acceptable:
      v.detail = o.error ? "acceptable: failed with \"" + *o.error + "\""
                         : std::string("acceptable: returned a value");
      return v;
    case Expectation::Valid: break;
  }
  if (o.error) {
    v.passed = false;
    v.maxUlps = std::numeric_limits<double>::infinity();
    v.reason = "expected a value, got error \"" + *o.error + "\"";
    return v;
  }
  if (target == Target::Reference) {
    const double budget = referenceBudgetUlps(f.generator.provenance, t.testCase);
    const Comparison c = compare(o, e, kReferenceScale, budget, budget, opFloors(t));
    v.passed = c.ok;
    v.reason = c.reason;
    v.groups = c.groups;
    v.maxUlps = c.maxUlps;
    v.detail = "value " + formatSignificant(c.valueUlps, kReportDigits) +
               (e.grads ? ", grads " + formatSignificant(c.gradUlps, kReportDigits) : "") +
               " " + kReferenceScale.unitName;
    return v;
  }
  if (conformance::classifyEpsilonAbi(t.testCase) == conformance::EpsilonAbi::Unsafe) {
    v.notJudged = true;
    v.detail = "not judged: kernel ABI v1 rounds epsilon to binary32, which changes this "
               "result (docs/spec.md#epsilon-abi-safe)";
    return v;
  }
  return judgeOnDevice(t, o);
}

VectorOpTotals& totalsFor(std::vector<VectorOpTotals>& perOp, const std::string& op) {
  for (auto& t : perOp)
    if (t.op == op) return t;
  perOp.push_back(VectorOpTotals{});
  perOp.back().op = op;
  return perOp.back();
}

}  // namespace

Result<VectorCheckResult> checkVectorFiles(const std::vector<VectorFile>& files,
                                           const VectorCheckOptions& options, std::ostream& log) {
  if (options.target == Target::Device && !options.deviceTape)
    return Error{"tapecheck: --target device needs a device tape"};
  VectorCheckResult r;
  r.files = files.size();
  for (const VectorFile& f : files) {
    for (const VectorTest& t : f.tests) {
      VectorOpTotals& totals = totalsFor(r.perOp, f.op);
      ++r.tests;
      ++totals.tests;
      std::unique_ptr<conformance::AnyTape> tape = options.target == Target::Reference
                                                       ? conformance::makeReferenceTapeOracle()
                                                       : options.deviceTape();
      if (!tape) return Error{"tapecheck: the device tape could not be made"};
      const Outcome o = evaluateSafely(*tape, t.testCase);
      Verdict v = judgeTest(f, t, o, options.target);

      // Informational: how far the binary64 reference tape lands from the expected values.
      std::string binary64Note;
      if (options.target == Target::Reference && t.result == Expectation::Valid) {
        auto b64tape = conformance::makeReferenceTapeDouble();
        const Outcome b = evaluateSafely(*b64tape, t.testCase);
        if (b.error) {
          ++totals.binary64TapeDisagreements;
          binary64Note = "; binary64 tape failed: " + *b.error;
        } else {
          const Comparison c = compare(b, t.expected, kReferenceScale, -1, -1, opFloors(t));
          if (std::isinf(c.maxUlps))
            ++totals.binary64TapeDisagreements;  // a non-finite value of another kind
          else
            totals.maxBinary64TapeUlps = std::max(totals.maxBinary64TapeUlps, c.maxUlps);
          binary64Note = "; binary64 tape " + formatSignificant(c.maxUlps, kReportDigits) + " ulps";
        }
      }

      totals.errorsUlps.insert(totals.errorsUlps.end(), v.groups.begin(), v.groups.end());
      if (totals.worstFile.empty() || v.maxUlps > totals.worstUlps ||
          (std::isnan(v.maxUlps) && !std::isnan(totals.worstUlps))) {
        totals.worstFile = f.path;
        totals.worstTcId = t.tcId;
        totals.worstUlps = v.maxUlps;
      }
      if (!std::isinf(v.maxUlps)) totals.maxErrorUlps = std::max(totals.maxErrorUlps, v.maxUlps);
      if (v.mistrusted) ++totals.mistrusted;
      if (v.notJudged) {
        ++r.notJudged;
        ++totals.notJudged;
        r.notJudgedTests.push_back(VectorFailure{f.path, f.op, t.tcId, v.detail, 0});
      } else if (v.passed) {
        ++r.passed;
        ++totals.passed;
      } else {
        if (std::isinf(v.maxUlps)) totals.maxErrorUlps = v.maxUlps;
        ++r.failed;
        ++totals.failed;
        r.failures.push_back(VectorFailure{f.path, f.op, t.tcId, v.reason, v.maxUlps});
      }
      if (options.verbose)
        log << (v.notJudged ? "NOT JUDGED " : v.passed ? "PASSED " : "FAILED ") << f.path
            << " tcId " << t.tcId << " (" << f.op << ", " << expectationName(t.result)
            << "): " << (v.passed ? v.detail : v.reason) << binary64Note << "\n";
    }
  }
  // Per-op totals in registry order, the ops' then the programs' (a program's case file).
  std::vector<VectorOpTotals> ordered;
  for (const auto* registry : {&conformance::opRegistry(), &conformance::programRegistry()})
    for (const auto& op : *registry)
      for (auto& t : r.perOp)
        if (t.op == op.name) ordered.push_back(std::move(t));
  r.perOp = std::move(ordered);
  return r;
}

Result<VectorCheckResult> checkVectorPaths(const std::vector<std::string>& paths,
                                           const VectorCheckOptions& options, std::ostream& log) {
  TAPECHECK_TRY(list, collectVectorFiles(paths));
  std::vector<VectorFile> files;
  for (const std::string& p : list) {
    TAPECHECK_TRY(f, loadVectorFile(p));
    files.push_back(std::move(f));
  }
  return checkVectorFiles(files, options, log);
}

Result<VectorCheckResult> checkVectorPaths(const std::vector<std::string>& paths, Target target,
                                           const conformance::TapeFactory& deviceTape,
                                           std::ostream& log) {
  VectorCheckOptions options;
  options.target = target;
  options.deviceTape = deviceTape;
  return checkVectorPaths(paths, options, log);
}

void printVectorCheckReport(const VectorCheckResult& r, Target target, std::ostream& out) {
  for (const VectorFailure& f : r.failures)
    out << "FAILED " << f.file << " tcId " << f.tcId << " (" << f.op << "): " << f.reason
        << "\n";
  for (const VectorOpTotals& t : r.perOp) {
    out << "op " << t.op << ": tests:" << t.tests << " passed:" << t.passed
        << " failed:" << t.failed
        << " max-error:" << formatSignificant(t.maxErrorUlps, kReportDigits) << " "
        << (target == Target::Reference ? kReferenceScale.unitName : kDeviceUnitName);
    if (t.mistrusted) out << " mistrusted:" << t.mistrusted << " (passed, mostly zeros)";
    if (t.notJudged)
      out << " not-judged:" << t.notJudged << " (epsilon beyond kernel ABI v1, "
          << "docs/spec.md#epsilon-abi-safe)";
    if (target == Target::Reference) {
      out << " (binary64 tape, informational: max "
          << formatSignificant(t.maxBinary64TapeUlps, kReportDigits) << " ulps";
      if (t.binary64TapeDisagreements)
        out << ", " << t.binary64TapeDisagreements << " tests with an error or a non-finite value "
            << "of another kind";
      out << ")";
    }
    out << "\n";
  }
  out << "vectors: files:" << r.files << " tests:" << r.tests << " passed:" << r.passed
      << " failed:" << r.failed;
  if (r.notJudged) out << " not-judged:" << r.notJudged;
  out << "\n";
}

}  // namespace tapecheck::vectors
