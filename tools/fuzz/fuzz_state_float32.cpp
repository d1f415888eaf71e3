// Fuzz target `state_float32`: JSON text -> vectors::parseStateFloat32, TorchLean's
// torchlean_state_float32_bits_v1 (binary32 words), as `tapecheck vectors import` reads it.
// Properties: fuzz_state_json.h and import_properties.h; a rejected text gives an Error naming
// the input.
#include "fuzz_state_json.h"
#include "tapecheck/vectors/torchlean_state.h"

TAPECHECK_FUZZ_TARGET(state_float32) {
  tapecheck::fuzz::fuzzStateJson(data, size, tapecheck::vectors::parseStateFloat32,
                                 tapecheck::vectors::kStateFloat32Format, 32);
  return 0;
}
