// The benchmarked entry points of kernel ABI v1: for each, the buffers it reads and writes, the
// floats per element it reads and writes (which give the byte count that its effective bandwidth
// is measured by, and its mix: stream_mix.h), how its inputs are filled and how it
// is called. One entry per ABI function; README.md explains the byte counts.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tapecheck/kernels_v1.h"

namespace tapecheck::bench {

enum class Op {
  SoftmaxFwd,
  SoftmaxBwd,
  LogSoftmaxFwd,
  LogSoftmaxBwd,
  TopkMask,
  LayerNormFwd,
  LayerNormBwd,
  BatchNormFwd,
  BatchNormBwd,
  CrossEntropyFwd,
  CrossEntropyBwd,
};

// One benchmarked ABI entry point (conformance's OpInfo describes a docs/spec.md operation instead).
struct BenchKernel {
  Op op;
  const char* name;          // the ABI field, e.g. "softmax_fwd"
  const char* family;        // e.g. "softmax": selects both passes in --ops
  unsigned floatsRead;       // minimal floats read per element of the [rows, cols] tensor
  unsigned floatsWritten;    // minimal floats written per element
  bool takesK;               // topk_mask: one row per k
  const char* traffic;       // what the byte count counts, for --help and README.md
  // The minimal bytes read + written per element: what the effective bandwidth divides.
  unsigned bytesPerElement() const { return 4 * (floatsRead + floatsWritten); }
};

// Every entry point, in the order of the ABI struct.
const std::vector<BenchKernel>& allKernels();

// rows x cols elements. batch norm: channels = rows, spatial = cols; cross entropy: outer = rows,
// n = cols, inner = 1, mean = 1.
struct Shape {
  std::uint32_t rows = 0;
  std::uint32_t cols = 0;
  std::uint32_t k = 0;  // topk_mask only
  std::size_t elements() const { return static_cast<std::size_t>(rows) * cols; }
};

// Device memory the ops work in. big[0..3] hold `bigCount` floats each; the per-row / per-column
// vectors hold `smallCount` floats each (>= max(rows, cols) of every shape benchmarked).
struct DeviceBuffers {
  float* big[4] = {nullptr, nullptr, nullptr, nullptr};
  std::size_t bigCount = 0;
  float* gamma = nullptr;
  float* beta = nullptr;
  float* invStd = nullptr;
  float* dgamma = nullptr;
  float* dbeta = nullptr;
  std::size_t smallCount = 0;
  float* loss = nullptr;   // 1 float
  float* dloss = nullptr;  // 1 float
};

// Enqueues deterministic fills of the op's inputs (values in the op's natural domain: gamma near
// 1, beta near 0, inv_std positive, targets non-negative, log-probabilities negative).
cudaError_t fillInputs(Op op, const Shape& shape, const DeviceBuffers& buffers,
                       cudaStream_t stream);

// Calls the op's entry point of `table` on `stream`; returns the kernel's own status (0 = ok).
int callKernel(const tapecheck_kernels_v1& table, Op op, const Shape& shape,
               const DeviceBuffers& buffers, cudaStream_t stream);

}  // namespace tapecheck::bench
