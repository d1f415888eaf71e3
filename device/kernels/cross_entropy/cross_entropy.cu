// crossEntropy forward and backward (docs/spec.md): the tensor is [outer, n, inner] and the class
// axis is the middle one, so slice (o, i) has its n elements `inner` apart, starting at
// o * n * inner + i. The loss is one deterministic sum over every element: each block of the
// forward kernel leaves one partial (its rows in a fixed order), and one block adds those.
// Contiguous slices run on the register tiles (ce_tiles.cuh) or, when longer than 512
// threads' registers, across a thread-block cluster (ce_cluster.cuh); the rest on the engine.
#include "cross_entropy/ce_cluster.cuh"
#include "cross_entropy/ce_tiles.cuh"
#include "entry.h"
#include "common/row_engine.cuh"
#include "softmax/softmax_math.cuh"

namespace tapecheck_cuda {
namespace {

struct Slices {
  uint32_t n, inner;
  __device__ size_t row_base(size_t slice) const {
    if (inner == 1) return slice * n;
    const size_t o = slice / inner;
    return o * n * inner + (slice - o * inner);
  }
  __device__ size_t stride() const { return inner; }
};

struct CrossEntropyFwd : Slices, MaxSumStages<true> {
  using Stages = MaxSumStages<true>;
  static constexpr bool kGlobal = true;
  using Row = MaxSumRow;
  struct Elem {
    float x, t;
  };
  const float* logits;
  const float* target;
  float* logp;

  __device__ Row row_begin(size_t) const { return Row{}; }
  __device__ Elem load(const Row&, size_t idx, uint32_t) const {
    return Elem{logits[idx], target[idx]};
  }
  __device__ Acc<1> value(int k, const Row& R, const Elem& e, uint32_t) const {
    return Stages::value(k, R, e.x);
  }
  __device__ void stage_done(int k, Row& R, const Acc<1>& a) const { Stages::stage_done(k, R, a); }
  __device__ void row_done(const Row&, size_t) const {}
  // The loss term uses the unrounded log-probability; IEEE products are kept literally, so a
  // zero weight on a -inf log-probability gives NaN, as the spec's formula does.
  __device__ double write(const Row& R, const Elem& e, size_t idx, uint32_t) const {
    const double lp = Stages::log_prob(R, e.x);
    logp[idx] = static_cast<float>(lp);
    return static_cast<double>(e.t) * lp;
  }
};

__global__ void __launch_bounds__(kBlock)
    finish_loss(const double* partials, size_t count, double denom, float* loss) {
  __shared__ Acc<1> smem[kBlock / 32];
  // + 0.0 gives a zero total the sign of the Spec's sum, a fold from +0, whatever order the
  // tree added in: the loss of a zero total is -0.0 (docs/spec.md#zero-seeded-sum).
  const double total = block_sum_array(partials, count, smem) + 0.0;
  if (threadIdx.x == 0) loss[0] = static_cast<float>(-total / denom);
}

// dlogits = dy * (exp(logp) * T - target) / denom with T the slice's total weight;
// dtarget = -dy * logp / denom. dy is read on the device, so no synchronization is needed.
struct CrossEntropyBwd : Slices {
  static constexpr int kStages = 1;
  static constexpr int kWidth = 1;
  static constexpr bool kGlobal = false;
  __host__ __device__ static constexpr Red kind(int) { return Red::Sum; }
  struct Row {
    double scale, total_weight;  // dy / denom, T
  };
  struct Elem {
    float lp, t;
  };
  const float* dloss;
  const float* logp;
  const float* target;
  float* dlogits;
  float* dtarget;  // may be null
  double denom;

  __device__ Row row_begin(size_t) const { return Row{static_cast<double>(dloss[0]) / denom, 0.0}; }
  __device__ Elem load(const Row&, size_t idx, uint32_t) const { return Elem{logp[idx], target[idx]}; }
  __device__ Acc<1> value(int, const Row&, const Elem& e, uint32_t) const {
    return Acc<1>{{static_cast<double>(e.t)}};
  }
  __device__ void stage_done(int, Row& R, const Acc<1>& a) const { R.total_weight = a.v[0]; }
  __device__ void row_done(const Row&, size_t) const {}
  __device__ double write(const Row& R, const Elem& e, size_t idx, uint32_t) const {
    const double p = expf(e.lp);
    dlogits[idx] = static_cast<float>(R.scale * (p * R.total_weight - static_cast<double>(e.t)));
    if (dtarget != nullptr) dtarget[idx] = static_cast<float>(-(R.scale * static_cast<double>(e.lp)));
    return 0.0;
  }
};

// Without dlogits no slice sum is needed: dtarget alone is elementwise.
__global__ void __launch_bounds__(kBlock)
    dtarget_only(const float* dloss, const float* logp, float* dtarget, size_t count, double denom) {
  const double scale = static_cast<double>(dloss[0]) / denom;
  for (size_t i = static_cast<size_t>(blockIdx.x) * kBlock + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * kBlock) {
    dtarget[i] = static_cast<float>(-(scale * static_cast<double>(logp[i])));
  }
}

double denominator(uint32_t outer, uint32_t inner, uint32_t mean) {
  const size_t slices = static_cast<size_t>(outer) * inner;
  return mean ? static_cast<double>(slices > 0 ? slices : 1) : 1.0;
}

}  // namespace

int cross_entropy_fwd(void* stream, uint32_t outer, uint32_t n, uint32_t inner, uint32_t mean,
                      const float* logits, const float* target, float* loss, float* logp) {
  CrossEntropyFwd op{};
  op.n = n;
  op.inner = inner;
  op.logits = logits;
  op.target = target;
  op.logp = logp;
  const cudaStream_t s = as_stream(stream);
  Scratch scratch(s);
  const double* partials = nullptr;
  size_t count = 0;
  const size_t slices = static_cast<size_t>(outer) * inner;
  const Tile t = ce_tile(n, inner);
  bool done = false;
  if (inner == 1 && t.mode != Tile::Warp && ce_cluster_partials(n, slices, count)) {
    // Contiguous slices of more than 512 threads' registers, up to 8 blocks': held across a
    // cluster (ce_cluster.cuh).
    double* gp = scratch.get<double>(count);
    if (gp != nullptr && ce_fwd_clustered(s, slices, n, logits, target, logp, gp)) {
      partials = gp;
      done = true;
    }
  }
  if (!done && t.mode != Tile::Stream) {
    // Contiguous slices that fit the register tiles (ce_tiles.cuh).
    count = tile_grid_capped(t, slices);  // a loss partial a block
    double* gp = scratch.get<double>(count);
    if (gp == nullptr) return 1;
    partials = gp;
    const bool vec = t.V == 4 && aligned16(logits) && aligned16(target) && aligned16(logp);
    if (!dispatch_regs<kCeUnits>(t, vec, [&](auto block_row, auto units, auto v, auto kvec) {
          ce_fwd_regs<block_row, units, v, kvec><<<tile_grid_capped(t, slices), t.threads, 0, s>>>(
              logits, target, logp, gp, slices, n, t.T);
        })) {
      return 1;
    }
  } else if (!done && run_rows(op, slices, n, inner, s, scratch, &partials, &count) != 0) {
    return 1;
  }
  finish_loss<<<1, kBlock, 0, s>>>(partials, count, denominator(outer, inner, mean), loss);
  return launch_status();
}

int cross_entropy_bwd(void* stream, uint32_t outer, uint32_t n, uint32_t inner, uint32_t mean,
                      const float* dloss, const float* logp, const float* target, float* dlogits,
                      float* dtarget) {
  const cudaStream_t s = as_stream(stream);
  const double denom = denominator(outer, inner, mean);
  const size_t slices = static_cast<size_t>(outer) * inner;
  if (dlogits == nullptr) {
    if (dtarget == nullptr) return 0;
    const size_t count = slices * n;
    dtarget_only<<<grid_for(count, kBlock), kBlock, 0, s>>>(dloss, logp, dtarget, count, denom);
    return launch_status();
  }
  const Tile t = ce_tile(n, inner, kCeBwdWarpTiles);
  if (inner == 1 && t.mode != Tile::Warp &&
      ce_bwd_clustered(s, slices, n, dloss, logp, target, dlogits, dtarget, denom)) {
    return launch_status();
  }
  if (t.mode != Tile::Stream) {
    const bool vec = t.V == 4 && aligned16(logp) && aligned16(target) && aligned16(dlogits) &&
                     (dtarget == nullptr || aligned16(dtarget));
    if (!dispatch_regs<kCeUnits>(t, vec, [&](auto block_row, auto units, auto v, auto kvec) {
          ce_bwd_regs<block_row, units, v, kvec><<<tile_grid(t, slices), t.threads, 0, s>>>(
              dloss, logp, target, dlogits, dtarget, slices, n, t.T, denom);
        })) {
      return 1;
    }
    return launch_status();
  }
  CrossEntropyBwd op{};
  op.n = n;
  op.inner = inner;
  op.dloss = dloss;
  op.logp = logp;
  op.target = target;
  op.dlogits = dlogits;
  op.dtarget = dtarget;
  op.denom = denom;
  Scratch scratch(s);
  return run_rows(op, slices, n, inner, s, scratch);
}

}  // namespace tapecheck_cuda
