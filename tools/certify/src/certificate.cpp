#include "tapecheck/certify/certificate.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <limits>

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

Certificate certificateFromReport(const conformance::RunReport& report, Identity identity) {
  Certificate cert;
  identity.kernelsName = report.kernelsName;
  identity.kernelsVersion = report.kernelsVersion;
  identity.kernelsSource = report.kernelsSource;
  identity.device = report.device;
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
    p.examples.insert(p.examples.end(), stats.examples.begin(), stats.examples.end());
    if (p.missingEntries.empty()) p.missingEntries = stats.missingEntries;
    if (p.firstFault.empty()) p.firstFault = stats.firstFault;
    p.faults += stats.faults;
  }
  finalizePassFigures(cert.ops);
  cert.created = utcTimestamp();
  return cert;
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
      std::stable_sort(p.examples.begin(), p.examples.end(),
                       [](const conformance::CaseExample& a, const conformance::CaseExample& b) {
                         return a.errorUlps > b.errorUlps;
                       });
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
