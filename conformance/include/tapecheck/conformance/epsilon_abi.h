// Kernel ABI v1 carries layerNorm's and batchNorm's epsilon as float, while the oracle uses the
// caller's binary64 value (docs/spec.md#epsilon-binary32). This says, per case, whether that
// rounding can change the result a conforming kernel returns, so that device targets judge only
// the cases the ABI can express (docs/spec.md#epsilon-abi-safe).
#pragma once

#include "tapecheck/conformance/test_case.h"

namespace tapecheck::conformance {

enum class EpsilonAbi {
  Exact,   // every row is unaffected: epsilon is a binary32 number, the row's variance is NaN,
           // or var + epsilon <= 0 both before and after rounding (std = 0 either way)
  Safe,    // otherwise both sums are positive, and std changes by at most 2^-25 relative
  Unsafe,  // some row changes more, or changes class (std = 0 on one side only)
};

// Cases of other operations, and cases whose x cannot be read (the call fails before any
// kernel), are Exact. Each row's variance is computed exactly enough at 128 bits.
EpsilonAbi classifyEpsilonAbi(const TestCase& c);

}  // namespace tapecheck::conformance
