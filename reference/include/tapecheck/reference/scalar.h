// The scalar types the reference tape is instantiated for, and the few conversions it needs.
// The multi-precision type (MPFR through mpreal) is the oracle for the real-number semantics of
// docs/spec.md; float and double are the same code at binary32 and binary64.
#pragma once

#include <cmath>
#include <string>

#include <mpreal.h>
#include <unsupported/Eigen/MPRealSupport>

namespace tapecheck::reference {

using Multi = mpfr::mpreal;

// 128 bits: far beyond what any tested formula loses (a row of 2^17 terms costs < 20 bits), so
// a Multi result rounded to binary64 is the correctly rounded spec value in all practical cases.
inline constexpr mpfr_prec_t kOracleBits = 128;

template <class Scalar>
struct ScalarTraits;

template <>
struct ScalarTraits<float> {
  static constexpr const char* name = "binary32";
  static float fromDouble(double v) { return static_cast<float>(v); }
  static double toDouble(float v) { return v; }
  static bool isNaN(float v) { return std::isnan(v); }
};

template <>
struct ScalarTraits<double> {
  static constexpr const char* name = "binary64";
  static double fromDouble(double v) { return v; }
  static double toDouble(double v) { return v; }
  static bool isNaN(double v) { return std::isnan(v); }
};

template <>
struct ScalarTraits<Multi> {
  static constexpr const char* name = "mpfr128";
  static Multi fromDouble(double v) { return Multi(v, kOracleBits); }
  static double toDouble(const Multi& v) { return v.toDouble(MPFR_RNDN); }
  static bool isNaN(const Multi& v) { return mpfr::isnan(v); }
  // MPFR's default precision is process-wide; every temporary Eigen or mpreal creates from an
  // integer literal takes it, so the oracle fixes it before computing anything.
  static void prepare() { Multi::set_default_prec(kOracleBits); }
};

template <class Scalar>
void prepareScalar() {
  if constexpr (std::is_same_v<Scalar, Multi>) ScalarTraits<Multi>::prepare();
}

}  // namespace tapecheck::reference
