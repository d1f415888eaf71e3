// The order of topKMask (docs/spec.md) as an unsigned integer order, and a row's keys in registers.
#pragma once

#include "common/common.cuh"

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

// How many of key[0..VPT) are >= c. The search for the k-th key counts a lane's keys once a
// step, so this is topk_mask's inner loop. Written as `n += key >= c`, ptxas 13.0 makes three
// instructions a key (a compare, an add and a predicated move); these make two.
// kCarry: a subtraction whose carry is added (key - c carries out exactly when key >= c).
// Otherwise a compare and a predicated increment. The carries are faster for lane teams of 64
// keys a lane or more and slower at 16 keys a lane, so LaneTeam picks them by keys a lane
// (topk_mask.cu).
// k = 64 at 4K: 0.77 -> 0.84 of copy speed with carries, 0.80 with increments (CHANGELOG 1.9.8).
template <bool kCarry, int VPT>
__device__ __forceinline__ uint32_t count_keys_at_least(const uint32_t (&key)[VPT], uint32_t c) {
  uint32_t n = 0;
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    if constexpr (kCarry) {
      asm("{\n\t.reg .u32 t;\n\tsub.cc.u32 t, %1, %2;\n\taddc.u32 %0, %0, 0;\n\t}"
          : "+r"(n)
          : "r"(key[i]), "r"(c));
    } else {
      asm("{\n\t.reg .pred p;\n\tsetp.ge.u32 p, %1, %2;\n\t@p add.u32 %0, %0, 1;\n\t}"
          : "+r"(n)
          : "r"(key[i]), "r"(c));
    }
  }
  return n;
}

}  // namespace tapecheck_cuda
