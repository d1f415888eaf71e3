// `tapecheck vectors import`: tensors saved by TorchLean, whatever the format, as the `leaves` of
// a new golden vector. The format is told from the content: a file starting with "TLSF32B" is
// the streamed float32 checkpoint (torchlean_stream.h); otherwise it must be a JSON object whose
// "format" is torchlean_state_bits_v1, torchlean_state_float32_bits_v1 (torchlean_state.h) or
// torchlean_paramlist_bits_v1 (paramio.h).
#pragma once

#include <string>
#include <vector>

#include "tapecheck/conformance/tensor_data.h"
#include "tapecheck/result.h"

namespace tapecheck::vectors {

struct ImportedTensors {
  std::string format;  // the format's tag ("TLSF32B" for the stream)
  std::string entry;   // what the format calls one tensor in messages: params, state, tensor
  std::vector<conformance::TensorData> tensors;
};

// Reads any of the four formats; an Error (naming `label`, the entry and the reason) for other
// content and for every malformed file.
Result<ImportedTensors> importTorchLeanTensors(const std::string& bytes, const std::string& label);

// The tensors as a v1 `leaves` array (requiresGrad false), one leaf per line, ready to paste into
// a vector. Golden-vector inputs must be binary32-representable, so a value that is not is an
// Error naming the entry (`state[i].values[k]`, `tensor i: values[k]`) and the value.
Result<std::string> leavesJson(const ImportedTensors& imported, const std::string& label);

}  // namespace tapecheck::vectors
