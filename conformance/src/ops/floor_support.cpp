#include "floor_support.h"

namespace tapecheck::conformance::ops {
namespace {

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

const std::vector<double>& leafOf(const TestCase& c, const char* name) {
  return c.leaves.at(static_cast<std::size_t>(c.call.at(name))).value.values;
}

std::vector<double>* gradFloors(Floors& f, const TestCase& c, const char* arg) {
  auto it = c.call.find(arg);
  if (!c.upstream || it == c.call.end()) return nullptr;
  const std::size_t leaf = static_cast<std::size_t>(it->second);
  if (leaf >= c.leaves.size() || !c.leaves[leaf].requiresGrad || leaf + 1 >= f.size())
    return nullptr;
  return &f[leaf + 1];
}

Vec toVec(const std::vector<double>& v) {
  return Eigen::Map<const Vec>(v.data(), static_cast<Eigen::Index>(v.size()));
}

Floors emptyFloors(const Outcome& e) {
  Floors f;
  f.emplace_back(e.value.values.size(), 0.0);
  for (const TensorData& g : e.grads) f.emplace_back(g.values.size(), 0.0);
  return f;
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

Floors normalizationFloors(const TestCase& c, const Outcome& e, const AxisFold& fold,
                           bool perColumn) {
  Floors f = emptyFloors(e);
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
  values::forEachSliceIndices(fold, [&](const std::vector<std::size_t>& idx) {
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

void crossEntropyFloors(const TestCase& c, const std::vector<double>& logits,
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
  values::forEachSliceIndices(fold, [&](const std::vector<std::size_t>& idx) {
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

}  // namespace tapecheck::conformance::ops
