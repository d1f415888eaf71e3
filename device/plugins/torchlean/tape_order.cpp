// TorchLean's tape compositions, line for line: each statement below is one `let` of the Lean
// definition named above it, in the same order, on the same primitive. Intermediate buffers are
// the plugin's (TorchLean allocates them as Lean-owned buffers and releases them after backward).
#include "tape_order.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "primitives.h"

namespace tapecheck::torchlean {
namespace {

using std::size_t;
using std::uint32_t;

// Device buffers for one call's intermediates, stream-ordered on the legacy default stream where
// TorchLean's kernels run, so that freeing them waits for nothing on the host.
class Workspace {
 public:
  Workspace() = default;
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace() {
    for (void* block : blocks_) cudaFreeAsync(block, nullptr);
  }

  float* floats(size_t n) {
    void* block = nullptr;
    const cudaError_t e = cudaMallocAsync(&block, n * sizeof(float), nullptr);
    if (e != cudaSuccess)
      throw std::runtime_error(std::string("cudaMallocAsync of an intermediate buffer failed: ") +
                               cudaGetErrorString(e));
    blocks_.push_back(block);
    return static_cast<float*>(block);
  }

 private:
  std::vector<void*> blocks_;
};

size_t count(uint32_t rows, uint32_t cols) { return size_t{rows} * size_t{cols}; }

// `1.0 / Float.ofNat n` in Lean: binary64.
double reciprocal(uint32_t n) { return 1.0 / static_cast<double>(n); }

}  // namespace

// rowSoftmaxForward
void rowSoftmaxForward(const float* x, float* y, uint32_t rows, uint32_t cols) {
  const size_t n = count(rows, cols);
  Workspace w;
  float* rowMax = w.floats(rows);
  buffer::reduceMaxByRow(x, rowMax, rows, cols);
  float* maxB = w.floats(n);
  buffer::broadcastVecToCols(rowMax, maxB, rows, cols);
  float* shifted = w.floats(n);
  buffer::sub(x, maxB, shifted, n);
  float* ex = w.floats(n);
  buffer::exp(shifted, ex, n);
  float* rowSum = w.floats(rows);
  buffer::reduceSumByRow(ex, rowSum, rows, cols);
  float* sumB = w.floats(n);
  buffer::broadcastVecToCols(rowSum, sumB, rows, cols);
  buffer::div(ex, sumB, y, n);
}

// rowSoftmaxBwd: dX = y * (dY - sum(dY * y, axis = 1))
void rowSoftmaxBwd(const float* y, const float* dLdy, float* dx, uint32_t rows, uint32_t cols) {
  const size_t n = count(rows, cols);
  Workspace w;
  float* dy_y = w.floats(n);
  buffer::mul(dLdy, y, dy_y, n);
  float* dot = w.floats(rows);
  buffer::reduceSumByRow(dy_y, dot, rows, cols);
  float* dotB = w.floats(n);
  buffer::broadcastVecToCols(dot, dotB, rows, cols);
  float* centered = w.floats(n);
  buffer::sub(dLdy, dotB, centered, n);
  buffer::mul(y, centered, dx, n);
}

// rowLogSoftmaxForward
void rowLogSoftmaxForward(const float* x, float* y, uint32_t rows, uint32_t cols) {
  const size_t n = count(rows, cols);
  Workspace w;
  float* rowMax = w.floats(rows);
  buffer::reduceMaxByRow(x, rowMax, rows, cols);
  float* maxB = w.floats(n);
  buffer::broadcastVecToCols(rowMax, maxB, rows, cols);
  float* shifted = w.floats(n);
  buffer::sub(x, maxB, shifted, n);
  float* ex = w.floats(n);
  buffer::exp(shifted, ex, n);
  float* rowSum = w.floats(rows);
  buffer::reduceSumByRow(ex, rowSum, rows, cols);
  float* logSum = w.floats(rows);
  buffer::log(rowSum, logSum, rows);
  float* logSumB = w.floats(n);
  buffer::broadcastVecToCols(logSum, logSumB, rows, cols);
  buffer::sub(shifted, logSumB, y, n);
}

// rowLogSoftmaxBwd: dX = dY - exp(y) * sum(dY, axis = 1)
void rowLogSoftmaxBwd(const float* y, const float* dLdy, float* dx, uint32_t rows,
                      uint32_t cols) {
  const size_t n = count(rows, cols);
  Workspace w;
  float* probs = w.floats(n);
  buffer::exp(y, probs, n);
  float* rowSum = w.floats(rows);
  buffer::reduceSumByRow(dLdy, rowSum, rows, cols);
  float* sumB = w.floats(n);
  buffer::broadcastVecToCols(rowSum, sumB, rows, cols);
  float* scaled = w.floats(n);
  buffer::mul(probs, sumB, scaled, n);
  buffer::sub(dLdy, scaled, dx, n);
}

// Tape.layerNorm, forward: Buffer.layerNormFwd x gamma beta rows cols invCols eps
void layerNormForward(const float* x, const float* gamma, const float* beta, float* y,
                      float* xHat, float* invStd, uint32_t rows, uint32_t cols, float epsilon) {
  buffer::layerNormFwd(x, gamma, beta, y, xHat, invStd, rows, cols, reciprocal(cols), epsilon);
}

// Tape.layerNorm, backward: Buffer.layerNormBwd dLdy xHat invStd gamma rows cols
//   (Float.ofNat embedDim) invCols
void layerNormBackward(const float* dLdy, const float* xHat, const float* invStd,
                       const float* gamma, float* dx, float* dGamma, float* dBeta, uint32_t rows,
                       uint32_t cols) {
  buffer::layerNormBwd(dLdy, xHat, invStd, gamma, dx, dGamma, dBeta, rows, cols,
                       static_cast<double>(cols), reciprocal(cols));
  // Not the tape's: what TorchLean's allocator hook does between training steps (primitives.h).
  buffer::flushScratch();
}

// Tape.batchnormChannelFirst, forward, with rows = channels and cols = height * width
void batchNormForward(const float* x, const float* gamma, const float* beta, float* y,
                      float* xHat, float* invStd, uint32_t channels, uint32_t spatial,
                      float epsilon) {
  const uint32_t rows = channels, cols = spatial;
  const size_t n = count(rows, cols);
  const double invCols = reciprocal(cols);
  Workspace w;
  float* sum1 = w.floats(rows);
  buffer::reduceSumByRow(x, sum1, rows, cols);
  float* mean = w.floats(rows);
  buffer::scale(sum1, mean, rows, invCols);
  float* meanB = w.floats(n);
  buffer::broadcastVecToCols(mean, meanB, rows, cols);
  float* centered = w.floats(n);
  buffer::sub(x, meanB, centered, n);
  float* centered2 = w.floats(n);
  buffer::mul(centered, centered, centered2, n);
  float* varSum = w.floats(rows);
  buffer::reduceSumByRow(centered2, varSum, rows, cols);
  float* var = w.floats(rows);
  buffer::scale(varSum, var, rows, invCols);
  float* epsVec = w.floats(rows);
  buffer::full(epsVec, rows, epsilon);
  float* varEps = w.floats(rows);
  buffer::add(var, epsVec, varEps, rows);
  float* stdev = w.floats(rows);
  buffer::sqrt(varEps, stdev, rows);
  float* stdB = w.floats(n);
  buffer::broadcastVecToCols(stdev, stdB, rows, cols);
  buffer::div(centered, stdB, xHat, n);
  float* gammaB = w.floats(n);
  buffer::broadcastVecToCols(gamma, gammaB, rows, cols);
  float* betaB = w.floats(n);
  buffer::broadcastVecToCols(beta, betaB, rows, cols);
  float* xHatGamma = w.floats(n);
  buffer::mul(xHat, gammaB, xHatGamma, n);
  buffer::add(xHatGamma, betaB, y, n);
  // The backward pass's `let invStd := Buffer.inv std`, computed here for the ABI.
  buffer::inv(stdev, invStd, rows);
}

// Tape.batchnormChannelFirst, backward
void batchNormBackward(const float* dLdy, const float* xHat, const float* invStd,
                       const float* gamma, float* dx, float* dGamma, float* dBeta,
                       uint32_t channels, uint32_t spatial) {
  const uint32_t rows = channels, cols = spatial;
  const size_t n = count(rows, cols);
  const double invCols = reciprocal(cols);
  Workspace w;
  // The forward pass's gammaB, which the tape keeps and the ABI does not hand over.
  float* gammaB = w.floats(n);
  buffer::broadcastVecToCols(gamma, gammaB, rows, cols);
  buffer::reduceSumByRow(dLdy, dBeta, rows, cols);
  float* dGammaPointwise = w.floats(n);
  buffer::mul(dLdy, xHat, dGammaPointwise, n);
  buffer::reduceSumByRow(dGammaPointwise, dGamma, rows, cols);
  float* dXhat = w.floats(n);
  buffer::mul(dLdy, gammaB, dXhat, n);
  float* sumDXhat = w.floats(rows);
  buffer::reduceSumByRow(dXhat, sumDXhat, rows, cols);
  float* dXhatXhat = w.floats(n);
  buffer::mul(dXhat, xHat, dXhatXhat, n);
  float* sumDXhatXhat = w.floats(rows);
  buffer::reduceSumByRow(dXhatXhat, sumDXhatXhat, rows, cols);
  float* sum1B = w.floats(n);
  buffer::broadcastVecToCols(sumDXhat, sum1B, rows, cols);
  float* sum2B = w.floats(n);
  buffer::broadcastVecToCols(sumDXhatXhat, sum2B, rows, cols);
  float* scaledDXhat = w.floats(n);
  buffer::scale(dXhat, scaledDXhat, n, static_cast<double>(cols));
  float* centeredDXhat = w.floats(n);
  buffer::sub(scaledDXhat, sum1B, centeredDXhat, n);
  float* xHatSum2 = w.floats(n);
  buffer::mul(xHat, sum2B, xHatSum2, n);
  float* term = w.floats(n);
  buffer::sub(centeredDXhat, xHatSum2, term, n);
  float* invStdB = w.floats(n);
  buffer::broadcastVecToCols(invStd, invStdB, rows, cols);
  float* termInv = w.floats(n);
  buffer::mul(term, invStdB, termInv, n);
  buffer::scale(termInv, dx, n, invCols);
}

}  // namespace tapecheck::torchlean
