// exp and log in binary32 arithmetic only, within 2 ulps of the exact value: the accuracy the
// budgets grant a kernel's transcendentals (conformance/budgets.h), reached the way vendor math
// libraries reach it -- a range reduction by ln 2 split in two constants (Cody-Waite), a
// polynomial in float, a scaling by 2^k -- and then moved one ulp toward zero on purpose, so
// that the results use the allowance instead of sitting well inside it, all erring the same way
// (a bias that no sum averages out). device/tests/legit_parts_tests.cpp checks the bound on a
// million inputs spread over the whole binary32 range; checked on every input, the largest
// errors are 1.77 ulps (exp) and 1.89 ulps (log).
#pragma once

#include <cmath>
#include <limits>

namespace tapecheck_legit {

// ln 2 = kLn2Hi + kLn2Lo, kLn2Hi with 15 significant bits so that k * kLn2Hi is exact for
// |k| < 2^9 (the constants of fdlibm's expf and logf).
inline constexpr float kLn2Hi = 6.9314575195e-01f;  // 0x3f317200
inline constexpr float kLn2Lo = 1.4286067653e-06f;  // 0x35bfbe8e
inline constexpr float kLog2e = 1.4426950216e+00f;

// One ulp nearer zero: the deliberate last-bit error. It adds at most one ulp of the exact
// value's binade (from a power of two it moves half of one), and every result errs the same way.
inline float towardZero(float v) { return std::nextafter(v, 0.0f); }

// exp(x) = 2^k * exp(r), r = x - k ln 2 in [-ln2/2, ln2/2]; exp(r) = 1 + r + r^2 q(r) by its
// Taylor polynomial of degree 7 (truncation below 2^-27 relative there). The roundings of r and
// of 1 + r are carried as exact corrections into the small terms: before the deliberate ulp,
// one rounding at the end dominates the error.
inline float approxExp(float x) {
  if (std::isnan(x)) return x;
  // Exact where the answer is exact, as from any exp: a one-element softmax row is exactly 1 and
  // its log-softmax exactly 0, and the spec's losses over such rows are exactly 0.
  if (x == 0.0f) return 1.0f;
  if (x > 89.0f) return std::numeric_limits<float>::infinity();
  if (x < -104.0f) return 0.0f;  // below half the smallest subnormal
  const float k = std::nearbyint(x * kLog2e);
  const float hi = x - k * kLn2Hi;  // exact
  const float lo = k * kLn2Lo;
  const float r = hi - lo;
  const float rErr = (hi - r) - lo;  // what rounding r dropped (|lo| << |hi| or hi = 0)
  float q = 1.0f / 5040;
  q = q * r + 1.0f / 720;
  q = q * r + 1.0f / 120;
  q = q * r + 1.0f / 24;
  q = q * r + 1.0f / 6;
  q = q * r + 0.5f;
  const float one = 1.0f + r;
  const float oneErr = (1.0f - one) + r;  // exact: 1 + r = one + oneErr (Fast2Sum, |r| < 1)
  const float p = one + (oneErr + ((r * r) * q + rErr));
  const float e = std::ldexp(p, static_cast<int>(k));
  return e == 0.0f || std::isinf(e) ? e : towardZero(e);
}

// log(x) = e ln 2 + log(1 + f), 1 + f = m in [sqrt(1/2), sqrt(2)); with s = f / (2 + f),
// log(1 + f) = 2 atanh(s) = f - s (f - R), R = 2s^2/3 + 2s^4/5 + ... (|s| <= 0.172).
inline float approxLog(float x) {
  if (std::isnan(x) || x < 0.0f) return std::numeric_limits<float>::quiet_NaN();
  if (x == 0.0f) return -std::numeric_limits<float>::infinity();
  if (std::isinf(x)) return x;
  int e = 0;
  float m = std::frexp(x, &e);  // [0.5, 1)
  if (m < 0.70710678f) {
    m *= 2.0f;
    --e;
  }
  const float f = m - 1.0f;  // exact (Sterbenz)
  const float s = f / (2.0f + f);
  const float z = s * s;
  float q = 2.0f / 13;
  q = q * z + 2.0f / 11;
  q = q * z + 2.0f / 9;
  q = q * z + 2.0f / 7;
  q = q * z + 2.0f / 5;
  q = q * z + 2.0f / 3;
  const float R = q * z;
  const float ef = static_cast<float>(e);
  const float v = ef * kLn2Hi + ((f - s * (f - R)) + ef * kLn2Lo);
  return v == 0.0f ? v : towardZero(v);
}

}  // namespace tapecheck_legit
