// How `run` and `certify` show progress: on stderr (stdout carries the report), named after the
// command the user typed; on a terminal one line rewritten twice a second, in a log a line every
// few seconds (conformance/src/progress_meter.h).
#pragma once

#include <unistd.h>

#include <string>

#include "tapecheck/conformance/runner.h"

namespace tapecheck::cli {

inline void showProgressAs(const std::string& command, conformance::RunOptions& options) {
  options.progressLabel = command;
  options.progressRewritesLine = ::isatty(STDERR_FILENO) == 1;
  if (options.progressRewritesLine) options.progressSeconds = 0.5;
}

}  // namespace tapecheck::cli
