// A whole conformance run: generated property cases for every selected op through the kernels
// under test, judged against the reference tape, plus the golden vectors.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "tapecheck/conformance/run_report.h"
#include "tapecheck/device/kernel_table.h"
#include "tapecheck/result.h"

namespace tapecheck::conformance {

struct RunOptions {
  std::string kernels;                         // aten | cuda | PATH.so
  device::DeviceKind device = device::DeviceKind::Cpu;
  std::vector<std::string> ops;                // empty: every op of the registry
  std::uint64_t casesPerOp = 0;                // 0: the default for the device
  std::uint64_t seed = 0;
  std::vector<std::string> vectorPaths;        // golden vectors to check; empty: none
  std::uint32_t shardIndex = 0, shardCount = 1;  // deterministic split of the work
};

// Progress lines go to `progress`; the returned report holds every figure. An Error means the
// run could not happen (unusable kernels, unreadable vectors): exit 2.
Result<RunReport> runConformance(const RunOptions& options, std::ostream& progress);

}  // namespace tapecheck::conformance
