// The certificate: what `tapecheck certify` states about one kernel version, as data. It is built
// from a conformance RunReport (or merged from shard certificates), judged (verdict.h), written
// as JSON (certificate_json.h, format "tapecheck-certificate-v1") and as HTML (html_report.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tapecheck/conformance/run_report.h"

namespace tapecheck::certify {

inline constexpr const char* kCertificateFormat = "tapecheck-certificate-v1";
inline constexpr std::size_t kMaxExamplesPerPass = 5;

// NotProvided: an op or pass the kernel table does not provide (a null entry point, DESIGN.md
// section 3): not run, not certified, no reason to reject what is provided. Only ops and passes
// have it; a certificate is certified or rejected.
enum class Verdict { Certified, Rejected, NotProvided };
const char* verdictWord(Verdict v);  // "certified" | "rejected" | "not provided"

// What was certified and with what: everything needed to say "this exact thing was tested".
struct Identity {
  std::string kernelsName, kernelsVersion, kernelsSource;  // table name/version; aten|cuda|path
  std::string kernelsSha256;        // SHA-256 of the file holding the table
  std::string kernelsFile;          // that file: the plugin, libtapecheck-cuda.so, or tapecheck
  std::string harnessVersion;       // CMake PROJECT_VERSION
  std::string gitRevision;          // at configure time; "unknown" outside a git checkout
  std::string corpusSha256;         // see corpus.h
  std::uint64_t corpusFiles = 0;
  std::string device;
  std::string deviceKind;           // "cpu" | "cuda": the generator draws per kind; "" unknown
  std::uint64_t seed = 0;
  std::uint64_t casesPerOp = 0;
};

// "cpu" or "cuda" from a device line ("cuda:0 (NVIDIA H200, ...)", "cpu (LibTorch ...)"), for
// certificates that predate Identity::deviceKind; "" when the line names neither.
std::string deviceKindOf(const std::string& deviceLine);

struct Totals {
  std::uint64_t tests = 0, passed = 0, failed = 0, mistrusted = 0, skipped = 0;
};

// Error statistics of one pass; non-finite errors (a NaN where a number was due) are +inf.
struct ErrorSummary {
  double maxUlps = 0, p99Ulps = 0, meanUlps = 0;
};
// max, nearest-rank 99th percentile and mean (summed in ascending order, so the result does not
// depend on the order of the list: a merged list gives the same figures as an unsharded run).
ErrorSummary summarizeErrors(std::vector<double> errorsUlps);

// Per-case status letters of PassRecord::caseStatus.
inline constexpr char kCasePassed = 'P', kCaseFailed = 'F', kCaseMistrusted = 'M',
                      kCaseSkipped = 'S', kCaseNotJudged = '-';

struct PassRecord {
  std::string pass;  // fwd | bwd | vectors | errors
  std::uint64_t cases = 0, failures = 0, mistrusted = 0, skipped = 0;
  double maxUlps = 0, p99Ulps = 0, meanUlps = 0, budgetUlps = 0;
  std::vector<double> errorsUlps;  // every judged error; written only in shard certificates
  std::vector<double> failedErrorsUlps;  // the failing cases' errors; likewise
  // Per case index of the op (OpRecord::caseLog), for fwd, bwd and errors: the case's error in
  // this pass and its status letter (kCaseNotJudged: no verdict in this pass, or not run here).
  // Empty for the vectors pass and for certificates without case logs.
  std::vector<double> caseUlps;
  std::string caseStatus;
  std::vector<conformance::CaseExample> examples;  // worst first, kMaxExamplesPerPass at most
  // The golden vectors: the vector with the largest error, failing or not, for growth reasons
  // (shape "tcId N", valuesFile its file). Passes with per-case errors name theirs from those.
  std::optional<conformance::CaseExample> worst;
  Verdict verdict = Verdict::Certified;
  std::vector<std::string> reasons;  // why rejected, each a full sentence naming op and pass
  // Not empty: the entry points the pass needs that the kernels lack; it is NOT PROVIDED.
  std::vector<std::string> missingEntries;
  // Failures where the kernels faulted (returned nonzero, threw, wrote outside their outputs,
  // crashed or hung), and the first of them, e.g. "layer_norm_fwd returned 3 on [4, 7] (case 12)".
  std::uint64_t faults = 0;
  std::string firstFault;
  bool provided() const { return missingEntries.empty(); }
};

// The generated cases of one op as a run drew them: what replaying them and pairing them one
// by one with another run's needs.
struct CaseLog {
  std::uint64_t cases = 0;                    // case indices 0 .. cases - 1
  // SHA-256 over every case's fingerprint (16 hex digits and a newline each, in index order):
  // two runs drew exactly the same cases when their digests agree. "" unless every case ran.
  std::string digest;
  std::vector<std::string> shapeClasses;      // the classes the cases fall in, first use first
  std::vector<std::int32_t> caseShapeClass;   // per case index, into shapeClasses; -1: not run here
  std::vector<std::uint64_t> fingerprints;    // per case index (written in shards, for merging)
};

struct OpRecord {
  std::string op;
  std::vector<PassRecord> passes;
  std::optional<CaseLog> caseLog;  // absent for certificates written before case logs existed
  Verdict verdict = Verdict::Certified;
  std::vector<std::string> reasons;  // op-level reasons (e.g. not tested); pass reasons stay there
};

struct ShardInfo {
  std::uint32_t index = 0, count = 1;
};

// How a run was compared with its baseline.
inline constexpr const char* kCompareCases = "cases";          // the same cases, one by one
inline constexpr const char* kCompareSummaries = "summaries";  // summary figures only

// The baseline a certificate was compared with, and the rule used.
struct BaselineInfo {
  std::string sha256;  // of the baseline certificate file
  std::string kernelsName, kernelsVersion, gitRevision, corpusSha256;
  double growthFactor = 0, growthSlackUlps = 0;
  // What the baseline ran (its cases are replayed from these) and how the two were compared.
  std::string device, deviceKind;
  std::uint64_t seed = 0, casesPerOp = 0;
  std::string comparison;               // kCompareCases | kCompareSummaries ("" when unknown)
  std::vector<std::string> notPaired;   // summaries: why the cases could not be paired
};

// A shape class of one (op, pass) whose max error grew over the same cases.
struct ClassGrowth {
  std::string shapeClass;
  std::uint64_t cases = 0;                  // the class's cases judged in both runs
  double baselineMaxUlps = 0, maxUlps = 0;  // over those cases
  std::uint64_t worstCase = 0;              // the case of maxUlps
  double worstCaseBaselineUlps = 0;         // the baseline's error on that same case
  std::string shape;                        // of that case, "[3,1025]"
  std::string reproducer;                   // the command line that reruns it
  double growthBoundUlps = 0;               // errors above this count as growth in the class
};

// One (op, pass) compared with the baseline, for the report.
struct BaselineChange {
  std::string op, pass;
  std::string kind;  // "new-failures" | "error-growth" | "missing" | "new-pass" | "unchanged"
  std::uint64_t baselineFailures = 0, failures = 0;
  double baselineMaxUlps = 0, maxUlps = 0;
  double baselineP99Ulps = 0, p99Ulps = 0;
  bool rejects = false;  // this change alone rejects the version
  std::uint64_t pairedCases = 0;    // cases compared one by one (comparison "cases")
  std::vector<ClassGrowth> grown;   // error-growth: every shape class that grew
};

struct Certificate {
  Identity identity;
  Totals totals;
  std::vector<OpRecord> ops;
  std::optional<ShardInfo> shard;    // set: a shard certificate (merge it; never final)
  std::uint32_t mergedShards = 0;    // > 0: merged from that many shard certificates
  std::string created;               // UTC, ISO 8601
  std::optional<BaselineInfo> baseline;
  std::vector<BaselineChange> changes;
  Verdict verdict = Verdict::Certified;
  std::vector<std::string> reasons;  // EVERY reason of every op and pass, and the baseline's

  const OpRecord* findOp(const std::string& name) const;
  const PassRecord* findPass(const std::string& op, const std::string& pass) const;
};

// Groups the report's passes by op (in report order), copies the counts and keeps the error lists;
// max/p99/mean are recomputed from the error lists when they are present; each op that ran
// generated cases gets its case log and per-case results. Not yet judged.
Certificate certificateFromReport(const conformance::RunReport& report, Identity identity);

// Fills log.digest when every case of the log ran (from log.fingerprints); else clears it.
void computeCaseDigest(CaseLog& log);

// A fingerprint as the certificate writes it: 16 lowercase hex digits.
std::string fingerprintText(std::uint64_t fingerprint);

// Recomputes max/p99/mean of every pass from its error list and keeps the worst examples.
void finalizePassFigures(std::vector<OpRecord>& ops);

// Worst error first (a NaN error counts as the worst); equal errors keep their order.
void sortWorstFirst(std::vector<conformance::CaseExample>& examples);

// "2024-05-01T12:00:00Z": now, or SOURCE_DATE_EPOCH when set (reproducible documents).
std::string utcTimestamp();

// Coverage of a partial kernel table: "coverage: 4 of 26 passes provided; not provided:
// layerNorm (fwd, bwd, errors, vectors), ...". "" when every pass is provided.
std::string coverageSummary(const Certificate& cert);

}  // namespace tapecheck::certify
