// Help and usage errors, the same for every subcommand: `--help` or `-h` anywhere prints the
// command's full help on stdout (exit 0); a usage error prints the message, the command's synopsis
// and where the full help is on stderr (exit 2).
#pragma once

#include <iostream>
#include <string>
#include <vector>

#include "args.h"

namespace tapecheck::cli {

// Whether the words ask for help: --help or -h before a lone "--".
inline bool asksForHelp(const std::vector<std::string>& words) {
  for (const std::string& w : words) {
    if (w == "--") return false;
    if (w == "--help" || w == "-h") return true;
  }
  return false;
}

inline int printHelp(const char* help) {
  std::cout << help << std::flush;
  return kExitPassed;
}

// `command` is how the user called it, e.g. "tapecheck vectors check"; `synopsis` its usage lines.
inline int usageError(const std::string& command, const std::string& message,
                      const char* synopsis) {
  std::cerr << command << ": " << message << "\n"
            << synopsis << "run '" << command << " --help' for every option and its default\n";
  return kExitUsage;
}

}  // namespace tapecheck::cli
