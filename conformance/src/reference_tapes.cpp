#include "tapecheck/conformance/reference_tapes.h"

#include "tapecheck/reference/instantiations.h"

namespace tapecheck::conformance {

using reference::EigenBackend;

std::unique_ptr<AnyTape> makeReferenceTapeFloat() {
  return std::make_unique<TapeAdapter<EigenBackend<float>>>(EigenBackend<float>());
}
std::unique_ptr<AnyTape> makeReferenceTapeDouble() {
  return std::make_unique<TapeAdapter<EigenBackend<double>>>(EigenBackend<double>());
}
std::unique_ptr<AnyTape> makeReferenceTapeOracle() {
  return std::make_unique<TapeAdapter<EigenBackend<reference::Multi>>>(
      EigenBackend<reference::Multi>());
}

}  // namespace tapecheck::conformance
