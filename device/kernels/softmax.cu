// softmax / log-softmax along the last axis, forward and backward (SPEC.md, softmaxLast and
// logSoftmaxLast). Rows are contiguous: row r is x[r * cols, (r + 1) * cols).
#include "entry.h"
#include "row_engine.cuh"
#include "softmax_math.cuh"

namespace tapecheck_cuda {
namespace {

struct Contiguous {
  uint32_t cols;
  __device__ size_t row_base(size_t row) const { return row * cols; }
  __device__ size_t stride() const { return 1; }
};

template <bool kLog>
struct SoftmaxFwd : Contiguous, MaxSumStages<kLog> {
  using Stages = MaxSumStages<kLog>;
  static constexpr bool kGlobal = false;
  using Row = MaxSumRow;
  struct Elem {
    float x;
  };
  const float* x;
  float* y;

  __device__ Row row_begin(size_t) const { return Row{}; }
  __device__ Elem load(const Row&, size_t idx, uint32_t) const { return Elem{x[idx]}; }
  __device__ Acc<1> value(int k, const Row& R, const Elem& e, uint32_t) const {
    return Stages::value(k, R, e.x);
  }
  __device__ void stage_done(int k, Row& R, const Acc<1>& a) const { Stages::stage_done(k, R, a); }
  __device__ void row_done(const Row&, size_t) const {}
  __device__ double write(const Row& R, const Elem& e, size_t idx, uint32_t) const {
    y[idx] = kLog ? static_cast<float>(Stages::log_prob(R, e.x)) : Stages::prob(R, e.x);
    return 0.0;
  }
};

// Both backward passes need one row sum; the products of two floats are exact in double.
struct SoftmaxBwd : Contiguous {
  static constexpr int kStages = 1;
  static constexpr int kWidth = 1;
  static constexpr bool kGlobal = false;
  __host__ __device__ static constexpr Red kind(int) { return Red::Sum; }
  struct Row {
    double s;  // sum_j dy_j * y_j
  };
  struct Elem {
    float y, dy;
  };
  const float* y;
  const float* dy;
  float* dx;

  __device__ Row row_begin(size_t) const { return Row{}; }
  __device__ Elem load(const Row&, size_t idx, uint32_t) const { return Elem{y[idx], dy[idx]}; }
  __device__ Acc<1> value(int, const Row&, const Elem& e, uint32_t) const {
    return Acc<1>{{static_cast<double>(e.dy) * e.y}};
  }
  __device__ void stage_done(int, Row& R, const Acc<1>& a) const { R.s = a.v[0]; }
  __device__ void row_done(const Row&, size_t) const {}
  __device__ double write(const Row& R, const Elem& e, size_t idx, uint32_t) const {
    dx[idx] = static_cast<float>(static_cast<double>(e.y) * (static_cast<double>(e.dy) - R.s));
    return 0.0;
  }
};

struct LogSoftmaxBwd : Contiguous {
  static constexpr int kStages = 1;
  static constexpr int kWidth = 1;
  static constexpr bool kGlobal = false;
  __host__ __device__ static constexpr Red kind(int) { return Red::Sum; }
  struct Row {
    double s;  // sum_j dy_j
  };
  struct Elem {
    float y, dy;
  };
  const float* y;
  const float* dy;
  float* dx;

  __device__ Row row_begin(size_t) const { return Row{}; }
  __device__ Elem load(const Row&, size_t idx, uint32_t) const { return Elem{y[idx], dy[idx]}; }
  __device__ Acc<1> value(int, const Row&, const Elem& e, uint32_t) const {
    return Acc<1>{{static_cast<double>(e.dy)}};
  }
  __device__ void stage_done(int, Row& R, const Acc<1>& a) const { R.s = a.v[0]; }
  __device__ void row_done(const Row&, size_t) const {}
  __device__ double write(const Row& R, const Elem& e, size_t idx, uint32_t) const {
    dx[idx] = static_cast<float>(static_cast<double>(e.dy) - static_cast<double>(expf(e.y)) * R.s);
    return 0.0;
  }
};

template <bool kLog>
int softmax_forward(void* stream, uint32_t rows, uint32_t cols, const float* x, float* y) {
  SoftmaxFwd<kLog> op{};
  op.cols = cols;
  op.x = x;
  op.y = y;
  Scratch scratch(as_stream(stream));
  return run_rows(op, rows, cols, 1, as_stream(stream), scratch);
}

}  // namespace

int softmax_fwd(void* stream, uint32_t rows, uint32_t cols, const float* x, float* y) {
  return softmax_forward<false>(stream, rows, cols, x, y);
}

int log_softmax_fwd(void* stream, uint32_t rows, uint32_t cols, const float* x, float* y) {
  return softmax_forward<true>(stream, rows, cols, x, y);
}

int softmax_bwd(void* stream, uint32_t rows, uint32_t cols, const float* y, const float* dy,
                float* dx) {
  SoftmaxBwd op{};
  op.cols = cols;
  op.y = y;
  op.dy = dy;
  op.dx = dx;
  Scratch scratch(as_stream(stream));
  return run_rows(op, rows, cols, 1, as_stream(stream), scratch);
}

int log_softmax_bwd(void* stream, uint32_t rows, uint32_t cols, const float* y, const float* dy,
                    float* dx) {
  LogSoftmaxBwd op{};
  op.cols = cols;
  op.y = y;
  op.dy = dy;
  op.dx = dx;
  Scratch scratch(as_stream(stream));
  return run_rows(op, rows, cols, 1, as_stream(stream), scratch);
}

}  // namespace tapecheck_cuda
