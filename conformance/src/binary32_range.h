// Failures that binary32 itself cannot avoid: a pass whose only elements beyond budget are
// non-finite mismatches against the exact answer, at which the spec's own formulas evaluated in
// binary32 (the reference tape at binary32) give what the tape under test gives.
//
// The exact answer can rest on magnitudes outside binary32's range. distill with a student
// logit of -inf and a teacher logit 124 below its slice's maximum: the teacher's probability
// there is e^-124 / 2, about 1e-54, so the term p * log q is -inf and the exact loss +inf; in
// binary32 that probability is 0, and 0 * -inf is NaN. No binary32 evaluation of the spec's
// formulas gives +inf, so the kernel's NaN is not evidence of a fault, and agreeing with binary32
// is not evidence of correctness either: such a pass is MISTRUSTED (reported, never passed),
// with the element and the three values in its reason.
#pragma once

#include "tapecheck/conformance/judge.h"

namespace tapecheck::conformance {

// Turns each FAILED pass of `v` (judged against `exact`) into MISTRUSTED when binary32 explains
// it as above; every other verdict is left as it is. Returns whether any pass changed.
bool excuseBinary32Range(const OpInfo& op, const TestCase& c, const Outcome& actual,
                         const Outcome& exact, const Outcome& binary32, CaseVerdict& v);

}  // namespace tapecheck::conformance
