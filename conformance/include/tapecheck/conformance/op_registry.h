// The op registry, in the spirit of PyTorch's OpInfo: one entry per docs/spec.md operation, the single
// place that says how the operation is called, how its cases are generated, which outputs and
// gradients are compared, at which scale (floors) and within which budget, which inputs are
// known to be hard for kernels, and which golden vectors it has. Each entry is assembled in the
// op's own file (src/ops/<op>.cpp) and listed in src/ops/registry.cpp. Golden-vector checks and
// generation, property runs and certification all iterate this list; nothing else lists the
// operations.
//
// Beside the operations there are a few chained tape programs (programRegistry(): an op feeding
// another op and a loss, with a leaf used twice) so that gradient accumulation across nodes is
// exercised. They are described by the same OpInfo so the runner treats both alike.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tapecheck/conformance/any_tape.h"
#include "tapecheck/conformance/budgets.h"
#include "tapecheck/conformance/case_params.h"
#include "tapecheck/conformance/test_case.h"
#include "tapecheck/vectors/corpus.h"

namespace tapecheck::conformance {

// Per-element floors for every compared output of a case: floors[0] for the value, floors[1 + i]
// for the gradient of leaf i (each as long as that output). See ulp.h and budgets.h.
using Floors = std::vector<std::vector<double>>;

struct OpInfo {
  std::string name;                     // docs/spec.md name: "softmaxLast"
  std::string nodeName;                 // the node's name on the tape: "softmax"
  std::vector<std::string> tensorArgs;  // docs/spec.md tensor arguments, in call order
  std::vector<std::string> attrNames;   // non-tensor arguments the op requires
  std::vector<std::string> optionalAttrNames;  // non-tensor arguments with a default
  // Calls the op on a tape whose leaves are already in place.
  std::function<Result<NodeId>(AnyTape&, const TestCase&)> call;

  // --- how it is tested ---------------------------------------------------------------------
  std::vector<std::string> uses;  // the docs/spec.md ops it exercises ({name} for an op)
  bool program = false;           // a chained tape program, not a single operation
  ShapeFamily family = ShapeFamily::RowsLast;  // how its shapes are drawn (generators.h)
  // Value fills, in the order the first cases use them (each of the first 2 * |fills| cases
  // takes the next one), so a kernel's classic mistake shows within the first few cases: the
  // ~88 and -1e7 logits for an unshifted exp, the large offset for a one-pass variance, ties and
  // NaN for topKMask's order, zero variance for a missing epsilon.
  std::vector<Fill> fills;
  std::vector<std::string> hardFlags;  // flags of its known-hard inputs (golden-vector flags)
  const OpBudget* budget = nullptr;    // budgets.h
  bool hasBackward = true;        // false: no gradient to compare (topKMask)
  // Tensor arguments that by the spec receive no gradient although the value depends on them
  // (distill's teacher): left out of the dot-product identity.
  std::vector<std::string> constantArgs;
  // false where the spec's gradient is not the derivative of the value with respect to the
  // leaves (a program that feeds a leaf-dependent node to distill's constant teacher).
  bool dotIdentity = true;
  // Builds the case (leaves, call, attrs, upstream) from drawn parameters, deterministically.
  std::function<TestCase(const CaseParams&)> makeCase;
  // The floor of every element of every compared output, from the case and the expected outcome.
  std::function<Floors(const TestCase&, const Outcome& expected)> floors;

  // --- its golden vectors (vectors/golden/<op>-<theme>.json) --------------------------------
  // The op's corpus files as code; `tapecheck vectors generate` writes them. Empty for programs.
  std::function<std::vector<vectors::CorpusFile>()> corpus;
};

const std::vector<OpInfo>& opRegistry();       // the docs/spec.md operations, in docs/spec.md order
const std::vector<OpInfo>& programRegistry();  // chained tape programs
const OpInfo* findOp(std::string_view name);   // an operation
const OpInfo* findSubject(std::string_view name);  // an operation or a program

// The case of `op` for drawn parameters: op.makeCase, then p.invalid applied (a malformed call).
TestCase buildCase(const OpInfo& op, const CaseParams& p);

// Adds the case's leaves to a fresh tape, calls the op (or program) and, when the case has an
// upstream gradient, runs backward. Any error (from a leaf, the call or backward) is the outcome.
Outcome evaluate(AnyTape& tape, const TestCase& c);

// The length of the longest reduction behind one output element of the pass (n in budgets.h):
// the row length for last-axis ops, max(seqLen, embedDim) for layerNorm (rows, then columns for
// dgamma/dbeta), S for batchNorm; for the losses the element count forward (one sum over every
// element) and the slice length backward; the element count for programs.
double reductionLength(const OpInfo& op, const TestCase& c, bool backward = false);

// A short class of a drawn case's shape for reports ("cols-warp", "strided-long", "scalar",
// "rows-many", ...): groups of cases that exercise the same kernel path.
std::string shapeClass(const OpInfo& op, const CaseParams& p);

}  // namespace tapecheck::conformance
