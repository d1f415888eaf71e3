// What this tapecheck build is: the harness version (CMake PROJECT_VERSION), the git revision of
// the source tree at configure time ("unknown" outside a git checkout), and where the committed
// golden-vector corpus lives.
#pragma once

#include <string>

namespace tapecheck::certify {

std::string harnessVersion();
std::string harnessGitRevision();
// The corpus installed with this executable (<prefix>/share/tapecheck/golden, found relative to
// the running executable) when there is one, else <source tree>/vectors/golden.
std::string goldenCorpusDir();

}  // namespace tapecheck::certify
