// layer_norm_bwd's column sums (dgamma[j] = sum_r dy*xhat, dbeta[j] = sum_r dy) of the built-in
// CUDA kernels, on shapes that reach every plan: the fused row pass of a warp or a block
// (device/kernels/norm/ln_bwd_fused.cuh), the fused pass across a cluster (ln_bwd_cluster.cuh,
// whose clusters each keep a partial of many rows), and the separate column kernel of the longest
// rows; each with 16-byte and element-wise loads. Block rows and clusters add their rows'
// terms in batches (ln_colsum_batch.cuh), so some shapes give a block or cluster several
// batches and a partial last one. A row dropped or added twice by a partial or a batch, or a
// partial or a batch lost, moves a sum by a whole term.
//
// The expectation is computed here in long double. The kernels add the terms of at most
// kFloatRows (device/kernels' kLnBatchRowsMax) of a thread's rows of a column in float, an fma
// a row: at most kFloatRows roundings, each within 2^-24 of that batch's magnitude. They add
// the batches in double and round once to float. So a sum must agree to (kFloatRows + 2) *
// 2^-24 of the sum of its terms' magnitudes (one 2^-24 for the rounding to float, one as the
// double additions' margin), far below one term. dx is checked too, against docs/spec.md's formula,
// to 2^-18 of its scale inv_std * (|g| + mean |g| + |xhat| mean |g*xhat|). The means of the
// magnitudes, not the magnitudes of the means: the row's two sums are rounded in float a unit
// at a time, so their error follows the terms' sizes even when the sums cancel (with
// |mean g| in the scale, a 5000 x 2048 call failed at 68 x 2^-24 of it, on dx arithmetic
// that kernels 1.9.6 did not change).
#include <catch2/catch.hpp>

#include "gpu_support.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

using namespace tapecheck::device;
using namespace tapecheck::device::testing;

namespace {

constexpr int kFloatRows = 8;
constexpr int kSumTolerancePow2 = -24;

// The bound above, for a sum whose terms' magnitudes add up to `magnitude`.
long double sumTolerance(long double magnitude) {
  return std::ldexp(magnitude, kSumTolerancePow2) * (kFloatRows + 2);
}

struct ColSumShape {
  std::uint32_t rows, cols;
  bool misaligned;  // inputs and outputs one float past a 16-byte boundary
};

}  // namespace

TEST_CASE("On a GPU, layer_norm_bwd's column sums keep every row once", "[gpu]") {
  auto kernels = cudaKernelsOrSkip();
  if (!kernels) return;
  const tapecheck_kernels_v1& table = *kernels->table;
  const std::vector<ColSumShape> shapes = {
      {1000, 32, false},   {300, 1000, false},  {200, 8192, false},  {201, 8192, false},
      {67, 8192, true},    {100, 8193, false},  {300, 16384, false}, {64, 16384, true},
      {200, 20000, false}, {100, 32768, false}, {70, 30001, false},  {40, 65536, false},
      {17, 65536, true},   {3, 100000, false},  {300, 6000, false},  {50, 4100, true},
      // Enough rows that every block or cluster adds two or more whole batches, most of them
      // a partial one too (grids of 528 / 264 blocks at 2K / 4K, batches of 4 rows; 132, 66
      // and 15 clusters at 8K, 16K and 64K, batches of 8).
      {5000, 2048, false}, {3000, 4096, false}, {2200, 8192, false}, {2000, 16384, false},
      {500, 65536, false},
  };
  std::size_t sums = 0;
  for (const ColSumShape& s : shapes) {
    const std::size_t n = std::size_t{s.rows} * s.cols, off = s.misaligned ? 1 : 0;
    const std::vector<float> dy = uniformValues(n, s.cols + 1, -2.0f, 2.0f);
    const std::vector<float> xhat = uniformValues(n, s.cols + 2, -3.0f, 3.0f);
    const std::vector<float> gamma = uniformValues(s.cols, s.cols + 3, 0.5f, 1.5f);
    const std::vector<float> invStd = uniformValues(s.rows, s.cols + 4, 0.25f, 4.0f);
    const at::Tensor dyG = onGpuAt(dy, off), xhatG = onGpuAt(xhat, off),
                     gammaG = onGpuAt(gamma, off), invG = onGpuAt(invStd, 0);
    const at::Tensor dx = gpuBufferAt(n, off), dgamma = gpuBufferAt(s.cols, off),
                     dbeta = gpuBufferAt(s.cols, off);
    const int st = table.layer_norm_bwd(nullptr, s.rows, s.cols, dyG.data_ptr<float>(),
                                        xhatG.data_ptr<float>(), invG.data_ptr<float>(),
                                        gammaG.data_ptr<float>(), dx.data_ptr<float>(),
                                        dgamma.data_ptr<float>(), dbeta.data_ptr<float>());
    INFO("layer_norm_bwd [" << s.rows << "," << s.cols << "]"
                            << (s.misaligned ? " misaligned" : ""));
    REQUIRE(st == 0);
    const std::vector<float> gotDx = toHost(dx), gotG = toHost(dgamma), gotB = toHost(dbeta);

    for (std::uint32_t j = 0; j < s.cols; ++j) {
      long double wantG = 0, wantB = 0, magG = 0, magB = 0;
      for (std::uint32_t r = 0; r < s.rows; ++r) {
        const std::size_t i = std::size_t{r} * s.cols + j;
        const long double t = static_cast<long double>(dy[i]) * xhat[i];
        wantG += t;
        magG += std::fabs(t);
        wantB += dy[i];
        magB += std::fabs(static_cast<long double>(dy[i]));
      }
      const double g = gotG[j], b = gotB[j];
      if (!(std::fabs(g - wantG) <= sumTolerance(magG) &&
            std::fabs(b - wantB) <= sumTolerance(magB))) {
        INFO("col " << j << ": dgamma " << g << " want " << static_cast<double>(wantG)
                    << ", dbeta " << b << " want " << static_cast<double>(wantB));
        REQUIRE(std::fabs(g - wantG) <= sumTolerance(magG));
        REQUIRE(std::fabs(b - wantB) <= sumTolerance(magB));
      }
      sums += 2;
    }

    for (std::uint32_t r = 0; r < s.rows; ++r) {
      const std::size_t base = std::size_t{r} * s.cols;
      long double sg = 0, sgx = 0, magG = 0, magGx = 0;
      for (std::uint32_t j = 0; j < s.cols; ++j) {
        const long double gj = static_cast<long double>(dy[base + j]) * gamma[j];
        sg += gj;
        sgx += gj * xhat[base + j];
        magG += std::fabs(gj);
        magGx += std::fabs(gj * xhat[base + j]);
      }
      const long double meanG = sg / s.cols, meanGx = sgx / s.cols;
      const long double meanAbsG = magG / s.cols, meanAbsGx = magGx / s.cols;
      for (std::uint32_t j = 0; j < s.cols; ++j) {
        const long double gj = static_cast<long double>(dy[base + j]) * gamma[j];
        const long double want = invStd[r] * (gj - meanG - xhat[base + j] * meanGx);
        const long double scale =
            invStd[r] * (std::fabs(gj) + meanAbsG + std::fabs(xhat[base + j]) * meanAbsGx);
        const double got = gotDx[base + j];
        if (!(std::fabs(got - want) <= std::ldexp(scale, -18))) {
          INFO("row " << r << " col " << j << ": dx " << got << " want "
                      << static_cast<double>(want));
          REQUIRE(std::fabs(got - want) <= std::ldexp(scale, -18));
        }
      }
    }
  }
  WARN("layer_norm_bwd: " << sums << " column sums checked against long double");
}
