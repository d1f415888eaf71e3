// RapidCheck generators for the drawn parameters of a case (CaseParams): shapes of rank 0..4
// biased toward what kernels get wrong -- dims 0, 1, 2, 3, warp and block edges (31..33, 127..129,
// 1023..1025, 4095..4097, ...), primes, very long rows, many short rows -- capped by an element
// budget that differs between CPU and GPU, and shrinking toward the smallest failing shape.
//
// librapidcheck.a is not position-independent (DESIGN.md section 7): this header and
// generators.cpp belong in code linked into executables only (the tapecheck command line and the
// test programs), never into a shared library.
#pragma once

#include <cstdint>
#include <vector>

#include <rapidcheck.h>

#include "tapecheck/conformance/case_params.h"
#include "tapecheck/conformance/op_registry.h"
#include "tapecheck/device/kernel_table.h"

namespace tapecheck::conformance {

struct GenConfig {
  std::uint64_t maxElements = 1u << 15;  // the main tensor's element count
  std::uint64_t maxRow = 16385;          // the longest row / slice / channel
  // CPU: 2^15 elements, rows up to 2^14 + 1 (a default run stays near a minute on two cores).
  // CUDA: 2^22 elements, rows up to 2^16 + 1 (the long-row paths of the kernels).
  static GenConfig forDevice(device::DeviceKind d);

  // Launch-size edges, on every device: case `index` of an op (not of a program) with
  // index % launchEdgePeriod == launchEdgeOffset is [E, 1 or 2] or [1 or 2, E] for an edge E
  // (rows or row length around 2^16, where grid dimensions and 16-bit indices run out, and
  // beyond), whatever the element budget: one or two columns keep it cheap. A row itself is at
  // most launchEdgeLongRow long: longer ones are no launch-size edge, and on 2^20 elements the
  // ATen CPU table's softmax already errs by 1533 ulps against a budget of 528. For the axis
  // ops E is the number of slices (outer or inner), each one or two long. Shrinks toward the
  // smallest edge.
  std::vector<Dim> launchEdges = {65535, 65536, 65537, 131073, 1048577};
  Dim launchEdgeLongRow = 131073;
  std::uint64_t launchEdgePeriod = 64;
  std::uint64_t launchEdgeOffset = 11;
  bool isLaunchEdgeCase(const OpInfo& op, std::uint64_t index) const;
};

// The element cap of case `index`: 64 doubling every second case up to maxElements, so the first
// cases are tiny (cheap, and enough for gross bugs) and the budget is reached by case ~20.
std::uint64_t elementCap(const GenConfig& config, std::uint64_t index);

// Shapes of a family under a cap on elements and row length. Shrinks toward lower rank and
// smaller dims.
rc::Gen<Shape> genShape(ShapeFamily family, std::uint64_t cap, std::uint64_t maxRow);

// The parameters of case `index` of `op`: its shape (a launch-size edge for the cases
// GenConfig::isLaunchEdgeCase names), fill (the first 2 * |fills| cases take the op's fills in
// order), k, axis, epsilon, which leaves require grad, and every 16th case a malformed call.
rc::Gen<CaseParams> genCaseParams(const OpInfo& op, const GenConfig& config, std::uint64_t index);

// Case `index` of `op` under `seed`, deterministically: the same arguments give the same case
// (and the same shrinks) on every run.
rc::Shrinkable<CaseParams> drawCase(const OpInfo& op, const GenConfig& config, std::uint64_t seed,
                                    std::uint64_t index);

// For property tests: a shape drawn under the CPU budget, with RapidCheck's own shrinking.
struct BudgetedShape {
  ShapeFamily family = ShapeFamily::RowsLast;
  Shape dims;
};

}  // namespace tapecheck::conformance

namespace rc {
template <>
struct Arbitrary<tapecheck::conformance::BudgetedShape> {
  static Gen<tapecheck::conformance::BudgetedShape> arbitrary();
};
}  // namespace rc
