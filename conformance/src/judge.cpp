#include "tapecheck/conformance/judge.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "binary32_range.h"
#include "tapecheck/conformance/format.h"
#include "tapecheck/conformance/reference_tapes.h"
#include "tapecheck/conformance/ulp.h"
#include "values.h"

namespace tapecheck::conformance {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string argName(const TestCase& c, std::size_t leaf) {
  for (const auto& [name, id] : c.call)
    if (id == leaf) return name;
  return "leaf" + std::to_string(leaf);
}

const std::vector<double>& floorsAt(const Floors& f, std::size_t i) {
  static const std::vector<double> none;
  return i < f.size() ? f[i] : none;
}

}  // namespace

double budgetShare(double ulps, double budget) {
  if (!(ulps > 0)) return 0;
  return budget > 0 ? ulps / budget : kInf;
}

namespace {

// Status of a pass from its outputs: a failure beats mistrust beats a pass.
void settle(PassVerdict& pass, double budget, double relL2Budget, bool checkRelL2,
            bool emptyInputs) {
  // Cases on empty tensors test the tape's shape semantics, not arithmetic: never mistrusted
  // for being all zero.
  bool allZero = !pass.outputs.empty() && !emptyInputs;
  for (const OutputVerdict& o : pass.outputs) {
    pass.maxUlps = std::max(pass.maxUlps, o.maxUlps);
    allZero = allZero && o.allZero;
    pass.budgetShare = std::max(pass.budgetShare, budgetShare(o.maxUlps, budget));
    if (checkRelL2 && o.elements >= kRelL2MinElements)
      pass.budgetShare = std::max(pass.budgetShare, budgetShare(o.relL2Ulps, relL2Budget));
  }
  for (const OutputVerdict& o : pass.outputs) {
    if (o.shapeMismatch) {
      pass.status = Status::Failed;
      pass.reason = o.name + ": shape or size differs from the expected one";
      return;
    }
  }
  const OutputVerdict* worst = nullptr;
  for (const OutputVerdict& o : pass.outputs)
    if (o.maxUlps > budget && (!worst || o.maxUlps > worst->maxUlps)) worst = &o;
  if (worst) {
    pass.status = Status::Failed;
    pass.reason = worst->name + "[" + std::to_string(worst->worstIndex) + "] = " +
                  formatNumber(worst->worstActual) + ", expected " +
                  formatNumber(worst->worstExpected) + " (floor " +
                  formatNumber(worst->worstFloor) + "): " + formatUlps(worst->maxUlps) +
                  " > budget " + formatUlps(budget);
    return;
  }
  // The whole-gradient check is about a bias spread over many elements; on a handful it would
  // only be a stricter element check.
  if (checkRelL2)
    for (const OutputVerdict& o : pass.outputs)
      if (o.elements >= kRelL2MinElements && o.relL2Ulps > relL2Budget) {
        pass.status = Status::Failed;
        pass.reason = o.name + ": relative L2 error " + formatUlps(o.relL2Ulps) + " > budget " +
                      formatUlps(relL2Budget) + " (a bias spread over the whole gradient)";
        return;
      }
  for (const OutputVerdict& o : pass.outputs)
    if (o.expectedNonzero > 0 &&
        static_cast<double>(o.zerosWhereNonzero) >
            kMistrustZeroFraction * static_cast<double>(o.expectedNonzero)) {
      pass.status = Status::Mistrusted;
      pass.reason = o.name + ": " + std::to_string(o.zerosWhereNonzero) + " of " +
                    std::to_string(o.expectedNonzero) +
                    " nonzero expected values came back exactly 0";
      return;
    }
  if (allZero) {
    pass.status = Status::Mistrusted;
    pass.reason = "every output is zero on both sides";
  }
}

}  // namespace

OutputVerdict judgeOutput(const std::string& name, const TensorData& actual,
                          const TensorData& expected, const std::vector<double>& floors) {
  OutputVerdict v;
  v.name = name;
  if (actual.shape != expected.shape || actual.values.size() != expected.values.size()) {
    v.shapeMismatch = true;
    v.maxUlps = kInf;
    return v;
  }
  double num = 0, den = 0;
  bool allZero = true;
  v.elements = expected.values.size();
  for (std::size_t i = 0; i < expected.values.size(); ++i) {
    const double a = actual.values[i], e = expected.values[i];
    // Below binary32's normal range an ulp is 2^-149 = 2^-23 * 2^-126: no floor is finer.
    const double floor = elementFloor(floors, i);
    const double err = unitError(a, e, kBinary32Unit, floor);
    if (err > v.maxUlps || (i == 0 && err == 0 && v.maxUlps == 0)) {
      v.maxUlps = err;
      v.worstIndex = i;
      v.worstActual = a;
      v.worstExpected = e;
      v.worstFloor = floor;
    }
    if (std::isfinite(a) && std::isfinite(e)) {
      num += (a - e) * (a - e);
      const double s = std::max(std::fabs(e), floor);
      den += s * s;
    }
    if (e != 0 && std::isfinite(e)) {
      ++v.expectedNonzero;
      if (a == 0) ++v.zerosWhereNonzero;
    }
    allZero = allZero && e == 0 && a == 0;
  }
  v.allZero = allZero;
  if (num > 0) v.relL2Ulps = den > 0 ? std::sqrt(num / den) / kBinary32Unit : kInf;
  return v;
}

CaseVerdict judgeCase(const OpInfo& op, const TestCase& c, const Outcome& actual,
                      const Outcome& expected) {
  CaseVerdict out;
  if (actual.error || expected.error) {
    out.errorCase = true;
    if (actual.error && expected.error && *actual.error == *expected.error) return out;
    out.errors.status = Status::Failed;
    out.errors.maxUlps = kInf;
    out.errors.reason = "error mismatch: got " +
                        (actual.error ? "'" + *actual.error + "'" : std::string("success")) +
                        ", expected " +
                        (expected.error ? "'" + *expected.error + "'" : std::string("success"));
    return out;
  }
  const OpBudget& budget = *op.budget;
  const double fwdBudget = budgetUlps(budget.fwd, reductionLength(op, c, false));
  const double bwdBudget = budgetUlps(budget.bwd, reductionLength(op, c, true));
  const Floors floors = op.floors ? op.floors(c, expected) : Floors{};
  out.fwd.outputs.push_back(judgeOutput("value", actual.value, expected.value, floorsAt(floors, 0)));
  bool emptyInputs = !c.leaves.empty();
  for (const Leaf& l : c.leaves) emptyInputs = emptyInputs && l.value.values.empty();
  out.fwd.budgetUlps = fwdBudget;
  settle(out.fwd, fwdBudget, 0, false, emptyInputs);
  if (op.hasBackward && c.upstream) {
    PassVerdict bwd;
    bwd.budgetUlps = bwdBudget;
    if (actual.grads.size() != expected.grads.size()) {
      bwd.status = Status::Failed;
      bwd.maxUlps = kInf;
      bwd.reason = "got " + std::to_string(actual.grads.size()) + " gradients, expected " +
                   std::to_string(expected.grads.size());
    } else {
      for (std::size_t i = 0; i < expected.grads.size(); ++i)
        bwd.outputs.push_back(judgeOutput("grad[" + argName(c, i) + "]", actual.grads[i],
                                          expected.grads[i], floorsAt(floors, i + 1)));
      settle(bwd, bwdBudget, bwdBudget * budget.bwdRelL2Fraction, true, emptyInputs);
    }
    out.bwd = std::move(bwd);
  }
  return out;
}

ReferencedVerdict judgeWithOracle(const OpInfo& op, const TestCase& c, const Outcome& actual,
                                  const Outcome& reference64, const TapeFactory& oracle,
                                  const TapeFactory& binary32) {
  ReferencedVerdict r;
  r.verdict = judgeCase(op, c, actual, reference64);
  const auto failed = [](const CaseVerdict& v) {
    return !v.errorCase &&
           (v.fwd.status == Status::Failed || (v.bwd && v.bwd->status == Status::Failed));
  };
  if (!failed(r.verdict)) return r;
  auto tape = oracle();
  r.oracle = evaluate(*tape, c);
  r.oracleConsulted = true;
  if (r.oracle->error) return r;
  r.verdict = judgeCase(op, c, actual, *r.oracle);
  if (!failed(r.verdict)) return r;
  auto b32 = binary32 ? binary32() : makeReferenceTapeFloat();
  r.binary32Excused = excuseBinary32Range(op, c, actual, *r.oracle, evaluate(*b32, c), r.verdict);
  return r;
}

namespace {

bool allFinite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

// Per element: min(1, RMS deviation of its last-axis row), 1 for constant rows -- a step that
// stays inside the smooth region of every op (logit scale, a row's spread).
std::vector<double> directionScale(const TensorData& t) {
  std::vector<double> out(t.values.size(), 1.0);
  const std::size_t cols = t.shape.empty() || t.shape.back() == 0
                               ? std::max<std::size_t>(t.values.size(), 1)
                               : static_cast<std::size_t>(t.shape.back());
  for (std::size_t start = 0; start < t.values.size(); start += cols) {
    const std::size_t end = std::min(t.values.size(), start + cols);
    double mean = 0;
    for (std::size_t i = start; i < end; ++i) mean += t.values[i];
    mean /= static_cast<double>(end - start);
    double var = 0;
    for (std::size_t i = start; i < end; ++i) var += (t.values[i] - mean) * (t.values[i] - mean);
    const double spread = std::sqrt(var / static_cast<double>(end - start));
    for (std::size_t i = start; i < end; ++i) out[i] = spread > 0 ? std::min(1.0, spread) : 1.0;
  }
  return out;
}

}  // namespace

DotCheck dotProductCheck(const OpInfo& op, const TestCase& c, const Outcome& actual,
                         const Outcome& expected, const TapeFactory& reference64,
                         std::uint64_t seed) {
  DotCheck d;
  if (!op.hasBackward || !op.dotIdentity || !c.upstream || actual.error || expected.error)
    return d;
  if (actual.grads.size() != c.leaves.size() || expected.grads.size() != c.leaves.size())
    return d;
  if (!allFinite(expected.value.values) || !allFinite(c.upstream->values)) return d;
  std::vector<bool> perturb(c.leaves.size(), false);
  bool any = false;
  for (std::size_t i = 0; i < c.leaves.size(); ++i) {
    const Leaf& l = c.leaves[i];
    if (!allFinite(l.value.values) || !allFinite(actual.grads[i].values)) return d;
    if (!l.requiresGrad) continue;
    bool constant = false;
    for (const std::string& name : op.constantArgs) {
      auto it = c.call.find(name);
      constant = constant || (it != c.call.end() && it->second == i);
    }
    if (constant || l.value.values.empty()) continue;
    perturb[i] = any = true;
  }
  if (!any) return d;

  values::Rng rng(seed);
  std::vector<std::vector<double>> v(c.leaves.size());
  for (std::size_t i = 0; i < c.leaves.size(); ++i) {
    if (!perturb[i]) continue;
    v[i] = directionScale(c.leaves[i].value);
    for (double& x : v[i]) x *= rng.chance(0.5) ? 1.0 : -1.0;
  }

  // f(x + t v) for t in {h, -h, 2h, -2h}, on the binary64 reference.
  const double h = 1e-4;
  std::vector<std::vector<double>> f;
  for (double t : {h, -h, 2 * h, -2 * h}) {
    TestCase moved = c;
    moved.upstream.reset();
    for (std::size_t i = 0; i < c.leaves.size(); ++i)
      if (perturb[i])
        for (std::size_t j = 0; j < v[i].size(); ++j)
          moved.leaves[i].value.values[j] += t * v[i][j];
    auto tape = reference64();
    const Outcome o = evaluate(*tape, moved);
    if (o.error || !allFinite(o.value.values) ||
        o.value.values.size() != c.upstream->values.size())
      return d;
    f.push_back(o.value.values);
  }
  const std::vector<double>& u = c.upstream->values;
  double rhs1 = 0, rhs2 = 0, magnitude = 0;
  for (std::size_t j = 0; j < u.size(); ++j) {
    rhs1 += u[j] * (f[0][j] - f[1][j]) / (2 * h);
    rhs2 += u[j] * (f[2][j] - f[3][j]) / (4 * h);
    magnitude += std::fabs(u[j]) * std::max({std::fabs(f[0][j]), std::fabs(f[1][j]),
                                             std::fabs(f[2][j]), std::fabs(f[3][j])});
  }
  // Richardson: the h^2 terms cancel; |rhs1 - rhs2| over-estimates what is left of them, and
  // rounding of f in binary64 costs ~magnitude * 2^-52 / h.
  d.rhs = (4 * rhs1 - rhs2) / 3;
  const double allowance = std::fabs(rhs1 - rhs2) + 64 * kBinary64Unit * magnitude / h;

  const Floors floors = op.floors ? op.floors(c, expected) : Floors{};
  double scale = 0;
  d.lhs = 0;
  for (std::size_t i = 0; i < c.leaves.size(); ++i) {
    if (!perturb[i]) continue;
    const std::vector<double>& fl = floorsAt(floors, i + 1);
    for (std::size_t j = 0; j < v[i].size(); ++j) {
      d.lhs += actual.grads[i].values[j] * v[i][j];
      const double fj = j < fl.size() ? fl[j] : 0.0;
      scale += std::max(std::fabs(expected.grads[i].values[j]), fj) * std::fabs(v[i][j]);
    }
  }
  const double excess = std::max(0.0, std::fabs(d.lhs - d.rhs) - allowance);
  d.applicable = true;
  d.ulps = excess == 0 ? 0.0 : scale > 0 ? excess / (kBinary32Unit * scale) : kInf;
  d.budgetUlps = budgetUlps(op.budget->bwd, reductionLength(op, c, true));
  d.passed = d.ulps <= d.budgetUlps;
  return d;
}

}  // namespace tapecheck::conformance
