// Checking golden-vector files (DESIGN.md section 4) against a tape.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "tapecheck/conformance/any_tape.h"
#include "tapecheck/result.h"

namespace tapecheck::vectors {

enum class Target { Reference, Device };

struct VectorFailure {
  std::string file;
  std::string op;
  std::uint64_t tcId = 0;
  std::string reason;
};

// Per-op totals of one check, so runs and certificates can report them per op.
struct VectorOpTotals {
  std::string op;
  std::uint64_t tests = 0, passed = 0, failed = 0;
  double maxErrorUlps = 0;          // worst judged distance (binary64 ulps for the reference,
                                    // binary32 units for the device)
  std::vector<double> errorsUlps;   // one per judged number group, for histograms
};

struct VectorCheckResult {
  std::uint64_t files = 0, tests = 0, passed = 0, failed = 0;
  std::vector<VectorOpTotals> perOp;
  std::vector<VectorFailure> failures;
};

// Loads every file (and every *.json under each folder, recursively, sorted by path), validates
// it against the v1 schema and checks each test. Unreadable or malformed input is an Error
// naming the file, tcId and field (exit 2 on the command line); a failing test is a
// VectorFailure (exit 1). For Target::Reference the tape under test is the reference tape
// (binary64, and the multi-precision oracle); for Target::Device `deviceTape` makes it.
Result<VectorCheckResult> checkVectorPaths(const std::vector<std::string>& paths, Target target,
                                           const conformance::TapeFactory& deviceTape,
                                           std::ostream& log);

}  // namespace tapecheck::vectors
