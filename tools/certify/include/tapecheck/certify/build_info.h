// What this tapecheck build is: the harness version (CMake PROJECT_VERSION), the git revision of
// the source tree at configure time ("unknown" outside a git checkout), and where the committed
// golden-vector corpus lives.
#pragma once

#include <string>

namespace tapecheck::certify {

std::string harnessVersion();
std::string harnessGitRevision();
std::string goldenCorpusDir();  // <source tree>/vectors/golden

}  // namespace tapecheck::certify
