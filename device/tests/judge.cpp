// Judging a device outcome against the oracle: per-element floors (term scales) and budgets.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "support.h"
#include "tapecheck/device/plugin_gallery.h"

namespace tapecheck::device::testing {

// ---- budgets ------------------------------------------------------------------------------------
//
// In units of 2^-23 times the floor of floorsFor (the term scale). Derivations assume float32
// arithmetic with each operation rounded once (half a unit), exp/log within 1-2 units, and
// sums of up to 64 terms by pairwise/cascade summation (ATen) or in binary64 (host plugin), so
// a k-term sum costs at most ~log2(64) = 6 units of its largest term; the test rows have <= 64
// entries (reductions over whole tensors: <= 128 elements, 7 units).
//   softmax fwd 8: x - m (0.5), exp (1-2), row sum (<= 6 relative to the largest term, which is
//       the row maximum's term), one division or reciprocal-multiply (1). Measured: <= 2.
//   softmax bwd 16: the row dot product (6), dy - dot (0.5), product (0.5) on top of the
//       forward's own error in y (8, scaled by |dy - dot| <= 2 max|dy|).
//   logSoftmax fwd 8: (x - m) and log(sum) have the same sign, so no cancellation: 0.5 + log's
//       1-2 + the sum's 6 propagated through log (divided by sum >= 1).
//   logSoftmax bwd 16: the row sum of dy (6) times exp(y) (1-2) plus y's error through exp
//       (p * |log p| <= 1/e of y's absolute error).
//   layerNorm / batchNorm fwd 16: the mean (6, relative to |mean|: the term |mean| * invStd in
//       the floor), the twice-centered variance (6 + 0.5, halved by sqrt), c / std (0.5), then
//       y = xhat * gamma + beta (1).
//   layerNorm / batchNorm bwd 32: two row means of g and g*xhat (2 x 6), the three-term
//       difference (1), invStd (1), on top of xhat's forward error (16) entering twice
//       (xhat * mean(g*xhat), mean(g*xhat)); dgamma/dbeta are column sums (6-7).
//   crossEntropy / distill 16: logp's error (8 as log-softmax) weighted by targets, a sum over
//       the whole tensor (7), the division (0.5); backward: exp(logp) (1-2 plus logp's error
//       times p |logp|), the slice sum T (6), p*T - t (1), two roundings with dy and denom.
//   topKMask 0: a mask is exact: 0 or 1 and nothing else.
Budget budgetFor(const std::string& op) {
  if (op == "softmaxLast" || op == "logSoftmaxLast") return {8, 16};
  if (op == "layerNorm" || op == "batchNorm") return {16, 32};
  if (op == "crossEntropy" || op == "distill") return {16, 16};
  if (op == "topKMask") return {0, 0};
  return {0, 0};
}

namespace {

// ---- floors: the term scale of every output element ---------------------------------------------

double finiteOr0(double v) { return std::isfinite(v) ? v : 0.0; }

double maxAbsFinite(const std::vector<double>& v, std::size_t begin, std::size_t n,
                    std::size_t stride = 1) {
  double m = 0;
  for (std::size_t j = 0; j < n; ++j) m = std::max(m, std::fabs(finiteOr0(v[begin + j * stride])));
  return m;
}

struct Floors {
  std::vector<double> value;
  std::vector<std::vector<double>> grads;  // per leaf
};

struct Fold {
  std::size_t outer, n, inner;
};

Fold foldOf(const Shape& s, std::size_t axis) {
  Fold f{1, s.at(axis), 1};
  for (std::size_t i = 0; i < axis; ++i) f.outer *= s[i];
  for (std::size_t i = axis + 1; i < s.size(); ++i) f.inner *= s[i];
  return f;
}

std::size_t leafIndex(const TestCase& c, const char* arg) { return c.call.at(arg); }
const std::vector<double>& leafValues(const TestCase& c, const char* arg) {
  return c.leaves.at(leafIndex(c, arg)).value.values;
}

// Log-softmax of one slice in binary64 with SPEC.md's non-finite rows (for floors only).
std::vector<double> logSoftmaxSlice(const std::vector<double>& x, std::size_t begin, std::size_t n,
                                    std::size_t stride) {
  double m = x[begin];
  bool nan = false;
  for (std::size_t j = 0; j < n; ++j) {
    const double v = x[begin + j * stride];
    if (std::isnan(v)) nan = true;
    m = std::max(m, v);
  }
  std::vector<double> out(n, kNaN);
  if (nan) return out;
  double sum = 0;
  for (std::size_t j = 0; j < n; ++j) sum += std::exp(x[begin + j * stride] - m);
  for (std::size_t j = 0; j < n; ++j) out[j] = (x[begin + j * stride] - m) - std::log(sum);
  return out;
}

void softmaxFamilyFloors(const TestCase& c, const Outcome& e, Floors& f) {
  const Shape& s = *c.attrs.s;
  if (isScalar(s) || isEmptyTensor(s)) return;  // exact by the tape
  const std::size_t cols = s.back(), rows = sizeOf(s) / cols;
  const bool log = c.op == "logSoftmaxLast";
  const std::vector<double>& y = e.value.values;
  for (std::size_t r = 0; r < rows; ++r) {
    const double yScale = maxAbsFinite(y, r * cols, cols);
    for (std::size_t j = 0; j < cols; ++j) f.value[r * cols + j] = yScale;
    if (!c.upstream) continue;
    const std::vector<double>& dy = c.upstream->values;
    const double dyScale = maxAbsFinite(dy, r * cols, cols);
    double g = yScale * dyScale;  // softmax: y_i * dy_i and y_i * sum_j dy_j y_j
    if (log) {                    // logSoftmax: dy_i and exp(y_i) * sum_j dy_j
      double sumAbs = 0, pMax = 0;
      for (std::size_t j = 0; j < cols; ++j) {
        sumAbs += std::fabs(dy[r * cols + j]);
        pMax = std::max(pMax, finiteOr0(std::exp(y[r * cols + j])));
      }
      g = dyScale + pMax * sumAbs;
    }
    for (std::size_t j = 0; j < cols; ++j) f.grads[leafIndex(c, "x")][r * cols + j] = g;
  }
}

// layerNorm (perRowGamma = false: gamma by column) and batchNorm (gamma by row = channel).
void normFloors(const TestCase& c, const Outcome&, Floors& f, bool batch) {
  const std::vector<double>& x = leafValues(c, "x");
  const std::vector<double>& gamma = leafValues(c, "gamma");
  const std::vector<double>& beta = leafValues(c, "beta");
  const double eps = c.attrs.epsilon.value_or(kNormalizationEpsilon);
  const std::size_t rows = batch ? *c.attrs.channels : *c.attrs.seqLen;
  const std::size_t cols = batch ? sizeOf(*c.attrs.spatial) : *c.attrs.embedDim;
  const double gammaMax = maxAbsFinite(gamma, 0, gamma.size());
  const double betaMax = maxAbsFinite(beta, 0, beta.size());
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t off = r * cols;
    double mean = 0;
    for (std::size_t j = 0; j < cols; ++j) mean += x[off + j];
    mean /= cols;
    double meanC = 0, cMax = 0;
    for (std::size_t j = 0; j < cols; ++j) {
      meanC += x[off + j] - mean;
      cMax = std::max(cMax, std::fabs(x[off + j] - mean));
    }
    meanC /= cols;
    double var = 0;
    for (std::size_t j = 0; j < cols; ++j) var += (x[off + j] - mean - meanC) * (x[off + j] - mean - meanC);
    var = std::max(var / cols, 0.0);
    const double invStd = finiteOr0(1.0 / std::sqrt(var + eps));
    const double X = finiteOr0(cMax * invStd);             // max |xhat|
    const double M = finiteOr0(std::fabs(mean) * invStd);  // the mean's rounding, in xhat units
    const double cond = X + M;
    const double gRow = batch ? std::fabs(gamma[r]) : gammaMax;
    const double bRow = batch ? std::fabs(beta[r]) : betaMax;
    for (std::size_t j = 0; j < cols; ++j) f.value[off + j] = gRow * cond + bRow;
    if (!c.upstream) continue;
    const std::vector<double>& dy = c.upstream->values;
    double gMax = 0;
    for (std::size_t j = 0; j < cols; ++j)
      gMax = std::max(gMax, std::fabs(finiteOr0(dy[off + j] * (batch ? gamma[r] : gamma[j]))));
    const double dx = invStd * gMax * (1 + X * X + X * M);
    for (std::size_t j = 0; j < cols; ++j) {
      f.grads[leafIndex(c, "x")][off + j] = std::max(f.grads[leafIndex(c, "x")][off + j], dx);
      const std::size_t p = batch ? r : j;
      f.grads[leafIndex(c, "gamma")][p] += std::fabs(dy[off + j]) * cond;
      f.grads[leafIndex(c, "beta")][p] += std::fabs(dy[off + j]);
    }
  }
}

void crossEntropyFloors(const TestCase& c, const Outcome&, Floors& f, bool distill) {
  const Shape& s = *c.attrs.s;
  if (isEmptyTensor(s)) return;
  const Fold fold = foldOf(s, *c.attrs.axis);
  const std::vector<double>& logits = leafValues(c, distill ? "student" : "logits");
  const std::vector<double>& raw = leafValues(c, distill ? "teacher" : "target");
  const double slices = static_cast<double>(fold.outer * fold.inner);
  const double denom = (distill || c.attrs.mean.value_or(true)) ? std::max(slices, 1.0) : 1.0;
  const double dy = c.upstream ? std::fabs(c.upstream->values.at(0)) : 0.0;
  double value = 0;
  auto& gLogits = f.grads[leafIndex(c, distill ? "student" : "logits")];
  for (std::size_t o = 0; o < fold.outer; ++o)
    for (std::size_t i = 0; i < fold.inner; ++i) {
      const std::size_t begin = o * fold.n * fold.inner + i;
      const std::vector<double> logp = logSoftmaxSlice(logits, begin, fold.n, fold.inner);
      std::vector<double> t(fold.n);
      if (distill) {
        const std::vector<double> lt = logSoftmaxSlice(raw, begin, fold.n, fold.inner);
        for (std::size_t j = 0; j < fold.n; ++j) t[j] = std::exp(lt[j]);
      } else {
        for (std::size_t j = 0; j < fold.n; ++j) t[j] = raw[begin + j * fold.inner];
      }
      double tAbs = 0;
      for (double w : t) tAbs += std::fabs(finiteOr0(w));
      for (std::size_t j = 0; j < fold.n; ++j) {
        const std::size_t at = begin + j * fold.inner;
        const double lp = std::fabs(logp[j]), w = std::fabs(t[j]);
        value += finiteOr0(w * (lp + 1));
        const double p = finiteOr0(std::exp(logp[j]));
        gLogits[at] = finiteOr0(dy / denom * (p * tAbs * (1 + finiteOr0(lp)) + finiteOr0(w)));
        if (!distill) f.grads[leafIndex(c, "target")][at] = finiteOr0(dy / denom * (lp + 1));
      }
    }
  f.value.at(0) = value / denom;
}

Floors floorsFor(const TestCase& c, const Outcome& e) {
  Floors f;
  f.value.assign(e.value.values.size(), 0.0);
  for (const Leaf& l : c.leaves) f.grads.emplace_back(l.value.values.size(), 0.0);
  if (c.op == "softmaxLast" || c.op == "logSoftmaxLast") softmaxFamilyFloors(c, e, f);
  else if (c.op == "layerNorm") normFloors(c, e, f, /*batch=*/false);
  else if (c.op == "batchNorm") normFloors(c, e, f, /*batch=*/true);
  else if (c.op == "crossEntropy") crossEntropyFloors(c, e, f, /*distill=*/false);
  else if (c.op == "distill") crossEntropyFloors(c, e, f, /*distill=*/true);
  // topKMask: floors 0 and budget 0, exact.
  return f;
}

std::string number(double v) {
  std::ostringstream o;
  o << std::setprecision(9) << v;
  return o.str();
}

// Compares one tensor; returns false and fills `detail` at the first element over budget.
bool compareTensor(const std::string& what, const TensorData& a, const TensorData& e,
                   const std::vector<double>& floors, double budget, double& worst,
                   std::string& detail) {
  if (a.shape != e.shape || a.values.size() != e.values.size()) {
    detail = what + ": shape " + toString(a.shape) + " (" + std::to_string(a.values.size()) +
             " values), expected " + toString(e.shape);
    return false;
  }
  for (std::size_t i = 0; i < e.values.size(); ++i) {
    const double err = conformance::unitError(a.values[i], e.values[i], conformance::kBinary32Unit,
                                              i < floors.size() ? floors[i] : 0.0);
    if (std::isfinite(e.values[i]) && std::isfinite(err)) worst = std::max(worst, err);
    if (!(err <= budget)) {
      detail = what + "[" + std::to_string(i) + "]: got " + number(a.values[i]) + ", expected " +
               number(e.values[i]) + " (error " + number(err) + " units of 2^-23 x floor " +
               number(i < floors.size() ? floors[i] : 0.0) + ", budget " + number(budget) + ")";
      return false;
    }
  }
  return true;
}

}  // namespace

Verdict judge(const TestCase& c, const Outcome& actual, const Outcome& expected) {
  Verdict v;
  if (expected.error || actual.error) {
    v.ok = expected.error == actual.error;
    if (!v.ok)
      v.detail = "error: got '" + actual.error.value_or("(none)") + "', expected '" +
                 expected.error.value_or("(none)") + "'";
    return v;
  }
  const Budget budget = budgetFor(c.op);
  const Floors floors = floorsFor(c, expected);
  if (!compareTensor("value", actual.value, expected.value, floors.value, budget.forward,
                     v.worstForward, v.detail)) {
    v.ok = false;
    return v;
  }
  if (actual.grads.size() != expected.grads.size()) {
    v.ok = false;
    v.detail = "got " + std::to_string(actual.grads.size()) + " gradients, expected " +
               std::to_string(expected.grads.size());
    return v;
  }
  for (std::size_t g = 0; g < expected.grads.size(); ++g)
    if (!compareTensor("grad of leaf " + std::to_string(g), actual.grads[g], expected.grads[g],
                       floors.grads.at(g), budget.backward, v.worstBackward, v.detail)) {
      v.ok = false;
      return v;
    }
  return v;
}

const Outcome& oracleOutcome(const NamedCase& nc) {
  static std::map<std::string, Outcome> cache;
  auto it = cache.find(nc.name);
  if (it == cache.end()) {
    auto oracle = conformance::makeReferenceTapeOracle();
    it = cache.emplace(nc.name, conformance::evaluate(*oracle, nc.c)).first;
  }
  return it->second;
}

Verdict runAgainstOracle(const KernelTable& kernels, const NamedCase& nc) {
  auto tape = conformance::makeDeviceTape(kernels);
  const Outcome actual = conformance::evaluate(*tape, nc.c);
  return judge(nc.c, actual, oracleOutcome(nc));
}

namespace {
std::map<std::string, std::pair<double, double>>& worstTable() {
  static std::map<std::string, std::pair<double, double>> table;
  return table;
}
}  // namespace

void recordWorst(const std::string& kernels, const std::string& op, const Verdict& v) {
  auto& w = worstTable()[kernels + " " + op];
  w.first = std::max(w.first, v.worstForward);
  w.second = std::max(w.second, v.worstBackward);
}

const KernelTable& atenCpu() {
  static const KernelTable table = [] {
    auto t = loadKernelTable("aten", DeviceKind::Cpu);
    if (!t) FAIL("cannot load the aten table: " << t.message());
    return t.value();
  }();
  return table;
}

const KernelTable& hostReference() {
  static const KernelTable table = [] {
    auto t = loadKernelTable(plugins::kHostReference, DeviceKind::Cpu);
    if (!t) FAIL("cannot load the host reference plugin: " << t.message());
    return t.value();
  }();
  return table;
}

namespace {
// Prints the worst errors seen, when TAPECHECK_DEVICE_TEST_REPORT is set.
struct WorstErrorReport : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testRunEnded(const Catch::TestRunStats&) override {
    if (!std::getenv("TAPECHECK_DEVICE_TEST_REPORT")) return;
    std::cout << "worst errors (units of 2^-23 x floor): kernels op forward backward\n";
    for (const auto& [key, w] : worstTable())
      std::cout << "  " << key << " " << number(w.first) << " " << number(w.second) << "\n";
  }
};
CATCH_REGISTER_LISTENER(WorstErrorReport)
}  // namespace

}  // namespace tapecheck::device::testing
