#include "tapecheck/conformance/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>
#include <tuple>

#include "tapecheck/conformance/case_fingerprint.h"
#include "tapecheck/conformance/device_tapes.h"
#include "tapecheck/conformance/isolation.h"
#include "tapecheck/conformance/error_stats.h"
#include "tapecheck/conformance/format.h"
#include "tapecheck/conformance/generators.h"
#include "tapecheck/conformance/judge.h"
#include "tapecheck/conformance/pullback_isolation.h"
#include "tapecheck/conformance/reference_tapes.h"
#include "tapecheck/conformance/values_file.h"
#include "tapecheck/device/kernel_entries.h"
#include "tapecheck/device/reference_forward.h"
#include "tapecheck/vectors/check.h"
#include "tapecheck/vectors/load.h"
#include "in_order_pool.h"
#include "progress_meter.h"
#include "values.h"

namespace tapecheck::conformance {
namespace {

using Clock = std::chrono::steady_clock;

// ---- the tapes --------------------------------------------------------------------------------

struct UnderTest {
  TapeFactory factory;
  std::string name, version, source, device;
  // The table under test, for its coverage; null for the stand-in, which provides everything.
  std::shared_ptr<device::KernelTable> kernels;
  bool isolated = false;  // its kernels run in worker processes
  // The same kernels with a reference forward (pullback_isolation.h); empty for the stand-in.
  TapeFactory referenceForward;
};

Result<UnderTest> resolveKernels(const RunOptions& o) {
  if (o.kernels == kReferenceBinary32Kernels)
    return UnderTest{[] { return makeReferenceTapeFloat(); }, "reference-binary32", "stand-in",
                     o.kernels, "host: the reference tape at binary32 (a stand-in, not a kernel)",
                     nullptr, false, {}};
  auto table = device::loadKernelTable(o.kernels, o.device);
  if (!table) return Error{"unusable kernels '" + o.kernels + "': " + table.message()};
  auto kernels = std::make_shared<device::KernelTable>(std::move(table).value());
  UnderTest u;
  u.factory = [kernels] { return makeDeviceTape(*kernels); };
  u.name = kernels->table->name;
  u.version = kernels->table->version;
  u.source = kernels->source;
  u.device = device::describeDevice(o.device);
  u.kernels = kernels;
  auto alone = std::make_shared<device::KernelTable>(device::withReferenceForward(*kernels));
  u.referenceForward = [alone] { return makeDeviceTape(*alone); };
  if (!o.workerCommand.empty() && o.kernels != "aten") {
    IsolationOptions isolation;
    isolation.workerCommand = o.workerCommand;
    isolation.kernels = o.kernels;
    isolation.device = o.device;
    isolation.caseTimeoutSeconds = o.caseTimeoutSeconds;
    auto factory = isolatedDeviceTapes(isolation);
    if (!factory) return Error{"kernels '" + o.kernels + "': " + factory.message()};
    u.factory = std::move(factory).value();
    u.isolated = true;
    isolation.referenceForward = true;
    auto pullbacks = isolatedDeviceTapes(isolation);
    if (!pullbacks) return Error{"kernels '" + o.kernels + "': " + pullbacks.message()};
    u.referenceForward = std::move(pullbacks).value();
  }
  return u;
}

struct Tapes {
  TapeFactory device;
  TapeFactory referenceForward;  // pullbacks on the reference forward (pullback_isolation.h)
  TapeFactory reference = [] { return makeReferenceTapeDouble(); };
  TapeFactory oracle = [] { return makeReferenceTapeOracle(); };
  bool isolated = false;
};

// A tape that throws (a LibTorch error escaping a kernel table) is an error outcome, not a crash.
// `fault`, when given, receives the kernel fault behind an error outcome.
Outcome safeEvaluate(const TapeFactory& factory, const TestCase& c,
                     std::optional<device::KernelFault>* fault = nullptr) {
  try {
    auto tape = factory();
    Outcome o = evaluate(*tape, c);
    if (fault && o.error) *fault = kernelFaultOf(*tape);
    return o;
  } catch (const std::exception& e) {
    Outcome o;
    o.error = std::string("tapecheck: exception: ") + e.what();
    return o;
  }
}

// ---- coverage ---------------------------------------------------------------------------------

// What of an op (or program) the kernels provide: its forward pass needs the forward entry points
// of every op it uses; its backward pass those and the backward ones.
struct Coverage {
  std::vector<std::string> missingFwd, missingAll;
  bool fwd() const { return missingFwd.empty(); }
  bool all() const { return missingAll.empty(); }
};

Coverage coverageOf(const OpInfo& op, const device::KernelTable* kernels) {
  Coverage c;
  if (!kernels) return c;
  std::vector<std::string> fwd, all;
  for (const std::string& used : op.uses) {
    const device::OpEntries e = device::entriesOf(used);
    fwd.insert(fwd.end(), e.fwd.begin(), e.fwd.end());
  }
  all = fwd;
  for (const std::string& used : op.uses) {
    const device::OpEntries e = device::entriesOf(used);
    all.insert(all.end(), e.bwd.begin(), e.bwd.end());
  }
  c.missingFwd = device::missingEntries(*kernels->table, fwd);
  c.missingAll = device::missingEntries(*kernels->table, all);
  return c;
}

// ---- one case ---------------------------------------------------------------------------------

enum class PassKind { Fwd, Bwd, Errors };
const char* passName(PassKind k) {
  return k == PassKind::Fwd ? "fwd" : k == PassKind::Bwd ? "bwd" : "errors";
}

struct Evaluated {
  TestCase tc;
  Outcome device, reference;
  std::optional<device::KernelFault> fault;  // what the kernels did wrong, if they did
  std::optional<Outcome> oracle;
  CaseVerdict verdict;
  std::uint64_t fingerprint = 0;  // of the drawn case
};

bool failed(const PassVerdict& v) { return v.status == Status::Failed; }

// The case as the run evaluates it: without its backward pass when the kernels do not provide
// it. A malformed call keeps its upstream: the tapes refuse it before any kernel runs.
// `fingerprint`, when given, receives the drawn case's (case_fingerprint.h), whatever the
// kernels provide: it names the case, not how it was run.
TestCase caseOf(const OpInfo& op, const CaseParams& p, bool withBackward,
                std::uint64_t* fingerprint = nullptr) {
  TestCase c = buildCase(op, p);
  if (fingerprint) *fingerprint = caseFingerprint(c);
  if (!withBackward && p.invalid == Invalid::None) c.upstream.reset();
  return c;
}

// A case whose kernels faulted fails in the pass of the entry point that faulted, with the
// fault as the reason. When that is the backward pass, the forward pass had completed and is
// judged on its own.
CaseVerdict faultVerdict(const OpInfo& op, const Evaluated& e, const Tapes& tapes) {
  const device::KernelFault& f = *e.fault;
  PassVerdict failedPass;
  failedPass.status = Status::Failed;
  failedPass.maxUlps = std::numeric_limits<double>::infinity();
  failedPass.reason = f.message;
  failedPass.budgetUlps = budgetUlps(f.backward ? op.budget->bwd : op.budget->fwd,
                                     reductionLength(op, e.tc, f.backward));
  CaseVerdict v;
  if (!f.backward || e.reference.error) {
    v.fwd = failedPass;
    return v;
  }
  TestCase forward = e.tc;
  forward.upstream.reset();
  Outcome device;
  device.value = e.device.value;
  Outcome reference = e.reference;
  reference.grads.clear();
  try {
    v = judgeWithOracle(op, forward, device, reference, tapes.oracle).verdict;
  } catch (const std::exception&) {  // the oracle threw: keep the binary64 verdict
    v = judgeCase(op, forward, device, reference);
  }
  v.bwd = failedPass;
  return v;
}

// `actual` against the binary64 reference; on a failure the oracle decides (a kernel is wrong
// only if it is farther from the exact answer than its budget); then the dot-product identity.
// The oracle is evaluated at most once per case (kept in e.oracle).
CaseVerdict judgeOutcome(const OpInfo& op, const Outcome& actual, Evaluated& e,
                         const Tapes& tapes, std::uint64_t dotSeed) {
  CaseVerdict verdict;
  try {
    const auto oracle = [&] {
      if (!e.oracle) {
        auto tape = tapes.oracle();
        e.oracle = evaluate(*tape, e.tc);
      }
      return *e.oracle;
    };
    verdict = judgeWithOracleOutcome(op, e.tc, actual, e.reference, oracle).verdict;
  } catch (const std::exception&) {  // the oracle threw: keep the binary64 verdict
    verdict = judgeCase(op, e.tc, actual, e.reference);
  }
  if (!verdict.errorCase && verdict.bwd && !failed(*verdict.bwd)) {
    const DotCheck d = dotProductCheck(op, e.tc, actual, e.reference, tapes.reference, dotSeed);
    if (d.applicable)
      verdict.bwd->budgetShare =
          std::max(verdict.bwd->budgetShare, budgetShare(d.ulps, d.budgetUlps));
    if (d.applicable && !d.passed) {
      PassVerdict& b = *verdict.bwd;
      b.status = Status::Failed;
      b.maxUlps = std::max(b.maxUlps, d.ulps);
      std::ostringstream why;
      why.precision(9);
      why << "dot-product identity: <J^T u, v> = " << d.lhs << " but <u, J v> = " << d.rhs
          << " (central difference of the reference): " << formatUlps(d.ulps) << " > budget "
          << formatUlps(d.budgetUlps);
      b.reason = why.str();
    }
  }
  return verdict;
}

// The case on the kernels under test, judged; a case whose forward or backward failed is judged
// again with its pullbacks isolated (pullback_isolation.h).
Evaluated runCase(const OpInfo& op, const CaseParams& p, const Tapes& tapes,
                  std::uint64_t dotSeed, bool withBackward) {
  Evaluated e;
  e.tc = caseOf(op, p, withBackward, &e.fingerprint);
  e.device = safeEvaluate(tapes.device, e.tc, &e.fault);
  e.reference = safeEvaluate(tapes.reference, e.tc);
  if (e.fault) {
    e.verdict = faultVerdict(op, e, tapes);
    return e;
  }
  e.verdict = judgeOutcome(op, e.device, e, tapes, dotSeed);
  if (tapes.referenceForward && needsIsolatedPullback(e.verdict)) {
    const Outcome isolated = safeEvaluate(tapes.referenceForward, e.tc);
    const CaseVerdict alone = judgeOutcome(op, isolated, e, tapes, dotSeed);
    e.verdict = isolatePullback(std::move(e.verdict), alone);
  }
  return e;
}

const PassVerdict* verdictOf(const CaseVerdict& v, PassKind k) {
  if (k == PassKind::Errors) return v.errorCase ? &v.errors : nullptr;
  if (v.errorCase) return nullptr;
  if (k == PassKind::Fwd) return &v.fwd;
  return v.bwd ? &*v.bwd : nullptr;
}

bool failsIn(const Evaluated& e, PassKind k) {
  const PassVerdict* v = verdictOf(e.verdict, k);
  return v && failed(*v);
}

// ---- aggregation --------------------------------------------------------------------------------

struct Worst {
  std::uint64_t index = 0;
  double ulps = 0;
  std::string reason;
  CaseParams params;
  bool spoiledWorker = false;  // the kernels crashed or hung: explained without running them
};

// What the workers hand back for one case: only the verdict (the tensors of a case can be large,
// and a failing case is re-run when it is explained), the fault and the case's fingerprint.
struct CaseResult {
  CaseVerdict verdict;
  std::optional<device::KernelFault> fault;
  bool evaluated = true;  // false: not run, after the op spoiled kMaxSpoiledWorkersPerOp workers
  std::uint64_t fingerprint = 0;
};

struct GroupAcc {
  GroupStats stats;
  std::vector<double> errors;
  std::optional<Worst> worst;
  PassKind kind = PassKind::Fwd;
};

struct PassAcc {
  PassStats stats;
  std::vector<double> errors;
};

// The passes an op has in a run, and the entry points each lacks (empty: provided).
struct PassPlan {
  const char* pass;
  std::vector<std::string> missing;
};

std::vector<PassPlan> passPlan(const OpInfo& op, const Coverage& c, bool withVectors) {
  std::vector<PassPlan> plan{{"fwd", c.missingFwd}};
  if (op.hasBackward) plan.push_back({"bwd", c.missingAll});
  if (!op.program) plan.push_back({"errors", c.missingFwd});
  if (withVectors) plan.push_back({"vectors", c.missingAll});
  return plan;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  std::size_t n = 0;
  for (double x : v)
    if (std::isfinite(x)) s += x, ++n;
  return n ? s / static_cast<double>(n) : 0;
}

std::string shellQuote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_./=:,+") == std::string::npos)
    return s;
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

std::string fileSafe(const std::string& s) {
  std::string out;
  for (char ch : s) out += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' ? ch : '_';
  return out;
}

std::string deviceArg(device::DeviceKind d) {
  return std::string(" --device ") + device::deviceName(d);
}

// Worst first; a NaN error counts as the worst (it is no number at all).
void sortWorstFirst(std::vector<CaseExample>& examples) {
  const auto key = [](double e) {
    return std::isnan(e) ? std::numeric_limits<double>::infinity() : e;
  };
  std::stable_sort(examples.begin(), examples.end(),
                   [&](const CaseExample& a, const CaseExample& b) {
                     return key(a.errorUlps) > key(b.errorUlps);
                   });
}

constexpr std::size_t kExamplesPerGroup = 5;

class Run {
 public:
  Run(const RunOptions& o, UnderTest u, std::ostream& progress)
      : o_(o), under_(std::move(u)), progress_(progress),
        config_(GenConfig::forDevice(o.device)) {
    tapes_.device = under_.factory;
    tapes_.referenceForward = under_.referenceForward;
    tapes_.isolated = under_.isolated;
    cases_ = o.casesPerOp ? o.casesPerOp : defaultCasesPerOp(o.device);
    valuesDir_ = o.valuesDir;
  }

  // `vectorOps`: the ops whose golden vectors the run checks.
  RunReport run(const std::vector<const OpInfo*>& subjects,
                const std::vector<std::string>& vectorOps) {
    for (std::size_t s = 0; s < subjects.size(); ++s) {
      const OpInfo& op = *subjects[s];
      const bool withVectors =
          std::find(vectorOps.begin(), vectorOps.end(), op.name) != vectorOps.end();
      for (PassPlan& p : passPlan(op, coverage(op), withVectors))
        if (!p.missing.empty()) pass(s, op, p.pass).stats.missingEntries = std::move(p.missing);
    }
    runSubjects(subjects);
    return report(subjects);
  }

  Coverage coverage(const OpInfo& op) const { return coverageOf(op, under_.kernels.get()); }

  void addVectors(const vectors::VectorCheckResult& r, const std::vector<const OpInfo*>& subjects) {
    for (const vectors::VectorOpTotals& t : r.perOp) {
      auto it = std::find_if(subjects.begin(), subjects.end(),
                             [&](const OpInfo* op) { return op->name == t.op; });
      if (it == subjects.end()) continue;  // not selected with --ops
      const std::size_t order = static_cast<std::size_t>(it - subjects.begin());
      const OpInfo& op = **it;
      GroupAcc& g = group(order, op, "vectors", "golden", PassKind::Fwd);
      g.stats.cases += t.tests;
      g.stats.failures += t.failed;
      g.stats.skipped += t.notJudged;  // epsilon beyond kernel ABI v1: not judged
      g.errors.insert(g.errors.end(), t.errorsUlps.begin(), t.errorsUlps.end());
      g.stats.maxUlps = std::max(g.stats.maxUlps, t.maxErrorUlps);
      PassAcc& p = pass(order, op, "vectors");
      p.stats.cases += t.tests;
      p.stats.failures += t.failed;
      p.stats.skipped += t.notJudged;
      p.errors.insert(p.errors.end(), t.errorsUlps.begin(), t.errorsUlps.end());
      p.stats.maxUlps = std::max(p.stats.maxUlps, t.maxErrorUlps);
      const auto vectorExample = [&](const std::string& file, std::uint64_t tcId, double ulps,
                                     const std::string& reason) {
        CaseExample ex;
        ex.group = op.name + " vectors golden";
        ex.shape = "tcId " + std::to_string(tcId);
        ex.reason = reason;
        ex.valuesFile = file;
        ex.errorUlps = ulps;
        ex.reproducer = o_.command + " vectors check --target device" + deviceArg(o_.device) +
                        " --kernels " + shellQuote(o_.kernels) + " --tcid " +
                        std::to_string(tcId) + " " + shellQuote(file);
        return ex;
      };
      if (!t.worstFile.empty())
        p.stats.worst = vectorExample(t.worstFile, t.worstTcId, t.worstUlps,
                                      "the golden vector with the largest error");
      std::vector<CaseExample> examples;
      for (const vectors::VectorFailure& f : r.failures) {
        if (f.op != op.name) continue;
        p.stats.failedErrorsUlps.push_back(f.errorUlps);
        examples.push_back(vectorExample(f.file, f.tcId, f.errorUlps, f.reason));
      }
      sortWorstFirst(examples);
      if (examples.size() > kExamplesPerGroup) examples.resize(kExamplesPerGroup);
      g.stats.examples = examples;
      p.stats.examples = examples;
    }
  }

  // The cases `requests` name, explained as runSubjects explains the worst case of a failing
  // group, shrunk while their error stays above the request's bound.
  std::vector<std::vector<CaseExample>> explainRequests(
      const std::vector<CaseToExplain>& requests) {
    std::vector<std::vector<CaseExample>> out;
    for (const CaseToExplain& q : requests) {
      const OpInfo* op = findSubject(q.op);
      if (!op || (q.pass != "fwd" && q.pass != "bwd")) {
        out.emplace_back();
        continue;
      }
      const PassKind kind = q.pass == "fwd" ? PassKind::Fwd : PassKind::Bwd;
      const CaseParams params = drawCase(*op, config_, o_.seed, q.index).value();
      const bool withBackward = coverage(*op).all();
      const auto above = [&](const Evaluated& c) {
        const PassVerdict* v = verdictOf(c.verdict, kind);
        return v && !(v->maxUlps <= q.aboveUlps);
      };
      const Evaluated e = runCase(*op, params, tapes_, dotSeed(*op, q.index), withBackward);
      const PassVerdict* v = verdictOf(e.verdict, kind);
      Worst w{q.index, v ? v->maxUlps : 0.0,
              (v && !v->reason.empty() ? v->reason + "; " : std::string()) + q.label + ": " +
                  formatUlps(v ? v->maxUlps : 0.0) + " > " + formatUlps(q.aboveUlps),
              params, false};
      const std::string name = op->name + " " + q.pass + " " + q.shapeClass + " (" + q.label + ")";
      const std::string stem = op->name + "-" + q.pass + "-" + q.shapeClass + "-" +
                               fileSafe(q.label) + "-case" + std::to_string(q.index);
      out.push_back(explainCase(*op, kind, name, stem, w, above));
    }
    return out;
  }

  const std::string& valuesDir() const { return valuesDir_; }

 private:
  using GroupKey = std::tuple<std::size_t, int, std::string>;

  static int passOrder(const std::string& pass) {
    return pass == "fwd" ? 0 : pass == "bwd" ? 1 : pass == "errors" ? 2 : 3;
  }

  GroupAcc& group(std::size_t order, const OpInfo& op, const std::string& pass,
                  const std::string& cls, PassKind kind) {
    GroupAcc& g = groups_[{order, passOrder(pass), cls}];
    if (g.stats.op.empty()) {
      g.stats.op = op.name;
      g.stats.pass = pass;
      g.stats.shapeClass = cls;
      g.kind = kind;
    }
    return g;
  }

  PassAcc& pass(std::size_t order, const OpInfo& op, const std::string& pass) {
    PassAcc& p = passes_[{order, passOrder(pass)}];
    if (p.stats.op.empty()) {
      p.stats.op = op.name;
      p.stats.pass = pass;
    }
    return p;
  }

  std::uint64_t casesFor(const OpInfo& op) const {
    return op.program ? std::max<std::uint64_t>(1, cases_ / 2) : cases_;
  }

  std::uint64_t dotSeed(const OpInfo& op, std::uint64_t index) const {
    std::uint64_t h = o_.seed;
    for (unsigned char ch : op.name) h = values::mix(h, ch);
    return values::mix(h, index);
  }

  // The case's identity, for replays and pairing with a baseline.
  void logCase(std::size_t order, const OpInfo& op, const std::string& cls, std::uint64_t index,
               std::uint64_t fingerprint) {
    SubjectCases& subject = subjects_[order];
    if (subject.op.empty()) {
      subject.op = op.name;
      subject.cases = casesFor(op);
    }
    subject.indices.push_back(index);
    subject.fingerprints.push_back(fingerprint);
    subject.shapeClasses.push_back(cls);
  }

  void record(std::size_t order, const OpInfo& op, const std::string& cls, std::uint64_t index,
              const CaseParams& params, const CaseVerdict& verdict,
              const std::optional<device::KernelFault>& fault, std::uint64_t fingerprint) {
    logCase(order, op, cls, index, fingerprint);
    for (PassKind k : {PassKind::Fwd, PassKind::Bwd, PassKind::Errors}) {
      const PassVerdict* v = verdictOf(verdict, k);
      if (!v) continue;
      GroupAcc& g = group(order, op, passName(k), cls, k);
      PassAcc& p = pass(order, op, passName(k));
      const bool faultHere =
          fault && k == (fault->backward ? PassKind::Bwd : PassKind::Fwd);
      if (faultHere && p.stats.faults++ == 0)
        p.stats.firstFault = fault->message + " (case " + std::to_string(index) + ")";
      ++g.stats.cases;
      ++p.stats.cases;
      g.stats.budgetUlps = std::max(g.stats.budgetUlps, v->budgetUlps);
      p.stats.budgetUlps = std::max(p.stats.budgetUlps, v->budgetUlps);
      const double ulps = k == PassKind::Errors
                              ? (v->status == Status::Failed
                                     ? std::numeric_limits<double>::infinity()
                                     : 0.0)
                              : v->maxUlps;
      p.stats.caseRecords.push_back(CaseRecord{index, ulps, v->status});
      if (k != PassKind::Errors) {
        g.errors.push_back(v->maxUlps);
        p.errors.push_back(v->maxUlps);
        // A mistrusted case proves nothing either way: it does not count towards the margin.
        if (v->status == Status::Passed || v->status == Status::Failed) {
          g.stats.maxBudgetShare = std::max(g.stats.maxBudgetShare, v->budgetShare);
          p.stats.maxBudgetShare = std::max(p.stats.maxBudgetShare, v->budgetShare);
        }
      }
      if (v->status == Status::Failed) {
        ++g.stats.failures;
        ++p.stats.failures;
        if (k != PassKind::Errors) p.stats.failedErrorsUlps.push_back(ulps);
        if (!g.worst || ulps > g.worst->ulps)
          g.worst = Worst{index, ulps, v->reason, params,
                          faultHere && spoils(*fault)};
      } else if (v->status == Status::Mistrusted) {
        ++g.stats.mistrusted;
        ++p.stats.mistrusted;
      } else if (v->status == Status::Skipped) {
        ++g.stats.skipped;
        ++p.stats.skipped;
      }
    }
  }

  // Whether a fault cost the run its worker (isolation.h): only then does it count toward
  // kMaxSpoiledWorkersPerOp, and is its case explained without being run again.
  bool spoils(const device::KernelFault& f) const {
    return tapes_.isolated && device::spoilsWorker(f.kind);
  }

  // A case not run because its op spoiled too many workers: a SKIPPED case of its first pass.
  void recordNotRun(std::size_t order, const OpInfo& op, std::uint64_t index,
                    const CaseParams& params) {
    const PassKind k = params.invalid == Invalid::None ? PassKind::Fwd : PassKind::Errors;
    logCase(order, op, shapeClass(op, params), index, caseFingerprint(buildCase(op, params)));
    GroupAcc& g = group(order, op, passName(k), shapeClass(op, params), k);
    PassAcc& p = pass(order, op, passName(k));
    p.stats.caseRecords.push_back(CaseRecord{index, 0.0, Status::Skipped});
    ++g.stats.cases;
    ++p.stats.cases;
    ++g.stats.skipped;
    ++p.stats.skipped;
    g.stats.note = "cases not run: the kernels crashed, hung or wrote outside their outputs on " +
                   std::to_string(kMaxSpoiledWorkersPerOp) + " earlier cases of " + op.name;
  }

  std::string reproducer(const OpInfo& op, std::uint64_t index) const {
    return o_.command + " run" + deviceArg(o_.device) + " --kernels " +
           shellQuote(o_.kernels) + " --ops " + shellQuote(op.name) + " --seed " +
           std::to_string(o_.seed) + " --case " + std::to_string(index);
  }

  // The folder values files go to: --out, else one made for this run when the first file is
  // written (mkdtemp: private to the user, never shared with another run or kernel version).
  Result<std::string> valuesFolder() {
    if (!valuesDir_.empty()) return valuesDir_;
    std::error_code ec;
    std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
    if (ec) tmp = "/tmp";
    std::string pattern = (tmp / ("tapecheck-run-" + fileSafe(under_.name) + "-" +
                                  device::deviceName(o_.device) + "-seed" +
                                  std::to_string(o_.seed) + "-XXXXXX"))
                              .string();
    if (!::mkdtemp(pattern.data()))
      return Error{"cannot create a folder for the failing inputs under " + tmp.string()};
    valuesDir_ = pattern;
    return valuesDir_;
  }

  // Writes the case's inputs with the oracle's outcome as the expected one.
  std::string writeValues(const OpInfo& op, Evaluated& e, const CaseParams& params,
                          const std::string& stem, const std::string& why) {
    if (!e.oracle) e.oracle = safeEvaluate(tapes_.oracle, e.tc);
    VectorFileInfo info;
    info.comment = describe(params) + ": " + why;
    info.flags = {fillName(params.fill)};
    info.provenance = e.oracle->error && !e.reference.error
                          ? "tapecheck run: binary64 reference tape"
                          : "tapecheck run: mpfr128 reference tape (oracle), rounded to binary64";
    info.program = op.program;
    const Outcome& expected = e.oracle->error && !e.reference.error ? e.reference : *e.oracle;
    Result<std::string> folder = valuesFolder();
    if (!folder) {
      progress_ << o_.progressLabel << ": " << folder.message() << "\n";
      return "";
    }
    const std::string path =
        (std::filesystem::path(folder.value()) / (fileSafe(stem) + ".json")).string();
    const tapecheck::Status written = writeTextFile(path, caseVectorJson(e.tc, expected, info));
    if (!written) {
      progress_ << o_.progressLabel << ": " << written.message() << "\n";
      return "";
    }
    return path;
  }

  // The worst case of a failing group: re-run, written out, shrunk, with its reproducer.
  void explain(const OpInfo& op, GroupAcc& g) {
    const Worst& w = *g.worst;
    const std::string name = op.name + " " + g.stats.pass + " " + g.stats.shapeClass;
    const std::string stem =
        op.name + "-" + g.stats.pass + "-" + g.stats.shapeClass + "-case" + std::to_string(w.index);
    const PassKind kind = g.kind;
    g.stats.examples = explainCase(op, kind, name, stem, w,
                                   [kind](const Evaluated& c) { return failsIn(c, kind); });
  }

  // Case `w`, then the smallest case its shrinks reach while `stillShows` holds (at most
  // o_.shrinkEvaluations evaluations), each written out with the command that reruns it. A case
  // that crashed or hung its worker is not run again (that would cost a worker, and a time
  // limit): its inputs are written with the reference's outcome, and it is not shrunk.
  std::vector<CaseExample> explainCase(const OpInfo& op, PassKind kind, const std::string& name,
                                       const std::string& stem, const Worst& w,
                                       const std::function<bool(const Evaluated&)>& stillShows) {
    std::vector<CaseExample> examples;
    const bool withBackward = coverage(op).all();
    Evaluated e;
    if (w.spoiledWorker) {
      e.tc = caseOf(op, w.params, withBackward);
      e.reference = safeEvaluate(tapes_.reference, e.tc);
    } else {
      e = runCase(op, w.params, tapes_, dotSeed(op, w.index), withBackward);
    }
    CaseExample ex;
    ex.group = name;
    ex.shape = toString(w.params.shape);
    ex.reason = "case " + std::to_string(w.index) + " (" + describe(w.params) + "): " + w.reason;
    ex.errorUlps = w.ulps;
    ex.reproducer = reproducer(op, w.index);
    ex.valuesFile = writeValues(op, e, w.params, stem, w.reason);
    examples.push_back(ex);

    if (!o_.shrink || w.spoiledWorker) return examples;
    rc::Shrinkable<CaseParams> current = drawCase(op, config_, o_.seed, w.index);
    std::optional<std::pair<CaseParams, Evaluated>> smallest;
    std::uint64_t spent = 0;
    for (bool moved = true; moved && spent < o_.shrinkEvaluations;) {
      moved = false;
      auto candidates = current.shrinks();
      while (auto next = candidates.next()) {
        if (spent++ >= o_.shrinkEvaluations) break;
        const CaseParams p = next->value();
        Evaluated c = runCase(op, p, tapes_, dotSeed(op, w.index), withBackward);
        if (!stillShows(c)) continue;
        current = *next;
        smallest.emplace(p, std::move(c));
        moved = true;
        break;
      }
    }
    if (!smallest) return examples;
    auto& [p, c] = *smallest;
    const PassVerdict* v = verdictOf(c.verdict, kind);
    CaseExample s;
    s.group = name + " (shrunk)";
    s.shape = toString(p.shape);
    s.reason = "shrunk from case " + std::to_string(w.index) + " (" + describe(p) +
               "): " + (v ? v->reason : "");
    s.errorUlps = v ? v->maxUlps : 0;
    s.valuesFile = writeValues(op, c, p, stem + "-shrunk", v ? v->reason : "");
    if (!s.valuesFile.empty())
      s.reproducer = o_.command + " vectors check --target device" + deviceArg(o_.device) +
                     " --kernels " + shellQuote(o_.kernels) + " " + shellQuote(s.valuesFile);
    examples.push_back(s);
    return examples;
  }

  std::vector<std::uint64_t> caseIndices(const OpInfo& op) const {
    std::vector<std::uint64_t> indices;
    if (o_.onlyCase) {
      indices.push_back(*o_.onlyCase);
    } else {
      const std::uint64_t n = casesFor(op);
      for (std::uint64_t i = 0; i < n; ++i)
        if (i % o_.shardCount == o_.shardIndex) indices.push_back(i);
    }
    return indices;
  }

  // Every case of every subject in one queue, so the threads never wait at the end of an op for
  // its largest cases. Cases are drawn here, in (subject, index) order (RapidCheck's generation
  // is not shared between threads), evaluated by the workers and recorded in that order again:
  // the report is the same for every --jobs. Ops whose forward pass the kernels do not provide
  // have no cases. Then the worst case of each failing group is explained (re-run, written out,
  // shrunk).
  //
  // Once kMaxSpoiledWorkersPerOp cases of an op have spoiled a worker, counted in case order,
  // its later cases are recorded as not run. A thread skips a case early only when that many
  // cases before it spoiled a worker; should a case it skipped turn out to be needed (a fault
  // that did not repeat), it is evaluated when recorded. Either way the report depends on the
  // cases alone.
  void runSubjects(const std::vector<const OpInfo*>& subjects) {
    struct Planned {
      std::size_t order;
      std::uint64_t index;
      CaseParams params;
      bool withBackward;
    };
    std::vector<std::vector<std::uint64_t>> indices;
    std::vector<bool> withBackward;
    std::size_t total = 0;
    for (const OpInfo* op : subjects) {
      const Coverage c = coverage(*op);
      indices.push_back(c.fwd() ? caseIndices(*op) : std::vector<std::uint64_t>{});
      withBackward.push_back(c.all());
      total += indices.back().size();
    }
    ProgressMeter meter(progress_, o_.progressLabel, total, o_.progressSeconds,
                        o_.progressRewritesLine);
    meter.start();
    std::vector<Planned> plan;
    plan.reserve(total);
    for (std::size_t s = 0; s < subjects.size(); ++s)
      for (const std::uint64_t i : indices[s])
        plan.push_back(Planned{s, i, drawCase(*subjects[s], config_, o_.seed, i).value(),
                               withBackward[s]});
    const auto start = Clock::now();
    const auto elapsed = [&] {
      return std::chrono::duration<double>(Clock::now() - start).count();
    };
    std::mutex spoiledMutex;
    std::vector<std::vector<std::size_t>> spoiledAt(subjects.size());  // plan positions
    auto evaluateCase = [&](std::size_t n) {
      const Planned& p = plan[n];
      const OpInfo& op = *subjects[p.order];
      Evaluated e = runCase(op, p.params, tapes_, dotSeed(op, p.index), p.withBackward);
      return CaseResult{std::move(e.verdict), std::move(e.fault), true, e.fingerprint};
    };
    std::vector<std::uint64_t> spoiledInOrder(subjects.size(), 0);
    evaluateInOrder(
        plan.size(), o_.jobs,
        [&](std::size_t n) {
          const std::size_t order = plan[n].order;
          {
            std::lock_guard<std::mutex> lock(spoiledMutex);
            const auto& at = spoiledAt[order];
            if (static_cast<std::uint64_t>(std::count_if(at.begin(), at.end(), [&](std::size_t m) {
                  return m < n;
                })) >= kMaxSpoiledWorkersPerOp)
              return CaseResult{{}, std::nullopt, false};
          }
          CaseResult r = evaluateCase(n);
          if (r.fault && spoils(*r.fault)) {
            std::lock_guard<std::mutex> lock(spoiledMutex);
            spoiledAt[order].push_back(n);
          }
          return r;
        },
        [&](std::size_t n, const CaseResult& evaluated) {
          const Planned& p = plan[n];
          const OpInfo& op = *subjects[p.order];
          if (spoiledInOrder[p.order] >= kMaxSpoiledWorkersPerOp) {
            recordNotRun(p.order, op, p.index, p.params);
          } else {
            const CaseResult r = evaluated.evaluated ? evaluated : evaluateCase(n);
            record(p.order, op, shapeClass(op, p.params), p.index, p.params, r.verdict, r.fault,
                   r.fingerprint);
            if (r.fault && spoils(*r.fault)) ++spoiledInOrder[p.order];
          }
          meter.update(n + 1, op.name, elapsed());
        });
    meter.finish(elapsed());
    for (std::size_t s = 0; s < subjects.size(); ++s)
      for (auto& [key, g] : groups_)
        if (std::get<0>(key) == s && g.worst && g.stats.examples.empty()) explain(*subjects[s], g);
  }

  RunReport report(const std::vector<const OpInfo*>& subjects) {
    RunReport r;
    r.kernelsName = under_.name;
    r.kernelsVersion = under_.version;
    r.kernelsSource = under_.source;
    r.device = under_.device;
    r.seed = o_.seed;
    r.casesPerOp = cases_;
    r.valuesDir = valuesDir_;
    for (auto& [key, g] : groups_) {
      g.stats.maxUlps = std::max(g.stats.maxUlps,
                                 g.errors.empty() ? 0.0 : *std::max_element(g.errors.begin(),
                                                                            g.errors.end()));
      g.stats.p99Ulps = p99(g.errors);
      r.tests += g.stats.cases;
      r.failed += g.stats.failures;
      r.mistrusted += g.stats.mistrusted;
      r.skipped += g.stats.skipped;
      r.groups.push_back(g.stats);
    }
    r.passed = r.tests - r.failed - r.mistrusted - r.skipped;
    for (auto& [key, p] : passes_) {
      PassStats s = p.stats;
      if (!p.errors.empty())
        s.maxUlps = std::max(s.maxUlps, *std::max_element(p.errors.begin(), p.errors.end()));
      s.p99Ulps = p99(p.errors);
      s.meanUlps = mean(p.errors);
      s.errorsUlps = p.errors;
      // The worst failures of the pass, worst first, from its groups.
      if (s.pass != "vectors") {
        std::vector<CaseExample> examples;
        for (const auto& [gkey, g] : groups_)
          if (std::get<0>(gkey) == std::get<0>(key) && std::get<1>(gkey) == std::get<1>(key))
            for (const CaseExample& ex : g.stats.examples) examples.push_back(ex);
        sortWorstFirst(examples);
        if (examples.size() > kExamplesPerGroup) examples.resize(kExamplesPerGroup);
        s.examples = examples;
      }
      r.passes.push_back(std::move(s));
    }
    for (auto& [order, subject] : subjects_) r.subjects.push_back(subject);
    (void)subjects;
    return r;
  }

  const RunOptions& o_;
  UnderTest under_;
  std::ostream& progress_;
  GenConfig config_;
  Tapes tapes_;
  std::uint64_t cases_ = 0;
  std::string valuesDir_;
  std::map<GroupKey, GroupAcc> groups_;
  std::map<std::pair<std::size_t, int>, PassAcc> passes_;
  std::map<std::size_t, SubjectCases> subjects_;
};

}  // namespace

unsigned defaultJobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

std::uint64_t defaultCasesPerOp(device::DeviceKind d) {
  return d == device::DeviceKind::Cuda ? 2000 : 4000;
}

std::vector<std::string> selectableNames() {
  std::vector<std::string> names;
  for (const OpInfo& op : opRegistry()) names.push_back(op.name);
  for (const OpInfo& p : programRegistry()) names.push_back(p.name);
  return names;
}

Result<std::vector<const OpInfo*>> selectSubjects(const std::vector<std::string>& names) {
  std::vector<const OpInfo*> out;
  if (names.empty()) {
    for (const OpInfo& op : opRegistry()) out.push_back(&op);
    for (const OpInfo& p : programRegistry()) out.push_back(&p);
    return out;
  }
  for (const std::string& n : names) {
    const OpInfo* s = findSubject(n);
    if (!s) {
      std::string known;
      for (const std::string& k : selectableNames()) known += (known.empty() ? "" : ", ") + k;
      return Error{"unknown op '" + n + "' (known: " + known + ")"};
    }
  }
  auto named = [&](const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  for (const OpInfo& op : opRegistry())
    if (named(op.name)) out.push_back(&op);
  for (const OpInfo& p : programRegistry())
    if (named(p.name) || std::all_of(p.uses.begin(), p.uses.end(), named)) out.push_back(&p);
  return out;
}

Result<RunReport> runConformance(const RunOptions& options, std::ostream& progress) {
  if (options.shardCount == 0 || options.shardIndex >= options.shardCount)
    return Error{"shard " + std::to_string(options.shardIndex) + "/" +
                 std::to_string(options.shardCount) + " is not a valid shard"};
  TAPECHECK_TRY(subjects, selectSubjects(options.ops));
  TAPECHECK_TRY(under, resolveKernels(options));
  const TapeFactory factory = under.factory;
  const std::shared_ptr<device::KernelTable> kernels = under.kernels;

  // A partial table must provide the forward pass of at least one selected op.
  std::vector<std::string> missing;
  bool anyProvided = false;
  for (const OpInfo* op : subjects) {
    const Coverage c = coverageOf(*op, kernels.get());
    anyProvided = anyProvided || c.fwd();
    for (const std::string& e : c.missingFwd)
      if (std::find(missing.begin(), missing.end(), e) == missing.end()) missing.push_back(e);
  }
  if (!anyProvided) {
    std::string list;
    for (const std::string& e : missing) list += (list.empty() ? "" : ", ") + e;
    return Error{"kernels '" + options.kernels + "' (" + under.name + " " +
                 under.version + ") provide none of the selected ops (not provided: " +
                 list + ")"};
  }

  RunOptions resolved = options;
  if (resolved.jobs == 0) resolved.jobs = defaultJobs();
  Run run(resolved, std::move(under), progress);

  // Golden vectors first (an unreadable corpus is exit 2 before any case runs); shard 0 only.
  // Each file holds one op's vectors; only those of the selected ops the kernels provide in
  // full are checked (a vector checks both passes).
  std::optional<vectors::VectorCheckResult> vectorResult;
  std::vector<std::string> vectorOps;
  if (!options.vectorPaths.empty() && options.shardIndex == 0 && !options.onlyCase) {
    auto listed = vectors::collectVectorFiles(options.vectorPaths);
    if (!listed) return Error{"golden vectors: " + listed.message()};
    std::vector<vectors::VectorFile> files;
    for (const std::string& path : listed.value()) {
      auto file = vectors::loadVectorFile(path);
      if (!file) return Error{"golden vectors: " + file.message()};
      const OpInfo* op = findSubject(file.value().op);
      const auto& selected = subjects;
      if (!op || std::find(selected.begin(), selected.end(), op) == selected.end()) continue;
      if (std::find(vectorOps.begin(), vectorOps.end(), op->name) == vectorOps.end())
        vectorOps.push_back(op->name);
      if (coverageOf(*op, kernels.get()).all()) files.push_back(std::move(file).value());
    }
    vectors::VectorCheckOptions vo;
    vo.target = vectors::Target::Device;
    vo.deviceTape = factory;
    std::ostringstream log;
    auto checked = vectors::checkVectorFiles(files, vo, log);
    if (!checked) return Error{"golden vectors: " + checked.message()};
    vectorResult = std::move(checked).value();
  }

  if (vectorResult) run.addVectors(*vectorResult, subjects);  // pass "vectors"
  return run.run(subjects, vectorOps);
}

Result<ExplainedCases> explainCases(const RunOptions& options,
                                    const std::vector<CaseToExplain>& requests,
                                    std::ostream& progress) {
  auto under = resolveKernels(options);
  if (!under) return under.error();
  Run run(options, std::move(under).value(), progress);
  ExplainedCases out;
  out.examples = run.explainRequests(requests);
  out.valuesDir = run.valuesDir();
  return out;
}

std::string caseShape(const RunOptions& options, const std::string& op, std::uint64_t index) {
  const OpInfo* subject = findSubject(op);
  if (!subject) return "";
  return toString(
      drawCase(*subject, GenConfig::forDevice(options.device), options.seed, index).value().shape);
}

}  // namespace tapecheck::conformance
