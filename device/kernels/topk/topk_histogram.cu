// topKMask by 256-bin histograms, for long rows with a k too large for topk_stream.cuh's
// candidates, and for a few very long rows split across blocks (topk_mask.cu picks).
// The selection rule is topk_select.cuh's: T, the k-th largest key, then the keys > T and the
// first (k - count(key > T)) keys == T by index; here T is narrowed one byte at a time, each
// pass re-reading the row.
#include "topk/topk_histogram.h"
#include "topk/topk_key.cuh"

namespace tapecheck_cuda {
namespace {

// Longer rows: T is narrowed one byte at a time with 256-bin histograms of the keys that match
// the bytes chosen so far (integer counts: exact whatever the order of the atomic adds).

static_assert(kBlock == 256, "one histogram bin per thread");

struct Digit {
  uint32_t digit;  // the byte of T chosen by this pass
  uint32_t above;  // keys (matching the prefix) in higher bins
  uint32_t count;  // keys in the chosen bin
};

// Run by a full warp; every lane gets the result. The chosen bin d satisfies
// above(d) < remaining <= above(d) + hist[d], so the remaining-th largest key lies in it.
__device__ Digit select_digit(const uint32_t* hist, uint32_t remaining) {
  const unsigned lane = threadIdx.x & 31u;
  uint32_t c[8];
  uint32_t mine = 0;
  // Lane l holds bins 255-8l down to 248-8l, so lanes run from high bins to low ones.
#pragma unroll
  for (int q = 0; q < 8; ++q) {
    c[q] = hist[255u - 8u * lane - q];
    mine += c[q];
  }
  uint32_t above = mine;
#pragma unroll
  for (unsigned off = 1; off < 32; off <<= 1) {
    const uint32_t v = __shfl_up_sync(0xffffffffu, above, off);
    if (lane >= off) above += v;
  }
  above -= mine;
  Digit d{0, 0, 0};
  bool found = false;
#pragma unroll
  for (int q = 0; q < 8; ++q) {
    if (above < remaining && remaining <= above + c[q]) {
      d = Digit{255u - 8u * lane - q, above, c[q]};
      found = true;
    }
    above += c[q];
  }
  const int src = __ffs(__ballot_sync(0xffffffffu, found)) - 1;
  d.digit = __shfl_sync(0xffffffffu, d.digit, src);
  d.above = __shfl_sync(0xffffffffu, d.above, src);
  d.count = __shfl_sync(0xffffffffu, d.count, src);
  return d;
}

// Exclusive prefix sum over the block, in thread order; *total gets the block's sum.
__device__ uint32_t block_exclusive_scan(uint32_t v, uint32_t* warp_sums, uint32_t* total) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;
  uint32_t inc = v;
#pragma unroll
  for (unsigned off = 1; off < 32; off <<= 1) {
    const uint32_t u = __shfl_up_sync(0xffffffffu, inc, off);
    if (lane >= off) inc += u;
  }
  if (lane == 31u) warp_sums[warp] = inc;
  __syncthreads();
  uint32_t before = 0, sum = 0;
  for (unsigned w = 0; w < kBlock / 32; ++w) {
    if (w < warp) before += warp_sums[w];
    sum += warp_sums[w];
  }
  __syncthreads();
  *total = sum;
  return before + inc - v;
}

// Writes the mask of row entries [lo, hi), given T = t, the number `need` of keys equal to t
// that are kept, how many keys equal t in the whole row, and how many of them lie before lo.
// All arguments are block-uniform (the scan below has barriers).
__device__ void write_range(const float* xr, float* mr, size_t lo, size_t hi, uint32_t t,
                            uint32_t need, uint32_t equal_count, uint32_t equal_before,
                            uint32_t* warp_sums) {
  if (need == equal_count || equal_before >= need) {
    // Every key equal to t is kept, or none in this range is: no ranking by index needed.
    const bool keep_equal = need == equal_count;
    for (size_t j = lo + threadIdx.x; j < hi; j += kBlock) {
      const uint32_t key = rank_key(xr[j]);
      mr[j] = (key > t || (keep_equal && key == t)) ? 1.0f : 0.0f;
    }
    return;
  }
  uint32_t seen = equal_before;
  for (size_t tile = lo; tile < hi; tile += kBlock) {
    const size_t j = tile + threadIdx.x;
    const bool in = j < hi;
    const uint32_t key = in ? rank_key(xr[j]) : 0u;
    const bool eq = in && key == t;
    uint32_t tile_equal;
    const uint32_t rank = seen + block_exclusive_scan(eq ? 1u : 0u, warp_sums, &tile_equal);
    if (in) mr[j] = (key > t || (eq && rank < need)) ? 1.0f : 0.0f;
    seen += tile_equal;
  }
}

// One block per row; the row is re-read from memory (L1/L2) on each of its five passes.
__global__ void __launch_bounds__(kBlock)
    topk_by_block(size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  __shared__ uint32_t hist[256];
  __shared__ Digit chosen;
  __shared__ uint32_t warp_sums[kBlock / 32];
  for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* xr = x + row * cols;
    uint32_t prefix = 0, prefix_mask = 0, remaining = k, equal_count = 0;
    for (int shift = 24; shift >= 0; shift -= 8) {
      hist[threadIdx.x] = 0;
      __syncthreads();
      for (size_t j = threadIdx.x; j < cols; j += kBlock) {
        const uint32_t key = rank_key(xr[j]);
        if ((key & prefix_mask) == prefix) atomicAdd(&hist[(key >> shift) & 0xffu], 1u);
      }
      __syncthreads();
      if (threadIdx.x < 32) {
        const Digit d = select_digit(hist, remaining);
        if (threadIdx.x == 0) chosen = d;
      }
      __syncthreads();
      prefix |= chosen.digit << shift;
      prefix_mask |= 0xffu << shift;
      remaining -= chosen.above;
      equal_count = chosen.count;
      __syncthreads();  // `chosen` and `hist` are rewritten by the next pass
    }
    write_range(xr, mask + row * cols, 0, cols, prefix, remaining, equal_count, 0, warp_sums);
  }
}

// ---------------------------------------------------------------------------------------------
// Few very long rows: the same passes, each row cut into chunks of kChunk handled by separate
// blocks. Histograms are summed in memory with integer atomics (exact, order-free); a small
// kernel per pass picks the byte; the keys equal to T are then counted per chunk and
// prefix-summed per row so that each chunk knows how many precede it.

constexpr uint32_t kChunk = 16384;

struct SplitState {
  uint32_t prefix, prefix_mask, remaining, equal_count;
};

__global__ void split_init(SplitState* st, size_t rows, uint32_t k) {
  const size_t i = static_cast<size_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (i < rows) st[i] = SplitState{0u, 0u, k, 0u};
}

__device__ __forceinline__ void chunk_range(size_t nchunks, uint32_t cols, size_t* row, size_t* lo,
                                            size_t* hi) {
  *row = blockIdx.x / nchunks;
  *lo = (blockIdx.x % nchunks) * kChunk;
  *hi = *lo + kChunk < cols ? *lo + kChunk : cols;
}

__global__ void __launch_bounds__(kBlock)
    split_hist(const float* x, uint32_t cols, size_t nchunks, int shift, const SplitState* st,
               uint32_t* hist) {
  __shared__ uint32_t h[256];
  size_t row, lo, hi;
  chunk_range(nchunks, cols, &row, &lo, &hi);
  h[threadIdx.x] = 0;
  __syncthreads();
  const SplitState s = st[row];
  const float* xr = x + row * cols;
  for (size_t j = lo + threadIdx.x; j < hi; j += kBlock) {
    const uint32_t key = rank_key(xr[j]);
    if ((key & s.prefix_mask) == s.prefix) atomicAdd(&h[(key >> shift) & 0xffu], 1u);
  }
  __syncthreads();
  if (h[threadIdx.x] != 0) atomicAdd(&hist[row * 256 + threadIdx.x], h[threadIdx.x]);
}

__global__ void split_select(const uint32_t* hist, SplitState* st, int shift) {
  const size_t row = blockIdx.x;
  SplitState s = st[row];
  const Digit d = select_digit(hist + row * 256, s.remaining);
  if (threadIdx.x == 0) {
    s.prefix |= d.digit << shift;
    s.prefix_mask |= 0xffu << shift;
    s.remaining -= d.above;
    s.equal_count = d.count;
    st[row] = s;
  }
}

__global__ void __launch_bounds__(kBlock)
    split_count_equal(const float* x, uint32_t cols, size_t nchunks, const SplitState* st,
                      uint32_t* equal) {
  size_t row, lo, hi;
  chunk_range(nchunks, cols, &row, &lo, &hi);
  const SplitState s = st[row];
  if (s.remaining == s.equal_count) return;  // all equal keys kept: no ranking needed
  const float* xr = x + row * cols;
  uint32_t n = 0;
  for (size_t tile = lo; tile < hi; tile += kBlock) {
    const size_t j = tile + threadIdx.x;
    n += __syncthreads_count(j < hi && rank_key(xr[j]) == s.prefix);
  }
  if (threadIdx.x == 0) equal[blockIdx.x] = n;
}

// In place: per row, the count of equal keys in each chunk becomes the count before it.
__global__ void __launch_bounds__(kBlock)
    split_scan_equal(uint32_t* equal, size_t nchunks, const SplitState* st) {
  __shared__ uint32_t warp_sums[kBlock / 32];
  const size_t row = blockIdx.x;
  const SplitState s = st[row];
  if (s.remaining == s.equal_count) return;
  uint32_t* e = equal + row * nchunks;
  uint32_t running = 0;
  for (size_t tile = 0; tile < nchunks; tile += kBlock) {
    const size_t c = tile + threadIdx.x;
    const uint32_t v = c < nchunks ? e[c] : 0u;
    uint32_t tile_sum;
    const uint32_t before = block_exclusive_scan(v, warp_sums, &tile_sum);
    if (c < nchunks) e[c] = running + before;
    running += tile_sum;
  }
}

__global__ void __launch_bounds__(kBlock)
    split_write(const float* x, float* mask, uint32_t cols, size_t nchunks, const SplitState* st,
                const uint32_t* equal_before) {
  __shared__ uint32_t warp_sums[kBlock / 32];
  size_t row, lo, hi;
  chunk_range(nchunks, cols, &row, &lo, &hi);
  const SplitState s = st[row];
  const uint32_t before = s.remaining == s.equal_count ? 0u : equal_before[blockIdx.x];
  write_range(x + row * cols, mask + row * cols, lo, hi, s.prefix, s.remaining, s.equal_count,
              before, warp_sums);
}

}  // namespace

int topk_split(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  const size_t nchunks = ceil_div(cols, kChunk);
  const unsigned blocks = static_cast<unsigned>(rows * nchunks);
  Scratch scratch(s);
  auto* st = scratch.get<SplitState>(rows);
  auto* hist = scratch.get<uint32_t>(rows * 256);
  auto* equal = scratch.get<uint32_t>(rows * nchunks);
  if (st == nullptr || hist == nullptr || equal == nullptr) return 1;
  split_init<<<static_cast<unsigned>(ceil_div(rows, kBlock)), kBlock, 0, s>>>(st, rows, k);
  for (int shift = 24; shift >= 0; shift -= 8) {
    if (cudaMemsetAsync(hist, 0, rows * 256 * sizeof(uint32_t), s) != cudaSuccess) return 1;
    split_hist<<<blocks, kBlock, 0, s>>>(x, cols, nchunks, shift, st, hist);
    split_select<<<static_cast<unsigned>(rows), 32, 0, s>>>(hist, st, shift);
  }
  split_count_equal<<<blocks, kBlock, 0, s>>>(x, cols, nchunks, st, equal);
  split_scan_equal<<<static_cast<unsigned>(rows), kBlock, 0, s>>>(equal, nchunks, st);
  split_write<<<blocks, kBlock, 0, s>>>(x, mask, cols, nchunks, st, equal);
  return launch_status();
}

int topk_histogram_rows(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x,
                        float* mask) {
  topk_by_block<<<grid_for(rows, 1), kBlock, 0, s>>>(rows, cols, k, x, mask);
  return launch_status();
}

}  // namespace tapecheck_cuda
