// A whole conformance run: generated property cases for every selected op through the kernels
// under test, judged against the reference tape, plus the golden vectors.
//
// Case i of op O under seed S is a pure function of (O, S, i, device kind): `--case i` reruns
// exactly that case, and shards split the case indices (i % shardCount == shardIndex) without
// changing any case. The golden vectors run in shard 0 only.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "tapecheck/conformance/any_tape.h"
#include "tapecheck/conformance/op_registry.h"
#include "tapecheck/conformance/run_report.h"
#include "tapecheck/device/kernel_table.h"
#include "tapecheck/result.h"

namespace tapecheck::conformance {

// Stand-in kernels for tests: the reference tape at binary32 as the "device" (never a real
// kernel table; reported as such).
inline constexpr const char* kReferenceBinary32Kernels = "reference-binary32";

struct RunOptions {
  std::string kernels;                         // aten | cuda | PATH.so | reference-binary32
  device::DeviceKind device = device::DeviceKind::Cpu;
  std::vector<std::string> ops;                // empty: every op and program of the registry
  std::uint64_t casesPerOp = 0;                // 0: the default for the device
  std::uint64_t seed = 0;
  std::vector<std::string> vectorPaths;        // golden vectors to check; empty: none
  std::uint32_t shardIndex = 0, shardCount = 1;  // deterministic split of the work
  unsigned jobs = 0;                           // threads evaluating cases; 0: one per CPU

  // --- beyond the command line's contract (all optional) -----------------------------------
  std::optional<std::uint64_t> onlyCase;       // run only this case index of each selected op
  std::string valuesDir;                       // failing inputs go here; empty: a temp folder
  bool shrink = true;                          // shrink the worst case of each failing group
  std::uint64_t shrinkEvaluations = 48;        // at most this many evaluations per group
  double progressSeconds = 3;                  // a progress line at most this often
  bool progressRewritesLine = false;           // progress goes to a terminal: rewrite one line
  std::string progressLabel = "tapecheck run"; // the command progress lines name
  std::string command = "tapecheck";           // how reproducers name the tool
  // How to start a kernel worker (isolation.h); empty: the kernels run in this process. Only
  // kernels loaded from a library (a plugin, `cuda`) run in workers: the built-in `aten` table
  // and the reference stand-in are tapecheck's own code and run here.
  std::vector<std::string> workerCommand;
  double caseTimeoutSeconds = 0;               // per case in a worker; 0: defaultCaseTimeout
};

// After this many cases of one op whose kernels crashed, hung or wrote outside their outputs
// (each costs a new worker), the op's remaining cases are skipped, counted and said why.
inline constexpr std::uint64_t kMaxSpoiledWorkersPerOp = 3;

// The threads a run uses for jobs = 0: one per hardware thread. Any number gives the same report.
unsigned defaultJobs();

// The default number of cases per op: 4000 on CPU (~30 s for ATen on one core), 2000 on CUDA
// (~1 minute on an H200 host with 16 threads: the binary64 reference of 2^22-element cases runs
// on the host).
std::uint64_t defaultCasesPerOp(device::DeviceKind d);

// Every name --ops accepts: the registry's ops, then its programs.
std::vector<std::string> selectableNames();

// The ops and programs a run covers: all for an empty list; otherwise the named ones plus every
// program whose ops are all named. An unknown name is an Error (a usage error, exit 2).
Result<std::vector<const OpInfo*>> selectSubjects(const std::vector<std::string>& names);

// Progress lines (src/progress_meter.h) and messages about values files go to `progress`; the
// returned report holds every figure. An Error means the run could not happen (unusable kernels,
// unreadable vectors, unknown op, none of the selected ops provided by a partial kernel table, a
// kernel worker that cannot start): exit 2.
//
// A partial kernel table (null entry points) runs what it provides: an op whose forward entry
// points are missing is NOT PROVIDED in every pass; one whose backward entry points are missing
// runs its cases without the backward pass, and its backward and golden-vector passes are NOT
// PROVIDED (a golden vector checks both passes). A kernel fault (device/kernel_fault.h) fails
// the case in the pass of the entry point that faulted, with the fault as the reason.
Result<RunReport> runConformance(const RunOptions& options, std::ostream& progress);

}  // namespace tapecheck::conformance
