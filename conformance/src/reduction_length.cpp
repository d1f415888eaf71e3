#include <algorithm>

#include "tapecheck/conformance/op_registry.h"

namespace tapecheck::conformance {

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

}  // namespace tapecheck::conformance
