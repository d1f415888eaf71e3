// Random instances of the tape's operations for the RapidCheck properties (finite differences
// and agreement between scalars): small shapes, moderate values on a grid that binary32 holds
// exactly (so all three scalar instantiations see the very same inputs), a random upstream
// gradient u and a random direction v per differentiable input.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <string>
#include <vector>

#include "test_support.h"

namespace tct {

enum class Op { Softmax, LogSoftmax, TopK, LayerNorm, BatchNorm, CrossEntropy, Distill, Pipeline };

inline const char* opName(Op op) {
  switch (op) {
    case Op::Softmax: return "softmax";
    case Op::LogSoftmax: return "log_softmax";
    case Op::TopK: return "topk_mask";
    case Op::LayerNorm: return "layer_norm";
    case Op::BatchNorm: return "batch_norm";
    case Op::CrossEntropy: return "cross_entropy";
    case Op::Distill: return "distill";
    case Op::Pipeline: return "log_softmax -> layer_norm -> cross_entropy";
  }
  return "?";
}

struct OpCase {
  Op op = Op::Softmax;
  Shape s;                  // the op's shape argument (layerNorm: [seqLen, embedDim])
  Dim channels = 0;         // batchNorm
  Shape spatial;            // batchNorm
  std::uint64_t k = 0;      // topKMask
  std::uint64_t axis = 0;   // crossEntropy, distill, pipeline's crossEntropy
  bool mean = true;         // crossEntropy
  double eps = 1e-5;        // layerNorm, batchNorm
  std::vector<Shape> shapes;  // input leaves
  std::vector<Host> inputs;
  std::vector<bool> diff;   // which inputs are differentiated (distill's teacher is not)
  Shape outShape;
  Host seed;                // u, the upstream gradient
  std::vector<Host> dirs;   // v, one per input (zeros where diff is false)
};

inline std::string describe(const OpCase& c) {
  std::string d = std::string(opName(c.op)) + " s=" + tapecheck::toString(c.s);
  if (c.op == Op::BatchNorm)
    d += " channels=" + std::to_string(c.channels) + " spatial=" + tapecheck::toString(c.spatial);
  d += " axis=" + std::to_string(c.axis) + " mean=" + std::to_string(c.mean) +
       " k=" + std::to_string(c.k) + " eps=" + std::to_string(c.eps);
  for (std::size_t i = 0; i < c.inputs.size(); ++i) d += "\n  input " + show(c.inputs[i]);
  d += "\n  seed " + show(c.seed);
  return d;
}

// n values k / denom with k uniform in [lo * denom, hi * denom]; denom a power of two and
// |k| < 2^24, so every value is exact in binary32.
inline Host genGrid(std::size_t n, int lo, int hi, int denom) {
  const auto ks =
      *rc::gen::container<std::vector<int>>(n, rc::gen::inRange(lo * denom, hi * denom + 1));
  Host out;
  for (int k : ks) out.push_back(static_cast<double>(k) / denom);
  return out;
}

inline Shape genShape(int minRank, int maxRank, int maxDim) {
  const int rank = *rc::gen::inRange(minRank, maxRank + 1);
  Shape s;
  for (int i = 0; i < rank; ++i) s.push_back(static_cast<Dim>(*rc::gen::inRange(1, maxDim + 1)));
  return s;
}

inline Host genValues(const Shape& s) { return genGrid(tapecheck::sizeOf(s), -3, 3, 64); }

// Fills the upstream gradient and the directions (both in [-1, 1]).
inline void genSeedAndDirections(OpCase& c) {
  c.seed = genGrid(tapecheck::sizeOf(c.outShape), -1, 1, 1024);
  c.dirs.clear();
  for (std::size_t i = 0; i < c.inputs.size(); ++i)
    c.dirs.push_back(c.diff[i] ? genGrid(c.inputs[i].size(), -1, 1, 1024)
                               : Host(c.inputs[i].size(), 0.0));
}

inline void addInput(OpCase& c, Shape s, Host v, bool diff = true) {
  c.shapes.push_back(std::move(s));
  c.inputs.push_back(std::move(v));
  c.diff.push_back(diff);
}

// A random instance of `op`; epsilons for the normalizations are drawn from `epsChoices`.
inline OpCase genCase(Op op, const std::vector<double>& epsChoices) {
  OpCase c;
  c.op = op;
  switch (op) {
    case Op::Softmax:
    case Op::LogSoftmax:
    case Op::TopK:
      c.s = genShape(1, 3, 4);
      addInput(c, c.s, genValues(c.s));
      c.k = static_cast<std::uint64_t>(*rc::gen::inRange(0, 6));
      c.outShape = c.s;
      break;
    case Op::LayerNorm: {
      const Dim seq = static_cast<Dim>(*rc::gen::inRange(1, 4));
      const Dim embed = static_cast<Dim>(*rc::gen::inRange(1, 6));
      c.s = {seq, embed};
      c.eps = *rc::gen::elementOf(epsChoices);
      addInput(c, c.s, genValues(c.s));
      addInput(c, {embed}, genGrid(embed, -2, 2, 64));
      addInput(c, {embed}, genGrid(embed, -2, 2, 64));
      c.outShape = c.s;
      break;
    }
    case Op::BatchNorm: {
      c.channels = static_cast<Dim>(*rc::gen::inRange(1, 4));
      c.spatial = genShape(0, 3, 3);
      c.s = {c.channels};
      c.s.insert(c.s.end(), c.spatial.begin(), c.spatial.end());
      c.eps = *rc::gen::elementOf(epsChoices);
      addInput(c, c.s, genValues(c.s));
      addInput(c, {c.channels}, genGrid(c.channels, -2, 2, 64));
      addInput(c, {c.channels}, genGrid(c.channels, -2, 2, 64));
      c.outShape = c.s;
      break;
    }
    case Op::CrossEntropy:
    case Op::Distill:
      c.s = genShape(1, 3, 3);
      c.axis = static_cast<std::uint64_t>(*rc::gen::inRange(0, static_cast<int>(c.s.size())));
      c.mean = op == Op::Distill || *rc::gen::arbitrary<bool>();
      addInput(c, c.s, genValues(c.s));
      if (op == Op::CrossEntropy)
        addInput(c, c.s, genGrid(tapecheck::sizeOf(c.s), 0, 2, 64));  // non-negative weights
      else
        addInput(c, c.s, genValues(c.s), /*diff=*/false);             // the teacher
      c.outShape = {};
      break;
    case Op::Pipeline: {
      const Dim rows = static_cast<Dim>(*rc::gen::inRange(1, 4));
      const Dim cols = static_cast<Dim>(*rc::gen::inRange(1, 5));
      c.s = {rows, cols};
      c.eps = *rc::gen::elementOf(epsChoices);
      c.axis = static_cast<std::uint64_t>(*rc::gen::inRange(0, 2));
      c.mean = *rc::gen::arbitrary<bool>();
      addInput(c, c.s, genValues(c.s));
      addInput(c, {cols}, genGrid(cols, -2, 2, 64));
      addInput(c, {cols}, genGrid(cols, -2, 2, 64));
      addInput(c, c.s, genGrid(rows * cols, 0, 2, 64));
      c.outShape = {};
      break;
    }
  }
  genSeedAndDirections(c);
  return c;
}

// Appends the case's operation(s) to a tape whose input leaves are `in`.
template <class S>
NodeId build(RefTape<S>& t, const OpCase& c, const std::vector<NodeId>& in) {
  switch (c.op) {
    case Op::Softmax: return okId(t.softmaxLast(c.s, in[0]));
    case Op::LogSoftmax: return okId(t.logSoftmaxLast(c.s, in[0]));
    case Op::TopK: return okId(t.topKMask(c.s, c.k, in[0]));
    case Op::LayerNorm: return okId(t.layerNorm(c.s[0], c.s[1], in[0], in[1], in[2], c.eps));
    case Op::BatchNorm:
      return okId(t.batchNorm(c.channels, c.spatial, in[0], in[1], in[2], c.eps));
    case Op::CrossEntropy: return okId(t.crossEntropy(c.s, c.axis, in[0], in[1], c.mean));
    case Op::Distill: return okId(t.distill(c.s, c.axis, in[0], in[1]));
    case Op::Pipeline: {
      const NodeId l = okId(t.logSoftmaxLast(c.s, in[0]));
      const NodeId y = okId(t.layerNorm(c.s[0], c.s[1], l, in[1], in[2], c.eps));
      return okId(t.crossEntropy(c.s, c.axis, y, in[3], c.mean));
    }
  }
  return 0;
}

template <class S>
Buf<S> toBuf(const Host& v) {
  Buf<S> b(static_cast<Eigen::Index>(v.size()));
  for (std::size_t i = 0; i < v.size(); ++i)
    b(static_cast<Eigen::Index>(i)) = tapecheck::reference::ScalarTraits<S>::fromDouble(v[i]);
  return b;
}

template <class S>
double toDouble(const S& v) {
  return tapecheck::reference::ScalarTraits<S>::toDouble(v);
}

}  // namespace tct
