#include "tapecheck/conformance/op_registry.h"

namespace tapecheck::conformance {
namespace {

Error missing(const char* what, const std::string& name) {
  return Error{std::string("tapecheck: test case lacks ") + what + " '" + name + "'"};
}

// Argument access that turns a malformed case into an error value, never an exception.
struct Args {
  const TestCase& c;
  Result<NodeId> id(const std::string& name) const {
    auto it = c.call.find(name);
    if (it == c.call.end()) return missing("call argument", name);
    return it->second;
  }
};

#define TAPECHECK_TRY(var, expr)        \
  auto var##_r = (expr);                \
  if (!var##_r) return var##_r.error(); \
  auto var = std::move(var##_r).value()

template <class T>
Result<T> need(const std::optional<T>& v, const char* name) {
  if (!v) return missing("attribute", name);
  return *v;
}

Result<NodeId> callSoftmax(AnyTape& t, const TestCase& c) {
  Args a{c};
  TAPECHECK_TRY(s, need(c.attrs.s, "s"));
  TAPECHECK_TRY(x, a.id("x"));
  return t.softmaxLast(s, x);
}

Result<NodeId> callLogSoftmax(AnyTape& t, const TestCase& c) {
  Args a{c};
  TAPECHECK_TRY(s, need(c.attrs.s, "s"));
  TAPECHECK_TRY(x, a.id("x"));
  return t.logSoftmaxLast(s, x);
}

Result<NodeId> callTopK(AnyTape& t, const TestCase& c) {
  Args a{c};
  TAPECHECK_TRY(s, need(c.attrs.s, "s"));
  TAPECHECK_TRY(k, need(c.attrs.k, "k"));
  TAPECHECK_TRY(x, a.id("x"));
  return t.topKMask(s, k, x);
}

Result<NodeId> callLayerNorm(AnyTape& t, const TestCase& c) {
  Args a{c};
  TAPECHECK_TRY(seqLen, need(c.attrs.seqLen, "seqLen"));
  TAPECHECK_TRY(embedDim, need(c.attrs.embedDim, "embedDim"));
  TAPECHECK_TRY(x, a.id("x"));
  TAPECHECK_TRY(gamma, a.id("gamma"));
  TAPECHECK_TRY(beta, a.id("beta"));
  return t.layerNorm(seqLen, embedDim, x, gamma, beta,
                     c.attrs.epsilon.value_or(kNormalizationEpsilon));
}

Result<NodeId> callBatchNorm(AnyTape& t, const TestCase& c) {
  Args a{c};
  TAPECHECK_TRY(channels, need(c.attrs.channels, "channels"));
  TAPECHECK_TRY(spatial, need(c.attrs.spatial, "spatial"));
  TAPECHECK_TRY(x, a.id("x"));
  TAPECHECK_TRY(gamma, a.id("gamma"));
  TAPECHECK_TRY(beta, a.id("beta"));
  return t.batchNorm(channels, spatial, x, gamma, beta,
                     c.attrs.epsilon.value_or(kNormalizationEpsilon));
}

Result<NodeId> callCrossEntropy(AnyTape& t, const TestCase& c) {
  Args a{c};
  TAPECHECK_TRY(s, need(c.attrs.s, "s"));
  TAPECHECK_TRY(axis, need(c.attrs.axis, "axis"));
  TAPECHECK_TRY(logits, a.id("logits"));
  TAPECHECK_TRY(target, a.id("target"));
  return t.crossEntropy(s, axis, logits, target, c.attrs.mean.value_or(true));
}

Result<NodeId> callDistill(AnyTape& t, const TestCase& c) {
  Args a{c};
  TAPECHECK_TRY(s, need(c.attrs.s, "s"));
  TAPECHECK_TRY(axis, need(c.attrs.axis, "axis"));
  TAPECHECK_TRY(student, a.id("student"));
  TAPECHECK_TRY(teacher, a.id("teacher"));
  return t.distill(s, axis, student, teacher);
}

#undef TAPECHECK_TRY

}  // namespace

const std::vector<OpInfo>& opRegistry() {
  static const std::vector<OpInfo> ops = {
      {"softmaxLast", "softmax", {"x"}, {"s"}, {}, callSoftmax},
      {"logSoftmaxLast", "log_softmax", {"x"}, {"s"}, {}, callLogSoftmax},
      {"topKMask", "topk_mask", {"x"}, {"s", "k"}, {}, callTopK},
      {"layerNorm", "layer_norm", {"x", "gamma", "beta"}, {"seqLen", "embedDim"}, {"epsilon"},
       callLayerNorm},
      {"batchNorm", "batch_norm", {"x", "gamma", "beta"}, {"channels", "spatial"}, {"epsilon"},
       callBatchNorm},
      {"crossEntropy", "cross_entropy", {"logits", "target"}, {"s", "axis"}, {"mean"},
       callCrossEntropy},
      {"distill", "distill", {"student", "teacher"}, {"s", "axis"}, {}, callDistill},
  };
  return ops;
}

const OpInfo* findOp(std::string_view name) {
  for (const OpInfo& op : opRegistry())
    if (op.name == name) return &op;
  return nullptr;
}

Outcome evaluate(AnyTape& tape, const TestCase& c) {
  Outcome out;
  const OpInfo* op = findOp(c.op);
  if (!op) {
    out.error = "tapecheck: unknown operation '" + c.op + "'";
    return out;
  }
  for (const Leaf& l : c.leaves) {
    auto id = tape.leaf(l.value, l.requiresGrad);
    if (!id) {
      out.error = id.message();
      return out;
    }
  }
  auto node = op->call(tape, c);
  if (!node) {
    out.error = node.message();
    return out;
  }
  auto value = tape.value(node.value());
  if (!value) {
    out.error = value.message();
    return out;
  }
  out.value = std::move(value).value();
  if (c.upstream) {
    auto grads = tape.backward(node.value(), *c.upstream);
    if (!grads) {
      out.error = grads.message();
      return out;
    }
    grads.value().resize(c.leaves.size());  // one gradient per leaf
    out.grads = std::move(grads).value();
  }
  return out;
}

}  // namespace tapecheck::conformance
