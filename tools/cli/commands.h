// The subcommands of `tapecheck`. Each returns the process exit status: 0 passed / certified,
// 1 conformance failure / not certified, 2 usage error or unreadable input (DESIGN.md section 5).
#pragma once

#include <string>
#include <vector>

namespace tapecheck::cli {

using Words = std::vector<std::string>;

int runCommand(const Words& args);          // tapecheck run
int vectorsCommand(const Words& args);      // tapecheck vectors check|generate|import
int certifyCommand(const Words& args);      // tapecheck certify [merge]

}  // namespace tapecheck::cli
