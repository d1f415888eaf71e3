#include <iostream>

#include "args.h"
#include "commands.h"

namespace tapecheck::cli {

int vectorsCommand(const Words&) {
  std::cerr << "tapecheck vectors: not built yet\n";
  return kExitUsage;
}

}  // namespace tapecheck::cli
