// tapecheck run: property cases for every selected op through the kernels under test, judged
// against the reference tape, plus the golden vectors (conformance/README.md). The options of
// DESIGN.md section 5 (a contract) and the ones beyond it are described in kRunHelp.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "args.h"
#include "commands.h"
#include "isolation_options.h"
#include "junit_reports.h"
#include "output_paths.h"
#include "progress_options.h"
#include "usage.h"
#include "tapecheck/certify/build_info.h"
#include "tapecheck/conformance/runner.h"
#include "tapecheck/device/kernel_table.h"

namespace tapecheck::cli {
namespace {

const char* kRunSynopsis =
    "usage: tapecheck run [--device cpu|cuda] [--kernels aten|cuda|PATH.so] [--ops LIST]\n"
    "           [--cases N] [--seed S] [--json FILE] [--junit FILE]\n"
    "           [--case I] [--vectors PATH,...|none] [--out DIR] [--shard I/N] [--no-shrink]\n"
    "           [--jobs N] [--case-timeout SECONDS] [--in-process]\n";

const char* kRunHelp =
    "usage: tapecheck run [options]\n"
    "\n"
    "Runs generated property cases of every selected op through the kernels under test, judged\n"
    "against the reference tape, plus the golden vectors. Prints a status line per case group\n"
    "(PASSED, FAILED, MISTRUSTED or SKIPPED), the worst case of each failing group with the\n"
    "command that reproduces it, a NOT PROVIDED line per pass a partial kernel table lacks, and\n"
    "one summary line on stdout; progress goes to stderr.\n"
    "\n"
    "options:\n"
    "  --device cpu|cuda     where the kernels run\n"
    "                        (default: cuda when a GPU is visible, else cpu)\n"
    "  --kernels aten|cuda|PATH.so\n"
    "                        the kernel table under test: ATen's, tapecheck's CUDA kernels, or a\n"
    "                        plugin implementing kernel ABI v1\n"
    "                        (default: cuda on cuda, aten on cpu)\n"
    "  --ops LIST            comma-separated ops and programs to run; a program runs too when all\n"
    "                        its ops are named (default: every op and program)\n"
    "  --cases N             generated cases per op, half as many per program\n"
    "                        (default: 4000 on cpu, 2000 on cuda)\n"
    "  --seed S              the generator's seed: the same seed gives the same cases and the\n"
    "                        same report (default: 0)\n"
    "  --json FILE           also write every figure as JSON to FILE (default: none)\n"
    "  --junit FILE          also write JUnit XML to FILE, a test suite per op and a test case\n"
    "                        per status group, for CI systems (default: none)\n"
    "  --case I              run only case I of each selected op, as reproduce lines do\n"
    "                        (default: every case; no golden vectors)\n"
    "  --vectors PATH,...|none\n"
    "                        golden-vector files or folders to check, or none\n"
    "                        (default: the committed corpus, vectors/golden)\n"
    "  --out DIR             where the inputs of failing cases are written\n"
    "                        (default: $TMPDIR/tapecheck-run/KERNELS-DEVICE-seedS)\n"
    "  --shard I/N           run only the case indices i with i % N == I; the golden vectors\n"
    "                        run in shard 0 (default: 0/1, everything)\n"
    "  --no-shrink           report failing cases without shrinking them (default: shrink)\n"
    "  --jobs N              threads evaluating cases; the report is the same for every N\n"
    "                        (default: one per CPU)\n"
    "  --case-timeout SECONDS\n"
    "                        how long one case may run before it counts as hung; a plugin's\n"
    "                        kernels run in worker processes, so a crash or a hang fails its\n"
    "                        case and the run goes on (default: 10 on cpu, 120 on cuda)\n"
    "  --in-process          run a plugin's kernels in tapecheck's own process (for a debugger);\n"
    "                        a kernel that crashes or hangs then ends tapecheck\n"
    "                        (default: worker processes; aten always runs in process)\n"
    "  -h, --help            print this help and exit\n"
    "\n"
    "Every output path (--json, --junit, --out) is checked before any case runs.\n"
    "\n"
    "exit status: 0 every check passed, 1 a conformance failure, 2 usage error or unreadable\n"
    "input (message on stderr, nothing written)\n";

int usageError(const std::string& message) {
  return cli::usageError("tapecheck run", message, kRunSynopsis);
}

int cannotRun(const std::string& message) {
  std::cerr << "tapecheck run: " << message << "\n";
  return kExitUsage;
}

// The golden corpus that `certify` runs (the installed one, or the source tree's), when it exists.
std::vector<std::string> defaultVectorPaths() {
  const std::string corpus = certify::goldenCorpusDir();
  std::error_code ec;
  if (!std::filesystem::is_directory(corpus, ec)) return {};
  return {corpus};
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
  if (asksForHelp(args)) return printHelp(kRunHelp);
  auto parsed = parseArgs(args, ArgSpec{{"--device", "--kernels", "--ops", "--cases", "--seed",
                                         "--json", "--junit", "--case", "--vectors", "--out",
                                         "--shard", "--jobs", kCaseTimeoutOption},
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
    o.vectorPaths = defaultVectorPaths();
  }
  if (auto out = a.get("--out")) o.valuesDir = *out;
  if (Status isolation = applyIsolationOptions(a, o); !isolation)
    return usageError(isolation.message());
  o.shrink = !a.has("--no-shrink");
  const std::optional<std::string> jsonPath = a.get("--json");
  const std::optional<std::string> junitPath = a.get("--junit");
  // Output paths are proven writable before anything runs (exit 2, nothing written).
  if (jsonPath)
    if (Status s = probeOutputFile("--json", *jsonPath); !s) return cannotRun(s.message());
  if (junitPath)
    if (Status s = probeOutputFile("--junit", *junitPath); !s) return cannotRun(s.message());
  if (auto out = a.get("--out"))
    if (Status s = probeOutputDir("--out", *out); !s) return cannotRun(s.message());
  showProgressAs("tapecheck run", o);

  const auto start = std::chrono::steady_clock::now();
  auto report = conformance::runConformance(o, std::cerr);
  if (!report) return cannotRun(report.message());
  const conformance::RunReport& r = report.value();
  std::cout << "tapecheck run: kernels " << r.kernelsSource << " (" << r.kernelsName << " "
            << r.kernelsVersion << ") on " << r.device << ", seed " << r.seed << ", "
            << (o.onlyCase ? "case " + std::to_string(*o.onlyCase)
                           : std::to_string(r.casesPerOp) + " cases per op")
            << "\n";
  conformance::printReport(r, std::cout);
  std::cout << std::flush;
  if (jsonPath)
    if (Status s = writeOutputFile(*jsonPath, conformance::reportJson(r)); !s)
      return cannotRun(s.message());
  if (junitPath) {
    const std::string name = "tapecheck run: kernels " + r.kernelsSource + " (" + r.kernelsName +
                             " " + r.kernelsVersion + ") on " + r.device + ", seed " +
                             std::to_string(r.seed);
    if (Status s = writeOutputFile(*junitPath, junitXml(name, runJunitSuites(r))); !s)
      return cannotRun(s.message());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cerr << "tapecheck run: finished in " << static_cast<long>(seconds + 0.5) << " s\n";
  return r.failed > 0 ? kExitFailed : kExitPassed;
}

}  // namespace tapecheck::cli
