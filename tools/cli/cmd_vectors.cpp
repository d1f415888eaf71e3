// tapecheck vectors check | generate | import (import-paramio: the same) (DESIGN.md section 5).
#include <iostream>
#include <optional>

#include "args.h"
#include "commands.h"
#include "junit_reports.h"
#include "output_paths.h"
#include "usage.h"
#include "tapecheck/conformance/device_tapes.h"
#include "tapecheck/conformance/op_registry.h"
#include "tapecheck/device/kernel_table.h"
#include "tapecheck/vectors/check.h"
#include "tapecheck/vectors/corpus.h"
#include "tapecheck/vectors/load.h"
#include "tapecheck/vectors/torchlean_import.h"

namespace tapecheck::cli {

namespace {

const char* kVectorsSynopsis =
    "usage: tapecheck vectors check [--target reference|device] [--kernels aten|cuda|PATH.so]\n"
    "                               [--device cpu|cuda] [--junit FILE] [--verbose] PATH...\n"
    "       tapecheck vectors generate [--op OP] [--out DIR]\n"
    "       tapecheck vectors import FILE   (import-paramio FILE: the same)\n";

const char* kVectorsHelp =
    "usage: tapecheck vectors <subcommand> [options]\n"
    "\n"
    "Golden vectors: hand-chosen cases with their expected results, in JSON (vectors/README.md).\n"
    "\n"
    "subcommands:\n"
    "  check PATH...           checks vector files against the reference or the kernels\n"
    "  generate                regenerates the committed vectors from their definitions\n"
    "  import FILE             prints TorchLean tensors (state file, float32 stream or ParamIO\n"
    "                          file, told from the content) as vector leaves\n"
    "\n"
    "`tapecheck vectors <subcommand> --help` describes its options and their defaults.\n";

const char* kCheckSynopsis =
    "usage: tapecheck vectors check [--target reference|device] [--kernels aten|cuda|PATH.so]\n"
    "                               [--device cpu|cuda] [--junit FILE] [--verbose] PATH...\n";

const char* kCheckHelp =
    "usage: tapecheck vectors check [options] PATH...\n"
    "\n"
    "Checks golden-vector files against the multi-precision reference or against the kernels\n"
    "under test. Each PATH is a file or a folder (every *.json under it, sorted). Every file is\n"
    "read and validated before any vector runs. Prints a line per failing vector,\n"
    "FAILED FILE tcId N (OP): REASON, the totals per op and a summary line on stdout.\n"
    "\n"
    "options:\n"
    "  --target reference|device\n"
    "                        what is checked: the mpfr128 reference tape, or the kernels under\n"
    "                        test (default: reference)\n"
    "  --kernels aten|cuda|PATH.so\n"
    "                        with --target device, the kernel table under test\n"
    "                        (default: cuda on cuda, aten on cpu)\n"
    "  --device cpu|cuda     with --target device, where the kernels run\n"
    "                        (default: cuda when a GPU is visible, else cpu)\n"
    "  --junit FILE          also write JUnit XML to FILE, a test suite per file and a test case\n"
    "                        per vector, for CI systems (default: none)\n"
    "  --verbose             a line for every vector, passing or not (default: failing ones)\n"
    "  -h, --help            print this help and exit\n"
    "\n"
    "exit status: 0 every vector passed, 1 a vector failed, 2 usage error or unreadable or\n"
    "malformed input (message on stderr, nothing written)\n";

const char* kGenerateSynopsis = "usage: tapecheck vectors generate [--op OP] [--out DIR]\n";

const char* kGenerateHelp =
    "usage: tapecheck vectors generate [--op OP] [--out DIR]\n"
    "\n"
    "Regenerates the golden-vector files from the corpus definitions, with expected results from\n"
    "the multi-precision reference, deterministically: the same sources give byte-identical\n"
    "files. Nothing is written unless every case agrees with the reference.\n"
    "\n"
    "options:\n"
    "  --op OP               only the files of this op (default: every op)\n"
    "  --out DIR             the folder the files go to, created if missing; checked before\n"
    "                        anything is generated (default: vectors/golden, relative to the\n"
    "                        current folder)\n"
    "  -h, --help            print this help and exit\n"
    "\n"
    "exit status: 0 written, 1 a case the reference contradicts (nothing written), 2 usage error\n"
    "or an --out that cannot be written (message on stderr, nothing written)\n";

const char* kImportSynopsis = "usage: tapecheck vectors import FILE\n";

const char* kImportHelp =
    "usage: tapecheck vectors import FILE\n"
    "       tapecheck vectors import-paramio FILE   (the same command)\n"
    "\n"
    "Reads TorchLean tensors and prints them on stdout as a golden-vector `leaves` array, one\n"
    "leaf per line, to paste into a vector. The format is told from the content:\n"
    "torchlean_state_bits_v1, torchlean_state_float32_bits_v1, the TLSF32B binary stream, or\n"
    "torchlean_paramlist_bits_v1 (ParamIO).\n"
    "\n"
    "options:\n"
    "  -h, --help            print this help and exit\n"
    "\n"
    "exit status: 0 printed, 2 usage error or an unreadable or malformed FILE (message on\n"
    "stderr, nothing printed)\n";

int vectorsUsage(const std::string& message) {
  return usageError("tapecheck vectors", message, kVectorsSynopsis);
}

// Input that cannot be read or used: exit 2 without the synopsis.
int unusable(const std::string& message) {
  std::cerr << "tapecheck vectors: " << message << "\n";
  return kExitUsage;
}

int checkCommand(const Words& words) {
  if (asksForHelp(words)) return printHelp(kCheckHelp);
  const auto usage = [](const std::string& message) {
    return usageError("tapecheck vectors check", message, kCheckSynopsis);
  };
  auto args = parseArgs(words, {{"--target", "--kernels", "--device", "--junit"}, {"--verbose"}});
  if (!args) return usage(args.message());
  const ParsedArgs& a = args.value();
  if (a.positional.empty()) return usage("check needs at least one file or folder");

  vectors::VectorCheckOptions options;
  options.verbose = a.has("--verbose");
  std::string checkCommand = "tapecheck vectors check";  // what reproduces one file's check
  const std::string target = a.get("--target").value_or("reference");
  if (target == "reference") {
    options.target = vectors::Target::Reference;
    if (a.get("--kernels") || a.get("--device"))
      return usage("--kernels and --device apply only to --target device");
  } else if (target == "device") {
    options.target = vectors::Target::Device;
    device::DeviceKind kind = device::defaultDevice();
    if (auto d = a.get("--device")) {
      auto parsed = device::parseDevice(*d);
      if (!parsed) return usage(parsed.message());
      kind = parsed.value();
    }
    const std::string spec = a.get("--kernels").value_or(device::defaultKernels(kind));
    auto table = device::loadKernelTable(spec, kind);
    if (!table) return unusable(table.message());
    checkCommand += " --target device --device " + std::string(device::deviceName(kind)) +
                    " --kernels " + shellWord(spec);
    options.deviceTape = [t = std::move(table).value()] {
      return conformance::makeDeviceTape(t);
    };
  } else {
    return usage("--target must be reference or device, not '" + target + "'");
  }

  // Every file is read and validated before anything is printed.
  auto files = vectors::collectVectorFiles(a.positional);
  if (!files) return unusable(files.message());
  if (files.value().empty()) return unusable("no *.json vector files under the given paths");
  std::vector<vectors::VectorFile> loaded;
  for (const std::string& path : files.value()) {
    auto f = vectors::loadVectorFile(path);
    if (!f) return unusable(f.message());
    loaded.push_back(std::move(f).value());
  }
  const std::optional<std::string> junitPath = a.get("--junit");
  if (junitPath)
    if (Status s = probeOutputFile("--junit", *junitPath); !s) return unusable(s.message());
  auto result = vectors::checkVectorFiles(loaded, options, std::cout);
  if (!result) return unusable(result.message());
  vectors::printVectorCheckReport(result.value(), options.target, std::cout);
  std::cout << std::flush;
  if (junitPath) {
    const std::vector<JunitSuite> suites =
        vectorJunitSuites(loaded, result.value(), checkCommand);
    if (Status s = writeOutputFile(*junitPath, junitXml("tapecheck vectors check", suites)); !s)
      return unusable(s.message());
  }
  return result.value().failed ? kExitFailed : kExitPassed;
}

int generateCommand(const Words& words) {
  if (asksForHelp(words)) return printHelp(kGenerateHelp);
  const auto usage = [](const std::string& message) {
    return usageError("tapecheck vectors generate", message, kGenerateSynopsis);
  };
  auto args = parseArgs(words, {{"--op", "--out"}, {}});
  if (!args) return usage(args.message());
  const ParsedArgs& a = args.value();
  if (!a.positional.empty()) return usage("generate takes no positional arguments");
  const std::optional<std::string> op = a.get("--op");
  if (op && !conformance::findOp(*op)) return usage("unknown op '" + *op + "'");
  const std::string out = a.get("--out").value_or("vectors/golden");
  if (Status s = probeOutputDir("--out", out); !s) return unusable(s.message());
  auto written = vectors::generateCorpus(out, op, std::cout);
  if (!written) {
    // A case whose stated error or value the oracle contradicts: the corpus is wrong or the
    // reference is, and nothing was written.
    std::cerr << "tapecheck vectors generate: " << written.message() << "\n";
    return kExitFailed;
  }
  std::cout << "vectors generate: files:" << written.value().size() << "\n";
  return kExitPassed;
}

// TorchLean tensors (a state file, a float32 stream or a ParamIO file, told from the content) as
// the leaves of a new vector, on stdout. `import-paramio` is the same command under its older
// name.
int importCommand(const std::string& name, const Words& words) {
  if (asksForHelp(words)) return printHelp(kImportHelp);
  const auto usage = [&name](const std::string& message) {
    return usageError("tapecheck vectors " + name, message, kImportSynopsis);
  };
  auto args = parseArgs(words, {{}, {}});
  if (!args) return usage(args.message());
  if (args.value().positional.size() != 1) return usage(name + " takes one FILE");
  const std::string path = args.value().positional[0];
  auto bytes = vectors::readTextFile(path);
  if (!bytes) return unusable(bytes.message());
  auto imported = vectors::importTorchLeanTensors(bytes.value(), path);
  if (!imported) return unusable(imported.message());
  auto leaves = vectors::leavesJson(imported.value(), path);
  if (!leaves) return unusable(leaves.message());
  std::cout << leaves.value();
  return kExitPassed;
}

}  // namespace

int vectorsCommand(const Words& args) {
  if (args.empty()) return vectorsUsage("missing subcommand");
  const std::string sub = args[0];
  const Words rest(args.begin() + 1, args.end());
  if (sub == "check") return checkCommand(rest);
  if (sub == "generate") return generateCommand(rest);
  if (sub == "import" || sub == "import-paramio") return importCommand(sub, rest);
  if (sub == "--help" || sub == "-h" || sub == "help") return printHelp(kVectorsHelp);
  return vectorsUsage("unknown subcommand '" + sub + "'");
}

}  // namespace tapecheck::cli
