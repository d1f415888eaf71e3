#include "tapecheck/reference/eigen_backend.h"

namespace tapecheck {
template class Tape<reference::EigenBackend<float>>;
template class Tape<reference::EigenBackend<double>>;
template class Tape<reference::EigenBackend<reference::Multi>>;
}  // namespace tapecheck
