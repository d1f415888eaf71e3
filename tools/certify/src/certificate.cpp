#include "tapecheck/certify/certificate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <limits>

#include "tapecheck/certify/sha256.h"
#include "tapecheck/conformance/error_stats.h"

namespace tapecheck::certify {

const char* verdictWord(Verdict v) {
  switch (v) {
    case Verdict::Certified: return "certified";
    case Verdict::Rejected: return "rejected";
    case Verdict::NotProvided: return "not provided";
  }
  return "rejected";
}

ErrorSummary summarizeErrors(std::vector<double> errors) {
  ErrorSummary s;
  if (errors.empty()) return s;
  for (double& e : errors)
    if (std::isnan(e)) e = std::numeric_limits<double>::infinity();
  std::sort(errors.begin(), errors.end());
  const std::size_t n = errors.size();
  s.maxUlps = errors.back();
  s.p99Ulps = conformance::p99OfSorted(errors);
  double sum = 0;
  for (double e : errors) sum += e;
  s.meanUlps = sum / static_cast<double>(n);
  return s;
}

std::string deviceKindOf(const std::string& deviceLine) {
  for (const char* kind : {"cuda", "cpu"}) {
    const std::string k = kind;
    if (deviceLine.compare(0, k.size(), k) == 0 &&
        (deviceLine.size() == k.size() || deviceLine[k.size()] == ':' ||
         deviceLine[k.size()] == ' '))
      return k;
  }
  return "";
}

const OpRecord* Certificate::findOp(const std::string& name) const {
  for (const OpRecord& op : ops)
    if (op.op == name) return &op;
  return nullptr;
}

const PassRecord* Certificate::findPass(const std::string& op, const std::string& pass) const {
  if (const OpRecord* o = findOp(op))
    for (const PassRecord& p : o->passes)
      if (p.pass == pass) return &p;
  return nullptr;
}

namespace {

char statusLetter(conformance::Status s) {
  switch (s) {
    case conformance::Status::Passed: return kCasePassed;
    case conformance::Status::Failed: return kCaseFailed;
    case conformance::Status::Mistrusted: return kCaseMistrusted;
    case conformance::Status::Skipped: return kCaseSkipped;
    case conformance::Status::NotProvided: return kCaseNotJudged;
  }
  return kCaseNotJudged;
}

// The case log of one subject, from the cases its run evaluated.
CaseLog caseLogOf(const conformance::SubjectCases& subject) {
  CaseLog log;
  log.cases = subject.cases;
  log.caseShapeClass.assign(log.cases, -1);
  log.fingerprints.assign(log.cases, 0);
  for (std::size_t k = 0; k < subject.indices.size(); ++k) {
    const std::uint64_t i = subject.indices[k];
    if (i >= log.cases) continue;
    const std::string& cls = subject.shapeClasses[k];
    auto it = std::find(log.shapeClasses.begin(), log.shapeClasses.end(), cls);
    if (it == log.shapeClasses.end()) it = log.shapeClasses.insert(log.shapeClasses.end(), cls);
    log.caseShapeClass[i] = static_cast<std::int32_t>(it - log.shapeClasses.begin());
    log.fingerprints[i] = subject.fingerprints[k];
  }
  computeCaseDigest(log);
  return log;
}

// The per-case results of a pass, laid out by case index.
void addCaseRecords(PassRecord& p, const CaseLog& log,
                    const std::vector<conformance::CaseRecord>& results) {
  if (p.caseStatus.empty()) {
    p.caseUlps.assign(log.cases, 0.0);
    p.caseStatus.assign(log.cases, kCaseNotJudged);
  }
  for (const conformance::CaseRecord& r : results) {
    if (r.index >= log.cases) continue;
    p.caseUlps[r.index] = r.ulps;
    p.caseStatus[r.index] = statusLetter(r.status);
  }
}

}  // namespace

std::string fingerprintText(std::uint64_t fingerprint) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(fingerprint));
  return text;
}

void computeCaseDigest(CaseLog& log) {
  log.digest.clear();
  if (log.caseShapeClass.size() != log.cases || log.fingerprints.size() != log.cases) return;
  Sha256 h;
  for (std::uint64_t i = 0; i < log.cases; ++i) {
    if (log.caseShapeClass[i] < 0) return;
    h.update(fingerprintText(log.fingerprints[i]) + "\n");
  }
  log.digest = h.hexDigest();
}

Certificate certificateFromReport(const conformance::RunReport& report, Identity identity) {
  Certificate cert;
  identity.kernelsName = report.kernelsName;
  identity.kernelsVersion = report.kernelsVersion;
  identity.kernelsSource = report.kernelsSource;
  identity.device = report.device;
  if (identity.deviceKind.empty()) identity.deviceKind = deviceKindOf(report.device);
  identity.seed = report.seed;
  identity.casesPerOp = report.casesPerOp;
  cert.identity = std::move(identity);
  cert.totals = {report.tests, report.passed, report.failed, report.mistrusted, report.skipped};
  // A report lists each (op, pass) once; should it list one several times, the entries are
  // combined as shards are (counts add, max of max, one error list).
  for (const conformance::PassStats& stats : report.passes) {
    auto it = std::find_if(cert.ops.begin(), cert.ops.end(),
                           [&](const OpRecord& o) { return o.op == stats.op; });
    if (it == cert.ops.end()) {
      cert.ops.push_back(OpRecord{});
      cert.ops.back().op = stats.op;
      it = std::prev(cert.ops.end());
    }
    auto pass = std::find_if(it->passes.begin(), it->passes.end(),
                             [&](const PassRecord& p) { return p.pass == stats.pass; });
    if (pass == it->passes.end()) {
      it->passes.push_back(PassRecord{});
      it->passes.back().pass = stats.pass;
      pass = std::prev(it->passes.end());
    }
    PassRecord& p = *pass;
    const bool first = p.cases == 0 && p.errorsUlps.empty() && p.examples.empty();
    p.cases += stats.cases;
    p.failures += stats.failures;
    p.mistrusted += stats.mistrusted;
    p.skipped += stats.skipped;
    p.budgetUlps = std::max(p.budgetUlps, stats.budgetUlps);
    p.maxUlps = std::max(p.maxUlps, std::isnan(stats.maxUlps)
                                        ? std::numeric_limits<double>::infinity()
                                        : stats.maxUlps);
    if (first) {
      p.p99Ulps = stats.p99Ulps;
      p.meanUlps = stats.meanUlps;
    } else {
      p.p99Ulps = std::max(p.p99Ulps, stats.p99Ulps);
      p.meanUlps = std::max(p.meanUlps, stats.meanUlps);
    }
    p.errorsUlps.insert(p.errorsUlps.end(), stats.errorsUlps.begin(), stats.errorsUlps.end());
    p.failedErrorsUlps.insert(p.failedErrorsUlps.end(), stats.failedErrorsUlps.begin(),
                              stats.failedErrorsUlps.end());
    p.examples.insert(p.examples.end(), stats.examples.begin(), stats.examples.end());
    if (!stats.worst.group.empty() &&
        (!p.worst || !(stats.worst.errorUlps <= p.worst->errorUlps)))
      p.worst = stats.worst;
    if (p.missingEntries.empty()) p.missingEntries = stats.missingEntries;
    if (p.firstFault.empty()) p.firstFault = stats.firstFault;
    p.faults += stats.faults;
  }
  for (const conformance::SubjectCases& subject : report.subjects) {
    auto op = std::find_if(cert.ops.begin(), cert.ops.end(),
                           [&](const OpRecord& o) { return o.op == subject.op; });
    if (op == cert.ops.end()) continue;
    op->caseLog = caseLogOf(subject);
    for (const conformance::PassStats& stats : report.passes) {
      if (stats.op != subject.op || stats.pass == "vectors") continue;
      for (PassRecord& p : op->passes)
        if (p.pass == stats.pass) addCaseRecords(p, *op->caseLog, stats.caseRecords);
    }
  }
  finalizePassFigures(cert.ops);
  cert.created = utcTimestamp();
  return cert;
}

void sortWorstFirst(std::vector<conformance::CaseExample>& examples) {
  // A NaN error is no number at all: it sorts as the worst, never breaking the order.
  const auto key = [](double e) {
    return std::isnan(e) ? std::numeric_limits<double>::infinity() : e;
  };
  std::stable_sort(examples.begin(), examples.end(),
                   [&](const conformance::CaseExample& a, const conformance::CaseExample& b) {
                     return key(a.errorUlps) > key(b.errorUlps);
                   });
}

void finalizePassFigures(std::vector<OpRecord>& ops) {
  for (OpRecord& op : ops) {
    for (PassRecord& p : op.passes) {
      // The figures come from the error list when there is one (order-free, so merged shards
      // reproduce them); else the runner's own figures stand.
      if (!p.errorsUlps.empty()) {
        const ErrorSummary s = summarizeErrors(p.errorsUlps);
        p.maxUlps = std::max(p.maxUlps, s.maxUlps);
        p.p99Ulps = s.p99Ulps;
        p.meanUlps = s.meanUlps;
      }
      sortWorstFirst(p.examples);
      if (p.examples.size() > kMaxExamplesPerPass) p.examples.resize(kMaxExamplesPerPass);
    }
  }
}

std::string coverageSummary(const Certificate& cert) {
  std::size_t passes = 0, provided = 0;
  std::string missing;
  for (const OpRecord& op : cert.ops) {
    std::string lacking;
    for (const PassRecord& p : op.passes) {
      ++passes;
      if (p.provided())
        ++provided;
      else
        lacking += (lacking.empty() ? "" : ", ") + p.pass;
    }
    if (!lacking.empty()) missing += (missing.empty() ? "" : "; ") + op.op + " (" + lacking + ")";
  }
  if (missing.empty()) return "";
  return "coverage: " + std::to_string(provided) + " of " + std::to_string(passes) +
         " passes provided; not provided: " + missing;
}

std::string utcTimestamp() {
  std::time_t now = std::time(nullptr);
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH")) {
    char* end = nullptr;
    const long long v = std::strtoll(epoch, &end, 10);
    if (end != epoch && *end == '\0' && v >= 0) now = static_cast<std::time_t>(v);
  }
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace tapecheck::certify
