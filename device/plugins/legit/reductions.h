// The ways a float32 kernel sums a row, each in binary32 only (no wider accumulator anywhere):
// the summation orders real kernels use, and the one plain loop no parallel kernel uses.
//
//   Lanes<L>    L threads each add every L-th term into a private float (a strided partial
//               sum), then the L partials meet in a tree, halving the active lanes each step:
//               the shape of a CUDA warp (L = 32) or block (L = 256) reduction.
//   Pairwise    split the range in halves down to 8 terms, add those in order, add the halves:
//               NumPy's pairwise summation.
//   Kahan       one loop that carries the rounding error of each addition into the next.
//   Sequential  one loop, one float accumulator, left to right.
//
// Rounding error of a sum of n terms against the sum of their magnitudes, u = 2^-24: a tree
// within log2(n) u, Lanes<L> within (n/L + log2 L) u, Kahan within 2u, Sequential within n u.
// The n u of a chain is reached when its errors all point the same way (a constant row); on
// random data they partly cancel and it is nearer sqrt(n) u.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace tapecheck_legit {

enum class SumKind { Lanes32, Lanes256, Pairwise, Kahan, Sequential };

constexpr std::uint32_t lanesOf(SumKind k) {
  return k == SumKind::Lanes32 ? 32u : k == SumKind::Lanes256 ? 256u : 1u;
}

// A reduction of n terms with any associative state: `add(acc, j)` folds term j into a lane's
// accumulator, `merge(a, b)` folds accumulator b into a. Lanes beyond n stay `identity`.
template <std::uint32_t L, class Acc, class Add, class Merge>
Acc lanesReduce(std::uint32_t n, const Acc& identity, Add&& add, Merge&& merge) {
  Acc lane[L];
  for (std::uint32_t l = 0; l < L; ++l) {
    lane[l] = identity;
    for (std::uint32_t j = l; j < n; j += L) add(lane[l], j);
  }
  for (std::uint32_t offset = L / 2; offset > 0; offset /= 2)
    for (std::uint32_t l = 0; l < offset; ++l) merge(lane[l], lane[l + offset]);
  return lane[0];
}

template <class Term>
float pairwiseSum(std::uint32_t begin, std::uint32_t end, Term& term) {
  if (end - begin <= 8) {
    float s = 0.0f;
    for (std::uint32_t j = begin; j < end; ++j) s += term(j);
    return s;
  }
  const std::uint32_t mid = begin + (end - begin) / 2;
  return pairwiseSum(begin, mid, term) + pairwiseSum(mid, end, term);
}

template <class Term>
float kahanSum(std::uint32_t n, Term& term) {
  float s = 0.0f, carry = 0.0f;
  for (std::uint32_t j = 0; j < n; ++j) {
    const float y = term(j) - carry;
    const float t = s + y;
    // Past an infinity the compensation is inf - inf: the sum is the plain one from there on.
    carry = std::isfinite(t) ? (t - s) - y : 0.0f;
    s = t;
  }
  return s;
}

// sum_{j < n} term(j) in float, in the order `kind` says. `term` returns a float.
template <class Term>
float sum(SumKind kind, std::uint32_t n, Term&& term) {
  auto add = [&](float& acc, std::uint32_t j) { acc += term(j); };
  auto merge = [](float& a, const float& b) { a += b; };
  switch (kind) {
    case SumKind::Lanes32:
      return lanesReduce<32>(n, 0.0f, add, merge);
    case SumKind::Lanes256:
      return lanesReduce<256>(n, 0.0f, add, merge);
    case SumKind::Pairwise:
      return pairwiseSum(0, n, term);
    case SumKind::Kahan:
      return kahanSum(n, term);
    case SumKind::Sequential:
      break;
  }
  float s = 0.0f;
  for (std::uint32_t j = 0; j < n; ++j) s += term(j);
  return s;
}

// A reduction with its own state (Welford's moments, an online softmax's max and sum): lanes
// for the lane kinds, one chain otherwise (these states exist to be merged across threads).
template <class Acc, class Add, class Merge>
Acc reduce(SumKind kind, std::uint32_t n, const Acc& identity, Add&& add, Merge&& merge) {
  if (kind == SumKind::Lanes32) return lanesReduce<32>(n, identity, add, merge);
  if (kind == SumKind::Lanes256) return lanesReduce<256>(n, identity, add, merge);
  Acc acc = identity;
  for (std::uint32_t j = 0; j < n; ++j) add(acc, j);
  return acc;
}

}  // namespace tapecheck_legit
