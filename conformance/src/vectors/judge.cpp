#include "tapecheck/vectors/judge.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tapecheck/conformance/op_registry.h"

namespace tapecheck::vectors {

TensorDistance tensorDistance(const conformance::TensorData& actual,
                              const conformance::TensorData& expected, double unit,
                              double floorFactor, const std::vector<double>* elementFloors) {
  TensorDistance d;
  if (actual.shape != expected.shape || actual.values.size() != expected.values.size()) {
    d.shapeMatches = false;
    d.maxUlps = std::numeric_limits<double>::infinity();
    return d;
  }
  double scale = 0;
  for (double e : expected.values)
    if (std::isfinite(e)) scale = std::max(scale, std::fabs(e));
  const double tensorFloor = floorFactor * scale;
  const bool perElement = elementFloors && elementFloors->size() == expected.values.size();
  if (!expected.values.empty()) {
    d.actual = actual.values[0];
    d.expected = expected.values[0];
  }
  for (std::size_t i = 0; i < expected.values.size(); ++i) {
    const double err =
        conformance::unitError(actual.values[i], expected.values[i], unit,
                               perElement ? std::max(tensorFloor, (*elementFloors)[i])
                                          : tensorFloor);
    if (err > d.maxUlps) {
      d.maxUlps = err;
      d.worst = i;
      d.actual = actual.values[i];
      d.expected = expected.values[i];
    }
  }
  return d;
}

bool isLeanProvenance(const std::string& provenance) { return provenance.rfind("lean:", 0) == 0; }

double referenceBudgetUlps(const std::string& provenance, const conformance::TestCase& c) {
  if (!isLeanProvenance(provenance)) return kReferenceBudgetUlps;
  const conformance::OpInfo* op = conformance::findSubject(c.op);
  const double n = op ? conformance::reductionLength(*op, c) : 1.0;
  return kReferenceBudgetUlps + 2.0 * std::max(1.0, n);
}

}  // namespace tapecheck::vectors
