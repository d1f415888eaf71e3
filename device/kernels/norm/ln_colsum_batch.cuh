// layer_norm_bwd's column sums as the fused row passes keep them (ln_bwd_fused.cuh,
// ln_bwd_cluster.cuh): dgamma[j] = sum_r dy*xhat, dbeta[j] = sum_r dy. A thread holds the same
// columns in every row it visits, so it keeps one double accumulator per sum and column, in
// shared memory, laid out [sum][unit][component][thread] so that a warp's accesses are
// consecutive doubles (16 or more doubles a thread do not fit its registers at full
// occupancy).
//
// Batched (block rows and clusters): a row's terms are first added in float registers,
// fmaf(dy, xhat, t) and t + dy, and every `every` rows the batch is added to the double
// accumulators. Updating the accumulators with each row's exact product in double would read
// and write 16 doubles a thread a row through shared memory, on the path between a row's loads
// and its barrier, and the kernels would wait on shared memory (short-scoreboard stalls).
//
// Accuracy: a batch of at most kLnBatchRowsMax rows is at most that many float roundings, each
// within 2^-24 of the batch's sum of magnitudes; the batches add in double, and the result
// rounds once to float. So a column sum is within (kLnBatchRowsMax + 1) * 2^-24 of the sum of
// its terms' magnitudes (device/tests/gpu_ln_colsum_tests.cpp holds the kernels to that),
// where exact products gave 2^-24: far inside the conformance budget of layerNorm (32 ulps of
// a floor at least the sum of |dy * xhat|, conformance/src/ops/floor_support.cpp).
//
// Unbatched (warp tiles): the exact product in double, a row at a time; with their rows' slots
// a warp's batches would cost registers those tiles do not have.
#pragma once

namespace tapecheck_cuda {

// Rows a batch: blocks of up to 512 threads (two or more a multiprocessor), and 1024-thread
// blocks and clusters.
// 4K columns: 0.927-0.934 of copy speed with 4 rows, 0.901-0.914 with 8 (CHANGELOG 1.9.6).
// 8K (1024 threads): 0.829-0.831 with 4 rows, 0.846-0.857 with 8 (CHANGELOG 1.9.6).
constexpr unsigned kLnBatchRowsNarrow = 4;
constexpr unsigned kLnBatchRowsWide = 8;
constexpr unsigned kLnBatchRowsMax = kLnBatchRowsWide;

template <int N, int V, bool kBatched>
struct ColumnSums {
  double* acc;    // [2][N][V][blockDim.x] in shared memory
  unsigned left;  // rows until the batch is added
  float batch[2][N][V];

  __device__ double& at(int s, int i, int k) {
    return acc[((static_cast<unsigned>(s) * N + i) * V + k) * blockDim.x + threadIdx.x];
  }

  // `every`: rows a batch, as row_done is given it.
  __device__ void start(double* shared, unsigned every) {
    acc = shared;
    left = every;
#pragma unroll
    for (int i = 0; i < N; ++i) {
#pragma unroll
      for (int k = 0; k < V; ++k) {
        at(0, i, k) = 0.0;
        at(1, i, k) = 0.0;
        batch[0][i][k] = batch[1][i][k] = 0.0f;
      }
    }
  }

  // Unit i's terms of the current row.
  __device__ void add(int i, const float (&d)[V], const float (&h)[V]) {
#pragma unroll
    for (int k = 0; k < V; ++k) {
      if constexpr (kBatched) {
        batch[0][i][k] = fmaf(d[k], h[k], batch[0][i][k]);
        batch[1][i][k] += d[k];
      } else {
        const double dd = static_cast<double>(d[k]);
        at(0, i, k) = fma(dd, static_cast<double>(h[k]), at(0, i, k));  // exact product
        at(1, i, k) += dd;
      }
    }
  }

  // The batch into the accumulators.
  __device__ void flush() {
    if constexpr (kBatched) {
#pragma unroll
      for (int i = 0; i < N; ++i) {
#pragma unroll
        for (int k = 0; k < V; ++k) {
          at(0, i, k) += static_cast<double>(batch[0][i][k]);
          at(1, i, k) += static_cast<double>(batch[1][i][k]);
          batch[0][i][k] = batch[1][i][k] = 0.0f;
        }
      }
    }
  }

  // After every row the thread visits (block-uniform: the same rows for every thread).
  __device__ void row_done(unsigned every) {
    if constexpr (kBatched) {
      if (--left == 0) {
        flush();
        left = every;
      }
    }
  }
};

}  // namespace tapecheck_cuda
