#include "tapecheck/conformance/generators.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace tapecheck::conformance {
namespace {

template <class T>
using Options = std::vector<std::pair<std::size_t, T>>;

// One of `options`, by weight; shrinks toward the first option. (rc::gen::weightedElement does
// not shrink at all.)
template <class T>
rc::Gen<T> weightedChoice(Options<T> options) {
  return rc::Gen<T>([options](const rc::Random& random, int) {
    std::size_t total = 0;
    for (const auto& o : options) total += o.first;
    std::size_t pick = static_cast<std::size_t>(rc::Random(random).next() % total), index = 0;
    while (pick >= options[index].first) pick -= options[index++].first;
    return rc::shrinkable::map(
        rc::shrinkable::shrinkRecur(
            index, [](std::size_t i) { return rc::shrink::towards<std::size_t>(i, 0); }),
        [options](std::size_t i) { return options[i].second; });
  });
}

template <class T>
rc::Gen<T> choiceOf(const std::vector<T>& values) {
  Options<T> options;
  for (const T& v : values) options.emplace_back(1, v);
  return weightedChoice(std::move(options));
}

// One of several generators by weight (empty lists are left out); shrinks within the chosen one.
template <class T>
rc::Gen<T> weightedOneOf(std::vector<std::pair<std::size_t, rc::Gen<T>>> gens) {
  return rc::Gen<T>([gens](const rc::Random& random, int size) {
    std::size_t total = 0;
    for (const auto& g : gens) total += g.first;
    rc::Random r(random);
    std::size_t pick = static_cast<std::size_t>(r.split().next() % total), index = 0;
    while (pick >= gens[index].first) pick -= gens[index++].first;
    return gens[index].second(r, size);
  });
}

std::vector<Dim> upTo(std::initializer_list<Dim> values, Dim limit) {
  std::vector<Dim> out;
  for (Dim v : values)
    if (v <= limit) out.push_back(v);
  return out;
}

// Row (slice) lengths: small ones, warp/block edges, primes, and anything up to the limit.
rc::Gen<Dim> genRowLength(std::uint64_t cap, std::uint64_t maxRow) {
  const Dim limit = std::max<Dim>(1, std::min<Dim>(cap, maxRow));
  std::vector<std::pair<std::size_t, rc::Gen<Dim>>> gens;
  gens.emplace_back(4, choiceOf(upTo({1, 2, 3, 4, 5, 7, 8, 16}, limit)));
  const auto edges = upTo({31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 512, 513,
                           1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097, 8191, 8192,
                           8193, 16383, 16384, 16385, 32767, 32768, 32769, 65535, 65536, 65537},
                          limit);
  if (!edges.empty()) gens.emplace_back(4, choiceOf(edges));
  const auto primes = upTo({11, 13, 17, 61, 67, 97, 251, 509, 1021, 2039, 4093, 16381, 65521},
                           limit);
  if (!primes.empty()) gens.emplace_back(2, choiceOf(primes));
  gens.emplace_back(1, rc::gen::inRange<Dim>(1, limit + 1));
  return weightedOneOf(std::move(gens));
}

// Leading (batch-like) dims: mostly 1..5, sometimes an edge (many short rows), rarely 0.
rc::Gen<Dim> genLeadDim(std::uint64_t cap, bool allowZero) {
  std::vector<std::pair<std::size_t, rc::Gen<Dim>>> gens;
  gens.emplace_back(8, rc::gen::inRange<Dim>(1, 6));
  gens.emplace_back(2, choiceOf(upTo({1, 2, 3, 7, 31, 32, 33, 127, 128, 129, 1023, 1024, 1025,
                                      4097},
                                     std::max<Dim>(1, cap))));
  if (allowZero) gens.emplace_back(1, rc::gen::just<Dim>(0));
  return weightedOneOf(std::move(gens));
}

// Halves the largest dim other than `keep` until the shape fits the cap.
Shape clampShape(Shape s, std::size_t keep, std::uint64_t cap) {
  while (sizeOf(s) > cap) {
    std::size_t largest = s.size();
    for (std::size_t i = 0; i < s.size(); ++i)
      if (i != keep && s[i] > 1 && (largest == s.size() || s[i] > s[largest])) largest = i;
    if (largest == s.size()) {
      if (keep < s.size()) s[keep] = std::max<Dim>(1, cap);
      break;
    }
    s[largest] /= 2;
  }
  return s;
}

struct ShapeDraw {
  Shape shape;
  std::uint64_t axis = 0;
};

// lead dims then the row at position `rowAt` (rank = lead + 1).
Shape assemble(std::vector<Dim> lead, Dim row, std::size_t rowAt) {
  lead.insert(lead.begin() + static_cast<std::ptrdiff_t>(rowAt), row);
  return lead;
}

rc::Gen<ShapeDraw> genShapeDraw(ShapeFamily family, std::uint64_t cap, std::uint64_t maxRow) {
  const auto row = genRowLength(cap, maxRow);
  switch (family) {
    case ShapeFamily::RowsLast:
      return rc::gen::mapcat(
          weightedChoice<std::size_t>({{8, 1}, {10, 2}, {4, 3}, {2, 4}, {1, 0}}),
          [=](std::size_t rank) -> rc::Gen<ShapeDraw> {
            if (rank == 0) return rc::gen::just(ShapeDraw{});
            return rc::gen::map(
                rc::gen::tuple(rc::gen::container<std::vector<Dim>>(rank - 1, genLeadDim(cap, true)),
                               row),
                [=](const std::tuple<std::vector<Dim>, Dim>& t) {
                  return ShapeDraw{clampShape(assemble(std::get<0>(t), std::get<1>(t), rank - 1),
                                              rank - 1, cap),
                                   0};
                });
          });
    case ShapeFamily::SeqEmbed:
      return rc::gen::map(rc::gen::tuple(genLeadDim(cap, false), row),
                          [=](const std::tuple<Dim, Dim>& t) {
                            return ShapeDraw{
                                clampShape({std::get<0>(t), std::get<1>(t)}, 1, cap), 0};
                          });
    case ShapeFamily::ChannelsSpatial:
      return rc::gen::mapcat(
          weightedChoice<std::size_t>({{4, 1}, {2, 0}, {2, 2}, {1, 3}}),
          [=](std::size_t spatialRank) -> rc::Gen<ShapeDraw> {
            const auto channels = genLeadDim(cap, false);
            if (spatialRank == 0)
              return rc::gen::map(channels, [](Dim c) { return ShapeDraw{{c}, 0}; });
            return rc::gen::map(
                rc::gen::tuple(channels,
                               rc::gen::container<std::vector<Dim>>(spatialRank - 1,
                                                                    genLeadDim(cap, false)),
                               row),
                [=](const std::tuple<Dim, std::vector<Dim>, Dim>& t) {
                  std::vector<Dim> lead = std::get<1>(t);
                  lead.insert(lead.begin(), std::get<0>(t));
                  return ShapeDraw{
                      clampShape(assemble(lead, std::get<2>(t), spatialRank), spatialRank, cap),
                      0};
                });
          });
    case ShapeFamily::AxisSlices:
      return rc::gen::mapcat(
          weightedChoice<std::size_t>({{3, 1}, {4, 2}, {2, 3}, {1, 4}}),
          [=](std::size_t rank) -> rc::Gen<ShapeDraw> {
            Options<std::size_t> axes{{3, rank - 1}};
            for (std::size_t a = 0; a + 1 < rank; ++a) axes.emplace_back(1, a);
            return rc::gen::mapcat(weightedChoice(axes), [=](std::size_t axis) {
              return rc::gen::map(
                  rc::gen::tuple(
                      rc::gen::container<std::vector<Dim>>(rank - 1, genLeadDim(cap, true)), row),
                  [=](const std::tuple<std::vector<Dim>, Dim>& t) {
                    return ShapeDraw{
                        clampShape(assemble(std::get<0>(t), std::get<1>(t), axis), axis, cap),
                        axis};
                  });
            });
          });
  }
  return rc::gen::just(ShapeDraw{});
}

// A launch-size edge: `edge` rows of one or two elements, or one or two rows of `edge` elements
// (up to longRowEdge), in the layout of the family. AxisSlices: `edge` slices of one or two
// elements, side by side (outer = edge, along axis 1) or interleaved (inner = edge, along
// axis 0); long slices are the other families' long rows and the regular draws'. Edges past
// 2^17 + 1 are drawn less often: their cases cost the most.
rc::Gen<ShapeDraw> genLaunchEdgeDraw(ShapeFamily family, const std::vector<Dim>& edges,
                                     Dim longRowEdge) {
  return rc::gen::mapcat(
      weightedChoice<bool>({{1, true}, {1, false}}), [=](bool manyRows) {
        Options<Dim> allowed;
        for (Dim e : edges)
          if (manyRows || family == ShapeFamily::AxisSlices || e <= longRowEdge)
            allowed.emplace_back(e > 131073 ? 1 : 3, e);
        return rc::gen::map(
            rc::gen::tuple(weightedChoice(allowed), choiceOf<Dim>({1, 2})),
            [=](const std::tuple<Dim, Dim>& t) {
              const auto [edge, narrow] = t;
              if (family == ShapeFamily::AxisSlices)
                return manyRows ? ShapeDraw{{edge, narrow}, 1} : ShapeDraw{{narrow, edge}, 0};
              return ShapeDraw{manyRows ? Shape{edge, narrow} : Shape{narrow, edge}, 0};
            });
      });
}

std::vector<Invalid> invalidKinds(const OpInfo& op) {
  std::vector<Invalid> kinds{Invalid::InvalidId, Invalid::ShapeMismatch};
  if (op.hasBackward) kinds.push_back(Invalid::SeedMismatch);
  if (op.family == ShapeFamily::AxisSlices) kinds.push_back(Invalid::AxisOutOfBounds);
  if (op.family == ShapeFamily::SeqEmbed || op.family == ShapeFamily::ChannelsSpatial)
    kinds.push_back(Invalid::BadDims);
  return kinds;
}

std::uint64_t nameHash(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

}  // namespace

GenConfig GenConfig::forDevice(device::DeviceKind d) {
  GenConfig c;
  if (d == device::DeviceKind::Cuda) {
    c.maxElements = 1u << 22;
    c.maxRow = 65537;
  }
  return c;
}

bool GenConfig::isLaunchEdgeCase(const OpInfo& op, std::uint64_t index) const {
  return !op.program && !launchEdges.empty() && launchEdgePeriod > 0 &&
         index % launchEdgePeriod == launchEdgeOffset;
}

std::uint64_t elementCap(const GenConfig& config, std::uint64_t index) {
  const std::uint64_t steps = std::min<std::uint64_t>(index / 2, 40);
  return std::min<std::uint64_t>(config.maxElements, std::uint64_t{64} << steps);
}

rc::Gen<Shape> genShape(ShapeFamily family, std::uint64_t cap, std::uint64_t maxRow) {
  return rc::gen::map(genShapeDraw(family, cap, maxRow), [](const ShapeDraw& d) { return d.shape; });
}

rc::Gen<CaseParams> genCaseParams(const OpInfo& op, const GenConfig& config, std::uint64_t index) {
  // Programs check how gradients flow and add up, not long rows: a smaller budget keeps them cheap.
  const std::uint64_t cap =
      op.program ? std::min<std::uint64_t>(elementCap(config, index), 1u << 13)
                 : elementCap(config, index);
  const std::uint64_t maxRow = op.program ? std::min<std::uint64_t>(config.maxRow, 4097)
                                          : config.maxRow;
  const std::size_t nFills = op.fills.size();
  const rc::Gen<Fill> fill = nFills == 0 ? rc::gen::just(Fill::Normal)
                             : index < 2 * nFills
                                 ? rc::gen::just(op.fills[index % nFills])
                                 : choiceOf(op.fills);
  const rc::Gen<Invalid> invalid = (!op.program && index % 16 == 15)
                                       ? choiceOf(invalidKinds(op))
                                       : rc::gen::just(Invalid::None);
  const rc::Gen<std::uint32_t> noGrad =
      op.program ? rc::gen::just<std::uint32_t>(0)
                 : weightedChoice<std::uint32_t>({{12, 0}, {1, 1}, {1, 2}, {1, 4}});
  const rc::Gen<std::uint64_t> seed = rc::Gen<std::uint64_t>(
      [](const rc::Random& random, int) { return rc::shrinkable::just(rc::Random(random).next()); });
  const rc::Gen<ShapeDraw> shape = config.isLaunchEdgeCase(op, index)
                                       ? genLaunchEdgeDraw(op.family, config.launchEdges,
                                                           config.launchEdgeLongRow)
                                       : genShapeDraw(op.family, cap, maxRow);
  return rc::gen::map(
      rc::gen::tuple(shape, fill,
                     weightedChoice<KChoice>({{2, KChoice::One},
                                              {3, KChoice::Small},
                                              {3, KChoice::Half},
                                              {1, KChoice::AllCols},
                                              {1, KChoice::Zero},
                                              {1, KChoice::MoreThanCols}}),
                     choiceOf<TargetFill>({TargetFill::Weights, TargetFill::OneHot,
                                           TargetFill::Sparse, TargetFill::Distribution}),
                     weightedChoice<double>({{6, kNormalizationEpsilon}, {1, 1e-3}, {1, 0.1}}),
                     weightedChoice<bool>({{3, true}, {1, false}}), noGrad, invalid, seed),
      [](const std::tuple<ShapeDraw, Fill, KChoice, TargetFill, double, bool, std::uint32_t,
                          Invalid, std::uint64_t>& t) {
        CaseParams p;
        p.shape = std::get<0>(t).shape;
        p.axis = std::get<0>(t).axis;
        p.fill = std::get<1>(t);
        p.k = std::get<2>(t);
        p.target = std::get<3>(t);
        p.epsilon = std::get<4>(t);
        p.mean = std::get<5>(t);
        p.noGrad = std::get<6>(t);
        p.invalid = std::get<7>(t);
        p.valueSeed = std::get<8>(t);
        return p;
      });
}

rc::Shrinkable<CaseParams> drawCase(const OpInfo& op, const GenConfig& config, std::uint64_t seed,
                                    std::uint64_t index) {
  const rc::Random random(rc::Random::Key{seed, nameHash(op.name), index, 0x74617065636b21ull});
  return genCaseParams(op, config, index)(random, rc::kNominalSize);
}

}  // namespace tapecheck::conformance

namespace rc {

Gen<tapecheck::conformance::BudgetedShape>
Arbitrary<tapecheck::conformance::BudgetedShape>::arbitrary() {
  using namespace tapecheck::conformance;
  return gen::mapcat(
      gen::element(ShapeFamily::RowsLast, ShapeFamily::SeqEmbed, ShapeFamily::ChannelsSpatial,
                   ShapeFamily::AxisSlices),
      [](ShapeFamily family) {
        const GenConfig config;
        return gen::map(genShape(family, config.maxElements, config.maxRow),
                        [family](const tapecheck::Shape& s) { return BudgetedShape{family, s}; });
      });
}

}  // namespace rc
