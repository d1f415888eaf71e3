#include "corpus_support.h"

namespace tapecheck::conformance::ops {

namespace {
std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
}  // namespace

std::vector<double> grid(std::size_t n, std::uint64_t seed, double center, std::int64_t half,
                         double quantum) {
  std::vector<double> out(n);
  std::uint64_t state = seed;
  const std::uint64_t span = static_cast<std::uint64_t>(2 * half + 1);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t j = static_cast<std::int64_t>(splitmix64(state) % span) - half;
    out[i] = center + static_cast<double>(j) * quantum;
  }
  return out;
}

std::vector<double> ramp(std::size_t n, double start, double step) {
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = start + static_cast<double>(i) * step;
  return out;
}

std::vector<double> filled(std::size_t n, double v) { return std::vector<double>(n, v); }

std::vector<double> concat(std::vector<double> a, const std::vector<double>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<double> oneHot(std::size_t rows, std::size_t cols,
                           const std::vector<std::size_t>& hot) {
  std::vector<double> out(rows * cols, 0.0);
  for (std::size_t r = 0; r < rows && r < hot.size(); ++r) out[r * cols + hot[r]] = 1.0;
  return out;
}

std::vector<CaseDef> rowOpLastErrorCases(const std::function<void(CaseDef&)>& attrs) {
  using namespace errors;
  const double big = 4294967296.0;  // 2^32
  std::vector<CaseDef> c;
  auto add = [&](CaseDef d) {
    attrs(d);
    c.push_back(std::move(d));
  };
  add(CaseDef("x names node 1 but the tape holds one leaf", {"InvalidId"})
          .leaf({2, 3}, ramp(6, 0, 1))
          .arg("x", 1)
          .s({2, 3})
          .invalid(kInvalidNodeId));
  add(CaseDef("x names node 0 of an empty tape", {"InvalidId"})
          .arg("x", 0)
          .s({2, 3})
          .invalid(kInvalidNodeId));
  add(CaseDef("the leaf is [3,2] but the call declares [2,3]", {"ShapeMismatch"})
          .leaf({3, 2}, ramp(6, 0, 1))
          .arg("x", 0)
          .s({2, 3})
          .invalid(kShapeMismatch));
  add(CaseDef("same size, other rank: leaf [6], call [2,3]", {"ShapeMismatch"})
          .leaf({6}, ramp(6, 0, 1))
          .arg("x", 0)
          .s({2, 3})
          .invalid(kShapeMismatch));
  add(CaseDef("scalar call on a [1] leaf: [] and [1] are different shapes",
              {"ShapeMismatch", "Scalar"})
          .leaf({1}, {2})
          .arg("x", 0)
          .s({})
          .invalid(kShapeMismatch));
  add(CaseDef("empty call [3,0] on an empty [0,3] leaf", {"ShapeMismatch", "Empty"})
          .leaf({0, 3}, {})
          .arg("x", 0)
          .s({3, 0})
          .invalid(kShapeMismatch));
  add(CaseDef("empty call with an invalid id: the empty path still looks x up",
              {"InvalidId", "Empty"})
          .arg("x", 4)
          .s({0, 3})
          .invalid(kInvalidNodeId));
  add(CaseDef("scalar call with an invalid id: the scalar value comes only after validation",
              {"InvalidId", "Scalar"})
          .arg("x", 2)
          .s({})
          .invalid(kInvalidNodeId));
  add(CaseDef("rows 65536 and cols 65537 each fit UInt32, so the lookup runs: x is invalid (the "
              "element count is checked only at a lookup that finds the node)",
              {"TooLarge", "ErrorOrder"})
          .leaf({2}, {1, 2})
          .arg("x", 5)
          .s({65536, 65537})
          .invalid(kInvalidNodeId));
  add(CaseDef("[65536, 65536] (2^32 elements) on a [2] leaf: the fold passes and the shapes "
              "differ",
              {"TooLarge", "ShapeMismatch"})
          .leaf({2}, {1, 2})
          .arg("x", 0)
          .s({65536, 65536})
          .invalid(kShapeMismatch));
  add(CaseDef("one dimension of 2^32 on a valid leaf of another shape: too large, not a "
              "shape mismatch",
              {"TooLarge", "ErrorOrder"})
          .leaf({2}, {1, 2})
          .arg("x", 0)
          .s({static_cast<Dim>(big)})
          .invalid(kTooLarge));
  add(CaseDef("[2^32 - 1] still fits UInt32, so the lookup runs and reports the invalid id",
              {"TooLarge", "InvalidId"})
          .arg("x", 3)
          .s({4294967295ULL})
          .invalid(kInvalidNodeId));
  add(CaseDef("an empty [0, 2^33] leaf is found and has the declared shape, but its dimension "
              "2^33 does not fit UInt32",
              {"Empty", "TooLarge"})
          .leaf({0, 8589934592ULL}, {})
          .arg("x", 0)
          .s({0, 8589934592ULL})
          .upstream({0, 8589934592ULL}, {})
          .invalid(kTooLarge));
  add(CaseDef("an empty [0, 2^32] leaf: the dimension 2^32 is one too many for UInt32",
              {"Empty", "TooLarge"})
          .leaf({0, 4294967296ULL}, {})
          .arg("x", 0)
          .s({0, 4294967296ULL})
          .upstream({0, 4294967296ULL}, {})
          .invalid(kTooLarge));
  add(CaseDef("an empty [0, 2^32 - 1] leaf fits UInt32: an empty value and an empty gradient",
              {"Empty", "TooLarge"})
          .leaf({0, 4294967295ULL}, {})
          .arg("x", 0)
          .s({0, 4294967295ULL})
          .upstream({0, 4294967295ULL}, {}));
  add(CaseDef("a tape that also holds an empty [0, 2^33] leaf cannot be differentiated: "
              "backward allocates every node's gradient through numelU32",
              {"TooLarge", "Empty"})
          .leaf({2, 3}, ramp(6, -1, 0.5))
          .leaf({0, 8589934592ULL}, {}, false)
          .arg("x", 0)
          .s({2, 3})
          .upstream({2, 3}, filled(6, 1))
          .invalid(kTooLarge));
  add(CaseDef("backward seed [3,2] for a [2,3] output", {"SeedMismatch"})
          .leaf({2, 3}, ramp(6, -1, 0.5))
          .arg("x", 0)
          .s({2, 3})
          .upstream({3, 2}, filled(6, 1))
          .invalid(kSeedMismatch));
  add(CaseDef("backward seed [1] for a scalar output", {"SeedMismatch", "Scalar"})
          .leaf({}, {0.5})
          .arg("x", 0)
          .s({})
          .upstream({1}, {1})
          .invalid(kSeedMismatch));
  add(CaseDef("backward seed [3,0] for an empty [0,3] output", {"SeedMismatch", "Empty"})
          .leaf({0, 3}, {})
          .arg("x", 0)
          .s({0, 3})
          .upstream({3, 0}, {})
          .invalid(kSeedMismatch));
  return c;
}

}  // namespace tapecheck::conformance::ops
