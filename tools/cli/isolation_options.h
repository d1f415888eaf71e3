// The options of `run` and `certify` about where plugin kernels run (conformance/isolation.h):
//   --case-timeout SECONDS  how long one case may run in a kernel worker before it counts as hung
//                           (whole seconds; default 10 on cpu, 120 on cuda)
//   --in-process            run the kernels in tapecheck's own process, e.g. under a debugger;
//                           a kernel that crashes or hangs then takes tapecheck with it
#pragma once

#include <string>

#include "args.h"
#include "tapecheck/conformance/isolation.h"
#include "tapecheck/conformance/runner.h"

namespace tapecheck::cli {

inline constexpr const char* kCaseTimeoutOption = "--case-timeout";
inline constexpr const char* kInProcessOption = "--in-process";

// Sets o.workerCommand (this executable's kernel worker, unless --in-process) and
// o.caseTimeoutSeconds. An Error is a usage error.
inline Status applyIsolationOptions(const ParsedArgs& a, conformance::RunOptions& o) {
  if (auto text = a.get(kCaseTimeoutOption)) {
    auto v = parseUnsigned(kCaseTimeoutOption, *text);
    if (!v) return v.error();
    if (v.value() < 1 || v.value() > 86400)
      return Error{std::string("option ") + kCaseTimeoutOption +
                   " needs whole seconds from 1 to 86400, got '" + *text + "'"};
    o.caseTimeoutSeconds = static_cast<double>(v.value());
  }
  if (a.has(kInProcessOption)) return okStatus();
  auto self = conformance::currentExecutable();
  if (!self) return self.error();
  o.workerCommand = {self.value(), conformance::kKernelWorkerCommand};
  return okStatus();
}

}  // namespace tapecheck::cli
