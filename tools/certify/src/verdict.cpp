#include "tapecheck/certify/verdict.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

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

double worstValue(double ulps) {
  return std::isnan(ulps) ? std::numeric_limits<double>::infinity() : ulps;
}

std::string shellWord(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_./=:,+") == std::string::npos)
    return s;
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

bool hasCaseData(const OpRecord* op, const PassRecord& p) {
  return op && op->caseLog && !p.caseStatus.empty() && p.caseStatus.size() == op->caseLog->cases;
}

// The same cases of `bp` and `p`, one by one: counts, new failures, and every shape class whose
// max error over those cases grew.
void comparePaired(const Certificate& cert, const OpRecord& op, const PassRecord& bp,
                   PassRecord& p, const Certificate& baseline, const JudgeOptions& options,
                   BaselineChange& c) {
  const CaseLog& log = *op.caseLog;
  struct ClassAcc {
    std::uint64_t cases = 0;
    double baselineMax = 0, max = 0, worstBaseline = 0;
    std::uint64_t worst = 0;
  };
  std::vector<ClassAcc> classes(log.shapeClasses.size());
  std::uint64_t newFailures = 0;
  const std::size_t n = std::min(bp.caseStatus.size(), p.caseStatus.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (bp.caseStatus[i] == kCaseNotJudged || p.caseStatus[i] == kCaseNotJudged) continue;
    const std::int32_t cls = i < log.caseShapeClass.size() ? log.caseShapeClass[i] : -1;
    if (cls < 0) continue;
    ++c.pairedCases;
    if (p.caseStatus[i] == kCaseFailed && bp.caseStatus[i] != kCaseFailed) ++newFailures;
    ClassAcc& a = classes[static_cast<std::size_t>(cls)];
    const double b = worstValue(bp.caseUlps[i]), now = worstValue(p.caseUlps[i]);
    a.baselineMax = std::max(a.baselineMax, b);
    if (a.cases == 0 || now > a.max) {
      a.max = now;
      a.worst = i;
      a.worstBaseline = b;
    }
    ++a.cases;
  }
  // Error strings are right or wrong: their failures say all (rule 1).
  if (p.pass != "errors")
    for (std::size_t k = 0; k < classes.size(); ++k) {
      const ClassAcc& a = classes[k];
      if (a.cases == 0 ||
          !errorGrew(a.baselineMax, a.max, options.growthFactor, options.growthSlackUlps))
        continue;
      ClassGrowth g;
      g.shapeClass = log.shapeClasses[k];
      g.cases = a.cases;
      g.baselineMaxUlps = a.baselineMax;
      g.maxUlps = a.max;
      g.growthBoundUlps =
          growthBound(a.baselineMax, options.growthFactor, options.growthSlackUlps);
      g.worstCase = a.worst;
      g.worstCaseBaselineUlps = a.worstBaseline;
      if (options.caseShape) g.shape = options.caseShape(op.op, a.worst);
      g.reproducer = reproduceCommand(cert.identity, op.op, a.worst);
      p.reasons.push_back(
          passName(op.op, p.pass) + " " + g.shapeClass + ": max error grew from " +
          formatFigure(g.baselineMaxUlps) + " ulps in the baseline (" +
          baseline.identity.kernelsName + " " + baseline.identity.kernelsVersion + ") to " +
          formatFigure(g.maxUlps) + " ulps on the same " + count(g.cases) +
          (g.cases == 1 ? " case" : " cases") + ", more than " + formatFigure(options.growthFactor) +
          "x and by more than " + formatFigure(options.growthSlackUlps) + " ulp; worst: case " +
          count(g.worstCase) + (g.shape.empty() ? "" : " " + g.shape) + " at " +
          formatFigure(g.maxUlps) + " ulps (" + formatFigure(g.worstCaseBaselineUlps) +
          " in the baseline); reproduce: " + g.reproducer);
      c.grown.push_back(std::move(g));
    }
  if (!c.grown.empty()) {
    c.kind = "error-growth";
    c.rejects = true;
  } else if (newFailures > 0 || p.failures > bp.failures) {
    c.kind = "new-failures";
    c.rejects = true;  // failures reject on their own; named here for the report
  } else {
    c.kind = "unchanged";
  }
}

// The worst case of a pass compared by its summary, when the pass keeps per-case errors: its
// class, error and reproducer (the baseline's error on it is unknown: nan).
std::optional<ClassGrowth> worstOfPass(const Certificate& cert, const OpRecord* op,
                                       const PassRecord& p, const PassRecord& bp,
                                       const JudgeOptions& options) {
  if (!hasCaseData(op, p)) return std::nullopt;
  const CaseLog& log = *op->caseLog;
  std::optional<std::size_t> worst;
  for (std::size_t i = 0; i < p.caseStatus.size(); ++i)
    if (p.caseStatus[i] != kCaseNotJudged &&
        (!worst || worstValue(p.caseUlps[i]) > worstValue(p.caseUlps[*worst])))
      worst = i;
  if (!worst) return std::nullopt;
  ClassGrowth g;
  const std::int32_t cls = *worst < log.caseShapeClass.size() ? log.caseShapeClass[*worst] : -1;
  g.shapeClass = cls >= 0 ? log.shapeClasses[static_cast<std::size_t>(cls)] : "";
  g.cases = p.cases;
  g.baselineMaxUlps = bp.maxUlps;
  g.maxUlps = worstValue(p.caseUlps[*worst]);
  g.growthBoundUlps = growthBound(bp.maxUlps, options.growthFactor, options.growthSlackUlps);
  g.worstCase = *worst;
  g.worstCaseBaselineUlps = std::numeric_limits<double>::quiet_NaN();
  if (options.caseShape) g.shape = options.caseShape(op->op, *worst);
  g.reproducer = reproduceCommand(cert.identity, op->op, *worst);
  return g;
}

void compareWithBaseline(Certificate& cert, const Certificate& baseline,
                         const JudgeOptions& options, std::vector<std::string>& certReasons) {
  const bool paired = options.comparison == kCompareCases;
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
      const OpRecord* op = cert.findOp(bop.op);
      if (paired && hasCaseData(&bop, bp) && hasCaseData(op, *p)) {
        comparePaired(cert, *op, bp, *p, baseline, options, c);
      } else if (errorGrew(bp.maxUlps, p->maxUlps, options.growthFactor,
                           options.growthSlackUlps)) {
        c.kind = "error-growth";
        c.rejects = true;
        std::string worst;
        if (std::optional<ClassGrowth> g = worstOfPass(cert, op, *p, bp, options)) {
          worst = "; worst: case " + count(g->worstCase) + (g->shape.empty() ? "" : " " + g->shape) +
                  " at " + formatFigure(g->maxUlps) + " ulps; reproduce: " + g->reproducer;
          c.grown.push_back(std::move(*g));
        } else if (p->worst) {
          worst = "; worst: " + p->worst->shape + " of " + p->worst->valuesFile + " at " +
                  formatFigure(p->worst->errorUlps) + " ulps; reproduce: " + p->worst->reproducer;
        }
        p->reasons.push_back(who + ": max error grew from " + formatFigure(bp.maxUlps) +
                             " ulps in the baseline (" + baseline.identity.kernelsName + " " +
                             baseline.identity.kernelsVersion + ") to " +
                             formatFigure(p->maxUlps) + " ulps, more than " +
                             formatFigure(options.growthFactor) + "x and by more than " +
                             formatFigure(options.growthSlackUlps) + " ulp" +
                             (paired ? "" : " (summary figures, not the same cases)") + worst);
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

double growthBound(double baselineMaxUlps, double factor, double slackUlps) {
  return std::max(factor * baselineMaxUlps, baselineMaxUlps + slackUlps);
}

std::string reproduceCommand(const Identity& id, const std::string& op, std::uint64_t index) {
  return "tapecheck run" + (id.deviceKind.empty() ? std::string() : " --device " + id.deviceKind) +
         " --kernels " + shellWord(id.kernelsSource) + " --ops " + shellWord(op) + " --seed " +
         count(id.seed) + " --case " + count(index);
}

std::vector<std::string> replayProblems(const Certificate& baseline,
                                        const std::string& corpusSha256,
                                        const std::vector<std::string>& knownOps) {
  std::vector<std::string> problems;
  const bool anyLog = std::any_of(baseline.ops.begin(), baseline.ops.end(),
                                  [](const OpRecord& op) { return op.caseLog.has_value(); });
  if (!anyLog)
    problems.push_back("the baseline keeps no per-case errors (no op has a caseLog), so its "
                       "cases cannot be compared one by one");
  if (baseline.identity.corpusSha256 != corpusSha256)
    problems.push_back("the baseline checked another golden-vector corpus (SHA-256 " +
                       baseline.identity.corpusSha256 + "; this one is " + corpusSha256 + ")");
  for (const OpRecord& op : baseline.ops) {
    const bool ran = std::any_of(op.passes.begin(), op.passes.end(),
                                 [](const PassRecord& p) { return p.cases > 0; });
    if (ran && std::find(knownOps.begin(), knownOps.end(), op.op) == knownOps.end())
      problems.push_back("the baseline tested " + op.op + ", which this tapecheck does not know");
  }
  if (baseline.identity.deviceKind.empty())
    problems.push_back("the baseline does not say which kind of device its cases were drawn for "
                       "(device \"" + baseline.identity.device + "\")");
  return problems;
}

std::vector<std::string> pairingProblems(const Certificate& baseline, const Certificate& current) {
  const Identity& b = baseline.identity;
  const Identity& c = current.identity;
  std::vector<std::string> problems;
  if (b.corpusSha256 != c.corpusSha256)
    problems.push_back("the baseline checked another golden-vector corpus (SHA-256 " +
                       b.corpusSha256 + "; this run's is " + c.corpusSha256 + ")");
  if (b.deviceKind != c.deviceKind)
    problems.push_back("the baseline's cases were drawn for " +
                       (b.deviceKind.empty() ? std::string("an unknown device") : b.deviceKind) +
                       ", this run's for " + c.deviceKind);
  if (b.seed != c.seed)
    problems.push_back("the baseline ran seed " + count(b.seed) + ", this run seed " +
                       count(c.seed));
  if (b.casesPerOp != c.casesPerOp)
    problems.push_back("the baseline ran " + count(b.casesPerOp) + " cases per op, this run " +
                       count(c.casesPerOp));
  bool anyLog = false;
  for (const OpRecord& bop : baseline.ops) {
    const bool ran = std::any_of(bop.passes.begin(), bop.passes.end(),
                                 [](const PassRecord& p) { return p.cases > 0 && p.pass != "vectors"; });
    anyLog = anyLog || bop.caseLog.has_value();
    if (!ran) continue;
    // An op this run did not run at all (or whose kernels it lacks) is lost coverage, which
    // the verdict rejects: it does not keep the other ops from being paired.
    const OpRecord* op = current.findOp(bop.op);
    const bool runHere =
        op && std::any_of(op->passes.begin(), op->passes.end(),
                          [](const PassRecord& p) { return p.cases > 0 && p.pass != "vectors"; });
    if (!runHere) continue;
    if (!bop.caseLog || bop.caseLog->digest.empty()) {
      problems.push_back("the baseline keeps no case log of " + bop.op);
      continue;
    }
    if (!op->caseLog || op->caseLog->digest.empty()) {
      problems.push_back("this run keeps no complete case log of " + bop.op);
      continue;
    }
    if (op->caseLog->digest != bop.caseLog->digest)
      problems.push_back("the cases of " + bop.op + " differ from the baseline's (their digests " +
                         "differ: another seed, case count or case generator)");
  }
  if (!anyLog)
    problems.insert(problems.begin(), "the baseline keeps no per-case errors (no op has a "
                                      "caseLog), so its cases cannot be compared one by one");
  return problems;
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
    info.device = baseline->identity.device;
    info.deviceKind = baseline->identity.deviceKind;
    info.seed = baseline->identity.seed;
    info.casesPerOp = baseline->identity.casesPerOp;
    info.comparison = options.comparison;
    if (options.comparison == kCompareSummaries) info.notPaired = options.notPaired;
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
