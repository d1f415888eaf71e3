// Floor rules: the scale against which each output element's error is measured (ulp.h). Each
// rule is the magnitude of the terms the exact formula combines for that element, so that a
// correct binary32 kernel stays within a few units of it whatever cancels, while values that
// cancelled to nearly nothing are not judged against their own tiny size. The reasoning per op
// is in budgets.h and conformance/README.md. Everything is computed in binary64 from the case's
// inputs and the expected outcome; non-finite terms are left out (those elements are judged by
// kind).
#include <algorithm>
#include <cmath>

#include "cases.h"
#include "tapecheck/conformance/judge.h"
#include "tapecheck/reference/softmax.h"

namespace tapecheck::conformance::floors {
namespace {

using Vec = reference::Vec<double>;

double finiteAbs(double v) { return std::isfinite(v) ? std::fabs(v) : 0.0; }

const std::vector<double>& leafOf(const TestCase& c, const char* name) {
  return c.leaves.at(static_cast<std::size_t>(c.call.at(name))).value.values;
}

// The floors of the gradient of tensor argument `arg`: those of its leaf (whatever the leaf's
// position), or nullptr when no gradient reaches it (no upstream, or the leaf does not require
// grad: it must then get exactly zero). Rules that write a leaf twice (the same leaf as logits and
// target) keep the larger floor.
std::vector<double>* gradFloors(Floors& f, const TestCase& c, const char* arg) {
  auto it = c.call.find(arg);
  if (!c.upstream || it == c.call.end()) return nullptr;
  const std::size_t leaf = static_cast<std::size_t>(it->second);
  if (leaf >= c.leaves.size() || !c.leaves[leaf].requiresGrad || leaf + 1 >= f.size())
    return nullptr;
  return &f[leaf + 1];
}

void raise(std::vector<double>& f, std::size_t i, double v) {
  if (i < f.size()) f[i] = std::max(f[i], v);
}

// The magnitude v >= 0, a binary32 intermediate, carries error relative to: v itself in the
// normal range, 2^-126 below it (a subnormal is known to 2^-150 whatever its size). A factor
// that multiplies it afterwards (sum(dy), invStd) multiplies that error too, so floors built on
// intermediates use this; judge.h's elementFloor does the same for the outputs themselves.
double binary32Scale(double v) { return std::max(v, kBinary32MinNormal); }

Vec toVec(const std::vector<double>& v) {
  return Eigen::Map<const Vec>(v.data(), static_cast<Eigen::Index>(v.size()));
}

// One floor vector per compared output, sized like the expected outcome, zero by default (a
// leaf that does not require grad must get exactly zero).
Floors emptyFloors(const TestCase& c, const Outcome& e) {
  Floors f;
  f.emplace_back(e.value.values.size(), 0.0);
  for (const TensorData& g : e.grads) f.emplace_back(g.values.size(), 0.0);
  (void)c;
  return f;
}

// Per slice (outer x n x inner), calls visit(indices).
template <class F>
void slices(const AxisFold& fold, F&& visit) {
  std::vector<std::size_t> idx(fold.n);
  for (std::size_t o = 0; o < fold.outer; ++o)
    for (std::size_t i = 0; i < fold.inner; ++i) {
      for (std::size_t j = 0; j < fold.n; ++j) idx[j] = (o * fold.n + j) * fold.inner + i;
      visit(idx);
    }
}

AxisFold rowsOf(const Shape& s) {
  if (s.empty()) return {1, 1, 1};
  if (sizeOf(s) == 0) return {0, 0, 1};
  return {static_cast<std::uint32_t>(sizeOf(s) / s.back()), static_cast<std::uint32_t>(s.back()),
          1};
}

double maxAbsAt(const std::vector<double>& v, const std::vector<std::size_t>& idx) {
  double m = 0;
  for (std::size_t i : idx) m = std::max(m, finiteAbs(v[i]));
  return m;
}

double sumAbsAt(const std::vector<double>& v, const std::vector<std::size_t>& idx) {
  double s = 0;
  for (std::size_t i : idx) s += finiteAbs(v[i]);
  return s;
}

bool sizesMatch(const Floors& f, const TestCase& c, const Outcome& e) {
  if (e.error || f.empty()) return false;
  if (c.upstream && e.grads.size() != c.leaves.size()) return false;
  return true;
}

// Row statistics of a normalization, in binary64 with the spec's formulas.
struct NormRow {
  double invStd = 0;
  double condition = 0;  // max|x| * invStd: how far an ulp of the input moves xhat
};

NormRow normRow(const std::vector<double>& x, const std::vector<std::size_t>& idx, double eps) {
  const double n = static_cast<double>(idx.size());
  double sum = 0;
  for (std::size_t i : idx) sum += std::isfinite(x[i]) ? x[i] : 0.0;
  const double mean = sum / n;
  double sumC = 0;
  for (std::size_t i : idx) sumC += std::isfinite(x[i]) ? x[i] - mean : 0;
  const double meanC = sumC / n;
  double var = 0;
  for (std::size_t i : idx) {
    const double d = std::isfinite(x[i]) ? x[i] - mean - meanC : 0;
    var += d * d;
  }
  var = std::max(var / n, 0.0);
  NormRow r;
  const double denom = std::sqrt(var + std::fabs(eps));
  r.invStd = denom > 0 && std::isfinite(denom) ? 1.0 / denom : 0.0;
  r.condition = maxAbsAt(x, idx) * r.invStd;
  return r;
}

}  // namespace

// value: the row's largest probability (a tree sum's error is relative to it, and outputs that
// underflow beside it are held to the row's scale). dx = y * (dy - <dy, y>): max(y) * max|dy|
// bounds every term of the row.
Floors softmaxLast(const TestCase& c, const Outcome& e) {
  Floors f = emptyFloors(c, e);
  if (!sizesMatch(f, c, e)) return f;
  const AxisFold fold = rowsOf(e.value.shape);
  std::vector<double>* dx = gradFloors(f, c, "x");
  // The upstream is read at the value's indices: only when they agree in size (a golden
  // vector's expected value may claim a larger shape than its upstream).
  if (dx && c.upstream->values.size() != e.value.values.size()) dx = nullptr;
  slices(fold, [&](const std::vector<std::size_t>& idx) {
    const double ymax = maxAbsAt(e.value.values, idx);
    for (std::size_t i : idx) f[0][i] = ymax;
    if (dx) {
      const double g = 2 * ymax * maxAbsAt(c.upstream->values, idx);
      for (std::size_t i : idx) raise(*dx, i, g);
    }
  });
  return f;
}

// value: 1 (relative where |y| >= 1, absolute below: log(sum) is accurate to ulps of 1).
// dx_i = dy_i - exp(y_i) * sum(dy): |dy_i| + max(exp(y_i), 2^-126) * sum|dy|, exp(y_i) at its
// binary32 scale (exp(-102) is 2 or 3 times 2^-149 in binary32, and sum(dy) scales that error).
Floors logSoftmaxLast(const TestCase& c, const Outcome& e) {
  Floors f = emptyFloors(c, e);
  if (!sizesMatch(f, c, e)) return f;
  std::fill(f[0].begin(), f[0].end(), 1.0);
  std::vector<double>* dx = gradFloors(f, c, "x");
  if (!dx || c.upstream->values.size() != e.value.values.size()) return f;
  const std::vector<double>& dy = c.upstream->values;
  slices(rowsOf(e.value.shape), [&](const std::vector<std::size_t>& idx) {
    const double total = sumAbsAt(dy, idx);
    for (std::size_t i : idx) {
      const double y = e.value.values[i];
      const double p = std::isfinite(y) ? binary32Scale(std::exp(y)) : 0.0;
      raise(*dx, i, finiteAbs(dy[i]) + p * total);
    }
  });
  return f;
}

// Exact 0/1 masks: any difference is a whole unit of 1.
Floors topKMask(const TestCase& c, const Outcome& e) {
  Floors f = emptyFloors(c, e);
  if (!f.empty()) std::fill(f[0].begin(), f[0].end(), 1.0);
  return f;
}

namespace {

// layerNorm and batchNorm share the rule; `perColumn` says whether gamma/beta index the column
// (layerNorm) or the row (batchNorm).
Floors normalization(const TestCase& c, const Outcome& e, const AxisFold& fold, bool perColumn) {
  Floors f = emptyFloors(c, e);
  if (!sizesMatch(f, c, e)) return f;
  const std::vector<double>& x = leafOf(c, "x");
  const std::vector<double>& gamma = leafOf(c, "gamma");
  const std::vector<double>& beta = leafOf(c, "beta");
  const double eps = c.attrs.epsilon.value_or(kNormalizationEpsilon);
  if (x.size() != e.value.values.size()) return f;
  const bool grads = c.upstream.has_value() && c.upstream->values.size() == x.size();
  std::vector<double>* dx = gradFloors(f, c, "x");
  std::vector<double>* dgamma = gradFloors(f, c, "gamma");
  std::vector<double>* dbeta = gradFloors(f, c, "beta");
  // The same leaf for two arguments would need both rules at once: the larger floor of the two
  // is kept, accumulated separately here.
  std::vector<double> gammaSum(gamma.size(), 0.0), betaSum(beta.size(), 0.0);
  std::size_t row = 0;
  slices(fold, [&](const std::vector<std::size_t>& idx) {
    const NormRow r = normRow(x, idx, eps);
    // y = gamma * xhat + beta: xhat is known to about ulp(max|x|) * invStd.
    for (std::size_t j = 0; j < idx.size(); ++j) {
      const std::size_t a = perColumn ? j : row;
      f[0][idx[j]] = finiteAbs(gamma[a]) * std::max(r.condition, 1.0) + finiteAbs(beta[a]);
    }
    if (grads) {
      const std::vector<double>& dy = c.upstream->values;
      // g = dy * gamma and its means at their binary32 scale, which invStd (up to 1/sqrt(eps))
      // multiplies. Found by the fuzzer: a constant channel of batchNorm with gamma = 2^-149 and
      // dy up to 24, whose mean of g rounds to 0 in binary32; times invStd = 316 that was 220
      // ulps of the floor built on max|g| itself.
      double gmax = 0;
      for (std::size_t j = 0; j < idx.size(); ++j)
        gmax = std::max(gmax, finiteAbs(dy[idx[j]] * gamma[perColumn ? j : row]));
      gmax = binary32Scale(gmax);
      if (dx)
        for (std::size_t i : idx) raise(*dx, i, r.invStd * gmax * (1.0 + r.condition));
      for (std::size_t j = 0; j < idx.size(); ++j) {
        const std::size_t a = perColumn ? j : row;
        if (a < gammaSum.size()) gammaSum[a] += finiteAbs(dy[idx[j]]) * (1.0 + r.condition);
        if (a < betaSum.size()) betaSum[a] += finiteAbs(dy[idx[j]]);
      }
    }
    ++row;
  });
  if (dgamma)
    for (std::size_t a = 0; a < gammaSum.size(); ++a) raise(*dgamma, a, gammaSum[a]);
  if (dbeta)
    for (std::size_t a = 0; a < betaSum.size(); ++a) raise(*dbeta, a, betaSum[a]);
  return f;
}

}  // namespace

Floors layerNorm(const TestCase& c, const Outcome& e) {
  const std::uint32_t rows = static_cast<std::uint32_t>(c.attrs.seqLen.value_or(0));
  const std::uint32_t cols = static_cast<std::uint32_t>(c.attrs.embedDim.value_or(0));
  return normalization(c, e, {rows, cols, 1}, true);
}

Floors batchNorm(const TestCase& c, const Outcome& e) {
  const std::uint32_t channels = static_cast<std::uint32_t>(c.attrs.channels.value_or(0));
  const std::uint32_t spatial =
      static_cast<std::uint32_t>(c.attrs.spatial ? sizeOf(*c.attrs.spatial) : 0);
  return normalization(c, e, {channels, spatial, 1}, false);
}

namespace {

// The weighted cross-entropy rule shared by crossEntropy and distill: `target` are the weights
// (distill: softmax of the teacher), `logits` the logits.
void crossEntropyFloors(const TestCase& c, const Outcome& e, const std::vector<double>& logits,
                        const std::vector<double>& target, bool mean, Floors& f,
                        std::vector<double>* dlogits, std::vector<double>* dtarget) {
  const Shape& s = *c.attrs.s;
  const std::uint64_t axis = *c.attrs.axis;
  if (axis >= s.size() || sizeOf(s) == 0 || logits.size() != sizeOf(s)) return;
  const AxisFold fold = foldAxis(s, static_cast<std::size_t>(axis));
  const Vec logp = reference::logSoftmaxAxis<double>(fold, toVec(logits));
  const double slicesCount = static_cast<double>(fold.outer) * fold.inner;
  const double denom = mean ? std::max(slicesCount, 1.0) : 1.0;
  // loss = -sum t * logp / denom: same-signed terms, plus the ulps of 1 that log(sum) leaves.
  double loss = 0;
  for (std::size_t i = 0; i < target.size(); ++i)
    loss += finiteAbs(target[i]) * (finiteAbs(logp(static_cast<Eigen::Index>(i))) + 1.0);
  f[0][0] = loss / denom;
  if (!c.upstream) return;
  const double dy = finiteAbs(c.upstream->values.at(0));
  slices(fold, [&](const std::vector<std::size_t>& idx) {
    double total = 0, pmax = 0, tmax = 0;
    for (std::size_t i : idx) {
      total += finiteAbs(target[i]);
      tmax = std::max(tmax, finiteAbs(target[i]));
      const double lp = logp(static_cast<Eigen::Index>(i));
      pmax = std::max(pmax, std::isfinite(lp) ? std::exp(lp) : 0.0);
    }
    if (dlogits)
      for (std::size_t i : idx) raise(*dlogits, i, dy * (total * pmax + tmax) / denom);
    if (dtarget)
      for (std::size_t i : idx)
        raise(*dtarget, i,
              dy * std::max(finiteAbs(logp(static_cast<Eigen::Index>(i))), 1.0) / denom);
  });
}

}  // namespace

Floors crossEntropy(const TestCase& c, const Outcome& e) {
  Floors f = emptyFloors(c, e);
  if (!sizesMatch(f, c, e) || f[0].size() != 1 || !c.attrs.s || !c.attrs.axis) return f;
  crossEntropyFloors(c, e, leafOf(c, "logits"), leafOf(c, "target"), c.attrs.mean.value_or(true),
                     f, gradFloors(f, c, "logits"), gradFloors(f, c, "target"));
  return f;
}

Floors distill(const TestCase& c, const Outcome& e) {
  Floors f = emptyFloors(c, e);
  if (!sizesMatch(f, c, e) || f[0].size() != 1 || !c.attrs.s || !c.attrs.axis) return f;
  const Shape& s = *c.attrs.s;
  if (*c.attrs.axis >= s.size() || sizeOf(s) == 0) return f;
  const AxisFold fold = foldAxis(s, static_cast<std::size_t>(*c.attrs.axis));
  const Vec p = reference::softmaxAxis<double>(fold, toVec(leafOf(c, "teacher")));
  const std::vector<double> pv(p.data(), p.data() + p.size());
  // The teacher's gradient stays zero (floor 0): it is a constant.
  crossEntropyFloors(c, e, leafOf(c, "student"), pv, true, f, gradFloors(f, c, "student"),
                     nullptr);
  return f;
}

Floors normwise(const TestCase& c, const Outcome& e) {
  Floors f = emptyFloors(c, e);
  if (e.error) return f;
  auto scale = [](const std::vector<double>& v) {
    double m = 0;
    for (double x : v) m = std::max(m, finiteAbs(x));
    return m;
  };
  // The programs end in a loss: near 0 it is known to ulps of its log-probabilities (size 1).
  std::fill(f[0].begin(), f[0].end(), std::max(scale(e.value.values), 1.0));
  // The gradients as one vector J^T u: a leaf whose gradient cancels to almost nothing (beta
  // under a loss along the channels) is judged at the scale of the whole backward pass.
  // Near a stationary point (the entropy of a near-uniform row) the gradient cancels to much
  // less than its terms, p * |log p| per unit of upstream, and is exactly 0 at it: a binary32
  // chain leaves rounding noise of the terms' size. The floor is at least 2^-8 of the upstream
  // (programs look for gradients that are lost or not accumulated, off by O(1)).
  double g = c.upstream ? scale(c.upstream->values) / 256 : 0.0;
  for (std::size_t i = 0; i < e.grads.size() && i < c.leaves.size(); ++i)
    if (c.leaves[i].requiresGrad) g = std::max(g, scale(e.grads[i].values));
  for (std::size_t i = 0; i < e.grads.size() && i + 1 < f.size(); ++i)
    if (i < c.leaves.size() && c.leaves[i].requiresGrad)
      std::fill(f[i + 1].begin(), f[i + 1].end(), g);
  return f;
}

}  // namespace tapecheck::conformance::floors
