// Fuzz target `state_bits`: JSON text -> vectors::parseStateBits, TorchLean's
// torchlean_state_bits_v1 (binary64 words), as `tapecheck vectors import` reads it. Properties:
// fuzz_state_json.h and import_properties.h; a rejected text gives an Error naming the input.
#include "fuzz_state_json.h"
#include "tapecheck/vectors/torchlean_state.h"

TAPECHECK_FUZZ_TARGET(state_bits) {
  tapecheck::fuzz::fuzzStateJson(data, size, tapecheck::vectors::parseStateBits,
                                 tapecheck::vectors::kStateBitsFormat, 64);
  return 0;
}
