// Kernel ABI v1 plugins that load cleanly and then misbehave, for the limits tests
// (docs/hardening.md). One source, one behaviour per build:
//   -DTAPECHECK_BAD_RETURNS_ERROR   every entry returns 7 and writes nothing
//   -DTAPECHECK_BAD_NAN_EVERYWHERE  every entry writes NaN into every output and returns 0
// tapecheck must report each case as FAILED (exit 1), never crash, never pass, never write a
// partial certificate.
#include <cstddef>
#include <cstdint>
#include <limits>

#include "tapecheck/kernels_v1.h"

namespace {

using u32 = std::uint32_t;

#if defined(TAPECHECK_BAD_RETURNS_ERROR)
constexpr const char* kName = "tapecheck-test-returns-error";
constexpr int kReturn = 7;
constexpr bool kWrite = false;
#elif defined(TAPECHECK_BAD_NAN_EVERYWHERE)
constexpr const char* kName = "tapecheck-test-nan-everywhere";
constexpr int kReturn = 0;
constexpr bool kWrite = true;
#else
#error "define TAPECHECK_BAD_RETURNS_ERROR or TAPECHECK_BAD_NAN_EVERYWHERE"
#endif

void nan(float* out, std::size_t n) {
  if (!kWrite || !out) return;
  for (std::size_t i = 0; i < n; ++i) out[i] = std::numeric_limits<float>::quiet_NaN();
}
std::size_t n2(u32 a, u32 b) { return static_cast<std::size_t>(a) * b; }

int softmax_fwd(void*, u32 rows, u32 cols, const float*, float* y) {
  nan(y, n2(rows, cols));
  return kReturn;
}
int softmax_bwd(void*, u32 rows, u32 cols, const float*, const float*, float* dx) {
  nan(dx, n2(rows, cols));
  return kReturn;
}
int topk_mask(void*, u32 rows, u32 cols, u32, const float*, float* mask) {
  nan(mask, n2(rows, cols));
  return kReturn;
}
int norm_fwd(void*, u32 rows, u32 cols, float, const float*, const float*, const float*,
             float* y, float* xhat, float* invStd) {
  nan(y, n2(rows, cols));
  nan(xhat, n2(rows, cols));
  nan(invStd, rows);
  return kReturn;
}
int layer_norm_bwd(void*, u32 rows, u32 cols, const float*, const float*, const float*,
                   const float*, float* dx, float* dgamma, float* dbeta) {
  nan(dx, n2(rows, cols));
  nan(dgamma, cols);
  nan(dbeta, cols);
  return kReturn;
}
int batch_norm_bwd(void*, u32 channels, u32 spatial, const float*, const float*, const float*,
                   const float*, float* dx, float* dgamma, float* dbeta) {
  nan(dx, n2(channels, spatial));
  nan(dgamma, channels);
  nan(dbeta, channels);
  return kReturn;
}
int cross_entropy_fwd(void*, u32 outer, u32 n, u32 inner, u32, const float*, const float*,
                      float* loss, float* logp) {
  nan(loss, 1);
  nan(logp, n2(outer, n) * inner);
  return kReturn;
}
int cross_entropy_bwd(void*, u32 outer, u32 n, u32 inner, u32, const float*, const float*,
                      const float*, float* dlogits, float* dtarget) {
  nan(dlogits, n2(outer, n) * inner);
  nan(dtarget, n2(outer, n) * inner);
  return kReturn;
}

const tapecheck_kernels_v1 kTable = {
    1u,          kName,          "0.0.0-test",   0u,
    softmax_fwd, softmax_bwd,    softmax_fwd,    softmax_bwd,
    topk_mask,   norm_fwd,       layer_norm_bwd, norm_fwd,
    batch_norm_bwd, cross_entropy_fwd, cross_entropy_bwd,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const tapecheck_kernels_v1*
tapecheck_kernels_v1_get(void) {
  return &kTable;
}
