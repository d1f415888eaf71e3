// Output paths are proven writable before any case runs, so that a typo in --out or --json costs
// a second, not a whole conformance run. Each probe leaves the file system as it found it.
#pragma once

#include <string>

#include "tapecheck/result.h"

namespace tapecheck::cli {

// A file that --json or --junit will write: an existing file must open for writing (it is not
// truncated); a new one must be creatable in an existing folder (it is created and removed). The
// Error names the option, the path and the operating system's reason.
Status probeOutputFile(const std::string& option, const std::string& path);

// A folder that --out will fill: an existing folder must take a new file; a missing one must be
// creatable with its missing parents. Whatever the probe creates (a test file, folders) it
// removes again. The Error names the option, the path and the operating system's reason.
Status probeOutputDir(const std::string& option, const std::string& path);

// Writes `text` to `path` (created or truncated); the Error names the path and the reason.
Status writeOutputFile(const std::string& path, const std::string& text);

}  // namespace tapecheck::cli
