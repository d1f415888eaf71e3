// Small helpers for the golden-vector case definitions of the op files: exact binary32 inputs,
// special values, and the validation-order cases every rowOpLast operation shares.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "tapecheck/errors.h"
#include "tapecheck/vectors/corpus.h"

namespace tapecheck::conformance::ops {

using vectors::CaseDef;
using vectors::CorpusFile;

inline const double kNaN = std::numeric_limits<double>::quiet_NaN();
inline const double kInf = std::numeric_limits<double>::infinity();

// `n` deterministic values center + j * quantum, j uniform in [-half, half], drawn with
// splitmix64 from `seed` (integer arithmetic only, so identical on every platform). With
// quantum a power of two and |values| < 2^24 * quantum they are exact in binary32.
std::vector<double> grid(std::size_t n, std::uint64_t seed, double center, std::int64_t half,
                         double quantum);

// start, start + step, ..., n values.
std::vector<double> ramp(std::size_t n, double start, double step);

std::vector<double> filled(std::size_t n, double v);

std::vector<double> concat(std::vector<double> a, const std::vector<double>& b);

// rows x cols one-hot rows: row r has a 1 at hot[r].
std::vector<double> oneHot(std::size_t rows, std::size_t cols, const std::vector<std::size_t>& hot);

// The validation cases of docs/spec.md's rowOpLast (softmaxLast, logSoftmaxLast, topKMask): invalid
// ids, shape mismatches, rows and cols checked against UInt32 before the lookup and the element
// count at it, seed shape mismatches, empty tensors whose dimensions the lookup validates. `attrs` adds the op's other attributes (k for topKMask).
std::vector<CaseDef> rowOpLastErrorCases(const std::function<void(CaseDef&)>& attrs);

// The softmax family's files (softmax_family_corpus.cpp): softmaxLast's, and logSoftmaxLast's
// before it adds its own cases. `op` is "softmaxLast" or "logSoftmaxLast".
std::vector<CorpusFile> softmaxFamilyCorpus(const std::string& op);

}  // namespace tapecheck::conformance::ops
