// tapecheck: the command line (DESIGN.md section 5).
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "heap_tuning.h"
#include "tapecheck/conformance/isolation.h"

namespace {

const char* kUsage =
    "usage: tapecheck <command> [options]\n"
    "\n"
    "commands:\n"
    "  run [--device cpu|cuda] [--kernels aten|cuda|PATH.so] [--ops LIST] [--cases N]\n"
    "      [--seed S] [--json FILE]\n"
    "      property tests and golden vectors against the reference tape\n"
    "  vectors check [--target reference|device] [--kernels ...] PATH...\n"
    "  vectors generate [--op OP] [--out DIR]\n"
    "  vectors import-paramio FILE.json\n"
    "  certify --kernels aten|cuda|PATH.so [--device cpu|cuda] [--baseline CERT.json]\n"
    "      [--cases N] [--seed S] [--shard I/N] --out DIR\n"
    "  certify merge [--baseline CERT.json] --out DIR SHARD_DIR...\n"
    "\n"
    "exit status: 0 passed/certified, 1 conformance failure/not certified, 2 usage error\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace tapecheck::cli;
  keepFreedMemoryInTheHeap();
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty() || words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
    (words.empty() ? std::cerr : std::cout) << kUsage;
    return words.empty() ? kExitUsage : kExitPassed;
  }
  const std::string command = words[0];
  const Words rest(words.begin() + 1, words.end());
  try {
    if (command == "run") return runCommand(rest);
    if (command == "vectors") return vectorsCommand(rest);
    if (command == "certify") return certifyCommand(rest);
    // Not listed in the usage: `run` and `certify` start it to run kernels in a separate process.
    if (command == tapecheck::conformance::kKernelWorkerCommand)
      return tapecheck::conformance::serveKernelWorker(rest);
  } catch (const std::exception& e) {
    // Every expected failure is a Result; reaching here is a bug, but still not an abort.
    std::cerr << "tapecheck: internal error: " << e.what() << "\n";
    return kExitUsage;
  }
  std::cerr << "tapecheck: unknown command '" << command << "'\n" << kUsage;
  return kExitUsage;
}
