// The softmax forward's two reductions (m = max x, then s = sum exp(x - m)) done as one, for
// rows held across a cluster (softmax, log-softmax and cross-entropy forward). A long row's
// threads wait on barriers and on the exchange between blocks (row_cluster.cuh), not on
// arithmetic: two reductions a row cost two block barriers and two exchanges, during which
// none of the row's loads are in flight; this costs one of each. (Rows within one block keep
// the two reductions, which are up to 0.03 of copy speed faster there, at 16K columns:
// CHANGELOG 1.3.0.)
//
// Each warp first takes its own maximum m_w with shuffles (no barrier) and sums e = exp(x - m_w)
// over its entries as exp_of_diff does with the row's maximum. The warps' parts (m_w, s_w) are
// then combined behind one barrier and one exchange: m = max m_w, s = sum_w s_w * exp(m_w - m),
// the factor in double. In real arithmetic exp(x - m_w) * exp(m_w - m) = exp(x - m), so each
// term is still one float exp of a difference (exp_of_diff) and the rescaling adds double
// roundings only; softmax then writes e * (exp(m_w - m) / s), the factor rounded once to float:
// two roundings, as e * (1/s) had.
//
// Every combination runs in an order fixed by the tile (a butterfly over the parts' lanes, the
// same in every warp), so every thread of the row gets identical bits, and a row's result still
// depends only on its data and cols.
#pragma once

#include <cooperative_groups.h>
#include <math_constants.h>

#include "common/row_cluster.cuh"
#include "common/row_tiles.cuh"
#include "softmax/softmax_math.cuh"

namespace tapecheck_cuda {

struct MaxSum {
  float m;   // the maximum of the part (NaN kept)
  double s;  // sum of exp(x - m) over the part
};

// The whole warp's maximum and sum: row_tiles.cuh's butterflies over 32 lanes.
__device__ __forceinline__ float warp_max(float v) { return row_max<false>(v, 32u, nullptr); }
__device__ __forceinline__ double warp_sum(double v) { return row_sum<false>(v, 32u, nullptr); }

// The part's sum rescaled to the maximum m. A part with nothing in it (no entries, or only
// -inf) adds 0 whatever its maximum; a part with entries has s >= 1 (its maximum's term).
__device__ __forceinline__ double rescaled(float m_part, double s_part, float m) {
  return s_part == 0.0 ? 0.0 : s_part * exp(static_cast<double>(m_part) - static_cast<double>(m));
}

// Lane l holds part l (or an empty one); every lane of the warp returns the combination.
// A non-finite m means a bad row (NaN output): its s is not used.
__device__ __forceinline__ MaxSum combine_parts(float m_l, double s_l) {
  const float m = warp_max(m_l) + 0.0f;  // + 0: a zero maximum is +0 whichever met first
  const double t = isfinite(m) ? rescaled(m_l, s_l, m) : 0.0;
  return MaxSum{m, warp_sum(t)};
}

// A warp's part of a row from the N units of V floats a thread holds (`has[i]`:
// unit i is in the row): the warp's maximum, then its sum of exp(x - m_w). softmax (!kLog) keeps
// each exp in the register that held x. A warp with only -inf entries (or none) has the part
// (-inf, 0) and exps 0; a NaN or +inf maximum makes the row bad, and its sum is not used.
template <bool kLog, int N, int V>
__device__ __forceinline__ MaxSum warp_part(float (&v)[N][V], const bool (&has)[N], float m) {
  const float m_w = warp_max(m);
  const bool finite = isfinite(m_w);
  double s = 0.0;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    if (has[i]) {
      float e[V];
#pragma unroll
      for (int k = 0; k < V; ++k) e[k] = finite ? exp_of_diff(v[i][k], m_w) : 0.0f;
      s += static_cast<double>(unit_sum<V>(e));
      if constexpr (!kLog) {
#pragma unroll
        for (int k = 0; k < V; ++k) v[i][k] = e[k];
      }
    }
  }
  return MaxSum{m_w, warp_sum(s)};
}

// Shared buffers of the warps' parts, double-buffered by row parity: a warp rewrites a buffer
// two rows later, after the barrier of the row between, which no warp passes before it has
// read the buffer. So one barrier a row.
struct WarpParts {
  float m[2][32];
  double s[2][32];
};

// The block's (m, s) from its warps' parts (each warp's lanes pass the same part).
__device__ __forceinline__ MaxSum block_max_sum(const MaxSum& warp_part, WarpParts& parts,
                                                unsigned parity) {
  const unsigned l = threadIdx.x & 31u, warps = blockDim.x >> 5;
  if (l == 0) {
    parts.m[parity][threadIdx.x >> 5] = warp_part.m;
    parts.s[parity][threadIdx.x >> 5] = warp_part.s;
  }
  __syncthreads();
  return combine_parts(l < warps ? parts.m[parity][l] : -CUDART_INF_F,
                       l < warps ? parts.s[parity][l] : 0.0);
}

// The row's (m, s) across a cluster: the block parts are exchanged through the mailboxes
// (row_cluster.cuh), m widened exactly to double, and combined by every block alike.
__device__ __forceinline__ MaxSum cluster_max_sum(const MaxSum& warp_part, WarpParts& parts,
                                                  Mailbox<2>& mb, unsigned turn) {
  const MaxSum b = block_max_sum(warp_part, parts, turn & 1u);
  const double (*part)[2] =
      mailbox_exchange(mb, threadIdx.x == 0 ? static_cast<double>(b.m) : b.s, turn);
  const unsigned l = threadIdx.x & 31u;
  MaxSum p{-CUDART_INF_F, 0.0};
  if (l < cooperative_groups::this_cluster().num_blocks()) {
    p = MaxSum{static_cast<float>(part[l][0]), part[l][1]};
  }
  return combine_parts(p.m, p.s);
}

}  // namespace tapecheck_cuda
