#include "tapecheck/vectors/paramio.h"

#include <sstream>

#include <nlohmann/json.hpp>

#include "tapecheck/vectors/bits.h"
#include "tapecheck/vectors/write.h"

namespace tapecheck::vectors {

namespace {

using Json = nlohmann::json;

bool isU64(const Json& j) {
  return j.is_number_unsigned() || (j.is_number_integer() && j.get<std::int64_t>() >= 0);
}
std::uint64_t asU64(const Json& j) {
  return j.is_number_unsigned() ? j.get<std::uint64_t>()
                                : static_cast<std::uint64_t>(j.get<std::int64_t>());
}

}  // namespace

Result<std::vector<conformance::TensorData>> parseParamIO(const std::string& text,
                                                          const std::string& label) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Error{label + ": not valid JSON: " + e.what()};
  }
  auto fail = [&](const std::string& path, const std::string& m) {
    return Error{label + ": " + (path.empty() ? "" : path + ": ") + m};
  };
  if (!j.is_object()) return fail("", "expected a JSON object with 'format' and 'params'");
  if (!j.contains("format") || !j.at("format").is_string())
    return fail("format", "missing or not a string (a ParamIO file names its format)");
  const std::string format = j.at("format").get<std::string>();
  if (format != kParamIOFormat)
    return fail("format", "unsupported format '" + format + "' (expected '" + kParamIOFormat +
                              "')");
  for (const auto& [key, value] : j.items()) {
    (void)value;
    if (key != "format" && key != "params")
      return fail(key, "unexpected field (a ParamIO file holds only format and params)");
  }
  if (!j.contains("params") || !j.at("params").is_array())
    return fail("params", "missing or not an array");
  std::vector<conformance::TensorData> out;
  const Json& params = j.at("params");
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::string p = "params[" + std::to_string(i) + "]";
    const Json& t = params[i];
    if (!t.is_object()) return fail(p, "expected an object {shape, values}");
    for (const auto& [key, value] : t.items()) {
      (void)value;
      if (key != "shape" && key != "values")
        return fail(p + "." + key, "unexpected field (a param holds only shape and values)");
    }
    if (!t.contains("shape") || !t.at("shape").is_array())
      return fail(p + ".shape", "missing or not an array");
    if (!t.contains("values") || !t.at("values").is_array())
      return fail(p + ".values", "missing or not an array");
    conformance::TensorData td;
    const Json& shape = t.at("shape");
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (!isU64(shape[d]))
        return fail(p + ".shape[" + std::to_string(d) + "]", "expected a natural number");
      td.shape.push_back(asU64(shape[d]));
    }
    const Json& values = t.at("values");
    if (values.size() != sizeOf(td.shape))
      return fail(p + ".values", "holds " + std::to_string(values.size()) +
                                     " values but shape " + toString(td.shape) + " needs " +
                                     std::to_string(sizeOf(td.shape)));
    for (std::size_t v = 0; v < values.size(); ++v) {
      if (!isU64(values[v]))
        return fail(p + ".values[" + std::to_string(v) + "]",
                    "expected float bits as a natural number below 2^64");
      td.values.push_back(fromBits(asU64(values[v])));
    }
    out.push_back(std::move(td));
  }
  return out;
}

Result<std::string> paramsAsLeavesJson(const std::vector<conformance::TensorData>& params,
                                       const std::string& label) {
  std::string out = "[";
  for (std::size_t i = 0; i < params.size(); ++i) {
    for (std::size_t v = 0; v < params[i].values.size(); ++v)
      if (!isBinary32(params[i].values[v])) {
        std::ostringstream m;
        m.precision(17);
        m << label << ": params[" << i << "].values[" << v << "]: " << params[i].values[v]
          << " is not representable in binary32 (golden-vector inputs must be)";
        return Error{m.str()};
      }
    out += std::string(i ? "," : "") + "\n  " + formatLeaf({params[i], false});
  }
  out += params.empty() ? "]\n" : "\n]\n";
  return out;
}

}  // namespace tapecheck::vectors
