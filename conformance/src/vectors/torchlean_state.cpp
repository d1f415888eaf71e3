#include "tapecheck/vectors/torchlean_state.h"

#include <cstdint>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tapecheck/vectors/bits.h"
#include "torchlean_words.h"

namespace tapecheck::vectors {

namespace {

using Json = nlohmann::json;

// The two tags differ only in the width of their words.
struct WordKind {
  const char* format;
  unsigned width;  // 64 or 32
};

bool isNatural(const Json& j) {
  return j.is_number_unsigned() || (j.is_number_integer() && j.get<std::int64_t>() >= 0);
}
std::uint64_t natural(const Json& j) {
  return j.is_number_unsigned() ? j.get<std::uint64_t>()
                                : static_cast<std::uint64_t>(j.get<std::int64_t>());
}

std::string hex(std::uint64_t w, unsigned width) {
  std::ostringstream s;
  s << "0x" << std::hex << std::uppercase;
  s.width(width / 4);
  s.fill('0');
  s << w;
  return s.str();
}

// The value of one word, or the reason it is not a valid word of this width.
Result<double> decodeWord(const Json& j, const WordKind& kind) {
  if (!isNatural(j))
    return Error{kind.width == 64 ? "expected a binary64 word (a natural number below 2^64)"
                                  : "expected a binary32 word (a natural number below 2^32)"};
  const std::uint64_t w = natural(j);
  if (kind.width == 64) {
    if (torchlean::isNaN64(w) && w != torchlean::kCanonicalNaN64)
      return Error{"word " + std::to_string(w) + " (" + hex(w, 64) +
                   ") is a NaN other than Lean's quiet NaN 0x7FF8000000000000 (TorchLean "
                   "rejects it)"};
    return fromBits(w);
  }
  if (w > 0xFFFFFFFFULL)
    return Error{"word " + std::to_string(w) + " does not fit in 32 bits"};
  const auto w32 = static_cast<std::uint32_t>(w);
  if (torchlean::isNaN32(w32) && w32 != torchlean::kCanonicalNaN32)
    return Error{"word " + std::to_string(w) + " (" + hex(w, 32) +
                 ") is a NaN other than Lean's quiet NaN 0x7FC00000 (TorchLean rejects it)"};
  return torchlean::binary32Value(w32);
}

Result<std::vector<conformance::TensorData>> parseState(const std::string& text,
                                                        const std::string& label,
                                                        const WordKind& kind) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Error{label + ": not valid JSON: " + e.what()};
  }
  auto fail = [&](const std::string& path, const std::string& m) {
    return Error{label + ": " + (path.empty() ? "" : path + ": ") + m};
  };
  if (!j.is_object()) return fail("", "expected a JSON object with 'format' and 'state'");
  if (!j.contains("format") || !j.at("format").is_string())
    return fail("format", "missing or not a string (a state file names its format)");
  const std::string format = j.at("format").get<std::string>();
  if (format != kind.format)
    return fail("format", "unsupported format '" + format + "' (expected '" + kind.format + "')");
  for (const auto& [key, value] : j.items()) {
    (void)value;
    if (key != "format" && key != "state")
      return fail(key, "unexpected field (a state file holds only format and state)");
  }
  if (!j.contains("state") || !j.at("state").is_array())
    return fail("state", "missing or not an array");
  std::vector<conformance::TensorData> out;
  const Json& state = j.at("state");
  for (std::size_t i = 0; i < state.size(); ++i) {
    const std::string p = "state[" + std::to_string(i) + "]";
    const Json& t = state[i];
    if (!t.is_object()) return fail(p, "expected an object {shape, values}");
    for (const auto& [key, value] : t.items()) {
      (void)value;
      if (key != "shape" && key != "values")
        return fail(p + "." + key, "unexpected field (a state tensor holds only shape and values)");
    }
    if (!t.contains("shape") || !t.at("shape").is_array())
      return fail(p + ".shape", "missing or not an array");
    if (!t.contains("values") || !t.at("values").is_array())
      return fail(p + ".values", "missing or not an array");
    conformance::TensorData td;
    const Json& shape = t.at("shape");
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (!isNatural(shape[d]))
        return fail(p + ".shape[" + std::to_string(d) + "]", "expected a natural number");
      td.shape.push_back(natural(shape[d]));
    }
    const Json& values = t.at("values");
    if (values.size() != sizeOf(td.shape))
      return fail(p + ".values", "holds " + std::to_string(values.size()) + " values but shape " +
                                     toString(td.shape) + " needs " +
                                     std::to_string(sizeOf(td.shape)));
    td.values.reserve(values.size());
    for (std::size_t v = 0; v < values.size(); ++v) {
      auto value = decodeWord(values[v], kind);
      if (!value) return fail(p + ".values[" + std::to_string(v) + "]", value.message());
      td.values.push_back(value.value());
    }
    out.push_back(std::move(td));
  }
  return out;
}

}  // namespace

Result<std::vector<conformance::TensorData>> parseStateBits(const std::string& text,
                                                            const std::string& label) {
  return parseState(text, label, {kStateBitsFormat, 64});
}

Result<std::vector<conformance::TensorData>> parseStateFloat32(const std::string& text,
                                                               const std::string& label) {
  return parseState(text, label, {kStateFloat32Format, 32});
}

}  // namespace tapecheck::vectors
