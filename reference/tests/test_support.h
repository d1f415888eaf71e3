// Shared helpers of the reference-tape suite: building leaves, reading values and gradients
// back as binary64, and comparing against values derived by hand.
//
// Expected values in this suite are written from docs/spec.md's formulas by hand (the derivation is
// in the comment next to each case) and evaluated, where they are irrational, in long double
// (64-bit significand) from closed forms such as log(6) or sqrt(3/2): never by the code under
// test.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tapecheck/reference/instantiations.h"

namespace tct {

using tapecheck::Dim;
using tapecheck::NodeId;
using tapecheck::Result;
using tapecheck::Shape;
using tapecheck::reference::Multi;

template <class S>
using RefTape = tapecheck::reference::ReferenceTape<S>;
template <class S>
using Buf = tapecheck::reference::Vec<S>;
using Host = std::vector<double>;

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Unwraps an operation's id, failing the test with the tape's message.
inline NodeId okId(const Result<NodeId>& r) {
  INFO("operation failed: " << (r.ok() ? std::string() : r.message()));
  REQUIRE(r.ok());
  return r.value();
}

template <class S>
NodeId leaf(RefTape<S>& t, Shape s, const Host& v, bool requiresGrad) {
  auto b = t.backend().fromHost(v);
  REQUIRE(b.ok());
  return okId(t.leaf(std::move(s), std::move(b).value(), requiresGrad));
}

template <class S>
NodeId leafBuf(RefTape<S>& t, Shape s, Buf<S> v, bool requiresGrad) {
  return okId(t.leaf(std::move(s), std::move(v), requiresGrad));
}

template <class S>
Host values(const RefTape<S>& t, NodeId id) {
  return t.backend().toHost(t.node(id).value.data);
}

// Dense backward from `out` with `seed` (the output's shape), every gradient as binary64.
template <class S>
std::vector<Host> grads(const RefTape<S>& t, NodeId out, const Host& seed) {
  auto b = t.backend().fromHost(seed);
  REQUIRE(b.ok());
  typename RefTape<S>::Value v{t.node(out).value.shape, std::move(b).value()};
  auto g = t.backward(out, v);
  INFO("backward failed: " << (g.ok() ? std::string() : g.message()));
  REQUIRE(g.ok());
  REQUIRE(g.value().size() == t.size());
  std::vector<Host> out_;
  for (const auto& buf : g.value()) out_.push_back(t.backend().toHost(buf));
  return out_;
}

// Relative tolerance for a hand value: the per-scalar roundoff of a short formula.
//  binary32: 2^-20 (~8 ulp of 1): a handful of roundings in float arithmetic.
//  binary64: 2^-47 (~32 ulp of 1): a handful of roundings plus the glibc/Eigen exp/log error.
//  Multi   : 2^-51 (2 ulp of 1): the 128-bit result rounded once to binary64 is within 1/2 ulp
//            of the real value; the long-double hand value is within 1/2 ulp + 2^-64.
template <class S>
constexpr double handTol() {
  if constexpr (std::is_same_v<S, float>) return 0x1p-20;
  else if constexpr (std::is_same_v<S, double>) return 0x1p-47;
  else return 0x1p-51;
}

inline std::string show(const Host& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v[i]);
    s += buf;
  }
  return s + "]";
}

// |got - want| <= tol * (|want| + scale), elementwise; `scale` covers results that cancel to
// (nearly) zero, where a relative bound alone means nothing.
inline void requireClose(const Host& got, const Host& want, double tol, double scale = 1.0) {
  INFO("got  " << show(got));
  INFO("want " << show(want));
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("index " << i);
    if (std::isnan(want[i])) {
      CHECK(std::isnan(got[i]));
    } else if (std::isinf(want[i])) {
      CHECK(got[i] == want[i]);
    } else {
      CHECK(std::fabs(got[i] - want[i]) <= tol * (std::fabs(want[i]) + scale));
    }
  }
}

template <class S>
void requireHand(const Host& got, const Host& want, double scale = 1.0) {
  requireClose(got, want, handTol<S>(), scale);
}

// Bit-for-bit, except that any NaN matches any NaN (and +0 == -0 compares equal).
inline void requireExact(const Host& got, const Host& want) {
  INFO("got  " << show(got));
  INFO("want " << show(want));
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("index " << i);
    if (std::isnan(want[i]))
      CHECK(std::isnan(got[i]));
    else
      CHECK(got[i] == want[i]);
  }
}

inline void requireAllNaN(const Host& got) {
  INFO("got " << show(got));
  for (double g : got) CHECK(std::isnan(g));
}

inline Host zeros(std::size_t n) { return Host(n, 0.0); }

// Long-double closed forms used in hand derivations, rounded once to binary64.
inline double ld(long double v) { return static_cast<double>(v); }
inline long double lnl(long double v) { return std::log(v); }
inline long double sqrtl_(long double v) { return std::sqrt(v); }

}  // namespace tct
