// The drawn parameters of one generated case: a shape, the non-tensor arguments and the value
// fill. Generators (generators.h, RapidCheck) draw and shrink these; an op's makeCase turns them
// into a TestCase deterministically, so shrinking a shape regenerates consistent values.
#pragma once

#include <cstdint>
#include <string>

#include "tapecheck/shape.h"
#include "tapecheck/tape.h"

namespace tapecheck::conformance {

// How an op's shapes are drawn.
enum class ShapeFamily {
  RowsLast,         // any rank 0..4; the last dim is the row (softmax, logSoftmax, topKMask)
  SeqEmbed,         // [seqLen, embedDim] (layerNorm)
  ChannelsSpatial,  // channels :: spatial, spatial of rank 0..3 (batchNorm)
  AxisSlices,       // rank 1..4 and an axis; slices along it (crossEntropy, distill)
};

// Value fills in the manner of oneDNN benchdnn: each chosen so that the exact answer is well
// conditioned (or known) while a kernel's typical mistake shows. Their names double as the flags
// of golden vectors.
enum class Fill : std::uint8_t {
  Normal,           // N(0, 3^2)
  MeanShifted,      // per slice mean +-U[1e3, 1e4], spread U[0.5, 4] (pytorch#51102's bug class)
  NearExpOverflow,  // 88.5 + U[-3, 0.6]: exp overflows binary32 above ~88.72
  VeryNegative,     // -1e7 entries and whole slices around -1e7 beside normal ones
  IntegerTies,      // integers in [-2, 2]: ties everywhere
  NonFinite,        // slices with -inf, NaN or +inf at random places, or all -inf
  AllEqual,         // every slice constant (uniform softmax, zero variance)
  EpsDominated,     // N(0, 1e-6): variance far below epsilon
  ConstantChannels, // half of the slices constant, the rest normal (zero-variance channels)
};
const char* fillName(Fill f);

// Targets of crossEntropy: non-negative weights.
enum class TargetFill : std::uint8_t {
  Weights,       // U[0, 2] each: slices do not sum to one
  OneHot,        // one 1 per slice
  Sparse,        // mostly zeros, a few U[0, 3]
  Distribution,  // normalized to sum to one (as binary32)
};
const char* targetFillName(TargetFill t);

// topKMask's k, relative to the row length.
enum class KChoice : std::uint8_t { One, Small, Half, AllCols, Zero, MoreThanCols };

// Malformed calls: both tapes must return the same error string.
enum class Invalid : std::uint8_t {
  None,
  InvalidId,        // a tensor argument names a node past the tape
  ShapeMismatch,    // the declared shape differs from the leaf's
  AxisOutOfBounds,  // axis >= rank (crossEntropy, distill)
  BadDims,          // seqLen = 0 (layerNorm), a zero spatial dim (batchNorm)
  SeedMismatch,     // the backward seed has the wrong shape
};
const char* invalidName(Invalid i);

struct CaseParams {
  Shape shape;                 // s; [seqLen, embedDim]; channels :: spatial
  std::uint64_t axis = 0;      // AxisSlices
  KChoice k = KChoice::One;    // topKMask
  Fill fill = Fill::Normal;
  TargetFill target = TargetFill::Weights;
  double epsilon = kNormalizationEpsilon;
  bool mean = true;            // crossEntropy
  std::uint32_t noGrad = 0;    // bit i set: leaf i does not require grad
  Invalid invalid = Invalid::None;
  std::uint64_t valueSeed = 0; // the values are a function of this and the rest
};

// One line for reports: "[4,33] fill=MeanShifted k=Half eps=1e-05 ...".
std::string describe(const CaseParams& p);

}  // namespace tapecheck::conformance
