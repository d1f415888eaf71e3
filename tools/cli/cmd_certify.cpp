#include <iostream>

#include "args.h"
#include "commands.h"

namespace tapecheck::cli {

int certifyCommand(const Words&) {
  std::cerr << "tapecheck certify: not built yet\n";
  return kExitUsage;
}

}  // namespace tapecheck::cli
