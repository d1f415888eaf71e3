// Streaming ceilings by read/write mix: R inputs, W outputs of n floats each, no math beyond a
// sum, against cudaMemcpy D2D of the same total bytes (bytes/2 copied, as tapecheck-bench does).
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

template <int R, int W, int U, bool CS>
__global__ void __launch_bounds__(256) stream_mix(const float4* __restrict__ in, float4* __restrict__ out,
                                                  size_t n4) {
  const size_t step = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t base = static_cast<size_t>(blockIdx.x) * blockDim.x * U + threadIdx.x; base < n4;
       base += step * U) {
    float4 v[U][R];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const size_t i = base + static_cast<size_t>(u) * blockDim.x;
#pragma unroll
      for (int r = 0; r < R; ++r) if (i < n4) v[u][r] = __ldg(in + r * n4 + i);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const size_t i = base + static_cast<size_t>(u) * blockDim.x;
      if (i >= n4) continue;
      float4 s = v[u][0];
#pragma unroll
      for (int r = 1; r < R; ++r) { s.x += v[u][r].x; s.y += v[u][r].y; s.z += v[u][r].z; s.w += v[u][r].w; }
#pragma unroll
      for (int w = 0; w < W; ++w) {
        const float f = 1.0f + w;
        const float4 o = make_float4(s.x * f, s.y * f, s.z * f, s.w * f);
        if (CS) __stcs(out + w * n4 + i, o); else out[w * n4 + i] = o;
      }
    }
  }
}

struct Timer {
  cudaEvent_t a, b;
  Timer() { cudaEventCreate(&a); cudaEventCreate(&b); }
  template <class F> float median(F f, int reps) {
    f(); f();
    std::vector<float> t;
    for (int i = 0; i < reps; ++i) {
      cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};

template <int R, int W, int U, bool CS>
void run(float* buf, size_t n, int sms, Timer& tm, double copy_gbps, double& best) {
  const size_t n4 = n / 4;
  const float4* in = reinterpret_cast<const float4*>(buf);
  float4* out = reinterpret_cast<float4*>(buf + R * n);
  const double bytes = static_cast<double>(R + W) * n * 4;
  for (int g : {4, 8, 16, 0}) {
    const size_t grid = g ? static_cast<size_t>(sms) * g : (n4 + 256 * U - 1) / (256 * U);
    const float ms = tm.median([&] { stream_mix<R, W, U, CS><<<grid, 256>>>(in, out, n4); }, 10);
    const double gbps = bytes / ms / 1e6;
    best = std::max(best, gbps);
    printf("  R%d W%d U%d %s grid %s%-3d  %8.1f GB/s  %.3f of copy\n", R, W, U, CS ? "cs" : "wb",
           g ? "SMx" : "all", g, gbps, gbps / copy_gbps);
  }
}

template <int R, int W>
void mix(float* buf, size_t n, int sms, Timer& tm) {
  const double bytes = static_cast<double>(R + W) * n * 4;
  const size_t half = static_cast<size_t>(bytes / 2);
  const float ms = tm.median([&] {
    cudaMemcpyAsync(reinterpret_cast<char*>(buf) + half, buf, half, cudaMemcpyDeviceToDevice);
  }, 10);
  const double copy = bytes / ms / 1e6;
  double best = 0;
  printf("mix R%d:W%d  copy %.1f GB/s\n", R, W, copy);
  run<R, W, 1, true>(buf, n, sms, tm, copy, best);
  run<R, W, 2, true>(buf, n, sms, tm, copy, best);
  run<R, W, 4, true>(buf, n, sms, tm, copy, best);
  run<R, W, 2, false>(buf, n, sms, tm, copy, best);
  run<R, W, 4, false>(buf, n, sms, tm, copy, best);
  printf("BEST R%d:W%d  %.1f GB/s  %.3f of copy %.1f\n\n", R, W, best, best / copy, copy);
}

int main() {
  const size_t n = size_t{1} << 28;
  float* buf;
  CK(cudaMalloc(&buf, 4 * n * sizeof(float)));
  CK(cudaMemset(buf, 0, 4 * n * sizeof(float)));
  int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  Timer tm;
  for (int round = 0; round < 2; ++round) {
    printf("=== round %d\n", round + 1);
    mix<1, 1>(buf, n, sms, tm);
    mix<1, 2>(buf, n, sms, tm);
    mix<2, 1>(buf, n, sms, tm);
    mix<3, 1>(buf, n, sms, tm);
  }
  CK(cudaGetLastError());
  return 0;
}
