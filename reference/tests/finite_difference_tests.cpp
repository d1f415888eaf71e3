// Every pullback against central finite differences of the forward value (RapidCheck): for a
// random upstream u and direction v,
//     <J^T u, v>  ~=  (f(x + h v) - f(x - h v)) . u / (2h),
// where J^T u is what backward returns for the differentiated inputs, and f is evaluated by
// building fresh tapes at the perturbed inputs. The check is done in binary64 and, where the
// differences need precision (small epsilon, near-constant rows), in Multi.
//
// Error budget, with scale = (sum_k |u_k| (1 + |f_k|)) * (1 + sum_i |v_i|_1):
//  * rounding: each f_k is computed with an error of a few dozen units of roundoff times
//    (1 + |f_k|) (rows of at most 5 entries, moderate values), so the difference quotient is off
//    by about c * unit / h * scale with c <~ 30;
//  * truncation: h^2 / 6 * |D^3 f[v, v, v]| . u, and the third derivatives are bounded by the
//    data: softmax-family derivatives are polynomials in probabilities in [0, 1]; a
//    normalization's scale with 1 / std^3, so binary64 only draws epsilon >= 0.1 (std >= 0.32)
//    and the small epsilon 1e-5 (std down to 0.003) is left to Multi.
//  binary64: h = 2^-20: rounding <~ 30 * 2^-53 / 2^-20 ~ 3.5e-9 in the worst case (in practice
//            the errors do not add up: 20000 random cases per operation stay below 9e-11);
//            truncation ~ 2^-40 / 6 * 1e2 * 64 ~ 1e-9 at worst. Tolerance 2e-9 * scale.
//  Multi   : h = 2^-50 (x + h v is exact in 128 bits): rounding ~ 30 * 2^-128 / 2^-50 ~ 1e-22;
//            truncation ~ 2^-100 / 6 * 3e7 * 64 ~ 3e-22 (epsilon 1e-5: 1/std^3 ~ 3e7);
//            3000 to 20000 cases per operation stay below 3e-23. Tolerance 1e-20 * scale.
//  (The hidden test [.calibration] below prints the largest errors seen.)
// Either way, a wrong term in a pullback shows up as an error of order 1e-3 * scale or more.
#include <rapidcheck/catch.h>

#include "op_cases.h"

using namespace tct;

namespace {

template <class S>
Buf<S> forwardAt(const OpCase& c, const std::vector<Buf<S>>& inputs) {
  RefTape<S> t;
  std::vector<NodeId> ids;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    ids.push_back(leafBuf(t, c.shapes[i], inputs[i], false));
  return t.node(build(t, c, ids)).value.data;
}

// Returns |<J^T u, v> - fd| / scale.
template <class S>
double pullbackError(const OpCase& c, const S& h) {
  RefTape<S> t;
  std::vector<NodeId> ids;
  for (std::size_t i = 0; i < c.inputs.size(); ++i)
    ids.push_back(leafBuf(t, c.shapes[i], toBuf<S>(c.inputs[i]), c.diff[i]));
  const NodeId out = build(t, c, ids);
  const Buf<S> f0 = t.node(out).value.data;
  const Buf<S> u = toBuf<S>(c.seed);
  auto g = t.backward(out, typename RefTape<S>::Value{c.outShape, u});
  RC_ASSERT(g.ok());

  S lhs = S(0);
  double sumV = 1;
  std::vector<Buf<S>> plus, minus;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const Buf<S> x = toBuf<S>(c.inputs[i]), v = toBuf<S>(c.dirs[i]);
    const Buf<S>& gi = g.value()[ids[i]];
    for (Eigen::Index j = 0; j < v.size(); ++j) {
      lhs += gi(j) * v(j);
      sumV += std::fabs(c.dirs[i][static_cast<std::size_t>(j)]);
      // An input that is not differentiated (distill's teacher) receives exactly nothing.
      if (!c.diff[i]) RC_ASSERT(toDouble<S>(gi(j)) == 0.0);
    }
    plus.push_back(Buf<S>(x + h * v));
    minus.push_back(Buf<S>(x - h * v));
  }
  const Buf<S> fp = forwardAt(c, plus), fm = forwardAt(c, minus);
  S fd = S(0);
  double sumU = 0;
  for (Eigen::Index k = 0; k < u.size(); ++k) {
    fd += (fp(k) - fm(k)) * u(k);
    sumU += std::fabs(c.seed[static_cast<std::size_t>(k)]) * (1 + std::fabs(toDouble<S>(f0(k))));
  }
  fd = fd / (2 * h);
  const double err = std::fabs(toDouble<S>(S(lhs - fd)));
  RC_ASSERT(std::isfinite(toDouble<S>(lhs)));
  return err / (sumU * sumV + 1e-300);
}

template <class S>
void checkOp(Op op, const std::vector<double>& eps, const S& h, double tol) {
  const OpCase c = genCase(op, eps);
  const double e = pullbackError<S>(c, h);
  RC_LOG() << describe(c) << "\nrelative error " << e << "\n";
  RC_ASSERT(e <= tol);
}

constexpr double kTol64 = 2e-9, kTolMulti = 1e-20;
const std::vector<double> kEps64 = {0.1, 0.5, 1.0};
const std::vector<double> kEpsMulti = {1e-5, 0.01, 1.0};
const std::vector<Op> kDifferentiable = {Op::Softmax,      Op::LogSoftmax, Op::LayerNorm,
                                         Op::BatchNorm,    Op::CrossEntropy, Op::Distill,
                                         Op::Pipeline};

}  // namespace

TEST_CASE("every pullback matches central differences in binary64", "[grad][fd]") {
  for (Op op : kDifferentiable)
    rc::prop(std::string(opName(op)) + " in binary64",
             [op] { checkOp<double>(op, kEps64, 0x1p-20, kTol64); });
}

TEST_CASE("every pullback matches central differences in Multi", "[grad][fd]") {
  tapecheck::reference::prepareScalar<Multi>();
  const Multi h = tapecheck::reference::ScalarTraits<Multi>::fromDouble(0x1p-50);
  for (Op op : kDifferentiable)
    rc::prop(std::string(opName(op)) + " in Multi",
             [op, h] { checkOp<Multi>(op, kEpsMulti, h, kTolMulti); });
}

// Not run by default: prints the largest relative error seen per operation, to re-check the
// margins above after changing h, the generators or the formulas (RC_PARAMS=max_success=N for
// a longer run).
TEST_CASE("finite-difference error margins (calibration)", "[.calibration]") {
  tapecheck::reference::prepareScalar<Multi>();
  const Multi h = tapecheck::reference::ScalarTraits<Multi>::fromDouble(0x1p-50);
  for (Op op : kDifferentiable) {
    double max64 = 0, maxMulti = 0;
    const bool ok = rc::check(std::string(opName(op)) + " margins", [&] {
      const OpCase c64 = genCase(op, kEps64);
      max64 = std::max(max64, pullbackError<double>(c64, 0x1p-20));
      const OpCase cm = genCase(op, kEpsMulti);
      maxMulti = std::max(maxMulti, pullbackError<Multi>(cm, h));
    });
    CHECK(ok);
    std::printf("%-45s binary64 %.3g (tol %.0e)   Multi %.3g (tol %.0e)\n", opName(op), max64,
                kTol64, maxMulti, kTolMulti);
  }
}
