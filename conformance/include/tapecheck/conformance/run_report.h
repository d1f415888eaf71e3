// The figures of one conformance run (properties and golden vectors) for one kernel table:
// what `tapecheck run` prints and writes with --json, and what `tapecheck certify` turns into a
// certificate and an HTML report.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace tapecheck::conformance {

// NotProvided: the kernel table lacks an entry point the pass needs (a null entry point,
// DESIGN.md section 3); the pass was not run and is not certified.
enum class Status { Passed, Failed, Mistrusted, Skipped, NotProvided };
// "PASSED", "FAILED", "MISTRUSTED", "SKIPPED", "NOT PROVIDED"
const char* statusWord(Status s);

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
  double maxBudgetShare = 0;          // the largest PassVerdict::budgetShare of a case that
                                      // passed or failed (1 = at the budget)
  std::vector<double> errorsUlps;     // every judged error, for histograms
  std::vector<CaseExample> examples;  // failures (worst first), a few at most
  // The entry points this pass needs that the kernel table does not provide: not empty means
  // the pass is NOT PROVIDED (no case ran).
  std::vector<std::string> missingEntries;
  // Failures where the kernels faulted: returned nonzero, threw, wrote outside their outputs,
  // crashed or hung. The first in case order, e.g. "layer_norm_fwd returned 3 on [4, 7] (case
  // 12)".
  std::uint64_t faults = 0;
  std::string firstFault;
};

// One case group: (op, pass, shape class), the unit of a benchdnn-style status line.
struct GroupStats {
  std::string op;
  std::string pass;        // "fwd", "bwd", "errors" or "vectors"
  std::string shapeClass;  // "cols-warp", "strided-long", "invalid-shape-mismatch", "golden", ...
  std::uint64_t cases = 0;
  std::uint64_t failures = 0;
  std::uint64_t mistrusted = 0;
  std::uint64_t skipped = 0;
  double maxUlps = 0;
  double p99Ulps = 0;
  double budgetUlps = 0;
  double maxBudgetShare = 0;          // the largest PassVerdict::budgetShare of a case that
                                      // passed or failed (1 = at the budget)
  std::vector<CaseExample> examples;  // the group's worst failing case (and its shrunk form)
  std::string note;                   // why cases were skipped, when the run skipped some
};

// The status of a group or a pass: NOT PROVIDED if the kernels lack an entry point it needs,
// FAILED if any case failed, SKIPPED if every case was skipped, MISTRUSTED if every case that ran
// was mistrusted, else PASSED.
Status groupStatus(const GroupStats& g);
Status passStatus(const PassStats& p);

struct RunReport {
  std::string kernelsName;     // the table's `name`
  std::string kernelsVersion;  // the table's `version`
  std::string kernelsSource;   // aten | cuda | plugin path
  std::string device;          // describeDevice()
  std::uint64_t seed = 0;
  std::uint64_t casesPerOp = 0;
  std::vector<PassStats> passes;
  std::vector<GroupStats> groups;  // in registry order, then pass, then shape class
  std::string valuesDir;           // where failing inputs were written
  // Totals over every judged case, as in the summary line.
  std::uint64_t tests = 0, passed = 0, failed = 0, mistrusted = 0, skipped = 0;
};

// `PASSED softmaxLast fwd cols-warp cases:120 max:2.1ulp p99:1.3ulp budget:16.0ulp`.
std::string statusLine(const GroupStats& g);
// `tests:N passed:N failed:N mistrusted:N skipped:N`.
std::string summaryLine(const RunReport& r);
// Whether some pass is NOT PROVIDED (a partial kernel table).
bool partialCoverage(const RunReport& r);
// `NOT PROVIDED layerNorm bwd missing:layer_norm_fwd,layer_norm_bwd`.
std::string notProvidedLine(const PassStats& p);
// `coverage: passes:26 provided:4 not-provided:22 missing:log_softmax_fwd,...`: the passes of
// the run's ops and whether the kernels provide them; "" when every pass is provided.
std::string coverageLine(const RunReport& r);
// What `tapecheck run` prints: a status line per group, under each failing group its worst case
// (shape, reason, values file, reproducer), then for a partial kernel table a NOT PROVIDED line
// per pass it lacks and the coverage line, then the summary line. Deterministic: no timings.
void printReport(const RunReport& r, std::ostream& out);
// Every figure as JSON (--json): deterministic for a given seed, no timings. Members about
// coverage and faults appear only when a pass is not provided or a kernel faulted.
std::string reportJson(const RunReport& r);

}  // namespace tapecheck::conformance
