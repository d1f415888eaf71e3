#include "tapecheck/conformance/pullback_isolation.h"

#include <limits>
#include <utility>

namespace tapecheck::conformance {
namespace {

bool failed(const PassVerdict& v) { return v.status == Status::Failed; }

// The backward verdict of the isolated evaluation, its reason saying where it comes from.
PassVerdict isolatedBackward(const CaseVerdict& isolated, double budgetUlps) {
  PassVerdict b;
  if (isolated.errorCase || !isolated.bwd) {
    b.status = Status::Failed;
    b.maxUlps = std::numeric_limits<double>::infinity();
    b.budgetUlps = budgetUlps;
    b.reason = "on the reference forward's outputs: " +
               (isolated.errorCase ? isolated.errors.reason : std::string("no gradients"));
    return b;
  }
  b = *isolated.bwd;
  if (!b.reason.empty()) b.reason = "on the reference forward's outputs: " + b.reason;
  return b;
}

}  // namespace

bool needsIsolatedPullback(const CaseVerdict& own) {
  return !own.errorCase && own.bwd && (failed(own.fwd) || failed(*own.bwd));
}

CaseVerdict isolatePullback(CaseVerdict own, const CaseVerdict& isolated) {
  if (!needsIsolatedPullback(own)) return own;
  PassVerdict alone = isolatedBackward(isolated, own.bwd->budgetUlps);
  if (failed(own.fwd)) {
    own.bwd = std::move(alone);
    return own;
  }
  if (failed(alone)) {
    own.bwd->reason += " (it fails on the reference forward's outputs too)";
    return own;
  }
  own.fwd.status = Status::Failed;
  own.fwd.reason = "the forward's saved outputs make its correct pullback fail: " +
                   own.bwd->reason + " (the pullback passes on the reference forward's outputs)";
  own.bwd = std::move(alone);
  return own;
}

}  // namespace tapecheck::conformance
