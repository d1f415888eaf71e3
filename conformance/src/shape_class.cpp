#include "tapecheck/conformance/op_registry.h"

namespace tapecheck::conformance {

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
