// tapecheck: the command line (DESIGN.md section 5).
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "heap_tuning.h"
#include "tapecheck/certify/build_info.h"
#include "tapecheck/conformance/isolation.h"

namespace {

const char* kHelp =
    "usage: tapecheck <command> [options]\n"
    "       tapecheck --version | --help\n"
    "\n"
    "Checks GPU tensor kernels against the TorchLean specification and certifies kernel versions.\n"
    "\n"
    "commands:\n"
    "  run                     property cases and golden vectors through the kernels under test\n"
    "  vectors check PATH...   checks golden-vector files against the reference or the kernels\n"
    "  vectors generate        regenerates the committed golden vectors\n"
    "  vectors import-paramio FILE.json\n"
    "                          prints a TorchLean parameter file's tensors as vector leaves\n"
    "  certify                 runs everything and writes a certificate and an HTML report\n"
    "  certify merge           combines shard certificates into one\n"
    "\n"
    "`tapecheck <command> --help` describes the command's options and their defaults.\n"
    "\n"
    "options:\n"
    "  --version               print tapecheck's version (and git revision) and exit\n"
    "  -h, --help              print this help and exit\n"
    "\n"
    "exit status: 0 passed / certified, 1 conformance failure / not certified, 2 usage error or\n"
    "unreadable input (message on stderr, nothing written)\n";

// "tapecheck 0.1.0 (git 3dc0510...)": the revision is the one the build was configured from.
std::string versionLine() {
  using namespace tapecheck::certify;
  const std::string revision = harnessGitRevision();
  return "tapecheck " + harnessVersion() +
         (revision.empty() || revision == "unknown" ? "" : " (git " + revision + ")");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tapecheck::cli;
  keepFreedMemoryInTheHeap();
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty()) {
    std::cerr << kHelp;
    return kExitUsage;
  }
  const std::string command = words[0];
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kHelp;
    return kExitPassed;
  }
  if (command == "--version") {
    std::cout << versionLine() << "\n";
    return kExitPassed;
  }
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
  std::cerr << "tapecheck: unknown command '" << command << "'\n"
            << "run 'tapecheck --help' for the commands\n";
  return kExitUsage;
}
