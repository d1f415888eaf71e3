// Pullbacks judged on their own: the rules combining a case's verdict on the kernel's own forward
// with its verdict on the reference forward (pullback_isolation.h), on hand-made verdicts.
#include <catch2/catch.hpp>

#include "tapecheck/conformance/pullback_isolation.h"

using namespace tapecheck::conformance;

namespace {

PassVerdict pass(Status s, double ulps, const std::string& reason = "") {
  PassVerdict v;
  v.status = s;
  v.maxUlps = ulps;
  v.budgetUlps = 8;
  v.reason = reason;
  return v;
}

CaseVerdict verdict(PassVerdict fwd, PassVerdict bwd) {
  CaseVerdict v;
  v.fwd = std::move(fwd);
  v.bwd = std::move(bwd);
  return v;
}

}  // namespace

TEST_CASE("a case whose forward and backward pass needs no second evaluation", "[judge]") {
  const CaseVerdict own = verdict(pass(Status::Passed, 1), pass(Status::Passed, 2));
  CHECK_FALSE(needsIsolatedPullback(own));
  CaseVerdict errorCase;
  errorCase.errorCase = true;
  errorCase.errors = pass(Status::Failed, 0, "error mismatch");
  CHECK_FALSE(needsIsolatedPullback(errorCase));
  CaseVerdict noBackward;
  noBackward.fwd = pass(Status::Failed, 99, "value[0] wrong");
  CHECK_FALSE(needsIsolatedPullback(noBackward));
  CHECK(needsIsolatedPullback(verdict(pass(Status::Failed, 99), pass(Status::Passed, 1))));
  CHECK(needsIsolatedPullback(verdict(pass(Status::Passed, 1), pass(Status::Failed, 99))));
}

TEST_CASE("a forward bug is a forward failure once; the pullback is judged on the reference "
          "forward",
          "[judge]") {
  const CaseVerdict own = verdict(pass(Status::Failed, 1e9, "value[4] = nan, expected 1"),
                                  pass(Status::Failed, 1e9, "grad[x][4] = nan, expected 0"));
  const CaseVerdict isolated = verdict(pass(Status::Passed, 0.5), pass(Status::Passed, 1.5));
  const CaseVerdict v = isolatePullback(own, isolated);
  CHECK(v.fwd.status == Status::Failed);
  CHECK(v.fwd.reason == "value[4] = nan, expected 1");
  REQUIRE(v.bwd);
  CHECK(v.bwd->status == Status::Passed);
  CHECK(v.bwd->maxUlps == 1.5);
}

TEST_CASE("a wrong pullback under a wrong forward still fails, on the reference forward",
          "[judge]") {
  const CaseVerdict own = verdict(pass(Status::Failed, 50, "value wrong"),
                                  pass(Status::Failed, 70, "grad wrong"));
  const CaseVerdict isolated =
      verdict(pass(Status::Passed, 0.5), pass(Status::Failed, 60, "grad[x][0] = 2, expected 1"));
  const CaseVerdict v = isolatePullback(own, isolated);
  CHECK(v.fwd.status == Status::Failed);
  REQUIRE(v.bwd);
  CHECK(v.bwd->status == Status::Failed);
  CHECK(v.bwd->maxUlps == 60);
  CHECK(v.bwd->reason == "on the reference forward's outputs: grad[x][0] = 2, expected 1");
}

TEST_CASE("a pullback that fails on both forwards is a backward failure", "[judge]") {
  const CaseVerdict own = verdict(pass(Status::Passed, 1), pass(Status::Failed, 70, "grad wrong"));
  const CaseVerdict isolated = verdict(pass(Status::Passed, 0.5), pass(Status::Failed, 65, "g"));
  const CaseVerdict v = isolatePullback(own, isolated);
  CHECK(v.fwd.status == Status::Passed);
  REQUIRE(v.bwd);
  CHECK(v.bwd->status == Status::Failed);
  CHECK(v.bwd->maxUlps == 70);
  CHECK(v.bwd->reason == "grad wrong (it fails on the reference forward's outputs too)");
}

TEST_CASE("wrong saved outputs behind a right value fail the forward, not the pullback",
          "[judge]") {
  const CaseVerdict own =
      verdict(pass(Status::Passed, 1), pass(Status::Failed, 70, "grad[gamma][0] = 0"));
  const CaseVerdict isolated = verdict(pass(Status::Passed, 0.5), pass(Status::Passed, 2));
  const CaseVerdict v = isolatePullback(own, isolated);
  CHECK(v.fwd.status == Status::Failed);
  CHECK(v.fwd.reason.find("saved outputs") != std::string::npos);
  CHECK(v.fwd.reason.find("grad[gamma][0] = 0") != std::string::npos);
  REQUIRE(v.bwd);
  CHECK(v.bwd->status == Status::Passed);
  CHECK(v.bwd->maxUlps == 2);
}

TEST_CASE("an isolated evaluation that returns an error fails the pullback", "[judge]") {
  const CaseVerdict own = verdict(pass(Status::Failed, 9, "value wrong"), pass(Status::Passed, 1));
  CaseVerdict isolated;
  isolated.errorCase = true;
  isolated.errors = pass(Status::Failed, 0, "error mismatch: got 'kernel returned 1'");
  const CaseVerdict v = isolatePullback(own, isolated);
  REQUIRE(v.bwd);
  CHECK(v.bwd->status == Status::Failed);
  CHECK(v.bwd->reason.find("kernel returned 1") != std::string::npos);
}
