// batchNorm over the S spatial values of each channel of x [channels :: spatial]: how it is
// called, how its generated cases are built, the floors and budget its outputs are judged by,
// and its golden-vector files.
#include "call_support.h"
#include "case_support.h"
#include "corpus_support.h"
#include "floor_support.h"
#include "ops.h"

namespace tapecheck::conformance::ops {
namespace {

Result<NodeId> call(AnyTape& t, const TestCase& c) {
  TAPECHECK_TRY(channels, need(c.attrs.channels, "channels"));
  TAPECHECK_TRY(spatial, need(c.attrs.spatial, "spatial"));
  TAPECHECK_TRY(x, argument(c, "x"));
  TAPECHECK_TRY(gamma, argument(c, "gamma"));
  TAPECHECK_TRY(beta, argument(c, "beta"));
  return t.batchNorm(channels, spatial, x, gamma, beta,
                     c.attrs.epsilon.value_or(kNormalizationEpsilon));
}

TestCase makeCase(const CaseParams& p) {
  TestCase c;
  c.op = "batchNorm";
  const Dim channels = p.shape.at(0);
  const Dim spatial = sizeOf(spatialOf(p.shape));
  normLeaves(c, p,
             {static_cast<std::uint32_t>(channels), static_cast<std::uint32_t>(spatial), 1},
             static_cast<std::size_t>(channels));
  c.attrs.channels = channels;
  c.attrs.spatial = spatialOf(p.shape);
  return c;
}

// The normalization rule (floor_support.h) over the channels, gamma and beta by channel.
Floors floorsOf(const TestCase& c, const Outcome& e) {
  const std::uint32_t channels = static_cast<std::uint32_t>(c.attrs.channels.value_or(0));
  const std::uint32_t spatial =
      static_cast<std::uint32_t>(c.attrs.spatial ? sizeOf(*c.attrs.spatial) : 0);
  return normalizationFloors(c, e, {channels, spatial, 1}, false);
}

constexpr OpBudget kBudget{
    {32, 1,
     "layerNorm's arithmetic on a channel's S values; floor |gamma_c| * max|x_c| * invStd_c + "
     "|beta_c| for the same reason as layerNorm (a channel on a large offset, or a constant "
     "channel whose xhat is rounding noise over sqrt(epsilon))"},
    {64, 2,
     "as layerNorm's backward, per channel: two cancelling reductions over S on the saved "
     "xhat/invStd; dgamma_c, dbeta_c are sums over S judged against sum |dy| * (1 + max|x| * "
     "invStd) and sum |dy|"}};

// The golden vectors: x = channels :: spatial (no batch axis), statistics over the S values of each
// channel. The failure classes: one value per channel (spatial = [], TF#34062, Flux PR #2716) and
// zero-variance channels, where var = 0 and xhat must be exactly 0; spatial shapes of every rank;
// mean-shifted channels; and the well-formedness check.

Shape xShape(std::uint64_t channels, const Shape& spatial) {
  Shape s{channels};
  s.insert(s.end(), spatial.begin(), spatial.end());
  return s;
}

// x [channels :: spatial], gamma and beta [channels], all requiring grad, with upstream.
CaseDef bn(const std::string& comment, std::vector<std::string> flags, std::uint64_t channels,
           Shape spatial, std::vector<double> x, std::vector<double> gamma,
           std::vector<double> beta, std::vector<double> dy) {
  CaseDef d(comment, std::move(flags));
  const Shape xs = xShape(channels, spatial);
  d.leaf(xs, std::move(x))
      .leaf({channels}, std::move(gamma))
      .leaf({channels}, std::move(beta))
      .arg("x", 0)
      .arg("gamma", 1)
      .arg("beta", 2)
      .channels(channels)
      .spatial(std::move(spatial));
  if (!dy.empty()) d.upstream(xs, std::move(dy));
  return d;
}

std::vector<CaseDef> edgeCases() {
  std::vector<CaseDef> c;
  c.push_back(bn("two channels of three values", {"Normal"}, 2, {3}, {1, 2, 4, -1, 0, 3},
                 {1, 2}, {0, -1}, {1, 0, -1, 0.5, 0.25, 2}));
  c.push_back(bn("one channel", {"Normal"}, 1, {4}, {0.5, 1.5, -2, 8}, {3}, {1},
                 {1, 2, 3, 4}));
  c.push_back(bn("spatial [2,3]: x is rank 3", {"SpatialRank"}, 2, {2, 3},
                 grid(12, 23, 0, 64, 0.125), {1, 0.5}, {0, 2}, grid(12, 24, 0, 8, 0.25)));
  c.push_back(bn("spatial [2,2,2]: x is rank 4", {"SpatialRank"}, 3, {2, 2, 2},
                 grid(24, 222, 0, 64, 0.125), {1, -1, 2}, {0, 0, 1}, grid(24, 223, 0, 8, 0.25)));
  c.push_back(bn("spatial [1,1]: one value per channel through a rank-3 x",
                 {"SpatialRank", "OneValuePerChannel"}, 3, {1, 1}, {1, -5, 9}, {1, 2, 3},
                 {0.5, 0, -1}, {1, 1, 1}));
  c.push_back(bn("spatial []: x is [channels], one value per channel, var 0, y = beta "
                 "(TF#34062, Flux PR #2716)",
                 {"SpatialScalar", "OneValuePerChannel"}, 4, {}, {3, -1, 0, 1e30f},
                 {2, 2, 2, 2}, {0.5, -0.5, 0, 1}, {1, 2, 3, 4}));
  c.push_back(bn("a constant channel beside a varying one", {"ZeroVariance"}, 2, {4},
                 {3, 3, 3, 3, 0, 1, 2, 3}, {1, 1}, {0, 0}, {1, -1, 2, -2, 1, 1, 1, 1}));
  c.push_back(bn("every channel constant (0.1f does not sum exactly in binary32)",
                 {"ZeroVariance"}, 3, {3}, {0.1f, 0.1f, 0.1f, -7, -7, -7, 0, 0, 0}, {1, 1, 1},
                 {0, 0.5, 1}, {1, 2, 3, 1, 2, 3, 1, 2, 3}));
  c.push_back(bn("channels with mean 1e4 and spread 0.5", {"MeanShifted"}, 2, {16},
                 grid(32, 34062, 10000, 32, 1.0 / 64), {1, 1}, {0, 0}, grid(32, 5, 0, 8, 0.25)));
  c.push_back(bn("a channel with mean -1000", {"MeanShifted"}, 1, {8},
                 grid(8, 9, -1000, 64, 1.0 / 64), {2}, {1}, grid(8, 10, 0, 8, 0.25)));
  c.push_back(bn("negative epsilon on a constant channel gives NaN there only",
                 {"NegativeEpsilon", "ZeroVariance"}, 2, {2}, {1, 1, 0, 4}, {1, 1}, {0, 0},
                 {1, 1, 1, 1})
                  .epsilon(-1e-5));
  c.push_back(bn("var + epsilon = -1: std = sqrt(max(-1, 0)) = 0, xhat = -inf, +inf; gamma's "
                 "gradient is -inf + inf = NaN",
                 {"NegativeEpsilon"}, 1, {2}, {1, 3}, {1}, {0}, {1, 1})
                  .epsilon(-2));
  c.push_back(bn("epsilon -(1 - 2^-30): var + epsilon = 2^-30, std = 2^-15; TorchLean's LibTorch "
                 "tape and kernel ABI v1 round epsilon to -1 and get std = 0 "
                 "(docs/spec.md#divergence-batch-norm-epsilon)",
                 {"TorchLeanTapeDiverges", "EpsilonNotBinary32", "NegativeEpsilon",
                  "EpsilonAbiUnsafe"},
                 1, {2}, {-1, 1}, {1}, {0}, {1, 1})
                  .epsilon(-0.999999999068677425384521484375));
  c.push_back(bn("epsilon 0 with one value per channel: 0/0 is NaN",
                 {"ZeroEpsilon", "OneValuePerChannel", "SpatialScalar"}, 2, {}, {1, 2}, {1, 1},
                 {0, 0}, {1, 1})
                  .epsilon(0));
  c.push_back(bn("epsilon 0.25, comparable to the variance", {"Normal"}, 2, {2},
                 {1, 2, 3, 3.5}, {1, 1}, {0, 0}, {1, 0, 0, 1})
                  .epsilon(0.25));
  c.push_back(bn("epsilon 1e-3 written as 0.001 is not binary32", {"EpsilonNotBinary32"}, 1,
                 {3}, {0, 0.001953125, 0.00390625}, {1}, {0}, {1, 2, 3})
                  .epsilon(1e-3));
  c.push_back(bn("NaN in one channel makes that channel NaN", {"NaN"}, 2, {2},
                 {kNaN, 1, 2, 3}, {1, 1}, {0, 0}, {1, 1, 1, 1}));
  c.push_back(bn("-inf in a channel makes it NaN", {"SomeNegInf"}, 2, {2}, {1, 2, -kInf, 3},
                 {1, 1}, {0, 0}, {1, 1, 1, 1}));
  c.push_back(bn("zero gamma: y = beta, dx = 0", {"Normal"}, 2, {3}, {1, 2, 3, 4, 5, 7},
                 {0, 0}, {1, 2}, {1, 1, 1, 1, 1, 1}));
  {
    CaseDef d = bn("only beta requires grad", {"NoGrad"}, 2, {2}, {1, 2, 3, 5}, {1, 2}, {0, 0},
                   {1, 2, 3, 4});
    d.tc.leaves[0].requiresGrad = false;
    d.tc.leaves[1].requiresGrad = false;
    c.push_back(d);
  }
  c.push_back(bn("forward only (no upstream)", {"Normal"}, 3, {2}, {1, 2, 3, 4, 5, 7},
                 {1, 2, 3}, {0, 0, 0}, {}));
  return c;
}

std::vector<CaseDef> widthCases() {
  std::vector<CaseDef> c;
  c.push_back(bn("S = 513", {"OddWidth"}, 2, {513}, grid(1026, 5130, 0, 1024, 1.0 / 128),
                 {1.5, -0.5}, {0.25, 1}, grid(1026, 5131, 0, 64, 1.0 / 64)));
  c.push_back(bn("S = 1025 as spatial [5, 205]", {"OddWidth", "SpatialRank"}, 2, {5, 205},
                 grid(2050, 10250, 0, 1024, 1.0 / 128), {1, 2}, {0, -1},
                 grid(2050, 10251, 0, 64, 1.0 / 64)));
  c.push_back(bn("S = 1027 with mean 1e3 and a zero-variance channel",
                 {"OddWidth", "MeanShifted", "ZeroVariance"}, 2, {1027},
                 concat(grid(1027, 10270, 1000, 256, 1.0 / 256), filled(1027, 2.5)), {1, 1},
                 {0, 0}, grid(2054, 10271, 0, 16, 0.125)));
  return c;
}

std::vector<CaseDef> errorCases() {
  using namespace errors;
  std::vector<CaseDef> c;
  const std::vector<double> x6 = ramp(6, 1, 1), g2 = {1, 1}, b2 = {0, 0};
  c.push_back(bn("channels 0", {"IllFormed"}, 0, {3}, {}, {}, {}, {}).invalid(kBatchNormShape));
  c.push_back(bn("spatial [0]", {"IllFormed"}, 2, {0}, {}, g2, b2, {}).invalid(kBatchNormShape));
  c.push_back(bn("spatial [3,0]: a zero anywhere is ill-formed", {"IllFormed", "SpatialRank"},
                 2, {3, 0}, {}, g2, b2, {})
                  .invalid(kBatchNormShape));
  c.push_back(CaseDef("channels 0 with invalid ids: the shape check comes first",
                      {"IllFormed", "ErrorOrder"})
                  .arg("x", 3)
                  .arg("gamma", 4)
                  .arg("beta", 5)
                  .channels(0)
                  .spatial({})
                  .invalid(kBatchNormShape));
  c.push_back(CaseDef("channels 65536 and S 65537 each fit UInt32: x is looked up first and is "
                      "invalid",
                      {"TooLarge", "ErrorOrder"})
                  .arg("x", 0)
                  .arg("gamma", 1)
                  .arg("beta", 2)
                  .channels(65536)
                  .spatial({65537})
                  .invalid(kInvalidNodeId));
  c.push_back(CaseDef("spatial [65536, 65536]: S = 2^32 is too large before the lookups",
                      {"TooLarge", "ErrorOrder", "SpatialRank"})
                  .arg("x", 0)
                  .arg("gamma", 1)
                  .arg("beta", 2)
                  .channels(1)
                  .spatial({65536, 65536})
                  .invalid(kTooLarge));
  c.push_back(bn("x is invalid", {"InvalidId"}, 2, {3}, x6, g2, b2, {}).arg("x", 3)
                  .invalid(kInvalidNodeId));
  c.push_back(bn("gamma is invalid", {"InvalidId"}, 2, {3}, x6, g2, b2, {}).arg("gamma", 3)
                  .invalid(kInvalidNodeId));
  c.push_back(bn("beta is invalid", {"InvalidId"}, 2, {3}, x6, g2, b2, {}).arg("beta", 30)
                  .invalid(kInvalidNodeId));
  c.push_back(CaseDef("x is [3,2] for channels 2, spatial [3]", {"ShapeMismatch"})
                  .leaf({3, 2}, x6)
                  .leaf({2}, g2)
                  .leaf({2}, b2)
                  .arg("x", 0)
                  .arg("gamma", 1)
                  .arg("beta", 2)
                  .channels(2)
                  .spatial({3})
                  .invalid(kShapeMismatch));
  c.push_back(CaseDef("x is [2,3] for spatial [3,1]: same size, other rank", {"ShapeMismatch"})
                  .leaf({2, 3}, x6)
                  .leaf({2}, g2)
                  .leaf({2}, b2)
                  .arg("x", 0)
                  .arg("gamma", 1)
                  .arg("beta", 2)
                  .channels(2)
                  .spatial({3, 1})
                  .invalid(kShapeMismatch));
  c.push_back(CaseDef("gamma is [3] for 2 channels", {"ShapeMismatch"})
                  .leaf({2, 3}, x6)
                  .leaf({3}, {1, 1, 1})
                  .leaf({2}, b2)
                  .arg("x", 0)
                  .arg("gamma", 1)
                  .arg("beta", 2)
                  .channels(2)
                  .spatial({3})
                  .invalid(kShapeMismatch));
  c.push_back(CaseDef("beta is [] for 1 channel", {"ShapeMismatch", "Scalar"})
                  .leaf({1, 3}, {1, 2, 3})
                  .leaf({1}, {1})
                  .leaf({}, {0})
                  .arg("x", 0)
                  .arg("gamma", 1)
                  .arg("beta", 2)
                  .channels(1)
                  .spatial({3})
                  .invalid(kShapeMismatch));
  c.push_back(bn("backward seed [3,2] for a [2,3] output", {"SeedMismatch"}, 2, {3}, x6, g2, b2,
                 {})
                  .upstream({3, 2}, filled(6, 1))
                  .invalid(kSeedMismatch));
  return c;
}

std::vector<CorpusFile> goldenFiles() {
  std::vector<CorpusFile> files;
  files.push_back(CorpusFile{
      "batchNorm",
      "edge-cases",
      {"batchNorm (docs/spec.md#operations): x [channels :: spatial], training-mode statistics over "
       "the S = size(spatial) values of each channel, no batch axis, no running statistics.",
       "Expected values: the multi-precision reference tape rounded to binary64."},
      edgeCases(),
      {"docs/spec.md#batch-norm", "docs/spec.md#clamped-sqrt", "docs/spec.md#lean-max",
       "docs/spec.md#epsilon-binary32", "docs/spec.md#epsilon-abi-safe",
       "docs/spec.md#divergence-batch-norm-epsilon", "docs/spec.md#pullbacks",
       "docs/spec.md#requires-grad"}});
  files.push_back(CorpusFile{
      "batchNorm",
      "widths",
      {"batchNorm with S just past GPU block sizes (512, 1024).",
       "Expected values: the multi-precision reference tape rounded to binary64."},
      widthCases(),
      {"docs/spec.md#batch-norm", "docs/spec.md#pullbacks"}});
  files.push_back(CorpusFile{
      "batchNorm",
      "errors",
      {"batchNorm: well-formedness of channels :: spatial, channels and S each against UInt32, "
       "then lookups in the order x, gamma, beta, the element count checked at x's; backward's "
       "seed shape check.",
       "Expected errors are written in the case definitions from docs/spec.md; generation fails if "
       "the reference disagrees."},
      errorCases(),
      {"docs/spec.md#batch-norm-validation", "docs/spec.md#well-formed", "docs/spec.md#lookup",
       "docs/spec.md#uint32", "docs/spec.md#error-strings",
       "docs/spec.md#errors-leave-tape-unchanged", "docs/spec.md#backward"}});
  return files;
}

}  // namespace

OpInfo batchNorm() {
  OpInfo op;
  op.name = "batchNorm";
  op.nodeName = "batch_norm";
  op.tensorArgs = {"x", "gamma", "beta"};
  op.attrNames = {"channels", "spatial"};
  op.optionalAttrNames = {"epsilon"};
  op.call = call;
  op.uses = {op.name};
  op.family = ShapeFamily::ChannelsSpatial;
  op.fills = {Fill::MeanShifted, Fill::Normal, Fill::ConstantChannels, Fill::EpsDominated,
              Fill::IntegerTies};
  op.hardFlags = {"MeanShifted", "ConstantChannel", "EpsDominated", "ScalarSpatial", "LongRow"};
  op.budget = &kBudget;
  op.hasBackward = true;
  op.makeCase = makeCase;
  op.floors = floorsOf;
  op.corpus = goldenFiles;
  return op;
}

}  // namespace tapecheck::conformance::ops
