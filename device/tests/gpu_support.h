// Helpers of the [gpu] tests that call the built-in CUDA kernels directly on device memory.
// Include after Catch: ATen's logging headers define a CHECK of their own (an abort), so these
// tests use Catch's REQUIRE only.
#pragma once

#include <ATen/ATen.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "tapecheck/device/kernel_table.h"

namespace tapecheck::device::testing {

inline at::Tensor onGpu(const std::vector<float>& v) {
  return at::from_blob(const_cast<float*>(v.data()), {static_cast<std::int64_t>(v.size())},
                       at::kFloat)
      .to(at::kCUDA);
}

inline at::Tensor gpuBuffer(std::size_t n) {
  // NaN-filled: an element a kernel forgets to write shows as a difference, not as a lucky 0.
  return at::full({static_cast<std::int64_t>(n > 0 ? n : 1)}, std::nanf(""),
                  at::TensorOptions().dtype(at::kFloat).device(at::kCUDA));
}

// n NaN-filled floats starting `offset` floats into a fresh device buffer (a view, which keeps
// the buffer alive): with offset 1 the data start one float past a 16-byte boundary, so the
// kernels take their scalar paths.
inline at::Tensor gpuBufferAt(std::size_t n, std::size_t offset) {
  return gpuBuffer(n + offset).narrow(0, static_cast<std::int64_t>(offset),
                                      static_cast<std::int64_t>(n));
}

// A device copy of v placed as gpuBufferAt places it.
inline at::Tensor onGpuAt(const std::vector<float>& v, std::size_t offset) {
  return gpuBufferAt(v.size(), offset).copy_(onGpu(v));
}

// n values drawn uniformly from [lo, hi), the same for the same seed.
inline std::vector<float> uniformValues(std::size_t n, std::uint32_t seed, float lo, float hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(gen);
  return v;
}

inline std::vector<float> toHost(const at::Tensor& t) {
  at::Tensor h = t.to(at::kCPU).contiguous();
  return std::vector<float>(h.data_ptr<float>(), h.data_ptr<float>() + h.numel());
}

// The built-in cuda table, or nothing (with a warning) when no GPU or library is there.
inline std::optional<KernelTable> cudaKernelsOrSkip() {
  if (!gpuVisible()) {
    WARN("no CUDA GPU visible to LibTorch: skipped");
    return std::nullopt;
  }
  auto kernels = loadKernelTable("cuda", DeviceKind::Cuda);
  if (!kernels) {
    WARN("built-in cuda kernels unavailable: " << kernels.message());
    return std::nullopt;
  }
  return std::move(kernels).value();
}

}  // namespace tapecheck::device::testing
