#include "tapecheck/certify/build_info.h"

#ifndef TAPECHECK_VERSION
#error "TAPECHECK_VERSION must be defined by the build"
#endif
#ifndef TAPECHECK_GIT_REVISION
#error "TAPECHECK_GIT_REVISION must be defined by the build"
#endif
#ifndef TAPECHECK_GOLDEN_DIR
#error "TAPECHECK_GOLDEN_DIR must be defined by the build"
#endif

namespace tapecheck::certify {

std::string harnessVersion() { return TAPECHECK_VERSION; }
std::string harnessGitRevision() { return TAPECHECK_GIT_REVISION; }
std::string goldenCorpusDir() { return TAPECHECK_GOLDEN_DIR; }

}  // namespace tapecheck::certify
