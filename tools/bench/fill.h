// Deterministic pseudo-random fills of device buffers, stream-ordered.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tapecheck::bench {

// Enqueues on `stream` a fill of p[0, n) with floats uniform in [lo, hi): element i is a hash of
// (seed, i) only, so the contents never depend on the device, the grid or earlier runs.
// Returns the launch status (a fault inside the kernel shows at the next synchronization).
cudaError_t fillUniform(cudaStream_t stream, float* p, std::size_t n, std::uint64_t seed,
                        float lo, float hi);

}  // namespace tapecheck::bench
