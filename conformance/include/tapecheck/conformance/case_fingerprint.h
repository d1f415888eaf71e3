// A case's fingerprint: 64 bits that change whenever anything the tapes are given changes (the
// op, every leaf's shape, values and requiresGrad, the call, every attribute, the upstream
// gradient). A certificate keeps a digest of its cases' fingerprints, so a later run can tell
// whether it replayed exactly the same cases (same seed and case count, and a generator that
// still draws the same numbers) before it compares their errors one by one.
#pragma once

#include <cstdint>

#include "tapecheck/conformance/test_case.h"

namespace tapecheck::conformance {

std::uint64_t caseFingerprint(const TestCase& c);

}  // namespace tapecheck::conformance
