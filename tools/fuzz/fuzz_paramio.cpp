// Fuzz target `paramio`: JSON text -> TorchLean ParamIO import, what
// `tapecheck vectors import-paramio` runs (vectors::parseParamIO, then
// vectors::paramsAsLeavesJson). Properties:
//   - a rejected text gives an Error naming the input, never an exception or a crash;
//   - an accepted text has values.length == size(shape) for every param;
//   - the leaves JSON printed for it is valid JSON holding exactly the params (shapes, and the
//     values' binary64 bits), or an Error exactly when some value is not binary32.
#include <cstring>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_entry.h"
#include "tapecheck/vectors/bits.h"
#include "tapecheck/vectors/paramio.h"

namespace tapecheck::fuzz {
namespace {

constexpr const char* kLabel = "fuzz-params.json";

void checkAccepted(const std::vector<conformance::TensorData>& params, const std::string& text) {
  bool allBinary32 = true;
  for (const auto& p : params) {
    if (p.values.size() != sizeOf(p.shape))
      violated("an accepted param holds " + std::to_string(p.values.size()) +
               " values for shape " + toString(p.shape) + "\n--- input:\n" + text);
    for (double v : p.values) allBinary32 = allBinary32 && vectors::isBinary32(v);
  }
  auto leaves = vectors::paramsAsLeavesJson(params, kLabel);
  if (!leaves) {
    if (allBinary32) violated("binary32 params do not print as leaves: " + leaves.message());
    if (leaves.message().rfind(kLabel, 0) != 0)
      violated("an import error does not name the input: " + leaves.message());
    return;
  }
  if (!allBinary32) violated("params that are not binary32 printed as leaves");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(leaves.value());
  } catch (const nlohmann::json::exception& e) {
    violated(std::string("the printed leaves are not JSON: ") + e.what() + "\n" + leaves.value());
  }
  if (!j.is_array() || j.size() != params.size())
    violated("the printed leaves are not one array entry per param\n" + leaves.value());
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& leaf = j[i];
    const std::string at = "leaf " + std::to_string(i) + ": ";
    if (!leaf.is_object() || !leaf.contains("shape") || !leaf.contains("values") ||
        !leaf.contains("requiresGrad") || leaf.at("requiresGrad") != false)
      violated(at + "not {shape, requiresGrad: false, values}\n" + leaves.value());
    if (leaf.at("shape").get<Shape>() != params[i].shape)
      violated(at + "shape differs\n" + leaves.value());
    const auto bits = leaf.at("values").get<std::vector<std::uint64_t>>();
    if (bits.size() != params[i].values.size())
      violated(at + "value count differs\n" + leaves.value());
    for (std::size_t k = 0; k < bits.size(); ++k)
      if (bits[k] != vectors::toBits(params[i].values[k]))
        violated(at + "value " + std::to_string(k) + " bits differ\n" + leaves.value());
  }
}

}  // namespace
}  // namespace tapecheck::fuzz

TAPECHECK_FUZZ_TARGET(paramio) {
  using namespace tapecheck::fuzz;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto params = tapecheck::vectors::parseParamIO(text, kLabel);
    if (!params) {
      if (params.message().rfind(kLabel, 0) != 0)
        violated("a ParamIO error does not name the input: " + params.message());
      return 0;
    }
    checkAccepted(params.value(), text);
  } catch (const std::exception& e) {
    violated(std::string("an exception escaped: ") + e.what() + "\n--- input:\n" + text);
  }
  return 0;
}
