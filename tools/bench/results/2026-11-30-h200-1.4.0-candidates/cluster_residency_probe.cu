// How many clusters of C blocks an H200 holds at once (cluster-residency.txt). Block size 512;
// the dynamic shared memory (150 or 100 KiB) allows 1 or 2 blocks a multiprocessor. Build:
// nvcc -arch=sm_90 -o cluster_residency_probe cluster_residency_probe.cu
#include <cstdio>
#include <cuda_runtime.h>
__global__ void dummy(float* p) { extern __shared__ float s[]; if (p) p[threadIdx.x] = s[threadIdx.x]; }
int main() {
  cudaDeviceProp pr; cudaGetDeviceProperties(&pr, 0);
  printf("SMs %d, smem/SM %zu, smem/block optin %zu\n", pr.multiProcessorCount, pr.sharedMemPerMultiprocessor, pr.sharedMemPerBlockOptin);
  cudaFuncSetAttribute(dummy, cudaFuncAttributeMaxDynamicSharedMemorySize, 150 * 1024);
  cudaFuncSetAttribute(dummy, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  for (int per_sm = 1; per_sm <= 2; ++per_sm)
    for (int C = 2; C <= 16; ++C) {
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(C); cfg.blockDim = dim3(512);
      cfg.dynamicSmemBytes = per_sm == 1 ? 150 * 1024 : 100 * 1024;
      cudaLaunchAttribute a; a.id = cudaLaunchAttributeClusterDimension; a.val.clusterDim.x = C; a.val.clusterDim.y = 1; a.val.clusterDim.z = 1;
      cfg.attrs = &a; cfg.numAttrs = 1;
      int n = -1; cudaError_t e = cudaOccupancyMaxActiveClusters(&n, dummy, &cfg);
      printf("blocks/SM %d cluster %2d: max active clusters %d (%d blocks)%s\n", per_sm, C, n, n * C, e ? cudaGetErrorString(e) : "");
    }
}
