// Generators: shapes within the budget, binary32 inputs, the first cases' fills, determinism and
// shrinking toward the smallest failing shape.
#include <catch2/catch.hpp>
#include <rapidcheck/catch.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "tapecheck/conformance/generators.h"
#include "tapecheck/conformance/runner.h"

using tapecheck::Dim;
using tapecheck::Shape;
using tapecheck::sizeOf;
using tapecheck::Error;
using namespace tapecheck::conformance;

namespace {

std::vector<const OpInfo*> everySubject() { return selectSubjects({}).value(); }

bool representable(double v) {
  return std::isnan(v) || static_cast<double>(static_cast<float>(v)) == v;
}

// The row / slice / channel dimension of a drawn shape.
Dim rowDim(const OpInfo& op, const CaseParams& p) {
  if (p.shape.empty()) return 1;
  switch (op.family) {
    case ShapeFamily::AxisSlices: return p.shape.at(p.axis);
    case ShapeFamily::ChannelsSpatial: return p.shape.size() > 1 ? p.shape.back() : 1;
    default: return p.shape.back();
  }
}

}  // namespace

TEST_CASE("generated shapes stay within the element budget and the row limit", "[generators]") {
  for (tapecheck::device::DeviceKind d : {tapecheck::device::DeviceKind::Cpu, tapecheck::device::DeviceKind::Cuda}) {
    const GenConfig config = GenConfig::forDevice(d);
    for (const OpInfo* op : everySubject())
      for (std::uint64_t i = 0; i < 60; ++i) {
        if (config.isLaunchEdgeCase(*op, i)) continue;  // the next test's
        const CaseParams p = drawCase(*op, config, 11, i).value();
        INFO(op->name << " case " << i << ": " << describe(p));
        CHECK(p.shape.size() <= 4);
        CHECK(sizeOf(p.shape) <= elementCap(config, i));
        CHECK(rowDim(*op, p) <= config.maxRow);
      }
  }
}

TEST_CASE("every device draws launch-size edges: rows or row length past 2^16, cheap",
          "[generators]") {
  for (tapecheck::device::DeviceKind d :
       {tapecheck::device::DeviceKind::Cpu, tapecheck::device::DeviceKind::Cuda}) {
    const GenConfig config = GenConfig::forDevice(d);
    std::set<Dim> edges;
    for (const OpInfo* op : everySubject()) {
      std::uint64_t drawn = 0;
      for (std::uint64_t i = 0; i < 1000; ++i) {
        if (!config.isLaunchEdgeCase(*op, i)) continue;
        ++drawn;
        const CaseParams p = drawCase(*op, config, 11, i).value();
        INFO(op->name << " case " << i << ": " << describe(p));
        REQUIRE(p.shape.size() == 2);
        const Dim wide = std::max(p.shape[0], p.shape[1]);
        const Dim narrow = std::min(p.shape[0], p.shape[1]);
        CHECK(wide >= 65535);
        CHECK(narrow <= 2);  // one or two columns (or rows): cheap whatever the budget
        if (op->family != ShapeFamily::AxisSlices)
          CHECK(p.shape[1] <= config.launchEdgeLongRow);  // a row is never longer
        edges.insert(wide);
      }
      // Every op but the chained programs (whose cases check gradient flow, not launches).
      CHECK(drawn == (op->program ? 0u : 16u));  // 11, 75, ..., 971
    }
    // Around 2^16 and beyond it.
    CHECK(edges.count(65535) == 1);
    CHECK(edges.count(65536) == 1);
    CHECK(edges.count(65537) == 1);
    CHECK(edges.count(131073) == 1);
    CHECK(edges.count(1048577) == 1);
  }
  // A case of the first 24 (a short CI run) is one.
  const OpInfo& softmax = *findOp("softmaxLast");
  const CaseParams early = drawCase(softmax, GenConfig{}, 0, GenConfig{}.launchEdgeOffset).value();
  CHECK(std::max(early.shape[0], early.shape[1]) >= 65535);
  CHECK(GenConfig{}.launchEdgeOffset < 24);
}

TEST_CASE("a launch-size edge shrinks toward the smallest edge", "[generators]") {
  const GenConfig config;
  const OpInfo& op = *findOp("layerNorm");
  for (std::uint64_t i = config.launchEdgeOffset; i < 600; i += config.launchEdgePeriod) {
    rc::Shrinkable<CaseParams> drawn = drawCase(op, config, 5, i);
    const Shape s = drawn.value().shape;
    const Dim wide = std::max(s[0], s[1]);
    if (wide == 65535) continue;
    bool smaller = false;
    auto shrinks = drawn.shrinks();
    while (auto next = shrinks.next()) {
      const Shape t = next->value().shape;
      smaller = smaller || (t.size() == 2 && std::max(t[0], t[1]) < wide &&
                            std::max(t[0], t[1]) >= 65535);
    }
    CHECK(smaller);
  }
}

TEST_CASE("arbitrary budgeted shapes respect the CPU budget", "[generators]") {
  rc::prop("size and rank within budget", [](const BudgetedShape& s) {
    const GenConfig cpu;
    RC_ASSERT(s.dims.size() <= 4u);
    RC_ASSERT(sizeOf(s.dims) <= cpu.maxElements);
  });
}

TEST_CASE("every generated input is representable in binary32", "[generators]") {
  const GenConfig config;
  for (const OpInfo* op : everySubject())
    for (std::uint64_t i = 0; i < 40; ++i) {
      const TestCase c = buildCase(*op, drawCase(*op, config, 5, i).value());
      for (const Leaf& l : c.leaves)
        for (double v : l.value.values) REQUIRE(representable(v));
      if (c.upstream)
        for (double v : c.upstream->values) REQUIRE(representable(v));
    }
}

TEST_CASE("the first cases of each op take its fills in order", "[generators]") {
  const GenConfig config;
  for (const OpInfo* op : everySubject()) {
    const std::size_t n = op->fills.size();
    REQUIRE(n > 0);
    for (std::uint64_t i = 0; i < 2 * n; ++i)
      CHECK(drawCase(*op, config, 99, i).value().fill == op->fills[i % n]);
  }
}

TEST_CASE("a case is a pure function of op, seed and index", "[generators]") {
  const GenConfig config;
  const OpInfo& op = *findOp("crossEntropy");
  for (std::uint64_t i = 0; i < 20; ++i) {
    const CaseParams a = drawCase(op, config, 3, i).value();
    const CaseParams b = drawCase(op, config, 3, i).value();
    CHECK(describe(a) == describe(b));
    CHECK(a.valueSeed == b.valueSeed);
    const TestCase ca = buildCase(op, a), cb = buildCase(op, b);
    REQUIRE(ca.leaves.size() == cb.leaves.size());
    for (std::size_t l = 0; l < ca.leaves.size(); ++l)
      CHECK(ca.leaves[l].value.shape == cb.leaves[l].value.shape);
  }
  CHECK(drawCase(op, config, 3, 30).value().valueSeed !=
        drawCase(op, config, 4, 30).value().valueSeed);
}

TEST_CASE("shrinking reaches the smallest shape that still fails", "[generators]") {
  // "Fails" here: a row of at least 100 entries. Shrinking must end on rows of 1 x ... x n with n the
  // smallest length >= 100 that the chosen row generator can produce (100 from the plain range,
  // 127 from the block edges, 251 from the primes).
  const GenConfig config;
  const OpInfo& op = *findOp("softmaxLast");
  auto fails = [](const CaseParams& p) {
    return !p.shape.empty() && sizeOf(p.shape) > 0 && p.shape.back() >= 100;
  };
  int shrunk = 0;
  for (std::uint64_t i = 20; i < 200 && shrunk < 5; ++i) {
    if (config.isLaunchEdgeCase(op, i)) continue;  // they shrink among the edges (above)
    rc::Shrinkable<CaseParams> current = drawCase(op, config, 1, i);
    if (!fails(current.value())) continue;
    for (bool moved = true; moved;) {
      moved = false;
      auto candidates = current.shrinks();
      while (auto next = candidates.next())
        if (fails(next->value())) {
          current = *next;
          moved = true;
          break;
        }
    }
    const CaseParams p = current.value();
    INFO("case " << i << " shrank to " << describe(p));
    for (std::size_t d = 0; d + 1 < p.shape.size(); ++d) CHECK(p.shape[d] == 1);
    CHECK((p.shape.back() == 100 || p.shape.back() == 127 || p.shape.back() == 251));
    CHECK(p.fill == op.fills[0]);
    ++shrunk;
  }
  CHECK(shrunk == 5);
}
