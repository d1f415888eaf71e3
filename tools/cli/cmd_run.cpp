// tapecheck run: property cases for every selected op through the kernels under test, judged
// against the reference tape, plus the golden vectors (conformance/README.md).
//
// The options of DESIGN.md section 5 (a contract) and, beyond it:
//   --case I        only case I of each selected op (what a reproducer line uses)
//   --vectors LIST  golden-vector files or folders (comma separated) instead of the committed
//                   corpus; `none` for no vectors
//   --out DIR       where failing inputs are written (default: a folder under the temp dir)
//   --shard I/N     run the case indices i with i % N == I (vectors in shard 0 only)
//   --no-shrink     report failing cases without shrinking them
//   --jobs N        threads evaluating cases (default: one per CPU); the report is the same
//   --case-timeout S, --in-process   where plugin kernels run (isolation_options.h)
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "args.h"
#include "commands.h"
#include "isolation_options.h"
#include "tapecheck/conformance/runner.h"
#include "tapecheck/device/kernel_table.h"

namespace tapecheck::cli {
namespace {

const char* kRunUsage =
    "usage: tapecheck run [--device cpu|cuda] [--kernels aten|cuda|PATH.so] [--ops LIST]\n"
    "           [--cases N] [--seed S] [--json FILE]\n"
    "           [--case I] [--vectors PATH,...|none] [--out DIR] [--shard I/N] [--no-shrink]\n"
    "           [--jobs N] [--case-timeout SECONDS] [--in-process]\n";

int usageError(const std::string& message) {
  std::cerr << "tapecheck run: " << message << "\n" << kRunUsage;
  return kExitUsage;
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

int runCommand(const Words& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << kRunUsage;
    return kExitPassed;
  }
  auto parsed = parseArgs(args, ArgSpec{{"--device", "--kernels", "--ops", "--cases", "--seed",
                                         "--json", "--case", "--vectors", "--out", "--shard",
                                         "--jobs", kCaseTimeoutOption},
                                        {"--no-shrink", kInProcessOption}});
  if (!parsed) return usageError(parsed.message());
  const ParsedArgs& a = parsed.value();
  if (!a.positional.empty()) return usageError("unexpected argument '" + a.positional[0] + "'");

  conformance::RunOptions o;
  o.device = device::defaultDevice();
  if (auto d = a.get("--device")) {
    auto kind = device::parseDevice(*d);
    if (!kind) return usageError(kind.message());
    o.device = kind.value();
  }
  o.kernels = a.get("--kernels").value_or(device::defaultKernels(o.device));
  if (auto ops = a.get("--ops")) {
    o.ops = splitList(*ops);
    if (o.ops.empty()) return usageError("option --ops needs a comma-separated list of ops");
    auto selected = conformance::selectSubjects(o.ops);
    if (!selected) return usageError(selected.message());
  }
  if (auto n = a.get("--cases")) {
    auto v = parseUnsigned("--cases", *n);
    if (!v) return usageError(v.message());
    if (v.value() == 0) return usageError("option --cases needs at least 1");
    o.casesPerOp = v.value();
  }
  if (auto s = a.get("--seed")) {
    auto v = parseUnsigned("--seed", *s);
    if (!v) return usageError(v.message());
    o.seed = v.value();
  }
  if (auto c = a.get("--case")) {
    auto v = parseUnsigned("--case", *c);
    if (!v) return usageError(v.message());
    o.onlyCase = v.value();
  }
  if (auto s = a.get("--shard")) {
    auto v = parseShard(*s);
    if (!v) return usageError(v.message());
    o.shardIndex = v.value().index;
    o.shardCount = v.value().count;
  }
  if (auto j = a.get("--jobs")) {
    auto v = parseJobs(*j);
    if (!v) return usageError(v.message());
    o.jobs = v.value();
  }
  if (auto v = a.get("--vectors")) {
    if (*v != "none") o.vectorPaths = splitList(*v);
  } else if (!o.onlyCase) {
    o.vectorPaths = conformance::defaultVectorPaths();
  }
  if (auto out = a.get("--out")) o.valuesDir = *out;
  if (Status isolation = applyIsolationOptions(a, o); !isolation)
    return usageError(isolation.message());
  o.shrink = !a.has("--no-shrink");
  const std::optional<std::string> jsonPath = a.get("--json");
  if (jsonPath) {
    const std::filesystem::path parent = std::filesystem::path(*jsonPath).parent_path();
    std::error_code ec;
    if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
      return usageError("cannot write --json " + *jsonPath + ": no folder " + parent.string());
  }

  const auto start = std::chrono::steady_clock::now();
  auto report = conformance::runConformance(o, std::cerr);
  if (!report) {
    std::cerr << "tapecheck run: " << report.message() << "\n";
    return kExitUsage;
  }
  const conformance::RunReport& r = report.value();
  std::cout << "tapecheck run: kernels " << r.kernelsSource << " (" << r.kernelsName << " "
            << r.kernelsVersion << ") on " << r.device << ", seed " << r.seed << ", "
            << (o.onlyCase ? "case " + std::to_string(*o.onlyCase)
                           : std::to_string(r.casesPerOp) + " cases per op")
            << "\n";
  conformance::printReport(r, std::cout);
  std::cout << std::flush;
  if (jsonPath) {
    std::ofstream out(*jsonPath, std::ios::binary | std::ios::trunc);
    out << conformance::reportJson(r);
    out.close();
    if (!out) {
      std::cerr << "tapecheck run: cannot write " << *jsonPath << "\n";
      return kExitUsage;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cerr << "tapecheck run: finished in " << static_cast<long>(seconds + 0.5) << " s\n";
  return r.failed > 0 ? kExitFailed : kExitPassed;
}

}  // namespace tapecheck::cli
