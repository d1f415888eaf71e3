// Deterministic pseudo-random fills of device buffers (see fill.h).
#include "fill.h"

namespace tapecheck::bench {
namespace {

// SplitMix64's finalizer: a good 64-bit mix of a counter.
__device__ __forceinline__ std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__global__ void fillUniformKernel(float* p, std::size_t n, std::uint64_t seed, float lo,
                                  float span) {
  const std::uint64_t key = mix64(seed);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    // The top 24 bits give a float in [0, 1) exactly.
    const float u = static_cast<float>(mix64(key + i) >> 40) * (1.0f / 16777216.0f);
    p[i] = lo + span * u;
  }
}

}  // namespace

cudaError_t fillUniform(cudaStream_t stream, float* p, std::size_t n, std::uint64_t seed,
                        float lo, float hi) {
  if (n == 0) return cudaSuccess;
  constexpr unsigned kThreads = 256;
  constexpr std::size_t kMaxBlocks = 1u << 16;
  std::size_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  fillUniformKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(p, n, seed, lo,
                                                                             hi - lo);
  return cudaGetLastError();
}

}  // namespace tapecheck::bench
