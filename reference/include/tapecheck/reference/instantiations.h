// The reference tape is compiled once per scalar in src/instantiations.cpp.
#pragma once

#include "tapecheck/reference/eigen_backend.h"

namespace tapecheck {
extern template class Tape<reference::EigenBackend<float>>;
extern template class Tape<reference::EigenBackend<double>>;
extern template class Tape<reference::EigenBackend<reference::Multi>>;
}  // namespace tapecheck
