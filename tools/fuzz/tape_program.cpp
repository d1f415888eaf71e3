#include "tape_program.h"

#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>

#include "tapecheck/conformance/op_registry.h"

namespace tapecheck::fuzz {
namespace {

using conformance::Attrs;
using conformance::Leaf;
using conformance::OpInfo;
using conformance::TensorData;
using conformance::TestCase;

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kClamp = 1e7;  // |finite input| beyond this: clamped (binary32 budgets' domain)

// Dimensions at and past every limit: UInt32's, the 64-bit product's, and merely large ones.
constexpr std::uint64_t kHugeDims[16] = {
    65536,           65537,           1ull << 31,       (1ull << 32) - 1,
    1ull << 32,      (1ull << 32) + 1, 1ull << 33,      1ull << 40,
    1ull << 48,      1ull << 62,      1ull << 63,       kU64Max - 1,
    kU64Max,         1431655765,      65535,            1000};

constexpr std::uint64_t kHugeIds[4] = {1ull << 32, 1ull << 63, kU64Max, 1000};

float f32(double v) { return static_cast<float>(v); }

// Values beyond the quarter grid (b < 192: (b - 96) / 4): the fills of conformance's
// generators and of the golden vectors' flags (NearExpOverflow, VeryNegative, MeanShifted,
// NonFinite) and binary32's edges.
const double kSpecials[32] = {
    kNaN,           kInf,          -kInf,         -0.0,
    88.5,           f32(88.72284), 89.0,          100.0,
    -100.0,         1000.0,        1000.5,        -1000.5,
    10000.0,        -10000.0,      9999.5,        -1e7,
    1e7,            -87.5,         f32(0.1),      f32(-0.1),
    f32(1.0 / 3),   f32(1e-3),     f32(1e-6),     f32(-1e-6),
    static_cast<double>(std::numeric_limits<float>::denorm_min()),
    f32(1e-40),     static_cast<double>(std::numeric_limits<float>::min()),
    16777216.0,     65504.0,       f32(3.14159265358979), f32(-2.718281828459045),
    f32(1e-20)};

// Index 15 reads 4 raw binary32 bytes. Indices 7-10 are outside the budgets' domain.
const double kEpsilons[15] = {1e-5,       f32(1e-3), 1.0,        f32(0.1), f32(1e-6),
                              kNaN,       kInf,      0.0,        f32(-1e-5), f32(1e-12),
                              static_cast<double>(std::numeric_limits<float>::denorm_min()),
                              -kInf,      f32(1e30), f32(1e-5),  4.0};

bool sameBits(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

bool epsilonJudgeable(double eps) { return !(std::isfinite(eps) && eps < 1e-6); }

bool anyInfinity(const std::vector<double>& values) {
  for (double v : values)
    if (std::isinf(v)) return true;
  return false;
}

// docs/spec.md defines infinities in the first tensor argument (x, logits, student: rows holding
// +-inf). Anywhere else (a target weight, gamma, beta, the seed) an infinity meets a factor that
// binary32 rounds to exactly 0 where binary64 keeps 1e-15 (a log-probability of a dominant
// logit, an xhat), and inf * 0 = NaN against inf * 1e-15 = inf is rounding, not a kernel bug.
// NaN is fine anywhere: it propagates through every product.
bool infinitiesJudgeable(const OpInfo& op, const TestCase& c) {
  if (c.upstream && anyInfinity(c.upstream->values)) return false;
  std::vector<int> uses(c.leaves.size(), 0);
  std::size_t first = c.leaves.size();
  for (std::size_t i = 0; i < op.tensorArgs.size(); ++i) {
    auto it = c.call.find(op.tensorArgs[i]);
    if (it == c.call.end() || it->second >= c.leaves.size()) continue;
    ++uses[it->second];
    if (i == 0) first = it->second;
  }
  for (std::size_t l = 0; l < c.leaves.size(); ++l)
    if (uses[l] > 0 && (l != first || uses[l] > 1) && anyInfinity(c.leaves[l].value.values))
      return false;
  return true;
}

enum class AttrKind { Shape, Natural, Bool, Double };

AttrKind kindOf(const std::string& name) {
  if (name == "s" || name == "spatial") return AttrKind::Shape;
  if (name == "mean") return AttrKind::Bool;
  if (name == "epsilon") return AttrKind::Double;
  return AttrKind::Natural;  // k, axis, seqLen, embedDim, channels
}

std::vector<std::string> attrNamesOf(const OpInfo& op) {
  std::vector<std::string> names = op.attrNames;
  names.insert(names.end(), op.optionalAttrNames.begin(), op.optionalAttrNames.end());
  return names;
}

// The op's tensor arguments' shapes as the attributes say, when they say.
std::optional<Shape> naturalShape(const std::string& op, const std::string& arg, const Attrs& a) {
  if (op == "softmaxLast" || op == "logSoftmaxLast" || op == "topKMask" ||
      op == "crossEntropy" || op == "distill")
    return a.s;
  if (op == "layerNorm") {
    if (!a.embedDim) return std::nullopt;
    if (arg != "x") return Shape{*a.embedDim};
    if (!a.seqLen) return std::nullopt;
    return Shape{*a.seqLen, *a.embedDim};
  }
  if (op == "batchNorm") {
    if (!a.channels) return std::nullopt;
    if (arg != "x") return Shape{*a.channels};
    if (!a.spatial) return std::nullopt;
    Shape s{*a.channels};
    s.insert(s.end(), a.spatial->begin(), a.spatial->end());
    return s;
  }
  return std::nullopt;
}

std::optional<Shape> outputShape(const std::string& op, const Attrs& a) {
  if (op == "crossEntropy" || op == "distill") return Shape{};
  return naturalShape(op, "x", a);
}

// ---- decoding ---------------------------------------------------------------------------------

class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(u8()) << (8 * i);
    return v;
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(u8()) << (8 * i);
    return v;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

std::uint64_t decodeDim(ByteReader& r) {
  const std::uint8_t b = r.u8();
  const unsigned low = b & 31u;
  switch (b >> 5) {
    case 0: case 1: case 2: return low % 6;
    case 3: return 1 + low;
    case 4: return 1 + (low & 7u);
    case 5: return kHugeDims[low % 16];
    case 6: return r.u64();
    default: return 1 + (low & 3u);
  }
}

Shape decodeShape(ByteReader& r) {
  Shape s(r.u8() % 5);
  for (auto& d : s) d = decodeDim(r);
  return s;
}

double decodeValue(ByteReader& r) {
  const std::uint8_t b = r.u8();
  if (b < 192) return (static_cast<int>(b) - 96) / 4.0;
  if (b < 224) return kSpecials[b - 192];
  const std::uint32_t bits = r.u32();
  float f;
  std::memcpy(&f, &bits, sizeof f);
  double v = f;
  if (std::isfinite(v) && std::fabs(v) > kClamp) v = std::copysign(kClamp, v);
  return v;
}

// A flags byte (bit 0 requiresGrad, bits 1-3 all set: a wrong value count), then the values.
TensorData decodeTensorValues(ByteReader& r, Shape shape, std::uint8_t flags) {
  TensorData t{std::move(shape), {}};
  const bool wrongCount = (flags & 0x0E) == 0x0E;
  const Dim size = sizeOf(t.shape);
  const std::size_t n = !wrongCount && size <= kMaxLeafValues ? static_cast<std::size_t>(size)
                                                              : r.u8() % 8;
  t.values.reserve(n);
  for (std::size_t i = 0; i < n; ++i) t.values.push_back(decodeValue(r));
  return t;
}

Leaf decodeLeaf(ByteReader& r, const std::optional<Shape>& natural) {
  const std::uint8_t flags = r.u8();
  Shape shape = natural ? *natural : decodeShape(r);
  Leaf l;
  l.requiresGrad = flags & 1;
  l.value = decodeTensorValues(r, std::move(shape), flags);
  return l;
}

// ---- encoding ---------------------------------------------------------------------------------

void putU32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void putU64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

void encodeDim(std::vector<std::uint8_t>& out, std::uint64_t d) {
  if (d <= 5) {
    out.push_back(static_cast<std::uint8_t>(d));
    return;
  }
  if (d <= 32) {
    out.push_back(static_cast<std::uint8_t>(0x60 | (d - 1)));
    return;
  }
  for (unsigned i = 0; i < 16; ++i)
    if (kHugeDims[i] == d) {
      out.push_back(static_cast<std::uint8_t>(0xA0 | i));
      return;
    }
  out.push_back(0xC0);
  putU64(out, d);
}

void encodeShape(std::vector<std::uint8_t>& out, const Shape& s) {
  const std::size_t rank = s.size() < 5 ? s.size() : 4;
  out.push_back(static_cast<std::uint8_t>(rank));
  for (std::size_t i = 0; i < rank; ++i) encodeDim(out, s[i]);
}

void encodeValue(std::vector<std::uint8_t>& out, double v) {
  const double q = v * 4;
  const bool onGrid = std::isfinite(v) && !(v == 0 && std::signbit(v)) && q == std::floor(q) &&
                      q >= -96 && q <= 95;
  if (onGrid) {
    out.push_back(static_cast<std::uint8_t>(static_cast<int>(q) + 96));
    return;
  }
  for (unsigned i = 0; i < 32; ++i)
    if (sameBits(kSpecials[i], v)) {
      out.push_back(static_cast<std::uint8_t>(192 + i));
      return;
    }
  out.push_back(0xE0);
  const float f = static_cast<float>(v);
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  putU32(out, bits);
}

void encodeTensor(std::vector<std::uint8_t>& out, const TensorData& t, bool requiresGrad) {
  const bool exact = t.values.size() == sizeOf(t.shape) && t.values.size() <= kMaxLeafValues;
  std::uint8_t flags = requiresGrad ? 1 : 0;
  if (!exact) flags |= 0x0E;
  out.push_back(flags);
  encodeShape(out, t.shape);
  std::size_t n = t.values.size();
  if (!exact) {
    n %= 8;
    out.push_back(static_cast<std::uint8_t>(n));
  }
  for (std::size_t i = 0; i < n; ++i) encodeValue(out, t.values[i]);
}

std::string number(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

std::string tensorText(const TensorData& t) {
  std::string out = toString(t.shape) + " {";
  for (std::size_t i = 0; i < t.values.size(); ++i) out += (i ? ", " : "") + number(t.values[i]);
  return out + "}";
}

}  // namespace

Program decodeProgram(const std::uint8_t* data, std::size_t size) {
  ByteReader r(data, size);
  const auto& ops = conformance::opRegistry();
  const OpInfo& op = ops[r.u8() % ops.size()];
  Program p;
  TestCase& c = p.testCase;
  c.op = op.name;

  for (const std::string& name : attrNamesOf(op)) {
    if (r.u8() % 8 == 7) continue;  // absent
    Attrs& a = c.attrs;
    switch (kindOf(name)) {
      case AttrKind::Shape: (name == "s" ? a.s : a.spatial) = decodeShape(r); break;
      case AttrKind::Bool: a.mean = (r.u8() & 1) != 0; break;
      case AttrKind::Double: {
        const std::uint8_t e = r.u8() % 16;
        double eps;
        if (e < 15) {
          eps = kEpsilons[e];
        } else {
          const std::uint32_t bits = r.u32();
          float f;
          std::memcpy(&f, &bits, sizeof f);
          eps = f;
        }
        a.epsilon = eps;
        p.judgeValues = p.judgeValues && epsilonJudgeable(eps);
        break;
      }
      case AttrKind::Natural: {
        const std::uint64_t v = decodeDim(r);
        if (name == "k") a.k = v;
        else if (name == "axis") a.axis = v;
        else if (name == "seqLen") a.seqLen = v;
        else if (name == "embedDim") a.embedDim = v;
        else a.channels = v;
        break;
      }
    }
  }

  const std::uint8_t mode = r.u8() % 4;
  if (mode == 3) {
    const std::size_t n = r.u8() % 6;
    for (std::size_t i = 0; i < n; ++i) c.leaves.push_back(decodeLeaf(r, std::nullopt));
  } else {
    for (const std::string& arg : op.tensorArgs)
      c.leaves.push_back(decodeLeaf(r, naturalShape(op.name, arg, c.attrs)));
    if (mode == 2) c.leaves.push_back(decodeLeaf(r, std::nullopt));
  }

  for (std::size_t i = 0; i < op.tensorArgs.size(); ++i) {
    const std::uint8_t b = r.u8() % 16;
    NodeId id = i;
    if (b == 15) continue;  // the call lacks this argument
    if (b == 12 || b == 13) id = r.u8() % (c.leaves.size() + 3);
    if (b == 14) id = kHugeIds[r.u8() % 4];
    c.call[op.tensorArgs[i]] = id;
  }

  const std::uint8_t u = r.u8() % 4;
  if (u != 0) {
    std::optional<Shape> natural;
    if (u != 3) natural = outputShape(op.name, c.attrs);
    const std::uint8_t flags = r.u8();
    Shape shape = natural ? *natural : decodeShape(r);
    c.upstream = decodeTensorValues(r, std::move(shape), flags);
  }
  p.judgeValues = p.judgeValues && infinitiesJudgeable(op, c);
  return p;
}

std::vector<std::uint8_t> encodeProgram(const TestCase& c) {
  std::vector<std::uint8_t> out;
  const auto& ops = conformance::opRegistry();
  std::size_t opIndex = 0;
  while (opIndex < ops.size() && ops[opIndex].name != c.op) ++opIndex;
  if (opIndex == ops.size()) return out;
  const OpInfo& op = ops[opIndex];
  out.push_back(static_cast<std::uint8_t>(opIndex));

  const Attrs& a = c.attrs;
  for (const std::string& name : attrNamesOf(op)) {
    switch (kindOf(name)) {
      case AttrKind::Shape: {
        const std::optional<Shape>& s = name == "s" ? a.s : a.spatial;
        out.push_back(s ? 0 : 7);
        if (s) encodeShape(out, *s);
        break;
      }
      case AttrKind::Bool:
        out.push_back(a.mean ? 0 : 7);
        if (a.mean) out.push_back(*a.mean ? 1 : 0);
        break;
      case AttrKind::Double:
        out.push_back(a.epsilon ? 0 : 7);
        if (a.epsilon) {
          const double eps = *a.epsilon;
          if (eps == 1e-5 || static_cast<double>(static_cast<float>(eps)) != eps) {
            out.push_back(0);
          } else {
            out.push_back(15);
            const float f = static_cast<float>(eps);
            std::uint32_t bits;
            std::memcpy(&bits, &f, sizeof bits);
            putU32(out, bits);
          }
        }
        break;
      case AttrKind::Natural: {
        const std::optional<std::uint64_t>& v = name == "k"          ? a.k
                                                : name == "axis"     ? a.axis
                                                : name == "seqLen"   ? a.seqLen
                                                : name == "embedDim" ? a.embedDim
                                                                     : a.channels;
        out.push_back(v ? 0 : 7);
        if (v) encodeDim(out, *v);
        break;
      }
    }
  }

  out.push_back(3);  // explicit leaves
  const std::size_t n = c.leaves.size() < 6 ? c.leaves.size() : 5;
  out.push_back(static_cast<std::uint8_t>(n));
  for (std::size_t i = 0; i < n; ++i) encodeTensor(out, c.leaves[i].value, c.leaves[i].requiresGrad);

  for (std::size_t i = 0; i < op.tensorArgs.size(); ++i) {
    auto it = c.call.find(op.tensorArgs[i]);
    if (it == c.call.end()) {
      out.push_back(15);
    } else if (it->second == i) {
      out.push_back(0);
    } else if (it->second < n + 3) {
      out.push_back(12);
      out.push_back(static_cast<std::uint8_t>(it->second));
    } else {
      out.push_back(14);
      std::uint8_t k = 3;
      for (std::uint8_t j = 0; j < 4; ++j)
        if (kHugeIds[j] == it->second) k = j;
      out.push_back(k);
    }
  }

  if (!c.upstream) {
    out.push_back(0);
  } else {
    out.push_back(3);
    encodeTensor(out, *c.upstream, false);
  }
  return out;
}

std::string describeProgram(const TestCase& c) {
  std::string out = "op " + c.op + "\n";
  const Attrs& a = c.attrs;
  if (a.s) out += "  s = " + toString(*a.s) + "\n";
  if (a.k) out += "  k = " + std::to_string(*a.k) + "\n";
  if (a.axis) out += "  axis = " + std::to_string(*a.axis) + "\n";
  if (a.mean) out += std::string("  mean = ") + (*a.mean ? "true" : "false") + "\n";
  if (a.epsilon) out += "  epsilon = " + number(*a.epsilon) + "\n";
  if (a.seqLen) out += "  seqLen = " + std::to_string(*a.seqLen) + "\n";
  if (a.embedDim) out += "  embedDim = " + std::to_string(*a.embedDim) + "\n";
  if (a.channels) out += "  channels = " + std::to_string(*a.channels) + "\n";
  if (a.spatial) out += "  spatial = " + toString(*a.spatial) + "\n";
  for (std::size_t i = 0; i < c.leaves.size(); ++i)
    out += "  leaf " + std::to_string(i) + (c.leaves[i].requiresGrad ? " (grad) " : " ") +
           tensorText(c.leaves[i].value) + "\n";
  for (const auto& [name, id] : c.call) out += "  call " + name + " = " + std::to_string(id) + "\n";
  if (c.upstream) out += "  upstream " + tensorText(*c.upstream) + "\n";
  return out;
}

}  // namespace tapecheck::fuzz
