// Hand-made RunReports for the certification tests.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "tapecheck/certify/certificate.h"
#include "tapecheck/conformance/run_report.h"

namespace tapecheck::certify::testing {

inline conformance::PassStats passStats(const std::string& op, const std::string& pass,
                                        std::vector<double> errors, double budget,
                                        std::uint64_t failures = 0,
                                        std::uint64_t mistrusted = 0) {
  conformance::PassStats s;
  s.op = op;
  s.pass = pass;
  s.cases = errors.size();
  s.failures = failures;
  s.mistrusted = mistrusted;
  s.budgetUlps = budget;
  s.errorsUlps = std::move(errors);
  for (double e : s.errorsUlps) s.maxUlps = std::max(s.maxUlps, e);
  return s;
}

inline std::vector<double> ramp(std::size_t n, double scale) {
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(scale * static_cast<double>(i % 17) / 16.0);
  return v;
}

// A clean run of two ops: softmaxLast fwd/bwd, topKMask fwd (exact).
inline conformance::RunReport cleanReport() {
  conformance::RunReport r;
  r.kernelsName = "test-kernels";
  r.kernelsVersion = "1.2.3";
  r.kernelsSource = "aten";
  r.device = "cpu (test)";
  r.seed = 7;
  r.casesPerOp = 40;
  r.passes.push_back(passStats("softmaxLast", "fwd", ramp(40, 2.0), 4.0));
  r.passes.push_back(passStats("softmaxLast", "bwd", ramp(40, 6.0), 16.0));
  r.passes.push_back(passStats("topKMask", "fwd", std::vector<double>(40, 0.0), 0.0));
  for (const auto& p : r.passes) r.tests += p.cases;
  r.passed = r.tests;
  return r;
}

// `r` with the case data of a run that kept it: every op gets cases 0..39 (the errors of its
// passes in index order; the first `failures` of a pass failed), cases 0..19 of class
// "cols-short" and 20..39 "cols-long", fingerprints that depend on `seed` (another seed, other
// cases).
inline conformance::RunReport withCases(conformance::RunReport r, std::uint64_t seed = 7) {
  std::vector<std::string> ops;
  for (conformance::PassStats& p : r.passes) {
    if (std::find(ops.begin(), ops.end(), p.op) == ops.end()) ops.push_back(p.op);
    p.caseRecords.clear();
    for (std::size_t i = 0; i < p.errorsUlps.size(); ++i)
      p.caseRecords.push_back(conformance::CaseRecord{
          i, p.errorsUlps[i],
          i < p.failures ? conformance::Status::Failed : conformance::Status::Passed});
  }
  for (const std::string& op : ops) {
    conformance::SubjectCases s;
    s.op = op;
    s.cases = 40;
    for (std::uint64_t i = 0; i < 40; ++i) {
      s.indices.push_back(i);
      s.fingerprints.push_back(seed * 1000 + i + 1);
      s.shapeClasses.push_back(i < 20 ? "cols-short" : "cols-long");
    }
    r.subjects.push_back(s);
  }
  r.seed = seed;
  return r;
}

inline Identity testIdentity() {
  Identity id;
  id.kernelsSha256 = std::string(64, 'a');
  id.kernelsFile = "/opt/kernels/libtest.so";
  id.harnessVersion = "0.1.0";
  id.gitRevision = "0123456789abcdef0123456789abcdef01234567";
  id.corpusSha256 = std::string(64, 'b');
  id.corpusFiles = 3;
  return id;
}

inline Certificate certificateOf(const conformance::RunReport& r) {
  return certificateFromReport(r, testIdentity());
}

}  // namespace tapecheck::certify::testing
