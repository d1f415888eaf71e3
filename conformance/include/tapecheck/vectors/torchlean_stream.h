// TorchLean's streamed float32 state checkpoint, what
// `Runtime.Autograd.Model.StateIO.writeModuleStateFloat32` writes
// (NN/Runtime/Autograd/Model/StateIO.lean; framing in
// NN/Runtime/Autograd/Torch/Core/CheckpointIO.lean). Every integer is an unsigned 64-bit
// little-endian field:
//   "TLSF32B" (7 bytes)  version (= 1)  tensorCount
//   per tensor: rank  dim_1 ... dim_rank  elementCount  elementCount little-endian binary32 words
// and nothing after the last tensor. Every 32-bit word is a binary32 value; it is read exactly
// (a NaN keeps its sign and payload).
#pragma once

#include <string>
#include <vector>

#include "tapecheck/conformance/tensor_data.h"
#include "tapecheck/result.h"

namespace tapecheck::vectors {

inline constexpr const char* kFloat32StreamMagic = "TLSF32B";
inline constexpr unsigned kFloat32StreamVersion = 1;

// Parses and checks a stream: magic, version, each tensor's element count against its shape,
// no truncated field or payload, no trailing bytes. Errors name `label`, the tensor (`tensor i`,
// counting from 0) with its byte offset, and the reason. Nothing is allocated for a count the
// bytes cannot hold.
Result<std::vector<conformance::TensorData>> parseFloat32Stream(const std::string& bytes,
                                                                const std::string& label);

}  // namespace tapecheck::vectors
