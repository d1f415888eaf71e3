// Binary64 bit patterns: the ParamIO encoding of golden vectors (TorchLean's
// `torchlean_paramlist_bits_v1`: each Float is stored as the u64 of its IEEE-754 bits).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace tapecheck::vectors {

inline std::uint64_t toBits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

inline double fromBits(std::uint64_t b) {
  double v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// Golden-vector inputs must be exactly representable in binary32, so that the binary32 device
// tape and the binary64/multi-precision reference consume the same numbers. NaN counts as
// representable (every NaN is a NaN in binary32; payloads are not part of the contract).
inline bool isBinary32(double v) {
  if (std::isnan(v) || std::isinf(v)) return true;
  if (std::fabs(v) > static_cast<double>(std::numeric_limits<float>::max())) return false;
  return static_cast<double>(static_cast<float>(v)) == v;
}

}  // namespace tapecheck::vectors
