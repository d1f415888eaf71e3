// topKMask along the last axis (SPEC.md): 1 for the k largest entries of a row, 0 elsewhere.
// Order: larger value first; equal values, lower index first; NaN below every number (-inf
// included), NaNs among themselves by index.
//
// Method: map each value to a 32-bit key whose unsigned order is that value order (NaN -> 0,
// -0 -> +0 so equal values share a key), find T, the k-th largest key, by a radix search,
// then keep key > T, and of the keys equal to T the (k - count(key > T)) with lowest index.
// This is exactly "rank < k" with rank = number of entries that beat this one.
#include "common.cuh"
#include "entry.h"

namespace tapecheck_cuda {
namespace {

__device__ __forceinline__ uint32_t rank_key(float x) {
  if (x != x) return 0u;
  uint32_t u = __float_as_uint(x);
  if ((u << 1) == 0u) u = 0u;  // -0 == +0
  // Negative floats order backwards as integers: flip all their bits; lift the positives.
  // -inf becomes 0x007fffff, so 0 (NaN) stays strictly below every number.
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// Rows of at most 1024: g lanes per row (as in the row engine), VPT keys per lane in
// registers. T is found bit by bit from the top: keep bit b if at least k keys are >= the
// candidate. Counts are ballots, so the row never leaves registers.
template <int VPT>
__global__ void __launch_bounds__(kBlock)
    topk_by_group(size_t rows, uint32_t cols, uint32_t k, unsigned g, const float* x, float* mask) {
  const unsigned lane_w = threadIdx.x & 31u;
  const unsigned lane = threadIdx.x & (g - 1);
  const unsigned group = threadIdx.x / g;
  const unsigned first_lane = lane_w & ~(g - 1);
  const uint32_t group_bits = (g == 32u) ? 0xffffffffu : (((1u << g) - 1u) << first_lane);
  const uint32_t below_me = (1u << lane_w) - 1u;
  const size_t rows_per_block = kBlock / g;

  for (size_t first = blockIdx.x * rows_per_block; first < rows;
       first += static_cast<size_t>(gridDim.x) * rows_per_block) {
    const size_t row = first + group;
    const bool live = row < rows;
    const size_t base = live ? row * cols : 0;
    uint32_t key[VPT];
    bool in[VPT];
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const uint32_t j = lane + static_cast<uint32_t>(i) * g;
      in[i] = live && j < cols;
      key[i] = in[i] ? rank_key(x[base + j]) : 0u;
    }
    // Candidates are >= 1, so padding (key 0) never counts here.
    uint32_t t = 0;
    for (int b = 31; b >= 0; --b) {
      const uint32_t cand = t | (1u << b);
      uint32_t n = 0;
#pragma unroll
      for (int i = 0; i < VPT; ++i) n += __popc(__ballot_sync(0xffffffffu, key[i] >= cand) & group_bits);
      if (n >= k) t = cand;
    }
    uint32_t greater = 0;
#pragma unroll
    for (int i = 0; i < VPT; ++i) greater += __popc(__ballot_sync(0xffffffffu, in[i] && key[i] > t) & group_bits);
    const uint32_t need = k - greater;  // how many keys equal to t are kept, lowest index first
    uint32_t equal_before = 0;          // keys equal to t in earlier slots (lower indices)
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const bool eq = in[i] && key[i] == t;
      const uint32_t bits = __ballot_sync(0xffffffffu, eq) & group_bits;
      const uint32_t rank = equal_before + __popc(bits & below_me);
      if (in[i]) {
        const uint32_t j = lane + static_cast<uint32_t>(i) * g;
        mask[base + j] = (key[i] > t || (eq && rank < need)) ? 1.0f : 0.0f;
      }
      equal_before += __popc(bits);
    }
  }
}

// Longer rows: one block per row, re-read from memory (L1/L2) on each pass. Four passes of
// an 8-bit histogram (shared-memory integer counts: exact and order-free) narrow T down one
// byte at a time; a last pass writes the mask, ranking the keys equal to T by index with a
// block-wide scan unless all of them are kept.
__global__ void __launch_bounds__(kBlock)
    topk_by_block(size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  __shared__ uint32_t hist[256];
  __shared__ uint32_t chosen_digit, chosen_above, chosen_count;
  __shared__ uint32_t warp_equal[kBlock / 32];
  const unsigned tid = threadIdx.x;
  const unsigned lane = tid & 31u;
  const unsigned warp = tid >> 5;

  for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* xr = x + row * cols;
    float* mr = mask + row * cols;
    uint32_t prefix = 0, prefix_mask = 0, remaining = k, equal_count = 0;

    for (int shift = 24; shift >= 0; shift -= 8) {
      for (unsigned i = tid; i < 256; i += kBlock) hist[i] = 0;
      __syncthreads();
      for (size_t j = tid; j < cols; j += kBlock) {
        const uint32_t key = rank_key(xr[j]);
        if ((key & prefix_mask) == prefix) atomicAdd(&hist[(key >> shift) & 0xffu], 1u);
      }
      __syncthreads();
      // Warp 0 finds the digit d with count(digit > d) < remaining <= count(digit >= d):
      // lane l looks at digits 255-8l down to 248-8l, so lanes run from high digits to low.
      if (warp == 0) {
        uint32_t c[8];
        uint32_t mine = 0;
#pragma unroll
        for (int q = 0; q < 8; ++q) {
          c[q] = hist[255u - 8u * lane - q];
          mine += c[q];
        }
        uint32_t above = mine;  // inclusive scan over lanes
#pragma unroll
        for (unsigned off = 1; off < 32; off <<= 1) {
          const uint32_t v = __shfl_up_sync(0xffffffffu, above, off);
          if (lane >= off) above += v;
        }
        above -= mine;  // keys in digits above this lane's first one
#pragma unroll
        for (int q = 0; q < 8; ++q) {
          if (above < remaining && remaining <= above + c[q]) {
            chosen_digit = 255u - 8u * lane - q;
            chosen_above = above;
            chosen_count = c[q];
          }
          above += c[q];
        }
      }
      __syncthreads();
      prefix |= chosen_digit << shift;
      prefix_mask |= 0xffu << shift;
      remaining -= chosen_above;
      equal_count = chosen_count;
    }
    const uint32_t t = prefix;
    const uint32_t need = remaining;

    if (need == equal_count) {
      // Every key equal to t is kept: no ranking by index needed.
      for (size_t j = tid; j < cols; j += kBlock) mr[j] = rank_key(xr[j]) >= t ? 1.0f : 0.0f;
    } else {
      uint32_t equal_seen = 0;  // keys equal to t in earlier tiles
      for (size_t tile = 0; tile < cols; tile += kBlock) {
        const size_t j = tile + tid;
        const bool in = j < cols;
        const uint32_t key = in ? rank_key(xr[j]) : 0u;
        const bool eq = in && key == t;
        const uint32_t bits = __ballot_sync(0xffffffffu, eq);
        if (lane == 0) warp_equal[warp] = __popc(bits);
        __syncthreads();
        uint32_t rank = equal_seen + __popc(bits & ((1u << lane) - 1u));
        uint32_t tile_equal = 0;
        for (unsigned w = 0; w < kBlock / 32; ++w) {
          if (w < warp) rank += warp_equal[w];
          tile_equal += warp_equal[w];
        }
        if (in) mr[j] = (key > t || (eq && rank < need)) ? 1.0f : 0.0f;
        equal_seen += tile_equal;
        __syncthreads();
      }
    }
    __syncthreads();  // hist and chosen_* are reused by the next row
  }
}

__global__ void __launch_bounds__(kBlock) fill_kernel(float* out, size_t n, float value) {
  for (size_t i = static_cast<size_t>(blockIdx.x) * kBlock + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * kBlock) {
    out[i] = value;
  }
}

template <int VPT>
void launch_group(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, unsigned g,
                  const float* x, float* mask) {
  topk_by_group<VPT><<<grid_for(rows, kBlock / g), kBlock, 0, s>>>(rows, cols, k, g, x, mask);
}

}  // namespace

int topk_mask(void* stream, uint32_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  const cudaStream_t s = as_stream(stream);
  const size_t total = static_cast<size_t>(rows) * cols;
  if (k == 0 || k >= cols) {
    const float v = k == 0 ? 0.0f : 1.0f;
    fill_kernel<<<grid_for(total, kBlock), kBlock, 0, s>>>(mask, total, v);
    return launch_status();
  }
  if (cols <= 1024) {
    const unsigned g = cols <= 32 ? next_pow2(cols) : 32u;
    switch (next_pow2((cols + g - 1) / g)) {
      case 1: launch_group<1>(s, rows, cols, k, g, x, mask); break;
      case 2: launch_group<2>(s, rows, cols, k, g, x, mask); break;
      case 4: launch_group<4>(s, rows, cols, k, g, x, mask); break;
      case 8: launch_group<8>(s, rows, cols, k, g, x, mask); break;
      case 16: launch_group<16>(s, rows, cols, k, g, x, mask); break;
      case 32: launch_group<32>(s, rows, cols, k, g, x, mask); break;
      default: return 1;
    }
  } else {
    topk_by_block<<<grid_for(rows, 1), kBlock, 0, s>>>(rows, cols, k, x, mask);
  }
  return launch_status();
}

}  // namespace tapecheck_cuda
