// Shapes and the two ways docs/spec.md folds them: rows x cols for last-axis operations and
// outer x n x inner for an axis. Sizes saturate instead of wrapping so that an absurd shape is
// reported as too large rather than silently folded to a small one.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tapecheck/errors.h"
#include "tapecheck/result.h"

namespace tapecheck {

using Dim = std::uint64_t;
using Shape = std::vector<Dim>;
using NodeId = std::uint64_t;

inline constexpr Dim kSaturated = std::numeric_limits<Dim>::max();
inline constexpr Dim kUInt32Max = std::numeric_limits<std::uint32_t>::max();

// Product of dims; 0 as soon as one dim is 0; kSaturated when the product overflows 64 bits.
inline Dim productOf(Shape::const_iterator begin, Shape::const_iterator end) {
  for (auto it = begin; it != end; ++it)
    if (*it == 0) return 0;
  Dim p = 1;
  for (auto it = begin; it != end; ++it) {
    if (p > kSaturated / *it) return kSaturated;
    p *= *it;
  }
  return p;
}

inline Dim sizeOf(const Shape& s) { return productOf(s.begin(), s.end()); }
inline bool isScalar(const Shape& s) { return s.empty(); }
inline bool isEmptyTensor(const Shape& s) { return sizeOf(s) == 0; }
inline bool wellFormed(const Shape& s) {
  for (Dim d : s)
    if (d == 0) return false;
  return true;
}

// TorchLean's numelU32: every dimension, in order, and then the element count must fit in
// UInt32 (docs/spec.md#uint32).
inline bool fitsUInt32(const Shape& s) {
  for (Dim d : s)
    if (d > kUInt32Max) return false;
  return sizeOf(s) <= kUInt32Max;
}

inline Status numelU32(const Shape& s) {
  if (!fitsUInt32(s)) return Error{errors::kTooLarge};
  return okStatus();
}

struct RowFold {
  std::uint32_t rows;
  std::uint32_t cols;
};

// Row folding for rank >= 1, non-empty shapes: cols = last dim, rows = the rest. rows and then
// cols are each converted to UInt32; their product is not checked here but at the lookup
// (docs/spec.md#row-folding), so [65536, 65537] folds.
inline Result<RowFold> foldRows(const Shape& s) {
  const Dim rows = productOf(s.begin(), s.end() - 1);
  const Dim cols = s.back();
  if (rows > kUInt32Max || cols > kUInt32Max) return Error{errors::kTooLarge};
  return RowFold{static_cast<std::uint32_t>(rows), static_cast<std::uint32_t>(cols)};
}

struct AxisFold {
  std::uint32_t outer;
  std::uint32_t n;
  std::uint32_t inner;
};

// Axis folding, assuming axis < rank(s) and a non-empty s that fits UInt32.
inline AxisFold foldAxis(const Shape& s, std::size_t axis) {
  const Dim outer = productOf(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(axis));
  const Dim inner = productOf(s.begin() + static_cast<std::ptrdiff_t>(axis) + 1, s.end());
  return AxisFold{static_cast<std::uint32_t>(outer), static_cast<std::uint32_t>(s[axis]),
                  static_cast<std::uint32_t>(inner)};
}

// Axis folding of a non-empty s with axis < rank(s): outer, n and inner are each converted to
// UInt32, in that order; their product is checked at the lookup (docs/spec.md#axis-folding).
inline Result<AxisFold> foldAxisChecked(const Shape& s, std::size_t axis) {
  const Dim outer = productOf(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(axis));
  const Dim inner = productOf(s.begin() + static_cast<std::ptrdiff_t>(axis) + 1, s.end());
  for (Dim d : {outer, s[axis], inner})
    if (d > kUInt32Max) return Error{errors::kTooLarge};
  return foldAxis(s, axis);
}

inline std::string toString(const Shape& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

}  // namespace tapecheck
