#include "tapecheck/certify/verdict.h"

#include <algorithm>
#include <cmath>

#include "tapecheck/conformance/format.h"

namespace tapecheck::certify {

using conformance::formatFigure;
namespace {

std::string count(std::uint64_t n) { return std::to_string(n); }

std::string passName(const std::string& op, const std::string& pass) { return op + " " + pass; }

void judgePass(const std::string& op, PassRecord& p, const JudgeOptions& options) {
  if (!p.provided()) return;
  const std::string who = passName(op, p.pass);
  if (p.failures > 0)
    p.reasons.push_back(who + ": " + count(p.failures) + " of " + count(p.cases) +
                        " cases failed (max error " + formatFigure(p.maxUlps) + " ulps, budget " +
                        formatFigure(p.budgetUlps) + " ulps)" +
                        (p.faults > 0 ? "; the kernels faulted on " + count(p.faults) +
                                            (p.faults == 1 ? " case: " : " cases, the first: ") +
                                            p.firstFault
                                      : std::string()));
  else if (p.budgetUlps > 0 && !(p.maxUlps <= p.budgetUlps))  // (the line above says it too)
    p.reasons.push_back(who + ": max error " + formatFigure(p.maxUlps) +
                        " ulps exceeds the budget of " + formatFigure(p.budgetUlps) + " ulps");
  if (p.cases > 0 &&
      static_cast<double>(p.mistrusted) > options.maxMistrustedFraction * double(p.cases))
    p.reasons.push_back(who + ": " + count(p.mistrusted) + " of " + count(p.cases) +
                        " cases mistrusted (more than " +
                        formatFigure(100 * options.maxMistrustedFraction) +
                        "% of the cases are no evidence)");
  // A pass without cases was not run (a shard without its share of them, or a pass the op
  // does not have): there is nothing to judge; the op-level rule catches an op never run.
  const std::uint64_t notPassing = p.failures + p.mistrusted + p.skipped;
  if (p.cases > 0 && notPassing >= p.cases)
    p.reasons.push_back(who + ": no trusted passing case (" + count(p.cases) + " cases, " +
                        count(p.skipped) + " skipped, " + count(p.mistrusted) + " mistrusted)");
}

void compareWithBaseline(Certificate& cert, const Certificate& baseline,
                         const JudgeOptions& options, std::vector<std::string>& certReasons) {
  // Every pass of the baseline, in its order, then passes new in this run.
  for (const OpRecord& bop : baseline.ops) {
    for (const PassRecord& bp : bop.passes) {
      BaselineChange c;
      c.op = bop.op;
      c.pass = bp.pass;
      c.baselineFailures = bp.failures;
      c.baselineMaxUlps = bp.maxUlps;
      c.baselineP99Ulps = bp.p99Ulps;
      PassRecord* p = nullptr;
      for (OpRecord& op : cert.ops)
        if (op.op == bop.op)
          for (PassRecord& q : op.passes)
            if (q.pass == bp.pass) p = &q;
      const std::string who = passName(bop.op, bp.pass);
      if (!bp.provided()) continue;  // nothing the baseline certified
      if (!p || !p->provided()) {
        c.kind = "missing";
        c.rejects = true;
        certReasons.push_back(who + ": tested by the baseline (" + baseline.identity.kernelsName +
                              " " + baseline.identity.kernelsVersion + ") but " +
                              (p ? "not provided by these kernels" : "not by this run"));
        cert.changes.push_back(c);
        continue;
      }
      c.failures = p->failures;
      c.maxUlps = p->maxUlps;
      c.p99Ulps = p->p99Ulps;
      if (errorGrew(bp.maxUlps, p->maxUlps, options.growthFactor, options.growthSlackUlps)) {
        c.kind = "error-growth";
        c.rejects = true;
        p->reasons.push_back(who + ": max error grew from " + formatFigure(bp.maxUlps) +
                             " ulps in the baseline (" + baseline.identity.kernelsName + " " +
                             baseline.identity.kernelsVersion + ") to " +
                             formatFigure(p->maxUlps) + " ulps, more than " +
                             formatFigure(options.growthFactor) + "x and by more than " +
                             formatFigure(options.growthSlackUlps) + " ulp");
      } else if (p->failures > bp.failures) {
        c.kind = "new-failures";
        c.rejects = true;  // failures reject on their own; named here for the report
      } else {
        c.kind = "unchanged";
      }
      cert.changes.push_back(c);
    }
  }
  for (const OpRecord& op : cert.ops)
    for (const PassRecord& p : op.passes) {
      if (!p.provided()) continue;
      const PassRecord* before = baseline.findPass(op.op, p.pass);
      if (!before || !before->provided()) {
        BaselineChange c;
        c.op = op.op;
        c.pass = p.pass;
        c.kind = p.failures > 0 ? "new-failures" : "new-pass";
        c.failures = p.failures;
        c.maxUlps = p.maxUlps;
        c.p99Ulps = p.p99Ulps;
        c.rejects = p.failures > 0;
        cert.changes.push_back(c);
      }
    }
}

}  // namespace

bool errorGrew(double baselineMaxUlps, double currentMaxUlps, double factor, double slackUlps) {
  if (std::isnan(currentMaxUlps)) return !std::isnan(baselineMaxUlps);
  if (std::isinf(baselineMaxUlps) || std::isnan(baselineMaxUlps)) return false;
  if (std::isinf(currentMaxUlps)) return true;
  return currentMaxUlps > factor * baselineMaxUlps && currentMaxUlps - baselineMaxUlps > slackUlps;
}

void judge(Certificate& cert, const JudgeOptions& options, const Certificate* baseline,
           const std::string& baselineSha256) {
  cert.reasons.clear();
  cert.changes.clear();
  cert.baseline.reset();
  for (OpRecord& op : cert.ops) {
    op.reasons.clear();
    for (PassRecord& p : op.passes) {
      p.reasons.clear();
      judgePass(op.op, p, options);
    }
  }
  std::vector<std::string> certReasons;  // reasons that belong to no pass of this run
  if (baseline) {
    BaselineInfo info;
    info.sha256 = baselineSha256;
    info.kernelsName = baseline->identity.kernelsName;
    info.kernelsVersion = baseline->identity.kernelsVersion;
    info.gitRevision = baseline->identity.gitRevision;
    info.corpusSha256 = baseline->identity.corpusSha256;
    info.growthFactor = options.growthFactor;
    info.growthSlackUlps = options.growthSlackUlps;
    cert.baseline = info;
    compareWithBaseline(cert, *baseline, options, certReasons);
  }
  if (!cert.shard) {
    for (const std::string& name : options.expectedOps) {
      if (cert.findOp(name)) continue;
      OpRecord missing;
      missing.op = name;
      cert.ops.push_back(missing);
    }
  }
  for (OpRecord& op : cert.ops) {
    const bool run = std::any_of(op.passes.begin(), op.passes.end(),
                                 [](const PassRecord& p) { return p.cases > 0; });
    const bool notProvided =
        !op.passes.empty() && std::none_of(op.passes.begin(), op.passes.end(),
                                           [](const PassRecord& p) { return p.provided(); });
    if (!run && !notProvided && !cert.shard)
      op.reasons.push_back(op.op + ": not tested (no pass of this op was run)");
    bool rejected = !op.reasons.empty();
    for (PassRecord& p : op.passes) {
      p.verdict = !p.provided()         ? Verdict::NotProvided
                  : p.reasons.empty() ? Verdict::Certified
                                      : Verdict::Rejected;
      rejected = rejected || !p.reasons.empty();
    }
    op.verdict = rejected      ? Verdict::Rejected
                 : notProvided ? Verdict::NotProvided
                               : Verdict::Certified;
    for (const std::string& r : op.reasons) cert.reasons.push_back(r);
    for (const PassRecord& p : op.passes)
      for (const std::string& r : p.reasons) cert.reasons.push_back(r);
  }
  // A pass the baseline had and this run lacks: the op is rejected too, when it is listed.
  for (const std::string& r : certReasons) {
    cert.reasons.push_back(r);
    const std::string opName = r.substr(0, r.find(' '));
    for (OpRecord& op : cert.ops)
      if (op.op == opName) {
        op.reasons.push_back(r);
        op.verdict = Verdict::Rejected;
      }
  }
  cert.verdict = cert.reasons.empty() ? Verdict::Certified : Verdict::Rejected;
}

}  // namespace tapecheck::certify
