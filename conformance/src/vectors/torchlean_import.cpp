#include "tapecheck/vectors/torchlean_import.h"

#include <sstream>

#include <nlohmann/json.hpp>

#include "tapecheck/vectors/bits.h"
#include "tapecheck/vectors/paramio.h"
#include "tapecheck/vectors/torchlean_state.h"
#include "tapecheck/vectors/torchlean_stream.h"
#include "tapecheck/vectors/write.h"

namespace tapecheck::vectors {

namespace {

Result<ImportedTensors> wrap(Result<std::vector<conformance::TensorData>> tensors,
                             const std::string& format, const std::string& entry) {
  if (!tensors) return tensors.error();
  return ImportedTensors{format, entry, std::move(tensors).value()};
}

// The JSON formats name themselves; anything else is refused here, before a reader runs.
Result<std::string> jsonFormatTag(const std::string& bytes, const std::string& label) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(bytes);
  } catch (const nlohmann::json::exception& e) {
    return Error{label + ": not valid JSON, nor a TLSF32B stream (which starts with 'TLSF32B'): " +
                 e.what()};
  }
  if (!j.is_object() || !j.contains("format") || !j.at("format").is_string())
    return Error{label + ": format: a TorchLean JSON tensor file is an object with a string "
                         "'format'"};
  return j.at("format").get<std::string>();
}

std::string entryName(const ImportedTensors& imported, std::size_t i) {
  if (imported.entry == "tensor") return "tensor " + std::to_string(i) + ": ";
  return imported.entry + "[" + std::to_string(i) + "].";
}

}  // namespace

Result<ImportedTensors> importTorchLeanTensors(const std::string& bytes, const std::string& label) {
  if (bytes.rfind(kFloat32StreamMagic, 0) == 0)
    return wrap(parseFloat32Stream(bytes, label), kFloat32StreamMagic, "tensor");
  auto tag = jsonFormatTag(bytes, label);
  if (!tag) return tag.error();
  const std::string& format = tag.value();
  if (format == kParamIOFormat) return wrap(parseParamIO(bytes, label), format, "params");
  if (format == kStateBitsFormat) return wrap(parseStateBits(bytes, label), format, "state");
  if (format == kStateFloat32Format) return wrap(parseStateFloat32(bytes, label), format, "state");
  return Error{label + ": format: unsupported format '" + format + "' (known: " +
               kStateBitsFormat + ", " + kStateFloat32Format + ", " + kParamIOFormat +
               ", and the binary TLSF32B stream)"};
}

Result<std::string> leavesJson(const ImportedTensors& imported, const std::string& label) {
  const auto& tensors = imported.tensors;
  std::string out = "[";
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    for (std::size_t v = 0; v < tensors[i].values.size(); ++v)
      if (!isBinary32(tensors[i].values[v])) {
        std::ostringstream m;
        m.precision(17);
        m << label << ": " << entryName(imported, i) << "values[" << v
          << "]: " << tensors[i].values[v]
          << " is not representable in binary32 (golden-vector inputs must be)";
        return Error{m.str()};
      }
    out += std::string(i ? "," : "") + "\n  " + formatLeaf({tensors[i], false});
  }
  out += tensors.empty() ? "]\n" : "\n]\n";
  return out;
}

}  // namespace tapecheck::vectors
