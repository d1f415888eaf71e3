#include "tapecheck/conformance/op_registry.h"

#include <algorithm>

#include "cases.h"

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

namespace {

using F = Fill;

// Hard inputs named as golden-vector flags (vectors/ uses the same words).
const std::vector<std::string> kRowFlags = {"NearExpOverflow", "VeryNegative", "MeanShifted",
                                            "NonFinite", "AllEqual", "WarpEdge", "LongRow",
                                            "Empty", "Scalar"};

// The calling convention of an op (the fields every user of the registry reads).
OpInfo spec(std::string name, std::string nodeName, std::vector<std::string> tensorArgs,
            std::vector<std::string> attrNames, std::vector<std::string> optionalAttrNames,
            std::function<Result<NodeId>(AnyTape&, const TestCase&)> call) {
  OpInfo op;
  op.name = std::move(name);
  op.nodeName = std::move(nodeName);
  op.tensorArgs = std::move(tensorArgs);
  op.attrNames = std::move(attrNames);
  op.optionalAttrNames = std::move(optionalAttrNames);
  op.call = std::move(call);
  return op;
}

OpInfo withTesting(OpInfo op, ShapeFamily family, std::vector<Fill> fills,
                   std::vector<std::string> hard, const OpBudget* budget, bool hasBackward,
                   std::function<TestCase(const CaseParams&)> make,
                   std::function<Floors(const TestCase&, const Outcome&)> floorRule) {
  op.uses = {op.name};
  op.family = family;
  op.fills = std::move(fills);
  op.hardFlags = std::move(hard);
  op.budget = budget;
  op.hasBackward = hasBackward;
  op.makeCase = std::move(make);
  op.floors = std::move(floorRule);
  return op;
}

}  // namespace

// One entry per operation. The fills are listed in the order the first cases use them (each of
// the first 2 * |fills| cases takes the next one), so a kernel's classic mistake shows within
// the first few cases: the ~88 and -1e7 logits for an unshifted exp, the large offset for a
// one-pass variance, ties and NaN for topKMask's order, zero variance for a missing epsilon.
const std::vector<OpInfo>& opRegistry() {
  static const std::vector<OpInfo> ops = [] {
    std::vector<OpInfo> v = {
      withTesting(spec("softmaxLast", "softmax", {"x"}, {"s"}, {}, callSoftmax), ShapeFamily::RowsLast,
                  {F::NearExpOverflow, F::Normal, F::VeryNegative, F::MeanShifted, F::NonFinite,
                   F::IntegerTies, F::AllEqual},
                  kRowFlags, &budgets::kSoftmaxLast, true, cases::softmaxLast,
                  floors::softmaxLast),
      withTesting(spec("logSoftmaxLast", "log_softmax", {"x"}, {"s"}, {}, callLogSoftmax),
                  ShapeFamily::RowsLast,
                  {F::NearExpOverflow, F::Normal, F::VeryNegative, F::MeanShifted, F::NonFinite,
                   F::IntegerTies, F::AllEqual},
                  kRowFlags, &budgets::kLogSoftmaxLast, true, cases::logSoftmaxLast,
                  floors::logSoftmaxLast),
      withTesting(spec("topKMask", "topk_mask", {"x"}, {"s", "k"}, {}, callTopK), ShapeFamily::RowsLast,
                  {F::IntegerTies, F::NonFinite, F::Normal, F::AllEqual, F::VeryNegative,
                   F::MeanShifted},
                  {"IntegerTies", "AllEqual", "NonFinite", "KZero", "KAboveCols", "WarpEdge",
                   "LongRow"},
                  &budgets::kTopKMask, false, cases::topKMask, floors::topKMask),
      withTesting(spec("layerNorm", "layer_norm", {"x", "gamma", "beta"}, {"seqLen", "embedDim"},
                   {"epsilon"}, callLayerNorm),
                  ShapeFamily::SeqEmbed,
                  {F::MeanShifted, F::Normal, F::EpsDominated, F::AllEqual, F::IntegerTies,
                   F::NonFinite},
                  {"MeanShifted", "ZeroVariance", "EpsDominated", "NonFinite", "LongRow",
                   "WarpEdge"},
                  &budgets::kLayerNorm, true, cases::layerNorm, floors::layerNorm),
      withTesting(spec("batchNorm", "batch_norm", {"x", "gamma", "beta"}, {"channels", "spatial"},
                   {"epsilon"}, callBatchNorm),
                  ShapeFamily::ChannelsSpatial,
                  {F::MeanShifted, F::Normal, F::ConstantChannels, F::EpsDominated,
                   F::IntegerTies},
                  {"MeanShifted", "ConstantChannel", "EpsDominated", "ScalarSpatial",
                   "LongRow"},
                  &budgets::kBatchNorm, true, cases::batchNorm, floors::batchNorm),
      withTesting(spec("crossEntropy", "cross_entropy", {"logits", "target"}, {"s", "axis"}, {"mean"},
                   callCrossEntropy),
                  ShapeFamily::AxisSlices,
                  {F::NearExpOverflow, F::Normal, F::VeryNegative, F::MeanShifted,
                   F::IntegerTies, F::NonFinite, F::AllEqual},
                  {"NearExpOverflow", "VeryNegative", "UnnormalizedTarget", "StridedAxis",
                   "NonFinite", "Empty"},
                  &budgets::kCrossEntropy, true, cases::crossEntropy, floors::crossEntropy),
      withTesting(spec("distill", "distill", {"student", "teacher"}, {"s", "axis"}, {}, callDistill),
                  ShapeFamily::AxisSlices,
                  {F::NearExpOverflow, F::Normal, F::VeryNegative, F::MeanShifted,
                   F::IntegerTies, F::AllEqual},
                  {"NearExpOverflow", "VeryNegative", "StridedAxis", "TeacherRequiresGrad",
                   "Empty"},
                  &budgets::kDistill, true, cases::distill, floors::distill),
    };
    v.back().constantArgs = {"teacher"};  // the teacher is a constant (SPEC.md)
    return v;
  }();
  return ops;
}

// Chained programs: an op feeding another op and a loss, built on AnyTape, so gradients flow
// through several pullbacks and add up where a node feeds two consumers.
const std::vector<OpInfo>& programRegistry() {
  auto program = [](std::string name, std::vector<std::string> uses, ShapeFamily family,
                    std::vector<Fill> fills,
                    std::function<Result<NodeId>(AnyTape&, const TestCase&)> call,
                    std::function<TestCase(const CaseParams&)> make) {
    OpInfo op;
    op.name = std::move(name);
    op.nodeName = uses.back();
    op.call = std::move(call);
    op.uses = std::move(uses);
    op.program = true;
    op.family = family;
    op.fills = std::move(fills);
    op.hardFlags = {"GradientAccumulation"};
    op.budget = &budgets::kProgram;
    op.hasBackward = true;
    op.makeCase = std::move(make);
    op.floors = floors::normwise;
    return op;
  };
  static const std::vector<OpInfo> programs = [&] {
    std::vector<OpInfo> v = {
      program("softmaxLast-crossEntropy", {"softmaxLast", "crossEntropy"},
              ShapeFamily::AxisSlices,
              {F::Normal, F::NearExpOverflow, F::IntegerTies},
              programs::softmaxCrossEntropy, cases::softmaxCrossEntropy),
      program("layerNorm-logSoftmaxLast-distill", {"layerNorm", "logSoftmaxLast", "distill"},
              ShapeFamily::SeqEmbed, {F::Normal, F::IntegerTies, F::EpsDominated},
              programs::layerNormLogSoftmaxDistill, cases::layerNormLogSoftmaxDistill),
      program("batchNorm-softmaxLast-crossEntropy", {"batchNorm", "softmaxLast", "crossEntropy"},
              ShapeFamily::ChannelsSpatial, {F::Normal},
              programs::batchNormSoftmaxCrossEntropy, cases::batchNormSoftmaxCrossEntropy),
    };
    v[1].constantArgs = {"teacher"};  // distill's teacher is a constant (SPEC.md)
    // Their arguments, as their cases give them (a written case file names the same ones).
    v[0].tensorArgs = {"x"};
    v[0].attrNames = {"s", "axis"};
    v[0].optionalAttrNames = {"mean"};
    v[1].tensorArgs = {"x", "gamma", "beta", "teacher"};
    v[1].attrNames = {"seqLen", "embedDim"};
    v[1].optionalAttrNames = {"epsilon"};
    v[2].tensorArgs = {"x", "gamma", "beta"};
    v[2].attrNames = {"channels", "spatial"};
    v[2].optionalAttrNames = {"epsilon", "mean"};
    return v;
  }();
  return programs;
}

const OpInfo* findOp(std::string_view name) {
  for (const OpInfo& op : opRegistry())
    if (op.name == name) return &op;
  return nullptr;
}

const OpInfo* findSubject(std::string_view name) {
  if (const OpInfo* op = findOp(name)) return op;
  for (const OpInfo& p : programRegistry())
    if (p.name == name) return &p;
  return nullptr;
}

const OpBudget* findBudget(std::string_view op) {
  const OpInfo* info = findSubject(op);
  return info ? info->budget : nullptr;
}

TestCase buildCase(const OpInfo& op, const CaseParams& p) {
  TestCase c = op.makeCase(p);
  cases::applyInvalid(p, op.family, op.hasBackward, c);
  return c;
}

Outcome evaluate(AnyTape& tape, const TestCase& c) {
  Outcome out;
  const OpInfo* op = findSubject(c.op);
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

namespace {

// Row (slice) lengths by the kernel path they exercise: warp and block edges, the long-row path.
std::string lengthClass(Dim n) {
  auto near = [n](std::initializer_list<Dim> centres) {
    for (Dim c : centres)
      if (n + 1 >= c && n <= c + 1) return true;
    return false;
  };
  if (n == 1) return "1";
  if (n <= 30) return "short";
  if (near({32, 64})) return "warp";
  if (near({128, 256, 512, 1024})) return "block";
  if (near({2048, 4096, 8192, 16384, 32768, 65536})) return "long-edge";
  if (n < 1026) return "mid";
  return "long";
}

}  // namespace

double reductionLength(const OpInfo& op, const TestCase& c, bool backward) {
  auto size = [](const Shape& s) { return static_cast<double>(sizeOf(s)); };
  if (op.program) return c.leaves.empty() ? 1.0 : size(c.leaves[0].value.shape);
  switch (op.family) {
    case ShapeFamily::RowsLast:
      return c.attrs.s && !c.attrs.s->empty() ? static_cast<double>(c.attrs.s->back()) : 1.0;
    case ShapeFamily::SeqEmbed:
      return static_cast<double>(std::max(c.attrs.seqLen.value_or(1), c.attrs.embedDim.value_or(1)));
    case ShapeFamily::ChannelsSpatial:
      return c.attrs.spatial ? size(*c.attrs.spatial) : 1.0;
    case ShapeFamily::AxisSlices:
      if (!c.attrs.s) return 1.0;
      if (backward && c.attrs.axis && *c.attrs.axis < c.attrs.s->size())
        return static_cast<double>((*c.attrs.s)[*c.attrs.axis]);
      return size(*c.attrs.s);
  }
  return 1.0;
}

std::string shapeClass(const OpInfo& op, const CaseParams& p) {
  if (p.invalid != Invalid::None) return std::string("invalid-") + invalidName(p.invalid);
  const Shape& s = p.shape;
  switch (op.family) {
    case ShapeFamily::RowsLast:
    case ShapeFamily::SeqEmbed: {
      if (s.empty()) return "scalar";
      if (sizeOf(s) == 0) return "empty";
      const Dim cols = s.back(), rows = sizeOf(s) / cols;
      if (rows >= 1024 && cols <= 30) return "rows-many";
      return (op.family == ShapeFamily::SeqEmbed ? "embed-" : "cols-") + lengthClass(cols);
    }
    case ShapeFamily::ChannelsSpatial: {
      if (s.size() == 1) return "spatial-scalar";
      const Dim spatial = productOf(s.begin() + 1, s.end());
      if (s.at(0) >= 1024 && spatial <= 30) return "channels-many";
      return "spatial-" + lengthClass(spatial);
    }
    case ShapeFamily::AxisSlices: {
      if (sizeOf(s) == 0) return "empty";
      if (p.axis >= s.size()) return "invalid-axis";
      const Dim inner = productOf(s.begin() + static_cast<std::ptrdiff_t>(p.axis) + 1, s.end());
      return (inner == 1 ? "last-" : "strided-") + lengthClass(s[p.axis]);
    }
  }
  return "other";
}

}  // namespace tapecheck::conformance
