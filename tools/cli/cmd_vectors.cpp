// tapecheck vectors check | generate | import (import-paramio: the same) (DESIGN.md section 5).
#include <iostream>

#include "args.h"
#include "commands.h"
#include "tapecheck/conformance/device_tapes.h"
#include "tapecheck/conformance/op_registry.h"
#include "tapecheck/device/kernel_table.h"
#include "tapecheck/vectors/check.h"
#include "tapecheck/vectors/corpus.h"
#include "tapecheck/vectors/load.h"
#include "tapecheck/vectors/torchlean_import.h"

namespace tapecheck::cli {

namespace {

const char* kVectorsUsage =
    "usage: tapecheck vectors check [--target reference|device] [--kernels aten|cuda|PATH.so]\n"
    "                               [--device cpu|cuda] [--verbose] PATH...\n"
    "       tapecheck vectors generate [--op OP] [--out DIR]   (DIR defaults to vectors/golden)\n"
    "       tapecheck vectors import FILE   (TorchLean tensors as leaves; import-paramio: same)\n";

int usage(const std::string& message) {
  std::cerr << "tapecheck vectors: " << message << "\n" << kVectorsUsage;
  return kExitUsage;
}

int checkCommand(const Words& words) {
  auto args = parseArgs(words, {{"--target", "--kernels", "--device"}, {"--verbose"}});
  if (!args) return usage(args.message());
  const ParsedArgs& a = args.value();
  if (a.positional.empty()) return usage("check needs at least one file or folder");

  vectors::VectorCheckOptions options;
  options.verbose = a.has("--verbose");
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
    if (!table) {
      std::cerr << "tapecheck vectors: " << table.message() << "\n";
      return kExitUsage;
    }
    options.deviceTape = [t = std::move(table).value()] {
      return conformance::makeDeviceTape(t);
    };
  } else {
    return usage("--target must be reference or device, not '" + target + "'");
  }

  // Every file is read and validated before anything is printed.
  auto files = vectors::collectVectorFiles(a.positional);
  if (!files) {
    std::cerr << "tapecheck vectors: " << files.message() << "\n";
    return kExitUsage;
  }
  if (files.value().empty()) {
    std::cerr << "tapecheck vectors: no *.json vector files under the given paths\n";
    return kExitUsage;
  }
  std::vector<vectors::VectorFile> loaded;
  for (const std::string& path : files.value()) {
    auto f = vectors::loadVectorFile(path);
    if (!f) {
      std::cerr << "tapecheck vectors: " << f.message() << "\n";
      return kExitUsage;
    }
    loaded.push_back(std::move(f).value());
  }
  auto result = vectors::checkVectorFiles(loaded, options, std::cout);
  if (!result) {
    std::cerr << "tapecheck vectors: " << result.message() << "\n";
    return kExitUsage;
  }
  vectors::printVectorCheckReport(result.value(), options.target, std::cout);
  return result.value().failed ? kExitFailed : kExitPassed;
}

int generateCommand(const Words& words) {
  auto args = parseArgs(words, {{"--op", "--out"}, {}});
  if (!args) return usage(args.message());
  const ParsedArgs& a = args.value();
  if (!a.positional.empty()) return usage("generate takes no positional arguments");
  const std::optional<std::string> op = a.get("--op");
  if (op && !conformance::findOp(*op)) return usage("unknown op '" + *op + "'");
  const std::string out = a.get("--out").value_or("vectors/golden");
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
  auto args = parseArgs(words, {{}, {}});
  if (!args) return usage(args.message());
  if (args.value().positional.size() != 1) return usage(name + " takes one FILE");
  const std::string path = args.value().positional[0];
  auto bytes = vectors::readTextFile(path);
  if (!bytes) {
    std::cerr << "tapecheck vectors: " << bytes.message() << "\n";
    return kExitUsage;
  }
  auto imported = vectors::importTorchLeanTensors(bytes.value(), path);
  if (!imported) {
    std::cerr << "tapecheck vectors: " << imported.message() << "\n";
    return kExitUsage;
  }
  auto leaves = vectors::leavesJson(imported.value(), path);
  if (!leaves) {
    std::cerr << "tapecheck vectors: " << leaves.message() << "\n";
    return kExitUsage;
  }
  std::cout << leaves.value();
  return kExitPassed;
}

}  // namespace

int vectorsCommand(const Words& args) {
  if (args.empty()) return usage("missing subcommand");
  const std::string sub = args[0];
  const Words rest(args.begin() + 1, args.end());
  if (sub == "check") return checkCommand(rest);
  if (sub == "generate") return generateCommand(rest);
  if (sub == "import" || sub == "import-paramio") return importCommand(sub, rest);
  if (sub == "--help" || sub == "-h" || sub == "help") {
    std::cout << kVectorsUsage;
    return kExitPassed;
  }
  return usage("unknown subcommand '" + sub + "'");
}

}  // namespace tapecheck::cli
