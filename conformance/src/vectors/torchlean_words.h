// Scalar words of TorchLean's tensor files: IEEE-754 bit patterns of Lean `Float` (binary64) and
// `Float32` (binary32). Lean's `Float.toBits`/`Float32.toBits` write every NaN as the one quiet
// NaN below, so a file TorchLean wrote holds no other NaN word; TorchLean's exact-state reader
// (StateIO/Encoding.lean, `Checkpoint.Encoding`) rejects the others.
#pragma once

#include <cstdint>
#include <cstring>

namespace tapecheck::vectors::torchlean {

inline constexpr std::uint64_t kCanonicalNaN64 = 0x7FF8000000000000ULL;
inline constexpr std::uint32_t kCanonicalNaN32 = 0x7FC00000U;

inline bool isNaN64(std::uint64_t w) {
  return (w & 0x7FF0000000000000ULL) == 0x7FF0000000000000ULL && (w & 0x000FFFFFFFFFFFFFULL) != 0;
}
inline bool isNaN32(std::uint32_t w) {
  return (w & 0x7F800000U) == 0x7F800000U && (w & 0x007FFFFFU) != 0;
}

// The binary64 value of a binary32 word, exactly. Every binary32 number is a binary64 number;
// a NaN keeps its sign and payload (the payload moves to the top of binary64's fraction) rather
// than going through the hardware conversion, which would quiet a signaling NaN.
inline double binary32Value(std::uint32_t w) {
  double out;
  if (isNaN32(w)) {
    const std::uint64_t bits = (static_cast<std::uint64_t>(w >> 31) << 63) |
                               0x7FF0000000000000ULL |
                               (static_cast<std::uint64_t>(w & 0x007FFFFFU) << 29);
    std::memcpy(&out, &bits, sizeof out);
    return out;
  }
  float f;
  std::memcpy(&f, &w, sizeof f);
  return static_cast<double>(f);
}

}  // namespace tapecheck::vectors::torchlean
