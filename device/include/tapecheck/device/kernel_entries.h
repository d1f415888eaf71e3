// The entry points of kernel ABI v1 by name: which of them a table provides (a null entry point
// means "not provided", DESIGN.md section 3) and which of them each docs/spec.md operation calls.
// The conformance run certifies an operation's forward pass when the table provides its forward
// entries, and its backward pass when it provides those and the backward entries too.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tapecheck/kernels_v1.h"

namespace tapecheck::device {

// Every entry point of kernel ABI v1, in the struct's field order.
const std::vector<std::string>& kernelEntryNames();

// Whether `t` provides `entry` (a non-null function pointer); an unknown name is not provided.
bool provides(const tapecheck_kernels_v1& t, std::string_view entry);

// Whether `t` provides at least one entry point.
bool providesAny(const tapecheck_kernels_v1& t);

// The entry points a docs/spec.md operation calls: `fwd` for its value, `bwd` for its gradient (on top
// of `fwd`, which computes what the backward pass reads). An unknown name calls none.
struct OpEntries {
  std::vector<std::string> fwd, bwd;
};
OpEntries entriesOf(std::string_view specOp);

// The entries of `needed` that `t` does not provide, in order, each once.
std::vector<std::string> missingEntries(const tapecheck_kernels_v1& t,
                                        const std::vector<std::string>& needed);

// Whether an entry point belongs to a backward pass ("*_bwd").
bool isBackwardEntry(std::string_view entry);

}  // namespace tapecheck::device
