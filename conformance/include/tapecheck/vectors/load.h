// Reading golden-vector files: every v1 rule (the schema file's and the cross-field rules it
// lists in $comment) is checked here, in C++, and every violation is an Error that names the
// file, the tcId (inside a test) and the JSON field path -- never an exception or a crash.
#pragma once

#include <string>
#include <vector>

#include "tapecheck/result.h"
#include "tapecheck/vectors/vector_file.h"

namespace tapecheck::vectors {

// Reads and validates one file.
Result<VectorFile> loadVectorFile(const std::string& path);

// Validates JSON text; `label` names it in messages (usually the path).
Result<VectorFile> parseVectorText(const std::string& text, const std::string& label);

// Files stay as given; folders become every *.json below them (recursively), sorted by path.
// A path that does not exist is an Error.
Result<std::vector<std::string>> collectVectorFiles(const std::vector<std::string>& paths);

// Reads a whole file; an Error names the path when it cannot be read.
Result<std::string> readTextFile(const std::string& path);

}  // namespace tapecheck::vectors
