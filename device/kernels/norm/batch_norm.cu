// batchNorm forward and backward (docs/spec.md): x is [channels, S]; each channel is one row of S
// values with its own scalar gamma[c] and beta[c]. The row tiles of norm_tiles.cuh run every
// shape (several short channels per warp, one block per long channel); the generic row engine
// below is kept only as their fallback.
#include "entry.h"
#include "norm/norm_forward.cuh"
#include "norm/norm_math.cuh"
#include "norm/norm_tiles.cuh"
#include "common/row_engine.cuh"

namespace tapecheck_cuda {
namespace {

// One pass gives the four sums: sum(g), sum(g * xhat) for dx and sum(dy), sum(dy * xhat) for
// dbeta[c], dgamma[c]. g = dy * gamma[c] is formed per element, as the spec writes it, so
// non-finite gammas behave exactly as the formula says (inf + -inf = NaN, 0 * inf = NaN).
struct BatchNormBwd {
  static constexpr int kStages = 1;
  static constexpr int kWidth = 4;
  static constexpr bool kGlobal = false;
  __host__ __device__ static constexpr Red kind(int) { return Red::Sum; }
  struct Row {
    double inv_std, gamma, mean_g, mean_gx, sum_dy, sum_dyx;
  };
  struct Elem {
    float dy, xhat;
  };
  const float* dy;
  const float* xhat;
  const float* inv_std;
  const float* gamma;
  float* dx;
  float* dgamma;
  float* dbeta;
  uint32_t cols;

  __device__ size_t row_base(size_t row) const { return row * cols; }
  __device__ size_t stride() const { return 1; }
  __device__ Row row_begin(size_t row) const {
    Row R{};
    R.inv_std = inv_std[row];
    R.gamma = gamma[row];
    return R;
  }
  __device__ Elem load(const Row&, size_t idx, uint32_t) const { return Elem{dy[idx], xhat[idx]}; }
  __device__ Acc<4> value(int, const Row& R, const Elem& e, uint32_t) const {
    const double d = e.dy;
    const double g = d * R.gamma;
    return Acc<4>{{g, g * e.xhat, d, d * e.xhat}};
  }
  __device__ void stage_done(int, Row& R, const Acc<4>& a) const {
    const double n = static_cast<double>(cols);
    R.mean_g = a.v[0] / n;
    R.mean_gx = a.v[1] / n;
    R.sum_dy = a.v[2];
    R.sum_dyx = a.v[3];
  }
  __device__ void row_done(const Row& R, size_t row) const {
    dgamma[row] = static_cast<float>(R.sum_dyx);
    dbeta[row] = static_cast<float>(R.sum_dy);
  }
  __device__ double write(const Row& R, const Elem& e, size_t idx, uint32_t) const {
    const double g = static_cast<double>(e.dy) * R.gamma;
    dx[idx] = static_cast<float>(R.inv_std * ((g - R.mean_g) - static_cast<double>(e.xhat) * R.mean_gx));
    return 0.0;
  }
};

}  // namespace

int batch_norm_fwd(void* stream, uint32_t channels, uint32_t spatial, float epsilon,
                   const float* x, const float* gamma, const float* beta, float* y, float* xhat,
                   float* inv_std) {
  return norm_forward<true>(stream, channels, spatial, epsilon, x, gamma, beta, y, xhat, inv_std);
}

int batch_norm_bwd(void* stream, uint32_t channels, uint32_t spatial, const float* dy,
                   const float* xhat, const float* inv_std, const float* gamma, float* dx,
                   float* dgamma, float* dbeta) {
  BatchNormBwd op{};
  op.dy = dy;
  op.xhat = xhat;
  op.inv_std = inv_std;
  op.gamma = gamma;
  op.dx = dx;
  op.dgamma = dgamma;
  op.dbeta = dbeta;
  op.cols = spatial;
  if (norm_bwd_tiled<true>(as_stream(stream), channels, spatial, dy, xhat, inv_std, gamma, dx,
                           dgamma, dbeta)) {
    return launch_status();
  }
  Scratch scratch(as_stream(stream));
  return run_rows(op, channels, spatial, 1, as_stream(stream), scratch);
}

}  // namespace tapecheck_cuda
