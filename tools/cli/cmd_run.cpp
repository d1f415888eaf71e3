#include <iostream>

#include "args.h"
#include "commands.h"

namespace tapecheck::cli {

int runCommand(const Words&) {
  std::cerr << "tapecheck run: not built yet\n";
  return kExitUsage;
}

}  // namespace tapecheck::cli
