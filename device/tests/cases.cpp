// The op cases every kernel table is checked on: ordinary data plus docs/spec.md's edge cases.
#include <set>
#include <stdexcept>

#include "support.h"

namespace tapecheck::device::testing {

namespace {

constexpr double kEps = 1e-5;

// Random upstream gradients with the shape of the value.
TensorData upstreamFor(Data& d, const Shape& s) { return d.uniform(s, -1.0, 1.0); }

TensorData constant(const Shape& s, double v) { return tensor(s, std::vector<double>(sizeOf(s), v)); }

}  // namespace

std::vector<NamedCase> softmaxFamilyCases(const std::string& op) {
  Data d(op == "softmaxLast" ? 11 : 12);
  std::vector<NamedCase> out;
  auto add = [&](const std::string& name, TensorData x, bool withUpstream = true) {
    std::optional<TensorData> up;
    if (withUpstream) up = upstreamFor(d, x.shape);
    out.push_back({op + ": " + name, rowOpCase(op, std::move(x), std::move(up))});
  };
  add("random [2,5]", d.uniform({2, 5}, -3, 3));
  add("random rank 3 [3,4,7]", d.uniform({3, 4, 7}, -4, 4));
  add("rank 1 [6]", d.uniform({6}, -2, 2));
  add("wide rows [8,64]", d.normal({8, 64}, 0, 3));
  add("row of one [1]", tensor({1}, {3.5}));
  add("rows of one [4,1]", tensor({4, 1}, {-2, 0, 7, 1e30}));
  add("scalar []", tensor({}, {2.0}));
  add("empty [0]", tensor({0}, {}));
  add("empty [2,0]", tensor({2, 0}, {}));
  add("empty [0,3]", tensor({0, 3}, {}));
  add("empty [2,0,3]", tensor({2, 0, 3}, {}));
  add("constant rows [2,5]", constant({2, 5}, 0.75));
  // Row by row: NaN; +inf; only -inf; some -inf next to a finite maximum; +inf and -inf;
  // NaN and -inf; a finite row.
  add("non-finite rows [7,4]",
      tensor({7, 4}, {1, kNaN, 3, 4,            //
                      kInf, 1, 2, 3,            //
                      -kInf, -kInf, -kInf, -kInf,  //
                      1, -kInf, 2, -kInf,       //
                      kInf, -kInf, 0, 1,        //
                      -kInf, kNaN, -kInf, -kInf,  //
                      0.5, -1, 2, 0.25}));
  // exp overflows binary32 above ~88.7: only the max subtraction keeps these finite.
  add("large logits near 88 [3,5]", d.uniform({3, 5}, 80, 120));
  add("huge logits [2,4]", tensor({2, 4}, {1000, 1000.5, 999, 1000.25, -1000, -999.5, -1001, -1000}));
  add("tiny and subnormal logits [1,5]", tensor({1, 5}, {1e-40, -1e-40, 0.0, -0.0, 1e-38}));
  add("mixed scales [2,6]", tensor({2, 6}, {-30, 0, 1e-3, 5, 5, -5, 60, -60, 0, 1, 2, 3}));
  return out;
}

std::vector<NamedCase> topKCases() {
  Data d(13);
  std::vector<NamedCase> out;
  auto add = [&](const std::string& name, TensorData x, std::uint64_t k, bool withUp = false) {
    std::optional<TensorData> up;
    if (withUp) up = upstreamFor(d, x.shape);
    out.push_back({"topKMask: " + name + " k=" + std::to_string(k),
                   rowOpCase("topKMask", std::move(x), std::move(up), k)});
  };
  add("random [4,6]", d.uniform({4, 6}, -1, 1), 2, /*withUp=*/true);
  add("random [3,5]", d.uniform({3, 5}, -1, 1), 0);
  add("random [3,5]", d.uniform({3, 5}, -1, 1), 5);
  add("random [3,5]", d.uniform({3, 5}, -1, 1), 100);
  add("random rank 3 with ties [2,3,8]", d.integers({2, 3, 8}, 0, 3), 3, /*withUp=*/true);
  const TensorData ties = tensor({2, 6}, {1, 3, 3, 2, 3, 1,  //
                                          5, 5, 5, 5, 5, 5});
  for (std::uint64_t k : {1, 2, 3, 4}) add("ties [2,6]", ties, k);
  const TensorData nans = tensor({3, 6}, {kNaN, 1, -kInf, kNaN, 2, -kInf,  //
                                          kNaN, -kInf, kNaN, -kInf, kNaN, -kInf,  //
                                          kNaN, kNaN, kNaN, 0, kNaN, kNaN});
  for (std::uint64_t k : {1, 2, 3, 4, 5}) add("NaN below -inf [3,6]", nans, k);
  const TensorData zeros = tensor({1, 4}, {0.0, -0.0, 0.0, -0.0});
  for (std::uint64_t k : {1, 2, 3}) add("signed zeros tie [1,4]", zeros, k);
  add("infinities [1,5]", tensor({1, 5}, {kInf, 1, kInf, -kInf, 0}), 2);
  add("scalar", tensor({}, {4.0}), 0, /*withUp=*/true);
  add("scalar", tensor({}, {4.0}), 1, /*withUp=*/true);
  add("scalar NaN", tensor({}, {kNaN}), 1);
  add("row of one [3,1]", tensor({3, 1}, {2, kNaN, -kInf}), 1);
  add("empty [0,4]", tensor({0, 4}, {}), 2, /*withUp=*/true);
  add("empty [3,0]", tensor({3, 0}, {}), 2);
  return out;
}

std::vector<NamedCase> layerNormCases() {
  Data d(14);
  std::vector<NamedCase> out;
  auto add = [&](const std::string& name, TensorData x, double eps = kEps, bool gammaGrad = true) {
    const Dim cols = x.shape.at(1);
    TensorData gamma = d.uniform({cols}, 0.5, 2.0);
    TensorData beta = d.uniform({cols}, -1.0, 1.0);
    TensorData up = upstreamFor(d, x.shape);
    out.push_back({"layerNorm: " + name,
                   layerNormCase(std::move(x), std::move(gamma), std::move(beta), eps,
                                 std::move(up), gammaGrad)});
  };
  add("random [3,5]", d.normal({3, 5}, 0, 1));
  add("random [8,64]", d.normal({8, 64}, 0.5, 2));
  add("single element [1,1]", tensor({1, 1}, {3.0}));
  add("embedDim 1 [4,1]", d.normal({4, 1}, 0, 1));
  add("one row [1,8]", d.normal({1, 8}, 0, 1));
  add("constant rows [2,4]", constant({2, 4}, 3.0));
  add("mean-shifted rows (mean 1000) [3,16]", d.normal({3, 16}, 1000, 1));
  add("mean-shifted rows (mean 1e4, sd 0.1) [2,32]", d.normal({2, 32}, 1e4, 0.1));
  add("variance far below epsilon [2,6]", d.normal({2, 6}, 0, 1e-4));
  add("large epsilon", d.normal({2, 5}, 0, 1), 1.0);
  add("negative epsilon, still a real sqrt", d.normal({3, 6}, 0, 2), -1e-3);
  add("negative epsilon, NaN rows", tensor({2, 3}, {0, 1, 2, 0, 0.01, 0.02}), -0.5);
  add("NaN and inf in rows [3,4]", tensor({3, 4}, {1, kNaN, 2, 3, kInf, 1, 2, 3, 1, 2, 3, 4}));
  add("gamma without grad", d.normal({3, 4}, 0, 1), kEps, /*gammaGrad=*/false);
  return out;
}

std::vector<NamedCase> batchNormCases() {
  Data d(15);
  std::vector<NamedCase> out;
  auto add = [&](const std::string& name, std::uint64_t channels, Shape spatial, TensorData x,
                 double eps = kEps) {
    TensorData gamma = d.uniform({channels}, 0.5, 2.0);
    TensorData beta = d.uniform({channels}, -1.0, 1.0);
    TensorData up = upstreamFor(d, x.shape);
    out.push_back({"batchNorm: " + name,
                   batchNormCase(channels, std::move(spatial), std::move(x), std::move(gamma),
                                 std::move(beta), eps, std::move(up))});
  };
  add("spatial [] (S = 1)", 3, {}, d.normal({3}, 0, 1));
  add("spatial [4]", 2, {4}, d.normal({2, 4}, 0, 1));
  add("rank-3 spatial [2,3,4]", 2, {2, 3, 4}, d.normal({2, 2, 3, 4}, 1, 2));
  add("one channel [5]", 1, {5}, d.normal({1, 5}, 0, 1));
  add("many channels [16] x [8]", 16, {8}, d.normal({16, 8}, 0, 1));
  add("constant channel", 2, {3}, tensor({2, 3}, {2, 2, 2, -1, 0, 1}));
  add("mean-shifted channels (mean 1000)", 2, {16}, d.normal({2, 16}, 1000, 1));
  add("variance far below epsilon", 2, {6}, d.normal({2, 6}, 0, 1e-4));
  add("negative epsilon", 2, {4}, tensor({2, 4}, {0, 1, 2, 3, 0, 0.01, 0.02, 0.03}), -0.5);
  add("NaN in one channel", 2, {3}, tensor({2, 3}, {1, kNaN, 2, 0.5, 1, 1.5}));
  return out;
}

std::vector<NamedCase> crossEntropyCases() {
  Data d(16);
  std::vector<NamedCase> out;
  auto add = [&](const std::string& name, std::uint64_t axis, TensorData logits, TensorData target,
                 bool mean = true, std::optional<double> dloss = 0.7) {
    out.push_back({"crossEntropy: " + name,
                   crossEntropyCase(axis, std::move(logits), std::move(target), mean, dloss)});
  };
  auto oneHot = [](Dim rows, Dim cols, std::vector<Dim> hot) {
    std::vector<double> v(rows * cols, 0.0);
    for (Dim r = 0; r < rows; ++r) v[r * cols + hot[r]] = 1.0;
    return tensor({rows, cols}, v);
  };
  add("one-hot [3,5] axis 1", 1, d.uniform({3, 5}, -2, 2), oneHot(3, 5, {0, 4, 2}));
  add("soft targets not summing to 1 [3,5] axis 1 mean=false", 1, d.uniform({3, 5}, -2, 2),
      d.uniform({3, 5}, 0, 2), /*mean=*/false);
  add("soft targets [3,5] axis 0", 0, d.uniform({3, 5}, -2, 2), d.uniform({3, 5}, 0, 1));
  add("rank 3 [2,3,4] axis 0", 0, d.uniform({2, 3, 4}, -3, 3), d.uniform({2, 3, 4}, 0, 1));
  add("rank 3 [2,3,4] axis 1", 1, d.uniform({2, 3, 4}, -3, 3), d.uniform({2, 3, 4}, 0, 1));
  add("rank 3 [2,3,4] axis 2 mean=false", 2, d.uniform({2, 3, 4}, -3, 3),
      d.uniform({2, 3, 4}, 0, 1), /*mean=*/false);
  add("rank 1 [5] axis 0", 0, d.uniform({5}, -1, 1), d.uniform({5}, 0, 1));
  add("n = 1 [4,1] axis 1", 1, d.uniform({4, 1}, -1, 1), d.uniform({4, 1}, 0, 1));
  add("zero targets", 1, d.uniform({2, 3}, -1, 1), constant({2, 3}, 0.0));
  add("large logits [2,4]", 1, tensor({2, 4}, {1000, 1000.5, 999, 1000.25, 90, 95, 100, 85}),
      d.uniform({2, 4}, 0, 1));
  // A zero weight on a -inf log-probability: 0 * -inf = NaN, literally.
  add("zero weight on -inf logit gives NaN", 1, tensor({1, 3}, {0, -kInf, 1}),
      tensor({1, 3}, {0.5, 0, 0.5}));
  add("positive weight on -inf logit gives +inf", 1, tensor({1, 3}, {0, -kInf, 1}),
      tensor({1, 3}, {0.5, 0.25, 0.25}));
  add("NaN logit", 1, tensor({2, 2}, {kNaN, 1, 0, 1}), tensor({2, 2}, {1, 0, 0, 1}));
  add("empty [0,3] axis 1", 1, tensor({0, 3}, {}), tensor({0, 3}, {}));
  add("empty [2,0] axis 0", 0, tensor({2, 0}, {}), tensor({2, 0}, {}));
  add("forward only", 1, d.uniform({2, 3}, -1, 1), d.uniform({2, 3}, 0, 1), true, std::nullopt);
  return out;
}

std::vector<NamedCase> distillCases() {
  Data d(17);
  std::vector<NamedCase> out;
  auto add = [&](const std::string& name, std::uint64_t axis, TensorData student,
                 TensorData teacher, std::optional<double> dloss = -1.3) {
    out.push_back({"distill: " + name,
                   distillCase(axis, std::move(student), std::move(teacher), dloss)});
  };
  add("[3,5] axis 1", 1, d.uniform({3, 5}, -2, 2), d.uniform({3, 5}, -2, 2));
  add("[2,3,4] axis 0", 0, d.uniform({2, 3, 4}, -2, 2), d.uniform({2, 3, 4}, -2, 2));
  add("[2,3,4] axis 1", 1, d.uniform({2, 3, 4}, -2, 2), d.uniform({2, 3, 4}, -2, 2));
  add("[2,3,4] axis 2", 2, d.uniform({2, 3, 4}, -2, 2), d.uniform({2, 3, 4}, -2, 2));
  add("rank 1 [7] axis 0", 0, d.uniform({7}, -3, 3), d.uniform({7}, -3, 3));
  add("teacher with a -inf logit", 1, d.uniform({2, 3}, -1, 1),
      tensor({2, 3}, {0, -kInf, 1, 2, 2, -kInf}));
  add("teacher with a NaN row", 1, d.uniform({2, 3}, -1, 1), tensor({2, 3}, {0, kNaN, 1, 2, 2, 1}));
  add("large logits", 1, tensor({1, 4}, {500, 501, 499, 500.5}), tensor({1, 4}, {90, 95, 100, 85}));
  add("empty [0,4] axis 1", 1, tensor({0, 4}, {}), tensor({0, 4}, {}));
  return out;
}

std::vector<NamedCase> casesFor(const std::string& op) {
  if (op == "softmaxLast" || op == "logSoftmaxLast") return softmaxFamilyCases(op);
  if (op == "topKMask") return topKCases();
  if (op == "layerNorm") return layerNormCases();
  if (op == "batchNorm") return batchNormCases();
  if (op == "crossEntropy") return crossEntropyCases();
  if (op == "distill") return distillCases();
  throw std::invalid_argument("no cases for op " + op);
}

std::vector<NamedCase> allCases() {
  std::vector<NamedCase> all;
  std::set<std::string> names;
  for (const auto& op : conformance::opRegistry())
    for (NamedCase& nc : casesFor(op.name)) {
      if (!names.insert(nc.name).second) throw std::logic_error("duplicate case name " + nc.name);
      all.push_back(std::move(nc));
    }
  return all;
}

}  // namespace tapecheck::device::testing
