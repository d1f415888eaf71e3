// tapecheck certify: run the golden corpus and the property suite through a kernel table and
// write a certificate (docs/certification.md). Also `tapecheck certify merge` for shards.
#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"
#include "isolation_options.h"
#include "junit_reports.h"
#include "output_paths.h"
#include "progress_options.h"
#include "usage.h"
#include "tapecheck/certify/build_info.h"
#include "tapecheck/certify/certificate.h"
#include "tapecheck/certify/certificate_json.h"
#include "tapecheck/certify/failure_files.h"
#include "tapecheck/certify/html_report.h"
#include "tapecheck/certify/merge.h"
#include "tapecheck/certify/output_files.h"
#include "tapecheck/certify/sha256.h"
#include "tapecheck/certify/verdict.h"
#include "tapecheck/conformance/op_registry.h"
#include "tapecheck/conformance/runner.h"
#include "tapecheck/device/kernel_table.h"

namespace tapecheck::cli {
namespace {

namespace fs = std::filesystem;
using namespace tapecheck::certify;

const char* kCertifySynopsis =
    "usage: tapecheck certify --kernels aten|cuda|PATH.so [--device cpu|cuda]\n"
    "           [--baseline CERT.json [--compare-summaries]] [--cases N] [--seed S]\n"
    "           [--shard I/N] [--jobs N] [--junit FILE] [--case-timeout SECONDS] [--in-process]\n"
    "           --out DIR\n"
    "       tapecheck certify merge [--baseline CERT.json [--compare-summaries]] [--junit FILE]\n"
    "           --out DIR SHARD_DIR...\n";

const char* kCertifyHelp =
    "usage: tapecheck certify --kernels aten|cuda|PATH.so --out DIR [options]\n"
    "       tapecheck certify merge --out DIR [options] SHARD_DIR...\n"
    "\n"
    "Runs the golden-vector corpus and the property suite through a kernel table and writes a\n"
    "certificate (certificate.json, its digest certificate.sha256) and an HTML report\n"
    "(report.html) to DIR: CERTIFIED or REJECTED, with every reason (docs/certification.md).\n"
    "The inputs of failing and grown cases go to DIR/failures. The verdict and its reasons go\n"
    "to stdout; progress goes to stderr.\n"
    "\n"
    "options:\n"
    "  --kernels aten|cuda|PATH.so\n"
    "                        the kernel table to certify (required)\n"
    "  --out DIR             the folder the certificate goes to, created if missing; checked\n"
    "                        before anything runs (required)\n"
    "  --device cpu|cuda     where the kernels run\n"
    "                        (default: cuda when a GPU is visible, else cpu)\n"
    "  --baseline CERT.json  a certificate of an earlier version: its cases are replayed (its\n"
    "                        seed, cases per op and device kind) and compared one by one; new\n"
    "                        failures and error growth reject. A baseline whose cases cannot be\n"
    "                        replayed, or a conflicting --seed, --cases or --device, is exit 2\n"
    "                        (default: none)\n"
    "  --compare-summaries   with --baseline: compare summary figures only, on this run's own\n"
    "                        --seed and --cases (default: the baseline's); the certificate says\n"
    "                        so (default: off)\n"
    "  --cases N             generated cases per op, half as many per program\n"
    "                        (default: the baseline's, else 4000 on cpu, 2000 on cuda)\n"
    "  --seed S              the generator's seed (default: the baseline's, else 0)\n"
    "  --shard I/N           certify only part I of N (a shard certificate, for `certify\n"
    "                        merge`); no --baseline (default: 0/1, everything)\n"
    "  --jobs N              threads evaluating cases; the figures are the same for every N\n"
    "                        (default: one per CPU)\n"
    "  --junit FILE          also write JUnit XML to FILE: the verdict, then a test suite per op\n"
    "                        and a test case per pass, for CI systems (default: none)\n"
    "  --case-timeout SECONDS\n"
    "                        how long one case may run before it counts as hung; a plugin's\n"
    "                        kernels run in worker processes, so a crash or a hang fails its\n"
    "                        case and the run goes on (default: 10 on cpu, 120 on cuda)\n"
    "  --in-process          run a plugin's kernels in tapecheck's own process (for a debugger);\n"
    "                        a kernel that crashes or hangs then ends tapecheck\n"
    "                        (default: worker processes; aten always runs in process)\n"
    "  -h, --help            print this help and exit\n"
    "\n"
    "certify merge combines the shard certificates in SHARD_DIR... (every shard of one run) into\n"
    "the certificate of the whole run; it takes --out, --baseline, --compare-summaries and\n"
    "--junit as above (give the shards the baseline's --seed and --cases).\n"
    "\n"
    "exit status: 0 certified, 1 rejected, 2 usage error, unusable kernels or unreadable input\n"
    "(message on stderr, nothing written)\n";

int usageError(const std::string& message) {
  return cli::usageError("tapecheck certify", message, kCertifySynopsis);
}

int cannotCertify(const std::string& message) {
  std::cerr << "tapecheck certify: " << message << "\n";
  return kExitUsage;
}

struct Baseline {
  Certificate cert;
  std::string sha256;  // of the file's bytes
};

Result<Baseline> loadBaseline(const std::string& path) {
  Result<std::string> bytes = readFileText(path);
  if (!bytes) return Error{"baseline: " + bytes.message()};
  nlohmann::json doc = nlohmann::json::parse(bytes.value(), nullptr, false);
  if (doc.is_discarded()) return Error{"baseline " + path + ": not valid JSON"};
  Result<Certificate> cert = certificateFromJson(doc);
  if (!cert) return Error{"baseline " + path + ": " + cert.message()};
  if (cert.value().shard)
    return Error{"baseline " + path + " is a shard certificate; merge the shards first"};
  return Baseline{std::move(cert).value(), sha256Hex(bytes.value())};
}

// Every subject the run must cover: the docs/spec.md operations and the chained tape programs.
std::vector<std::string> registryOps() {
  std::vector<std::string> names;
  for (const conformance::OpInfo& op : conformance::opRegistry()) names.push_back(op.name);
  for (const conformance::OpInfo& op : conformance::programRegistry()) names.push_back(op.name);
  return names;
}

// The file that holds the kernel table: the plugin, libtapecheck-cuda.so, or (for the built-in
// ATen table) the tapecheck executable itself.
Result<std::string> kernelsFile(const device::KernelTable& kernels) {
  std::error_code ec;
  if (kernels.source == "aten") {
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return Error{"cannot locate the tapecheck executable: " + ec.message()};
    return self.string();
  }
  Dl_info info{};
  if (kernels.table && dladdr(kernels.table, &info) != 0 && info.dli_fname &&
      info.dli_fname[0] != '\0') {
    const fs::path file = fs::canonical(info.dli_fname, ec);
    if (!ec) return file.string();
  }
  if (kernels.source != "cuda") {
    const fs::path file = fs::canonical(kernels.source, ec);
    if (!ec) return file.string();
  }
  return Error{"cannot locate the file holding the kernel table '" + kernels.source + "'"};
}

// How a run is compared with its baseline: case by case, or (asked for) by summaries.
struct Comparison {
  const Baseline* baseline = nullptr;
  bool summaries = false;  // --compare-summaries
};

// "cannot compare ... case by case" with every reason and what to do instead (exit 2).
int cannotPair(const std::vector<std::string>& problems) {
  std::string text = "the baseline's cases cannot be compared one by one with this run's:";
  for (const std::string& p : problems) text += "\n  - " + p;
  text += "\nleave out --seed, --cases and --device to replay the baseline's cases, or pass "
          "--compare-summaries to compare summary figures only (the certificate records it)";
  return cannotCertify(text);
}

// Judges `cert`, against the baseline when there is one (`drawn`: the seed and device its
// cases were drawn with, to name their shapes). When the baseline's cases cannot be paired with
// the run's and summaries were not asked for, nothing is judged and the reasons are returned.
std::vector<std::string> judgeAgainst(Certificate& cert, const Comparison& comparison,
                                      const conformance::RunOptions& drawn) {
  JudgeOptions options;
  options.expectedOps = registryOps();
  options.caseShape = [drawn](const std::string& op, std::uint64_t index) {
    return conformance::caseShape(drawn, op, index);
  };
  if (comparison.baseline) {
    const std::vector<std::string> problems = pairingProblems(comparison.baseline->cert, cert);
    if (!comparison.summaries && !problems.empty()) return problems;
    options.comparison = comparison.summaries ? kCompareSummaries : kCompareCases;
    options.notPaired = problems;
  }
  judge(cert, options, comparison.baseline ? &comparison.baseline->cert : nullptr,
        comparison.baseline ? comparison.baseline->sha256 : "");
  return {};
}

// Takes the failure files of `from` (a folder the run wrote, or a shard's failures/) into
// DIR/failures and points the certificate at them there.
Status takeFailureFiles(Certificate& cert, const std::string& from, const std::string& outDir,
                        bool anyFolder) {
  std::error_code ec;
  const fs::path to = fs::absolute(fs::path(outDir) / kFailuresDir, ec);
  if (ec) return Error{"cannot resolve " + outDir + ": " + ec.message()};
  Result<std::vector<std::string>> names = copyFailureFiles(from, to.string());
  if (!names) return names.error();
  relocateFailureFiles(cert, anyFolder ? std::string() : from, to.string(), names.value());
  return okStatus();
}

int finish(Certificate& cert, const std::string& outDir,
           const std::optional<std::string>& junitPath) {
  const std::string text = certificateText(cert);
  const std::string html = renderHtmlReport(cert);
  if (Status written = writeCertificateDir(outDir, text, html); !written)
    return cannotCertify(written.message());
  const Identity& id = cert.identity;
  if (junitPath) {
    const std::string name =
        "tapecheck certify: " + id.kernelsName + " " + id.kernelsVersion + " on " + id.device;
    if (Status s = writeOutputFile(*junitPath, junitXml(name, certificateJunitSuites(cert))); !s)
      return cannotCertify(s.message());
  }
  std::cout << "tapecheck certify: "
            << (cert.verdict == Verdict::Certified ? "CERTIFIED" : "REJECTED") << " "
            << id.kernelsName << " " << id.kernelsVersion;
  if (cert.shard) std::cout << " (shard " << cert.shard->index << "/" << cert.shard->count << ")";
  if (!cert.reasons.empty())
    std::cout << ": " << cert.reasons.size()
              << (cert.reasons.size() == 1 ? " reason" : " reasons");
  std::cout << "\n";
  for (const std::string& r : cert.reasons) std::cout << "  " << r << "\n";
  if (const std::string coverage = coverageSummary(cert); !coverage.empty())
    std::cout << coverage << "\n";
  const fs::path dir(outDir);
  std::cout << "wrote " << (dir / kCertificateFile).string() << ", "
            << (dir / kDigestFile).string() << ", " << (dir / kReportFile).string() << "\n";
  return cert.verdict == Verdict::Certified ? kExitPassed : kExitFailed;
}

// The certificate folder and the --junit file are proven writable before anything runs.
Status probeOutputs(const std::string& outDir, const std::optional<std::string>& junitPath) {
  if (Status s = probeOutputDir("--out", outDir); !s) return s;
  if (junitPath) return probeOutputFile("--junit", *junitPath);
  return okStatus();
}

// A folder the run wrote its failure files to, removed when the command ends (its files are
// copied into the certificate's folder first).
struct ScratchFolders {
  std::vector<std::string> paths;
  ~ScratchFolders() {
    std::error_code ec;
    for (const std::string& p : paths) fs::remove_all(p, ec);
  }
  void add(const std::string& p) {
    if (!p.empty() && std::find(paths.begin(), paths.end(), p) == paths.end()) paths.push_back(p);
  }
};

// The worst case of every shape class whose error grew, explained as the runner explains a
// failing group (re-run, written out, shrunk while its error stays past the growth bound); the
// examples join their pass's.
Status explainGrowth(Certificate& cert, conformance::RunOptions run, ScratchFolders& scratch) {
  std::vector<conformance::CaseToExplain> requests;
  std::vector<PassRecord*> passes;
  for (const BaselineChange& c : cert.changes)
    for (const ClassGrowth& g : c.grown) {
      if (c.pass != "fwd" && c.pass != "bwd") continue;
      conformance::CaseToExplain q;
      q.op = c.op;
      q.pass = c.pass;
      q.shapeClass = g.shapeClass;
      q.index = g.worstCase;
      q.aboveUlps = g.growthBoundUlps;
      q.label = "error growth";
      requests.push_back(q);
      PassRecord* p = nullptr;
      for (OpRecord& op : cert.ops)
        if (op.op == c.op)
          for (PassRecord& r : op.passes)
            if (r.pass == c.pass) p = &r;
      passes.push_back(p);
    }
  if (requests.empty()) return okStatus();
  run.progressLabel = "tapecheck certify";
  Result<conformance::ExplainedCases> explained =
      conformance::explainCases(run, requests, std::cerr);
  if (!explained) return explained.error();
  scratch.add(explained.value().valuesDir);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (!passes[i]) continue;
    // Growth examples first: they are why the pass is notable, even next to worse failures.
    std::vector<conformance::CaseExample> examples = explained.value().examples[i];
    sortWorstFirst(passes[i]->examples);
    examples.insert(examples.end(), passes[i]->examples.begin(), passes[i]->examples.end());
    if (examples.size() > kMaxExamplesPerPass) examples.resize(kMaxExamplesPerPass);
    passes[i]->examples = std::move(examples);
  }
  return okStatus();
}

int certifyRun(const Words& args) {
  const ArgSpec spec{
      {"--kernels", "--device", "--baseline", "--cases", "--seed", "--shard", "--out", "--jobs",
       "--junit", kCaseTimeoutOption},
      {kInProcessOption, "--compare-summaries"}};
  Result<ParsedArgs> parsed = parseArgs(args, spec);
  if (!parsed) return usageError(parsed.message());
  const ParsedArgs& a = parsed.value();
  if (!a.positional.empty()) return usageError("unexpected argument '" + a.positional[0] + "'");
  if (!a.get("--kernels")) return usageError("--kernels is required");
  if (!a.get("--out")) return usageError("--out is required");
  const std::string outDir = *a.get("--out");

  std::optional<device::DeviceKind> explicitDevice;
  if (auto text = a.get("--device")) {
    Result<device::DeviceKind> d = device::parseDevice(*text);
    if (!d) return usageError(d.message());
    explicitDevice = d.value();
  }
  conformance::RunOptions run;
  run.kernels = *a.get("--kernels");
  std::optional<std::uint64_t> explicitCases, explicitSeed;
  if (auto text = a.get("--cases")) {
    Result<std::uint64_t> n = parseUnsigned("--cases", *text);
    if (!n) return usageError(n.message());
    explicitCases = n.value();
  }
  if (auto text = a.get("--seed")) {
    Result<std::uint64_t> n = parseUnsigned("--seed", *text);
    if (!n) return usageError(n.message());
    explicitSeed = n.value();
  }
  if (auto text = a.get("--jobs")) {
    Result<unsigned> n = parseJobs(*text);
    if (!n) return usageError(n.message());
    run.jobs = n.value();
  }
  if (Status isolation = applyIsolationOptions(a, run); !isolation)
    return usageError(isolation.message());
  std::optional<ShardInfo> shard;
  if (auto text = a.get("--shard")) {
    Result<ShardOption> s = parseShard(*text);
    if (!s) return usageError(s.message());
    shard = ShardInfo{s.value().index, s.value().count};
    run.shardIndex = shard->index;
    run.shardCount = shard->count;
  }
  const bool summaries = a.has("--compare-summaries");
  std::optional<Baseline> baseline;
  if (auto path = a.get("--baseline")) {
    if (shard) return usageError("--baseline applies to a whole run: give it to `certify merge`");
    Result<Baseline> b = loadBaseline(*path);
    if (!b) return cannotCertify(b.message());
    baseline = std::move(b).value();
  } else if (summaries) {
    return usageError("--compare-summaries needs --baseline");
  }
  const std::optional<std::string> junitPath = a.get("--junit");
  if (Status out = probeOutputs(outDir, junitPath); !out) return cannotCertify(out.message());

  Identity identity;
  identity.harnessVersion = harnessVersion();
  identity.gitRevision = harnessGitRevision();
  const std::string corpusDir = goldenCorpusDir();
  Result<CorpusDigest> corpus = hashCorpus(corpusDir);
  if (!corpus) return cannotCertify(corpus.message());
  identity.corpusSha256 = corpus.value().sha256;
  identity.corpusFiles = corpus.value().files;
  run.vectorPaths = {corpusDir};

  // With a baseline, its cases are the ones to run: its seed, cases per op and device kind.
  device::DeviceKind deviceKind = explicitDevice.value_or(device::defaultDevice());
  run.seed = explicitSeed.value_or(0);
  run.casesPerOp = explicitCases.value_or(0);
  if (baseline) {
    const Identity& b = baseline->cert.identity;
    std::vector<std::string> problems =
        replayProblems(baseline->cert, identity.corpusSha256, registryOps());
    if (explicitSeed && *explicitSeed != b.seed)
      problems.push_back("--seed " + std::to_string(*explicitSeed) + " asks for other cases " +
                         "than the baseline's seed " + std::to_string(b.seed));
    if (explicitCases && *explicitCases != b.casesPerOp)
      problems.push_back("--cases " + std::to_string(*explicitCases) + " asks for other cases " +
                         "than the baseline's " + std::to_string(b.casesPerOp) + " per op");
    if (explicitDevice && device::deviceName(*explicitDevice) != b.deviceKind)
      problems.push_back(std::string("--device ") + device::deviceName(*explicitDevice) +
                         " draws other cases than the baseline's device kind " +
                         (b.deviceKind.empty() ? std::string("(unknown)") : b.deviceKind));
    if (!summaries && !problems.empty()) return cannotPair(problems);
    if (!explicitSeed) run.seed = b.seed;
    if (!explicitCases) run.casesPerOp = b.casesPerOp;
    if (!explicitDevice && (b.deviceKind == "cpu" || b.deviceKind == "cuda"))
      deviceKind = device::parseDevice(b.deviceKind).value();
  }
  run.device = deviceKind;

  // Unusable kernels are refused before anything runs (exit 2, nothing written).
  Result<device::KernelTable> kernels = device::loadKernelTable(run.kernels, deviceKind);
  if (!kernels)
    return cannotCertify("unusable kernels '" + run.kernels + "': " + kernels.message());
  Result<std::string> file = kernelsFile(kernels.value());
  if (!file) return cannotCertify(file.message());
  Result<std::string> fileSha = sha256File(file.value());
  if (!fileSha) return cannotCertify(fileSha.message());
  identity.kernelsFile = file.value();
  identity.kernelsSha256 = fileSha.value();

  showProgressAs("tapecheck certify", run);
  ScratchFolders scratch;
  Result<conformance::RunReport> report = conformance::runConformance(run, std::cerr);
  if (!report) return cannotCertify(report.message());
  scratch.add(report.value().valuesDir);
  identity.deviceKind = device::deviceName(deviceKind);
  Certificate cert = certificateFromReport(report.value(), identity);
  cert.shard = shard;
  const std::vector<std::string> unpaired =
      judgeAgainst(cert, Comparison{baseline ? &*baseline : nullptr, summaries}, run);
  if (!unpaired.empty()) return cannotPair(unpaired);
  // The growth examples' files go beside the run's failure files.
  conformance::RunOptions explain = run;
  explain.valuesDir = report.value().valuesDir;
  if (Status s = explainGrowth(cert, explain, scratch); !s) return cannotCertify(s.message());
  for (const std::string& folder : scratch.paths)
    if (Status s = takeFailureFiles(cert, folder, outDir, false); !s)
      return cannotCertify(s.message());
  return finish(cert, outDir, junitPath);
}

Result<Certificate> readShard(const std::string& path) {
  std::error_code ec;
  const fs::path given(path);
  const fs::path file = fs::is_directory(given, ec) ? given / kCertificateFile : given;
  TAPECHECK_TRY(bytes, readFileText(file.string()));
  // A detached digest next to it must agree: a shard altered since it was written is refused.
  const fs::path digest = file.parent_path() / kDigestFile;
  if (file.filename() == kCertificateFile && fs::exists(digest, ec)) {
    TAPECHECK_TRY(expected, readFileText(digest.string()));
    if (expected != detachedDigestText(bytes))
      return Error{file.string() + " does not match " + digest.string()};
  }
  nlohmann::json doc = nlohmann::json::parse(bytes, nullptr, false);
  if (doc.is_discarded()) return Error{file.string() + ": not valid JSON"};
  Result<Certificate> cert = certificateFromJson(doc);
  if (!cert) return Error{file.string() + ": " + cert.message()};
  if (!cert.value().shard) return Error{file.string() + " is not a shard certificate"};
  return cert;
}

int certifyMerge(const Words& args) {
  Result<ParsedArgs> parsed =
      parseArgs(args, ArgSpec{{"--baseline", "--out", "--junit"}, {"--compare-summaries"}});
  if (!parsed) return usageError(parsed.message());
  const ParsedArgs& a = parsed.value();
  if (!a.get("--out")) return usageError("--out is required");
  if (a.positional.empty()) return usageError("merge needs the shard folders to combine");
  const std::string outDir = *a.get("--out");
  const bool summaries = a.has("--compare-summaries");
  std::optional<Baseline> baseline;
  if (auto path = a.get("--baseline")) {
    Result<Baseline> b = loadBaseline(*path);
    if (!b) return cannotCertify(b.message());
    baseline = std::move(b).value();
  } else if (summaries) {
    return usageError("--compare-summaries needs --baseline");
  }
  const std::optional<std::string> junitPath = a.get("--junit");
  if (Status out = probeOutputs(outDir, junitPath); !out) return cannotCertify(out.message());
  std::vector<Certificate> shards;
  for (const std::string& path : a.positional) {
    Result<Certificate> shard = readShard(path);
    if (!shard) return cannotCertify(shard.message());
    shards.push_back(std::move(shard).value());
  }
  Result<Certificate> merged = mergeShards(shards);
  if (!merged) return cannotCertify(merged.message());
  Certificate& cert = merged.value();
  conformance::RunOptions drawn;
  drawn.seed = cert.identity.seed;
  drawn.device =
      cert.identity.deviceKind == "cuda" ? device::DeviceKind::Cuda : device::DeviceKind::Cpu;
  const std::vector<std::string> unpaired =
      judgeAgainst(cert, Comparison{baseline ? &*baseline : nullptr, summaries}, drawn);
  if (!unpaired.empty()) return cannotPair(unpaired);
  for (const std::string& path : a.positional) {
    std::error_code ec;
    const fs::path dir = fs::is_directory(path, ec) ? fs::path(path) : fs::path(path).parent_path();
    if (Status s = takeFailureFiles(cert, (dir / kFailuresDir).string(), outDir, true); !s)
      return cannotCertify(s.message());
  }
  return finish(cert, outDir, junitPath);
}

}  // namespace

int certifyCommand(const Words& args) {
  if (asksForHelp(args)) return printHelp(kCertifyHelp);
  if (!args.empty() && args[0] == "merge") return certifyMerge(Words(args.begin() + 1, args.end()));
  return certifyRun(args);
}

}  // namespace tapecheck::cli
