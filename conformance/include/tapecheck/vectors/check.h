// Checking golden-vector files (DESIGN.md section 4) against a tape.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "tapecheck/conformance/any_tape.h"
#include "tapecheck/result.h"
#include "tapecheck/vectors/vector_file.h"

namespace tapecheck::vectors {

enum class Target { Reference, Device };

struct VectorFailure {
  std::string file;
  std::string op;
  std::uint64_t tcId = 0;
  std::string reason;
  double errorUlps = 0;  // the test's worst judged error; infinity for a wrong outcome kind
                         // (an error where a value was due, or the other way round)
};

// Per-op totals of one check, so runs and certificates can report them per op.
struct VectorOpTotals {
  std::string op;
  std::uint64_t tests = 0, passed = 0, failed = 0;
  double maxErrorUlps = 0;          // worst judged distance (binary64 ulps for the reference,
                                    // binary32 units for the device)
  std::vector<double> errorsUlps;   // one per judged number group, for histograms
  std::string worstFile;            // the test with the largest error (none while worstFile is
  std::uint64_t worstTcId = 0;      // empty): file and tcId
  double worstUlps = 0;
  // Device target only: passed tests whose outputs the conformance judge MISTRUSTs (mostly
  // zeros, or zeros on both sides); counted among `passed`.
  std::uint64_t mistrusted = 0;
  // Device target only: valid tests not judged because kernel ABI v1's binary32 epsilon changes
  // their result (docs/spec.md#epsilon-abi-safe); counted neither passed nor failed.
  std::uint64_t notJudged = 0;
  // Reference target only, informational (never a failure): the binary64 reference tape's
  // distance from the expected values, in binary64 ulps. Ill-conditioned cases legitimately
  // lose binary64 digits; this shows how many.
  double maxBinary64TapeUlps = 0;
  std::uint64_t binary64TapeDisagreements = 0;  // an error, or a non-finite value of another kind
};

struct VectorCheckResult {
  std::uint64_t files = 0, tests = 0, passed = 0, failed = 0, notJudged = 0;
  std::vector<VectorOpTotals> perOp;
  std::vector<VectorFailure> failures;
  // Valid tests left unjudged on the device target, with why (errorUlps unused), so reports
  // can show them as skipped rather than passed.
  std::vector<VectorFailure> notJudgedTests;
};

struct VectorCheckOptions {
  Target target = Target::Reference;
  conformance::TapeFactory deviceTape;  // Target::Device: makes the tape under test
  bool verbose = false;                 // a line per test on `log`
};

// Loads every file (and every *.json under each folder, recursively, sorted by path), validates
// it against the v1 schema and checks each test. Unreadable or malformed input is an Error
// naming the file, tcId and field (exit 2 on the command line); a failing test is a
// VectorFailure (exit 1). Every file is loaded and validated before any test runs, so a
// malformed file means no results at all. For Target::Reference the tape under test is the
// multi-precision oracle (the binary64 tape's distance is reported, never judged); for
// Target::Device `deviceTape` makes it.
Result<VectorCheckResult> checkVectorPaths(const std::vector<std::string>& paths, Target target,
                                           const conformance::TapeFactory& deviceTape,
                                           std::ostream& log);
Result<VectorCheckResult> checkVectorPaths(const std::vector<std::string>& paths,
                                           const VectorCheckOptions& options, std::ostream& log);

// The same on files already loaded (e.g. by a runner that also reports them).
Result<VectorCheckResult> checkVectorFiles(const std::vector<VectorFile>& files,
                                           const VectorCheckOptions& options, std::ostream& log);

// The lines `tapecheck vectors check` prints: FAILED lines, per-op totals, the summary.
void printVectorCheckReport(const VectorCheckResult& result, Target target, std::ostream& out);

}  // namespace tapecheck::vectors
