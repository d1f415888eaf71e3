// Properties shared by the fuzz targets of TorchLean's tensor readers (state_bits,
// state_float32, tlsf32b), each checked on a file its reader accepted:
//   - every tensor holds size(shape) values;
//   - detection (`tapecheck vectors import`) reads the same file as the same format and the same
//     tensors, bit for bit;
//   - the printed leaves are JSON holding exactly the tensors' shapes and value bits, or an Error
//     naming the input exactly when some value is not binary32.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_entry.h"
#include "tapecheck/vectors/bits.h"
#include "tapecheck/vectors/torchlean_import.h"

namespace tapecheck::fuzz {

inline std::vector<std::uint64_t> valueBits(const conformance::TensorData& t) {
  std::vector<std::uint64_t> out;
  for (double v : t.values) out.push_back(vectors::toBits(v));
  return out;
}

inline void checkImported(const std::vector<conformance::TensorData>& tensors,
                          const std::string& format, const std::string& input,
                          const std::string& label) {
  for (const auto& t : tensors)
    if (t.values.size() != sizeOf(t.shape))
      violated("an accepted tensor holds " + std::to_string(t.values.size()) +
               " values for shape " + toString(t.shape) + "\n--- input:\n" + input);

  auto detected = vectors::importTorchLeanTensors(input, label);
  if (!detected) violated("detection refuses what the " + format + " reader accepted: " +
                          detected.message() + "\n--- input:\n" + input);
  if (detected.value().format != format)
    violated("detection reads a " + format + " file as " + detected.value().format);
  const auto& again = detected.value().tensors;
  if (again.size() != tensors.size()) violated("detection reads another number of tensors");
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (again[i].shape != tensors[i].shape || valueBits(again[i]) != valueBits(tensors[i]))
      violated("detection reads tensor " + std::to_string(i) + " differently");

  bool allBinary32 = true;
  for (const auto& t : tensors)
    for (double v : t.values) allBinary32 = allBinary32 && vectors::isBinary32(v);
  auto leaves = vectors::leavesJson(detected.value(), label);
  if (!leaves) {
    if (allBinary32) violated("binary32 tensors do not print as leaves: " + leaves.message());
    if (leaves.message().rfind(label, 0) != 0)
      violated("a leaves error does not name the input: " + leaves.message());
    return;
  }
  if (!allBinary32) violated("tensors that are not binary32 printed as leaves");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(leaves.value());
  } catch (const nlohmann::json::exception& e) {
    violated(std::string("the printed leaves are not JSON: ") + e.what() + "\n" + leaves.value());
  }
  if (!j.is_array() || j.size() != tensors.size())
    violated("the printed leaves are not one array entry per tensor\n" + leaves.value());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& leaf = j[i];
    const std::string at = "leaf " + std::to_string(i) + ": ";
    if (!leaf.is_object() || !leaf.contains("shape") || !leaf.contains("values") ||
        !leaf.contains("requiresGrad") || leaf.at("requiresGrad") != false)
      violated(at + "not {shape, requiresGrad: false, values}\n" + leaves.value());
    if (leaf.at("shape").get<Shape>() != tensors[i].shape)
      violated(at + "shape differs\n" + leaves.value());
    if (leaf.at("values").get<std::vector<std::uint64_t>>() != valueBits(tensors[i]))
      violated(at + "value bits differ\n" + leaves.value());
  }
}

// A rejected input: the message names the input, and detection does not read it as this format.
inline void checkRejected(const std::string& message, const std::string& format,
                          const std::string& input, const std::string& label) {
  if (message.rfind(label, 0) != 0)
    violated("a " + format + " error does not name the input: " + message);
  auto detected = vectors::importTorchLeanTensors(input, label);
  if (detected && detected.value().format == format)
    violated("detection accepts as " + format + " what its reader refused (" + message +
             ")\n--- input:\n" + input);
}

}  // namespace tapecheck::fuzz
