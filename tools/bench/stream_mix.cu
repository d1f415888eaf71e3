// The streaming kernel of a read/write mix (stream_mix.h).
#include "stream_mix.h"

#include <cstdint>

namespace tapecheck::bench {
namespace {

constexpr unsigned kThreads = 256;

__device__ __forceinline__ float scaled(float v, float f) { return v * f; }
__device__ __forceinline__ float4 scaled(const float4& v, float f) {
  return make_float4(v.x * f, v.y * f, v.z * f, v.w * f);
}

__device__ __forceinline__ float add(float a, float b) { return a + b; }
__device__ __forceinline__ float4 add(const float4& a, const float4& b) {
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

struct MixPointers {
  const void* in[kMaxMixReads];
  void* out[kMaxMixWrites];
};

// One item (a float, or 4 as a float4) a thread, in a grid that covers all of them: on an H200
// this form moved a 1 : 1 mix at copy speed, where grid-stride loops over 4 to 16 blocks a
// multiprocessor read 0.87-0.93 of it (README.md in this folder). Stores are evict-first, as
// the kernels' are (device/kernels/common/row_tiles.cuh, store_unit).
template <unsigned R, unsigned W, class T>
__global__ void __launch_bounds__(kThreads) streamMixKernel(MixPointers p, std::size_t items) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= items) return;
  T v[R];
#pragma unroll
  for (unsigned r = 0; r < R; ++r) v[r] = __ldg(static_cast<const T*>(p.in[r]) + i);
  T s = v[0];
#pragma unroll
  for (unsigned r = 1; r < R; ++r) s = add(s, v[r]);
#pragma unroll
  for (unsigned w = 0; w < W; ++w) __stcs(static_cast<T*>(p.out[w]) + i, scaled(s, 1.0f + w));
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

template <unsigned R, unsigned W>
cudaError_t launch(cudaStream_t stream, const MixPointers& p, std::size_t n, bool vec) {
  const std::size_t items = vec ? n / 4 : n;
  const std::size_t blocks = (items + kThreads - 1) / kThreads;
  if (blocks > 0x7fffffffu) return cudaErrorInvalidValue;  // gridDim.x's limit
  if (vec) {
    streamMixKernel<R, W, float4><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(p, items);
  } else {
    streamMixKernel<R, W, float><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(p, items);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launchStreamMix(cudaStream_t stream, const float* const* in, unsigned reads,
                            float* const* out, unsigned writes, std::size_t n) {
  if (reads < 1 || reads > kMaxMixReads || writes < 1 || writes > kMaxMixWrites)
    return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  MixPointers p{};
  bool vec = n % 4 == 0;
  for (unsigned r = 0; r < reads; ++r) {
    p.in[r] = in[r];
    vec = vec && aligned16(in[r]);
  }
  for (unsigned w = 0; w < writes; ++w) {
    p.out[w] = out[w];
    vec = vec && aligned16(out[w]);
  }
  if (reads == 1 && writes == 1) return launch<1, 1>(stream, p, n, vec);
  if (reads == 1) return launch<1, 2>(stream, p, n, vec);
  if (writes == 1) return launch<2, 1>(stream, p, n, vec);
  return launch<2, 2>(stream, p, n, vec);
}

}  // namespace tapecheck::bench
