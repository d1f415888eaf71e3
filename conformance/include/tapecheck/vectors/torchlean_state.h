// TorchLean's exact state files, what `Runtime.Autograd.Model.StateIO.writeStateBits` writes
// (NN/Runtime/Autograd/Model/StateIO.lean; scalar encodings in StateIO/Encoding.lean):
//   {"format": TAG, "state": [{"shape": [d1, ...], "values": [word, ...]}, ...]}
// TAG `torchlean_state_bits_v1`: Lean `Float`s as binary64 words (natural numbers below 2^64);
// TAG `torchlean_state_float32_bits_v1`: `Float32`s as binary32 words (below 2^32).
// A word is valid when it fits its width and, if it is a NaN, is Lean's one quiet NaN
// (0x7FF8000000000000, 0x7FC00000): TorchLean's reader rejects every other NaN word, and so does
// this one.
#pragma once

#include <string>
#include <vector>

#include "tapecheck/conformance/tensor_data.h"
#include "tapecheck/result.h"

namespace tapecheck::vectors {

inline constexpr const char* kStateBitsFormat = "torchlean_state_bits_v1";
inline constexpr const char* kStateFloat32Format = "torchlean_state_float32_bits_v1";

// Parses and checks a state file of the given tag: the tag, every shape and word,
// values.length == size(shape). Errors name `label`, the entry (`state[i]...`) and the reason.
Result<std::vector<conformance::TensorData>> parseStateBits(const std::string& text,
                                                            const std::string& label);
Result<std::vector<conformance::TensorData>> parseStateFloat32(const std::string& text,
                                                               const std::string& label);

}  // namespace tapecheck::vectors
