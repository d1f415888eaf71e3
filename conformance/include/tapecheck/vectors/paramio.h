// TorchLean ParamIO files (`torchlean_paramlist_bits_v1`, NN/Runtime/.../ParamIO.lean):
//   {"format": "torchlean_paramlist_bits_v1",
//    "params": [{"shape": [d1, ...], "values": [u64 bits, ...]}, ...]}
// Each value is the IEEE-754 binary64 bit pattern of a Lean Float, as a JSON natural number --
// the same encoding golden vectors use for tensors.
#pragma once

#include <string>
#include <vector>

#include "tapecheck/conformance/tensor_data.h"
#include "tapecheck/result.h"

namespace tapecheck::vectors {

inline constexpr const char* kParamIOFormat = "torchlean_paramlist_bits_v1";

// Parses and checks a ParamIO text: the format tag, every shape and value, values.length ==
// size(shape). `label` names it in messages.
Result<std::vector<conformance::TensorData>> parseParamIO(const std::string& text,
                                                          const std::string& label);

// The params as a v1 `leaves` array (requiresGrad false), one leaf per line, ready to paste
// into a vector. Inputs of golden vectors must be binary32-representable, so a value that is
// not is an Error naming the param and index.
Result<std::string> paramsAsLeavesJson(const std::vector<conformance::TensorData>& params,
                                       const std::string& label);

}  // namespace tapecheck::vectors
