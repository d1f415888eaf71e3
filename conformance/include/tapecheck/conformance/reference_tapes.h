// Factories for the reference tape at each scalar: binary32, binary64 and the multi-precision
// oracle (rounded to binary64 when read back).
#pragma once

#include <memory>

#include "tapecheck/conformance/any_tape.h"

namespace tapecheck::conformance {

std::unique_ptr<AnyTape> makeReferenceTapeFloat();
std::unique_ptr<AnyTape> makeReferenceTapeDouble();
std::unique_ptr<AnyTape> makeReferenceTapeOracle();

}  // namespace tapecheck::conformance
