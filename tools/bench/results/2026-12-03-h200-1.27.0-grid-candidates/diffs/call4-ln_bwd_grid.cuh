// layer_norm backward for long rows (16K-64K columns of 16-byte units) across the whole grid:
// every row is split into kLnGridParts column parts, one a block, so a block holds the same
// columns in every row and keeps their dgamma/dbeta sums in registers (the clusters of
// ln_bwd_cluster.cuh keep a whole row a cluster, so their column sums take 1 MiB of shared
// memory a cluster at 64K columns, one block a multiprocessor, and clusters of 8 fill 120 of an
// H200's 132 multiprocessors).
//
// A row's two sums (sum g, sum g * xhat, g = dy * gamma) are needed before any of its dx: each
// warp publishes its part's partial (global memory, one counter a row), the row's reducer warp
// adds the P * W partials in a fixed order once the counter is full and publishes the total, and
// every warp then writes its dx. The wait is hidden by depth: each warp keeps kSlots of its rows
// in shared memory (cp.async, no registers while in flight), loads kSlots - kAhead rows ahead of
// publishing and publishes kAhead rows ahead of finishing.
//
// Determinism: the parts, the partials' order and the groups of rows come from (rows, cols)
// alone (kLnGridParts is a constant, not the device's count), so the bits do too. Every block
// must be resident at once (warps wait on every other block's partials): the launch is
// cooperative, and a device that cannot hold kLnGridParts such blocks refuses it, in which case
// the caller runs the clusters.
#pragma once

#include "ln_bwd_fused.cuh"

namespace tapecheck_cuda {

constexpr unsigned kLnGridParts = 132;
constexpr unsigned kLnGridWarps = 16;  // most warps a block
constexpr uint32_t kLnGridMinCols = 16384;
constexpr uint32_t kLnGridMaxCols = 65536;

struct LnGridPlan {
  unsigned W;  // warps a part of a row (32 units of 4 floats each)
  unsigned G;  // groups of W warps a block: group k takes rows k, k + G, ...
};

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async4(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
__device__ __forceinline__ unsigned load_acquire_gpu(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void add_release_gpu(unsigned* p, unsigned v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void store_release_gpu(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ void warp_add2(double& a, double& b) {
#pragma unroll
  for (int m = 16; m >= 1; m /= 2) {
    a += __shfl_xor_sync(0xffffffffu, a, m);
    b += __shfl_xor_sync(0xffffffffu, b, m);
  }
}

// The launch's synchronization memory. A row's counter and total each have their own 128-byte
// line (kLnGridLine), so that the rows in flight spread over L2's slices.
constexpr unsigned kLnGridLine = 128;
// A total not yet written: every byte 0x7F, the double 1.38e306, which no row's sum can be
// (at most 65536 products of two floats, under 8e81 in magnitude, or an infinity or a NaN).
constexpr unsigned long long kLnGridUnset = 0x7F7F7F7F7F7F7F7FULL;
struct LnGridSync {
  double2* partial;  // [ring rows][P * W]
  char* total;       // [rows] lines, a double2 each, kLnGridUnset at launch
  char* count;       // [rows] lines, an unsigned each, zero at launch
  unsigned ring;     // rows of the partials' ring
};

__device__ __forceinline__ double2 load_relaxed_gpu(const double2* p) {
  double2 v;
  asm volatile("ld.relaxed.gpu.global.v2.f64 {%0, %1}, [%2];"
               : "=d"(v.x), "=d"(v.y)
               : "l"(p)
               : "memory");
  return v;
}
__device__ __forceinline__ void store_relaxed_gpu(double2* p, double2 v) {
  asm volatile("st.relaxed.gpu.global.v2.f64 [%0], {%1, %2};" ::"l"(p), "d"(v.x), "d"(v.y)
               : "memory");
}
__device__ __forceinline__ bool total_set(double2 v) {
  return __double_as_longlong(v.x) != static_cast<long long>(kLnGridUnset) &&
         __double_as_longlong(v.y) != static_cast<long long>(kLnGridUnset);
}

template <int kSlots, int kAhead, int kLag, bool kVec>
__global__ void __launch_bounds__(kLnGridWarps * 32, 1)
    ln_bwd_grid(const float* __restrict__ dy, const float* __restrict__ xhat,
                const float* __restrict__ inv_std, const float* __restrict__ gamma,
                float* __restrict__ dx, float* __restrict__ dgamma, float* __restrict__ dbeta,
                LnGridSync sync, size_t rows, uint32_t cols, unsigned W, unsigned G) {
  static_assert(kLag >= 0 && kLag < kAhead, "a row's total is made before its dx needs it");
  extern __shared__ float4 ring[];  // [warp][slot][dy, xhat][lane]
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const unsigned grp = warp / W, w = warp % W;
  const uint32_t units = cols / 4;
  const uint32_t u0 = static_cast<uint32_t>(uint64_t{blockIdx.x} * units / kLnGridParts);
  const uint32_t u1 = static_cast<uint32_t>(uint64_t{blockIdx.x + 1} * units / kLnGridParts);
  const uint32_t u = u0 + w * 32 + lane;
  const bool has = u < u1;
  const size_t j = static_cast<size_t>(u) * 4;
  const double n = static_cast<double>(cols);

  float gm[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  if (has) load_unit<4, kVec>(gamma, j, gm);
  double cs[2][4] = {{0.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0}};  // sum dy*xhat, sum dy

  float4* const mine = ring + warp * kSlots * 64;
  const size_t steps = rows > grp ? (rows - grp + G - 1) / G : 0;
  auto row_of = [&](size_t i) { return grp + i * G; };

  auto issue = [&](size_t i) {
    if (i < steps && has) {
      const size_t at = row_of(i) * cols + j;
      float4* slot = mine + (i % kSlots) * 64;
      if constexpr (kVec) {
        cp_async16(slot + lane, dy + at);
        cp_async16(slot + 32 + lane, xhat + at);
      } else {
        float* a = reinterpret_cast<float*>(slot + lane);
        float* b = reinterpret_cast<float*>(slot + 32 + lane);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          cp_async4(a + k, dy + at + k);
          cp_async4(b + k, xhat + at + k);
        }
      }
    }
    cp_async_commit();
  };
  auto unit_of = [&](size_t i, float (&d)[4], float (&h)[4]) {
    const float4* slot = mine + (i % kSlots) * 64;
    const float4 a = slot[lane], b = slot[32 + lane];
    d[0] = a.x, d[1] = a.y, d[2] = a.z, d[3] = a.w;
    h[0] = b.x, h[1] = b.y, h[2] = b.z, h[3] = b.w;
  };
  const unsigned target = kLnGridParts * W;  // partials a row: one a warp
  auto partial_at = [&](size_t row) { return sync.partial + row * target; };
  auto total_of = [&](size_t row) {
    return reinterpret_cast<double2*>(sync.total + row * kLnGridLine);
  };
  auto reduces = [&](size_t row) {
    return blockIdx.x == row % kLnGridParts && w == (row / kLnGridParts) % W;
  };

  // Step i's part of its row's sums, and its terms of the column sums.
  auto publish = [&](size_t i) {
    const size_t row = row_of(i);
    double sums[2] = {0.0, 0.0};
    if (has) {
      float d[4], h[4];
      unit_of(i, d, h);
      add_ln_bwd_sums<4>(gm, d, h, sums);
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const double dd = static_cast<double>(d[k]);
        cs[0][k] = fma(dd, static_cast<double>(h[k]), cs[0][k]);  // exact product
        cs[1][k] += dd;
      }
    }
    warp_add2(sums[0], sums[1]);
    if (lane == 0) {
      store_relaxed_gpu(partial_at(row) + blockIdx.x * W + w, make_double2(sums[0], sums[1]));
    }
  };

  // The total of step i's row, by its reducer: every partial read until set (each half is
  // written at once, and an unset half is kLnGridUnset), added in a fixed order.
  auto reduce = [&](size_t i) {
    const size_t row = row_of(i);
    const double2* p = partial_at(row);
    constexpr unsigned kBatch = 9;
    double a = 0.0, b = 0.0;
    for (unsigned m0 = 0; m0 < target; m0 += kBatch * 32) {
      double2 q[kBatch];
      bool set;
      do {
        set = true;
#pragma unroll
        for (unsigned m = 0; m < kBatch; ++m) {
          const unsigned at = m0 + lane + 32 * m;
          q[m] = at < target ? load_relaxed_gpu(p + at) : make_double2(0.0, 0.0);
          set = set && total_set(q[m]);
        }
        if (!__all_sync(0xffffffffu, set)) {
          __nanosleep(32);
          set = false;
        }
      } while (!set);
#pragma unroll
      for (unsigned m = 0; m < kBatch; ++m) {
        a += q[m].x;
        b += q[m].y;
      }
    }
    warp_add2(a, b);
    if (lane == 0) store_relaxed_gpu(total_of(row), make_double2(a, b));
  };

  // Step i's dx, once its row's total is known (`early`: read an iteration before).
  auto finish = [&](size_t i, double2 early, float istd) {
    const size_t row = row_of(i);
    while (!total_set(early)) {
      __nanosleep(32);
      early = load_relaxed_gpu(total_of(row));
    }
    if (has) {
      float d[4], h[4], o[4];
      unit_of(i, d, h);
      ln_bwd_dx<4>(gm, d, h, istd, static_cast<float>(early.x / n),
                   static_cast<float>(early.y / n), o);
      store_unit<4, kVec>(dx, row * cols + j, o);
    }
  };

  // Iteration t: publish step t, reduce step t - kLag (where this warp is its reducer), finish
  // step t - kAhead, and load step t + kSlots - kAhead into the slot that frees.
  for (int i = 0; i < kSlots - kAhead; ++i) issue(i);
  double2 early = make_double2(0.0, 0.0);
  float istd = 0.0f;
  for (size_t t = 0; t < steps + kAhead; ++t) {
    // The total and inv_std of the step finished next iteration, read now so that their
    // latency passes during this one.
    double2 next_early = make_double2(0.0, 0.0);
    float next_istd = 0.0f;
    if (t + 1 >= static_cast<size_t>(kAhead) && t + 1 - kAhead < steps) {
      const size_t row = row_of(t + 1 - kAhead);
      next_istd = __ldg(inv_std + row);
      next_early = load_relaxed_gpu(total_of(row));
    }
    if (t < steps) {
      cp_async_wait<kSlots - kAhead - 1>();
      publish(t);
    }
    if (t >= static_cast<size_t>(kLag) && t - kLag < steps && reduces(row_of(t - kLag))) {
      reduce(t - kLag);
    }
    if (t >= static_cast<size_t>(kAhead)) finish(t - kAhead, early, istd);
    issue(t + kSlots - kAhead);  // into the slot finish just freed
    early = next_early;
    istd = next_istd;
  }

  // The column sums: the G groups' in group order, by group 0's threads.
  cp_async_wait<0>();
  __syncthreads();
  double* comb = reinterpret_cast<double*>(ring);  // [G][W * 32][8]
  const unsigned at = threadIdx.x * 8;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    comb[at + k] = cs[0][k];
    comb[at + 4 + k] = cs[1][k];
  }
  __syncthreads();
  if (grp == 0 && has) {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      double sg = comb[at + k], sb = comb[at + 4 + k];
      for (unsigned q = 1; q < G; ++q) {
        sg += comb[at + q * W * 32 * 8 + k];
        sb += comb[at + q * W * 32 * 8 + 4 + k];
      }
      dgamma[j + k] = static_cast<float>(sg);
      dbeta[j + k] = static_cast<float>(sb);
    }
  }
}

inline bool plan_ln_grid(uint32_t cols, LnGridPlan& p) {
  if (cols % 4 != 0 || cols < kLnGridMinCols || cols > kLnGridMaxCols) return false;
  const size_t per_part = ceil_div(static_cast<size_t>(cols / 4), kLnGridParts);
  p.W = static_cast<unsigned>(ceil_div(per_part, 32));
  if (p.W > kLnGridWarps) return false;
  p.G = kLnGridWarps / p.W;
  return true;
}

template <int kSlots, int kAhead, int kLag, bool kVec>
bool launch_ln_bwd_grid(const LnGridPlan& p, cudaStream_t s, Scratch& scratch, size_t rows,
                        uint32_t cols, const float* dy, const float* xhat, const float* inv_std,
                        const float* gamma, float* dx, float* dgamma, float* dbeta) {
  auto k = ln_bwd_grid<kSlots, kAhead, kLag, kVec>;
  const unsigned threads = p.W * p.G * 32;
  const size_t ring_bytes = static_cast<size_t>(threads / 32) * kSlots * 64 * sizeof(float4);
  const size_t comb_bytes = static_cast<size_t>(threads) * 8 * sizeof(double);
  const size_t smem = ring_bytes > comb_bytes ? ring_bytes : comb_bytes;
  if (!allow_dynamic_shared(k, static_cast<int>(smem))) return false;
  LnGridSync sync;
  // The ring holds a row's partials until its reducer has read them: a warp publishes step
  // i only after finishing step i - kAhead, which needs every warp to have published it,
  // which each did after finishing step i - 2 * kAhead, reducer included. Two steps spare.
  const size_t target = static_cast<size_t>(kLnGridParts) * p.W;
  const size_t lines = rows * kLnGridLine / sizeof(double2);
  double2* mem = scratch.get<double2>(rows * target + lines);
  if (mem == nullptr) return false;
  sync.partial = mem;
  sync.total = reinterpret_cast<char*>(mem + rows * target);
  if (cudaMemsetAsync(mem, 0x7F, (rows * target + lines) * sizeof(double2), s) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(kLnGridParts);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeCooperative;
  attr[0].val.cooperative = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  const uint32_t c = cols;
  if (cudaLaunchKernelEx(&cfg, k, dy, xhat, inv_std, gamma, dx, dgamma, dbeta, sync, rows, c,
                         p.W, p.G) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return true;
}

}  // namespace tapecheck_cuda
