// Fuzz target `tlsf32b`: bytes -> vectors::parseFloat32Stream, TorchLean's streamed float32
// checkpoint, as `tapecheck vectors import` reads it. Properties: import_properties.h, a rejected
// stream gives an Error naming the input, and an accepted stream is exactly the encoding of what
// was read: writing the tensors back (magic, version 1, count, then rank, dims, element count and
// little-endian binary32 words per tensor) gives the input's bytes.
#include <cmath>
#include <cstring>
#include <exception>
#include <string>

#include "import_properties.h"
#include "tapecheck/vectors/torchlean_stream.h"

namespace tapecheck::fuzz {
namespace {

void putU64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// The binary32 word of a value read from a stream: the hardware conversion for numbers (exact,
// since every value came from a word), the sign and payload bits for a NaN.
std::uint32_t wordOf(double v) {
  if (std::isnan(v)) {
    const std::uint64_t b = vectors::toBits(v);
    return static_cast<std::uint32_t>(((b >> 63) << 31) | 0x7F800000U |
                                      ((b >> 29) & 0x007FFFFFU));
  }
  const float f = static_cast<float>(v);
  std::uint32_t w;
  std::memcpy(&w, &f, sizeof w);
  return w;
}

std::string encode(const std::vector<conformance::TensorData>& tensors) {
  std::string out = vectors::kFloat32StreamMagic;
  putU64(out, vectors::kFloat32StreamVersion);
  putU64(out, tensors.size());
  for (const auto& t : tensors) {
    putU64(out, t.shape.size());
    for (auto d : t.shape) putU64(out, d);
    putU64(out, t.values.size());
    for (double v : t.values) {
      const std::uint32_t w = wordOf(v);
      for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((w >> (8 * i)) & 0xFF));
    }
  }
  return out;
}

}  // namespace
}  // namespace tapecheck::fuzz

TAPECHECK_FUZZ_TARGET(tlsf32b) {
  using namespace tapecheck::fuzz;
  const std::string label = "fuzz-stream.bin";
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    auto tensors = tapecheck::vectors::parseFloat32Stream(bytes, label);
    if (!tensors) {
      checkRejected(tensors.message(), tapecheck::vectors::kFloat32StreamMagic, bytes, label);
      return 0;
    }
    checkImported(tensors.value(), tapecheck::vectors::kFloat32StreamMagic, bytes, label);
    if (encode(tensors.value()) != bytes)
      violated("an accepted stream is not the encoding of the tensors read from it");
  } catch (const std::exception& e) {
    violated(std::string("an exception escaped: ") + e.what());
  }
  return 0;
}
