// Row tiling for the bandwidth-bound row kernels (softmax family): which thread holds which
// elements of a row, how they are loaded, and the fixed-order reductions across the threads
// of a row.
//
// A row is cut into units of V consecutive floats (V = 4 when cols % 4 == 0, else 1). With T
// threads per row, thread t holds units t, t + T, t + 2T, ... (N of them, in registers).
// Unit i of thread t starts at element (i * T + t) * V, so a warp's loads are contiguous.
//
// The tile (V, T, N) is chosen from cols alone, and each reduction runs in an order fixed by
// the tile: per thread over its units in order (inside a unit a fixed pairwise tree), then a
// butterfly across the lanes of a warp, then the warps of a block in index order. So a row's
// result depends only on its data and cols: not on the number of rows, not on the device, and
// not on the pointers' alignment (a misaligned unit of 4 is loaded as 4 scalars, same order).
#pragma once

#include "common/common.cuh"

namespace tapecheck_cuda {

// NaN-keeping float maximum in one instruction (sm_80+): a NaN row must come out all NaN.
__device__ __forceinline__ float fmax_nan(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

// How a kernel reads an input: Cached (ld.global.nc), or Once (ld.global.cs, evict-first) for
// inputs whose every element a kernel loads exactly once into registers. Only the softmax
// family's and cross-entropy's kernels read Once: the norms read gamma in every row, and a line
// loaded evict-first is the first L2 gives up.
// Once: softmax forward 0.963-0.975 -> 0.975-0.998 of copy speed; norms -0.16 (CHANGELOG 1.23.0).
enum class Reads { Cached, Once };

// One float or float4 read as kReads says.
template <Reads kReads, class T>
__device__ __forceinline__ T load_as(const T* p) {
  if constexpr (kReads == Reads::Once) {
    return __ldcs(p);
  } else {
    return __ldg(p);
  }
}

// One unit of V floats starting at element i of p. kVec says the addresses are 16-byte
// aligned; otherwise the same four elements are read one by one. A template parameter, not a
// runtime flag: a branch per unit would keep the compiler from issuing a thread's loads
// together, and the loads in flight per thread are what reach copy bandwidth.
template <int V, bool kVec, Reads kReads = Reads::Cached>
__device__ __forceinline__ void load_unit(const float* __restrict__ p, size_t i, float (&o)[V]) {
  if constexpr (V == 4) {
    if constexpr (kVec) {
      const float4 q = load_as<kReads>(reinterpret_cast<const float4*>(p + i));
      o[0] = q.x;
      o[1] = q.y;
      o[2] = q.z;
      o[3] = q.w;
    } else {
#pragma unroll
      for (int k = 0; k < 4; ++k) o[k] = load_as<kReads>(p + i + k);
    }
  } else {
    o[0] = load_as<kReads>(p + i);
  }
}

// Streaming store: the outputs are not re-read by this kernel, keep L2 for the inputs.
template <int V, bool kVec>
__device__ __forceinline__ void store_unit(float* p, size_t i, const float (&o)[V]) {
  if constexpr (V == 4) {
    if constexpr (kVec) {
      __stcs(reinterpret_cast<float4*>(p + i), make_float4(o[0], o[1], o[2], o[3]));
    } else {
#pragma unroll
      for (int k = 0; k < 4; ++k) __stcs(p + i + k, o[k]);
    }
  } else {
    __stcs(p + i, o[0]);
  }
}

// Asks L2 for `bytes` bytes from p (sm_90 bulk prefetch: one instruction, no registers, no
// completion to wait on, no effect on any value). p 16-byte aligned, bytes a multiple of 16.
__device__ __forceinline__ void prefetch_l2(const float* p, uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes));
}

// Thread 0 asks L2 for rows [next, next + count) of p (those that exist): the rows this block
// takes in its next iteration, so that their loads hit L2 while HBM works through the barriers
// of the current ones. kOn: a kernel that prefetches, on its 16-byte path (cols % 4 == 0 and an
// aligned p, so every row starts 16-byte aligned).
// Only ln_bwd_fused's block rows use it (+0.06 of copy speed at 2K-8K); the forward tiles and
// warp tiles lose with it, most likely to the many small requests (CHANGELOG 1.4.1).
template <bool kOn>
__device__ __forceinline__ void prefetch_rows(const float* p, size_t next, size_t count,
                                              size_t rows, uint32_t cols) {
  if constexpr (kOn) {
    if (threadIdx.x != 0 || next >= rows) return;
    if (count > rows - next) count = rows - next;
    prefetch_l2(p + next * cols, static_cast<uint32_t>(count * cols * sizeof(float)));
  }
}

// The sum of one unit in float, by a fixed pairwise tree.
template <int V>
__device__ __forceinline__ float unit_sum(const float (&o)[V]) {
  if constexpr (V == 4) {
    return (o[0] + o[1]) + (o[2] + o[3]);
  } else {
    return o[0];
  }
}

// Reductions across the T threads of a row. kBlockRow: the row owns the whole block
// (blockDim.x == T, a multiple of 32); otherwise T is a power of two <= 32 and the row's lanes
// are an aligned group of a warp. Butterfly partners combine the same two values with a
// commutative operation, so every lane ends with the identical result. `smem` holds one entry
// per warp; the function ends with a barrier so it may be reused at once. All threads of the
// block must call it (the callers' loops are block-uniform).
template <bool kBlockRow>
__device__ __forceinline__ float row_max(float v, unsigned T, float* smem) {
  const unsigned width = kBlockRow ? 32u : T;
  for (unsigned off = width >> 1; off != 0; off >>= 1) v = fmax_nan(v, __shfl_xor_sync(0xffffffffu, v, off));
  if constexpr (kBlockRow) {
    const unsigned warps = blockDim.x >> 5;
    if ((threadIdx.x & 31u) == 0) smem[threadIdx.x >> 5] = v;
    __syncthreads();
    v = smem[0];
    for (unsigned w = 1; w < warps; ++w) v = fmax_nan(v, smem[w]);
    __syncthreads();
  }
  return v;
}

template <bool kBlockRow>
__device__ __forceinline__ double row_sum(double v, unsigned T, double* smem) {
  const unsigned width = kBlockRow ? 32u : T;
  for (unsigned off = width >> 1; off != 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  if constexpr (kBlockRow) {
    const unsigned warps = blockDim.x >> 5;
    if ((threadIdx.x & 31u) == 0) smem[threadIdx.x >> 5] = v;
    __syncthreads();
    v = smem[0];
    for (unsigned w = 1; w < warps; ++w) v += smem[w];
    __syncthreads();
  }
  return v;
}

// K independent sums at once, each added in exactly the order row_sum adds it (so the results
// are bit for bit those of K calls), with one barrier pair instead of K: the barriers, not the
// additions, are what a long row waits on. `smem` holds K x 32 entries.
template <bool kBlockRow, int K>
__device__ __forceinline__ void row_sums(double (&v)[K], unsigned T, double (*smem)[32]) {
  const unsigned width = kBlockRow ? 32u : T;
  for (unsigned off = width >> 1; off != 0; off >>= 1) {
#pragma unroll
    for (int q = 0; q < K; ++q) v[q] += __shfl_xor_sync(0xffffffffu, v[q], off);
  }
  if constexpr (kBlockRow) {
    const unsigned warps = blockDim.x >> 5;
    if ((threadIdx.x & 31u) == 0) {
#pragma unroll
      for (int q = 0; q < K; ++q) smem[q][threadIdx.x >> 5] = v[q];
    }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < K; ++q) {
      v[q] = smem[q][0];
      for (unsigned w = 1; w < warps; ++w) v[q] += smem[q][w];
    }
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------------------
// Host side: the tile for a row length. `nmax4` = the most units of 4 a thread may hold (the
// scalar tile holds up to 2 * nmax4 single floats: a scalar element costs more registers for
// its address and predicate), sized by the caller to its register budget.
struct Tile {
  enum Mode { Warp, Block, Stream } mode;
  int V;        // floats per unit
  int N;        // units per thread (Warp, Block)
  unsigned T;   // threads per row
  unsigned threads;  // block size of the launch
};

// Rows of up to 8 float4s (cols <= 32): with 2 lanes of 4 float4s a row, a warp's load touches
// 16 rows' lines for 32 bytes each; 4 lanes of 2 float4s halve the lines a request touches (8
// rows x 64 bytes) for one more butterfly step and half the bytes in flight a lane.
// 4 lanes of 2: 0.85-0.98 of copy speed across the ops, against about 0.75 (CHANGELOG 1.1.0).
constexpr size_t kTinyRowUnits = 8;
constexpr size_t kTinyRowUnitsPerLane = 2;

// The warp tiles of rows of more than kTinyRowUnits units of 4 floats: how many units a lane
// aims for (a row of fewer takes fewer lanes) and the block size, by whether a lane holds at
// most that many units (every row that takes part of a warp, and whole-warp rows of up to 32 x
// lane_units units) or more (longer rows, which a whole warp holds in more units a lane).
// The norms' backward and cross-entropy's forward take the default; the softmax family
// (softmax.cu), the norms' forward (norm_tiles.cuh) and cross-entropy's backward (ce_tiles.cuh)
// take kTwoUnitWarpTiles, each file says why.
struct WarpTileChoice {
  size_t lane_units;
  unsigned aimed_threads;     // the block size where a lane holds at most lane_units units
  unsigned longer_threads;    // where it holds more
};
constexpr WarpTileChoice kDefaultWarpTiles{4, kBlock, kBlock};
// 2 units a lane, in blocks of 128 threads while a lane holds at most 2 (rows of up to 64
// float4s), of kBlock past that.
constexpr WarpTileChoice kTwoUnitWarpTiles{2, 128, kBlock};

inline Tile plan_tile(uint32_t cols, int nmax4, const WarpTileChoice& w = kDefaultWarpTiles) {
  Tile t{};
  t.V = cols % 4 == 0 ? 4 : 1;
  const int nmax = t.V == 4 ? nmax4 : 2 * nmax4;
  const size_t units = ceil_div(cols, static_cast<size_t>(t.V));
  if (units <= 32 * static_cast<size_t>(nmax)) {
    // A warp or a part of one: T lanes, N units each, both powers of two. Short rows get at
    // least c.lane_units units a lane where they can (by default 4: 64 bytes in flight a lane
    // and short cross-lane trees); rows of at most kTinyRowUnits float4s get
    // kTinyRowUnitsPerLane instead (above).
    t.mode = Tile::Warp;
    const bool tiny = t.V == 4 && units <= kTinyRowUnits;
    // w describes the tiles of float4 rows past the tiny ones; the others keep the default.
    const WarpTileChoice& c = t.V == 4 && !tiny ? w : kDefaultWarpTiles;
    const size_t per_lane = tiny ? kTinyRowUnitsPerLane : c.lane_units;
    const size_t want = ceil_div(units, per_lane);
    t.T = want >= 32 ? 32u : next_pow2(static_cast<unsigned>(want));
    t.N = static_cast<int>(next_pow2(static_cast<unsigned>(ceil_div(units, t.T))));
    t.threads = static_cast<size_t>(t.N) <= c.lane_units ? c.aimed_threads : c.longer_threads;
  } else if (units <= 1024 * static_cast<size_t>(nmax)) {
    // One block per row, as many whole warps as the row needs at nmax units a thread.
    t.mode = Tile::Block;
    t.N = nmax;
    t.T = static_cast<unsigned>(ceil_div(ceil_div(units, nmax), 32) * 32);
    t.threads = t.T;
  } else {
    // Longer rows than registers hold: one block of 1024 threads streams the row; the
    // re-reads of a row (256 KiB for 2^16 floats, one block per multiprocessor) come from L2.
    t.mode = Tile::Stream;
    t.N = 0;
    t.T = 1024;
    t.threads = 1024;
  }
  return t;
}

// A block for every row group (common.cuh, grid_covering).
inline unsigned tile_grid(const Tile& t, size_t rows) {
  return grid_covering(rows, t.mode == Tile::Warp ? t.threads / t.T : 1);
}

// At most kMaxGrid blocks, for kernels that write a partial per block (common.cuh, grid_for).
inline unsigned tile_grid_capped(const Tile& t, size_t rows) {
  return grid_for(rows, t.mode == Tile::Warp ? t.threads / t.T : 1);
}

// Calls launch(Bool<kVec>): kVec = vec for units of 4 floats (16-byte loads and stores where the
// pointers allow them), false for scalar units, which have no 16-byte form.
template <int V, class Launch>
void launch_with_vec(bool vec, const Launch& launch) {
  if constexpr (V == 4) {
    if (vec) {
      launch(Bool<true>{});
      return;
    }
  }
  launch(Bool<false>{});
}

// Calls launch(Int<V>, Bool<kVec>) for a Stream tile's kernel: units of 4 floats read 16 bytes
// at a time (vec) or one float at a time, or scalar units.
template <class Launch>
void launch_stream_form(const Tile& t, bool vec, const Launch& launch) {
  if (t.V == 4 && vec) {
    launch(Int<4>{}, Bool<true>{});
  } else if (t.V == 4) {
    launch(Int<4>{}, Bool<false>{});
  } else {
    launch(Int<1>{}, Bool<false>{});
  }
}

// Launches the register kernel for a Warp or Block tile: calls launch(Bool<kBlockRow>, Int<N>,
// Int<V>, Bool<kVec>), with kVec as launch_with_vec gives it. Warp tiles take N = 1, 2, 4, ...
// up to the maximum, Block tiles always the maximum (kNmax4 units of 4, or 2 * kNmax4 single
// floats: scalar units cost more registers each). Only these are instantiated; false, nothing
// launched, for a tile that is none of them.
template <bool kBlockRow, int N, int V, class Launch>
void launch_tile_kernel(bool vec, const Launch& launch) {
  launch_with_vec<V>(vec, [&](auto kvec) { launch(Bool<kBlockRow>{}, Int<N>{}, Int<V>{}, kvec); });
}

template <int V, int N, int kMax, class Launch>
bool launch_warp_tile(int n, bool vec, const Launch& launch) {
  if (n == N) {
    launch_tile_kernel<false, N, V>(vec, launch);
    return true;
  }
  if constexpr (N < kMax) return launch_warp_tile<V, N * 2, kMax>(n, vec, launch);
  return false;
}

template <int kNmax4, class Launch>
bool dispatch_regs(const Tile& t, bool vec, const Launch& launch) {
  if (t.mode == Tile::Block) {
    if (t.V == 4 && t.N == kNmax4) {
      launch_tile_kernel<true, kNmax4, 4>(vec, launch);
      return true;
    }
    if (t.V == 1 && t.N == 2 * kNmax4) {
      launch_tile_kernel<true, 2 * kNmax4, 1>(vec, launch);
      return true;
    }
    return false;
  }
  return t.V == 4 ? launch_warp_tile<4, 1, kNmax4>(t.N, vec, launch)
                  : launch_warp_tile<1, 1, 2 * kNmax4>(t.N, vec, launch);
}

}  // namespace tapecheck_cuda
