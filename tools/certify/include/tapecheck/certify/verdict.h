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
//   - max error grown past kGrowthFactor times the baseline's AND by more than kGrowthSlackUlps
//     rejects, even within budget; a non-finite error where the baseline had a finite one too;
//   - a pass the baseline had and this run lacks, or does not provide, rejects (lost coverage).
#pragma once

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
};

// Whether `current` grew past `baseline` under the rule above.
bool errorGrew(double baselineMaxUlps, double currentMaxUlps, double factor, double slackUlps);

// Clears and recomputes every verdict and reason of `cert`. With `baseline` (a full certificate
// whose file hashes to `baselineSha256`), also records cert.baseline and cert.changes.
void judge(Certificate& cert, const JudgeOptions& options, const Certificate* baseline = nullptr,
           const std::string& baselineSha256 = "");

}  // namespace tapecheck::certify
