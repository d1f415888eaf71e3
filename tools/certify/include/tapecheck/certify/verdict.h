// The verdict rules (docs/certification.md, "Verdict"). A version is certified when no rule gives
// a reason to reject it; every reason found is recorded, not just the first.
//
// Per (op, pass):
//   - a pass the kernels do not provide (missing entry points) is NOT PROVIDED: not judged, no
//     reason; an op whose every pass is not provided is NOT PROVIDED too. A partial table is
//     certified for what it provides.
//   - any failing case rejects ("N of M cases failed"), naming the first kernel fault when the
//     kernels faulted (returned nonzero, crashed, ...);
//   - with no failing case counted, a max error above a nonzero budget rejects (a budget of 0
//     means the pass is judged by its own exact criteria, which the failure count reflects);
//   - more than kMaxMistrustedFraction of the cases mistrusted rejects (they are no evidence);
//   - cases but no trusted passing case at all rejects (nothing was shown).
// Per op: every op the registry lists must have been run, i.e. have a pass with cases (shards
// excepted: they hold a part), unless the kernels do not provide it.
// With a baseline, per (op, pass) of the baseline:
//   - error growth rejects, even within budget: a max error more than kGrowthFactor times the
//     baseline's AND more than kGrowthSlackUlps above it (a non-finite error where the baseline
//     had a finite one too). Compared case by case (comparison "cases": the run replayed the
//     baseline's cases, pairingProblems() is empty), the rule applies to each shape class over
//     the same cases, and each reason names the class's worst case, its shape and the command
//     that reruns it; compared by summaries, to the pass's max error;
//   - a pass the baseline had and this run lacks, or does not provide, rejects (lost coverage).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tapecheck/certify/certificate.h"

namespace tapecheck::certify {

inline constexpr double kMaxMistrustedFraction = 0.5;
inline constexpr double kGrowthFactor = 2.0;
inline constexpr double kGrowthSlackUlps = 1.0;

struct JudgeOptions {
  std::vector<std::string> expectedOps;  // the registry's ops; empty: no coverage rule
  double maxMistrustedFraction = kMaxMistrustedFraction;
  double growthFactor = kGrowthFactor;
  double growthSlackUlps = kGrowthSlackUlps;
  // How a baseline is compared: kCompareCases pairs each case with the baseline's same case
  // (passes without per-case data, such as the golden vectors of the same corpus, by their
  // summaries); kCompareSummaries compares summary figures only, for the reasons in notPaired.
  std::string comparison = kCompareCases;
  std::vector<std::string> notPaired{};
  // The shape of case `index` of `op` for reasons ("[3,1025]"); unset: reasons give the index.
  std::function<std::string(const std::string& op, std::uint64_t index)> caseShape{};
};

// Whether `current` grew past `baseline` under the rule above.
bool errorGrew(double baselineMaxUlps, double currentMaxUlps, double factor, double slackUlps);

// The smallest error that grows past `baselineMaxUlps`: max(factor x it, it + slack).
double growthBound(double baselineMaxUlps, double factor, double slackUlps);

// What can be told before a run: why the baseline's cases cannot be replayed by a run of this
// harness with this corpus and these ops (each a sentence; empty when they can). Its seed, cases
// per op and device kind are taken from the baseline by the caller.
std::vector<std::string> replayProblems(const Certificate& baseline,
                                        const std::string& corpusSha256,
                                        const std::vector<std::string>& knownOps);

// Why `current`'s cases cannot be paired one by one with `baseline`'s: no case logs, another
// corpus, seed, case count or device kind, an op of the baseline missing, or cases that differ
// (their digests). Empty when every op of the baseline replayed exactly its cases.
std::vector<std::string> pairingProblems(const Certificate& baseline, const Certificate& current);

// The command line that reruns case `index` of `op` as `id`'s run drew it.
std::string reproduceCommand(const Identity& id, const std::string& op, std::uint64_t index);

// Clears and recomputes every verdict and reason of `cert`. With `baseline` (a full certificate
// whose file hashes to `baselineSha256`), also records cert.baseline and cert.changes.
void judge(Certificate& cert, const JudgeOptions& options, const Certificate* baseline = nullptr,
           const std::string& baselineSha256 = "");

}  // namespace tapecheck::certify
