#include "tapecheck/vectors/write.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

#include "tapecheck/conformance/op_registry.h"
#include "tapecheck/vectors/bits.h"

namespace tapecheck::vectors {

std::string quote(const std::string& s) { return nlohmann::json(s).dump(); }

Result<std::string> formatDouble(double v) {
  if (!std::isfinite(v)) return Error{"tapecheck: JSON cannot hold a non-finite number"};
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  if (ec != std::errc()) return Error{"tapecheck: cannot format a double"};
  return std::string(buf, end);
}

namespace {

std::string formatShape(const Shape& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::string formatValues(const std::vector<double>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + std::to_string(toBits(values[i]));
  return out + "]";
}

std::string formatStrings(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + quote(v[i]);
  return out + "]";
}

// Attributes in docs/spec.md's order of names.
Result<std::string> formatAttrs(const conformance::Attrs& a) {
  std::vector<std::string> parts;
  if (a.s) parts.push_back("\"s\": " + formatShape(*a.s));
  if (a.k) parts.push_back("\"k\": " + std::to_string(*a.k));
  if (a.axis) parts.push_back("\"axis\": " + std::to_string(*a.axis));
  if (a.mean) parts.push_back(std::string("\"mean\": ") + (*a.mean ? "true" : "false"));
  if (a.epsilon) {
    auto e = formatDouble(*a.epsilon);
    if (!e) return Error{"tapecheck: attrs.epsilon must be finite to be written"};
    parts.push_back("\"epsilon\": " + e.value());
  }
  if (a.seqLen) parts.push_back("\"seqLen\": " + std::to_string(*a.seqLen));
  if (a.embedDim) parts.push_back("\"embedDim\": " + std::to_string(*a.embedDim));
  if (a.channels) parts.push_back("\"channels\": " + std::to_string(*a.channels));
  if (a.spatial) parts.push_back("\"spatial\": " + formatShape(*a.spatial));
  std::string out = "{";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out + "}";
}

}  // namespace

std::string formatTensor(const conformance::TensorData& t) {
  return "{\"shape\": " + formatShape(t.shape) + ", \"values\": " + formatValues(t.values) + "}";
}

std::string formatLeaf(const conformance::Leaf& l) {
  return "{\"shape\": " + formatShape(l.value.shape) +
         ", \"requiresGrad\": " + (l.requiresGrad ? "true" : "false") +
         ", \"values\": " + formatValues(l.value.values) + "}";
}

Result<std::string> formatVectorFile(const VectorFile& f) {
  std::string o;
  o += "{\n";
  o += "  \"schema\": " + quote(kSchemaName) + ",\n";
  o += "  \"op\": " + quote(f.op) + ",\n";
  o += "  \"generator\": {\"name\": " + quote(f.generator.name) +
       ", \"version\": " + quote(f.generator.version) +
       ", \"provenance\": " + quote(f.generator.provenance) + "},\n";
  if (!f.specRules.empty()) o += "  \"specRules\": " + formatStrings(f.specRules) + ",\n";
  if (f.torchleanCommit) o += "  \"torchleanCommit\": " + quote(*f.torchleanCommit) + ",\n";
  o += "  \"header\": [";
  for (std::size_t i = 0; i < f.header.size(); ++i)
    o += std::string(i ? "," : "") + "\n    " + quote(f.header[i]);
  o += f.header.empty() ? "],\n" : "\n  ],\n";
  o += "  \"notes\": {";
  for (std::size_t i = 0; i < f.notes.size(); ++i)
    o += std::string(i ? "," : "") + "\n    " + quote(f.notes[i].first) +
         ": {\"description\": " + quote(f.notes[i].second) + "}";
  o += f.notes.empty() ? "},\n" : "\n  },\n";
  o += "  \"numberOfTests\": " + std::to_string(f.tests.size()) + ",\n";
  o += "  \"tests\": [";
  for (std::size_t i = 0; i < f.tests.size(); ++i) {
    const VectorTest& t = f.tests[i];
    const conformance::TestCase& c = t.testCase;
    o += std::string(i ? "," : "") + "\n    {\n";
    o += "      \"tcId\": " + std::to_string(t.tcId) + ",\n";
    o += "      \"comment\": " + quote(t.comment) + ",\n";
    o += "      \"flags\": " + formatStrings(t.flags) + ",\n";
    o += "      \"leaves\": [";
    for (std::size_t l = 0; l < c.leaves.size(); ++l)
      o += std::string(l ? "," : "") + "\n        " + formatLeaf(c.leaves[l]);
    o += c.leaves.empty() ? "],\n" : "\n      ],\n";
    o += "      \"call\": {";
    {
      // The op's argument order (docs/spec.md), then any other name in name order.
      std::vector<std::string> order;
      if (const conformance::OpInfo* op = conformance::findOp(f.op)) order = op->tensorArgs;
      for (const auto& [name, id] : c.call)
        if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
      std::size_t k = 0;
      for (const auto& name : order)
        if (auto it = c.call.find(name); it != c.call.end())
          o += std::string(k++ ? ", " : "") + quote(name) + ": " + std::to_string(it->second);
    }
    o += "},\n";
    auto attrs = formatAttrs(c.attrs);
    if (!attrs) return Error{"tcId " + std::to_string(t.tcId) + ": " + attrs.message()};
    o += "      \"attrs\": " + attrs.value() + ",\n";
    if (c.upstream) o += "      \"upstream\": " + formatTensor(*c.upstream) + ",\n";
    if (t.expected.error) {
      o += "      \"expected\": {\"error\": " + quote(*t.expected.error) + "},\n";
    } else if (t.expected.value) {
      o += "      \"expected\": {\n";
      o += "        \"value\": " + formatTensor(*t.expected.value);
      if (t.expected.grads) {
        o += ",\n        \"grads\": [";
        const auto& g = *t.expected.grads;
        for (std::size_t k = 0; k < g.size(); ++k)
          o += std::string(k ? "," : "") + "\n          " + formatTensor(g[k]);
        o += g.empty() ? "]" : "\n        ]";
      }
      o += "\n      },\n";
    } else {
      return Error{"tcId " + std::to_string(t.tcId) + ": expected holds neither value nor error"};
    }
    o += "      \"result\": " + quote(expectationName(t.result)) + "\n";
    o += "    }";
  }
  o += f.tests.empty() ? "]\n" : "\n  ]\n";
  o += "}\n";
  return o;
}

}  // namespace tapecheck::vectors
