// Deterministic value fills (benchdnn-style) for generated cases. Everything here is a function
// of a 64-bit seed, uses no libm (so the same seed gives the same numbers on every machine) and
// rounds every value to binary32, so both tapes consume the same numbers.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "tapecheck/conformance/case_params.h"
#include "tapecheck/shape.h"

namespace tapecheck::conformance::values {

// splitmix64: small, fast, and the same everywhere.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
  bool chance(double p) { return uniform() < p; }
  // Irwin-Hall: four uniforms, centred and scaled to unit variance (no libm).
  double normal() {
    const double s = uniform() + uniform() + uniform() + uniform();
    return (s - 2.0) * 1.7320508075688772;
  }

 private:
  std::uint64_t state_;
};

inline double toFloat(double v) { return static_cast<double>(static_cast<float>(v)); }

inline std::uint64_t mix(std::uint64_t seed, std::uint64_t salt) {
  return Rng(seed ^ (salt * 0xD1B54A32D192ED03ull)).next();
}

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Visits the slices of a tensor folded as outer x n x inner: visit(indices of one slice).
template <class F>
void forEachSliceIndices(const AxisFold& f, F&& visit) {
  std::vector<std::size_t> idx(f.n);
  for (std::size_t o = 0; o < f.outer; ++o)
    for (std::size_t i = 0; i < f.inner; ++i) {
      for (std::size_t j = 0; j < f.n; ++j) idx[j] = (o * f.n + j) * f.inner + i;
      visit(idx);
    }
}

// The main input of an op (x, logits, student, teacher), slice by slice; count = outer*n*inner.
std::vector<double> fill(Fill kind, const AxisFold& fold, Rng& rng);

// Non-negative weights for crossEntropy's target.
std::vector<double> fillTarget(TargetFill kind, const AxisFold& fold, Rng& rng);

// gamma ~ 1 + N(0, 0.5^2), beta ~ N(0, 0.5^2); upstream gradients ~ N(0, 1).
std::vector<double> gammaValues(std::size_t n, Rng& rng);
std::vector<double> betaValues(std::size_t n, Rng& rng);
std::vector<double> upstreamValues(std::size_t n, Rng& rng);

}  // namespace tapecheck::conformance::values
