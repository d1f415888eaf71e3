/* tapecheck-example: a kernel ABI v1 plugin in plain C, on host memory (memory = 0).
 *
 * The smallest honest implementation of every operation of docs/spec.md: one loop nest per
 * formula, sums and transcendentals in double, one rounding to float at each store. It is the
 * starting point docs/writing-a-plugin.md walks through; a real plugin replaces the loops with
 * its kernels and keeps the table at the bottom.
 *
 * The tape validates every argument before calling and handles empty and scalar tensors itself,
 * so every dimension here is at least 1 and every pointer is valid. A function returns 0 on
 * success; nonzero tells the tape the kernel failed (here: a scratch allocation).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <tapecheck/kernels_v1.h>

/* ---- softmax and log-softmax along the last axis of [rows, cols] ------------------------------ */

/* docs/spec.md's maximum: NaN anywhere makes it NaN (the row then turns all-NaN). Reads n values
 * `stride` apart. */
static double row_max(const float* x, uint32_t n, size_t stride) {
  double m = x[0];
  for (uint32_t j = 0; j < n; ++j) {
    const double v = x[j * stride];
    if (isnan(v)) return v;
    if (v > m) m = v;
  }
  return m;
}

/* log(sum_j exp(x_j - m)) */
static double log_sum_exp(const float* x, uint32_t n, size_t stride, double m) {
  double sum = 0;
  for (uint32_t j = 0; j < n; ++j) sum += exp((double)x[j * stride] - m);
  return log(sum);
}

/* y_i = exp(x_i - m) / sum_j exp(x_j - m) */
static int softmax_fwd(void* stream, uint32_t rows, uint32_t cols, const float* x, float* y) {
  (void)stream;
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    const double m = row_max(xr, cols, 1);
    double sum = 0;
    for (uint32_t j = 0; j < cols; ++j) sum += exp((double)xr[j] - m);
    for (uint32_t j = 0; j < cols; ++j) yr[j] = (float)(exp((double)xr[j] - m) / sum);
  }
  return 0;
}

/* dx_i = y_i * (dy_i - sum_j dy_j * y_j) */
static int softmax_bwd(void* stream, uint32_t rows, uint32_t cols, const float* y,
                       const float* dy, float* dx) {
  (void)stream;
  for (size_t r = 0; r < rows; ++r) {
    const float* yr = y + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    double dot = 0;
    for (uint32_t j = 0; j < cols; ++j) dot += (double)dyr[j] * yr[j];
    for (uint32_t j = 0; j < cols; ++j) dxr[j] = (float)(yr[j] * ((double)dyr[j] - dot));
  }
  return 0;
}

/* y_i = (x_i - m) - log(sum_j exp(x_j - m)) */
static int log_softmax_fwd(void* stream, uint32_t rows, uint32_t cols, const float* x,
                           float* y) {
  (void)stream;
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    const double m = row_max(xr, cols, 1);
    const double lse = log_sum_exp(xr, cols, 1, m);
    for (uint32_t j = 0; j < cols; ++j) yr[j] = (float)(((double)xr[j] - m) - lse);
  }
  return 0;
}

/* dx_i = dy_i - exp(y_i) * sum_j dy_j */
static int log_softmax_bwd(void* stream, uint32_t rows, uint32_t cols, const float* y,
                           const float* dy, float* dx) {
  (void)stream;
  for (size_t r = 0; r < rows; ++r) {
    const float* yr = y + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    double total = 0;
    for (uint32_t j = 0; j < cols; ++j) total += dyr[j];
    for (uint32_t j = 0; j < cols; ++j) dxr[j] = (float)(dyr[j] - exp((double)yr[j]) * total);
  }
  return 0;
}

/* ---- topKMask --------------------------------------------------------------------------------- */

struct ranked {
  float value;
  uint32_t index;
};

/* The order of docs/spec.md: larger first; equal values (-0 and +0 too) by lower index; NaN
 * below every number, NaNs among themselves by index. A total order, so qsort's instability
 * does not matter. */
static int rank_order(const void* pa, const void* pb) {
  const struct ranked* a = pa;
  const struct ranked* b = pb;
  const int a_nan = isnan(a->value), b_nan = isnan(b->value);
  if (a_nan != b_nan) return a_nan ? 1 : -1;
  if (!a_nan && a->value != b->value) return a->value > b->value ? -1 : 1;
  return a->index < b->index ? -1 : 1;
}

/* mask = 1 at the k first entries of each row in that order, 0 elsewhere */
static int topk_mask(void* stream, uint32_t rows, uint32_t cols, uint32_t k, const float* x,
                     float* mask) {
  (void)stream;
  struct ranked* order = malloc(sizeof *order * cols);
  if (!order) return 1;
  const uint32_t kept = k < cols ? k : cols;
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* mr = mask + r * cols;
    for (uint32_t j = 0; j < cols; ++j) {
      order[j].value = xr[j];
      order[j].index = j;
      mr[j] = 0.0f;
    }
    qsort(order, cols, sizeof *order, rank_order);
    for (uint32_t i = 0; i < kept; ++i) mr[order[i].index] = 1.0f;
  }
  free(order);
  return 0;
}

/* ---- layerNorm (per row) and batchNorm (per channel) ------------------------------------------ */

/* One row of n values: mean = (1/n) sum x; c = x - mean; var = (1/n) sum (c - mean(c))^2,
 * clamped at 0 (NaN stays NaN); std = sqrt(max(var + eps, 0)), the spec's clamped square root
 * (docs/spec.md#clamped-sqrt); xhat = c / std. `c` is n doubles of
 * scratch. Writes xhat (float) and returns 1/std. */
static double standardize(const float* x, uint32_t n, float eps, double* c, float* xhat) {
  double sum = 0;
  for (uint32_t j = 0; j < n; ++j) sum += x[j];
  const double mean = sum / n;
  double sum_c = 0;
  for (uint32_t j = 0; j < n; ++j) {
    c[j] = x[j] - mean;
    sum_c += c[j];
  }
  const double mean_c = sum_c / n;
  double squares = 0;
  for (uint32_t j = 0; j < n; ++j) squares += (c[j] - mean_c) * (c[j] - mean_c);
  const double var_raw = squares / n;
  const double var = var_raw <= 0 ? 0.0 : var_raw;
  const double var_eps = var + eps;
  const double stdev = sqrt(var_eps > 0 || var_eps != var_eps ? var_eps : 0.0);
  for (uint32_t j = 0; j < n; ++j) {
    c[j] /= stdev; /* c now holds xhat before rounding, for y */
    xhat[j] = (float)c[j];
  }
  return 1.0 / stdev;
}

/* y = xhat * gamma[col] + beta[col] */
static int layer_norm_fwd(void* stream, uint32_t rows, uint32_t cols, float eps, const float* x,
                          const float* gamma, const float* beta, float* y, float* xhat,
                          float* inv_std) {
  (void)stream;
  double* c = malloc(sizeof *c * cols);
  if (!c) return 1;
  for (size_t r = 0; r < rows; ++r) {
    const size_t at = r * cols;
    inv_std[r] = (float)standardize(x + at, cols, eps, c, xhat + at);
    for (uint32_t j = 0; j < cols; ++j) y[at + j] = (float)(c[j] * gamma[j] + beta[j]);
  }
  free(c);
  return 0;
}

/* y = xhat * gamma[channel] + beta[channel] */
static int batch_norm_fwd(void* stream, uint32_t channels, uint32_t spatial, float eps,
                          const float* x, const float* gamma, const float* beta, float* y,
                          float* xhat, float* inv_std) {
  (void)stream;
  double* c = malloc(sizeof *c * spatial);
  if (!c) return 1;
  for (size_t ch = 0; ch < channels; ++ch) {
    const size_t at = ch * spatial;
    inv_std[ch] = (float)standardize(x + at, spatial, eps, c, xhat + at);
    for (uint32_t s = 0; s < spatial; ++s) y[at + s] = (float)(c[s] * gamma[ch] + beta[ch]);
  }
  free(c);
  return 0;
}

/* One row: g = dy * gamma; dx = invStd * (g - mean(g) - xhat * mean(g * xhat)). gamma is
 * per column (`gamma_stride` 1) or one scalar for the row (`gamma_stride` 0). */
static void standardize_bwd(const float* dy, const float* xhat, double inv_std,
                            const float* gamma, size_t gamma_stride, uint32_t n, float* dx) {
  double sum_g = 0, sum_gx = 0;
  for (uint32_t j = 0; j < n; ++j) {
    const double g = (double)dy[j] * gamma[j * gamma_stride];
    sum_g += g;
    sum_gx += g * xhat[j];
  }
  const double mean_g = sum_g / n, mean_gx = sum_gx / n;
  for (uint32_t j = 0; j < n; ++j) {
    const double g = (double)dy[j] * gamma[j * gamma_stride];
    dx[j] = (float)(inv_std * (g - mean_g - xhat[j] * mean_gx));
  }
}

/* dgamma[col] = sum over rows of dy * xhat; dbeta[col] = sum over rows of dy */
static int layer_norm_bwd(void* stream, uint32_t rows, uint32_t cols, const float* dy,
                          const float* xhat, const float* inv_std, const float* gamma,
                          float* dx, float* dgamma, float* dbeta) {
  (void)stream;
  for (size_t r = 0; r < rows; ++r)
    standardize_bwd(dy + r * cols, xhat + r * cols, inv_std[r], gamma, 1, cols, dx + r * cols);
  for (uint32_t j = 0; j < cols; ++j) {
    double sum_dy_xhat = 0, sum_dy = 0;
    for (size_t r = 0; r < rows; ++r) {
      sum_dy_xhat += (double)dy[r * cols + j] * xhat[r * cols + j];
      sum_dy += dy[r * cols + j];
    }
    dgamma[j] = (float)sum_dy_xhat;
    dbeta[j] = (float)sum_dy;
  }
  return 0;
}

/* dgamma[channel] = sum over the channel of dy * xhat; dbeta[channel] = sum of dy */
static int batch_norm_bwd(void* stream, uint32_t channels, uint32_t spatial, const float* dy,
                          const float* xhat, const float* inv_std, const float* gamma,
                          float* dx, float* dgamma, float* dbeta) {
  (void)stream;
  for (size_t ch = 0; ch < channels; ++ch) {
    const size_t at = ch * spatial;
    standardize_bwd(dy + at, xhat + at, inv_std[ch], gamma + ch, 0, spatial, dx + at);
    double sum_dy_xhat = 0, sum_dy = 0;
    for (uint32_t s = 0; s < spatial; ++s) {
      sum_dy_xhat += (double)dy[at + s] * xhat[at + s];
      sum_dy += dy[at + s];
    }
    dgamma[ch] = (float)sum_dy_xhat;
    dbeta[ch] = (float)sum_dy;
  }
  return 0;
}

/* ---- crossEntropy along the middle axis of [outer, n, inner] ---------------------------------- */

/* mean ? max(outer * inner, 1) : 1 */
static double denominator(uint32_t outer, uint32_t inner, uint32_t mean) {
  const double slices = (double)outer * inner;
  return mean ? (slices > 1 ? slices : 1) : 1;
}

/* logp = logSoftmax along n; loss = -(sum of target * logp) / denominator */
static int cross_entropy_fwd(void* stream, uint32_t outer, uint32_t n, uint32_t inner,
                             uint32_t mean, const float* logits, const float* target,
                             float* loss, float* logp) {
  (void)stream;
  double total = 0;
  for (size_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < inner; ++i) {
      const size_t at = o * n * inner + i; /* the slice's first element; the next is `inner` on */
      const double m = row_max(logits + at, n, inner);
      const double lse = log_sum_exp(logits + at, n, inner, m);
      for (uint32_t j = 0; j < n; ++j) {
        const size_t e = at + j * (size_t)inner;
        const double lp = ((double)logits[e] - m) - lse;
        logp[e] = (float)lp;
        total += (double)target[e] * lp;
      }
    }
  }
  *loss = (float)(-total / denominator(outer, inner, mean));
  return 0;
}

/* dlogits = dloss * (exp(logp) * T - target) / denominator, T = the slice's sum of target;
 * dtarget = -dloss * logp / denominator. Either output may be NULL: then it is not wanted. */
static int cross_entropy_bwd(void* stream, uint32_t outer, uint32_t n, uint32_t inner,
                             uint32_t mean, const float* dloss, const float* logp,
                             const float* target, float* dlogits, float* dtarget) {
  (void)stream;
  const double dy = *dloss;
  const double denom = denominator(outer, inner, mean);
  for (size_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < inner; ++i) {
      const size_t at = o * n * inner + i;
      double t = 0;
      for (uint32_t j = 0; j < n; ++j) t += target[at + j * (size_t)inner];
      for (uint32_t j = 0; j < n; ++j) {
        const size_t e = at + j * (size_t)inner;
        if (dlogits) dlogits[e] = (float)(dy * (exp((double)logp[e]) * t - target[e]) / denom);
        if (dtarget) dtarget[e] = (float)(-dy * logp[e] / denom);
      }
    }
  }
  return 0;
}

/* ---- the table -------------------------------------------------------------------------------- */

static const struct tapecheck_kernels_v1 table = {
    .abi_version = 1,
    .name = "tapecheck-example",
    .version = "1.0.0",
    .memory = 0, /* host memory: the tape hands these functions CPU pointers */
    .softmax_fwd = softmax_fwd,
    .softmax_bwd = softmax_bwd,
    .log_softmax_fwd = log_softmax_fwd,
    .log_softmax_bwd = log_softmax_bwd,
    .topk_mask = topk_mask,
    .layer_norm_fwd = layer_norm_fwd,
    .layer_norm_bwd = layer_norm_bwd,
    .batch_norm_fwd = batch_norm_fwd,
    .batch_norm_bwd = batch_norm_bwd,
    .cross_entropy_fwd = cross_entropy_fwd,
    .cross_entropy_bwd = cross_entropy_bwd,
};

/* The one symbol a plugin exports; tapecheck_add_plugin builds with hidden visibility. */
__attribute__((visibility("default"))) const struct tapecheck_kernels_v1* tapecheck_kernels_v1_get(
    void) {
  return &table;
}
