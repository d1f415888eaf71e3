// The body of the two JSON state targets (fuzz_state_bits.cpp, fuzz_state_float32.cpp): the
// reader under test, then import_properties.h, then a word-level property: every accepted value
// is exactly the word the text holds at that place (widened from binary32 for the float32 tag).
#pragma once

#include <cmath>
#include <cstring>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "import_properties.h"

namespace tapecheck::fuzz {

using StateReader = Result<std::vector<conformance::TensorData>> (*)(const std::string&,
                                                                     const std::string&);

// The binary64 value a 32-bit word denotes, written independently of the reader: the hardware
// conversion for numbers, Lean's quiet NaN for the one NaN word the reader accepts.
inline std::uint64_t expectedBits(std::uint64_t word, unsigned width) {
  if (width == 64) return word;
  if (word == 0x7FC00000U) return 0x7FF8000000000000ULL;
  float f;
  const auto w = static_cast<std::uint32_t>(word);
  std::memcpy(&f, &w, sizeof f);
  return vectors::toBits(static_cast<double>(f));
}

inline void fuzzStateJson(const std::uint8_t* data, std::size_t size, StateReader read,
                          const std::string& format, unsigned width) {
  const std::string label = "fuzz-state.json";
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto tensors = read(text, label);
    if (!tensors) {
      checkRejected(tensors.message(), format, text, label);
      return;
    }
    checkImported(tensors.value(), format, text, label);
    const auto j = nlohmann::json::parse(text);  // it was accepted, so it parses
    for (std::size_t i = 0; i < tensors.value().size(); ++i) {
      const auto words = j.at("state").at(i).at("values").get<std::vector<std::uint64_t>>();
      const auto bits = valueBits(tensors.value()[i]);
      for (std::size_t k = 0; k < words.size(); ++k)
        if (bits.at(k) != expectedBits(words[k], width))
          violated("state[" + std::to_string(i) + "].values[" + std::to_string(k) + "]: word " +
                   std::to_string(words[k]) + " read as bits " + std::to_string(bits[k]));
      for (std::size_t k = 0; k < words.size(); ++k) {
        const bool nan = width == 64 ? std::isnan(vectors::fromBits(words[k]))
                                     : (words[k] & 0x7F800000U) == 0x7F800000U &&
                                           (words[k] & 0x007FFFFFU) != 0;
        if (nan && words[k] != (width == 64 ? 0x7FF8000000000000ULL : 0x7FC00000ULL))
          violated("a NaN word other than Lean's quiet NaN was accepted: " +
                   std::to_string(words[k]));
      }
    }
  } catch (const std::exception& e) {
    violated(std::string("an exception escaped: ") + e.what() + "\n--- input:\n" + text);
  }
}

}  // namespace tapecheck::fuzz
