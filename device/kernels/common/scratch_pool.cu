// The library's scratch pool (scratch_pool.h): one per device, created under a lock.
#include "common/scratch_pool.h"

#include <cstdint>
#include <mutex>

namespace tapecheck_cuda {
namespace {

constexpr int kMaxDevices = 64;

cudaMemPool_t create_pool(int device) {
  int supported = 0;
  if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) != cudaSuccess ||
      supported == 0) {
    cudaGetLastError();
    return nullptr;
  }
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  if (cudaMemPoolCreate(&pool, &props) != cudaSuccess) {
    cudaGetLastError();  // not sticky: Scratch falls back to the default pool
    return nullptr;
  }
  uint64_t keep = kScratchKeepBytes;
  cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  return pool;
}

}  // namespace

cudaMemPool_t scratch_pool() {
  static std::mutex lock;
  static cudaMemPool_t pools[kMaxDevices] = {};
  static bool tried[kMaxDevices] = {};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) {
    cudaGetLastError();
    return nullptr;
  }
  std::lock_guard<std::mutex> guard(lock);
  if (!tried[device]) {
    tried[device] = true;
    pools[device] = create_pool(device);
  }
  return pools[device];
}

}  // namespace tapecheck_cuda
