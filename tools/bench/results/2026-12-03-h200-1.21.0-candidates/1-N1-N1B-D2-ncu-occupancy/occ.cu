// Max active clusters on this GPU for cluster size C, T threads a block, b blocks a
// multiprocessor (forced through dynamic shared memory).
#include <cstdio>
#include <cuda_runtime.h>
__global__ void __launch_bounds__(1024, 1) dummy(float* p) { extern __shared__ float s[]; if (p) p[threadIdx.x] = s[threadIdx.x]; }
int main() {
  cudaDeviceProp prop; cudaGetDeviceProperties(&prop, 0);
  printf("%s SMs %d smem/SM %zu optin/block %zu\n", prop.name, prop.multiProcessorCount, prop.sharedMemPerMultiprocessor, prop.sharedMemPerBlockOptin);
  cudaFuncSetAttribute(dummy, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)prop.sharedMemPerBlockOptin);
  cudaFuncSetAttribute(dummy, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  int Cs[] = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16};
  int Ts[] = {256, 512, 1024};
  for (int T : Ts) for (int b = 1; b <= 4; ++b) {
    if (T * b > 2048) continue;
    size_t smem = (prop.sharedMemPerMultiprocessor / b) - 2048;
    if (smem > prop.sharedMemPerBlockOptin) smem = prop.sharedMemPerBlockOptin;
    int occ = 0; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, dummy, T, smem);
    for (int C : Cs) {
      cudaLaunchConfig_t cfg = {}; cfg.gridDim = dim3(C * 64); cfg.blockDim = dim3(T); cfg.dynamicSmemBytes = smem;
      cudaLaunchAttribute a[1]; a[0].id = cudaLaunchAttributeClusterDimension; a[0].val.clusterDim.x = C; a[0].val.clusterDim.y = 1; a[0].val.clusterDim.z = 1;
      cfg.attrs = a; cfg.numAttrs = 1;
      int n = 0; cudaError_t e = cudaOccupancyMaxActiveClusters(&n, dummy, &cfg);
      printf("T %4d blocks/SM %d (occ %d) C %2d: clusters %4d blocks %4d of %4d = %.3f %s\n", T, b, occ, C, n, n * C, prop.multiProcessorCount * occ,
             occ ? double(n * C) / (prop.multiProcessorCount * occ) : 0.0, e ? cudaGetErrorString(e) : "");
      cudaGetLastError();
    }
  }
}
