// The reference Backend (see tapecheck/backend.h): Eigen vectors of Scalar and the spec's
// formulas from the headers beside this one. Tape<EigenBackend<Scalar>> is the reference tape.
#pragma once

#include "tapecheck/reference/cross_entropy.h"
#include "tapecheck/reference/normalization.h"
#include "tapecheck/reference/softmax.h"
#include "tapecheck/reference/topk_mask.h"
#include "tapecheck/tape.h"

#include <string>
#include <vector>

namespace tapecheck::reference {

template <class Scalar>
class EigenBackend {
 public:
  using Buffer = Vec<Scalar>;

  EigenBackend() { prepareScalar<Scalar>(); }

  Dim count(const Buffer& b) const { return static_cast<Dim>(b.size()); }
  Result<Buffer> copy(const Buffer& b) const { return Buffer(b); }
  Result<Buffer> filled(Dim n, double v) const {
    return Buffer(Buffer::Constant(static_cast<Eigen::Index>(n), ScalarTraits<Scalar>::fromDouble(v)));
  }
  Result<Buffer> add(const Buffer& a, const Buffer& b) const { return Buffer(a + b); }
  Result<Buffer> fromHost(const std::vector<double>& values) const {
    Buffer b(static_cast<Eigen::Index>(values.size()));
    for (std::size_t i = 0; i < values.size(); ++i)
      b(static_cast<Eigen::Index>(i)) = ScalarTraits<Scalar>::fromDouble(values[i]);
    return b;
  }
  // Rounded to nearest binary64.
  std::vector<double> toHost(const Buffer& b) const {
    std::vector<double> out(static_cast<std::size_t>(b.size()));
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = ScalarTraits<Scalar>::toDouble(b(static_cast<Eigen::Index>(i)));
    return out;
  }
  std::string description() const { return std::string("reference-") + ScalarTraits<Scalar>::name; }

  Result<Buffer> softmaxFwd(RowFold f, const Buffer& x) const {
    return softmaxAxis(AxisFold{f.rows, f.cols, 1}, x);
  }
  Result<Buffer> softmaxBwd(RowFold f, const Buffer& y, const Buffer& dy) const {
    return softmaxBackward(f, y, dy);
  }
  Result<Buffer> logSoftmaxFwd(RowFold f, const Buffer& x) const {
    return logSoftmaxAxis(AxisFold{f.rows, f.cols, 1}, x);
  }
  Result<Buffer> logSoftmaxBwd(RowFold f, const Buffer& y, const Buffer& dy) const {
    return logSoftmaxBackward(f, y, dy);
  }
  Result<Buffer> topkMask(RowFold f, std::uint32_t k, const Buffer& x) const {
    return reference::topkMask(f, k, x);
  }
  Result<NormForward<Buffer>> layerNormFwd(RowFold f, double eps, const Buffer& x,
                                           const Buffer& gamma, const Buffer& beta) const {
    return layerNormForward(f, eps, x, gamma, beta);
  }
  Result<NormBackward<Buffer>> layerNormBwd(RowFold f, const Buffer& dy, const Buffer& xhat,
                                            const Buffer& invStd, const Buffer& gamma) const {
    return layerNormBackward(f, dy, xhat, invStd, gamma);
  }
  Result<NormForward<Buffer>> batchNormFwd(RowFold f, double eps, const Buffer& x,
                                           const Buffer& gamma, const Buffer& beta) const {
    return batchNormForward(f, eps, x, gamma, beta);
  }
  Result<NormBackward<Buffer>> batchNormBwd(RowFold f, const Buffer& dy, const Buffer& xhat,
                                            const Buffer& invStd, const Buffer& gamma) const {
    return batchNormBackward(f, dy, xhat, invStd, gamma);
  }
  Result<CrossEntropyForward<Buffer>> crossEntropyFwd(AxisFold f, bool mean, const Buffer& logits,
                                                      const Buffer& target) const {
    return crossEntropyForward(f, mean, logits, target);
  }
  Result<CrossEntropyBackward<Buffer>> crossEntropyBwd(AxisFold f, bool mean, const Buffer& dloss,
                                                       const Buffer& logp,
                                                       const Buffer& target) const {
    return crossEntropyBackward(f, mean, dloss, logp, target);
  }
  Result<Buffer> softmaxAxis(AxisFold f, const Buffer& x) const {
    return reference::softmaxAxis(f, x);
  }
};

template <class Scalar>
using ReferenceTape = Tape<EigenBackend<Scalar>>;

}  // namespace tapecheck::reference
