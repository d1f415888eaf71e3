// Test support for the device tape: case builders, the oracle, and judging.
//
// Every numeric check compares a device-tape result with the multi-precision oracle (the
// reference tape over MPFR, rounded to binary64) through conformance::evaluate, and judges it
// with conformance::judgeCase: the op's floors and budgets from the registry, in units of 2^-23
// of each element's floor (conformance/judge.h, budgets.h), the policy `tapecheck run` applies.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tapecheck/conformance/any_tape.h"
#include "tapecheck/conformance/device_tapes.h"
#include "tapecheck/conformance/op_registry.h"
#include "tapecheck/conformance/reference_tapes.h"
#include "tapecheck/conformance/test_case.h"
#include "tapecheck/device/kernel_table.h"

namespace tapecheck::device::testing {

using conformance::Attrs;
using conformance::Leaf;
using conformance::Outcome;
using conformance::TensorData;
using conformance::TestCase;

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline TensorData tensor(Shape shape, std::vector<double> values) {
  return TensorData{std::move(shape), std::move(values)};
}

// Deterministic binary32-representable data.
class Data {
 public:
  explicit Data(std::uint32_t seed) : gen_(seed) {}
  double uniform(double lo, double hi) {
    return static_cast<float>(std::uniform_real_distribution<double>(lo, hi)(gen_));
  }
  double normal(double mean, double sd) {
    return static_cast<float>(std::normal_distribution<double>(mean, sd)(gen_));
  }
  TensorData uniform(const Shape& s, double lo, double hi) {
    std::vector<double> v(sizeOf(s));
    for (double& x : v) x = uniform(lo, hi);
    return tensor(s, v);
  }
  TensorData normal(const Shape& s, double mean, double sd) {
    std::vector<double> v(sizeOf(s));
    for (double& x : v) x = normal(mean, sd);
    return tensor(s, v);
  }
  // Small integers, for ties.
  TensorData integers(const Shape& s, int lo, int hi) {
    std::vector<double> v(sizeOf(s));
    for (double& x : v) x = std::uniform_int_distribution<int>(lo, hi)(gen_);
    return tensor(s, v);
  }

 private:
  std::mt19937 gen_;
};

struct NamedCase {
  std::string name;
  TestCase c;
};

// ---- case builders (every leaf requires grad unless said otherwise) -----------------------------

inline TestCase rowOpCase(const std::string& op, TensorData x, std::optional<TensorData> up,
                          std::optional<std::uint64_t> k = std::nullopt) {
  TestCase c;
  c.op = op;
  c.attrs.s = x.shape;
  c.attrs.k = k;
  c.leaves = {Leaf{std::move(x), true}};
  c.call = {{"x", 0}};
  c.upstream = std::move(up);
  return c;
}

inline TestCase layerNormCase(TensorData x, TensorData gamma, TensorData beta, double eps,
                              std::optional<TensorData> up, bool gammaGrad = true) {
  TestCase c;
  c.op = "layerNorm";
  c.attrs.seqLen = x.shape.at(0);
  c.attrs.embedDim = x.shape.at(1);
  c.attrs.epsilon = eps;
  c.leaves = {Leaf{std::move(x), true}, Leaf{std::move(gamma), gammaGrad},
              Leaf{std::move(beta), true}};
  c.call = {{"x", 0}, {"gamma", 1}, {"beta", 2}};
  c.upstream = std::move(up);
  return c;
}

inline TestCase batchNormCase(std::uint64_t channels, Shape spatial, TensorData x,
                              TensorData gamma, TensorData beta, double eps,
                              std::optional<TensorData> up) {
  TestCase c;
  c.op = "batchNorm";
  c.attrs.channels = channels;
  c.attrs.spatial = std::move(spatial);
  c.attrs.epsilon = eps;
  c.leaves = {Leaf{std::move(x), true}, Leaf{std::move(gamma), true},
              Leaf{std::move(beta), true}};
  c.call = {{"x", 0}, {"gamma", 1}, {"beta", 2}};
  c.upstream = std::move(up);
  return c;
}

inline TestCase crossEntropyCase(std::uint64_t axis, TensorData logits, TensorData target,
                                 bool mean, std::optional<double> dloss) {
  TestCase c;
  c.op = "crossEntropy";
  c.attrs.s = logits.shape;
  c.attrs.axis = axis;
  c.attrs.mean = mean;
  c.leaves = {Leaf{std::move(logits), true}, Leaf{std::move(target), true}};
  c.call = {{"logits", 0}, {"target", 1}};
  if (dloss) c.upstream = tensor({}, {*dloss});
  return c;
}

inline TestCase distillCase(std::uint64_t axis, TensorData student, TensorData teacher,
                            std::optional<double> dloss) {
  TestCase c;
  c.op = "distill";
  c.attrs.s = student.shape;
  c.attrs.axis = axis;
  // The teacher requires grad: docs/spec.md says it still receives nothing.
  c.leaves = {Leaf{std::move(student), true}, Leaf{std::move(teacher), true}};
  c.call = {{"student", 0}, {"teacher", 1}};
  if (dloss) c.upstream = tensor({}, {*dloss});
  return c;
}

// ---- the cases ----------------------------------------------------------------------------------

std::vector<NamedCase> softmaxFamilyCases(const std::string& op);  // softmaxLast, logSoftmaxLast
std::vector<NamedCase> topKCases();
std::vector<NamedCase> layerNormCases();
std::vector<NamedCase> batchNormCases();
std::vector<NamedCase> crossEntropyCases();
std::vector<NamedCase> distillCases();
std::vector<NamedCase> casesFor(const std::string& op);
std::vector<NamedCase> allCases();

// ---- judging ------------------------------------------------------------------------------------

struct Verdict {
  bool ok = true;
  std::string detail;       // why it failed, readable
  double worstForward = 0;  // the largest finite element error, in 2^-23 of the floor
  double worstBackward = 0;
};

// Compares a device outcome with the oracle's on the same case (conformance::judgeCase; a
// MISTRUSTED pass is not a failure).
Verdict judge(const TestCase& c, const Outcome& actual, const Outcome& expected);

// The oracle's outcome, computed once per case and cached by name.
const Outcome& oracleOutcome(const NamedCase& nc);

// Runs the case on a fresh device tape with `kernels` and judges it against the oracle.
Verdict runAgainstOracle(const KernelTable& kernels, const NamedCase& nc);

// The largest errors seen per (tables, op, pass), printed at the end of the run when the
// environment variable TAPECHECK_DEVICE_TEST_REPORT is set (how the budgets were checked).
void recordWorst(const std::string& kernels, const std::string& op, const Verdict& v);

// The loaded tables the tests share (loaded once; REQUIREs success).
const KernelTable& atenCpu();
const KernelTable& hostReference();

}  // namespace tapecheck::device::testing
