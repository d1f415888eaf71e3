// The order of topKMask (SPEC.md) as an unsigned integer order, and a row's keys in registers.
#pragma once

#include "common.cuh"

namespace tapecheck_cuda {

// A 32-bit key whose unsigned order is topKMask's value order: larger value, larger key; NaN
// below every number (-inf included); -0 and +0 equal. Ties are then broken by index.
__device__ __forceinline__ uint32_t rank_key(float x) {
  // x + 0 turns -0 into +0 (round to nearest) and changes nothing else a key depends on.
  const uint32_t u = __float_as_uint(__fadd_rn(x, 0.0f));
  // Negative floats order backwards as integers: flip all their bits; lift the positives.
  // -inf becomes 0x007fffff, so 0 (NaN) stays strictly below every number, and +inf becomes
  // 0xff800000, so key + 1 never overflows.
  const uint32_t key = u ^ (static_cast<uint32_t>(static_cast<int32_t>(u) >> 31) | 0x80000000u);
  return x != x ? 0u : key;
}

// key[i] = the key of entry member + i * stride, 0 past `cols`. Rows that fill every slot (all
// of the benchmark's) load without a bounds test per entry.
template <int VPT>
__device__ __forceinline__ void load_keys(uint32_t (&key)[VPT], const float* xr, uint32_t member,
                                          uint32_t stride, uint32_t cols) {
  if (member + static_cast<uint32_t>(VPT - 1) * stride < cols) {
#pragma unroll
    for (int i = 0; i < VPT; ++i) key[i] = rank_key(xr[member + static_cast<uint32_t>(i) * stride]);
  } else {
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const uint32_t j = member + static_cast<uint32_t>(i) * stride;
      key[i] = j < cols ? rank_key(xr[j]) : 0u;
    }
  }
}

}  // namespace tapecheck_cuda
