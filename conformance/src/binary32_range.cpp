#include "binary32_range.h"

#include <cmath>
#include <string>

#include "tapecheck/conformance/format.h"
#include "tapecheck/conformance/ulp.h"

namespace tapecheck::conformance {
namespace {

struct Explained {
  bool ok = false;         // every element beyond budget is explained, and there is one
  std::string firstWhere;  // "value[0] = nan, exact inf, binary32 nan"
};

// One output: the elements beyond `budget` against `exact`, as judgeOutput finds them.
Explained explain(const std::string& name, const TensorData& actual, const TensorData& exact,
                  const TensorData& binary32, const std::vector<double>& floors, double budget) {
  Explained out;
  if (actual.values.size() != exact.values.size() ||
      binary32.values.size() != exact.values.size())
    return out;
  bool any = false;
  for (std::size_t i = 0; i < exact.values.size(); ++i) {
    const double a = actual.values[i], e = exact.values[i], b = binary32.values[i];
    const double floor = elementFloor(floors, i);
    if (unitError(a, e, kBinary32Unit, floor) <= budget) continue;
    // Only a difference of kind, and one the binary32 reference shares with the kernel.
    if (std::isfinite(a) && std::isfinite(e)) return out;
    if (!(unitError(a, b, kBinary32Unit, floor) <= budget)) return out;
    if (!any)
      out.firstWhere = name + "[" + std::to_string(i) + "] = " + formatNumber(a) + ", exact " +
                       formatNumber(e) + ", binary32 " + formatNumber(b);
    any = true;
  }
  out.ok = any;
  return out;
}

// A failed pass whose outputs are `actual`, `exact`, `binary32` (parallel lists).
void excusePass(PassVerdict& pass, const std::vector<const TensorData*>& actual,
                const std::vector<const TensorData*>& exact,
                const std::vector<const TensorData*>& binary32, const Floors& floors,
                std::size_t firstFloor, double relL2Budget, bool& changed) {
  if (pass.status != Status::Failed || pass.outputs.size() != exact.size()) return;
  std::string where;
  bool explainedAny = false;
  for (std::size_t k = 0; k < exact.size(); ++k) {
    const OutputVerdict& o = pass.outputs[k];
    if (o.shapeMismatch) return;
    // The whole-gradient error skips non-finite pairs: if it fails, something else is wrong.
    if (relL2Budget > 0 && o.elements >= kRelL2MinElements && o.relL2Ulps > relL2Budget) return;
    if (o.maxUlps <= pass.budgetUlps) continue;
    const std::size_t f = firstFloor + k;
    static const std::vector<double> none;
    const Explained e = explain(o.name, *actual[k], *exact[k], *binary32[k],
                                f < floors.size() ? floors[f] : none, pass.budgetUlps);
    if (!e.ok) return;
    if (!explainedAny) where = e.firstWhere;
    explainedAny = true;
  }
  if (!explainedAny) return;
  pass.status = Status::Mistrusted;
  pass.reason = where + ": the exact value rests on magnitudes outside binary32's range (the "
                "spec's formulas in binary32 give the kernel's value)";
  changed = true;
}

}  // namespace

bool excuseBinary32Range(const OpInfo& op, const TestCase& c, const Outcome& actual,
                         const Outcome& exact, const Outcome& binary32, CaseVerdict& v) {
  if (v.errorCase || actual.error || exact.error || binary32.error) return false;
  if (binary32.grads.size() != exact.grads.size() || actual.grads.size() != exact.grads.size())
    return false;
  const Floors floors = op.floors ? op.floors(c, exact) : Floors{};
  bool changed = false;
  excusePass(v.fwd, {&actual.value}, {&exact.value}, {&binary32.value}, floors, 0, 0, changed);
  if (v.bwd) {
    std::vector<const TensorData*> a, e, b;
    for (std::size_t i = 0; i < exact.grads.size(); ++i) {
      a.push_back(&actual.grads[i]);
      e.push_back(&exact.grads[i]);
      b.push_back(&binary32.grads[i]);
    }
    excusePass(*v.bwd, a, e, b, floors, 1, v.bwd->budgetUlps * op.budget->bwdRelL2Fraction,
               changed);
  }
  return changed;
}

}  // namespace tapecheck::conformance
