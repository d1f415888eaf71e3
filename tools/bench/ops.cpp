// The benchmarked entry points (see ops.h). Buffer roles per op, in big[0..3]:
//   *_fwd of softmax, log_softmax, topk_mask   x | y (mask)
//   softmax_bwd, log_softmax_bwd               y | dy | dx
//   layer_norm_fwd, batch_norm_fwd             x | y | xhat          (+ gamma, beta, inv_std)
//   layer_norm_bwd, batch_norm_bwd             dy | xhat | dx        (+ inv_std, gamma, dgamma, dbeta)
//   cross_entropy_fwd                          logits | target | logp (+ loss)
//   cross_entropy_bwd                          logp | target | dlogits | dtarget (+ dloss)
#include "ops.h"

#include "fill.h"

namespace tapecheck::bench {

namespace {

constexpr float kEpsilon = 1e-5f;

// A fixed seed per buffer role, so every run and every table sees the same numbers.
enum Seed : std::uint64_t {
  kSeedX = 1,
  kSeedY,
  kSeedDy,
  kSeedXhat,
  kSeedGamma,
  kSeedBeta,
  kSeedInvStd,
  kSeedTarget,
  kSeedLogp,
};

// Fills one buffer, chaining the first error.
struct Filler {
  cudaStream_t stream;
  cudaError_t status = cudaSuccess;
  void operator()(float* p, std::size_t n, std::uint64_t seed, float lo, float hi) {
    if (status == cudaSuccess) status = fillUniform(stream, p, n, seed, lo, hi);
  }
};

}  // namespace

const std::vector<BenchKernel>& allKernels() {
  static const std::vector<BenchKernel> ops = {
      {Op::SoftmaxFwd, "softmax_fwd", "softmax", 1, 1, false, "reads x, writes y"},
      {Op::SoftmaxBwd, "softmax_bwd", "softmax", 2, 1, false, "reads y, dy, writes dx"},
      {Op::LogSoftmaxFwd, "log_softmax_fwd", "log_softmax", 1, 1, false, "reads x, writes y"},
      {Op::LogSoftmaxBwd, "log_softmax_bwd", "log_softmax", 2, 1, false, "reads y, dy, writes dx"},
      {Op::TopkMask, "topk_mask", "topk_mask", 1, 1, true, "reads x, writes mask"},
      {Op::LayerNormFwd, "layer_norm_fwd", "layer_norm", 1, 2, false,
       "reads x, writes y, xhat (gamma, beta, inv_std not counted)"},
      {Op::LayerNormBwd, "layer_norm_bwd", "layer_norm", 2, 1, false,
       "reads dy, xhat, writes dx (inv_std, gamma, dgamma, dbeta not counted)"},
      {Op::BatchNormFwd, "batch_norm_fwd", "batch_norm", 1, 2, false,
       "reads x, writes y, xhat (gamma, beta, inv_std not counted)"},
      {Op::BatchNormBwd, "batch_norm_bwd", "batch_norm", 2, 1, false,
       "reads dy, xhat, writes dx (inv_std, gamma, dgamma, dbeta not counted)"},
      {Op::CrossEntropyFwd, "cross_entropy_fwd", "cross_entropy", 2, 1, false,
       "reads logits, target, writes logp (loss not counted)"},
      {Op::CrossEntropyBwd, "cross_entropy_bwd", "cross_entropy", 2, 2, false,
       "reads logp, target, writes dlogits, dtarget (dloss not counted)"},
  };
  return ops;
}

cudaError_t fillInputs(Op op, const Shape& shape, const DeviceBuffers& b, cudaStream_t stream) {
  const std::size_t n = shape.elements();
  const std::size_t rows = shape.rows;
  const std::size_t cols = shape.cols;
  Filler fill{stream};
  switch (op) {
    case Op::SoftmaxFwd:
    case Op::LogSoftmaxFwd:
    case Op::TopkMask:
      fill(b.big[0], n, kSeedX, -4.0f, 4.0f);
      break;
    case Op::SoftmaxBwd:
      fill(b.big[0], n, kSeedY, 0.0f, 1.0f);  // probabilities
      fill(b.big[1], n, kSeedDy, -1.0f, 1.0f);
      break;
    case Op::LogSoftmaxBwd:
      fill(b.big[0], n, kSeedY, -8.0f, 0.0f);  // log-probabilities
      fill(b.big[1], n, kSeedDy, -1.0f, 1.0f);
      break;
    case Op::LayerNormFwd:
    case Op::BatchNormFwd: {
      const std::size_t params = op == Op::LayerNormFwd ? cols : rows;
      fill(b.big[0], n, kSeedX, -4.0f, 4.0f);
      fill(b.gamma, params, kSeedGamma, 0.9f, 1.1f);
      fill(b.beta, params, kSeedBeta, -0.1f, 0.1f);
      break;
    }
    case Op::LayerNormBwd:
    case Op::BatchNormBwd: {
      const std::size_t params = op == Op::LayerNormBwd ? cols : rows;
      fill(b.big[0], n, kSeedDy, -1.0f, 1.0f);
      fill(b.big[1], n, kSeedXhat, -2.0f, 2.0f);
      fill(b.invStd, rows, kSeedInvStd, 0.5f, 2.0f);  // per row (layer) or channel (batch)
      fill(b.gamma, params, kSeedGamma, 0.9f, 1.1f);
      break;
    }
    case Op::CrossEntropyFwd:
      fill(b.big[0], n, kSeedX, -4.0f, 4.0f);
      fill(b.big[1], n, kSeedTarget, 0.0f, 1.0f);
      break;
    case Op::CrossEntropyBwd:
      fill(b.big[0], n, kSeedLogp, -8.0f, 0.0f);
      fill(b.big[1], n, kSeedTarget, 0.0f, 1.0f);
      fill(b.dloss, 1, 0, 1.0f, 1.0f);
      break;
  }
  return fill.status;
}

int callKernel(const tapecheck_kernels_v1& t, Op op, const Shape& s, const DeviceBuffers& b,
               cudaStream_t stream) {
  void* st = static_cast<void*>(stream);
  float* const* big = b.big;
  switch (op) {
    case Op::SoftmaxFwd:
      return t.softmax_fwd(st, s.rows, s.cols, big[0], big[1]);
    case Op::SoftmaxBwd:
      return t.softmax_bwd(st, s.rows, s.cols, big[0], big[1], big[2]);
    case Op::LogSoftmaxFwd:
      return t.log_softmax_fwd(st, s.rows, s.cols, big[0], big[1]);
    case Op::LogSoftmaxBwd:
      return t.log_softmax_bwd(st, s.rows, s.cols, big[0], big[1], big[2]);
    case Op::TopkMask:
      return t.topk_mask(st, s.rows, s.cols, s.k, big[0], big[1]);
    case Op::LayerNormFwd:
      return t.layer_norm_fwd(st, s.rows, s.cols, kEpsilon, big[0], b.gamma, b.beta, big[1],
                              big[2], b.invStd);
    case Op::LayerNormBwd:
      return t.layer_norm_bwd(st, s.rows, s.cols, big[0], big[1], b.invStd, b.gamma, big[2],
                              b.dgamma, b.dbeta);
    case Op::BatchNormFwd:
      return t.batch_norm_fwd(st, s.rows, s.cols, kEpsilon, big[0], b.gamma, b.beta, big[1],
                              big[2], b.invStd);
    case Op::BatchNormBwd:
      return t.batch_norm_bwd(st, s.rows, s.cols, big[0], big[1], b.invStd, b.gamma, big[2],
                              b.dgamma, b.dbeta);
    case Op::CrossEntropyFwd:
      return t.cross_entropy_fwd(st, s.rows, s.cols, 1u, 1u, big[0], big[1], b.loss, big[2]);
    case Op::CrossEntropyBwd:
      return t.cross_entropy_bwd(st, s.rows, s.cols, 1u, 1u, b.dloss, big[0], big[1], big[2],
                                 big[3]);
  }
  return -1;
}

}  // namespace tapecheck::bench
