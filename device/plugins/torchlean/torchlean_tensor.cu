// TorchLean's torchlean_cuda_tensor.cu, compiled as it is from the checkout named by
// TAPECHECK_TORCHLEAN_DIR, and the elementwise launchers of primitives.h that use it. Each is the
// body of the exported function named beside it (TORCHLEAN_DEFINE_*_BUFFER_EXPORT there) for a
// nonempty buffer, without the Lean objects: kBlockSize threads, torchlean_blocks_for(n) blocks of
// a grid-stride kernel, TorchLean's launch check.
#include "torchlean_cuda_tensor.cu"

#include "primitives.h"

namespace tapecheck::torchlean::buffer {
namespace {

template <class Kernel>
void unary(Kernel kernel, const float* in, float* out, size_t n, const char* failure) {
  kernel<<<torchlean_blocks_for(n), dim3(kBlockSize)>>>(in, out, n);
  checkCuda(cudaGetLastError(), failure);
}

template <class Kernel>
void binary(Kernel kernel, const float* a, const float* b, float* out, size_t n,
            const char* failure) {
  kernel<<<torchlean_blocks_for(n), dim3(kBlockSize)>>>(a, b, out, n);
  checkCuda(cudaGetLastError(), failure);
}

}  // namespace

// torchlean_cuda_buffer_full
void full(float* out, uint32_t n, double value) {
  torchlean_fill_f32<<<torchlean_blocks_for((size_t)n), dim3(kBlockSize)>>>(out, (size_t)n,
                                                                           (float)value);
  checkCuda(cudaGetLastError(), "cuda full kernel launch failed");
}

// torchlean_cuda_buffer_add, _sub, _mul, _div
void add(const float* a, const float* b, float* out, size_t n) {
  binary(torchlean_add_f32, a, b, out, n, "cuda add kernel launch failed");
}
void sub(const float* a, const float* b, float* out, size_t n) {
  binary(torchlean_sub_f32, a, b, out, n, "cuda sub kernel launch failed");
}
void mul(const float* a, const float* b, float* out, size_t n) {
  binary(torchlean_mul_f32, a, b, out, n, "cuda mul kernel launch failed");
}
void div(const float* a, const float* b, float* out, size_t n) {
  binary(torchlean_div_f32, a, b, out, n, "cuda div kernel launch failed");
}

// torchlean_cuda_buffer_scale (TORCHLEAN_DEFINE_UNARY_SCALAR_BUFFER_EXPORT)
void scale(const float* in, float* out, size_t n, double c) {
  torchlean_cuda_clear_pending_error();
  torchlean_scale_f32<<<torchlean_blocks_for(n), dim3(kBlockSize)>>>(in, out, n, (float)c);
  torchlean_cuda_check_launch("cuda scale kernel launch failed");
}

// torchlean_cuda_buffer_exp, _log, _sqrt, _inv
void exp(const float* in, float* out, size_t n) {
  unary(torchlean_exp_f32, in, out, n, "cuda exp kernel launch failed");
}
void log(const float* in, float* out, size_t n) {
  unary(torchlean_log_f32, in, out, n, "cuda log kernel launch failed");
}
void sqrt(const float* in, float* out, size_t n) {
  unary(torchlean_sqrt_f32, in, out, n, "cuda sqrt kernel launch failed");
}
void inv(const float* in, float* out, size_t n) {
  unary(torchlean_inv_f32, in, out, n, "cuda inv kernel launch failed");
}

}  // namespace tapecheck::torchlean::buffer
