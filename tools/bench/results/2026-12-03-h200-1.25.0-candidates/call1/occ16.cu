// Clusters of C blocks an H200 holds at once, for blocks that fit b to a multiprocessor
// (b set by dynamic shared memory), C = 2..16 (above 8: non-portable).
#include <cstdio>
#include <cuda_runtime.h>
__global__ void dummy(float* p) { if (p) p[threadIdx.x] = 0.0f; }
int main() {
  cudaFuncSetAttribute(dummy, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  cudaFuncSetAttribute(dummy, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024);
  printf("b\\C");
  for (int C = 2; C <= 16; ++C) printf(" %4d", C);
  printf("\n");
  for (int b : {1, 2, 3, 4, 6, 8}) {
    const size_t smem = (227 * 1024) / b - 2048;
    printf("%3d", b);
    for (int C = 2; C <= 16; ++C) {
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(C * 64);
      cfg.blockDim = dim3(128);
      cfg.dynamicSmemBytes = smem;
      cudaLaunchAttribute a[1];
      a[0].id = cudaLaunchAttributeClusterDimension;
      a[0].val.clusterDim.x = C; a[0].val.clusterDim.y = 1; a[0].val.clusterDim.z = 1;
      cfg.attrs = a; cfg.numAttrs = 1;
      int n = -1;
      if (cudaOccupancyMaxActiveClusters(&n, dummy, &cfg) != cudaSuccess) { cudaGetLastError(); n = -1; }
      printf(" %4d", n);
    }
    printf("   (slots used of %d: see n*C)\n", 132 * b);
  }
  return 0;
}
