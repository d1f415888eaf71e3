#include "tapecheck/certify/build_info.h"

#include <filesystem>
#include <system_error>

#ifndef TAPECHECK_VERSION
#error "TAPECHECK_VERSION must be defined by the build"
#endif
#ifndef TAPECHECK_GIT_REVISION
#error "TAPECHECK_GIT_REVISION must be defined by the build"
#endif
#ifndef TAPECHECK_GOLDEN_DIR
#error "TAPECHECK_GOLDEN_DIR must be defined by the build"
#endif
#ifndef TAPECHECK_INSTALLED_GOLDEN_DIR
#error "TAPECHECK_INSTALLED_GOLDEN_DIR must be defined by the build"
#endif

namespace tapecheck::certify {

namespace fs = std::filesystem;

std::string harnessVersion() { return TAPECHECK_VERSION; }
std::string harnessGitRevision() { return TAPECHECK_GIT_REVISION; }

// The installed layout is relative (bin/tapecheck beside share/tapecheck/golden), so an installed
// tree moved or unpacked anywhere still finds its corpus; the build tree has no such folder next
// to its executable and falls through to the source tree's.
std::string goldenCorpusDir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed =
        (self.parent_path() / TAPECHECK_INSTALLED_GOLDEN_DIR).lexically_normal();
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  return TAPECHECK_GOLDEN_DIR;
}

}  // namespace tapecheck::certify
