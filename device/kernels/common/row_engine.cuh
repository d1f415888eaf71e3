// One engine for every "row" operation: a few reductions over a row (each may use the results
// of the ones before), then an elementwise write. Softmax, log-softmax, layer and batch norm
// and cross-entropy are all of this shape; the engine owns the launch strategy and each op
// owns only its arithmetic.
//
// An op is a small struct, copied to the device by value, with:
//   static constexpr int  kStages;   reductions before the write (at least 1)
//   static constexpr int  kWidth;    doubles reduced together per stage
//   static constexpr bool kGlobal;   write() returns a contribution to one sum over all rows
//   static __host__ __device__ constexpr Red kind(int stage);
//   struct Row;    per-row state; trivially copyable (the split strategy keeps it in memory)
//   struct Elem;   what one element's position provides (loads only)
//   size_t row_base(size_t row) const;     offset of element 0 of the row
//   size_t stride() const;                 distance between consecutive elements of a row
//   Row  row_begin(size_t row) const;      per-row inputs (e.g. a saved inv_std)
//   Elem load(const Row&, size_t idx, uint32_t j) const;
//   Acc<kWidth> value(int stage, const Row&, const Elem&, uint32_t j) const;
//   void stage_done(int stage, Row&, const Acc<kWidth>& total) const;
//   void row_done(const Row&, size_t row) const;   run by one thread per row
//   double write(const Row&, const Elem&, size_t idx, uint32_t j) const;
//
// Which strategy runs depends only on (rows, cols, stride) and the op's number of stages, never
// on the device, and each strategy sums in a fixed order, so results are repeatable bit for bit.
#pragma once

#include "common/reduce.cuh"

namespace tapecheck_cuda {

// Rows up to this long are held in registers by one warp (or a smaller group of lanes).
// Longer rows go to a whole block, whose reductions cost two barriers each: ops with one or two
// reductions are faster that way from 257 columns on, while the three-reduction normalization
// forward stays faster per warp up to 1024 columns (CHANGELOG 1.0.0).
constexpr uint32_t kGroupMaxCols = 1024;
constexpr uint32_t kGroupMaxColsFewStages = 256;
// Rows up to this long are held in registers by one block; longer ones are re-read per stage.
constexpr uint32_t kBlockCacheCols = kBlock * 32;
// Few, long rows are cut into chunks handled by separate blocks.
constexpr size_t kSplitMaxRows = 256;
constexpr uint32_t kSplitMinCols = 65536;
constexpr uint32_t kSplitChunk = 16384;
// At least two blocks per multiprocessor (at most 128 registers a thread): the longest
// register caches otherwise take up to 255 registers and leave one block per multiprocessor;
// two blocks with a few spilled registers are as fast or faster (CHANGELOG 1.0.0).
constexpr int kMinBlocks = 2;
// Strided rows (cross-entropy on an inner axis) are read coalesced by one thread per row.
constexpr size_t kStrideThreadMin = 32;
constexpr size_t kStrideThreadMinRows = 8192;

// ---------------------------------------------------------------------------------------------
// Group strategy: g lanes per row (g = 1..32), VPT elements per lane kept in registers, or
// VPT = 0 to re-read the row for every stage.
template <class Op, int VPT>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    rows_by_group(Op op, size_t rows, uint32_t cols, unsigned g, double* global_partial) {
  constexpr int W = Op::kWidth;
  const unsigned lane = threadIdx.x & (g - 1);
  const unsigned group = threadIdx.x / g;
  const size_t rows_per_block = kBlock / g;
  const size_t stride = op.stride();
  double gsum = 0.0;

  // The loop bound is block-uniform so every lane stays in the shuffles of the reductions.
  for (size_t first = blockIdx.x * rows_per_block; first < rows;
       first += static_cast<size_t>(gridDim.x) * rows_per_block) {
    const size_t row = first + group;
    const bool live = row < rows;
    typename Op::Row R{};
    size_t base = 0;
    if (live) {
      R = op.row_begin(row);
      base = op.row_base(row);
    }
    if constexpr (VPT > 0) {
      typename Op::Elem e[VPT];
#pragma unroll
      for (int i = 0; i < VPT; ++i) {
        const uint32_t j = lane + static_cast<uint32_t>(i) * g;
        if (live && j < cols) e[i] = op.load(R, base + j * stride, j);
      }
#pragma unroll
      for (int k = 0; k < Op::kStages; ++k) {
        const Red r = Op::kind(k);
        Acc<W> a = acc_identity<W>(r);
#pragma unroll
        for (int i = 0; i < VPT; ++i) {
          const uint32_t j = lane + static_cast<uint32_t>(i) * g;
          if (live && j < cols) acc_combine(r, a, op.value(k, R, e[i], j));
        }
        group_allreduce(r, a, g);
        op.stage_done(k, R, a);
      }
      if (live && lane == 0) op.row_done(R, row);
#pragma unroll
      for (int i = 0; i < VPT; ++i) {
        const uint32_t j = lane + static_cast<uint32_t>(i) * g;
        if (live && j < cols) gsum += op.write(R, e[i], base + j * stride, j);
      }
    } else {
#pragma unroll
      for (int k = 0; k < Op::kStages; ++k) {
        const Red r = Op::kind(k);
        Acc<W> a = acc_identity<W>(r);
        if (live) {
          for (size_t j = lane; j < cols; j += g) {
            const size_t idx = base + j * stride;
            const uint32_t jj = static_cast<uint32_t>(j);
            acc_combine(r, a, op.value(k, R, op.load(R, idx, jj), jj));
          }
        }
        group_allreduce(r, a, g);
        op.stage_done(k, R, a);
      }
      if (live && lane == 0) op.row_done(R, row);
      if (live) {
        for (size_t j = lane; j < cols; j += g) {
          const size_t idx = base + j * stride;
          const uint32_t jj = static_cast<uint32_t>(j);
          gsum += op.write(R, op.load(R, idx, jj), idx, jj);
        }
      }
    }
  }
  if constexpr (Op::kGlobal) {
    __shared__ Acc<1> smem[kBlock / 32];
    const Acc<1> t = block_allreduce(Red::Sum, Acc<1>{{gsum}}, smem);
    if (threadIdx.x == 0) global_partial[blockIdx.x] = t.v[0];
  }
}

// ---------------------------------------------------------------------------------------------
// Block strategy: one block per row, VPT elements per thread in registers (VPT = 0: re-read).
template <class Op, int VPT>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    rows_by_block(Op op, size_t rows, uint32_t cols, double* global_partial) {
  constexpr int W = Op::kWidth;
  __shared__ Acc<W> smem[kBlock / 32];
  const size_t stride = op.stride();
  double gsum = 0.0;

  for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
    typename Op::Row R = op.row_begin(row);
    const size_t base = op.row_base(row);
    if constexpr (VPT > 0) {
      typename Op::Elem e[VPT];
#pragma unroll
      for (int i = 0; i < VPT; ++i) {
        const uint32_t j = threadIdx.x + static_cast<uint32_t>(i) * kBlock;
        if (j < cols) e[i] = op.load(R, base + j * stride, j);
      }
#pragma unroll
      for (int k = 0; k < Op::kStages; ++k) {
        const Red r = Op::kind(k);
        Acc<W> a = acc_identity<W>(r);
#pragma unroll
        for (int i = 0; i < VPT; ++i) {
          const uint32_t j = threadIdx.x + static_cast<uint32_t>(i) * kBlock;
          if (j < cols) acc_combine(r, a, op.value(k, R, e[i], j));
        }
        a = block_allreduce(r, a, smem);
        op.stage_done(k, R, a);
      }
      if (threadIdx.x == 0) op.row_done(R, row);
#pragma unroll
      for (int i = 0; i < VPT; ++i) {
        const uint32_t j = threadIdx.x + static_cast<uint32_t>(i) * kBlock;
        if (j < cols) gsum += op.write(R, e[i], base + j * stride, j);
      }
    } else {
#pragma unroll
      for (int k = 0; k < Op::kStages; ++k) {
        const Red r = Op::kind(k);
        Acc<W> a = acc_identity<W>(r);
        for (size_t j = threadIdx.x; j < cols; j += kBlock) {
          const size_t idx = base + j * stride;
          const uint32_t jj = static_cast<uint32_t>(j);
          acc_combine(r, a, op.value(k, R, op.load(R, idx, jj), jj));
        }
        a = block_allreduce(r, a, smem);
        op.stage_done(k, R, a);
      }
      if (threadIdx.x == 0) op.row_done(R, row);
      for (size_t j = threadIdx.x; j < cols; j += kBlock) {
        const size_t idx = base + j * stride;
        const uint32_t jj = static_cast<uint32_t>(j);
        gsum += op.write(R, op.load(R, idx, jj), idx, jj);
      }
    }
  }
  if constexpr (Op::kGlobal) {
    __shared__ Acc<1> gsmem[kBlock / 32];
    const Acc<1> t = block_allreduce(Red::Sum, Acc<1>{{gsum}}, gsmem);
    if (threadIdx.x == 0) global_partial[blockIdx.x] = t.v[0];
  }
}

// ---------------------------------------------------------------------------------------------
// Split strategy: a row is cut into chunks of kSplitChunk; block b handles chunk b % nchunks
// of row b / nchunks. Each stage writes one partial per block; a finalizing launch (one block
// per row) combines a row's partials in chunk order and stores the updated Row.
template <class Op>
__global__ void __launch_bounds__(kBlock)
    split_stage(Op op, int k, uint32_t cols, size_t nchunks, const typename Op::Row* states,
                Acc<Op::kWidth>* partial) {
  constexpr int W = Op::kWidth;
  __shared__ Acc<W> smem[kBlock / 32];
  const size_t row = blockIdx.x / nchunks;
  const size_t chunk = blockIdx.x % nchunks;
  const typename Op::Row R = (k == 0) ? op.row_begin(row) : states[row];
  const size_t base = op.row_base(row);
  const size_t stride = op.stride();
  const size_t lo = chunk * kSplitChunk;
  const size_t hi = lo + kSplitChunk < cols ? lo + kSplitChunk : cols;
  const Red r = Op::kind(k);
  Acc<W> a = acc_identity<W>(r);
  for (size_t j = lo + threadIdx.x; j < hi; j += kBlock) {
    const size_t idx = base + j * stride;
    const uint32_t jj = static_cast<uint32_t>(j);
    acc_combine(r, a, op.value(k, R, op.load(R, idx, jj), jj));
  }
  a = block_allreduce(r, a, smem);
  if (threadIdx.x == 0) partial[blockIdx.x] = a;
}

template <class Op>
__global__ void __launch_bounds__(kBlock)
    split_finalize(Op op, int k, size_t nchunks, typename Op::Row* states,
                   const Acc<Op::kWidth>* partial) {
  constexpr int W = Op::kWidth;
  __shared__ Acc<W> smem[kBlock / 32];
  const size_t row = blockIdx.x;
  const Red r = Op::kind(k);
  Acc<W> a = acc_identity<W>(r);
  for (size_t c = threadIdx.x; c < nchunks; c += kBlock) acc_combine(r, a, partial[row * nchunks + c]);
  a = block_allreduce(r, a, smem);
  if (threadIdx.x == 0) {
    typename Op::Row R = (k == 0) ? op.row_begin(row) : states[row];
    op.stage_done(k, R, a);
    if (k == Op::kStages - 1) op.row_done(R, row);
    states[row] = R;
  }
}

template <class Op>
__global__ void __launch_bounds__(kBlock)
    split_write(Op op, uint32_t cols, size_t nchunks, const typename Op::Row* states,
                double* global_partial) {
  const size_t row = blockIdx.x / nchunks;
  const size_t chunk = blockIdx.x % nchunks;
  const typename Op::Row R = states[row];
  const size_t base = op.row_base(row);
  const size_t stride = op.stride();
  const size_t lo = chunk * kSplitChunk;
  const size_t hi = lo + kSplitChunk < cols ? lo + kSplitChunk : cols;
  double gsum = 0.0;
  for (size_t j = lo + threadIdx.x; j < hi; j += kBlock) {
    const size_t idx = base + j * stride;
    const uint32_t jj = static_cast<uint32_t>(j);
    gsum += op.write(R, op.load(R, idx, jj), idx, jj);
  }
  if constexpr (Op::kGlobal) {
    __shared__ Acc<1> gsmem[kBlock / 32];
    const Acc<1> t = block_allreduce(Red::Sum, Acc<1>{{gsum}}, gsmem);
    if (threadIdx.x == 0) global_partial[blockIdx.x] = t.v[0];
  }
}

// ---------------------------------------------------------------------------------------------
// Host side.

struct RowPlan {
  enum Kind { Group, Block, Split } kind;
  unsigned g;       // lanes per row (Group)
  unsigned vpt;     // elements per thread in registers, 0 = re-read (Group, Block)
  size_t grid;      // blocks launched by the writing kernel (= number of global partials)
  size_t nchunks;   // chunks per row (Split)
};

inline RowPlan plan_rows(size_t rows, uint32_t cols, size_t stride, int stages) {
  const uint32_t group_max_cols = stages <= 2 ? kGroupMaxColsFewStages : kGroupMaxCols;
  RowPlan p{};
  if (stride >= kStrideThreadMin && rows >= kStrideThreadMinRows) {
    p.kind = RowPlan::Group;
    p.g = 1;
    p.vpt = cols <= 32 ? next_pow2(cols) : 0;
    p.grid = grid_for(rows, kBlock);
  } else if (cols <= group_max_cols) {
    p.kind = RowPlan::Group;
    p.g = cols <= 32 ? next_pow2(cols) : 32;
    p.vpt = next_pow2(static_cast<unsigned>(ceil_div(cols, p.g)));
    p.grid = grid_for(rows, kBlock / p.g);
  } else if (rows >= kSplitMaxRows || cols < kSplitMinCols) {
    p.kind = RowPlan::Block;
    p.vpt = cols <= kBlockCacheCols ? next_pow2(static_cast<unsigned>(ceil_div(cols, kBlock))) : 0;
    p.grid = grid_for(rows, 1);
  } else {
    p.kind = RowPlan::Split;
    p.nchunks = ceil_div(cols, kSplitChunk);
    p.grid = rows * p.nchunks;
  }
  return p;
}

template <class Op, int VPT>
void launch_group(const Op& op, const RowPlan& p, size_t rows, uint32_t cols, cudaStream_t s,
                  double* gp) {
  rows_by_group<Op, VPT><<<static_cast<unsigned>(p.grid), kBlock, 0, s>>>(op, rows, cols, p.g, gp);
}

template <class Op, int VPT>
void launch_block(const Op& op, const RowPlan& p, size_t rows, uint32_t cols, cudaStream_t s,
                  double* gp) {
  rows_by_block<Op, VPT><<<static_cast<unsigned>(p.grid), kBlock, 0, s>>>(op, rows, cols, gp);
}

// Runs `op` over rows x cols (elements `stride` apart). For ops with kGlobal, *partials and
// *count receive the per-block contributions (owned by `scratch`) for the caller to finish.
// Returns 0 when every launch was accepted.
template <class Op>
int run_rows(const Op& op, size_t rows, uint32_t cols, size_t stride, cudaStream_t s,
             Scratch& scratch, const double** partials = nullptr, size_t* count = nullptr) {
  const RowPlan p = plan_rows(rows, cols, stride, Op::kStages);
  double* gp = nullptr;
  if constexpr (Op::kGlobal) {
    gp = scratch.get<double>(p.grid);
    if (gp == nullptr) return 1;
    *partials = gp;
    *count = p.grid;
  }
  switch (p.kind) {
    case RowPlan::Group:
      switch (p.vpt) {
        case 0: launch_group<Op, 0>(op, p, rows, cols, s, gp); break;
        case 1: launch_group<Op, 1>(op, p, rows, cols, s, gp); break;
        case 2: launch_group<Op, 2>(op, p, rows, cols, s, gp); break;
        case 4: launch_group<Op, 4>(op, p, rows, cols, s, gp); break;
        case 8: launch_group<Op, 8>(op, p, rows, cols, s, gp); break;
        case 16: launch_group<Op, 16>(op, p, rows, cols, s, gp); break;
        case 32: launch_group<Op, 32>(op, p, rows, cols, s, gp); break;
        default: return 1;
      }
      break;
    case RowPlan::Block:
      switch (p.vpt) {
        case 0: launch_block<Op, 0>(op, p, rows, cols, s, gp); break;
        case 2: launch_block<Op, 2>(op, p, rows, cols, s, gp); break;
        case 4: launch_block<Op, 4>(op, p, rows, cols, s, gp); break;
        case 8: launch_block<Op, 8>(op, p, rows, cols, s, gp); break;
        case 16: launch_block<Op, 16>(op, p, rows, cols, s, gp); break;
        case 32: launch_block<Op, 32>(op, p, rows, cols, s, gp); break;
        default: return 1;
      }
      break;
    case RowPlan::Split: {
      auto* states = scratch.get<typename Op::Row>(rows);
      auto* partial = scratch.get<Acc<Op::kWidth>>(p.grid);
      if (states == nullptr || partial == nullptr) return 1;
      const unsigned grid = static_cast<unsigned>(p.grid);
      for (int k = 0; k < Op::kStages; ++k) {
        split_stage<Op><<<grid, kBlock, 0, s>>>(op, k, cols, p.nchunks, states, partial);
        split_finalize<Op><<<static_cast<unsigned>(rows), kBlock, 0, s>>>(op, k, p.nchunks, states,
                                                                          partial);
      }
      split_write<Op><<<grid, kBlock, 0, s>>>(op, cols, p.nchunks, states, gp);
      break;
    }
  }
  return launch_status();
}

}  // namespace tapecheck_cuda
