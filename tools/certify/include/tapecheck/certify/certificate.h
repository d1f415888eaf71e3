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
  std::uint64_t seed = 0;
  std::uint64_t casesPerOp = 0;
};

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

struct PassRecord {
  std::string pass;  // fwd | bwd | vectors | errors
  std::uint64_t cases = 0, failures = 0, mistrusted = 0, skipped = 0;
  double maxUlps = 0, p99Ulps = 0, meanUlps = 0, budgetUlps = 0;
  std::vector<double> errorsUlps;  // every judged error; written only in shard certificates
  std::vector<conformance::CaseExample> examples;  // worst first, kMaxExamplesPerPass at most
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

struct OpRecord {
  std::string op;
  std::vector<PassRecord> passes;
  Verdict verdict = Verdict::Certified;
  std::vector<std::string> reasons;  // op-level reasons (e.g. not tested); pass reasons stay there
};

struct ShardInfo {
  std::uint32_t index = 0, count = 1;
};

// The baseline a certificate was compared with, and the rule used.
struct BaselineInfo {
  std::string sha256;  // of the baseline certificate file
  std::string kernelsName, kernelsVersion, gitRevision, corpusSha256;
  double growthFactor = 0, growthSlackUlps = 0;
};

// One (op, pass) compared with the baseline, for the report.
struct BaselineChange {
  std::string op, pass;
  std::string kind;  // "new-failures" | "error-growth" | "missing" | "new-pass" | "unchanged"
  std::uint64_t baselineFailures = 0, failures = 0;
  double baselineMaxUlps = 0, maxUlps = 0;
  double baselineP99Ulps = 0, p99Ulps = 0;
  bool rejects = false;  // this change alone rejects the version
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
// max/p99/mean are recomputed from the error lists when they are present. Not yet judged.
Certificate certificateFromReport(const conformance::RunReport& report, Identity identity);

// Recomputes max/p99/mean of every pass from its error list and keeps the worst examples.
void finalizePassFigures(std::vector<OpRecord>& ops);

// "2024-05-01T12:00:00Z": now, or SOURCE_DATE_EPOCH when set (reproducible documents).
std::string utcTimestamp();

// Coverage of a partial kernel table: "coverage: 4 of 26 passes provided; not provided:
// layerNorm (fwd, bwd, errors, vectors), ...". "" when every pass is provided.
std::string coverageSummary(const Certificate& cert);

}  // namespace tapecheck::certify
