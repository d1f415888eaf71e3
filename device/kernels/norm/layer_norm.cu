// layerNorm forward and backward (docs/spec.md): rows of embedDim values, gamma/beta per column.
// The row passes run on the row tiles of norm_tiles.cuh (the generic engine is their fallback).
// The per-column sums dgamma/dbeta of the backward pass are fused into the row pass for rows
// up to 8192 floats (ln_bwd_fused.cuh) and, across a cluster of up to 8 blocks, up to 65536
// (ln_bwd_cluster.cuh, which also takes rows of 4097-8192 columns of 16-byte units); longer
// rows use a separate column reduction. All add in an order fixed by (rows, cols), so they are
// repeatable bit for bit.
#include "entry.h"
#include "norm/norm_math.cuh"
#include "norm/ln_bwd_cluster.cuh"
#include "norm/ln_bwd_fused.cuh"
#include "norm/norm_forward.cuh"
#include "norm/norm_tiles.cuh"
#include "common/row_engine.cuh"

namespace tapecheck_cuda {
namespace {

struct LayerNormBwd {
  static constexpr int kStages = 1;
  static constexpr int kWidth = 2;
  static constexpr bool kGlobal = false;
  __host__ __device__ static constexpr Red kind(int) { return Red::Sum; }
  struct Row {
    double inv_std, mean_g, mean_gx;
  };
  struct Elem {
    float dy, xhat, gamma;
  };
  const float* dy;
  const float* xhat;
  const float* inv_std;
  const float* gamma;
  float* dx;
  uint32_t cols;

  __device__ size_t row_base(size_t row) const { return row * cols; }
  __device__ size_t stride() const { return 1; }
  __device__ Row row_begin(size_t row) const { return Row{static_cast<double>(inv_std[row]), 0.0, 0.0}; }
  __device__ Elem load(const Row&, size_t idx, uint32_t j) const {
    return Elem{dy[idx], xhat[idx], gamma[j]};
  }
  __device__ Acc<2> value(int, const Row&, const Elem& e, uint32_t) const {
    const double g = static_cast<double>(e.dy) * e.gamma;  // exact: float * float fits a double
    return Acc<2>{{g, g * e.xhat}};
  }
  __device__ void stage_done(int, Row& R, const Acc<2>& a) const {
    const double n = static_cast<double>(cols);
    R.mean_g = a.v[0] / n;
    R.mean_gx = a.v[1] / n;
  }
  __device__ void row_done(const Row&, size_t) const {}
  __device__ double write(const Row& R, const Elem& e, size_t idx, uint32_t) const {
    const double g = static_cast<double>(e.dy) * e.gamma;
    dx[idx] = static_cast<float>(R.inv_std * ((g - R.mean_g) - static_cast<double>(e.xhat) * R.mean_gx));
    return 0.0;
  }
};

// Column sums over rows: dgamma[j] = sum_r dy*xhat, dbeta[j] = sum_r dy.
// A block is 32 columns x 8 row lanes; blockIdx.y picks a fixed chunk of rows. Each thread
// sums its rows in order, the 8 lanes are added in order, and (when there are several chunks)
// colsum_finish adds the chunks in order.
constexpr unsigned kColTile = 32;
constexpr unsigned kColLanes = kBlock / kColTile;

__global__ void __launch_bounds__(kBlock)
    colsum_chunks(const float* dy, const float* xhat, size_t rows, uint32_t cols,
                  size_t rows_per_chunk, double2* partial, float* dgamma, float* dbeta) {
  __shared__ double2 lanes[kColLanes][kColTile];
  const unsigned tx = threadIdx.x % kColTile;
  const unsigned ty = threadIdx.x / kColTile;
  const size_t j = static_cast<size_t>(blockIdx.x) * kColTile + tx;
  const size_t r0 = static_cast<size_t>(blockIdx.y) * rows_per_chunk;
  const size_t r1 = r0 + rows_per_chunk < rows ? r0 + rows_per_chunk : rows;
  double sx = 0.0, s = 0.0;
  if (j < cols) {
    for (size_t r = r0 + ty; r < r1; r += kColLanes) {
      const size_t idx = r * cols + j;
      const double d = dy[idx];
      sx += d * xhat[idx];
      s += d;
    }
  }
  lanes[ty][tx] = make_double2(sx, s);
  __syncthreads();
  if (ty == 0 && j < cols) {
    double2 t = lanes[0][tx];
    for (unsigned l = 1; l < kColLanes; ++l) {
      t.x += lanes[l][tx].x;
      t.y += lanes[l][tx].y;
    }
    if (partial != nullptr) {
      partial[static_cast<size_t>(blockIdx.y) * cols + j] = t;
    } else {
      dgamma[j] = static_cast<float>(t.x);
      dbeta[j] = static_cast<float>(t.y);
    }
  }
}

__global__ void __launch_bounds__(kBlock)
    colsum_finish(const double2* partial, size_t chunks, uint32_t cols, float* dgamma, float* dbeta) {
  for (size_t j = static_cast<size_t>(blockIdx.x) * kBlock + threadIdx.x; j < cols;
       j += static_cast<size_t>(gridDim.x) * kBlock) {
    double sx = 0.0, s = 0.0;
    for (size_t c = 0; c < chunks; ++c) {
      const double2 p = partial[c * cols + j];
      sx += p.x;
      s += p.y;
    }
    dgamma[j] = static_cast<float>(sx);
    dbeta[j] = static_cast<float>(s);
  }
}

int column_sums(cudaStream_t s, Scratch& scratch, size_t rows, uint32_t cols, const float* dy,
                const float* xhat, float* dgamma, float* dbeta) {
  const size_t tiles = ceil_div(cols, kColTile);
  // Enough chunks to fill the GPU (about 2048 blocks), each of at least 32 rows, with the
  // partials kept under 256 MiB. Depends only on (rows, cols).
  size_t chunks = ceil_div(2048, tiles);
  const size_t by_rows = ceil_div(rows, 32);
  const size_t by_memory = (size_t{1} << 24) / cols;
  if (chunks > by_rows) chunks = by_rows;
  if (chunks > by_memory) chunks = by_memory;
  if (chunks < 1) chunks = 1;
  const size_t rows_per_chunk = ceil_div(rows, chunks);
  chunks = ceil_div(rows, rows_per_chunk);

  double2* partial = nullptr;
  if (chunks > 1) {
    partial = scratch.get<double2>(chunks * cols);
    if (partial == nullptr) return 1;
  }
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(chunks));
  colsum_chunks<<<grid, kBlock, 0, s>>>(dy, xhat, rows, cols, rows_per_chunk, partial, dgamma, dbeta);
  if (partial != nullptr) {
    colsum_finish<<<grid_for(cols, kBlock), kBlock, 0, s>>>(partial, chunks, cols, dgamma, dbeta);
  }
  return launch_status();
}

}  // namespace

int layer_norm_fwd(void* stream, uint32_t rows, uint32_t cols, float epsilon, const float* x,
                   const float* gamma, const float* beta, float* y, float* xhat, float* inv_std) {
  return norm_forward<false>(stream, rows, cols, epsilon, x, gamma, beta, y, xhat, inv_std);
}

int layer_norm_bwd(void* stream, uint32_t rows, uint32_t cols, const float* dy, const float* xhat,
                   const float* inv_std, const float* gamma, float* dx, float* dgamma,
                   float* dbeta) {
  LayerNormBwd op{};
  op.dy = dy;
  op.xhat = xhat;
  op.inv_std = inv_std;
  op.gamma = gamma;
  op.dx = dx;
  op.cols = cols;
  const cudaStream_t s = as_stream(stream);
  Scratch scratch(s);
  // Rows of 4097-8192 columns of 16-byte units: across clusters of 2 blocks, ahead of the fused
  // block rows (ln_bwd_cluster.cuh, kLnShortClusterBlocks).
  if (ln_short_cluster_takes(cols) &&
      ln_bwd_clustered(s, scratch, rows, cols, dy, xhat, inv_std, gamma, dx, dgamma, dbeta)) {
    return launch_status();
  }
  // Rows up to 8192 floats: dx and the column sums in one pass (ln_bwd_fused.cuh).
  if (ln_bwd_fused_tiled(s, scratch, rows, cols, dy, xhat, inv_std, gamma, dx, dgamma, dbeta)) {
    return launch_status();
  }
  // Rows up to 8 blocks' registers (64K floats): the same, across a cluster (ln_bwd_cluster.cuh).
  if (ln_bwd_clustered(s, scratch, rows, cols, dy, xhat, inv_std, gamma, dx, dgamma, dbeta)) {
    return launch_status();
  }
  if (!norm_bwd_tiled<false>(s, rows, cols, dy, xhat, inv_std, gamma, dx, nullptr, nullptr)) {
    if (run_rows(op, rows, cols, 1, s, scratch) != 0) return 1;
  } else if (launch_status() != 0) {
    return 1;
  }
  return column_sums(s, scratch, rows, cols, dy, xhat, dgamma, dbeta);
}

}  // namespace tapecheck_cuda
