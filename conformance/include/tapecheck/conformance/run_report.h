// The figures of one conformance run (properties and golden vectors) for one kernel table:
// what `tapecheck run` prints and writes with --json, and what `tapecheck certify` turns into a
// certificate and an HTML report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tapecheck::conformance {

enum class Status { Passed, Failed, Mistrusted, Skipped };
const char* statusWord(Status s);  // "PASSED", "FAILED", "MISTRUSTED", "SKIPPED"

// A failing (or worst) case, with what reproduces it.
struct CaseExample {
  std::string group;        // e.g. "softmaxLast fwd rows-odd"
  std::string shape;        // e.g. "[3,1025]"
  std::string reason;       // why it failed, in words and ulps
  std::string reproducer;   // a command line that reruns exactly this case
  std::string valuesFile;   // where the inputs were written, if any
  double errorUlps = 0;
};

// One (op, pass) of the run: pass is "fwd", "bwd", "vectors" or "errors".
struct PassStats {
  std::string op;
  std::string pass;
  std::uint64_t cases = 0;
  std::uint64_t failures = 0;
  std::uint64_t mistrusted = 0;
  std::uint64_t skipped = 0;
  double maxUlps = 0;
  double p99Ulps = 0;
  double meanUlps = 0;
  double budgetUlps = 0;
  std::vector<double> errorsUlps;     // every judged error, for histograms
  std::vector<CaseExample> examples;  // failures (worst first), a few at most
};

struct RunReport {
  std::string kernelsName;     // the table's `name`
  std::string kernelsVersion;  // the table's `version`
  std::string kernelsSource;   // aten | cuda | plugin path
  std::string device;          // describeDevice()
  std::uint64_t seed = 0;
  std::uint64_t casesPerOp = 0;
  std::vector<PassStats> passes;
  // Totals over every judged case, as in the summary line.
  std::uint64_t tests = 0, passed = 0, failed = 0, mistrusted = 0, skipped = 0;
};

}  // namespace tapecheck::conformance
