// Judging a pullback on its own. A backward entry reads what its forward saved (softmax's y,
// layerNorm's xhat and invStd, crossEntropy's logp); when the forward is wrong, a correct
// pullback gives wrong gradients too and the one bug would be reported twice, the second time as
// a backward failure that sends its reader after a pullback that is right. So a case whose
// forward or backward failed is evaluated a second time on the table with a reference forward
// (device/reference_forward.h), and the two verdicts are combined:
//
//   - the forward failed: the forward failure is reported; the backward is judged on the
//     isolated evaluation alone (it passes when only the forward is wrong);
//   - the forward passed, the backward failed on both evaluations: a backward failure;
//   - the forward passed, the backward failed only on the kernel's own forward outputs: the
//     saved outputs that the forward's value does not show (xhat, invStd, logp) are wrong, so
//     the forward fails, naming the pullback's error, and the backward is judged isolated.
//
// A case where neither failed is never evaluated twice: the verdicts of correct tables do not
// change.
#pragma once

#include "tapecheck/conformance/judge.h"

namespace tapecheck::conformance {

// Whether `own` (the verdict on the kernel's own forward and backward) needs the isolated
// evaluation: a case with a backward whose forward or backward failed.
bool needsIsolatedPullback(const CaseVerdict& own);

// The combined verdict of the rules above. `isolated` is the verdict of the same case on the
// table with the reference forward; an isolated evaluation that returned an error counts as a
// failing backward with that error as its reason.
CaseVerdict isolatePullback(CaseVerdict own, const CaseVerdict& isolated);

}  // namespace tapecheck::conformance
