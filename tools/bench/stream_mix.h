// A second roof next to the copy: a streaming kernel that reads and writes as many floats per
// element as an op does (its "mix"), and nothing else. A copy reads and writes equal halves of
// the bytes; ops that write more than they read (the norms' forward passes write y and xhat for
// each x) or read more than they write move their bytes at a different rate on the same
// device, and this kernel measures that rate. It is one simple kernel, not a proven bound: what
// it reaches is reachable, not the most that is (README.md in this folder).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace tapecheck::bench {

// The most inputs and outputs a mix may have (the bench's four big buffers hold them all).
constexpr unsigned kMaxMixReads = 2;
constexpr unsigned kMaxMixWrites = 2;

// Enqueues on `stream`: for every i < n and every output w, out[w][i] = (w + 1) * (sum of
// in[r][i] over the reads), so that every input is read and every output written once.
// 1 <= reads <= kMaxMixReads, 1 <= writes <= kMaxMixWrites; returns cudaErrorInvalidValue
// otherwise, else the launch status.
cudaError_t launchStreamMix(cudaStream_t stream, const float* const* in, unsigned reads,
                            float* const* out, unsigned writes, std::size_t n);

}  // namespace tapecheck::bench
